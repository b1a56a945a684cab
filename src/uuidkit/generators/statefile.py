"""The generator state file: versioned JSON with a checksum, atomic writes, a cross-process lock.

One file holds one time-based generator's reservation (see :mod:`uuidkit.generators.shared`)::

    {"checksum": "1c291ca3", "format": "uuidkit-generator-state", "kind": "v7",
     "next_range": 1048576, "node": null, "version": 1, "window_end": 1767225600999,
     "window_start": 1767225600000, "written_ns": 1767225600000123456}

``checksum`` is the CRC-32 (hex) of the other fields as canonical JSON (sorted keys, no
spaces). Writes go to a temporary file in the same directory, which is fsynced, renamed over
the state file, and followed by an fsync of the directory, so a crash leaves either the old
or the new state, never a torn one. Readers and writers of one file serialise on
``fcntl.flock`` of a companion ``<name>.lock`` file (the state file itself is replaced on
every write, so it cannot carry the lock).

A file that is missing, unreadable or fails any check is "state unavailable": the caller gets
``None`` and a :class:`StateUnavailableWarning`, never an exception.

References: RFC 9562 §6.3; RFC 4122 §4.2.1.1, §4.2.1.3, §4.2.1.4.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import warnings
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

from uuidkit.errors import StateFileError

__all__ = ["KINDS", "StateFile", "StateUnavailableWarning", "StoredState"]

FORMAT_NAME: Final = "uuidkit-generator-state"
FORMAT_VERSION: Final = 1
#: Generator kinds a state file can hold; their window unit and range meaning differ.
KINDS: Final = ("v1", "v6", "v7")
#: Larger files are not state files (a guard against reading something huge by mistake).
_MAX_BYTES: Final = 4096
_INT_FIELDS: Final = ("window_start", "window_end", "next_range", "written_ns")


class StateUnavailableWarning(UserWarning):
    """A state file was missing, unreadable, corrupted, future-dated or unwritable.

    The generator carries on as RFC 4122 §4.2.1.1 describes for unavailable state: a fresh
    random clock sequence or counter, never a reused value.

    References: RFC 9562 §6.3; RFC 4122 §4.2.1.1.
    """


@dataclass(frozen=True, slots=True)
class StoredState:
    """One reservation as stored on disk.

    References: RFC 9562 §6.3 ("last known timestamp, clock sequence, counters").
    """

    #: "v1", "v6" or "v7".
    kind: str
    #: First time unit of the reservation window (v7: Unix ms; v1/v6: 100 ns Gregorian ticks).
    window_start: int
    #: Last time unit of the window (inclusive); "set ahead of any timestamp yet used".
    window_end: int
    #: First range not yet handed out in the window (v7: counter value; v1/v6: clock_seq).
    next_range: int
    #: The 48-bit node of v1/v6 generators (``None`` for v7).
    node: int | None
    #: When this state was written, in Unix-epoch nanoseconds.
    written_ns: int

    def to_text(self) -> str:
        """The file's text: the fields plus format, version and checksum.

        References: RFC 9562 §6.3.
        """
        body = {"format": FORMAT_NAME, "version": FORMAT_VERSION, **asdict(self)}
        body["checksum"] = _checksum(body)
        return json.dumps(body, sort_keys=True) + "\n"

    @classmethod
    def from_text(cls, text: str) -> StoredState:
        """Parse and check a state file's text; raises :class:`~uuidkit.StateFileError`.

        References: RFC 9562 §6.3.
        """
        try:
            body = json.loads(text)
        except RecursionError:
            # Deeply nested arrays fit in 4096 bytes and exhaust the parser's recursion.
            raise StateFileError("not JSON: nested too deeply") from None
        except ValueError as error:
            raise StateFileError(f"not JSON: {error}") from None
        if not isinstance(body, dict):
            raise StateFileError("expected a JSON object at offset 0")
        checksum = body.pop("checksum", None)
        if checksum != _checksum(body):
            raise StateFileError(f"checksum: expected {_checksum(body)}, found {checksum!r}")
        if body.pop("format", None) != FORMAT_NAME or body.pop("version", None) != FORMAT_VERSION:
            raise StateFileError(f"format: expected {FORMAT_NAME!r} version {FORMAT_VERSION}")
        return cls._from_fields(body)

    @classmethod
    def _from_fields(cls, body: dict[str, object]) -> StoredState:
        expected = {"kind", "node", *_INT_FIELDS}
        if set(body) != expected:
            raise StateFileError(f"fields: expected {sorted(expected)}, found {sorted(body)}")
        kind, node = body["kind"], body["node"]
        if kind not in KINDS:
            raise StateFileError(f"kind: expected one of {KINDS}, found {kind!r}")
        numbers = {name: body[name] for name in _INT_FIELDS}
        for name, value in numbers.items():
            if type(value) is not int or value < 0:
                raise StateFileError(f"{name}: expected an int >= 0, found {value!r}")
        if node is not None and (type(node) is not int or not 0 <= node < 1 << 48):
            raise StateFileError(f"node: expected null or a 48-bit int, found {node!r}")
        state = cls(str(kind), node=node, **numbers)  # type: ignore[arg-type]
        if state.window_start > state.window_end:
            raise StateFileError("window_start: after window_end")
        return state


def _checksum(body: dict[str, object]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return f"{zlib.crc32(canonical):08x}"


def warn_unavailable(path: Path, reason: str) -> None:
    """Issue the :class:`StateUnavailableWarning` for ``path``.

    References: RFC 4122 §4.2.1.1.
    """
    warnings.warn(
        f"generator state {str(path)!r} unavailable ({reason}): continuing with a fresh "
        "random clock sequence/counter",
        StateUnavailableWarning,
        stacklevel=4,
    )


class StateFile:
    """A state file on disk, with its lock file, read and written as the module describes.

    References: RFC 9562 §6.3; RFC 4122 §4.2.1.1-§4.2.1.4.
    """

    def __init__(self, path: str | os.PathLike[str], *, durable: bool = True) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        #: fsync file and directory on every write (off only for throw-away tests).
        self.durable = durable
        self._lock_fd: int | None = None

    def load(self) -> StoredState:
        """The stored state; raises :class:`~uuidkit.StateFileError` saying why it is unusable.

        References: RFC 4122 §4.2.1.1.
        """
        try:
            return load_regular_file(self.path)[0]
        except FileNotFoundError:
            raise StateFileError(f"{self.path}: missing") from None

    def read(self) -> StoredState | None:
        """The stored state, or ``None`` (with a warning) when it is unavailable.

        References: RFC 4122 §4.2.1.1.
        """
        try:
            return self.load()
        except StateFileError as error:
            warn_unavailable(self.path, str(error).removeprefix(f"{self.path}: "))
            return None

    def write(self, state: StoredState) -> None:
        """Replace the file atomically (temp file, fsync, rename, fsync directory); hold the lock.

        References: RFC 4122 §4.2.1.3.
        """
        # One temporary name: writers are serialised by the lock, and a file left by a
        # writer killed mid-write is truncated and reused rather than piling up.
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            data = memoryview(state.to_text().encode())
            # os.write may write less than asked (a full disk): a short write left unchecked
            # would be renamed over the state as a torn file.
            while data:
                data = data[os.write(descriptor, data) :]
            if self.durable:
                os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temporary, self.path)
        if self.durable:
            directory = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)

    def __enter__(self) -> StateFile:
        """Take the cross-process lock (``fcntl.flock`` on the lock file)."""
        if self._lock_fd is None:
            self._lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def reopen_after_fork(self) -> None:
        """Drop the inherited lock descriptor: a flock is shared by parent and child otherwise.

        References: RFC 9562 §6.9; RFC 4122 §4.2.1.4.
        """
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def remove(self) -> bool:
        """Delete the file only if it provably is a state file; False if there is none.

        Anything else (a symbolic link, a directory, a FIFO, a device, a file that fails any
        check of :meth:`StoredState.from_text`) raises :class:`~uuidkit.StateFileError` and is
        left untouched. The check is repeated under the lock, and the file is unlinked only if
        the path still names the inode that passed it. No lock file is left behind unless a
        generator made it: a generator may hold that one open, and deleting a lock file in use
        would let two processes "hold" the lock at once.

        References: RFC 9562 §6.3.
        """
        try:
            load_regular_file(self.path)
        except FileNotFoundError:
            return False
        lock_fd, created = self._lock_fd, False
        if lock_fd is None:
            lock_fd, created = _open_lock_file(self.lock_path)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            try:
                checked = load_regular_file(self.path)[1]
            except FileNotFoundError:
                return False
            current = os.lstat(self.path)
            if (current.st_dev, current.st_ino) != (checked.st_dev, checked.st_ino):
                raise StateFileError(f"{self.path}: replaced while being removed; left in place")
            self.path.unlink()
            return True
        finally:
            if created:
                self.lock_path.unlink(missing_ok=True)
            if lock_fd != self._lock_fd:
                os.close(lock_fd)


def _open_lock_file(path: Path) -> tuple[int, bool]:
    """An existing lock file (never through a symlink), or a new one; True if created here."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), True
    except FileExistsError:
        pass
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        raise StateFileError(f"{path}: unusable lock file: {error.strerror or error}") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise StateFileError(f"{path}: lock file is not a regular file")
    return descriptor, False


def load_regular_file(path: Path) -> tuple[StoredState, os.stat_result]:
    """Read and check ``path`` as a state file, and its ``fstat``; never blocks, never follows.

    The final path component is opened with ``O_NOFOLLOW | O_NONBLOCK``, so a symbolic link
    is refused and a FIFO cannot hang the reader; anything but a regular file is refused
    before a byte is read. Raises :class:`FileNotFoundError` for a missing file and
    :class:`~uuidkit.StateFileError` naming the reason for every other problem.

    References: RFC 9562 §6.3.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise StateFileError(f"{path}: a symbolic link, not a state file") from None
        raise StateFileError(f"{path}: unreadable: {error.strerror or error}") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            kind = _KIND_OF_FILE.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise StateFileError(f"{path}: {kind}, not a state file")
        raw = b""
        while len(raw) <= _MAX_BYTES and (chunk := os.read(descriptor, _MAX_BYTES + 1 - len(raw))):
            raw += chunk
    except OSError as error:
        raise StateFileError(f"{path}: unreadable: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
    try:
        if len(raw) > _MAX_BYTES:
            raise StateFileError(f"larger than {_MAX_BYTES} bytes")
        return StoredState.from_text(raw.decode("utf-8")), info
    except (StateFileError, UnicodeDecodeError) as error:
        raise StateFileError(f"{path}: corrupted: {error}") from None


_KIND_OF_FILE: Final = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}
