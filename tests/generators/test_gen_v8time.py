"""Time-based draft UUIDv8 generator (draft-peabody-dispatch-new-uuid-format-01 §4.5)."""

from __future__ import annotations

import pytest
from gen_fakes import NS_PER_MS, START_NS, FakeClock, constant_bytes

from uuidkit import ClockRegressionError, CounterOverflowError, InvalidField
from uuidkit.generators import ClockRegression, CounterOverflow, DraftV8Config, DraftV8Generator
from uuidkit.legacy import read_draft_v8


def make(config: DraftV8Config, clock: FakeClock) -> DraftV8Generator:
    return DraftV8Generator(
        config, clock=clock, random_bytes=constant_bytes(0), sleep_ns=clock.sleep
    )


def test_48_bit_ms_layout_seq_from_zero_and_nonzero_node() -> None:
    clock = FakeClock()
    generator = make(DraftV8Config(), clock)
    decoded = [read_draft_v8(generator(), 48) for _ in range(3)]
    assert [(d.timestamp, d.seq) for d in decoded] == [(START_NS // NS_PER_MS, s) for s in range(3)]
    assert all(d.node != 0 for d in decoded)  # all-zero random bytes still give a nonzero node
    clock.advance(NS_PER_MS)
    assert read_draft_v8(generator(), 48).seq == 0


@pytest.mark.parametrize(
    ("policy", "expected_tick_step"),
    [(CounterOverflow.ADVANCE, 1), (CounterOverflow.WAIT, 1)],
)
def test_60_bit_overflow_after_256(policy: CounterOverflow, expected_tick_step: int) -> None:
    clock = FakeClock()
    generator = make(DraftV8Config(timestamp_bits=60, tick_ns=100, overflow=policy), clock)
    values = [generator() for _ in range(257)]
    assert values == sorted(values)
    last = read_draft_v8(values[-1], 60)
    assert (last.timestamp - START_NS // 100, last.seq) == (expected_tick_step, 0)


def test_overflow_raise_and_regression_policies() -> None:
    clock = FakeClock()
    generator = make(
        DraftV8Config(timestamp_bits=64, tick_ns=1, overflow=CounterOverflow.RAISE), clock
    )
    for _ in range(256):
        generator()
    with pytest.raises(CounterOverflowError, match="MUST NOT rollover"):
        generator()
    strict = make(DraftV8Config(regression=ClockRegression.RAISE), clock)
    strict()
    clock.advance(-NS_PER_MS)
    with pytest.raises(ClockRegressionError, match="went back 1 ticks"):
        strict()
    keeping = make(DraftV8Config(), clock)
    first = keeping()
    clock.advance(-3_600_000 * NS_PER_MS)
    assert keeping() > first


def test_32_bit_seconds_layout_and_bad_config() -> None:
    clock = FakeClock()
    generator = make(DraftV8Config(timestamp_bits=32, tick_ns=1_000_000_000), clock)
    assert read_draft_v8(generator(), 32).timestamp == START_NS // 1_000_000_000
    with pytest.raises(InvalidField, match="timestamp_bits"):
        DraftV8Config(timestamp_bits=40)  # type: ignore[arg-type]
