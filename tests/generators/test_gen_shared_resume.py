"""A shared v6 or v7 generator resumes above every value handed out through its state file.

RFC 4122 §4.2.1.3 and RFC 9562 §6.3: the stored timestamp is "set to a value larger than any
yet used in a UUID". A SharedV6Generator's or SharedV7Generator's first reservation (a
start, a restart after a crash, a forked child) opens a window above it, so its values sort
above every value any generator returned before it started, on a stalled or regressed clock
too; a stored window further ahead of the clock than max_future_ms (a crash while the clock
was ahead) restarts at the clock with a FutureStateWarning. Clocks are injected; a "killed"
generator is one that is never called
again (its state is only what it wrote to the file, exactly what a SIGKILL leaves);
test_gen_concurrency.py repeats the stalled case with real processes and SIGKILL.

References: RFC 9562 §5.6, §6.2, §6.3; RFC 4122 §4.2.1.1-§4.2.1.4.
"""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from gen_fakes import NS_PER_MS, START_NS, FakeClock, seeded_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit
from uuidkit.fields import fields
from uuidkit.generators import (
    FutureStateWarning,
    SharedConfig,
    SharedV1Generator,
    SharedV6Generator,
    SharedV7Generator,
    StateUnavailableWarning,
)
from uuidkit.generators.statefile import StateFile, StoredState
from uuidkit.timestamps import unix_ns_to_gregorian_ticks

TICKS_PER_MS = 10_000
QUIET = SharedConfig(durable=False)


Generate = Callable[[], uuidkit.UUID]


def shared(factory: type, path: Path, clock: FakeClock, config: SharedConfig = QUIET) -> Generate:
    # One seed for every generator: only the state file keeps their values apart.
    generator: Generate = factory(
        path,
        config,
        clock=clock,
        random_bytes=seeded_bytes(7),
        sleep_ns=clock.sleep,
        monotonic_ns=clock.monotonic,
    )
    return generator


def timestamp_order(value: uuidkit.UUID) -> tuple[int, int]:
    """The (timestamp, clock_seq) order v6 sorts in, and v1 does not (RFC 9562 §5.1, §5.6)."""
    return fields(value).timestamp, value.clock_seq  # type: ignore[union-attr]


def test_a_restart_on_a_stalled_clock_resumes_above_the_run_ahead(tmp_path: Path) -> None:
    path = tmp_path / "v6.state"
    clock = FakeClock()  # never moves: the first generator counts ticks ahead of it
    with pytest.warns(StateUnavailableWarning, match="missing"):
        first = shared(SharedV6Generator, path, clock)
    issued = [first() for _ in range(500)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a usable file: no fresh random start
        second = shared(SharedV6Generator, path, clock)
        later = [second() for _ in range(5)]
    assert min(later) > max(issued)
    # Continued, not reseeded: the stored node and the file's next clock sequence.
    assert {u.node for u in issued + later} == {issued[0].node}
    assert later[0].clock_seq == issued[0].clock_seq + 1


def test_a_restart_after_a_regression_resumes_above(tmp_path: Path) -> None:
    path = tmp_path / "v6.state"
    clock = FakeClock()
    with pytest.warns(StateUnavailableWarning, match="missing"):
        first = shared(SharedV6Generator, path, clock)
    issued = [first()]
    clock.advance(5 * NS_PER_MS)
    issued.append(first())  # at the clock, inside the window
    clock.advance(-3 * NS_PER_MS)  # back, within max_future_ms: KEEP
    issued.append(first())
    second = shared(SharedV6Generator, path, clock)
    assert second() > max(issued)


@pytest.mark.parametrize("factory", [SharedV6Generator, SharedV7Generator])
def test_a_restart_after_a_regression_inside_the_window_resumes_above(
    tmp_path: Path, factory: type
) -> None:
    # Another process stamped START + 5 ms, then the clock went back 3 ms: a restart at the
    # clock would sort below that value; the restart starts above the stored window end.
    path = tmp_path / "shared.state"
    clock = FakeClock()
    with pytest.warns(StateUnavailableWarning, match="missing"):
        first = shared(factory, path, clock)
    issued = [first()]
    clock.advance(5 * NS_PER_MS)
    issued.append(first())
    clock.advance(-3 * NS_PER_MS)
    later = shared(factory, path, clock)
    assert min(later() for _ in range(3)) > max(issued)


@pytest.mark.parametrize("factory", [SharedV6Generator, SharedV7Generator])
def test_a_restart_after_the_clock_ran_ahead_within_the_bound_resumes_above(
    tmp_path: Path, factory: type
) -> None:
    # The clock ran 9 s ahead (within max_future_ms = 10 s) and was corrected: the restart
    # starts above the stored window, at most window_ms + 9 s ahead of the true clock.
    path = tmp_path / "shared.state"
    clock = FakeClock(START_NS + 9_000 * NS_PER_MS)
    with pytest.warns(StateUnavailableWarning, match="missing"):
        first = shared(factory, path, clock)
    issued = [first() for _ in range(3)]
    clock.now_ns = START_NS
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # within the bound: continued, not refused
        later = shared(factory, path, clock)()
    assert later > max(issued)


@pytest.mark.parametrize("factory", [SharedV6Generator, SharedV7Generator])
def test_a_restart_after_the_clock_ran_a_year_ahead_starts_at_the_clock(
    tmp_path: Path, factory: type
) -> None:
    # A process ran (and crashed) while the clock was a year ahead; the clock is fixed and
    # the generator restarts. The start never fails: it restarts at the true clock with a
    # FutureStateWarning and counts it. What is not promised: the new values are below
    # those made while the clock was a year ahead (docs/generators.md).
    path = tmp_path / "shared.state"
    year_ns = 365 * 86_400_000 * NS_PER_MS
    clock = FakeClock(START_NS + year_ns)
    with pytest.warns(StateUnavailableWarning, match="missing"):
        first = shared(factory, path, clock)
    issued = [first() for _ in range(10)]
    clock.now_ns = START_NS
    later = shared(factory, path, clock)
    with pytest.warns(FutureStateWarning, match=r"beyond max_future_ms=10000: restarting"):
        value = later()
    assert later.future_restarts == 1  # type: ignore[attr-defined]
    assert units_of(factory, START_NS) <= units_of_value(factory, value)
    assert units_of_value(factory, value) - units_of(factory, START_NS) <= 10_000 * units_per_ms(
        factory
    )
    assert value < min(issued)  # the documented exception: below the year-ahead values
    values = [later() for _ in range(50)]
    assert values == sorted(values) and values[0] > value
    if factory is SharedV6Generator:
        # The clock sequence continues from the file's: the new values differ from those of
        # the year-ahead window when the clock reaches its ticks.
        issued_seqs = {fields(v).clock_seq for v in issued}  # type: ignore[union-attr]
        assert fields(value).clock_seq not in issued_seqs  # type: ignore[union-attr]


def units_of_value(factory: type, value: uuidkit.UUID) -> int:
    """The time unit of a value: its 60-bit timestamp (v6) or unix_ts_ms (v7)."""
    if factory is SharedV7Generator:
        return value.int >> 80
    return fields(value).timestamp  # type: ignore[union-attr]


def test_a_v1_restart_on_a_stalled_clock_is_above_in_timestamp_order(tmp_path: Path) -> None:
    # v1 never runs ahead (RFC 4122 §4.2.1.2): a restart at the clock's tick with the file's
    # next clock sequence is above every earlier value in (timestamp, clock_seq) order.
    path = tmp_path / "v1.state"
    clock = FakeClock(stalled=True)
    config = SharedConfig(durable=False, max_wait_ms=1)
    with pytest.warns(StateUnavailableWarning, match="missing"):
        first = shared(SharedV1Generator, path, clock, config)
    issued = [first()]
    with pytest.raises(uuidkit.CounterOverflowError):
        first()  # the tick is used: v1 stalls, never runs ahead
    second = shared(SharedV1Generator, path, clock, config)
    later = second()
    assert timestamp_order(later) > max(map(timestamp_order, issued))
    assert fields(later).timestamp == unix_ns_to_gregorian_ticks(clock.now_ns)  # type: ignore[union-attr]


def units_of(factory: type, now_ns: int) -> int:
    """The time unit a state file of ``factory`` counts in: 100 ns ticks (v6) or ms (v7)."""
    return (
        unix_ns_to_gregorian_ticks(now_ns) if factory is SharedV6Generator else now_ns // NS_PER_MS
    )


def units_per_ms(factory: type) -> int:
    return TICKS_PER_MS if factory is SharedV6Generator else 1


@pytest.mark.parametrize("factory", [SharedV6Generator, SharedV7Generator])
def test_restarts_in_a_loop_never_push_the_file_ahead_of_the_clock(
    tmp_path: Path, factory: type
) -> None:
    # Each restart opens its window above the stored one; were that window window_ms long,
    # restarts every 100 ms with 1 s windows would move the file 0.9 s further ahead each
    # time, past max_future_ms (10 s) after a dozen, where it is refused as future-dated.
    path = tmp_path / "shared.state"
    clock = FakeClock()
    config = SharedConfig(window_ms=1_000, durable=False)
    with pytest.warns(StateUnavailableWarning, match="missing"):
        values = [shared(factory, path, clock, config)()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # never refused as future-dated
        for _ in range(50):
            clock.advance(100 * NS_PER_MS)
            generator = shared(factory, path, clock, config)
            values += [generator() for _ in range(3)]
            ahead = StateFile(path).load().window_end - units_of(factory, clock.now_ns)
            assert ahead < config.window_ms * units_per_ms(factory)
    assert values == sorted(set(values))


@pytest.mark.parametrize("factory", [SharedV6Generator, SharedV7Generator])
def test_many_starts_at_once_never_push_the_file_ahead_of_the_clock(
    tmp_path: Path, factory: type
) -> None:
    # Sixteen processes starting within microseconds (a pool of workers): each resumes above
    # the file, a tick after the one before. Were the windows they open next window_ms long,
    # each would move the file window_ms further ahead: 16 s, beyond max_future_ms (10 s).
    path = tmp_path / "shared.state"
    clock = FakeClock()
    config = SharedConfig(window_ms=1_000, durable=False)
    with pytest.warns(StateUnavailableWarning, match="missing"):
        running = [shared(factory, path, clock, config)]
    values = [running[0]()]
    reservations = 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # never refused as future-dated
        for _ in range(15):
            clock.advance(1_000)
            running.append(shared(factory, path, clock, config))
            for generate in running:  # more values than a resumed window holds
                values += [generate() for _ in range(20)]
                reservations += 20  # at most one reservation per value
            # Every window ends window_ms after its opener's clock, or is one tick long.
            ahead = StateFile(path).load().window_end - units_of(factory, clock.now_ns)
            assert ahead < config.window_ms * units_per_ms(factory) + reservations
    assert len(set(values)) == len(values)


def test_after_the_clock_goes_back_keep_counts_on_in_full_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window bound of the test above is taken from the highest clock reading: after a
    # 3 s step back (within max_future_ms) KEEP counts on from the last value in windows of
    # window_ms, not in one-tick windows (a write for every value).
    clock = FakeClock()
    with pytest.warns(StateUnavailableWarning, match="missing"):
        generator = SharedV6Generator(tmp_path / "v6.state", QUIET, clock=clock)
    generator()
    clock.advance(1_000 * NS_PER_MS - 100)  # the last tick of the first window
    generator()
    clock.advance(-3_000 * NS_PER_MS)
    writes: list[StoredState] = []
    write = generator.file.write

    def counted(state: StoredState) -> None:
        writes.append(state)
        write(state)

    monkeypatch.setattr(generator.file, "write", counted)
    values = [generator() for _ in range(1_000)]  # one tick each, ahead of the clock
    assert values == sorted(values)
    # 1,000 ticks need one window of window_ms (10,000,000 ticks), so one write at most.
    assert len(writes) <= 1


#: A v6 state file as uuidkit wrote it before this rule (a 1 s window at START_NS).
OLD_V6_FILE = (
    '{"checksum": "3bdd79ac", "format": "uuidkit-generator-state", "kind": "v6", '
    '"next_range": 4242, "node": 90143747411617, "version": 1, "window_end": '
    '139865184009999999, "window_start": 139865184000000000, "written_ns": '
    "1767225600000000000}\n"
)


def test_a_file_written_before_this_rule_is_resumed_above(tmp_path: Path) -> None:
    # The format did not change: a file an earlier uuidkit wrote (a window, the next clock
    # sequence, the node) is read as it was, and its window end bounds what it handed out.
    path = tmp_path / "old.state"
    path.write_text(OLD_V6_FILE)
    path.chmod(0o600)
    old = StateFile(path).load()
    assert old.window_start == unix_ns_to_gregorian_ticks(START_NS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = shared(SharedV6Generator, path, FakeClock())()
    assert fields(value).timestamp == old.window_end + 1  # type: ignore[union-attr]
    assert (value.clock_seq, value.node) == (4242, old.node)


# --- the rule as a property over any interleaving of starts, values, kills and clock moves --


@dataclass
class Running:
    generate: Generate
    #: The highest value (in timestamp order) returned anywhere before this one started.
    floor: tuple[int, int]
    values: list[tuple[int, int]] = field(default_factory=list)


STEP = st.one_of(
    st.tuples(st.just("start"), st.just(0)),
    st.tuples(st.just("make"), st.integers(0, 7)),
    st.tuples(st.just("kill"), st.integers(0, 7)),
    # Clock moves in 100 ns ticks: stalls, small steps, steps back within max_future_ms.
    st.tuples(st.just("clock"), st.sampled_from([0, 1, 7, 10_000, 60_000, -1, -9_000, -70_000])),
)


def replay(factory: type, steps: list[tuple[str, int]], directory: Path) -> None:
    clock = FakeClock()
    config = SharedConfig(window_ms=5, durable=False)
    path = directory / "gen.state"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StateUnavailableWarning)  # only "missing", at first
        running = [Running(shared(factory, path, clock, config), (-1, -1))]
        first = running[0].generate()  # the file exists from here on
    everything = {first.int}
    highest = timestamp_order(first)
    running[0].values.append(highest)
    for action, argument in steps:
        if action == "start":
            running.append(Running(shared(factory, path, clock, config), highest))
        elif action == "kill" and len(running) > 1:
            del running[argument % len(running)]
        elif action == "clock":
            clock.advance(argument * 100)
        elif action == "make":
            subject = running[argument % len(running)]
            for _ in range(1 + argument * 3):
                now_tick = unix_ns_to_gregorian_ticks(clock.now_ns)
                value = subject.generate()
                key = timestamp_order(value)
                assert value.int not in everything, "a value was handed out twice"  # (1)
                assert not subject.values or key > subject.values[-1]  # (2)
                assert key[0] >= now_tick  # (3): never stamped before the clock reading
                assert key > subject.floor, "below a value returned before this one started"
                if factory is SharedV1Generator:  # never ahead (RFC 4122 §4.2.1.2)
                    assert key[0] <= unix_ns_to_gregorian_ticks(clock.now_ns)
                everything.add(value.int)
                subject.values.append(key)
                highest = max(highest, key)


@settings(max_examples=120, deadline=None)
@given(steps=st.lists(STEP, min_size=1, max_size=30))
def test_property_v6_every_start_resumes_above_all_values_returned(
    steps: list[tuple[str, int]],
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", StateUnavailableWarning)  # never a fresh random start
        with tempfile.TemporaryDirectory() as directory:
            replay(SharedV6Generator, steps, Path(directory))


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(STEP.filter(lambda step: step[1] >= 0), min_size=1, max_size=30))
def test_property_v1_on_a_clock_that_never_goes_back(steps: list[tuple[str, int]]) -> None:
    # v1 takes a new clock sequence at the clock after a regression (RFC 4122 §4.2.1.1):
    # timestamp order across a regression is not promised, so the clock here only stalls or
    # moves forward, and v1 waits for it rather than run ahead (RFC 4122 §4.2.1.2).
    with warnings.catch_warnings():
        warnings.simplefilter("error", StateUnavailableWarning)
        with tempfile.TemporaryDirectory() as directory:
            replay(SharedV1Generator, steps, Path(directory))
