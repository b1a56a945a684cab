"""Held claims kept honest as the network changes: interface changes and suspected conflicts.

The claim service (:class:`~uuidkit.daemon.service.ClaimService`) inherits this part. A link
that comes up may join this site to another where the same spaces are held (UIAP §2.1.2),
so every held claim is re-verified at once (a reclaim, UIAP §4.4); a link that goes down
leaves the claims held but unverified (a device beyond it could now be granted the same
space) until a re-verification succeeds. A Claim-Deny this device sent against another
device's reclaim means that device held the space too: a suspected conflict, re-verified
once that reclaim has surely ended (two reclaims that meet both fail, UIAP §4.2.2.2).
Watchers hear ``unverified`` and ``suspect`` at once, and the verdict as ``granted`` (how
``verify``) or ``collision``.

References: UIAP §2.1.2, §4.2.2.2, §4.4, §4.5.2.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Callable
from typing import Any

from uuidkit.daemon.record import ClaimRecord, ClaimTable

__all__ = ["Verification"]


class Verification:
    """Re-verification of held claims (mixed into the claim service; see the module).

    References: UIAP §2.1.2, §4.4.
    """

    claims: ClaimTable
    #: Re-verifications after a suspicion: ``started``, ``confirmed``, ``conflicts``.
    suspicions: Counter[str]
    wall_clock: Callable[[], float]
    _interfaces: tuple[str, ...]
    _stopping: bool
    _poller: asyncio.TimerHandle | None

    @property
    def node_interfaces(self) -> tuple[str, ...]:
        raise NotImplementedError

    def _broadcast(self, name: str, fields: dict[str, Any]) -> None:
        raise NotImplementedError

    def _fields(self, record: ClaimRecord) -> dict[str, Any]:
        raise NotImplementedError

    def _run(self, record: ClaimRecord, lifetime: int, *, reclaim: bool) -> ClaimRecord | None:
        raise NotImplementedError

    def _poll_interfaces(self) -> None:
        """Follow the interfaces the node uses (checked every second), UIAP §4.4: a link
        that comes up may join this site to another where the same spaces are held, so
        every held claim is re-verified at once; a link that goes down leaves the claims
        held but unverified (nothing on its far side can be denied any more) until a
        re-verification succeeds."""
        current = self.node_interfaces
        gone = sorted(set(self._interfaces) - set(current))
        came = sorted(set(current) - set(self._interfaces))
        self._interfaces = current
        for name in gone:
            self._broadcast("interface-down", {"interface": name})
            for record in self._held():
                record.verified = False
                self._broadcast("unverified", self._fields(record) | {"reason": "interface-down"})
        for name in came:
            self._broadcast("interface-up", {"interface": name})
        if came:
            for record in self._held():
                self._suspect(record, "interface-up")
        if not self._stopping:
            self._poller = asyncio.get_running_loop().call_later(1.0, self._poll_interfaces)

    def _held(self) -> list[ClaimRecord]:
        return [r for r in self.claims.values() if r.state in ("held", "renewing")]

    def _suspect(self, record: ClaimRecord, reason: str, *, delay: float = 0.0) -> None:
        """Another device may hold ``record``'s space too: say so to the watchers (its
        application stops using the space now, before the verdict) and re-verify it with
        a reclaim (UIAP §4.4) after ``delay`` seconds; its outcome ends the suspicion:
        ``granted`` with ``how`` = ``verify``, or ``collision``. One verification per
        claim at a time: one already pending, or a renewal running, is the verdict, except
        after a link came up: a reclaim that went out before cannot speak for it, so
        another follows it (``recheck``)."""
        if record.state not in ("held", "renewing") or self._stopping:
            return
        if record.state == "renewing" and reason == "interface-up":
            record.recheck = True  # the reclaim running now went out before this link was up
        if record.verifying:
            return
        record.verified, record.verifying = False, True
        self.suspicions["started"] += 1
        self._broadcast("suspect", self._fields(record) | {"reason": reason})
        if record.state == "renewing":
            return  # the renewal running now re-verifies it
        if delay > 0:
            asyncio.get_running_loop().call_later(delay, self._reverify, record)
        else:
            self._reverify(record)

    def _reverify(self, record: ClaimRecord) -> None:
        if self.claims.get(record.id) is not record or self._stopping:
            return  # released, lost or expired meanwhile
        if record.state != "held" or not record.verifying:
            return  # a renewal ran meanwhile and gave the verdict
        lifetime = self._lifetime_left(record)
        if lifetime is None:
            return  # about to expire: nothing left to verify
        record.state = "renewing"
        self._run(record, lifetime, reclaim=True)

    def _lifetime_left(self, record: ClaimRecord) -> int | None:
        """The lifetime a reclaim of ``record`` announces: the full one for a renewed or
        infinite claim, else what is left (UIAP §4.5.2: never longer than it will be
        defended); None when less than a second is left."""
        if record.params.renew or record.expires is None:
            return record.params.lifetime
        left = math.floor(record.expires - self.wall_clock())
        return left if left >= 1 else None
