"""The one module that reads the system clock and the system entropy.

Everything else in uuidkit takes a clock (``() -> int`` of Unix-epoch nanoseconds) and a
random source as arguments, so tests control both.

Randomness comes from the operating system's CSPRNG (:func:`os.urandom`), never from
:mod:`random` (RFC 9562 §6.9: "Implementations SHOULD utilize a cryptographically secure
pseudorandom number generator (CSPRNG)"). To make a UUIDv4 cheaper than one system call,
:class:`EntropyPool` reads 4 KiB at a time and hands out 128-bit integers.

Thread safety: with a GIL, handing out a value is one ``next()`` on a C-level iterator,
which runs without releasing the GIL, so two threads never receive the same value; two
threads that both find the pool empty both refill it from fresh system entropy. On a
free-threaded build (PEP 703) threads run at once and a list iterator shared between them may
hand one value to two of them, so there every pool hands out its values under a lock
(:data:`FREE_THREADED`).

Fork: a child process must never hand out the values its parent still had buffered (that
is how worker pools produce duplicate UUIDs). :func:`os.register_at_fork` empties every
pool in the child; generators register their own reset hooks the same way. A platform
without ``fork`` (Windows) has no such hook and needs none: a new process starts afresh.

References: RFC 9562 §6.9 (Unguessability), §6.1 (Timestamp Considerations).
"""

from __future__ import annotations

import os
import sys
import time

from uuidkit._stdlib import Lock as allocate_lock  # threading.Lock, without threading
from uuidkit._stdlib import weak_ref as ref  # weakref.ref, without importing weakref

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:  # collections.abc imports collections, which CPython 3.13's uuid does not
    from collections.abc import Callable, Iterator

__all__ = [
    "FREE_THREADED",
    "MONOTONIC_NS",
    "OS_RANDOM",
    "POOL",
    "REALTIME_NS",
    "EntropyPool",
    "monotonic_ns",
    "random_bits",
    "random_bytes",
    "sleep_ns",
    "system_clock_ns",
]

#: Unix-epoch nanoseconds from the system clock; the default clock of every generator.
system_clock_ns: Callable[[], int] = time.time_ns

#: The two sources as the standard library defines them, kept apart from the names above
#: (which tests may rebind): a compiled generator given exactly these reads the same clock
#: (``clock_gettime(CLOCK_REALTIME)``, what :func:`time.time_ns` reads) and the same CSPRNG
#: (``getrandom(2)``) in C instead of calling them.
REALTIME_NS: Callable[[], int] = time.time_ns
OS_RANDOM: Callable[[int], bytes] = os.urandom

#: Nanoseconds from a monotonic clock (for measuring waits, never embedded in a UUID).
monotonic_ns: Callable[[], int] = time.monotonic_ns
#: The standard library's monotonic clock, kept apart from ``monotonic_ns`` (which tests may
#: rebind): while ``monotonic_ns`` is this, compiled code reads ``CLOCK_MONOTONIC`` itself.
MONOTONIC_NS: Callable[[], int] = time.monotonic_ns

#: ``n`` bytes from the operating system's CSPRNG.
random_bytes: Callable[[int], bytes] = os.urandom


def sleep_ns(duration_ns: int) -> None:
    """Block the calling thread for about ``duration_ns`` nanoseconds (the "wait" policies)."""
    time.sleep(duration_ns / 1e9)


#: True on a free-threaded CPython build (``--disable-gil``, PEP 703), where shared state needs
#: a lock even where the GIL made a single C call atomic.
#: (Its ABI flag "t", PEP 703; sysconfig would say the same at a cost of a millisecond.)
FREE_THREADED: bool = "t" in getattr(sys, "abiflags", "")

_BLOCK_BYTES = 4096
_VALUE_BYTES = 16
_from_bytes = int.from_bytes
#: Weak references to every live pool, for the fork hook; a dead pool's reference removes
#: itself (the callback), as in a ``weakref.WeakSet``.
_pools: set[ref[EntropyPool]] = set()


def random_bits(k: int) -> int:
    """A uniformly random integer of ``k`` bits (``0 <= value < 2**k``) from the CSPRNG."""
    if k <= 0:
        return 0
    value = _from_bytes(os.urandom((k + 7) // 8))
    return value >> (-k % 8)


class EntropyPool:
    """Buffered CSPRNG output as 128-bit integers.

    ``next_u128()`` costs a C-level ``next()`` most of the time and one 4 KiB
    ``random_bytes`` call (:func:`os.urandom` unless a test injects a source) every 256
    values. Emptied in a forked child.
    """

    __slots__ = ("__weakref__", "_lock", "_random_bytes", "_values")

    def __init__(
        self, random_bytes: Callable[[int], bytes] = os.urandom, *, locked: bool = FREE_THREADED
    ) -> None:
        self._random_bytes = random_bytes
        self._values: Iterator[int] = iter(())
        #: Held while a value is handed out, where the GIL does not make that atomic.
        self._lock = allocate_lock() if locked else None
        _pools.add(ref(self, _pools.discard))

    def _refill(self) -> Iterator[int]:
        block = self._random_bytes(_BLOCK_BYTES)
        # Converted up front: a list iterator's next() is cheaper than map()'s.
        values = iter(
            [_from_bytes(block[i : i + _VALUE_BYTES]) for i in range(0, _BLOCK_BYTES, _VALUE_BYTES)]
        )
        self._values = values
        return values

    def next_u128(self) -> int:
        """A uniformly random 128-bit integer."""
        lock = self._lock
        if lock is None:
            value = next(self._values, None)
            if value is None:
                value = next(self._refill())
            return value
        with lock:
            value = next(self._values, None)
            if value is None:
                value = next(self._refill())
            return value

    def reset(self) -> None:
        """Forget every buffered value (done automatically in a forked child)."""
        self._values = iter(())
        if self._lock is not None:
            self._lock = allocate_lock()  # a fork may have copied it held


def _reset_all_pools_in_child() -> None:
    for reference in list(_pools):
        pool = reference()
        if pool is not None:
            pool.reset()


# A platform without fork (Windows) has no os.register_at_fork, and no child to protect.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_all_pools_in_child)

#: The process-wide pool used by the module-level functions.
POOL = EntropyPool()
