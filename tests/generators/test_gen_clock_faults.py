"""Clock faults through an injected clock: back an hour, a year ahead and back, stalled, jitter.

For every generator and every regression policy the documented behaviour holds, and above
all the bound: no value is ever stamped more than ``max_ahead_ms`` (``max_future_ms`` for
the state-file generators) ahead of the clock reading it was made at.

References: RFC 9562 §6.1, §6.2 (Monotonic Error Checking); RFC 4122 §4.2.1.1, §4.2.1.2.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from gen_fakes import NS_PER_MS, FakeClock, seeded_bytes

import uuidkit
from uuidkit import ClockRegressionError, CounterOverflowError
from uuidkit.fields import fields
from uuidkit.generators import (
    ClockRegression,
    CounterOverflow,
    DraftV8Config,
    DraftV8Generator,
    GregorianConfig,
    SharedConfig,
    SharedV1Generator,
    SharedV6Generator,
    SharedV7Generator,
    StateUnavailableWarning,
    V1Generator,
    V6Generator,
    V7Config,
    V7Generator,
)
from uuidkit.legacy import read_draft_v8
from uuidkit.timestamps import gregorian_ticks_to_unix_ns

HOUR_MS = 3_600_000
YEAR_MS = 365 * 24 * HOUR_MS
BOUND_MS = 10_000  # the default max_ahead_ms / max_future_ms


@dataclass
class Subject:
    """A generator under test with how to read the time and the order key of its values."""

    make: Callable[[FakeClock, Path], Callable[[], uuidkit.UUID]]
    policy: ClockRegression
    ms_of: Callable[[uuidkit.UUID], int]
    #: What must strictly increase between values (v1 values sort by timestamp only).
    key: Callable[[uuidkit.UUID], int]


def v7_ms(value: uuidkit.UUID) -> int:
    return value.int >> 80


def gregorian_ms(value: uuidkit.UUID) -> int:
    return gregorian_ticks_to_unix_ns(gregorian_ticks(value)) // NS_PER_MS


def gregorian_ticks(value: uuidkit.UUID) -> int:
    return fields(value).timestamp  # type: ignore[union-attr]


def v8_ms(value: uuidkit.UUID) -> int:
    return read_draft_v8(value, 48).timestamp


def whole(value: uuidkit.UUID) -> int:
    return value.int


def injected(clock: FakeClock, seed: int = 3) -> dict[str, object]:
    return {
        "clock": clock,
        "random_bytes": seeded_bytes(seed),
        "sleep_ns": clock.sleep,
        "monotonic_ns": clock.monotonic,
    }


def quiet_shared(factory: type, path: Path, clock: FakeClock) -> Callable[[], uuidkit.UUID]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StateUnavailableWarning)
        generator: Callable[[], uuidkit.UUID] = factory(
            path / "gen.state", SharedConfig(durable=False), **injected(clock)
        )
    return generator


KEEP, RESEED, RAISE = ClockRegression.KEEP, ClockRegression.RESEED, ClockRegression.RAISE
SUBJECTS = {
    "v7-keep": Subject(lambda c, _: V7Generator(**injected(c)), KEEP, v7_ms, whole),  # type: ignore[arg-type]
    "v7-reseed": Subject(
        lambda c, _: V7Generator(V7Config(regression=RESEED), **injected(c)),  # type: ignore[arg-type]
        RESEED,
        v7_ms,
        whole,
    ),
    "v7-raise": Subject(
        lambda c, _: V7Generator(V7Config(regression=RAISE), **injected(c)),  # type: ignore[arg-type]
        RAISE,
        v7_ms,
        whole,
    ),
    "v1-reseed": Subject(
        lambda c, _: V1Generator(GregorianConfig(clock_resolution_ns=1000), **injected(c)),  # type: ignore[arg-type]
        RESEED,
        gregorian_ms,
        gregorian_ticks,
    ),
    "v1-raise": Subject(
        lambda c, _: V1Generator(
            GregorianConfig(clock_resolution_ns=1000, regression=RAISE),
            **injected(c),  # type: ignore[arg-type]
        ),
        RAISE,
        gregorian_ms,
        gregorian_ticks,
    ),
    "v6-keep": Subject(lambda c, _: V6Generator(**injected(c)), KEEP, gregorian_ms, whole),  # type: ignore[arg-type]
    "v8-keep": Subject(lambda c, _: DraftV8Generator(**injected(c)), KEEP, v8_ms, whole),  # type: ignore[arg-type]
    "v8-raise": Subject(
        lambda c, _: DraftV8Generator(DraftV8Config(regression=RAISE), **injected(c)),  # type: ignore[arg-type]
        RAISE,
        v8_ms,
        whole,
    ),
    "shared-v7": Subject(lambda c, p: quiet_shared(SharedV7Generator, p, c), KEEP, v7_ms, whole),
    "shared-v6": Subject(
        lambda c, p: quiet_shared(SharedV6Generator, p, c), KEEP, gregorian_ms, whole
    ),
    "shared-v1": Subject(
        lambda c, p: quiet_shared(SharedV1Generator, p, c), RESEED, gregorian_ms, gregorian_ticks
    ),
}


def run(subject: Subject, clock: FakeClock, tmp_path: Path, steps_ms: list[int]) -> None:
    """Move the clock by each step and make two values; check every documented rule."""
    generate = subject.make(clock, tmp_path)
    previous: uuidkit.UUID | None = None
    restart_due = False
    for step in steps_ms:
        clock.advance(step * NS_PER_MS)
        for _ in range(2):
            behind_ms = subject.ms_of(previous) - clock.ms if previous is not None else 0
            try:
                value = generate()
            except ClockRegressionError:
                # RAISE only, and only while the clock is behind the last value.
                assert subject.policy is RAISE and behind_ms > 0
                restart_due = restart_due or behind_ms > BOUND_MS
                continue
            made_at = clock.ms
            # The bound: never more than max_ahead_ms ahead of the clock.
            assert subject.ms_of(value) - made_at <= BOUND_MS
            if previous is not None and subject.key(value) <= subject.key(previous):
                # A step down is a restart: allowed only beyond the bound (KEEP), after a
                # regression (RESEED) or after RAISE announced it, and always at the clock.
                allowed = {
                    KEEP: behind_ms > BOUND_MS,
                    RESEED: behind_ms > 0,
                    RAISE: restart_due,
                }[subject.policy]
                assert allowed, f"{value} not above {previous} with the clock {behind_ms} ms behind"
                assert subject.ms_of(value) == made_at
                restart_due = False
            previous = value


@pytest.mark.parametrize("name", sorted(SUBJECTS))
def test_back_an_hour(name: str, tmp_path: Path) -> None:
    run(SUBJECTS[name], FakeClock(), tmp_path, [0, 1, 1, -HOUR_MS, 0, 1, 1])


@pytest.mark.parametrize("name", sorted(SUBJECTS))
def test_forward_a_year_and_back_recovers_at_once(name: str, tmp_path: Path) -> None:
    subject = SUBJECTS[name]
    clock = FakeClock()
    run(subject, clock, tmp_path, [0, 1, YEAR_MS, 1, -YEAR_MS, 1, 1, 5, 1])
    # Recovered: the values follow the clock again, not the year-ahead ones.
    generate = subject.make(clock, tmp_path)
    assert subject.ms_of(generate()) - clock.ms <= BOUND_MS


@pytest.mark.parametrize("name", sorted(SUBJECTS))
def test_jitter_of_a_millisecond(name: str, tmp_path: Path) -> None:
    chooser = random.Random(20260101)
    run(
        SUBJECTS[name],
        FakeClock(),
        tmp_path,
        [chooser.choice([-1, 0, 1, 1, 2]) for _ in range(300)],
    )


@pytest.mark.parametrize("name", sorted(SUBJECTS))
def test_small_regressions_within_the_bound(name: str, tmp_path: Path) -> None:
    run(SUBJECTS[name], FakeClock(), tmp_path, [0, 5, -3_000, 1, -6_000, 9_000, 1])


def test_v7_stalled_for_a_million_calls_never_drifts() -> None:
    clock = FakeClock()  # never moves
    generator = V7Generator(clock=clock, random_bytes=seeded_bytes(5))
    previous = generator().int
    for _ in range(999_999):
        value = generator.next().int
        assert value > previous
        previous = value
    # Method 2 holds 2**25 or more values per millisecond: a million never leave it.
    assert previous >> 80 == clock.ms


def test_stalled_clock_advance_is_bounded_too() -> None:
    # One value per 100 ns tick at a 1 ms bound: 10,000 ticks, then ADVANCE refuses to run
    # further ahead of a stalled clock rather than drift without limit.
    clock = FakeClock()
    generator = V6Generator(
        GregorianConfig(
            overflow=CounterOverflow.ADVANCE,
            regression=KEEP,
            random_per_uuid=True,
            max_ahead_ms=1,
        ),
        **injected(clock),  # type: ignore[arg-type]
    )
    values = [generator() for _ in range(10_001)]
    assert values == sorted(set(values))
    with pytest.raises(CounterOverflowError, match="more than 10000 clock intervals"):
        generator()
    clock.advance(NS_PER_MS)
    assert generator() > values[-1]


@pytest.mark.parametrize(
    ("factory", "config"),
    [(V1Generator, GregorianConfig(max_wait_ms=2)), (DraftV8Generator, DraftV8Config())],
)
def test_stalled_clock_wait_raises_after_max_wait(factory: type, config: object) -> None:
    clock = FakeClock(stalled=True)
    generator = factory(config, **injected(clock))
    with pytest.raises(CounterOverflowError, match="did not advance"):
        for _ in range(5_000):
            generator()
    # Waited exactly its max_wait_ms of monotonic time, not a moment less.
    max_wait_ms = config.max_wait_ms  # type: ignore[attr-defined]
    assert max_wait_ms * NS_PER_MS <= clock.monotonic_ns <= (max_wait_ms + 1) * NS_PER_MS
