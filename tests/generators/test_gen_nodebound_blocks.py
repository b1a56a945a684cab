"""NodeBoundV7Generator.reserve_milliseconds: a block of whole milliseconds of the node, handed
out once (RFC 9562 §6.3 "allocate a block of timestamps"), inside the node's lease."""

from __future__ import annotations

from uuid import UUID

import pytest
from gen_fakes import NS_PER_MS, FakeClock, seeded_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit import _system
from uuidkit.errors import CounterOverflowError, NodeUnavailableError
from uuidkit.generators import ManualNodeSource, NodeBoundV7Generator, NodeLease
from uuidkit.nodelayouts import MULTICAST_BIT, V7NodeFields, read_node_layout

NODE = 0x0200_0000_00AA | MULTICAST_BIT


def make(source: ManualNodeSource, clock: FakeClock) -> NodeBoundV7Generator:
    return NodeBoundV7Generator(
        source, clock=clock, random_bytes=seeded_bytes(7), sleep_ns=clock.sleep
    )


def v7_node(value: UUID) -> V7NodeFields:
    record = read_node_layout(value, "v7-node")
    assert isinstance(record, V7NodeFields)
    return record


def test_a_block_starts_at_the_clock_and_the_generator_goes_above_it() -> None:
    clock = FakeClock()
    generator = make(ManualNodeSource(NODE), clock)
    node, first = generator.reserve_milliseconds(5)
    assert (node, first) == (NODE, clock.now_ns // NS_PER_MS)
    clock.advance(2 * NS_PER_MS)  # the clock inside the block: values still go above it
    after = v7_node(generator())
    assert after.unix_ts_ms > first + 4 and after.node == NODE


def test_a_block_follows_the_generators_own_values() -> None:
    clock = FakeClock()
    generator = make(ManualNodeSource(NODE), clock)
    before = v7_node(generator())
    _, first = generator.reserve_milliseconds(1)
    assert first == before.unix_ts_ms + 1
    _, second = generator.reserve_milliseconds(3)
    assert second == first + 1  # two blocks never share a millisecond


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=8), st.integers(0, 3))
def test_blocks_and_values_never_share_a_millisecond(sizes: list[int], step_ms: int) -> None:
    clock = FakeClock()
    generator = make(ManualNodeSource(NODE), clock)
    own: set[int] = set()
    reserved: list[int] = []
    for size in sizes:
        own.add(v7_node(generator()).unix_ts_ms)
        _, first = generator.reserve_milliseconds(size)
        block = range(first, first + size)
        assert not own.intersection(block) and not set(reserved).intersection(block)
        reserved.extend(block)
        clock.advance(step_ms * NS_PER_MS)
    own.add(v7_node(generator()).unix_ts_ms)
    assert not own.intersection(reserved)


def test_a_block_ahead_beyond_the_bound_stops_the_generator_until_the_clock_catches_up() -> None:
    clock = FakeClock()
    generator = NodeBoundV7Generator(
        ManualNodeSource(NODE), clock=clock, max_ahead_ms=10, sleep_ns=clock.sleep
    )
    _, first = generator.reserve_milliseconds(100)
    with pytest.raises(CounterOverflowError):
        generator()
    clock.advance(95 * NS_PER_MS)
    assert v7_node(generator()).unix_ts_ms == first + 100


def test_a_block_that_outlasts_the_lease_is_refused_and_reserves_nothing() -> None:
    clock = FakeClock()
    source = ManualNodeSource(NODE, expires_ns=clock.now_ns + 10 * NS_PER_MS)
    generator = make(source, clock)
    with pytest.raises(NodeUnavailableError, match="outlast the lease"):
        generator.reserve_milliseconds(11)
    _, first = generator.reserve_milliseconds(10)  # exactly up to the expiry: fits
    assert first == clock.now_ns // NS_PER_MS


class DeadlineSource(ManualNodeSource):
    """A leased node: its lease also ends on the monotonic clock (as etcd's and PostgreSQL's)."""

    def __init__(self, node: int, left_ns: int) -> None:
        super().__init__(node)
        self.deadline = _system.monotonic_ns() + left_ns

    def current(self) -> NodeLease:
        lease = super().current()
        return NodeLease(lease.node, lease.generation, lease.expires_ns, self.deadline)


def test_a_block_must_end_before_the_monotonic_deadline() -> None:
    clock = FakeClock()
    generator = make(DeadlineSource(NODE, left_ns=60_000 * NS_PER_MS), clock)
    with pytest.raises(NodeUnavailableError, match="outlast the lease"):
        generator.reserve_milliseconds(61_000)
    generator.reserve_milliseconds(1_000)


def test_values_the_compiled_gate_made_before_a_block_stay_below_it_and_later_ones_above() -> None:
    # The system clock, so that (when compiled) the gate makes every value but the first and
    # has advanced the tick past what the Python side last saw: the block must still start
    # after the gate's values and the gate's next values must start after the block.
    generator = NodeBoundV7Generator(ManualNodeSource(NODE))
    made = [v7_node(generator()).unix_ts_ms for _ in range(50)]
    _, first = generator.reserve_milliseconds(1000)
    after = [v7_node(generator()).unix_ts_ms for _ in range(50)]
    assert max(made) < first
    assert min(after) > first + 999
