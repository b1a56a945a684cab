"""Policies, injected sources and fork handling shared by every time-based generator.

A generator never reads the system clock or entropy itself: it is given a ``clock``
(``() -> int`` of Unix-epoch nanoseconds), a ``random_bytes`` source (``(n) -> bytes``) and a
``sleep_ns`` and ``monotonic_ns`` function, all defaulting to :mod:`uuidkit._system`, so a
test controls time and randomness completely. The policy decisions themselves live in
:mod:`uuidkit.generators._timeline`.

References: RFC 9562 §6.1 (Error Handling), §6.2 (Counter Rollover Handling, Monotonic Error
Checking), §6.9 (reseeding upon process forks).
"""

from __future__ import annotations

import enum
import os
import sys
from collections.abc import Callable, Iterator

from uuidkit import _system
from uuidkit._stdlib import weak_ref as ref  # weakref.ref, without importing weakref
from uuidkit.errors import CounterOverflowError, InvalidField

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Final, Protocol

    class ForkAware(Protocol):
        """Anything holding per-process state that a forked child must not reuse.

        References: RFC 9562 §6.9.
        """

        def reset_after_fork(self) -> None:
            """Forget counters and buffered randomness (called in the child).

            References: RFC 9562 §6.9.
            """


__all__ = [
    "Clock",
    "ClockRegression",
    "ClockWait",
    "CounterOverflow",
    "RandomBytes",
    "Sleep",
    "check_count",
    "paired_monotonic",
    "register_for_fork",
    "wait_for_clock",
    "word_stream",
]

#: Unix-epoch nanoseconds, e.g. :func:`uuidkit._system.system_clock_ns`.
Clock = Callable[[], int]
#: ``n`` uniformly random bytes, e.g. :func:`os.urandom`.
RandomBytes = Callable[[int], bytes]
#: Block for about the given number of nanoseconds.
Sleep = Callable[[int], None]

#: Bytes drawn from the random source per refill of a generator's word buffer (512 words).
WORD_BLOCK_BYTES: Final = 4096
#: Longest single sleep of the WAIT policy, in nanoseconds (a tenth of a millisecond).
WAIT_STEP_NS: Final = 100_000


class CounterOverflow(enum.Enum):
    """What a generator does when the counter of the current timestamp tick is exhausted.

    References: RFC 9562 §6.1 "Error Handling", §6.2 "Counter Rollover Handling";
    RFC 4122 §4.2.1.2.
    """

    #: Freeze the counter and sleep until the clock reaches a later tick (RFC 9562 §6.2:
    #: "freeze the counter and wait for the timestamp to advance"); raises
    #: :class:`~uuidkit.CounterOverflowError` if that takes longer than the configured limit.
    WAIT = "wait"
    #: Move the embedded timestamp one tick ahead of the clock and reseed (RFC 9562 §6.2:
    #: "MAY increment the timestamp ahead of the actual time and reinitialize the counter").
    ADVANCE = "advance"
    #: Raise :class:`~uuidkit.CounterOverflowError` and keep the state unchanged.
    RAISE = "raise"


class ClockRegression(enum.Enum):
    """What a generator does when the clock reads earlier than its highest earlier reading.

    A timestamp that ADVANCE moved ahead of the clock is not a reading: a clock merely
    behind it has not gone back, and the generator keeps counting from that timestamp.

    References: RFC 9562 §6.2 "Monotonic Error Checking"; RFC 9562 §5.1 (clock sequence);
    RFC 4122 §4.2.1.
    """

    #: Keep the last timestamp and keep counting (RFC 9562 §6.2: "MAY reuse the previous
    #: timestamp and increment the previous counter method"): values stay increasing.
    KEEP = "keep"
    #: As KEEP for small regressions; a regression larger than the configured window is
    #: accepted: the generator restarts at the clock's time with fresh randomness (v7) or a
    #: new clock sequence (v1/v6), so values go below the previous ones once.
    RESEED = "reseed"
    #: Raise :class:`~uuidkit.ClockRegressionError`; the state is unchanged.
    RAISE = "raise"


#: Every generator to reset in a forked child, by ``id``, held weakly: a generator that is
#: garbage needs no reset, and its weak reference's callback drops its entry.
_fork_aware: dict[int, ref[ForkAware]] = {}


def register_for_fork(generator: ForkAware) -> None:
    """Reset ``generator`` in every child forked from now on (RFC 9562 §6.9: reseed on fork).

    References: RFC 9562 §6.9.
    """
    key = id(generator)

    def forget(dead: ref[ForkAware]) -> None:
        if _fork_aware.get(key) is dead:  # not a newer generator that reused the id
            del _fork_aware[key]

    _fork_aware[key] = ref(generator, forget)


def _reset_all_after_fork() -> None:
    for reference in list(_fork_aware.values()):
        generator = reference()
        if generator is not None:
            generator.reset_after_fork()


# A platform without fork (Windows) has no os.register_at_fork, and no child to reset.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_all_after_fork)


def check_count(count: object) -> int:
    """``count`` if it is an int >= 0, else :class:`~uuidkit.InvalidField` naming it.

    References: RFC 9562 §6.2 (batches).
    """
    if type(count) is not int or count < 0:
        raise InvalidField(f"count: expected an int >= 0, found {count!r}", "count")
    return count


def word_stream(random_bytes: RandomBytes) -> Iterator[int]:
    """Uniform 64-bit integers from one :data:`WORD_BLOCK_BYTES` draw of ``random_bytes``.

    Iterating a ``memoryview`` cast to unsigned 64-bit words yields Python ints from C, so
    a generator's hot path pays one ``next()`` per word instead of an ``int.from_bytes``.

    References: RFC 9562 §6.9.
    """
    return iter(memoryview(random_bytes(WORD_BLOCK_BYTES)).cast("Q"))


def increment_words(random_bytes: RandomBytes, count: int, random_byte_count: int) -> memoryview:
    """``count`` native 64-bit words, each ``2**(8*k) + r`` with ``r`` of ``k`` random bytes.

    Every word is at least ``2**(8*k)`` (never zero, so a running sum strictly increases) and
    below ``2**(8*k+1)``; ``k`` is ``random_byte_count`` (1 to 7). Built with strided slice
    copies, so the cost per word is a few nanoseconds.

    References: RFC 9562 §6.2 (Method 2).
    """
    buffer = bytearray(8 * count)
    source = random_bytes(random_byte_count * count)
    little = sys.byteorder == "little"
    for i in range(random_byte_count):
        position = i if little else 7 - i
        buffer[position::8] = source[i::random_byte_count]
    one_position = random_byte_count if little else 7 - random_byte_count
    buffer[one_position::8] = b"\x01" * count
    return memoryview(buffer).cast("Q")


def wait_for_clock(
    clock: Clock,
    sleep_ns: Sleep,
    monotonic_ns: Clock,
    ticks_of: Callable[[int], int],
    past: int,
    max_wait_ns: int,
    tick_ns: int,
) -> int:
    """Sleep until ``ticks_of(clock())`` exceeds ``past``; return that clock reading (ns).

    Sleeps in steps of one tick (``tick_ns``), at most :data:`WAIT_STEP_NS` each. The limit
    is a deadline on ``monotonic_ns``, not a sum of requested sleeps: a sleep may last far
    longer than asked (a loaded host), and a stalled or stepped wall clock cannot move the
    deadline, so after ``max_wait_ns`` of real time it raises
    :class:`~uuidkit.CounterOverflowError`.

    References: RFC 9562 §6.1 "Error Handling" ("stall the UUID generator until the system
    clock catches up"); RFC 4122 §4.2.1.2.
    """
    deadline = monotonic_ns() + max_wait_ns
    step_ns = min(tick_ns, WAIT_STEP_NS)
    while True:
        now_ns = clock()
        if ticks_of(now_ns) > past:
            return now_ns
        remaining = deadline - monotonic_ns()
        if remaining <= 0:
            raise CounterOverflowError(
                f"counter exhausted at tick {past}: clock did not advance within "
                f"{max_wait_ns} ns (policy WAIT)"
            )
        sleep_ns(min(step_ns, remaining))


class ClockWait:
    """The caller's side of a :class:`~uuidkit.generators._timeline.Timeline`'s WAIT: sleep
    until the clock reaches a tick, as :func:`wait_for_clock` does.

    References: RFC 9562 §6.1 "Error Handling"; RFC 4122 §4.2.1.2.
    """

    __slots__ = ("_clock", "_max_wait_ns", "_monotonic_ns", "_sleep_ns", "_tick_ns", "_ticks_of")

    def __init__(
        self,
        clock: Clock,
        sleep_ns: Sleep,
        monotonic_ns: Clock,
        ticks_of: Callable[[int], int],
        tick_ns: int,
        max_wait_ns: int,
    ) -> None:
        self._clock, self._sleep_ns, self._monotonic_ns = clock, sleep_ns, monotonic_ns
        self._ticks_of, self._tick_ns, self._max_wait_ns = ticks_of, tick_ns, max_wait_ns

    def until(self, tick: int) -> int:
        """The first clock reading at or after ``tick``, as a tick.

        Raises :class:`~uuidkit.CounterOverflowError` after ``max_wait_ns`` (monotonic).

        References: RFC 9562 §6.1 "Error Handling".
        """
        ticks_of = self._ticks_of
        now_ns = wait_for_clock(
            self._clock,
            self._sleep_ns,
            self._monotonic_ns,
            ticks_of,
            tick - 1,
            self._max_wait_ns,
            self._tick_ns,
        )
        return ticks_of(now_ns)


def paired_monotonic(clock: Clock, monotonic_ns: Clock) -> Clock | None:
    """The monotonic clock to check ``clock``'s readings against, or ``None`` (no check).

    The system's wall clock is checked against the given monotonic clock, and an injected
    wall clock against an injected monotonic clock (a test's pair). An injected wall clock
    with the system's monotonic clock is not checked: the two need not tell the same time
    (a simulated or replayed clock), and a check would refuse its jumps.

    References: RFC 9562 §6.1, §6.2.
    """
    if clock is not _system.REALTIME_NS and monotonic_ns is _system.MONOTONIC_NS:
        return None
    return monotonic_ns


def check_callable(name: str, value: object) -> None:
    """Refuse an injected clock, random source or sleep that cannot be called.

    References: RFC 9562 §6.1.
    """
    if not callable(value):
        raise InvalidField(f"{name}: expected a callable, found {value!r}", name)


def check_choice(name: str, value: object, kind: type) -> None:
    """Refuse a policy or option that is not a member of the enum ``kind``.

    References: RFC 9562 §6.2.
    """
    if not isinstance(value, kind):
        raise InvalidField(f"{name}: expected a {kind.__name__}, found {value!r}", name)


def check_int(name: str, value: object, low: int, high: int) -> int:
    """``value`` if it is an exact int in ``[low, high]``, else :class:`~uuidkit.InvalidField`.

    ``bool`` and int subclasses are refused: their comparisons may not be what they seem.

    References: RFC 9562 §6.2.
    """
    if type(value) is not int or not low <= value <= high:
        shown = value if type(value) is not int or value.bit_length() < 256 else "a huge int"
        raise InvalidField(f"{name}: expected an int in [{low}, {high}], found {shown!r}", name)
    return value
