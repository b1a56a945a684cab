"""The state directory: the device ID and the held claims, durable before every reply.

Two files in a directory the daemon owns (created 0700; refused if another user owns it,
others may write to it, or it is a symlink):

* ``state.json``, the **snapshot**: the device ID and every claim kept, with the snapshot's
  ``generation``. It is written and read by :mod:`uuidkit._safefile`, the one module that
  keeps uuidkit's small files: every write goes to a new temporary file with a random name
  (``O_CREAT | O_EXCL | O_NOFOLLOW``, mode 0600), is fsynced, renamed over ``state.json``
  and followed by an fsync of the directory, so a crash at any point leaves either the old
  snapshot or the new one, never a torn file.
* ``state.journal``, the **journal** (:mod:`uuidkit.daemon.journal`): the claim changes
  made since that snapshot, one checksummed record each, appended and fsynced before the
  change is reported durable. Its header names the generation it extends.

A change costs one appended record, whatever the number of claims held. When the journal
outgrows :data:`COMPACT_RATIO` times the snapshot (and :data:`COMPACT_FLOOR_OCTETS`), the
next write is a **compaction**: a new snapshot of generation G+1, then a new journal whose
header says G+1, each written atomically as above. A crash between the two leaves the new
snapshot with the old journal of generation G, which a reader knows is already in the
snapshot and ignores: nothing is applied twice, nothing is lost. A reader applies the
journal's records up to the first that is not whole (a torn last record, left by a crash
mid-append), counts the octets it left out and logs them; the first write after a start,
and after any failed write, is a compaction, so nothing is ever appended after a torn
record. ``state.json`` files of version 1 (no generation, no journal) are read as
generation 0.

The temporary files a killed daemon left are removed at the next start and after every
snapshot; files are read without following a symlink or blocking on a FIFO. Faults are
injected through :class:`~uuidkit._safefile.FileSystem` (``StateStore.fs``).

One daemon per directory: :meth:`StateStore.lock` takes an exclusive ``flock`` on ``lock``
in it (created 0600, never through a symlink, never blocking) and holds it until
:meth:`StateStore.close`. Two daemons on one directory would share a device ID and erase
each other's claims with their writes, so the second refuses to start; the kernel drops the
lock however the first one ends, so a killed daemon leaves nothing to clean up.

References: UIAP §4.1 (the device ID), §4.4 (claims reclaimed after a restart).
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
from collections.abc import Iterable, Mapping
from typing import Any, Final

from uuidkit._safefile import (
    FileSystem,
    OversizedFileError,
    SafeFile,
    UnsafeStateError,
    check_file,
    make_private_directory,
    write_all,
)
from uuidkit.daemon.journal import Change, encode_changes, encode_header, parse_journal
from uuidkit.daemon.writer import AfterWrite, RetryPolicy, StateWriter
from uuidkit.errors import StateFileError, UUIDKitError

__all__ = [
    "AfterWrite",
    "RetryPolicy",
    "StateError",
    "StateStore",
    "StateWriter",
    "device_id_of",
    "read_state",
]

_log = logging.getLogger("uuidkit.daemon")

STATE_FILE: Final = "state.json"
JOURNAL_FILE: Final = "state.journal"
#: The file a running daemon holds an ``flock`` on (kept: never deleted, so two daemons
#: never lock two different files of one name).
LOCK_FILE: Final = "lock"
_LOCK_FLAGS: Final = (
    os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
)
_APPEND_FLAGS: Final = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: The snapshot format written: version 1 plus its ``generation`` (and a journal).
STATE_VERSION: Final = 2
#: The format before the journal, still read (generation 0, no journal).
OLD_STATE_VERSION: Final = 1
#: Largest state file read, in octets (a corrupt or planted huge file is refused); room for
#: ``max_claims`` at its ceiling of the longest claims (uuidkit.daemon.config).
MAX_STATE_OCTETS: Final = 16 * 1024 * 1024
#: A compaction follows once the journal is longer than this many snapshots (choice: 2
#: keeps the journal's replay at start below twice the snapshot's read, and the amortised
#: snapshot cost per change below half a record's worth of snapshot writing) ...
COMPACT_RATIO: Final = 2
#: ... and than this (an empty daemon would otherwise compact at every change).
COMPACT_FLOOR_OCTETS: Final = 256 * 1024
#: Largest journal read: the longest it gets before its compaction, plus one batch of
#: changes to every claim at the ceiling.
MAX_JOURNAL_OCTETS: Final = (COMPACT_RATIO + 1) * MAX_STATE_OCTETS + COMPACT_FLOOR_OCTETS
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")


class StateError(UUIDKitError):
    """The state directory or file cannot be used (the message says why).

    References: UIAP §4.1 (the device ID it keeps), §4.4.
    """


def device_id_of(text: object) -> int | None:
    """The device ID a state file keeps (16 hex digits), or None if ``text`` is not one.

    UIAP §4.1: "ID 0 ... MUST NOT appear", so all zeros is not one either.

    References: UIAP §4.1 (Originating Device ID: 64 bits).
    """
    if not isinstance(text, str) or len(text) != 16 or not set(text) <= _HEX_DIGITS:
        return None
    return int(text, 16) or None


def _claim_key(entry: Any, position: int) -> Any:
    """The key of a saved claim in the store: its ID (a claim without one, which the
    service skips with a log line at start, keeps its place under its position)."""
    if isinstance(entry, dict) and isinstance(entry.get("id"), str):
        return entry["id"]
    return ("unnamed", position)


class StateStore:
    """The daemon's state directory: :meth:`load` once, then after every change
    :meth:`append` (the changes to some claims) or :meth:`save` (the whole state).

    ``filesystem`` (and the ``fs`` attribute, which tests may swap at any time) is the
    fault-injection seam of :mod:`uuidkit._safefile`. Both writes raise ``OSError`` when the
    disk refuses or a file has become unsafe (a ``PermissionError`` naming why); the state
    on disk is then the one before the call or, when the error came after the data was
    written, possibly the new one; the next write is a compaction either way. The store
    keeps the state as last asked for (not as last written) in memory, so a compaction
    needs nothing from its caller.

    References: UIAP §4.1 (Originating Device ID), §4.4 (reclaim after a restart).
    """

    def __init__(self, directory: str, filesystem: FileSystem | None = None) -> None:
        self.directory = directory
        self.fs = filesystem if filesystem is not None else FileSystem()
        self._lock_fd: int | None = None
        #: The generation of the snapshot on disk (0: none yet, or a version 1 file).
        self.generation = 0
        #: Journal octets left out by the last :meth:`load` (a torn last record).
        self.discarded_octets = 0
        #: Snapshots written (compactions) since this store was made.
        self.compactions = 0
        self._base: dict[str, Any] = {}
        self._claims: dict[Any, Any] = {}
        self._journal_fd: int | None = None
        self._journal_id: tuple[int, int] | None = None
        self._journal_octets = 0
        self._snapshot_octets = 0
        try:
            make_private_directory(directory, self.fs)
        except StateFileError as error:  # UnsafeStateError
            raise StateError(f"state directory {error}") from None
        except OSError as error:
            raise StateError(
                f"cannot create state directory {directory}: {error.strerror}"
            ) from None

    def lock(self) -> None:
        """Hold the directory for this process until :meth:`close`; :class:`StateError`
        naming the directory when another process holds it (or the lock file is unusable).

        The open never blocks and never follows a symlink (a FIFO or a link planted at
        ``lock`` is refused); the lock is taken without waiting: a running daemon does not
        let go.
        """
        if self._lock_fd is not None:
            return
        path = os.path.join(self.directory, LOCK_FILE)
        try:
            descriptor = self.fs.open(path, _LOCK_FLAGS, 0o600)
        except OSError as error:
            reason = "a symbolic link" if error.errno == errno.ELOOP else error.strerror
            raise StateError(f"cannot use the lock file {path}: {reason}") from None
        try:
            check_file(path, self.fs.fstat(descriptor), writing=False, kind="lock file")
            self.fs.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fs.close(descriptor)
            raise StateError(
                f"state directory {self.directory} is in use by another running daemon "
                f"(it holds {path}); one directory serves one daemon"
            ) from None
        except (UnsafeStateError, OSError) as error:
            self.fs.close(descriptor)
            raise StateError(f"cannot use the lock file {error}") from None
        self._lock_fd = descriptor

    def close(self) -> None:
        """Let go of the directory (the lock of :meth:`lock`) and the journal, at stop."""
        self._close_journal()
        if self._lock_fd is not None:
            descriptor, self._lock_fd = self._lock_fd, None
            self.fs.close(descriptor)

    @property
    def path(self) -> str:
        return os.path.join(self.directory, STATE_FILE)

    @property
    def journal_path(self) -> str:
        return os.path.join(self.directory, JOURNAL_FILE)

    def _file(self) -> SafeFile:
        return SafeFile(
            self.path, fs=self.fs, private=True, kind="state file", max_octets=MAX_STATE_OCTETS
        )

    def _journal_file(self) -> SafeFile:
        return SafeFile(
            self.journal_path,
            fs=self.fs,
            private=True,
            kind="state journal",
            max_octets=MAX_JOURNAL_OCTETS,
        )

    # ------------------------------------------------------------------ reading

    def load(self) -> dict[str, Any]:
        """The saved state (``{}`` when there is none yet); :class:`StateError` if unusable.

        The temporary files a killed earlier run left are removed first; then :meth:`read`.
        """
        try:
            for safe_file in (self._file(), self._journal_file()):
                safe_file.remove_stale_temporaries()
        except OSError as error:
            raise StateError(f"cannot list {self.directory}: {error.strerror}") from None
        return self.read()

    def read(self) -> dict[str, Any]:
        """The saved state: the snapshot with the journal's changes applied, as
        ``{"device_id": ..., "claims": [...]}`` (``{}`` when there is none yet).

        Never blocks on a FIFO and never follows a symlink; changes nothing on disk.
        Raises :class:`StateError` naming the file for one that cannot be used.
        """
        snapshot = self._read_file(self._file(), MAX_STATE_OCTETS)
        journal = self._read_file(self._journal_file(), MAX_JOURNAL_OCTETS)
        state = {} if snapshot is None else self._parse_snapshot(snapshot)
        generation = state.get("generation", 0)
        changes = [] if journal is None else self._journal_changes(journal, generation, state)
        self._close_journal()
        self.generation, self._snapshot_octets = generation, len(snapshot or b"")
        self._base = {
            k: v for k, v in state.items() if k not in ("claims", "version", "generation")
        }
        self._claims = {_claim_key(e, i): e for i, e in enumerate(state.get("claims", []))}
        self._apply(changes)
        return {} if snapshot is None else self._state()

    def _read_file(self, safe_file: SafeFile, limit: int) -> bytes | None:
        try:
            return safe_file.read()[0]
        except FileNotFoundError:
            return None
        except OversizedFileError:
            raise StateError(f"{safe_file.path} is larger than {limit} octets") from None
        except StateFileError as error:  # UnsafeStateError included
            raise StateError(f"cannot use {error}") from None
        except OSError as error:
            raise StateError(f"cannot open {safe_file.path}: {error.strerror}") from None

    def _parse_snapshot(self, data: bytes) -> dict[str, Any]:
        try:
            state = json.loads(data)
        except ValueError as error:
            raise StateError(f"{self.path} is not JSON: {error}") from None
        versions = (OLD_STATE_VERSION, STATE_VERSION)
        if not isinstance(state, dict) or state.get("version") not in versions:
            raise StateError(f"{self.path} is not a version 1 or 2 state file")
        generation = state.get("generation", 0)
        if state["version"] == STATE_VERSION and (type(generation) is not int or generation < 1):
            raise StateError(f"{self.path}: key 'generation': expected a whole number above 0")
        self._check_keys(state)
        return state

    def _check_keys(self, state: dict[str, Any]) -> None:
        """Refuse a state whose keys the daemon cannot use, naming the file and the key
        (the daemon would otherwise stop with a traceback, or invent a new identity)."""
        device_id = state.get("device_id")
        if device_id is not None and device_id_of(device_id) is None:
            raise StateError(
                f"{self.path}: key 'device_id': expected 16 hex digits, not all 0 "
                f"(UIAP §4.1), found {str(device_id)[:40]!r}"
            )
        if not isinstance(state.get("claims", []), list):
            raise StateError(f"{self.path}: key 'claims': expected a list of claims")

    def _journal_changes(
        self, data: bytes, generation: int, state: Mapping[str, Any]
    ) -> list[Change]:
        """The journal's changes if it extends the snapshot of ``generation``; [] for the
        journal of an older snapshot (a crash between a compaction's two writes)."""
        path = self.journal_path
        contents = parse_journal(data)
        if contents.generation is None:
            raise StateError(
                f"{path} has no whole journal header (not written by this daemon?): remove it "
                f"to start from {self.path} alone; the claim changes it holds are lost"
            )
        if not state:
            raise StateError(
                f"{path} extends a snapshot, but there is no {self.path}: restore it, or "
                f"remove {JOURNAL_FILE} too to start afresh (with a new device ID)"
            )
        if contents.generation > generation:
            raise StateError(
                f"{path} extends the snapshot of generation {contents.generation}, but "
                f"{self.path} is generation {generation} (an older copy restored?): restore "
                f"the matching {STATE_FILE}, or remove {JOURNAL_FILE} and lose its changes"
            )
        if contents.generation < generation:
            _log.info("%s is older than %s: its changes are in the snapshot", path, self.path)
            return []
        self.discarded_octets = contents.discarded_octets
        if contents.discarded_octets:
            _log.warning(
                "%s: %d octets after its last whole record left out (a write cut short by a "
                "crash; its change was never reported durable)",
                path,
                contents.discarded_octets,
            )
        return contents.changes

    def _state(self) -> dict[str, Any]:
        return {**self._base, "claims": list(self._claims.values())}

    def _apply(self, changes: Iterable[Change]) -> None:
        for claim_id, saved in changes:
            if saved is None:
                self._claims.pop(claim_id, None)
            else:
                self._claims[claim_id] = saved

    # ------------------------------------------------------------------ writing

    def save(self, state: Mapping[str, Any]) -> None:
        """Replace the whole state: a compaction (a new snapshot, then a new journal).

        Raises ``OSError`` as the class says; the writer retries.
        """
        self._base = {
            k: v for k, v in state.items() if k not in ("claims", "version", "generation")
        }
        self._claims = {_claim_key(e, i): e for i, e in enumerate(state.get("claims", []))}
        self._compact()

    def append(self, changes: Iterable[Change]) -> None:
        """Make ``changes`` (claim ID and saved form, or None for a claim gone) durable: one
        record each appended to the journal and fsynced, or a compaction when one is due.

        A drop of a claim the state does not hold writes nothing. Raises ``OSError`` as the
        class says (the journal is then never appended to again: the next write compacts).
        """
        wanted = []
        for claim_id, saved in changes:
            if saved is not None or claim_id in self._claims:
                wanted.append((claim_id, saved))
                self._apply([(claim_id, saved)])
        if self._compaction_due():
            self._compact()
            return
        if not wanted:
            return
        data = encode_changes(wanted)
        descriptor = self._journal_fd
        assert descriptor is not None  # _compaction_due() is true without a journal
        try:
            write_all(self.fs, descriptor, data, self.journal_path)
            # UIAP §4.4 reclaims after a restart only what is on disk: the change is
            # reported durable (a grant answered) only after this.
            self.fs.fsync(descriptor)
        except OSError:
            self._close_journal()  # a torn record may end it now: never append after that
            raise
        self._journal_octets += len(data)

    def _compaction_due(self) -> bool:
        if self._journal_fd is None:
            return True
        if self._journal_octets > max(COMPACT_RATIO * self._snapshot_octets, COMPACT_FLOOR_OCTETS):
            return True
        # Appends to a journal someone removed or replaced would be lost at the restart.
        try:
            info = self.fs.lstat(self.journal_path)
        except OSError:
            return True
        return (info.st_dev, info.st_ino) != self._journal_id

    def _compact(self) -> None:
        """A new snapshot of the state (generation G+1), then a new journal for it."""
        self._close_journal()
        generation = self.generation + 1
        snapshot = {
            **self._state(),
            "version": STATE_VERSION,
            "generation": generation,
        }
        data = json.dumps(snapshot, sort_keys=True).encode()
        _replace(self._file(), data)
        self.generation, self._snapshot_octets = generation, len(data)
        self.compactions += 1
        # The state is durable now; a journal that cannot be started makes the next write
        # a compaction again (the old journal, of generation G, is ignored when read).
        try:
            self._start_journal()
        except OSError as error:
            _log.warning(
                "cannot start a new %s (%s); the next write is a snapshot", JOURNAL_FILE, error
            )

    def _start_journal(self) -> None:
        header = encode_header(self.generation)
        _replace(self._journal_file(), header)
        descriptor = self.fs.open(self.journal_path, _APPEND_FLAGS)
        try:
            info = self.fs.fstat(descriptor)
            check_file(self.journal_path, info, writing=True, kind="state journal")
        except (OSError, UnsafeStateError) as error:
            self.fs.close(descriptor)
            raise PermissionError(errno.EACCES, str(error)) from None
        self._journal_fd, self._journal_id = descriptor, (info.st_dev, info.st_ino)
        self._journal_octets = len(header)

    def _close_journal(self) -> None:
        if self._journal_fd is not None:
            descriptor, self._journal_fd = self._journal_fd, None
            self.fs.close(descriptor)


def _replace(safe_file: SafeFile, data: bytes) -> None:
    """:meth:`SafeFile.replace`, its refusals raised like a disk that refuses."""
    try:
        safe_file.replace(data)
    except StateFileError as error:  # UnsafeStateError
        raise PermissionError(errno.EACCES, str(error)) from None


def read_state(directory: str) -> dict[str, Any]:
    """The state saved in ``directory`` (:meth:`StateStore.read`), for tools and tests.

    References: UIAP §4.4.
    """
    return StateStore(directory).read()
