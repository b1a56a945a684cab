"""State files: format, atomic replacement, and every way a file can be unavailable.

References: RFC 9562 §6.3; RFC 4122 §4.2.1.1-§4.2.1.3.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pytest
from gen_fakes import NS_PER_MS, START_NS, FakeClock, constant_bytes, seeded_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit import CounterOverflowError, InvalidField, StateFileError
from uuidkit.fields import fields
from uuidkit.generators import (
    FutureStateWarning,
    SharedConfig,
    SharedV1Generator,
    SharedV6Generator,
    SharedV7Generator,
    StateUnavailableWarning,
)
from uuidkit.generators._statetext import _checksum
from uuidkit.generators.statefile import StateFile, StoredState
from uuidkit.timestamps import unix_ns_to_gregorian_ticks

START_MS = START_NS // NS_PER_MS
HOUR_NS = 3_600_000_000_000
VALID = StoredState("v7", START_MS, START_MS + 999, 1 << 30, None, START_NS)


def v7_generator(path: Path, clock: FakeClock, seed: int = 1) -> SharedV7Generator:
    config = SharedConfig(durable=False)
    return SharedV7Generator(path, config, clock=clock, random_bytes=seeded_bytes(seed))


def test_round_trip_and_checksum() -> None:
    text = VALID.to_text()
    assert StoredState.from_text(text) == VALID
    body = json.loads(text)
    assert body["format"] == "uuidkit-generator-state" and body["version"] == 1
    body["next_range"] += 1
    with pytest.raises(StateFileError, match="checksum: expected"):
        StoredState.from_text(json.dumps(body))


def corruptions() -> dict[str, bytes]:
    text = VALID.to_text()
    body = json.loads(text)
    wrong_version = {**body, "version": 2}
    wrong_version.pop("checksum")
    wrong_version["checksum"] = _checksum(dict(wrong_version))
    return {
        "empty": b"",
        "truncated": text[: len(text) // 2].encode(),
        "garbage": b"\x00\xff not json",
        "bit flip": text.replace('"v7"', '"v6"').encode(),
        "not an object": b"[1, 2, 3]",
        "wrong version": json.dumps(wrong_version).encode(),
        "huge": b" " * 5000,
        "deeply nested": b"[" * 4000,
    }


@pytest.mark.parametrize("name", sorted(corruptions()))
def test_corrupted_file_is_state_unavailable_never_a_crash(tmp_path: Path, name: str) -> None:
    path = tmp_path / "gen.state"
    path.write_bytes(corruptions()[name])
    clock = FakeClock()
    with pytest.warns(StateUnavailableWarning, match="corrupted"):
        generator = v7_generator(path, clock)
    with pytest.warns(StateUnavailableWarning, match="corrupted"):
        first = generator().int
    assert first >> 80 == START_MS  # a fresh window at the clock
    # The file is rewritten with a valid reservation.
    stored = StoredState.from_text(path.read_text())
    assert stored.window_start == START_MS and stored.window_end == START_MS + 999


def test_missing_file_warns_then_is_created(tmp_path: Path) -> None:
    path = tmp_path / "new.state"
    with pytest.warns(StateUnavailableWarning, match="missing"):
        generator = v7_generator(path, FakeClock())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        generator()
    assert StoredState.from_text(path.read_text()).kind == "v7"
    assert Path(str(path) + ".lock").exists()


@pytest.mark.parametrize("ahead_ms", [50_000, 2 * HOUR_NS // NS_PER_MS])
def test_a_restart_after_a_future_dated_window_starts_at_the_clock(
    tmp_path: Path, ahead_ms: int
) -> None:
    # A window ending 50 s (or 2 h) after the clock is beyond max_future_ms (10 s): values up
    # to its end may have been issued by a clock that far ahead. Starting above them would
    # stamp every value beyond the bound; refusing would stop every start until the clock
    # catches up. The start goes on at the clock, with a FutureStateWarning and a count.
    path = tmp_path / "future.state"
    future_ms = START_MS + ahead_ms
    path.write_text(StoredState("v7", future_ms, future_ms + 999, 5, None, START_NS).to_text())
    clock = FakeClock()
    generator = v7_generator(path, clock)
    with pytest.warns(FutureStateWarning, match=f"window ends {ahead_ms + 999} ms after the clock"):
        value = generator().int
    assert value >> 80 == START_MS
    assert generator.future_restarts == 1
    stored = StoredState.from_text(path.read_text())
    assert stored.window_start == START_MS and stored.window_end < future_ms
    assert generator().int > value  # no further warning: the generator runs on


def test_a_running_generator_passes_over_a_future_dated_window_loudly(tmp_path: Path) -> None:
    # Once running, a generator is above its own restart: a window another process wrote
    # beyond max_future_ms is refused with a warning, and a fresh window opens at the clock.
    path = tmp_path / "future.state"
    clock = FakeClock()
    with pytest.warns(StateUnavailableWarning, match="missing"):
        generator = v7_generator(path, clock)
    first = generator().int
    clock.advance(1_000 * NS_PER_MS)  # past the generator's window: it reserves again
    future_ms = clock.ms + 50_000
    path.write_text(StoredState("v7", future_ms, future_ms + 999, 5, None, START_NS).to_text())
    with pytest.warns(FutureStateWarning, match="window ends 50999 ms after the clock"):
        value = generator().int
    assert value > first and value >> 80 == clock.ms
    assert StoredState.from_text(path.read_text()).window_start == clock.ms


def test_restart_never_goes_below_values_already_issued(tmp_path: Path) -> None:
    # The clock steps back 8 s (within the bound): KEEP stamps values ahead of it and the
    # file records that window. A restarted process continues above them, without warning.
    path = tmp_path / "restart.state"
    clock = FakeClock()
    with pytest.warns(StateUnavailableWarning, match="missing"):
        first = v7_generator(path, clock)
    issued = [first().int]
    clock.advance(-8_000 * NS_PER_MS)
    issued += [first().int for _ in range(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = v7_generator(path, clock, seed=1)
        later = [second().int for _ in range(3)]
    assert min(later) > max(issued)


@pytest.mark.parametrize("factory", [SharedV1Generator, SharedV6Generator])
def test_shared_v1_stalls_rather_than_run_ahead(tmp_path: Path, factory: type) -> None:
    # RFC 4122 §4.2.1.2: v1 stalls (or errs) when the clock has not moved; v6 may run ahead.
    clock = FakeClock()
    with pytest.warns(StateUnavailableWarning):
        generator = factory(
            tmp_path / "gen.state",
            SharedConfig(durable=False, max_wait_ms=2),
            clock=clock,
            random_bytes=seeded_bytes(8),
            sleep_ns=clock.sleep,
            monotonic_ns=clock.monotonic,
        )
    stamps = []
    for _ in range(5):
        value = generator()
        stamp = fields(value).timestamp  # type: ignore[union-attr]
        stamps.append((stamp, unix_ns_to_gregorian_ticks(clock.now_ns)))
    assert len({stamp for stamp, _ in stamps}) == 5
    if factory is SharedV1Generator:
        assert all(stamp == clock_tick for stamp, clock_tick in stamps) and clock.sleeps > 0
        clock.stalled = True
        with pytest.raises(CounterOverflowError, match="did not advance within 2000000 ns"):
            generator()
    else:
        assert stamps[-1][0] > stamps[-1][1] and clock.sleeps == 0  # ran ahead, no sleep


def test_unwritable_location_continues_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    path = blocker / "gen.state"
    clock = FakeClock()
    with pytest.warns(StateUnavailableWarning, match="unreadable|missing"):
        generator = v7_generator(path, clock)
    with pytest.warns(StateUnavailableWarning, match="unwritable"):
        values = [generator().int]
    for _ in range(5):
        clock.advance(700 * NS_PER_MS)
        values += [generator().int for _ in range(3)]
    assert values == sorted(set(values))


def test_wrong_kind_is_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "kind.state"
    path.write_text(VALID.to_text())
    generator = SharedV6Generator(
        path, SharedConfig(durable=False), clock=FakeClock(), random_bytes=seeded_bytes(2)
    )
    with pytest.warns(StateUnavailableWarning, match="kind 'v7'"):
        assert generator().version == 6


def test_restart_inside_the_window_resumes_above_it(tmp_path: Path) -> None:
    # The window [START_MS, START_MS + window_ms - 1] may hold values at any of its
    # milliseconds (a process whose clock later went back): a restart starts above its end.
    path = tmp_path / "restart.state"
    clock = FakeClock()
    with pytest.warns(StateUnavailableWarning):
        first = v7_generator(path, clock, seed=1)
    before = [first().int for _ in range(10)]
    second = v7_generator(path, clock, seed=1)  # same seed: only the file prevents reuse
    after = second().int
    assert after > before[-1] and after >> 80 == START_MS + SharedConfig().window_ms


def test_v6_restart_keeps_node_and_steps_clock_sequence(tmp_path: Path) -> None:
    path = tmp_path / "v6.state"
    clock = FakeClock()
    config = SharedConfig(durable=False)
    with pytest.warns(StateUnavailableWarning):
        first = SharedV6Generator(path, config, clock=clock, random_bytes=seeded_bytes(4))
    a = first()
    clock.advance(1000)
    b = SharedV6Generator(path, config, clock=clock, random_bytes=seeded_bytes(5))()
    assert b.node == a.node  # the stored node, not a new random one
    # RFC 4122 §4.2.1.3: a restart within the window needs no random clock sequence.
    assert b.clock_seq == a.clock_seq + 1
    assert b > a


def test_clock_regression_and_window_change(tmp_path: Path) -> None:
    path = tmp_path / "clock.state"
    clock = FakeClock()
    with pytest.warns(StateUnavailableWarning):
        generator = v7_generator(path, clock)
    values = [generator().int]
    clock.advance(-5_000 * NS_PER_MS)  # within max_future_ms (10 s): KEEP
    values.append(generator().int)
    assert values[1] > values[0] and values[1] >> 80 == START_MS
    clock.advance(5_000 * NS_PER_MS - HOUR_NS)  # an hour back: beyond it, restart at the clock
    values.append(generator().int)
    assert values[2] >> 80 == clock.ms and values[2] < values[1]
    assert StoredState.from_text(path.read_text()).window_start == clock.ms
    values.append(generator().int)
    assert values[3] > values[2]
    clock.advance(2 * HOUR_NS)
    values.append(generator().int)
    assert values[4] >> 80 == clock.ms
    assert StoredState.from_text(path.read_text()).window_start == clock.ms


def test_counter_block_exhaustion_reserves_the_next_range(tmp_path: Path) -> None:
    path = tmp_path / "block.state"
    config = SharedConfig(counter_block=4, durable=False)
    with pytest.warns(StateUnavailableWarning):
        generator = SharedV7Generator(path, config, clock=FakeClock(), random_bytes=seeded_bytes(9))
    values = [generator().int for _ in range(20)]
    assert values == sorted(set(values))
    assert {v >> 80 for v in values} == {START_MS}


def test_remove(tmp_path: Path) -> None:
    state = StateFile(tmp_path / "x.state")
    assert not state.remove()
    state.write(VALID)
    assert StateFile(tmp_path / "x.state").read() == VALID
    assert state.remove()


states = st.builds(
    StoredState,
    kind=st.sampled_from(["v1", "v6", "v7"]),
    window_start=st.integers(0, 1 << 60),
    window_end=st.just(1 << 61),
    next_range=st.integers(0, 1 << 42),
    node=st.one_of(st.none(), st.integers(0, (1 << 48) - 1)),
    written_ns=st.integers(0, 1 << 63),
)


@settings(max_examples=200, deadline=None)
@given(state=states)
def test_property_round_trip(state: StoredState) -> None:
    assert StoredState.from_text(state.to_text()) == state


@settings(max_examples=200, deadline=None)
@given(state=states, data=st.data())
def test_property_any_changed_byte_is_detected_or_harmless(
    state: StoredState, data: st.DataObject
) -> None:
    raw = bytearray(state.to_text().encode())
    position = data.draw(st.integers(0, len(raw) - 1))
    replacement = data.draw(st.integers(0, 255).filter(lambda b: b != raw[position]))
    raw[position] = replacement
    try:
        decoded = StoredState.from_text(raw.decode("utf-8"))
    except (StateFileError, UnicodeDecodeError):
        return
    assert decoded == state  # only insignificant bytes (JSON whitespace) may change


def test_shared_v1_restart_keeps_node(tmp_path: Path) -> None:
    path = tmp_path / "v1.state"
    clock = FakeClock()
    config = SharedConfig(durable=False)
    with pytest.warns(StateUnavailableWarning):
        first = SharedV1Generator(path, config, clock=clock, random_bytes=seeded_bytes(6))()
    second = SharedV1Generator(path, config, clock=clock, random_bytes=seeded_bytes(7))()
    assert (first.version, second.version) == (1, 1)
    assert first.node == second.node and second.clock_seq == first.clock_seq + 1
    assert StoredState.from_text(path.read_text()).kind == "v1"


def test_file_recreated_by_another_process_never_breaks_monotonicity(tmp_path: Path) -> None:
    path = tmp_path / "reset.state"
    clock = FakeClock()
    config = SharedConfig(counter_block=4, durable=False)
    with pytest.warns(StateUnavailableWarning):
        high = SharedV7Generator(path, config, clock=clock, random_bytes=constant_bytes(0xFF))
    before = [high().int for _ in range(4)]  # the whole range, at the top of the counter space
    StateFile(path).remove()  # `uuidkit state reset` while it runs
    with pytest.warns(StateUnavailableWarning):
        low = SharedV7Generator(path, config, clock=clock, random_bytes=constant_bytes(0x00))
    low()  # re-creates the window over this millisecond, starting at counter 0
    after = [high().int for _ in range(8)]
    values = before + after
    assert values == sorted(set(values))
    assert after[0] >> 80 == START_MS + 1


def test_short_writes_still_write_the_whole_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # os.write may write fewer bytes than asked; the renamed file must never be torn.
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data[:7])))
    state_file = StateFile(tmp_path / "gen.state")
    state_file.write(VALID)
    assert state_file.load() == VALID


def test_child_after_fork_with_the_clock_behind_its_last_value(tmp_path: Path) -> None:
    # RFC 9562 §6.9 (fork) with §6.2 KEEP: a child keeps the parent's last millisecond, and
    # its first reservation must not restart below it at a clock that reads earlier.
    clock = FakeClock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StateUnavailableWarning)
        generator = v7_generator(tmp_path / "gen.state", clock)
    values = [generator().int]
    clock.advance(5 * NS_PER_MS)
    values.append(generator().int)
    clock.advance(-5 * NS_PER_MS)  # the clock goes back: KEEP stays at START_MS + 5
    values.append(generator().int)
    generator.reset_after_fork()  # what a forked child runs
    values += [generator().int for _ in range(3)]
    assert values == sorted(set(values))
    # A child is a new process on the file: it resumes above the window, never below it.
    assert values[-1] >> 80 == START_MS + SharedConfig().window_ms


@pytest.mark.parametrize("count", ["3", -1, 2.0])
def test_generate_rejects_a_bad_count_as_invalid_field(tmp_path: Path, count: object) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StateUnavailableWarning)
        generator = v7_generator(tmp_path / "gen.state", FakeClock())
    with pytest.raises(InvalidField, match="count: expected an int >= 0"):
        generator.generate(count)  # type: ignore[arg-type]
