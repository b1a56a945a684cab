"""Proxy defense: the claims this device defends on behalf of other devices (UIAP §5.1).

A device "remembers Claim-Attempt messages from other devices and defends these claims as
if they were the device's own". This module only remembers; the engine decides when to
remember (only X+R attempts that it forwarded) and when to deny.

Choices where §5.1 leaves room, also listed in docs/uiap.md:

* One record per claim, keyed by (claimant, Claim Reference Number, Domain ID): the
  reference number identifies "a particular claim (not a flood)" (§4.1). The most recent
  Claim-Attempt of a claim replaces its record, lifetime and space included (§5.1: "MAY
  choose to defend any or all of them"); arrival order decides, since other devices'
  sequence numbers are "arbitrary identifiers" (§4.5.1).
* A lifetime of 0 is valid (§4.5.2) and means defend for 0 seconds: no record is kept,
  and a record of the same claim ends.
* A Lifetime of 0xffffffff is infinite, as for IPv6 address lifetimes (§4.5.2).
* Every table fed from the network is bounded: at most ``capacity`` records (a new claim
  beyond is not defended; a known claim may still be replaced), each defended at most
  ``max_lifetime`` seconds from receipt, infinite lifetimes included (§5.1: a proxy "MAY
  stop defending a claim at any earlier time").
* Records are indexed like own claims (``index.DomainClaims``): per domain, those whose
  spaces meet no other record's are kept sorted by interval and found by bisection, so an
  incoming Claim-Attempt costs O(log n), not one comparison per record. Records that
  overlap an indexed one (two devices' proxied claims conflict, which honest sites only
  see briefly) are kept in a short list, at most ``MAX_OVERLAPPING`` per domain, scanned
  in full; a record that would exceed it is not defended (the table is full for it).

References: UIAP §4.1, §4.5.1, §4.5.2, §5.1.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Final, TypeAlias

from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.engine_types import LIFETIME_INFINITE
from uuidkit.uiap.index import DomainClaims
from uuidkit.uiap.message import Message
from uuidkit.uiap.space import Interval, NumberSpace, UIDSpace, intervals_overlap

__all__ = ["MAX_OVERLAPPING", "ProxyKey", "ProxyRecord", "ProxyTable"]

#: Records per domain kept outside the index because they overlap an indexed one.
MAX_OVERLAPPING: Final = 32

#: (claimant's device ID, Claim Reference Number, Domain ID): one claim of one device.
ProxyKey: TypeAlias = tuple[int, int, DomainID]


class _DomainRecords:
    """One domain's records: by key, the disjoint ones indexed, the rest listed."""

    __slots__ = ("by_key", "by_slot", "index", "overlapping")

    def __init__(self, domain: DomainID) -> None:
        self.by_key: dict[ProxyKey, ProxyRecord] = {}
        self.index = DomainClaims(NumberSpace.generic(domain))
        self.by_slot: dict[int, ProxyRecord] = {}
        self.overlapping: list[ProxyRecord] = []

    def meeting(self, interval: Interval) -> list[ProxyRecord]:
        found = [self.by_slot[slot] for slot in self.index.meeting(interval)]
        found.extend(r for r in self.overlapping if intervals_overlap(r.interval, interval))
        return found

    def room_for(self, key: ProxyKey, interval: Interval) -> bool:
        """Whether a record of ``key`` over ``interval`` can be kept (indexed or listed)."""
        meets = [self.by_slot[slot] for slot in self.index.meeting(interval)]
        if not meets or [r.key for r in meets] == [key]:
            return True
        return len(self.overlapping) < MAX_OVERLAPPING or any(
            r.key == key for r in self.overlapping
        )

    def add(self, record: ProxyRecord, slot: int) -> None:
        if self.index.meeting(record.interval):
            self.overlapping.append(record)
        else:
            record.slot = slot
            self.index.add(slot, record.interval)
            self.by_slot[slot] = record
        self.by_key[record.key] = record

    def remove(self, record: ProxyRecord) -> None:
        del self.by_key[record.key]
        if record.slot:
            self.index.remove(record.slot, record.interval)
            del self.by_slot[record.slot]
        else:
            self.overlapping.remove(record)


@dataclass(slots=True)
class ProxyRecord:
    """A claim this device defends for ``claimant`` until ``expires`` (engine seconds;
    ``None`` for an infinite lifetime), learnt from the Claim-Attempt ``sequence``.

    References: UIAP §4.1, §4.5.2, §5.1.
    """

    claimant: int
    reference: int
    domain: DomainID
    space: UIDSpace
    expires: float | None
    sequence: int
    #: ``space`` as an interval of the domain's order under the wire's rules, computed
    #: once: every new Claim-Attempt of the domain is compared with it (§4.2.2.1).
    interval: Interval
    #: Token of the live timer entry for ``expires`` (``TimerQueue.push``); 0 for none.
    timer: int = 0
    #: This record's number in its domain's index; 0 when it is in the overlapping list.
    slot: int = 0
    #: Where the X+R Claim-Attempt came from (the engine's (interface, source) of the hop
    #: it arrived by), for the per-source share of the table.
    origin: Hashable = None

    @property
    def key(self) -> ProxyKey:
        """The identity of the claim this record defends."""
        return (self.claimant, self.reference, self.domain)


class ProxyTable:
    """Proxy records, indexed by domain so a Claim-Attempt is compared with its own domain.

    References: UIAP §5.1.
    """

    __slots__ = (
        "_by_domain", "_by_origin", "_count", "_slots", "capacity", "max_lifetime", "per_origin"
    )  # fmt: skip

    def __init__(
        self,
        capacity: int | None = None,
        max_lifetime: float | None = None,
        per_origin: int | None = None,
    ) -> None:
        self.capacity = capacity
        self.max_lifetime = max_lifetime
        #: Records one origin (a hop's (interface, source)) may hold at most: no single
        #: source, forging claimant device IDs at will, can fill the table and keep honest
        #: claimants' X+R claims from being defended. ``None`` for no share.
        self.per_origin = per_origin
        self._by_domain: dict[DomainID, _DomainRecords] = {}
        #: Live records per origin; an origin with none has no entry (at most one entry per
        #: record, so the table's capacity bounds it).
        self._by_origin: dict[Hashable, int] = {}
        self._count = 0
        self._slots = itertools.count(1)

    def __len__(self) -> int:
        return self._count

    def full_for(self, message: Message, interval: Interval, origin: Hashable = None) -> bool:
        """True when ``message`` would add a record beyond ``capacity``, beyond ``origin``'s
        share (``per_origin``), or beyond :data:`MAX_OVERLAPPING` records of its domain
        overlapping others (replacing the record of the same claim is always possible)."""
        if message.lifetime == 0:
            return False  # a lifetime of 0 adds no record
        key = (message.device_id, message.claim_reference, message.domain)
        records = self._by_domain.get(message.domain)
        if records is not None and not records.room_for(key, interval):
            return True
        table_full = self.capacity is not None and self._count >= self.capacity
        share_full = (
            self.per_origin is not None and self._by_origin.get(origin, 0) >= self.per_origin
        )
        if not (table_full or share_full):
            return False
        return self.get(key) is None

    def has_domain(self, domain: DomainID) -> bool:
        """True when some record is in ``domain``."""
        return bool(self._by_domain) and domain in self._by_domain

    def __iter__(self) -> Iterator[ProxyRecord]:
        for records in self._by_domain.values():
            yield from records.by_key.values()

    def get(self, key: ProxyKey) -> ProxyRecord | None:
        """The record of ``key``, or ``None``."""
        records = self._by_domain.get(key[2])
        return None if records is None else records.by_key.get(key)

    def meeting(self, domain: DomainID, interval: Interval) -> list[ProxyRecord]:
        """The records of ``domain`` whose spaces meet ``interval``, in O(log n) plus the
        records found and the short overlapping list."""
        if not self._by_domain:
            return []  # the common case: no Domain ID to hash
        records = self._by_domain.get(domain)
        return [] if records is None else records.meeting(interval)

    def remember(
        self, message: Message, now: float, interval: Interval, origin: Hashable = None
    ) -> tuple[ProxyRecord | None, ProxyRecord | None]:
        """Defend ``message``'s claim: returns (the new record or ``None``, the record it replaced).

        The new record is ``None`` for a lifetime of 0. §5.1: "The lifetime is measured
        from the time the device receives the Claim-Attempt message." The caller checked
        :meth:`full_for` and passes the space's ``interval``.
        """
        key = (message.device_id, message.claim_reference, message.domain)
        records = self._by_domain.get(message.domain)
        if records is None:
            records = self._by_domain[message.domain] = _DomainRecords(message.domain)
        previous = records.by_key.get(key)
        if previous is not None:
            records.remove(previous)
            self._count -= 1
            self._release_share(previous.origin)
        if message.lifetime == 0:
            self._prune(message.domain)
            return None, previous
        record = ProxyRecord(
            *key[:2], message.domain, message.space, self._expiry(message.lifetime, now),
            message.sequence, interval, origin=origin,
        )  # fmt: skip
        records.add(record, next(self._slots))
        self._count += 1
        self._by_origin[origin] = self._by_origin.get(origin, 0) + 1
        return record, previous

    def _release_share(self, origin: Hashable) -> None:
        left = self._by_origin[origin] - 1
        if left:
            self._by_origin[origin] = left
        else:
            del self._by_origin[origin]

    def _expiry(self, lifetime: int, now: float) -> float | None:
        # §5.1: "MUST NOT defend a claim for longer than the period specified in the
        # lifetime"; Choice: nor longer than max_lifetime ("MAY stop ... earlier").
        seconds = None if lifetime == LIFETIME_INFINITE else float(lifetime)
        if self.max_lifetime is not None and (seconds is None or seconds > self.max_lifetime):
            seconds = self.max_lifetime
        return None if seconds is None else now + seconds

    def forget(self, record: ProxyRecord) -> None:
        """Stop defending ``record`` (§5.1: "MUST stop defending a claim once the lifetime
        specified in the Claim-Attempt expires")."""
        self._by_domain[record.domain].remove(record)
        self._count -= 1
        self._release_share(record.origin)
        self._prune(record.domain)

    def _prune(self, domain: DomainID) -> None:
        records = self._by_domain.get(domain)
        if records is not None and not records.by_key:
            del self._by_domain[domain]
