"""The state directory: the device ID and the held claims, written atomically.

``state.json`` in a directory the daemon owns (created 0700; refused if another user owns
it, others may write to it, or it is a symlink). The file is written and read by
:mod:`uuidkit._safefile`, the one module that keeps uuidkit's small files: every write goes
to a new temporary file with a random name (``O_CREAT | O_EXCL | O_NOFOLLOW``, mode 0600),
is fsynced, renamed over ``state.json`` and followed by an fsync of the directory, so a
crash at any point leaves either the old state or the new one, never a torn file; the
temporary files a killed daemon left are removed at the next start and after every write;
the file is read without following a symlink or blocking on a FIFO. Faults are injected
through that module's :class:`~uuidkit._safefile.FileSystem` (``StateStore.fs``).

One daemon per directory: :meth:`StateStore.lock` takes an exclusive ``flock`` on ``lock``
in it (created 0600, never through a symlink, never blocking) and holds it until
:meth:`StateStore.close`. Two daemons on one directory would share a device ID and erase
each other's claims with their writes, so the second refuses to start; the kernel drops the
lock however the first one ends, so a killed daemon leaves nothing to clean up.

References: UIAP §4.1 (the device ID), §4.4 (claims reclaimed after a restart).
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from uuidkit._safefile import (
    FileSystem,
    OversizedFileError,
    SafeFile,
    UnsafeStateError,
    check_file,
    make_private_directory,
)
from uuidkit.errors import StateFileError, UUIDKitError

__all__ = [
    "AfterWrite",
    "RetryPolicy",
    "StateError",
    "StateStore",
    "StateWriter",
    "device_id_of",
]

_log = logging.getLogger("uuidkit.daemon")

STATE_FILE: Final = "state.json"
#: The file a running daemon holds an ``flock`` on (kept: never deleted, so two daemons
#: never lock two different files of one name).
LOCK_FILE: Final = "lock"
_LOCK_FLAGS: Final = (
    os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
)
STATE_VERSION: Final = 1
#: Largest state file read, in octets (a corrupt or planted huge file is refused); room for
#: ``max_claims`` at its ceiling of the longest claims (uuidkit.daemon.config).
MAX_STATE_OCTETS: Final = 16 * 1024 * 1024
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")


#: Called once the write that includes a change has ended: with ``None`` when the change is
#: on disk, with the ``OSError`` when that write failed (the change is not durable).
AfterWrite = Callable[[OSError | None], None]


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


class StateStore:
    """The daemon's state directory: :meth:`load` once, :meth:`save` after every change.

    ``filesystem`` (and the ``fs`` attribute, which tests may swap at any time) is the
    fault-injection seam of :mod:`uuidkit._safefile`.

    References: UIAP §4.1 (Originating Device ID), §4.4 (reclaim after a restart).
    """

    def __init__(self, directory: str, filesystem: FileSystem | None = None) -> None:
        self.directory = directory
        self.fs = filesystem if filesystem is not None else FileSystem()
        self._lock_fd: int | None = None
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
        """Let go of the directory (the lock of :meth:`lock`), at stop."""
        if self._lock_fd is not None:
            descriptor, self._lock_fd = self._lock_fd, None
            self.fs.close(descriptor)

    def _file(self) -> SafeFile:
        return SafeFile(
            self.path, fs=self.fs, private=True, kind="state file", max_octets=MAX_STATE_OCTETS
        )

    def load(self) -> dict[str, Any]:
        """The saved state (``{}`` when there is none yet); :class:`StateError` if unusable.

        Never blocks on a FIFO and never follows a symlink at ``state.json``; the temporary
        files a killed earlier run left are removed first.
        """
        state_file = self._file()
        try:
            state_file.remove_stale_temporaries()
            data = state_file.read()[0]
        except FileNotFoundError:
            return {}
        except OversizedFileError:
            raise StateError(f"{self.path} is larger than {MAX_STATE_OCTETS} octets") from None
        except StateFileError as error:  # UnsafeStateError included
            raise StateError(f"cannot use {error}") from None
        except OSError as error:
            raise StateError(f"cannot open {self.path}: {error.strerror}") from None
        try:
            state = json.loads(data)
        except ValueError as error:
            raise StateError(f"{self.path} is not JSON: {error}") from None
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise StateError(f"{self.path} is not a version {STATE_VERSION} state file")
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

    @property
    def path(self) -> str:
        return os.path.join(self.directory, STATE_FILE)

    def save(self, state: Mapping[str, Any]) -> None:
        """Replace the state atomically: temp file, fsync, rename, fsync the directory.

        Raises ``OSError`` when the disk refuses or the directory or ``state.json`` has
        become unsafe (a ``PermissionError`` naming why): either way the old state is intact
        and the writer retries.
        """
        data = json.dumps({**state, "version": STATE_VERSION}, sort_keys=True).encode()
        try:
            self._file().replace(data)
        except StateFileError as error:  # UnsafeStateError: refused like a disk that refuses
            raise PermissionError(errno.EACCES, str(error)) from None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When a failed state write is tried again: ``first`` seconds after the first failure,
    doubling after each further one, never more than ``most`` seconds apart.

    References: UIAP §4.4 (claims reclaimed after a restart need stored state).
    """

    first: float = 0.5
    most: float = 30.0

    def __post_init__(self) -> None:
        # A delay of 0 would retry a failing disk in a busy loop.
        if not 0 < self.first <= self.most:
            raise ValueError(f"expected 0 < first <= most, got {self.first} and {self.most}")

    def delay(self, failures: int) -> float:
        """Seconds to wait after the ``failures``-th failed write in a row (1, 2, ...)."""
        return min(self.most, self.first * (1 << min(max(failures - 1, 0), 64)))


class StateWriter:
    """Writes a :class:`StateStore` from an asyncio loop without blocking it.

    ``save(then)`` asks for a write of ``snapshot()``; ``then(None)`` runs once a write that
    includes the change is on disk, ``then(error)`` if that write failed. Changes made while
    a write runs share the next one (group commit), and writes run in a thread, one at a
    time.

    A failed write leaves changes that are not on disk (a release, an expiry, a renewal's
    new end): ``pending`` is set and the same state is written again on its own, after
    :class:`RetryPolicy` delays (``sleep`` is injectable), until a write succeeds. A change
    someone waits on (``then``, :meth:`persisted`) is tried at once rather than after the
    delay. Each failure is counted in ``errors`` and kept in ``last_error``; an episode of
    failures is logged once when it starts and once when it ends. :meth:`close` (at stop)
    ends the retries and makes a last write.

    References: UIAP §4.4 (claims reclaimed after a restart).
    """

    def __init__(
        self,
        store: StateStore,
        snapshot: Callable[[], Mapping[str, Any]],
        *,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.store = store
        self.snapshot = snapshot
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        #: Failed writes since the start.
        self.errors = 0
        #: The last write failed: the state on disk is older than the daemon's.
        self.pending = False
        #: Why the most recent write failed (None if none has).
        self.last_error: str | None = None
        #: Failed writes in a row (0 once a write succeeds).
        self.failures = 0
        self._last_failure: OSError | None = None
        self._dirty = False
        self._closed = False
        self._after_write: list[AfterWrite] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def save(self, then: AfterWrite | None = None) -> None:
        if self._closed:
            # A change after the stop's last write (a late request): written at once.
            failure = self._write_blocking()
            if then is not None:
                then(failure)
            return
        self._dirty = True
        if then is not None:
            self._after_write.append(then)
            self._wake.set()
        self._start()

    def _start(self) -> None:
        if not self._closed and (self._task is None or self._task.done()):
            self._task = asyncio.get_running_loop().create_task(self._write_loop())

    async def persisted(self) -> OSError | None:
        """Return once the write of every change asked for so far has ended: None when it
        is on disk, the ``OSError`` when that write failed."""
        if self._task is None or self._task.done():
            return self._last_failure if self.pending else None
        done: asyncio.Future[OSError | None] = asyncio.get_running_loop().create_future()

        def finished(failure: OSError | None) -> None:
            if not done.done():
                done.set_result(failure)

        self._after_write.append(finished)
        self._wake.set()
        return await done

    async def _write_loop(self) -> None:
        while not self._closed and (self._dirty or self._after_write or self.pending):
            if self.pending and not self._after_write:
                await self._back_off()
                if self._closed:
                    return
            self._dirty = False
            callbacks, self._after_write = self._after_write, []
            snapshot = self.snapshot()
            failure: OSError | None = None
            try:
                await asyncio.to_thread(self.store.save, snapshot)
            except OSError as error:
                failure = error
            self._outcome(failure)
            for callback in callbacks:
                callback(failure)

    async def _back_off(self) -> None:
        """Wait the retry delay, or less if a change someone waits on (or :meth:`close`)
        arrives meanwhile."""
        self._wake.clear()
        sleeping = asyncio.ensure_future(self.sleep(self.retry.delay(self.failures)))
        woken = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({sleeping, woken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeping.cancel()
            woken.cancel()

    def _outcome(self, failure: OSError | None) -> None:
        if failure is None:
            if self.pending:
                _log.warning(
                    "the state directory is written again (after %d failed writes)",
                    self.failures,
                )
            self.pending, self.failures = False, 0
            return
        self._last_failure = failure
        self.errors += 1
        self.failures += 1
        self.last_error = failure.strerror or str(failure)
        if not self.pending:
            self.pending = True
            _log.error(
                "cannot write the state directory: %s; retrying, at least every %g s, "
                "until it can be written",
                failure,
                self.retry.most,
            )

    def save_now(self) -> OSError | None:
        """Write at once, blocking (at start); a failure is retried by the write loop."""
        failure = self._write_blocking()
        if failure is not None:
            self._start()
        return failure

    def _write_blocking(self) -> OSError | None:
        self._dirty = False
        failure: OSError | None = None
        try:
            self.store.save(self.snapshot())
        except OSError as error:
            failure = error
        self._outcome(failure)
        return failure

    async def close(self) -> OSError | None:
        """At stop: end the retries, wait for the write in progress, then write the state
        once more, blocking (the last chance to keep what is not on disk yet)."""
        self._closed = True
        self._wake.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        callbacks, self._after_write = self._after_write, []
        failure = self._write_blocking()
        if failure is not None:
            _log.error(
                "stopping with the state directory not written (%s): changes since its last "
                "successful write are lost",
                failure,
            )
        for callback in callbacks:
            callback(failure)
        return failure
