"""Time-based draft UUIDv8 generator (draft-peabody-dispatch-new-uuid-format-01 §4.5)."""

from __future__ import annotations

import pytest
from gen_fakes import NS_PER_MS, START_NS, FakeClock, constant_bytes

from uuidkit import ClockRegressionError, CounterOverflowError, InvalidField
from uuidkit.generators import ClockRegression, CounterOverflow, DraftV8Config, DraftV8Generator
from uuidkit.legacy import read_draft_v8


def make(config: DraftV8Config, clock: FakeClock) -> DraftV8Generator:
    return DraftV8Generator(
        config,
        clock=clock,
        random_bytes=constant_bytes(0),
        sleep_ns=clock.sleep,
        monotonic_ns=clock.monotonic,
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
    clock.advance(-5_000 * NS_PER_MS)  # within the 10 s run-ahead bound: keep counting
    assert keeping() > first
    clock.advance(-3_600_000 * NS_PER_MS)  # beyond it: restart at the clock
    assert read_draft_v8(keeping(), 48).timestamp == clock.ms


def test_32_bit_seconds_layout_and_bad_config() -> None:
    clock = FakeClock()
    generator = make(DraftV8Config(timestamp_bits=32, tick_ns=1_000_000_000), clock)
    assert read_draft_v8(generator(), 32).timestamp == START_NS // 1_000_000_000
    with pytest.raises(InvalidField, match="timestamp_bits"):
        DraftV8Config(timestamp_bits=40)  # type: ignore[arg-type]


def test_advance_past_the_clock_is_not_a_clock_regression() -> None:
    # RFC 9562 §6.2: a clock behind a timestamp that ADVANCE moved ahead has not gone back.
    clock = FakeClock()
    config = DraftV8Config(
        timestamp_bits=64,
        tick_ns=1,
        overflow=CounterOverflow.ADVANCE,
        regression=ClockRegression.RAISE,
    )
    generator = make(config, clock)
    values = [generator().int for _ in range(600)]  # 256 clock sequences per tick
    assert values == sorted(set(values))
    clock.advance(-16)  # one step of the 60 embedded bits below the last reading
    with pytest.raises(ClockRegressionError, match="went back 16 ticks"):
        generator()


def test_64_bit_ticks_that_differ_in_the_truncated_bits_stay_increasing() -> None:
    # Draft §4.5.4: the 64-bit timestamp "is truncated to 60-bits"; ticks 16 apart are the
    # smallest steps the value can show, so a new tick within them must not restart seq at 0.
    clock = FakeClock()
    generator = make(DraftV8Config(timestamp_bits=64, tick_ns=1), clock)
    values = []
    for _ in range(40):
        values += [generator().int for _ in range(3)]
        clock.advance(1)
    assert values == sorted(set(values))
    decoded = read_draft_v8(generator(), 64)
    assert decoded.timestamp == START_NS + 40 - (START_NS + 40) % 16


def test_generate_is_a_block_of_increasing_values() -> None:
    clock = FakeClock()
    generator = make(DraftV8Config(timestamp_bits=60, tick_ns=100), clock)
    block = generator.generate(600)  # 256 clock sequences per tick: WAIT moves the clock
    assert block == sorted(set(block)) and len(block) == 600
    assert [read_draft_v8(v, 60).seq for v in block[:3]] == [0, 1, 2]
    assert generator.generate(0) == []
    with pytest.raises(InvalidField, match="count"):
        generator.generate(-1)
