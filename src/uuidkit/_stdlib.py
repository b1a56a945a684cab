"""The standard library's private modules uuidkit uses, each with a public fallback.

uuidkit imports a few names from CPython's private C modules because the public modules
that re-export them cost import time (``threading`` about 1 ms, ``weakref`` about 1 ms,
``queue`` loads ``threading``). Private modules may change in any release, so each name is
feature-tested here (does the import work?) and otherwise taken from its public module,
which every Python has; :data:`FALLBACKS` names those.

References: RFC 9562 §6.9 (the fork and thread safety these locks and references serve).
"""

from __future__ import annotations

__all__ = ["FALLBACKS", "Lock", "RLock", "SimpleQueue", "weak_ref"]

_fallbacks: list[str] = []

try:
    # What threading.RLock() returns, without importing threading.
    from _thread import RLock
except ImportError:
    from threading import RLock

    _fallbacks.append("RLock")

try:
    # What threading.Lock() returns, without importing threading.
    from _thread import allocate_lock as Lock
except ImportError:
    from threading import Lock

    _fallbacks.append("Lock")

try:
    # queue.SimpleQueue itself, without the queue module's imports (threading among them).
    from _queue import SimpleQueue
except ImportError:
    from queue import SimpleQueue

    _fallbacks.append("SimpleQueue")

try:
    # weakref.ref itself: the weakref module costs about 1 ms to import.
    from _weakref import ref as weak_ref
except ImportError:
    from weakref import ref as weak_ref

    _fallbacks.append("weak_ref")

#: The names taken from their public module because the private one lacks them.
FALLBACKS: frozenset[str] = frozenset(_fallbacks)
del _fallbacks
