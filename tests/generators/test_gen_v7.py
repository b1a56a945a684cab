"""UUIDv7 generator: every method and policy, value by value, with a fake clock and random.

References: RFC 9562 §5.7, §6.1, §6.2.
"""

from __future__ import annotations

import itertools

import pytest
from gen_fakes import NS_PER_MS, START_NS, FakeClock, constant_bytes, seeded_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit import ClockRegressionError, CounterOverflowError, InvalidField
from uuidkit.generators import ClockRegression, CounterOverflow, V7Config, V7Counter, V7Generator
from uuidkit.layouts import v7_int

HOUR_NS = 3_600_000_000_000
START_MS = START_NS // NS_PER_MS


def rand_74(value: int) -> int:
    """The 74 rand bits (rand_a then rand_b) of a v7 integer."""
    return (((value >> 64) & 0xFFF) << 62) | (value & ((1 << 62) - 1))


def ms_of(value: int) -> int:
    return value >> 80


def make(
    config: V7Config | None = None, byte: int = 0, clock: FakeClock | None = None
) -> tuple[V7Generator, FakeClock]:
    clock = clock or FakeClock()
    generator = V7Generator(
        config,
        clock=clock,
        random_bytes=constant_bytes(byte),
        sleep_ns=clock.sleep,
        monotonic_ns=clock.monotonic,
    )
    return generator, clock


def test_default_method2_seed_and_increment_value_by_value() -> None:
    generator, clock = make()
    # Zero randomness: the seed is 0 and every random increment is 1 (word 0, plus one).
    assert generator().int == v7_int(START_MS, 0, 0)
    assert generator().int == v7_int(START_MS, 0, 1)
    assert generator().int == v7_int(START_MS, 0, 2)
    clock.advance(NS_PER_MS)
    assert generator().int == v7_int(START_MS + 1, 0, 0)


def test_default_method2_guard_bit_and_48_bit_increments() -> None:
    generator, _ = make(byte=0xFF)
    first = generator().int
    # The seed keeps its top bit zero (rollover guard): 73 ones.
    assert rand_74(first) == (1 << 73) - 1
    second = generator().int
    assert rand_74(second) - rand_74(first) == 1 << 48
    assert ms_of(second) == START_MS


def test_method2_increment_of_one_only_when_asked() -> None:
    config = V7Config(increment_bits=0)
    generator, _ = make(config, byte=0xFF)
    first, second = generator().int, generator().int
    assert rand_74(second) - rand_74(first) == 1


def test_method1_counter_after_timestamp_and_random_tail() -> None:
    config = V7Config(counter=V7Counter.DEDICATED, counter_bits=12, guard_bits=1)
    generator, _ = make(config, byte=0x5A)
    first, second = generator().int, generator().int
    tail = 0x5A5A5A5A5A5A5A5A & ((1 << 62) - 1)
    # Counter = rand_a (12 bits, top bit zero), seeded from the random bytes, +1 per UUID.
    assert first == v7_int(START_MS, 0x5A5A5A5A5A5A5A5A & 0x7FF, tail)
    assert second == v7_int(START_MS, (0x5A5A5A5A5A5A5A5A & 0x7FF) + 1, tail)


def test_method1_42_bit_counter_spans_rand_a_and_rand_b() -> None:
    config = V7Config(counter=V7Counter.DEDICATED, counter_bits=42, guard_bits=42)
    generator, _ = make(config, byte=0xFF)
    values = [generator().int for _ in range(3)]
    counters = [rand_74(v) >> 32 for v in values]
    assert counters == [0, 1, 2]
    assert all(rand_74(v) & 0xFFFFFFFF == 0xFFFFFFFF for v in values)


def test_method3_fraction_matches_rfc_example() -> None:
    # RFC 9562 §6.2 Method 3: 0.4567 ms as 12 bits is floor(0.4567 * 4096) = 1870 = 0x74E.
    clock = FakeClock(START_NS + 456_700)
    config = V7Config(counter=V7Counter.NONE, fraction_bits=12, overflow=CounterOverflow.ADVANCE)
    generator, _ = make(config, byte=0, clock=clock)
    first = generator().int
    assert (first >> 64) & 0xFFF == 0x74E
    assert ms_of(first) == START_MS
    # No counter: a second UUID in the same tick advances the fraction (policy ADVANCE).
    assert (generator().int >> 64) & 0xFFF == 0x74F


def test_method3_followed_by_method1_counter() -> None:
    clock = FakeClock(START_NS + 500_000)  # half a millisecond: fraction 0b1000 in 4 bits
    config = V7Config(counter=V7Counter.DEDICATED, fraction_bits=4, counter_bits=12, guard_bits=12)
    generator, _ = make(config, byte=0xFF, clock=clock)
    first, second = rand_74(generator().int), rand_74(generator().int)
    assert first >> 70 == 0b1000 and second >> 70 == 0b1000
    assert (first >> 58) & 0xFFF == 0 and (second >> 58) & 0xFFF == 1


def overflowing(policy: CounterOverflow, stalled: bool = False) -> tuple[V7Generator, FakeClock]:
    # 12-bit counter, no guard, seed all ones: the first increment overflows.
    config = V7Config(
        counter=V7Counter.DEDICATED, counter_bits=12, guard_bits=0, overflow=policy, max_wait_ms=5
    )
    return make(config, byte=0xFF, clock=FakeClock(stalled=stalled))


def test_overflow_advance_moves_timestamp_ahead_and_reseeds() -> None:
    generator, clock = overflowing(CounterOverflow.ADVANCE)
    first, second = generator().int, generator().int
    assert ms_of(first) == START_MS and ms_of(second) == START_MS + 1
    assert second > first
    assert clock.slept_ns == 0
    # The clock catching up does not go below the advanced timestamp.
    clock.advance(NS_PER_MS)
    assert generator().int > second


def test_overflow_wait_sleeps_until_the_next_millisecond() -> None:
    generator, clock = overflowing(CounterOverflow.WAIT)
    first, second = generator().int, generator().int
    assert ms_of(second) == START_MS + 1 == clock.ms
    assert 0 < clock.slept_ns <= NS_PER_MS
    assert second > first


def test_overflow_wait_on_a_stalled_clock_raises_after_max_wait() -> None:
    generator, clock = overflowing(CounterOverflow.WAIT, stalled=True)
    first = generator().int
    with pytest.raises(CounterOverflowError, match="did not advance within 5000000 ns"):
        generator()
    clock.stalled = False
    clock.advance(NS_PER_MS)
    assert generator().int > first


def test_overflow_raise_keeps_state() -> None:
    generator, clock = overflowing(CounterOverflow.RAISE)
    first = generator().int
    with pytest.raises(CounterOverflowError, match="2\\*\\*12 values"):
        generator()
    with pytest.raises(CounterOverflowError):
        generator()
    clock.advance(NS_PER_MS)
    assert generator().int > first


@pytest.mark.parametrize("back_ns", [NS_PER_MS, 10_000 * NS_PER_MS])
def test_regression_keep_counts_on_from_last_timestamp(back_ns: int) -> None:
    generator, clock = make()
    first = generator().int
    clock.advance(-back_ns)  # within the 10 s run-ahead bound (V7Config.max_ahead_ms)
    second = generator().int
    assert second == first + 1
    assert ms_of(second) == START_MS


def test_regression_keep_beyond_the_bound_restarts_at_the_clock() -> None:
    # RFC 9562 §6.2 allows reusing the previous timestamp; doing so for an hour would stamp
    # every value an hour ahead. Beyond max_ahead_ms the clock wins, with a fresh seed.
    generator, clock = make(byte=0x37)
    first = generator().int
    clock.advance(-HOUR_NS)
    restarted = generator().int
    assert ms_of(restarted) == clock.ms and restarted < first
    assert generator().int > restarted  # increasing again from there


def test_regression_reseed_keeps_small_and_restarts_large() -> None:
    config = V7Config(regression=ClockRegression.RESEED, regression_window_ms=1000)
    generator, clock = make(config)
    first = generator().int
    clock.advance(-NS_PER_MS)
    assert generator().int == first + 1
    clock.advance(-HOUR_NS)
    restarted = generator().int
    assert ms_of(restarted) == clock.ms == START_MS - 1 - 3_600_000
    assert restarted < first
    assert generator().int == restarted + 1


@pytest.mark.parametrize("back_ns", [NS_PER_MS, HOUR_NS])
def test_regression_raise(back_ns: int) -> None:
    generator, clock = make(V7Config(regression=ClockRegression.RAISE))
    first = generator().int
    clock.advance(-back_ns)
    with pytest.raises(ClockRegressionError, match=f"clock went back {back_ns // NS_PER_MS} ticks"):
        generator()
    clock.advance(back_ns)
    assert generator().int == first + 1


def test_stall_and_jump_forward() -> None:
    generator, clock = make(byte=0)
    values = [generator().int for _ in range(5)]
    assert [rand_74(v) for v in values] == [0, 1, 2, 3, 4]
    clock.elapse(10 * 60 * 1000 * NS_PER_MS)  # ten minutes later (monotonic time too)
    jumped = generator().int
    assert ms_of(jumped) == clock.ms and rand_74(jumped) == 0


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("counter_bits", {"counter": V7Counter.DEDICATED, "counter_bits": 11}),
        ("counter_bits", {"counter": V7Counter.DEDICATED, "counter_bits": 43}),
        ("fraction_bits", {"fraction_bits": 13}),
        ("increment_bits", {"increment_bits": 74}),
        ("guard_bits", {"guard_bits": 75}),
        ("max_wait_ms", {"max_wait_ms": -1}),
    ],
)
def test_config_rejects_out_of_range(field: str, kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidField, match=field) as caught:
        V7Config(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_bulk_block_is_contiguous_and_monotonic() -> None:
    clock = FakeClock()
    generator = V7Generator(clock=clock, random_bytes=seeded_bytes(7))
    before = generator().int
    block = generator.generate_ints(10_000)
    after = generator().int
    assert before < block[0] and block[-1] < after
    assert all(a < b for a, b in itertools.pairwise(block))
    assert {ms_of(v) for v in block} == {START_MS}
    uuids = generator.generate(3)
    assert (
        uuids[0].int > after
        and uuids[0].version == 7
        and uuids[0].variant == "specified in RFC 4122"
    )
    assert generator.generate(0) == []
    with pytest.raises(InvalidField, match="count"):
        generator.generate(-1)


def test_bulk_with_method1_falls_back_to_the_policy_loop() -> None:
    config = V7Config(counter=V7Counter.DEDICATED, counter_bits=12, guard_bits=12)
    clock = FakeClock()
    generator = V7Generator(config, clock=clock, random_bytes=seeded_bytes(3))
    block = generator.generate_ints(5000)
    # 4096 values fit the first millisecond; the rest advance the timestamp (ADVANCE).
    assert [rand_74(v) >> 62 for v in block[:3]] == [0, 1, 2]
    assert ms_of(block[4095]) == START_MS and ms_of(block[4096]) == START_MS + 1
    assert block == sorted(set(block))


clock_steps = st.lists(
    st.one_of(
        st.just(0),
        st.integers(1, 3 * NS_PER_MS),
        st.integers(-3 * NS_PER_MS, -1),
        st.sampled_from([HOUR_NS, -HOUR_NS]),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(steps=clock_steps, seed=st.integers(0, 2**32), bulk=st.integers(0, 40))
def test_property_monotonic_within_the_bound_and_never_far_ahead(
    steps: list[int], seed: int, bulk: int
) -> None:
    clock = FakeClock()
    generator = V7Generator(clock=clock, random_bytes=seeded_bytes(seed))
    previous, highest_ms = -1, clock.ms
    bound_ms = V7Config().max_ahead_ms
    for step in steps:
        clock.advance(step)
        highest_ms = max(highest_ms, clock.ms)
        restart_allowed = previous >= 0 and ms_of(previous) - clock.ms > bound_ms
        for value in [generator().int, *generator.generate_ints(bulk)]:
            if restart_allowed and value < previous:
                assert ms_of(value) == clock.ms  # a restart lands exactly at the clock
                highest_ms = clock.ms
            else:
                assert value > previous
            restart_allowed = False
            # KEEP with the default counter never stamps a time the clock has not shown,
            # and never one more than the bound ahead of the current reading.
            assert ms_of(value) <= highest_ms
            assert ms_of(value) - clock.ms <= bound_ms
            previous = value


@pytest.mark.parametrize("regression", [ClockRegression.RAISE, ClockRegression.RESEED])
def test_advance_past_the_clock_is_not_a_clock_regression(regression: ClockRegression) -> None:
    # RFC 9562 §6.2: ADVANCE moves the timestamp ahead of a clock that has not gone back;
    # a clock merely behind that timestamp must neither raise nor restart (RESEED, window 0).
    config = V7Config(
        counter=V7Counter.NONE,
        overflow=CounterOverflow.ADVANCE,
        regression=regression,
        regression_window_ms=0,
    )
    generator, clock = make(config)
    values = [generator().int for _ in range(5)]
    assert [ms_of(v) for v in values] == [START_MS + i for i in range(5)]
    clock.advance(NS_PER_MS)  # the clock moves on, still behind the advanced timestamp
    values.append(generator().int)
    assert values == sorted(set(values)) and ms_of(values[-1]) == START_MS + 5
    clock.advance(-2 * NS_PER_MS)  # now a real regression of 2 ms below the last reading
    if regression is ClockRegression.RAISE:
        with pytest.raises(ClockRegressionError, match="went back 2 ticks"):
            generator()
    else:
        assert ms_of(generator().int) == START_MS - 1
