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

References: UIAP §4.1, §4.5.1, §4.5.2, §5.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, TypeAlias

from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.engine_types import LIFETIME_INFINITE
from uuidkit.uiap.message import Message
from uuidkit.uiap.space import Interval, UIDSpace

__all__ = ["ProxyKey", "ProxyRecord", "ProxyTable"]

#: (claimant's device ID, Claim Reference Number, Domain ID): one claim of one device.
ProxyKey: TypeAlias = tuple[int, int, DomainID]

_NONE: Final[dict[ProxyKey, ProxyRecord]] = {}


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

    @property
    def key(self) -> ProxyKey:
        """The identity of the claim this record defends."""
        return (self.claimant, self.reference, self.domain)


class ProxyTable:
    """Proxy records, indexed by domain so a Claim-Attempt is compared with its own domain.

    References: UIAP §5.1.
    """

    __slots__ = ("_by_domain", "_count", "capacity", "max_lifetime")

    def __init__(self, capacity: int | None = None, max_lifetime: float | None = None) -> None:
        self.capacity = capacity
        self.max_lifetime = max_lifetime
        self._by_domain: dict[DomainID, dict[ProxyKey, ProxyRecord]] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def full_for(self, message: Message) -> bool:
        """True when ``message`` would add a record beyond ``capacity`` (replacing the
        record of the same claim is always possible)."""
        if self.capacity is None or self._count < self.capacity or message.lifetime == 0:
            return False  # a lifetime of 0 adds no record
        key = (message.device_id, message.claim_reference, message.domain)
        return self.get(key) is None

    def has_domain(self, domain: DomainID) -> bool:
        """True when some record is in ``domain``."""
        return bool(self._by_domain) and domain in self._by_domain

    def __iter__(self) -> Iterator[ProxyRecord]:
        for records in self._by_domain.values():
            yield from records.values()

    def get(self, key: ProxyKey) -> ProxyRecord | None:
        """The record of ``key``, or ``None``."""
        return self._by_domain.get(key[2], _NONE).get(key)

    def in_domain(self, domain: DomainID) -> Iterator[ProxyRecord]:
        """Every record of ``domain``."""
        if not self._by_domain:
            return iter(())  # the common case: no Domain ID to hash
        return iter(self._by_domain.get(domain, _NONE).values())

    def remember(
        self, message: Message, now: float, interval: Interval
    ) -> tuple[ProxyRecord | None, ProxyRecord | None]:
        """Defend ``message``'s claim: returns (the new record or ``None``, the record it replaced).

        The new record is ``None`` for a lifetime of 0. §5.1: "The lifetime is measured
        from the time the device receives the Claim-Attempt message." The caller checked
        :meth:`full_for` and passes the space's ``interval``.
        """
        key = (message.device_id, message.claim_reference, message.domain)
        records = self._by_domain.setdefault(message.domain, {})
        previous = records.pop(key, None)
        if previous is not None:
            self._count -= 1
        if message.lifetime == 0:
            self._prune(message.domain)
            return None, previous
        record = ProxyRecord(
            *key[:2], message.domain, message.space, self._expiry(message.lifetime, now),
            message.sequence, interval,
        )  # fmt: skip
        records[key] = record
        self._count += 1
        return record, previous

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
        del self._by_domain[record.domain][record.key]
        self._count -= 1
        self._prune(record.domain)

    def _prune(self, domain: DomainID) -> None:
        if not self._by_domain.get(domain):
            self._by_domain.pop(domain, None)
