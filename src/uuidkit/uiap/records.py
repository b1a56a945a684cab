"""What a UIAP engine remembers: flood records, sequence numbers, deadlines.

These are plain data structures with no protocol decisions; ``uuidkit.uiap.engine`` makes
the decisions.

References: UIAP §2.4.2, §4.2.2.1, §4.2.2.3, §4.5.1, §5.1, §9.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from uuidkit.uiap.constants import SEQUENCE_MODULUS
from uuidkit.uiap.message import MessageID, next_sequence, sequence_distance

if TYPE_CHECKING:
    import random

__all__ = [
    "FloodRecord",
    "FloodTable",
    "SequenceNumbers",
    "TimerKey",
    "TimerQueue",
]


@dataclass(slots=True)
class FloodRecord:
    """One remembered Claim-Attempt (UIAP §2.4.2 "Store message record").

    ``key`` is the Message ID as its 96-bit number (:attr:`MessageID.value`: device ID
    in the upper 64 bits, sequence number below; ``message.message_key``), the form a
    datagram's octets 8-19 give directly; :attr:`message_id` is the pair.
    ``interface`` and ``sender`` are where the FIRST copy came from (§4.2.2.1 "MUST
    remember the sender of the first copy"); both are ``None`` for a flood this device
    originated (§4.2.2.3). ``own_claim``/``own_run`` link an own flood to its claim.
    Times are engine seconds.

    References: UIAP §2.4.2, §4.2.2.1, §4.2.2.3, §4.3.2.
    """

    key: int
    interface: Hashable | None
    sender: Hashable | None
    first_received: float
    last_received: float
    deny_sent: bool = False
    own_claim: int | None = None
    own_run: int = 0

    @property
    def message_id(self) -> MessageID:
        """The Message ID (originating device ID, sequence number) of the flood."""
        return MessageID.of_key(self.key)


class FloodTable:
    """Flood records by Message ID, forgotten ``lifetime`` seconds after the last copy,
    and at most ``capacity`` of them (``None``: no cap).

    The draft's "X seconds" (§4.2.2.1) is measured from the last copy received, since
    §2.4.2 updates a "last received time" on every copy and gives it no other use. Records
    are kept in order of last receipt, so expiry is a scan from the front. The scan runs
    only once the front record may be due: :attr:`front_received` is a lower bound on the
    front record's last-received time (infinite when the table is empty), so a call that
    finds ``now - lifetime`` below it does nothing, as a scan would; a caller holding
    several tables of one lifetime may make that comparison itself and skip the call
    when ``front_received > now - lifetime``. Records are keyed by the Message ID's 96-bit value
    (:attr:`FloodRecord.key`), which hashes faster than the pair and can be read from a
    datagram's octets 8-19 directly; :attr:`find` looks one up by it.

    When a new record would exceed ``capacity``, the front record (the one whose last copy
    is oldest, so the flood most likely over) is forgotten first; ``evicted`` counts them.

    References: UIAP §2.4.2, §4.2.2.1.
    """

    __slots__ = ("_records", "capacity", "evicted", "find", "front_received", "lifetime")

    def __init__(self, lifetime: float, capacity: int | None = None) -> None:
        self.lifetime = lifetime
        self.capacity = capacity
        self.evicted = 0
        self._records: OrderedDict[int, FloodRecord] = OrderedDict()
        #: A lower bound on the front record's last-received time (``inf``: empty).
        self.front_received = math.inf
        #: ``find(key)``: the record whose :attr:`FloodRecord.key` is ``key``, or ``None``
        #: (the mapping's own lookup, bound once: it runs for every datagram received).
        self.find: Callable[[int], FloodRecord | None] = self._records.get

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[FloodRecord]:
        return iter(self._records.values())

    def get(self, message_id: MessageID) -> FloodRecord | None:
        """The record of ``message_id``, or ``None`` when it is not (or no longer) known."""
        return self._records.get(message_id.value)

    def add(self, record: FloodRecord) -> None:
        """Remember a new flood (the caller checked it is not known)."""
        records = self._records
        if not records:
            self.front_received = record.last_received
        elif self.capacity is not None and len(records) >= self.capacity:
            records.popitem(last=False)  # the oldest last copy
            self.evicted += 1
            self.front_received = -math.inf  # the new front's time is unknown here
        records[record.key] = record

    def touch(self, record: FloodRecord, now: float) -> None:
        """Another copy of a known flood arrived: update its last-received time (§2.4.2)."""
        records = self._records
        if next(iter(records.values())) is record:
            # The front moves on to a record whose time is unknown here: scan next time.
            self.front_received = -math.inf
        record.last_received = now
        records.move_to_end(record.key)

    def expire(self, now: float) -> None:
        """Forget every record whose last copy arrived ``lifetime`` or more seconds ago."""
        horizon = now - self.lifetime
        if self.front_received > horizon:
            return  # the front record, the oldest, is not due: nothing is
        records = self._records
        while records:
            oldest = next(iter(records.values()))
            if oldest.last_received > horizon:
                self.front_received = oldest.last_received
                return
            records.popitem(last=False)  # the front record, which is oldest
        self.front_received = math.inf


class SequenceNumbers:
    """This device's flood sequence numbers: random start, +1 per flood, wrapping at 2**32.

    It also answers "did this device ever send sequence number ``n``?" for the device-ID
    conflict check of §9, by keeping the runs of numbers issued (one run, plus one per
    jump away from a conflicting device).

    References: UIAP §4.5.1, §9.
    """

    __slots__ = ("_runs", "current", "max_runs")

    def __init__(self, rng: random.Random, max_runs: int = 16) -> None:
        self.max_runs = max_runs
        # §4.5.1: "On initialisation, the UIAP device chooses a random sequence number
        # from the available range."
        self.current = rng.getrandbits(32)
        #: [first, count] of each run of issued numbers.
        self._runs: list[list[int]] = [[self.current, 0]]

    def issue(self) -> int:
        """The sequence number for a new flood.

        §4.5.1: "Each time the device initiates a Claim-Attempt flood, it MUST increment
        the sequence number" and "Sequence numbers wrap when they overflow the 32 bit
        field". The first flood uses the random start itself.
        """
        run = self._runs[-1]
        if run[1]:
            self.current = next_sequence(self.current)
        run[1] += 1
        return self.current

    def was_issued(self, sequence: int) -> bool:
        """True when this device has sent a flood with ``sequence``."""
        return any(sequence_distance(first, sequence) < count for first, count in self._runs)

    def distance(self, sequence: int) -> int:
        """Circular distance from the current number to ``sequence`` (0 .. 2**31)."""
        forward = sequence_distance(self.current, sequence)
        return min(forward, sequence_distance(sequence, self.current))

    def jump(self, rng: random.Random) -> None:
        """Move forward by 2**30 .. 2**31-1, away from a device sharing our ID (§9 MAY).

        A forward step under 2**31 keeps the numbers increasing in serial-number
        arithmetic (RFC 1982 §3.1), as §4.5.1 requires ("monotonically increasing").
        """
        step = rng.randrange(1 << 30, 1 << 31)
        self.current = (self.current + step) % SEQUENCE_MODULUS
        self._runs.append([self.current, 0])
        if len(self._runs) > self.max_runs:
            del self._runs[0]

    @property
    def run_count(self) -> int:
        """The number of runs of issued numbers remembered."""
        return len(self._runs)


#: What a deadline belongs to (the engine uses claim handles and proxy keys).
TimerKey = TypeVar("TimerKey", bound=Hashable)


class TimerQueue(Generic[TimerKey]):
    """Deadlines in a heap, with cancellation that keeps the heap small.

    Each entry is (deadline, token, key). ``push`` returns the token, a number that grows
    with every push: it breaks ties deterministically (first scheduled, first handled),
    and names the entry for :meth:`cancel`. A cancelled entry stays in the heap until it
    reaches the top or the heap is rebuilt, which happens whenever cancelled entries
    outnumber live ones (plus a slack of ``_SLACK``): a renewed claim or a replaced proxy
    record leaves at most that many dead entries behind, never one per renewal.

    References: UIAP §10 (the timers), §4.5.2.
    """

    __slots__ = ("_counter", "_heap", "_live")

    _SLACK = 32

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, TimerKey]] = []
        self._live: set[int] = set()
        self._counter = 0

    def __len__(self) -> int:
        """Entries in the heap, cancelled ones not yet removed included."""
        return len(self._heap)

    @property
    def live(self) -> int:
        """Entries scheduled and not cancelled."""
        return len(self._live)

    def push(self, deadline: float, key: TimerKey) -> int:
        """Schedule ``key`` at ``deadline`` (engine seconds); returns the entry's token."""
        self._counter += 1
        heapq.heappush(self._heap, (deadline, self._counter, key))
        self._live.add(self._counter)
        return self._counter

    def cancel(self, token: int) -> None:
        """Cancel the entry ``token`` (0, an unknown or a past token: nothing happens)."""
        live = self._live
        live.discard(token)
        if len(self._heap) > 2 * len(live) + self._SLACK:
            self._heap = [entry for entry in self._heap if entry[1] in live]
            heapq.heapify(self._heap)

    def peek(self) -> tuple[float, int, TimerKey] | None:
        """The earliest live (deadline, token, key), or ``None`` when there is none."""
        heap, live = self._heap, self._live
        while heap and heap[0][1] not in live:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def pop(self) -> None:
        """Remove the earliest live entry (call :meth:`peek` first)."""
        _, token, _ = heapq.heappop(self._heap)
        self._live.discard(token)
