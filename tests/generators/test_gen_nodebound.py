"""Node-bound generators (uuidkit.generators.nodebound) driven by a ManualNodeSource:
layouts, no round trip per UUID, loss at once, expiry, renewal, binding, threads, fork."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable
from typing import Any
from uuid import UUID

import pytest
from gen_fakes import NS_PER_MS, FakeClock, constant_bytes, seeded_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.errors import (
    ClockRegressionError,
    CounterOverflowError,
    GeneratorError,
    NodeUnavailableError,
)
from uuidkit.fields import fields, version
from uuidkit.generators import (
    CounterOverflow,
    ManualNodeSource,
    NodeBoundV1Generator,
    NodeBoundV6Generator,
    NodeBoundV7Generator,
    NodeBoundV8Generator,
    NodeEventKind,
    NodeLease,
)
from uuidkit.generators.nodesource import NodeEvent
from uuidkit.nodelayouts import MULTICAST_BIT, read_node_layout

NODE_A = 0x0200_0000_00AA | MULTICAST_BIT
NODE_B = 0x0200_0000_00BB | MULTICAST_BIT
LAYOUTS = {1: "v1-node", 6: "v6-node", 7: "v7-node", 8: "v8-node"}
GENERATORS: dict[int, Callable[..., Any]] = {
    1: NodeBoundV1Generator,
    6: NodeBoundV6Generator,
    7: NodeBoundV7Generator,
    8: NodeBoundV8Generator,
}


def make(version_number: int, source: ManualNodeSource, clock: FakeClock, seed: int = 1) -> Any:
    return GENERATORS[version_number](
        source, clock=clock, random_bytes=seeded_bytes(seed), sleep_ns=clock.sleep
    )


def node_of(value: UUID) -> int:
    record = read_node_layout(value, LAYOUTS[version(value) or 0])
    return record.node


class CountingSource(ManualNodeSource):
    """A ManualNodeSource that counts ``current()`` calls (each would be a round trip)."""

    calls = 0

    def current(self) -> NodeLease:
        self.calls += 1
        return super().current()


@pytest.mark.parametrize("version_number", [1, 6, 7, 8])
def test_values_carry_the_node_and_never_repeat(version_number: int) -> None:
    clock = FakeClock()
    source = CountingSource(NODE_A)
    generator = make(version_number, source, clock)
    values = []
    for step in range(3000):
        values.append(generator())
        if step % 7 == 0:
            clock.advance(37_000)  # several values per ms and per 100 ns tick
    assert len(set(values)) == len(values)
    assert {node_of(value) for value in values} == {NODE_A}
    assert {version(value) for value in values} == {version_number}
    if version_number != 1:  # v6, v7-node, v8-node sort in generation order (RFC 9562 §6.2)
        assert values == sorted(values)
    # Holding the node costs no round trip per UUID: the source is asked once.
    assert source.calls == 1
    assert generator.node == NODE_A


@pytest.mark.parametrize("version_number", [1, 6, 7, 8])
def test_loss_stops_the_node_at_once_and_never_falls_back(version_number: int) -> None:
    clock = FakeClock()
    source = ManualNodeSource(NODE_A)
    generator = make(version_number, source, clock)
    before = generator.generate(50)
    source.revoke("collision on renewal")
    # The very next value may not use NODE_A, and may not be random either.
    with pytest.raises(NodeUnavailableError, match="collision on renewal") as error:
        generator()
    assert error.value.reason == "collision on renewal"
    assert generator.node is None
    source.assign(NODE_B)
    after = generator.generate(50)
    assert {node_of(value) for value in after} == {NODE_B}
    assert not set(before) & set(after)


def test_v1_new_node_gets_a_new_clock_sequence() -> None:
    clock = FakeClock()
    source = ManualNodeSource(NODE_A)
    generator = make(1, source, clock)
    first = fields(generator())
    source.assign(NODE_B)
    second = fields(generator())
    assert first.node == NODE_A and second.node == NODE_B  # type: ignore[union-attr]
    # RFC 9562 §5.1: a changed node takes a fresh random clock sequence (seeded: differs).
    assert first.clock_seq != second.clock_seq  # type: ignore[union-attr]


@pytest.mark.parametrize("version_number", [1, 6, 7, 8])
def test_expired_lease_is_not_used_until_renewed(version_number: int) -> None:
    clock = FakeClock()
    source = CountingSource(NODE_A, expires_ns=clock.now_ns + 5 * NS_PER_MS)
    generator = make(version_number, source, clock)
    generator()
    clock.advance(5 * NS_PER_MS)  # at expires_ns exactly: no longer valid
    with pytest.raises(NodeUnavailableError, match="lease ended") as error:
        generator()
    assert error.value.reason == "lease expired"
    # A renewal (same node, same generation, later expiry) is picked up on the next value.
    source.extend(clock.now_ns + 60_000 * NS_PER_MS)
    value = generator()
    assert node_of(value) == NODE_A
    assert generator.generation == 1


def test_renewal_keeps_the_generation_and_the_clock_sequence() -> None:
    clock = FakeClock()
    source = CountingSource(NODE_A, expires_ns=clock.now_ns + NS_PER_MS)
    generator = make(1, source, clock)
    first = fields(generator())
    source.extend(clock.now_ns + 10 * NS_PER_MS)
    clock.advance(2 * NS_PER_MS)
    second = fields(generator())
    assert first.clock_seq == second.clock_seq  # type: ignore[union-attr]
    assert source.calls == 2  # once at the start, once when the first lease ended


def test_events_reach_subscribers_outside_the_source_lock() -> None:
    source = ManualNodeSource()
    seen: list[NodeEvent] = []

    def listener(event: NodeEvent) -> None:
        seen.append(event)
        if event.kind is NodeEventKind.LOST:
            # Re-entering the source from a listener must not deadlock.
            with pytest.raises(NodeUnavailableError):
                source.current()

    source.subscribe(listener)
    source.assign(NODE_A)
    source.extend(123)
    source.revoke("daemon connection lost")
    source.unsubscribe(listener)
    source.assign(NODE_B)
    assert [(e.kind, e.node, e.generation) for e in seen] == [
        (NodeEventKind.GRANTED, NODE_A, 1),
        (NodeEventKind.RENEWED, NODE_A, 1),
        (NodeEventKind.LOST, NODE_A, 1),
    ]
    assert seen[-1].reason == "daemon connection lost"


def test_one_generator_per_version_and_source() -> None:
    clock = FakeClock()
    source = ManualNodeSource(NODE_A)
    first = make(7, source, clock)
    # Two v7-node generators on one node would count from independent seeds: refused.
    with pytest.raises(GeneratorError, match="already feeds a version 7 generator"):
        make(7, source, clock)
    others = [make(n, source, clock) for n in (1, 6, 8)]  # versions keep them apart
    values = [first(), *(g() for g in others)]
    assert {node_of(v) for v in values} == {NODE_A}
    del first
    gc.collect()
    make(7, source, clock)  # the binding ends with its generator


def test_claimed_nodes_only() -> None:
    with pytest.raises(ValueError, match="multicast bit"):
        ManualNodeSource(0x0000_1122_3344)


def test_v8_overflow_policies() -> None:
    clock = FakeClock()
    advancing = make(8, ManualNodeSource(NODE_A), clock)
    values = [advancing() for _ in range(1 << 14 | 5)]  # more than one fraction step holds
    records = [read_node_layout(v, "v8-node") for v in values]
    assert len(set(values)) == len(values) and values == sorted(values)
    assert records[-1].ms_fraction == records[0].ms_fraction + 1  # type: ignore[union-attr]
    raising = NodeBoundV8Generator(
        ManualNodeSource(NODE_B), overflow=CounterOverflow.RAISE, clock=clock
    )
    for _ in range(1 << 14):
        raising()
    with pytest.raises(CounterOverflowError, match="policy RAISE"):
        raising()
    waiting = NodeBoundV8Generator(
        ManualNodeSource(NODE_B), overflow=CounterOverflow.WAIT, clock=clock, sleep_ns=clock.sleep
    )
    start = clock.now_ns
    for _ in range(1 << 14 | 1):
        waiting()
    assert clock.now_ns > start  # it slept until the clock reached the next fraction step


def test_v7_counter_guard_bit_and_overflow() -> None:
    clock = FakeClock()
    generator = NodeBoundV7Generator(
        ManualNodeSource(NODE_A), clock=clock, random_bytes=constant_bytes(0xFF)
    )
    first = read_node_layout(generator(), "v7-node")
    # The seed is 25 random bits below one guard bit: the largest seed leaves 2**25 values.
    assert first.counter == (1 << 25) - 1  # type: ignore[union-attr]
    generator._hold_state()  # the gate hands its state back until the next value
    generator._counter = (1 << 26) - 1  # skip 2**25 values (33 million calls) to the edge
    after = read_node_layout(generator(), "v7-node")
    assert after.unix_ts_ms == first.unix_ts_ms + 1  # type: ignore[union-attr]  # ADVANCE


def test_clock_regression_keeps_counting() -> None:
    clock = FakeClock()
    generator = make(7, ManualNodeSource(NODE_A), clock)
    first = generator()
    clock.advance(-10_000 * NS_PER_MS)
    second = generator()
    assert second > first
    assert fields(second).unix_ts_ms == fields(first).unix_ts_ms  # type: ignore[union-attr]


def unix_ts_ms(value: UUID) -> int:
    return value.int >> 80  # RFC 9562 §5.7, and the v8-node layout: the top 48 bits


#: NodeBoundV7Generator's and NodeBoundV8Generator's documented default run-ahead bound.
MAX_AHEAD_MS = 10_000


@pytest.mark.parametrize("version_number", [7, 8])
def test_after_a_one_hour_step_back_no_value_runs_ahead_of_the_bound(version_number: int) -> None:
    # KEEP counts on from the last tick only while it is within max_ahead_ms of the clock;
    # a node has no clock sequence, so instead of a restart below its own values (which
    # could repeat one) the generator raises until the clock is back within the bound.
    clock = FakeClock()
    generator = make(version_number, ManualNodeSource(NODE_A), clock)
    issued = [generator() for _ in range(3)]
    clock.advance(-3_600_000 * NS_PER_MS)
    for _ in range(2):
        with pytest.raises(ClockRegressionError, match="never goes below its values"):
            generator()
    clock.advance((3_600_000 - MAX_AHEAD_MS) * NS_PER_MS)  # back within the bound
    later = [generator() for _ in range(3)]
    assert later == sorted(later) and min(later) > max(issued)
    assert all(unix_ts_ms(value) - clock.ms <= MAX_AHEAD_MS for value in later)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-20_000, 20_000), max_size=30), st.sampled_from([7, 8]))
def test_property_never_beyond_the_bound_never_below(
    moves_ms: list[int], version_number: int
) -> None:
    clock = FakeClock()
    generator = make(version_number, ManualNodeSource(NODE_A), clock)
    values: list[UUID] = []
    for move in moves_ms:
        clock.advance(move * NS_PER_MS)
        try:
            value = generator()
        except ClockRegressionError:
            continue
        assert unix_ts_ms(value) - clock.ms <= MAX_AHEAD_MS
        assert not values or value > values[-1]
        values.append(value)


def test_advance_stops_at_the_bound() -> None:
    clock = FakeClock()  # frozen: every value of a fraction step is used, then ADVANCE
    generator = NodeBoundV8Generator(ManualNodeSource(NODE_A), max_ahead_ms=0, clock=clock)
    for _ in range(1 << 14):
        generator()
    with pytest.raises(CounterOverflowError, match="run-ahead bound"):
        generator()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("advance"), st.integers(-2_000_000, 3_000_000)),
            st.tuples(st.just("make"), st.integers(1, 40)),
            st.tuples(st.just("switch"), st.integers(0, (1 << 48) - 1)),
            st.tuples(st.just("lose"), st.just(0)),
        ),
        max_size=40,
    ),
    st.sampled_from([1, 6, 7, 8]),
)
def test_every_value_carries_the_node_held_when_it_was_made(
    steps: list[tuple[str, int]], version_number: int
) -> None:
    clock = FakeClock()
    source = ManualNodeSource(NODE_A)
    generator = make(version_number, source, clock)
    held: int | None = NODE_A
    seen: set[UUID] = set()
    for action, argument in steps:
        if action == "advance":
            clock.advance(argument)
        elif action == "switch":
            held = argument | MULTICAST_BIT
            source.assign(held)
        elif action == "lose":
            held = None
            source.revoke("collision")
        elif held is None:
            with pytest.raises(NodeUnavailableError):
                generator()
        else:
            for _ in range(argument):
                value = generator()
                assert node_of(value) == held
                assert value not in seen
                seen.add(value)


def test_threads_share_one_generator_without_repeats() -> None:
    source = ManualNodeSource(NODE_A)
    generator = NodeBoundV7Generator(source)
    barrier = threading.Barrier(4)
    results: list[list[UUID]] = [[] for _ in range(4)]

    def work(index: int) -> None:
        barrier.wait()
        results[index].extend(generator() for _ in range(5000))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    values = [v for part in results for v in part]
    assert len(set(values)) == 20_000


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_does_not_reuse_the_parent_node() -> None:
    source = ManualNodeSource(NODE_A)
    generator = NodeBoundV7Generator(source)
    generator()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: must not make a value with the parent's node
        status = b"reused"
        try:
            generator()
        except NodeUnavailableError as error:
            status = b"refused: " + str(error.reason).encode()
        os.write(write_end, status)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read()
    os.waitpid(pid, 0)
    assert report.startswith(b"refused: forked child")
    assert node_of(generator()) == NODE_A  # the parent keeps its node
