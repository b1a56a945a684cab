"""UUIDv1/v6 generators and node policies, value by value with a fake clock.

References: RFC 9562 §5.1, §5.6, §6.10; RFC 4122 §4.2.1.2.
"""

from __future__ import annotations

import dataclasses

import pytest
from gen_fakes import START_NS, FakeClock, constant_bytes, seeded_bytes

import uuidkit
from uuidkit import ClockRegressionError, CounterOverflowError, GeneratorError, InvalidField
from uuidkit.fields import fields
from uuidkit.generators import (
    ClockRegression,
    CounterOverflow,
    GregorianConfig,
    NodePolicy,
    V1Generator,
    V6Generator,
)
from uuidkit.generators.gregorian import V6_DEFAULT
from uuidkit.generators.node import MULTICAST_BIT, mac_node, random_node, stable_node
from uuidkit.timestamps import unix_ns_to_gregorian_ticks

START_TICK = unix_ns_to_gregorian_ticks(START_NS)


def timestamp(value: uuidkit.UUID) -> int:
    return fields(value).timestamp  # type: ignore[union-attr]


def v1(
    config: GregorianConfig | None = None, clock: FakeClock | None = None
) -> tuple[V1Generator, FakeClock]:
    clock = clock or FakeClock()
    generator = V1Generator(
        config,
        clock=clock,
        random_bytes=seeded_bytes(1),
        sleep_ns=clock.sleep,
        monotonic_ns=clock.monotonic,
    )
    return generator, clock


def test_simulated_resolution_counts_ticks_within_a_coarse_clock_interval() -> None:
    generator, clock = v1(GregorianConfig(clock_resolution_ns=1_000_000))
    clock.advance(123_456)  # inside the millisecond: the interval starts at START_NS
    assert [timestamp(generator()) for _ in range(3)] == [
        START_TICK,
        START_TICK + 1,
        START_TICK + 2,
    ]
    clock.advance(1_000_000)
    assert timestamp(generator()) == START_TICK + 10_000


def test_per_interval_budget_raise() -> None:
    generator, _ = v1(GregorianConfig(clock_resolution_ns=1_000, overflow=CounterOverflow.RAISE))
    assert [timestamp(generator()) for _ in range(10)] == list(range(START_TICK, START_TICK + 10))
    with pytest.raises(CounterOverflowError, match="the 10 ticks of the clock interval"):
        generator()


def test_per_interval_budget_wait_stalls_until_the_clock_moves() -> None:
    generator, clock = v1(GregorianConfig(clock_resolution_ns=1_000))
    values = [generator() for _ in range(11)]
    assert clock.slept_ns > 0
    assert timestamp(values[10]) == unix_ns_to_gregorian_ticks(clock.now_ns - clock.now_ns % 1_000)
    assert len({timestamp(v) for v in values}) == 11


def test_wait_on_a_stalled_clock_raises() -> None:
    clock = FakeClock(stalled=True)
    generator, _ = v1(GregorianConfig(clock_resolution_ns=1_000, max_wait_ms=1), clock)
    for _ in range(10):
        generator()
    with pytest.raises(CounterOverflowError, match="did not advance"):
        generator()


def test_v1_regression_increments_the_clock_sequence() -> None:
    generator, clock = v1()
    first = generator()
    clock.advance(-1_000_000)
    second = generator()
    assert second.clock_seq == (first.clock_seq + 1) & 0x3FFF
    assert timestamp(second) == START_TICK - 10_000
    assert second.node == first.node


def test_v1_regression_raise_and_keep() -> None:
    generator, clock = v1(GregorianConfig(regression=ClockRegression.RAISE))
    generator()
    clock.advance(-3_600_000_000_000)
    with pytest.raises(
        ClockRegressionError, match="clock went back 36000000000 clock intervals of 100 ns"
    ):
        generator()
    keeping, clock = v1(GregorianConfig(regression=ClockRegression.KEEP))
    first = keeping()
    clock.advance(-1_000_000)
    second = keeping()
    assert timestamp(second) == timestamp(first) + 1 and second.clock_seq == first.clock_seq


def test_set_node_rerandomises_the_clock_sequence() -> None:
    # RFC 9562 §5.1: "if the node ID changes ..., setting the clock sequence to a random
    # number minimizes the probability of a duplicate"; the same node keeps it.
    generator, _ = v1()
    before = generator.clock_seq
    generator.set_node(generator.node)
    assert generator.clock_seq == before
    for node in range(0x0000_1234_5678, 0x0000_1234_5678 + 8):
        generator.set_node(node)
        assert generator.node == node and generator().node == node
        assert generator.clock_seq != before  # a fresh draw at every change (seeded source)
        before = generator.clock_seq


def test_v6_default_fresh_clock_seq_and_node_per_uuid_and_increasing() -> None:
    clock = FakeClock()
    generator = V6Generator(clock=clock, random_bytes=seeded_bytes(5))
    values = [generator() for _ in range(50)]
    assert values == sorted(values)
    assert len({v.node for v in values}) == 50 and len({v.clock_seq for v in values}) > 40
    assert all(v.node & MULTICAST_BIT for v in values)
    assert [timestamp(v) for v in values] == list(range(START_TICK, START_TICK + 50))
    clock.advance(-5_000_000_000)  # KEEP: 5 s back (within the 10 s bound) changes nothing
    assert generator() > values[-1]
    clock.advance(-3_600_000_000_000)  # an hour back: beyond the bound, restart at the clock
    restarted = generator()
    assert timestamp(restarted) == unix_ns_to_gregorian_ticks(clock.now_ns)
    assert generator() > restarted


def test_v6_with_v1_behaviour() -> None:
    clock = FakeClock()
    config = dataclasses.replace(V6_DEFAULT, random_per_uuid=False)
    generator = V6Generator(
        config,
        clock=clock,
        random_bytes=constant_bytes(0x11),
        sleep_ns=clock.sleep,
        monotonic_ns=clock.monotonic,
    )
    a, b = generator(), generator()
    assert a.node == b.node == 0x111111111111 | MULTICAST_BIT
    assert a.clock_seq == b.clock_seq == 0x1111 & 0x3FFF
    assert a.version == 6 and b > a


def test_node_policies() -> None:
    assert random_node(constant_bytes(0)) == MULTICAST_BIT
    assert stable_node(b"host") == stable_node(b"host") != stable_node(b"other")
    assert stable_node(b"host") & MULTICAST_BIT
    assert V1Generator(GregorianConfig(node=NodePolicy.STABLE)).node == stable_node()
    try:
        node = mac_node()
    except GeneratorError as error:
        assert "no IEEE 802 MAC address" in str(error)
    else:
        assert not node & MULTICAST_BIT


def test_module_functions() -> None:
    value = uuidkit.uuid1(node=0x0123456789AB, clock_seq=0x155)
    assert (value.version, value.node, value.clock_seq) == (1, 0x0123456789AB, 0x155)
    six = uuidkit.uuid6(clock_seq=7)
    assert six.version == 6 and six.clock_seq == 7
    assert uuidkit.uuid1().version == 1 and uuidkit.uuid1().node & MULTICAST_BIT
    # The standard library's arguments: uuid1 refuses a node outside 48 bits, and keeps the
    # low 14 bits of a clock_seq as uuid6 keeps those of both (see test_stdlib_surface).
    with pytest.raises(InvalidField, match="node"):
        uuidkit.uuid1(node=1 << 48)
    assert uuidkit.uuid6(clock_seq=(1 << 14) + 3).clock_seq == 3
    # uuidkit's own generators stay strict.
    with pytest.raises(InvalidField, match="clock_seq"):
        V6Generator().next(clock_seq=1 << 14)


def test_config_rejects_bad_resolution() -> None:
    with pytest.raises(InvalidField, match="clock_resolution_ns"):
        GregorianConfig(clock_resolution_ns=150)


def test_uuid6_fields_not_given_stay_random_per_uuid() -> None:
    values = [uuidkit.uuid6(node=0x0123456789AB) for _ in range(20)]
    assert {v.node for v in values} == {0x0123456789AB}
    assert len({v.clock_seq for v in values}) > 10
    assert values == sorted(values)


@pytest.mark.parametrize("count", ["3", -1, 2.0, True])
def test_generate_rejects_a_bad_count_as_invalid_field(count: object) -> None:
    generator, _ = v1()
    with pytest.raises(InvalidField, match="count: expected an int >= 0"):
        generator.generate(count)  # type: ignore[arg-type]


def test_v1_refuses_advance_and_per_uuid_randomness() -> None:
    # RFC 4122 §4.2.1.2: an exhausted interval "MUST either return an error, or stall".
    with pytest.raises(InvalidField, match="ADVANCE") as caught:
        V1Generator(GregorianConfig(overflow=CounterOverflow.ADVANCE))
    assert caught.value.field == "overflow"
    with pytest.raises(InvalidField, match="UUIDv6-only") as caught:
        V1Generator(GregorianConfig(random_per_uuid=True))
    assert caught.value.field == "random_per_uuid"
    # UUIDv6 may run ahead (its documented default) and take fresh fields per UUID (§5.6).
    V6Generator(GregorianConfig(overflow=CounterOverflow.ADVANCE, random_per_uuid=True))
