"""The state directory's snapshot and journal: crash-safe at every step, durable on return.

Faults are injected through the store's :class:`~uuidkit._safefile.FileSystem`: a crash
(the process dies: no later call reaches the disk) before any one call of an append or a
compaction, a write cut short, a failing journal, and a power loss that keeps only what was
fsynced. Each test names the mechanism whose removal makes it fail.

References: UIAP §4.4 (claims reclaimed after a restart need stored state).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit._safefile import FileSystem
from uuidkit.daemon import state as state_module
from uuidkit.daemon.journal import Change, encode_changes, encode_header, parse_journal
from uuidkit.daemon.state import StateError, StateStore, read_state

DEVICE = "00000000000000a1"


def claim(name: str, version: int = 0) -> dict[str, Any]:
    """A saved claim (the service's saved form carries more keys; the store keeps any)."""
    return {"id": name, "owner_uid": 1000, "created": 1.0, "expires": None, "v": version}


def model(claims: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {entry["id"]: entry for entry in claims}


def saved(directory: Path) -> dict[str, dict[str, Any]]:
    return model(read_state(str(directory))["claims"])


# ---------------------------------------------------------------------- the record format

names = st.text("abcdef", min_size=1, max_size=4)
changes_strategy = st.lists(
    st.tuples(names, st.one_of(st.none(), st.integers(0, 9))), min_size=1, max_size=8
)


def as_changes(drawn: list[tuple[str, int | None]]) -> list[Change]:
    return [(name, None if v is None else claim(name, v)) for name, v in drawn]


@settings(max_examples=60, deadline=None)
@given(changes_strategy, st.integers(0, 2**40))
def test_a_journal_cut_anywhere_in_its_last_record_yields_the_records_before_it(
    drawn: list[tuple[str, int | None]], generation: int
) -> None:
    """Truncation at every octet offset of the last record: the changes before it, and
    the cut record's octets counted as discarded; whole, every change."""
    changes = as_changes(drawn)
    head = encode_header(generation) + encode_changes(changes[:-1])
    last = encode_changes(changes[-1:])
    whole = parse_journal(head + last)
    assert (whole.generation, whole.changes, whole.discarded_octets) == (generation, changes, 0)
    for cut in range(len(last)):
        torn = parse_journal(head + last[:cut])
        assert torn.generation == generation
        assert torn.changes == changes[:-1]
        assert torn.discarded_octets == cut


@settings(max_examples=60, deadline=None)
@given(changes_strategy, st.data())
def test_a_damaged_record_ends_the_journal_there(
    drawn: list[tuple[str, int | None]], data: st.DataObject
) -> None:
    """A flipped bit anywhere in a record (its length, its CRC or its payload) is caught:
    the changes before it are kept, nothing from it on is applied (CRC-32 catches every
    single-bit error)."""
    changes = as_changes(drawn)
    index = data.draw(st.integers(0, len(changes) - 1))
    head = encode_header(7) + encode_changes(changes[:index])
    record = bytearray(encode_changes(changes[index : index + 1]))
    bit = data.draw(st.integers(0, 8 * len(record) - 1))
    record[bit // 8] ^= 1 << (bit % 8)
    contents = parse_journal(head + bytes(record) + encode_changes(changes[index + 1 :]))
    assert contents.changes == changes[:index]
    assert contents.discarded_octets > 0


def test_a_journal_without_a_whole_header_has_no_generation() -> None:
    header = encode_header(3)
    for cut in range(len(header)):
        assert parse_journal(header[:cut]).generation is None
    not_a_header = encode_changes([("a", None)])
    assert parse_journal(not_a_header).generation is None


# ---------------------------------------------------------------------- the store


@settings(max_examples=30, deadline=None)
@given(st.lists(changes_strategy, min_size=1, max_size=12), st.integers(0, 600), st.integers(0, 3))
def test_appends_and_compactions_keep_the_state_asked_for(
    tmp_path_factory: pytest.TempPathFactory,
    batches: list[list[tuple[str, int | None]]],
    floor: int,
    ratio: int,
) -> None:
    """Any sequence of batches, with compactions at any journal size: what is read back
    (by a new store, as after a restart) is the state the batches make."""
    directory = tmp_path_factory.mktemp("state")
    store = StateStore(str(directory))
    store.save({"device_id": DEVICE, "claims": []})
    expected: dict[str, dict[str, Any]] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state_module, "COMPACT_FLOOR_OCTETS", floor)
        patch.setattr(state_module, "COMPACT_RATIO", ratio)
        for drawn in batches:
            changes = as_changes(drawn)
            store.append(changes)
            for name, entry in changes:
                if entry is None:
                    expected.pop(name, None)
                else:
                    expected[name] = dict(entry)
            assert saved(directory) == expected
    assert read_state(str(directory))["device_id"] == DEVICE
    store.close()


def test_a_change_costs_one_record_not_a_snapshot(tmp_path: Path) -> None:
    """With 200 claims held, a change appends one record (its octets, not the snapshot's)
    and replaces no file."""
    store = StateStore(str(tmp_path))
    store.save({"device_id": DEVICE, "claims": [claim(f"c{n}") for n in range(200)]})
    snapshot_octets = (tmp_path / "state.json").stat().st_size
    journal_before = (tmp_path / "state.journal").stat().st_size
    replaced: list[str] = []

    class Recording(FileSystem):
        def replace(self, source: str, target: str) -> None:
            replaced.append(target)
            super().replace(source, target)

    store.fs = Recording()
    store.append([("new", claim("new"))])
    grown = (tmp_path / "state.journal").stat().st_size - journal_before
    assert replaced == []
    assert grown == len(encode_changes([("new", claim("new"))])) < snapshot_octets / 50
    store.close()


class PowerLoss(FileSystem):
    """Keeps, per file (inode), how much of it an fsync made durable; :meth:`lose_power`
    cuts every file this process wrote back to that length."""

    def __init__(self) -> None:
        self.synced: dict[tuple[int, int], int] = {}

    def _inode(self, descriptor: int) -> tuple[int, int]:
        info = os.fstat(descriptor)
        return info.st_dev, info.st_ino

    def write(self, descriptor: int, data: memoryview) -> int:
        self.synced.setdefault(self._inode(descriptor), 0)
        return super().write(descriptor, data)

    def fsync(self, descriptor: int) -> None:
        super().fsync(descriptor)
        self.synced[self._inode(descriptor)] = os.fstat(descriptor).st_size

    def lose_power(self, directory: Path) -> None:
        for path in directory.iterdir():
            info = path.lstat()
            kept = self.synced.get((info.st_dev, info.st_ino))
            if kept is not None and info.st_size > kept:
                os.truncate(path, kept)


def test_every_change_that_returned_survives_a_power_loss(tmp_path: Path) -> None:
    """Appends and compactions, then a power loss that drops whatever was not fsynced:
    every change whose write returned is read back. Removing the journal's fsync in
    StateStore.append makes this test fail (the last appends are lost)."""
    disk = PowerLoss()
    store = StateStore(str(tmp_path), disk)
    store.save({"device_id": DEVICE, "claims": [claim("a")]})
    expected = {"a": claim("a")}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state_module, "COMPACT_FLOOR_OCTETS", 400)
        patch.setattr(state_module, "COMPACT_RATIO", 1)
        for number in range(12):
            name = f"c{number % 5}"
            entry = None if number % 4 == 3 else claim(name, number)
            store.append([(name, entry)])
            if entry is None:
                expected.pop(name, None)
            else:
                expected[name] = entry
    assert store.compactions >= 2  # the power loss meets both kinds of write
    disk.lose_power(tmp_path)
    assert saved(tmp_path) == expected


class Crash(BaseException):
    """The process dies (a BaseException: no ``except OSError`` of the code catches it)."""


class Dying(FileSystem):
    """Dies before its ``fatal``-th call (counting from 1; 0: never); after that, every
    call dies too (a dead process reaches the disk no more). ``torn``: the fatal call, if
    it is a write, writes half its data first. Counts the calls in ``calls``."""

    def __init__(self, fatal: int = 0, *, torn: bool = False) -> None:
        self.fatal, self.torn, self.calls, self.dead = fatal, torn, 0, False

    def _step(self) -> None:
        self.calls += 1
        if self.dead or self.calls == self.fatal:
            self.dead = True
            raise Crash(f"killed at call {self.calls}")

    def __getattribute__(self, name: str) -> Any:
        attribute = super().__getattribute__(name)
        if name.startswith("_") or name in ("fatal", "torn", "calls", "dead", "token"):
            return attribute

        def call(*args: Any) -> Any:
            try:
                self._step()
            except Crash:
                if name == "write" and self.torn and self.calls == self.fatal:
                    descriptor, data = args
                    os.write(descriptor, data[: len(data) // 2])
                raise
            return attribute(*args)

        return call


def _prepared(directory: Path) -> StateStore:
    """A state of three claims: two in the snapshot, one in the journal; loaded."""
    store = StateStore(str(directory))
    store.save({"device_id": DEVICE, "claims": [claim("a"), claim("b")]})
    store.append([("c", claim("c"))])
    store.close()
    store = StateStore(str(directory))
    store.load()
    store.append([])  # the first write after a load: a compaction (an empty change)
    store.append([("d", claim("d"))])  # an append, to a journal of this generation
    return store


BEFORE = {name: claim(name) for name in "abcd"}
OPERATIONS: dict[str, tuple[Change, Callable[[], None] | None]] = {
    "append": (("e", claim("e")), None),
    "compaction": (("a", None), lambda: None),
}


@pytest.mark.parametrize("torn", [False, True], ids=["killed", "torn-write"])
@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_a_crash_before_any_call_leaves_the_old_state_or_the_new(
    tmp_path: Path, operation: str, torn: bool
) -> None:
    """An append and a compaction, killed before each of their file-system calls in turn
    (and with that call's write cut in half): a restart reads the state before the change
    or the state after it, never anything else, and what it writes next is read back too
    (nothing appended after a torn record is lost)."""
    change, compact = OPERATIONS[operation]
    after = {**BEFORE}
    if change[1] is None:
        after.pop(change[0])
    else:
        after[change[0]] = dict(change[1])

    def run(directory: Path, disk: Dying) -> None:
        store = _prepared(directory)
        store.fs = disk
        with pytest.MonkeyPatch.context() as patch:
            if compact is not None:  # every write a compaction
                patch.setattr(state_module, "COMPACT_FLOOR_OCTETS", 0)
                patch.setattr(state_module, "COMPACT_RATIO", 0)
            store.append([change])

    counting = Dying()
    run(tmp_path / "count", counting)
    assert counting.calls >= 3  # an append: lstat, write, fsync; a compaction: many more
    outcomes = set()
    for fatal in range(1, counting.calls + 1):
        directory = tmp_path / f"crash{fatal}"
        with pytest.raises(Crash):
            run(directory, Dying(fatal, torn=torn))
        restarted = StateStore(str(directory))
        loaded = model(restarted.load()["claims"])
        assert loaded in (BEFORE, after), fatal
        outcomes.add("after" if loaded == after else "before")
        restarted.append([("z", claim("z"))])
        restarted.close()
        assert saved(directory) == {**loaded, "z": claim("z")}, fatal
    assert outcomes == {"before", "after"}


def test_a_write_that_failed_is_never_followed_by_an_append(tmp_path: Path) -> None:
    """A journal write that fails half way (a full disk) leaves a torn record; the next
    change is not appended after it (a reader would stop at the torn record and lose it)
    but written by a compaction. Removing the ``_close_journal()`` in StateStore.append's
    error path makes this test fail."""
    store = StateStore(str(tmp_path))
    store.save({"device_id": DEVICE, "claims": [claim("a")]})

    class HalfThenFull(FileSystem):
        def write(self, descriptor: int, data: memoryview) -> int:
            os.write(descriptor, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")

    store.fs = HalfThenFull()
    with pytest.raises(OSError):
        store.append([("b", claim("b"))])
    store.fs = FileSystem()
    store.append([("c", claim("c"))])
    assert saved(tmp_path) == {name: claim(name) for name in "abc"}
    store.close()


def test_a_stale_journal_is_never_replayed_over_a_newer_snapshot(tmp_path: Path) -> None:
    """The journal cannot be started after a compaction (its file cannot be replaced):
    the snapshot of generation G+1 holds the state, the journal of generation G stays on
    disk. A release made durable by that snapshot is not undone by the old journal's
    ``put`` when read back. Removing the generation check in StateStore._journal_changes
    makes this test fail."""
    store = StateStore(str(tmp_path))
    store.save({"device_id": DEVICE, "claims": []})
    store.append([("x", claim("x"))])

    class NoNewJournal(FileSystem):
        def replace(self, source: str, target: str) -> None:
            if target.endswith("state.journal"):
                raise OSError(errno.EIO, "Input/output error")
            super().replace(source, target)

    store.fs = NoNewJournal()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(state_module, "COMPACT_FLOOR_OCTETS", 0)
        patch.setattr(state_module, "COMPACT_RATIO", 0)
        store.append([("x", None)])  # durable: the new snapshot holds it
    assert json.loads((tmp_path / "state.json").read_text())["generation"] == 2
    assert parse_journal((tmp_path / "state.journal").read_bytes()).generation == 1
    assert saved(tmp_path) == {}
    store.close()


def test_a_version_1_state_file_is_read_and_upgraded(tmp_path: Path) -> None:
    """A state file of the format before the journal (version 1) is read as it is; the
    first write makes it a version 2 snapshot with its journal."""
    old = {"version": 1, "device_id": DEVICE, "claims": [claim("a"), claim("b")]}
    (tmp_path / "state.json").write_text(json.dumps(old))
    store = StateStore(str(tmp_path))
    loaded = store.load()
    assert (loaded["device_id"], loaded["claims"]) == (DEVICE, old["claims"])
    store.append([("c", claim("c"))])
    snapshot = json.loads((tmp_path / "state.json").read_text())
    assert (snapshot["version"], snapshot["generation"]) == (2, 1)
    assert saved(tmp_path) == {name: claim(name) for name in "abc"}
    store.close()


@pytest.mark.parametrize(
    ("journal", "snapshot", "words"),
    [
        (encode_header(5), {"version": 2, "generation": 4, "claims": []}, "generation 4"),
        (encode_header(1), None, "there is no"),
        (b"\x00\x00", {"version": 2, "generation": 1, "claims": []}, "no whole journal header"),
    ],
    ids=["newer-than-snapshot", "without-snapshot", "no-header"],
)
def test_a_journal_that_does_not_fit_its_snapshot_is_refused_naming_it(
    tmp_path: Path, journal: bytes, snapshot: dict[str, Any] | None, words: str
) -> None:
    """A journal written for a newer snapshot (an older state.json restored), one without
    a snapshot, or one without a header: refused with one message naming the file and
    what to do, never applied to the wrong snapshot."""
    store = StateStore(str(tmp_path))
    if snapshot is not None:
        (tmp_path / "state.json").write_text(json.dumps(snapshot))
    (tmp_path / "state.journal").write_bytes(journal)
    with pytest.raises(StateError) as caught:
        store.load()
    assert str(tmp_path / "state.journal") in str(caught.value) and words in str(caught.value)


def test_a_torn_last_record_is_counted_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = StateStore(str(tmp_path))
    store.save({"device_id": DEVICE, "claims": []})
    store.append([("a", claim("a"))])
    store.close()
    record = encode_changes([("b", claim("b"))])
    with open(tmp_path / "state.journal", "ab") as journal:
        journal.write(record[:-3])
    restarted = StateStore(str(tmp_path))
    assert model(restarted.load()["claims"]) == {"a": claim("a")}
    assert restarted.discarded_octets == len(record) - 3
    assert any("left out" in r.getMessage() for r in caplog.records)
