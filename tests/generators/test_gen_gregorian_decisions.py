"""The compiled v1/v6 core takes the common cases itself; every decision it takes is the
Timeline's, for every policy and every kind of clock reading.

The table: overflow policy x regression policy x state (tick, highest reading, place in
the clock interval, a pending restart) x reading (later, same, behind an ADVANCEd tick, back
within and beyond the run-ahead bound). For each row the core's own step (``decide``) runs
on one copy of the state and, where it commits a timestamp, the reference path
(``GregorianEngine.advance``, which asks the Timeline) runs on another: the timestamps and
the states after must be equal. Where the core declines, its state must be untouched (the
slow path, which is the Timeline, then decides).

References: RFC 9562 §5.1, §6.1, §6.2; RFC 4122 §4.2.1.2.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from gen_fakes import FakeClock, seeded_bytes

from uuidkit import _accel
from uuidkit._bits import GREGORIAN_OFFSET_100NS
from uuidkit.generators import ClockRegression, CounterOverflow, GregorianConfig, V6Generator
from uuidkit.generators._gregorian_engine import GregorianState
from uuidkit.generators._timeline import NO_TICK

CORE = getattr(_accel.SPEEDUPS, "GregorianCore", None)
pytestmark = pytest.mark.skipif(CORE is None, reason="uuidkit._speedups not in use")

RESOLUTION_NS = 1_000
#: Timestamps per clock interval: 1,000 ns of 100 ns ticks (RFC 4122 §4.2.1.2).
BUDGET = RESOLUTION_NS // 100
MAX_AHEAD_MS = 1
#: The run-ahead bound in clock intervals: 1 ms of 1,000 ns intervals.
AHEAD = MAX_AHEAD_MS * 1_000_000 // RESOLUTION_NS
TICK = 1_000_000
FIELDS = ("tick", "clock_tick", "index", "last", "pending")

STATES = [
    # (tick, clock_tick, index, pending)
    (NO_TICK, NO_TICK, 0, False),  # before the first value
    (TICK, TICK, 0, False),
    (TICK, TICK, BUDGET - 1, False),  # the interval is used up
    (TICK, TICK - 3, 2, False),  # ADVANCEd 3 intervals ahead of the highest reading
    (TICK, TICK - AHEAD, BUDGET - 1, False),  # ADVANCEd to the bound, used up
    (TICK, TICK, 0, True),  # a RAISE beyond the bound announced a restart
]
READINGS = [5, 1, 0, -1, -2, -3, -4, -AHEAD, -AHEAD - 1, -5 * AHEAD]


def stamp(tick: int, index: int) -> int:
    return tick * BUDGET + GREGORIAN_OFFSET_100NS + index


def load(state: Any, row: tuple[int, int, int, bool]) -> None:
    tick, clock_tick, index, pending = row
    state.tick, state.clock_tick, state.index, state.pending = tick, clock_tick, index, pending
    state.last = stamp(tick, index) if tick != NO_TICK else -1


def snapshot(state: Any) -> tuple[object, ...]:
    return tuple(getattr(state, name) for name in FIELDS)


def reference(engine: Any, row: tuple[int, int, int, bool], interval: int) -> tuple[Any, ...]:
    """The Timeline's timestamp and state after, on a pure state loaded with ``row``."""
    core, pure = engine.state, GregorianState(engine.state.node, engine.state.clock_seq)
    load(pure, row)
    engine.state = pure
    try:
        return engine.advance(interval * RESOLUTION_NS), snapshot(pure)
    finally:
        engine.state = core


@pytest.mark.parametrize(
    ("overflow", "regression"), list(itertools.product(CounterOverflow, ClockRegression))
)
def test_every_core_decision_is_the_timelines(
    overflow: CounterOverflow, regression: ClockRegression
) -> None:
    config = GregorianConfig(
        clock_resolution_ns=RESOLUTION_NS,
        overflow=overflow,
        regression=regression,
        regression_window_ms=0,
        max_ahead_ms=MAX_AHEAD_MS,
        random_per_uuid=False,
    )
    # v6: every overflow policy (v1 refuses ADVANCE); the core's step is the same for both.
    generator = V6Generator(config, clock=FakeClock(), random_bytes=seeded_bytes(1))
    engine = generator._engine
    core = engine.core
    assert core is not None and engine.timeline.ahead_ticks == AHEAD
    taken = 0
    for row, offset in itertools.product(STATES, READINGS):
        interval = TICK + offset
        load(core, row)
        before = snapshot(core)
        decided = core.decide(interval)
        if decided < 0:
            assert snapshot(core) == before, (row, offset)  # nothing committed
            continue
        taken += 1
        assert (decided, snapshot(core)) == reference(engine, row, interval), (row, offset)
    # The core is no empty shell: a later interval and a timestamp left in the interval are
    # its own in every policy (5 readings after a state without a pending restart, twice).
    assert taken >= 4 * 2


def test_the_core_follows_the_timelines_bound() -> None:
    # An ADVANCE one interval beyond the bound is declined (the Timeline raises); at the
    # bound it is taken: the core's bound is the Timeline's, not a copy of the setting.
    config = GregorianConfig(
        clock_resolution_ns=RESOLUTION_NS,
        overflow=CounterOverflow.ADVANCE,
        max_ahead_ms=MAX_AHEAD_MS,
        random_per_uuid=False,
    )
    generator = V6Generator(config, clock=FakeClock(), random_bytes=seeded_bytes(1))
    core = generator._engine.core
    assert core is not None
    load(core, (TICK, TICK - AHEAD + 1, BUDGET - 1, False))
    assert core.decide(TICK - AHEAD + 1) == stamp(TICK + 1, 0)
    load(core, (TICK, TICK - AHEAD, BUDGET - 1, False))
    assert core.decide(TICK - AHEAD) == -1
