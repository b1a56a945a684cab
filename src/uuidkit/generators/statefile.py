"""The generator state file: versioned JSON with a checksum, atomic writes, a cross-process lock.

One file holds one time-based generator's reservation (see
:mod:`uuidkit.generators.shared`), as the versioned, checksummed JSON of
:mod:`uuidkit.generators._statetext`.

**Atomic, durable and safe in shared directories**, through :mod:`uuidkit._safefile` (the
one module that writes and reads uuidkit's small files): a write goes to a temporary file
with an unpredictable name in the same directory (``O_CREAT | O_EXCL | O_NOFOLLOW``, mode
0600), written whole, fsynced, renamed over the state file, and the directory is fsynced; a
crash leaves the old state or the new one, never a torn one, and once
:meth:`StateFile.write` returns the new state survives a power loss. The temporary files a
killed writer left are removed by the next write. The state file, its lock file and their
directory are checked before use, the way ssh treats its keys, and an unsafe one is refused
with :class:`UnsafeStateError` naming the path and the reason: a directory writable by group
or others without the sticky bit, or owned by another user; a path that is a symlink or not a
regular file (a FIFO is never opened blocking); a file owned by another user, open to group
or others (a lock file also when readable by them: mode 0600), or read-only (it is never
silently replaced).

**Lock.** Readers and writers of one file serialise on ``fcntl.flock`` of a companion
``<name>.lock`` file (mode 0600, so other users cannot take it); the wait is bounded by
``lock_timeout_ms`` on a monotonic clock and then raises :class:`~uuidkit.StateFileError`.
After every ``flock`` the locker checks that the lock path still names the file it locked
(and locks the one there now if not), so :meth:`StateFile.remove` may delete a lock file it
created while holding it without splitting the lock in two.

A file that is missing or fails a format check is "state unavailable": the caller gets
``None`` and a :class:`StateUnavailableWarning`, never an exception.

**POSIX only.** The lock and the safe opens need ``fcntl.flock``, ``O_NOFOLLOW`` and the
effective user ID; on a platform without them (Windows) :class:`StateFile` refuses at
construction with an :class:`UnsupportedPlatformError` (a ``NotImplementedError`` and a
:class:`~uuidkit.StateFileError`) naming the platform and what it lacks, before any file is
made. Importing this module works everywhere: ``fcntl`` is imported where it is used.

References: RFC 9562 §6.3; RFC 4122 §4.2.1.1, §4.2.1.3, §4.2.1.4.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

from uuidkit import _system
from uuidkit._caller import warn_at_caller
from uuidkit._safefile import (
    FileSystem,
    OversizedFileError,
    SafeFile,
    UnsafeStateError,
    UnsupportedPlatformError,
    check_file,
    lock_operations,
    posix_flag,
    require_posix_files,
)
from uuidkit.errors import StateFileError
from uuidkit.generators._statetext import (
    FORMAT_NAME,
    FORMAT_VERSION,
    KINDS,
    StoredState,
)

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "KINDS",
    "FileSystem",
    "FutureStateWarning",
    "StateFile",
    "StateUnavailableWarning",
    "StoredState",
    "UnsafeStateError",
    "UnsupportedPlatformError",
    "load_regular_file",
    "read_state_file",
]

#: Larger files are not state files (a guard against reading something huge by mistake).
_MAX_BYTES: Final = 4096
#: Permission bits a lock file must not have: any access by group or others (whoever can
#: open the lock file can take the lock and stall every generator).
_OPEN_TO_OTHERS: Final = 0o077
_SYMLINK: Final = "a symbolic link, not a state file (never followed)"
_KIND: Final = "state file"
#: Longest wait for the lock by default, in milliseconds.
DEFAULT_LOCK_TIMEOUT_MS: Final = 10_000
#: Longest single sleep while polling for the lock, in nanoseconds.
_LOCK_POLL_NS: Final = 2_000_000


class StateUnavailableWarning(UserWarning):
    """A state file was missing, unreadable, corrupted, future-dated or unwritable.

    The generator carries on as RFC 4122 §4.2.1.1 describes for unavailable state: a fresh
    random clock sequence or counter, never a reused value.

    References: RFC 9562 §6.3; RFC 4122 §4.2.1.1.
    """


class FutureStateWarning(StateUnavailableWarning):
    """A state file's window ends more than ``max_future_ms`` after the clock (a crash while
    the clock was ahead, then a corrected clock): the generator restarts at the clock, below
    the values made while the clock was ahead, and counts it in ``future_restarts``.

    References: RFC 9562 §6.2 "Monotonic Error Checking", §6.3; RFC 4122 §4.2.1.1.
    """


def warn_unavailable(path: Path, reason: str) -> None:
    """Issue the :class:`StateUnavailableWarning` for ``path``.

    References: RFC 4122 §4.2.1.1.
    """
    warn_at_caller(
        f"generator state {str(path)!r} unavailable ({reason}): continuing with a fresh "
        "random clock sequence/counter",
        StateUnavailableWarning,
    )


_LOCK_FLAGS: Final = (
    os.O_RDWR | posix_flag("O_NOFOLLOW") | posix_flag("O_NONBLOCK") | posix_flag("O_CLOEXEC")
)


class StateFile:
    """A state file on disk, with its lock file, read and written as the module describes.

    Raises :class:`UnsupportedPlatformError` on a platform without POSIX file locking
    (Windows).

    References: RFC 9562 §6.3; RFC 4122 §4.2.1.1-§4.2.1.4.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        durable: bool = True,
        lock_timeout_ms: int = DEFAULT_LOCK_TIMEOUT_MS,
        filesystem: FileSystem | None = None,
        monotonic_ns: Callable[[], int] = _system.monotonic_ns,
        sleep_ns: Callable[[int], None] = _system.sleep_ns,
    ) -> None:
        if not isinstance(path, str | os.PathLike):
            raise StateFileError(f"path: expected a str or os.PathLike, found {path!r}")
        if type(lock_timeout_ms) is not int or lock_timeout_ms < 0:
            raise StateFileError(
                f"lock_timeout_ms: expected an int >= 0, found {lock_timeout_ms!r}"
            )
        self.path = Path(path)
        require_posix_files(str(self.path))
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        #: fsync file and directory on every write (off only for throw-away tests).
        self.durable = durable
        self.lock_timeout_ms = lock_timeout_ms
        self.fs = filesystem if filesystem is not None else FileSystem()
        self._file = SafeFile(self.path, fs=self.fs, durable=durable, max_octets=_MAX_BYTES)
        self._monotonic_ns = monotonic_ns
        self._sleep_ns = sleep_ns
        self._lock_fd: int | None = None
        #: Whether this object created the lock file ``_lock_fd`` is open on (see close()).
        self._lock_created = False

    # --- safety checks ------------------------------------------------------------------

    @staticmethod
    def _refuse(path: Path | str, reason: str) -> UnsafeStateError:
        return UnsafeStateError(f"{path}: {reason}; refused")

    def check_directory(self) -> None:
        """Refuse a directory others could use to swap or plant files (ssh ``StrictModes``).

        Raises :class:`UnsafeStateError`; an absent directory is left to the caller's
        ``OSError``.

        References: RFC 9562 §6.3.
        """
        self._file.check_directory()

    # --- reading ------------------------------------------------------------------------

    def load(self) -> StoredState:
        """The stored state; raises :class:`~uuidkit.StateFileError` saying why it is unusable.

        :class:`UnsafeStateError` (a subclass) when the file or directory is unsafe.

        References: RFC 4122 §4.2.1.1.
        """
        try:
            return self.load_checked()[0]
        except FileNotFoundError:
            raise StateFileError(f"{self.path}: missing") from None

    def load_checked(self) -> tuple[StoredState, os.stat_result]:
        """The stored state and the ``fstat`` of the file it was read from.

        Never blocks, never follows a symlink: the path is opened with ``O_NOFOLLOW |
        O_NONBLOCK`` and anything but a safe regular file is refused before a byte is read.
        Raises :class:`FileNotFoundError` for a missing file and
        :class:`~uuidkit.StateFileError` naming the reason for every other problem.

        References: RFC 9562 §6.3.
        """
        try:
            raw, info = self.read_checked()
        except OversizedFileError:
            raise StateFileError(
                f"{self.path}: corrupted: larger than {_MAX_BYTES} bytes"
            ) from None
        try:
            return StoredState.from_text(raw.decode("utf-8")), info
        except (StateFileError, UnicodeDecodeError) as error:
            raise StateFileError(f"{self.path}: corrupted: {error}") from None

    def read_checked(self) -> tuple[bytes, os.stat_result]:
        """The file's contents (at most 4096 octets) and its ``fstat``, read safely.

        The directory and the file pass the module's checks before a byte is read; the open
        never blocks and never follows a symlink (:meth:`uuidkit._safefile.SafeFile.read`).
        Raises :class:`FileNotFoundError` for a missing file (or directory),
        :class:`UnsafeStateError` for an unsafe one and :class:`~uuidkit.StateFileError`
        when it cannot be read or is larger.

        References: RFC 9562 §6.3.
        """
        return self._file.read()

    def read(self) -> StoredState | None:
        """The stored state, or ``None`` (with a warning) when it is unavailable.

        An unsafe file or directory is not "unavailable": :class:`UnsafeStateError` is raised.

        References: RFC 4122 §4.2.1.1.
        """
        try:
            return self.load()
        except UnsafeStateError:
            raise
        except StateFileError as error:
            warn_unavailable(self.path, str(error).removeprefix(f"{self.path}: "))
            return None

    def exists(self) -> bool:
        """Whether anything (even a dangling symlink) is at the state path.

        References: RFC 9562 §6.3.
        """
        return self._file.exists()

    # --- writing ------------------------------------------------------------------------

    def write(self, state: StoredState) -> None:
        """Replace the file atomically (temporary file, fsync, rename, fsync directory).

        Call with the lock held. Raises :class:`UnsafeStateError` for an unsafe directory or
        an existing path that is a symlink, not a regular file, someone else's, open to
        others or read-only; ``OSError`` when the disk refuses (the old state is intact and
        the temporary file is removed). Temporary files of killed writers are removed after
        the write (:meth:`uuidkit._safefile.SafeFile.replace`).

        References: RFC 4122 §4.2.1.3.
        """
        self._file.replace(state.to_text().encode())

    # --- locking ------------------------------------------------------------------------

    def __enter__(self) -> StateFile:
        """Take the cross-process lock; :class:`~uuidkit.StateFileError` after the timeout.

        References: RFC 4122 §4.2.1.4 ("obtain a system-wide global lock").
        """
        descriptor, created = self._lock_fd, self._lock_created
        self._lock_fd = None  # owned by _lock until it returns (it closes it on failure)
        if descriptor is None:
            descriptor, created = self._open_lock_file()
        self._lock_fd, self._lock_created = self._lock(descriptor, created)
        return self

    def _lock(self, descriptor: int, created: bool = False) -> tuple[int, bool]:
        """Lock ``descriptor``'s lock file; returns the descriptor now locked and whether
        this process created its file (a new descriptor if the file was replaced).

        On failure the descriptor is closed. After every ``flock`` the path must still name
        the locked file: :meth:`remove` deletes a lock file it created while it holds it,
        and a process that opened that file meanwhile would otherwise "hold" a lock on a
        file without a name while the next process locks a new one.
        """
        deadline = self._monotonic_ns() + self.lock_timeout_ms * 1_000_000
        try:
            while True:
                try:
                    self.fs.flock(descriptor, lock_operations()[0])
                except BlockingIOError:
                    remaining = deadline - self._monotonic_ns()
                    if remaining <= 0:
                        raise StateFileError(
                            f"{self.lock_path}: lock held elsewhere for more than "
                            f"{self.lock_timeout_ms} ms (lock_timeout_ms)"
                        ) from None
                    self._sleep_ns(min(remaining, _LOCK_POLL_NS))
                    continue
                if self._names_lock_file(descriptor):
                    return descriptor, created
                self.fs.close(descriptor)  # releases the lock on the unnamed file
                descriptor = -1
                descriptor, created = self._open_lock_file()
        except BaseException:
            if descriptor >= 0:
                self.fs.close(descriptor)
            raise

    def _names_lock_file(self, descriptor: int) -> bool:
        """Whether the lock path still names the file ``descriptor`` is open on."""
        held = self.fs.fstat(descriptor)
        try:
            current = self.fs.lstat(str(self.lock_path))
        except FileNotFoundError:
            return False
        return (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino)

    def _open_lock_file(self) -> tuple[int, bool]:
        """The lock file's descriptor (never through a symlink); True if created here."""
        self.check_directory()
        path = str(self.lock_path)
        try:
            try:
                return self.fs.open(path, _LOCK_FLAGS | os.O_CREAT | os.O_EXCL, 0o600), True
            except FileExistsError:
                descriptor = self.fs.open(path, _LOCK_FLAGS)
        except OSError as error:
            reason = _SYMLINK if error.errno == errno.ELOOP else error.strerror or str(error)
            raise self._refuse(self.lock_path, f"unusable lock file: {reason}") from None
        try:
            info = self.fs.fstat(descriptor)
            check_file(str(self.lock_path), info, writing=False, kind=_KIND, loose=_OPEN_TO_OTHERS)
        except UnsafeStateError as error:
            self.fs.close(descriptor)
            reason = str(error).removeprefix(f"{self.lock_path}: ")
            raise self._refuse(self.lock_path, f"unusable lock file: {reason}") from None
        return descriptor, False

    def __exit__(self, *exc_info: object) -> None:
        if self._lock_fd is not None:
            self.fs.flock(self._lock_fd, lock_operations()[1])

    def reopen_after_fork(self) -> None:
        """Drop the inherited lock descriptor: a flock is shared by parent and child otherwise.

        References: RFC 9562 §6.9; RFC 4122 §4.2.1.4.
        """
        if self._lock_fd is not None:
            self.fs.close(self._lock_fd)
            self._lock_fd = None
        self._lock_created = False  # the parent's file, whoever made it

    def close(self) -> None:
        """Close the lock file, and delete it if this object created it: nothing it made is
        left behind. The state file stays (it is the state).

        The lock file is deleted under its own lock, and only while the path still names
        the file this object created, as :meth:`remove` does: every locker checks after
        each ``flock`` that the path still names the file it locked, so a process waiting
        on the deleted file moves on to the one at the path and the lock is never split.
        A lock file another process created is left alone; so is one whose lock cannot be
        had within ``lock_timeout_ms`` (another process is using it).

        References: RFC 9562 §6.3; RFC 4122 §4.2.1.4.
        """
        descriptor, created = self._lock_fd, self._lock_created
        self._lock_fd, self._lock_created = None, False
        if descriptor is None:
            return
        if not created:
            self.fs.close(descriptor)
            return
        try:
            descriptor, created = self._lock(descriptor, created)  # closes it on failure
        except StateFileError:
            return  # in use elsewhere: it is that process's lock now
        try:
            self._drop_created_lock_file(descriptor, created)
        finally:
            self.fs.close(descriptor)

    def _drop_created_lock_file(self, descriptor: int, created: bool) -> None:
        """Delete the lock file ``descriptor`` holds locked, if this object created it and
        the path still names it (see :meth:`remove`)."""
        if created and self._names_lock_file(descriptor):
            self.fs.unlink(str(self.lock_path))

    def remove(self) -> bool:
        """Delete the file only if it provably is a state file; False if there is none.

        Anything else (a symbolic link, a directory, a FIFO, a device, an unsafe file, a file
        that fails any check of :meth:`StoredState.from_text`) raises
        :class:`~uuidkit.StateFileError` and is left untouched. The check is repeated under
        the lock, and the file is unlinked only if the path still names the inode that passed
        it. No lock file is left behind unless another process made it: one this call made is
        deleted while this call still holds its lock, which is safe because every locker
        checks, after each ``flock``, that the path still names the file it locked, and
        otherwise locks the file now at the path (a process that opened the deleted file
        meanwhile moves on to the new one instead of holding a lock nobody else sees). A
        lock file another process made is never deleted. The temporary files that killed
        writers of this state file left go too (:mod:`uuidkit._safefile`'s rule: its own
        pattern, this user's, no live writer).

        References: RFC 9562 §6.3.
        """
        try:
            self.load_checked()
        except FileNotFoundError:
            return False
        own = self._lock_fd is not None
        if self._lock_fd is not None:
            lock_fd, created = self._lock_fd, False
            self._lock_fd = None
        else:
            lock_fd, created = self._open_lock_file()
        lock_fd, created = self._lock(lock_fd, created)
        if own:
            self._lock_fd = lock_fd
        try:
            try:
                checked = self.load_checked()[1]
            except FileNotFoundError:
                return False
            current = self.fs.lstat(str(self.path))
            if (current.st_dev, current.st_ino) != (checked.st_dev, checked.st_ino):
                raise StateFileError(f"{self.path}: replaced while being removed; left in place")
            self.fs.unlink(str(self.path))
            with contextlib.suppress(OSError):  # what killed writers left, nothing else
                self._file.remove_stale_temporaries()
            return True
        finally:
            # Made by this call, for this call, and still locked by it (see above).
            self._drop_created_lock_file(lock_fd, created)
            if not own:
                self.fs.close(lock_fd)


def read_state_file(path: str | os.PathLike[str]) -> StoredState:
    """The state stored at ``path``, read safely (no symlink, FIFO or foreign file followed).

    Raises :class:`~uuidkit.StateFileError` (:class:`UnsafeStateError` for an unsafe file or
    directory) when ``path`` is not a usable uuidkit state file; never blocks, never writes.

    References: RFC 9562 §6.3.
    """
    return StateFile(path).load()


def load_regular_file(path: Path) -> tuple[StoredState, os.stat_result]:
    """:meth:`StateFile.load_checked` of ``path``: the state and the file's ``fstat``.

    References: RFC 9562 §6.3.
    """
    return StateFile(path).load_checked()
