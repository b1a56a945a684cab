"""The policy engine and the v7 bit plan, as units: every move of the timeline, every bit.

References: RFC 9562 §5.7, §6.1, §6.2; RFC 4122 §4.2.1.2.
"""

from __future__ import annotations

import pytest
from gen_fakes import NS_PER_MS, START_NS

from uuidkit import ClockRegressionError, CounterOverflowError, GeneratorError
from uuidkit.generators import ClockRegression, CounterOverflow, V7Config, V7Counter
from uuidkit.generators._timeline import NEW, RESTART, SAME, WAIT, Timeline
from uuidkit.generators.v7 import V7Layout
from uuidkit.layouts import v7_int


def timeline(
    regression: ClockRegression = ClockRegression.KEEP,
    overflow: CounterOverflow = CounterOverflow.ADVANCE,
    *,
    window: int = 5,
    ahead: int = 100,
    max_tick: int = 1 << 60,
    may_restart: bool = True,
) -> Timeline:
    # No clock: the timeline is given every reading, and never sleeps.
    return Timeline(
        overflow=overflow,
        regression=regression,
        window_ticks=window,
        ahead_ticks=ahead,
        max_tick=max_tick,
        unit="ms",
        exhausted="counter: all used",
        may_restart=may_restart,
    )


def test_new_ticks_and_same_tick() -> None:
    line = timeline()
    assert line.reading(1_000) == NEW and (line.tick, line.clock_tick) == (1_000, 1_000)
    assert line.reading(1_000) == SAME
    assert line.reading(1_003) == NEW and line.tick == 1_003


@pytest.mark.parametrize(
    ("policy", "back", "move"),
    [
        (ClockRegression.KEEP, 100, SAME),  # exactly the bound: keep
        (ClockRegression.KEEP, 101, RESTART),  # beyond it: the clock wins
        (ClockRegression.RESEED, 5, SAME),  # within the window
        (ClockRegression.RESEED, 6, RESTART),
    ],
)
def test_regression_moves(policy: ClockRegression, back: int, move: int) -> None:
    line = timeline(policy)
    line.reading(1_000)
    assert line.reading(1_000 - back) == move
    expected = 1_000 - back if move == RESTART else 1_000
    assert line.tick == expected and line.clock_tick == expected


def test_raise_within_the_bound_keeps_state_and_resumes() -> None:
    line = timeline(ClockRegression.RAISE)
    line.reading(1_000)
    with pytest.raises(ClockRegressionError, match=r"went back 50 ms .*policy RAISE$"):
        line.reading(950)
    assert (line.tick, line.restart_pending) == (1_000, False)
    assert line.reading(1_001) == NEW


def test_raise_beyond_the_bound_announces_then_restarts() -> None:
    line = timeline(ClockRegression.RAISE)
    line.reading(1_000)
    with pytest.raises(ClockRegressionError, match="the next value restarts"):
        line.reading(500)
    assert line.reading(500) == RESTART and line.tick == 500 and not line.restart_pending


def test_behind_an_advance_is_not_a_regression() -> None:
    line = timeline(ClockRegression.RAISE)
    line.reading(1_000)
    assert line.overflow(1_000) == NEW and (line.tick, line.clock_tick) == (1_001, 1_000)
    assert line.reading(1_000) == SAME  # the clock has not gone back


def test_advance_is_bounded() -> None:
    line = timeline(ahead=3)
    line.reading(1_000)
    for expected in (1_001, 1_002, 1_003):
        assert line.overflow(1_000) == NEW and line.tick == expected
    with pytest.raises(CounterOverflowError, match="more than 3 ms ahead of the clock"):
        line.overflow(1_000)
    assert line.tick == 1_003


def test_overflow_raise_and_wait() -> None:
    line = timeline(overflow=CounterOverflow.RAISE)
    line.reading(1_000)
    with pytest.raises(
        CounterOverflowError, match="counter: all used \\(tick 1000\\); policy RAISE"
    ):
        line.overflow(1_000)
    waiting = timeline(overflow=CounterOverflow.WAIT)
    waiting.reading(1_000)
    # "Wait until tick 1001": the state is unchanged until the caller hands on that reading.
    assert waiting.overflow(1_000) == WAIT and waiting.wait_tick == 1_001
    assert (waiting.tick, waiting.clock_tick) == (1_000, 1_000)
    assert waiting.reading(1_003) == NEW and waiting.tick == 1_003


@pytest.mark.parametrize("policy", [ClockRegression.KEEP, ClockRegression.RAISE])
def test_a_generator_that_may_not_restart_raises_beyond_the_bound(
    policy: ClockRegression,
) -> None:
    line = timeline(policy, may_restart=False)
    line.reading(1_000)
    for _ in range(2):  # every time, and never a pending restart
        with pytest.raises(ClockRegressionError, match="went back 101 ms"):
            line.reading(899)
        assert (line.tick, line.clock_tick, line.restart_pending) == (1_000, 1_000, False)
    if policy is ClockRegression.KEEP:
        assert line.reading(900) == SAME  # back within the bound: count on


def test_max_tick_and_reset() -> None:
    line = timeline(max_tick=1_000)
    assert line.reading(1_000) == NEW
    with pytest.raises(GeneratorError, match="does not fit"):
        line.reading(1_001)
    line.reset()
    assert (line.tick, line.clock_tick, line.restart_pending) == (-1, -1, False)


def test_v7_layout_parts_match_rfc_9562() -> None:
    layout = V7Layout(V7Config())
    ms = START_NS // NS_PER_MS
    assert layout.ticks_of(START_NS + 999_999) == ms
    assert layout.prefix(ms) == v7_int(ms, 0, 0)
    words = iter([0xFFFF_FFFF_FFFF_FFFF] * 2)
    assert layout.seed(lambda: next(words)) == (1 << 73) - 1  # top guard bit clear
    assert layout.value(layout.prefix(ms), (5 << 62) | 7, 0, lambda: 0) == v7_int(ms, 5, 7)


def test_v7_layout_method3_fraction_and_method1_tail() -> None:
    # RFC 9562 §6.2 Method 3: 0.4567 ms in 12 bits is 0x74E.
    layout = V7Layout(V7Config(counter=V7Counter.NONE, fraction_bits=12))
    tick = layout.ticks_of(START_NS + 456_700)
    assert tick & 0xFFF == 0x74E and layout.tick_ns == 244
    assert (layout.prefix(tick) >> 64) & 0xFFF == 0x74E
    dedicated = V7Layout(V7Config(counter=V7Counter.DEDICATED, counter_bits=12, guard_bits=1))
    assert dedicated.tail_bits == 62 and dedicated.seed_mask == 0x7FF
    value = dedicated.value(dedicated.prefix(0), 0x123, 0xFFFF_FFFF_FFFF_FFFF, lambda: 0)
    assert value == v7_int(0, 0x123, (1 << 62) - 1)
