"""A wall clock that lies once: every time-based generator checks its readings against the
monotonic clock (the Timeline's ``screen``), on the pure path and in the compiled cores.

A reading more than ``max_ahead_ms`` beyond the monotonic estimate (the last trusted reading
plus the monotonic time since) is not stamped: the estimate is. A forward step that persists
for 2 s of monotonic time is followed. Clocks are injected (:class:`FakeClock`: ``elapse``
moves the wall and the monotonic clock together, ``advance`` the wall clock alone), so every
case is deterministic; run the module with ``UUIDKIT_PURE=1`` for the pure path.

References: RFC 9562 §6.1 (clock changes), §6.2 (Monotonic Error Checking), §6.3.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gen_fakes import NS_PER_MS, START_NS, FakeClock, seeded_bytes

import uuidkit
from uuidkit import _accel
from uuidkit.fields import fields
from uuidkit.generators import (
    DraftV8Generator,
    ManualNodeSource,
    NodeBoundV6Generator,
    NodeBoundV7Generator,
    NodeBoundV8Generator,
    SharedConfig,
    SharedV6Generator,
    SharedV7Generator,
    StateUnavailableWarning,
    V1Generator,
    V6Generator,
    V7Config,
    V7Generator,
)
from uuidkit.generators._timeline import (
    DEFAULT_MAX_AHEAD_MS,
    STEP_ACCEPT_NS,
    Timeline,
)
from uuidkit.generators.pg18 import PG18V7Generator
from uuidkit.legacy import read_draft_v8
from uuidkit.nodelayouts import MULTICAST_BIT
from uuidkit.timestamps import gregorian_ticks_to_unix_ns

YEAR_NS = 365 * 86_400_000 * NS_PER_MS
NODE = 0x0200_0000_00AA | MULTICAST_BIT
#: A value's timestamp is truncated to its unit (1 ms, or less): one unit of slack below.
MARGIN_MS = 1


def injected(clock: FakeClock) -> dict[str, Any]:
    return {
        "clock": clock,
        "random_bytes": seeded_bytes(7),
        "sleep_ns": clock.sleep,
        "monotonic_ns": clock.monotonic,
    }


def v7_ms(value: uuidkit.UUID) -> int:
    return value.int >> 80


def gregorian_ms(value: uuidkit.UUID) -> int:
    return gregorian_ticks_to_unix_ns(fields(value).timestamp) // NS_PER_MS  # type: ignore[union-attr]


def shared(factory: type, path: Path, clock: FakeClock) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StateUnavailableWarning)
        return factory(path / "gen.state", SharedConfig(durable=False), **injected(clock))


def node_bound(factory: type, clock: FakeClock) -> Any:
    return factory(ManualNodeSource(NODE), **injected(clock))


def pg18(clock: FakeClock) -> Any:
    return PG18V7Generator(clock=clock, random_bytes=seeded_bytes(7), monotonic_ns=clock.monotonic)


#: name -> (make(clock, tmp_path), ms_of(value))
SUBJECTS: dict[str, tuple[Callable[[FakeClock, Path], Any], Callable[[Any], int]]] = {
    "v7": (lambda c, _: V7Generator(**injected(c)), v7_ms),
    "v7-fraction": (
        lambda c, _: V7Generator(V7Config(fraction_bits=12, counter_bits=12), **injected(c)),
        v7_ms,
    ),
    "v6": (lambda c, _: V6Generator(**injected(c)), gregorian_ms),
    "v1": (lambda c, _: V1Generator(**injected(c)), gregorian_ms),
    "draft-v8": (
        lambda c, _: DraftV8Generator(**injected(c)),
        lambda v: read_draft_v8(v, 48).timestamp,
    ),
    "pg18": (lambda c, _: pg18(c), v7_ms),
    "node-v7": (lambda c, _: node_bound(NodeBoundV7Generator, c), v7_ms),
    "node-v8": (lambda c, _: node_bound(NodeBoundV8Generator, c), v7_ms),
    "node-v6": (lambda c, _: node_bound(NodeBoundV6Generator, c), gregorian_ms),
    "shared-v7": (lambda c, p: shared(SharedV7Generator, p, c), v7_ms),
    "shared-v6": (lambda c, p: shared(SharedV6Generator, p, c), gregorian_ms),
}


def key(name: str, value: uuidkit.UUID) -> tuple[int, int]:
    """What strictly increases: the whole value, or (timestamp, clock_seq) for v1."""
    if name == "v1":
        record = fields(value)
        return record.timestamp, record.clock_seq  # type: ignore[union-attr]
    return value.int, 0


def true_ms(clock: FakeClock, start_ns: int = START_NS) -> int:
    """The true time: the start plus the monotonic time elapsed (the fake starts at 0)."""
    return (start_ns + clock.monotonic_ns) // NS_PER_MS


@pytest.mark.parametrize("name", sorted(SUBJECTS))
@pytest.mark.parametrize("glitch_ns", [YEAR_NS, 60 * 60_000 * NS_PER_MS, 11_000 * NS_PER_MS])
def test_one_glitch_ahead_is_never_stamped(name: str, glitch_ns: int, tmp_path: Path) -> None:
    # The measured fault: the clock reads a year (an hour, 11 s) ahead once, then the true
    # time again. No call fails, the values keep increasing, none is stamped more than
    # max_ahead_ms (+ one unit) ahead of true time.
    make, ms_of = SUBJECTS[name]
    clock = FakeClock()
    generate = make(clock, tmp_path)
    previous: tuple[int, int] | None = None
    for step in range(400):
        clock.elapse(NS_PER_MS // 4 if step % 3 else 3 * NS_PER_MS)
        glitch = step in (100, 101, 102)  # one reading, then its next two calls' readings
        if glitch:
            clock.advance(glitch_ns)
        value = generate()
        if glitch:
            clock.advance(-glitch_ns)
        assert ms_of(value) - true_ms(clock) <= DEFAULT_MAX_AHEAD_MS + MARGIN_MS, step
        current = key(name, value)
        assert previous is None or current > previous, step
        previous = current
    # Back on the true clock: the last values carry the true time again.
    assert abs(ms_of(value) - true_ms(clock)) <= MARGIN_MS


@pytest.mark.parametrize("name", sorted(SUBJECTS))
def test_a_forward_step_that_persists_is_followed_within_2_s(name: str, tmp_path: Path) -> None:
    # The wall clock is corrected an hour forward and stays there: within 2 s of monotonic
    # time (plus one call) the values follow it; before, they carry the estimate; never a
    # failure, never a step down.
    make, ms_of = SUBJECTS[name]
    clock = FakeClock()
    generate = make(clock, tmp_path)
    generate()
    clock.elapse(NS_PER_MS)
    generate()
    step_ns = 60 * 60_000 * NS_PER_MS
    clock.advance(step_ns)
    stepped_at = clock.monotonic_ns
    previous = key(name, generate())
    followed_after: int | None = None
    call_ns = 50 * NS_PER_MS
    while clock.monotonic_ns - stepped_at < STEP_ACCEPT_NS + 4 * call_ns:
        clock.elapse(call_ns)
        value = generate()
        current = key(name, value)
        assert current > previous
        previous = current
        on_wall = abs(ms_of(value) - clock.ms) <= MARGIN_MS
        if followed_after is None and on_wall:
            followed_after = clock.monotonic_ns - stepped_at
        if followed_after is None:
            assert ms_of(value) - true_ms(clock) <= DEFAULT_MAX_AHEAD_MS + MARGIN_MS
    assert followed_after is not None
    assert STEP_ACCEPT_NS <= followed_after <= STEP_ACCEPT_NS + call_ns


def test_a_glitch_before_a_real_step_does_not_count_towards_it() -> None:
    # A glitch, the true clock back, then (after 2 s) another glitch: the second is not
    # taken as a step that persisted since the first (the return in between ended it).
    clock = FakeClock()
    generator = V7Generator(**injected(clock))
    generator()
    clock.advance(YEAR_NS)
    generator()
    clock.advance(-YEAR_NS)
    for _ in range(30):
        clock.elapse(100 * NS_PER_MS)
        generator()
    clock.advance(YEAR_NS)
    assert v7_ms(generator()) - true_ms(clock) <= DEFAULT_MAX_AHEAD_MS


def test_no_check_for_an_injected_clock_with_the_system_monotonic_clock() -> None:
    # A simulated clock paired with the real monotonic clock is not checked: its jumps are
    # its time (documented in docs/generators.md).
    clock = FakeClock()
    generator = V7Generator(clock=clock, random_bytes=seeded_bytes(1))
    generator()
    clock.advance(YEAR_NS)
    assert v7_ms(generator()) == clock.ms


# --- the Timeline's rule, and each compiled core against it ------------------------------


class Mono:
    """A monotonic clock that counts its readings."""

    def __init__(self) -> None:
        self.now = 0
        self.reads = 0

    def __call__(self) -> int:
        self.reads += 1
        return self.now


def ms_timeline(mono: Mono, ahead_ms: int = 10_000) -> Timeline:
    from uuidkit.generators import ClockRegression, CounterOverflow

    return Timeline(
        overflow=CounterOverflow.ADVANCE,
        regression=ClockRegression.KEEP,
        window_ticks=0,
        ahead_ticks=ahead_ms,
        max_tick=(1 << 48) - 1,
        unit="ms",
        exhausted="counter",
        monotonic_ns=mono,
        tick_rate=(1, NS_PER_MS),
    )


def test_the_timeline_reads_the_monotonic_clock_only_above_its_trust_tick() -> None:
    # The common path's cost: a reading at or below trust_tick needs no monotonic reading.
    mono = Mono()
    timeline = ms_timeline(mono)
    start = START_NS // NS_PER_MS
    timeline.reading(start)
    assert mono.reads == 1 and timeline.trust_tick == start + 1_000
    for ms in range(start + 1, start + 1_001):
        timeline.reading(ms)
    assert mono.reads == 1
    mono.now = 1_001 * NS_PER_MS
    timeline.reading(start + 1_001)  # above: checked, trusted, anchored again
    assert mono.reads == 2 and timeline.trust_tick == start + 2_001


@pytest.mark.parametrize(
    ("elapsed_ms", "reading_ms", "stamped_ms"),
    [
        (0, 10_000, 10_000),  # exactly the bound ahead of the estimate: trusted
        (0, 10_001, 0),  # one beyond: the estimate (here the highest reading)
        (5_000, 15_000, 15_000),
        (5_000, 15_001, 5_000),
        (5_000, 365 * 86_400_000, 5_000),
    ],
)
def test_the_timelines_decision_table(elapsed_ms: int, reading_ms: int, stamped_ms: int) -> None:
    mono = Mono()
    timeline = ms_timeline(mono)
    base = START_NS // NS_PER_MS
    timeline.reading(base)
    mono.now = elapsed_ms * NS_PER_MS
    timeline.reading(base + reading_ms)
    assert timeline.tick == base + stamped_ms
    assert timeline.untrusted_readings == (stamped_ms != reading_ms)


V7CORE = getattr(_accel.SPEEDUPS, "V7Core", None)
GATE = getattr(_accel.SPEEDUPS, "NodeGate", None)
GREGORIAN = getattr(_accel.SPEEDUPS, "GregorianCore", None)


def slow_calls_of(name: str, generator: Any) -> int:
    if name == "v7":
        return int(generator.next.slow_calls)
    return int(generator._gate_slow_calls)


@pytest.mark.skipif(V7CORE is None or GATE is None, reason="uuidkit._speedups not in use")
@pytest.mark.parametrize("name", ["v7", "node-v7", "node-v8"])
def test_each_counting_core_hands_readings_above_trust_tick_to_the_timeline(name: str) -> None:
    # The decision table of the new rule for the C cores: a later tick at or below the
    # Timeline's trust_tick is the core's own (no slow call); one above it is the slow
    # path's (the Timeline checks it). Readings: +1 ms, to the trust tick, one beyond it.
    clock = FakeClock()
    generator: Any = (
        V7Generator(**injected(clock))
        if name == "v7"
        else node_bound(
            {"node-v7": NodeBoundV7Generator, "node-v8": NodeBoundV8Generator}[name], clock
        )
    )
    generator()
    generator()
    timeline = generator._generate.__self__.timeline if name == "v7" else generator._timeline
    trust_ms = timeline.trust_tick >> (12 if name == "node-v8" else 0)
    for target_ms, slow in [
        (clock.ms + 1, False),
        (trust_ms, False),
        (trust_ms + 1, True),
    ]:
        before = slow_calls_of(name, generator)
        clock.elapse(target_ms * NS_PER_MS - clock.now_ns)
        generator()
        assert (slow_calls_of(name, generator) > before) is slow, (target_ms, trust_ms)


@pytest.mark.skipif(GREGORIAN is None, reason="uuidkit._speedups not in use")
def test_the_gregorian_core_declines_a_later_interval_above_its_limit() -> None:
    clock = FakeClock()
    generator = V6Generator(**injected(clock))
    engine = generator._engine
    generator()
    core = engine.core
    assert core.limit == engine.timeline.trust_tick
    resolution = engine.resolution
    tick = core.tick
    for interval, taken in [(tick + 1, True), (core.limit, True), (core.limit + 1, False)]:
        state = (core.tick, core.clock_tick, core.index, core.last)
        decided = core.decide(interval)
        assert (decided >= 0) is taken, interval
        if not taken:
            assert (core.tick, core.clock_tick, core.index, core.last) == state
    assert resolution > 0
