"""Writing the state directory from an asyncio loop: group commit, retries, durability.

A :class:`StateWriter` runs the writes of a :class:`~uuidkit.daemon.state.StateStore` in a
thread, one at a time, and tells each change's waiter when it is on disk. A change to one
claim becomes one journal record (:meth:`StateStore.append`); a change it is not told the
claim of, or the first write after a failure, writes the whole state (:meth:`StateStore.save`).

References: UIAP §4.4 (claims reclaimed after a restart).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uuidkit.daemon.state import StateStore

__all__ = ["AfterWrite", "RetryPolicy", "StateWriter"]

_log = logging.getLogger("uuidkit.daemon")

#: Called once the write that includes a change has ended: with ``None`` when the change is
#: on disk, with the ``OSError`` when that write failed (the change is not durable).
AfterWrite = Callable[[OSError | None], None]
#: A claim's saved form by its ID, or None when it is no longer kept (released, expired).
SavedClaim = Callable[[str], Mapping[str, Any] | None]


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

    ``save(then, claim=id)`` asks for a write of that claim's change: ``saved_claim(id)``
    appended to the journal (without ``saved_claim``, or without ``claim``, ``snapshot()`` is
    written whole); ``then(None)`` runs once a write that includes the change is on disk,
    ``then(error)`` if that write failed. Changes made while a write runs share the next one
    (group commit), and writes run in a thread, one at a time.

    A failed write leaves changes that are not on disk (a release, an expiry, a renewal's
    new end): ``pending`` is set and the whole state is written again on its own, after
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
        saved_claim: SavedClaim | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.store = store
        self.snapshot = snapshot
        self.saved_claim = saved_claim
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
        #: The next write is the whole state (a change of unknown extent, a failed write).
        self._whole = False
        self._changed: set[str] = set()
        self._closed = False
        self._after_write: list[AfterWrite] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def save(self, then: AfterWrite | None = None, *, claim: str | None = None) -> None:
        """Ask for a write of a change (of ``claim``, a claim ID, if given); see the class."""
        if claim is None or self.saved_claim is None:
            self._whole = True
        else:
            self._changed.add(claim)
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
            write = self._next_write()
            failure: OSError | None = None
            try:
                await asyncio.to_thread(write)
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

    def _next_write(self) -> Callable[[], None]:
        """The write of every change asked for so far (read from the service now, on the
        loop; written later, in a thread)."""
        whole, self._whole = self._whole or self.pending, False
        changed, self._changed = self._changed, set()
        if whole or self.saved_claim is None:
            snapshot = self.snapshot()
            return lambda: self.store.save(snapshot)
        saved_claim = self.saved_claim
        changes = [(claim, saved_claim(claim)) for claim in sorted(changed)]
        return lambda: self.store.append(changes)

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
        self._whole, self._changed = False, set()
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
