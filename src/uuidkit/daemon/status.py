"""What the claim service reports about itself: the data behind the API's ``status``.

:meth:`~uuidkit.daemon.service.ClaimService.status` returns a :class:`ServiceStatus`, a
snapshot the API server turns into its reply (docs/uiap-api.md, ``status``) without
reading the service's node, state writer or claims itself.

References: UIAP §2.1.1 (the service), §7 (authentication).
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from uuidkit.uiap.auth import Authenticator
from uuidkit.uiap.events import DeviceIDConflictSuspected

__all__ = ["ConflictLog", "DeviceIDConflicts", "ServiceStatus", "auth_status", "node_drops"]

_log = logging.getLogger("uuidkit.daemon")


@dataclass(frozen=True)
class ServiceStatus:
    """A snapshot of the claim service, its node and its state directory (JSON-ready parts).

    References: UIAP §2.1.1, §4.1 (device ID), §7.
    """

    #: The node's Originating Device ID (UIAP §4.1).
    device_id: int
    #: The node's interfaces, as its own status lists them.
    interfaces: list[Any]
    #: Claims by public state (``claiming``, ``held``, ...).
    claims: dict[str, int]
    #: The node's own status: transport and engine counters.
    counters: dict[str, Any]
    #: Dropped datagrams by reason: transport, engine and authentication together.
    drops: dict[str, int]
    #: Events sent to watchers, by name.
    events: dict[str, int]
    #: Failed state writes since the start.
    state_write_errors: int
    #: The last state write failed: the file is older than the service's claims.
    state_write_pending: bool
    #: Why the most recent state write failed, or None.
    state_write_last_error: str | None
    #: The outcome of each reclaim after the last start.
    restored: list[dict[str, Any]]
    #: The site key's counters (``{"enabled": False}`` without one).
    auth: dict[str, Any]
    #: Device-ID conflicts suspected since the start (:class:`DeviceIDConflicts`).
    device_id_conflicts: dict[str, Any] = field(default_factory=dict)
    #: Entries in the engine's tables (:meth:`~uuidkit.uiap.engine.Engine.table_sizes`).
    tables: dict[str, int] = field(default_factory=dict)
    #: Re-verification of held claims: the period, the next due, each claim's next, counts.
    verification: dict[str, Any] = field(default_factory=dict)
    #: Conflicts with another holder seen since the start (:class:`ConflictLog`).
    conflicts: dict[str, Any] = field(default_factory=dict)
    #: Changes of the claims whose state write ended, by outcome (``written``, ``failed``).
    state_saves: dict[str, int] = field(default_factory=dict)
    #: Datagrams that show another site on a link (:mod:`uuidkit.daemon.sitesplit`).
    site_split: dict[str, Any] = field(default_factory=dict)


def node_drops(node_status: Mapping[str, Any]) -> dict[str, int]:
    """Every dropped-datagram count of a node's status by reason (transport and engine).

    References: UIAP §2.4 (a device drops what it cannot use).
    """
    drops: Counter[str] = Counter()
    for part in ("transport", "engine"):
        drops.update(node_status.get(part, {}).get("dropped", {}))
    return dict(drops)


def auth_status(authenticator: Authenticator | None) -> dict[str, Any]:
    """The site-key authenticator's keys and counters, JSON-ready.

    References: UIAP §7 (security considerations).
    """
    if authenticator is None:
        return {"enabled": False}
    stats = authenticator.stats
    return {
        "enabled": True,
        "send_key_id": authenticator.keys.send_key_id,
        "key_ids": sorted(authenticator.keys.keys),
        "sealed": stats.sealed,
        "accepted": stats.accepted,
        "new_indices": stats.new_indices,
        "senders": authenticator.senders,
        "dropped": {reason.value: count for reason, count in stats.dropped.items()},
    }


class DeviceIDConflicts:
    """Device-ID conflicts suspected at run time (UIAP §9), as the daemon reports them.

    The engine finds them (a message carrying this device's ID that it never sent) and
    applies the draft's remedy: a new random sequence number when the other device's is
    close to ours, so no two messages share a Message ID. This counts them, keeps the last,
    and logs a warning at most once every ``log_every_s`` seconds (a flood of them is one
    line a minute, with the number left out), naming the likely cause.

    References: UIAP §9 (Other Concerns), §4.1 (the device ID).
    """

    #: Seconds between two warnings in the log.
    LOG_EVERY_S: Final = 60.0

    def __init__(self, device_id: int, log_every_s: float = LOG_EVERY_S) -> None:
        self.device_id = device_id
        self.log_every_s = log_every_s
        self.count = 0
        self.resequenced = 0
        self.last: dict[str, Any] | None = None
        self._logged_at: float | None = None
        self._unlogged = 0

    def record(
        self, event: DeviceIDConflictSuspected, now: float, unix_now: float
    ) -> dict[str, Any]:
        """Count ``event`` (seen at monotonic ``now``); the fields of its API event."""
        self.count += 1
        self.resequenced += event.resequenced
        fields = {
            "device_id": f"{self.device_id:016x}",
            "source": str(event.source),
            "interface": str(event.interface),
            "sequence": event.sequence,
            "resequenced": event.resequenced,
        }
        self.last = fields | {"at": round(unix_now, 3)}
        if self._logged_at is not None and now - self._logged_at < self.log_every_s:
            self._unlogged += 1
            return fields
        remedy = (
            "its sequence number was close to ours, so ours moved away (the draft's remedy)"
            if event.resequenced
            else "its sequence number is far from ours: no Message ID is shared yet"
        )
        _log.warning(
            "another device may use our device ID %016x (UIAP §9): a message from %s on %s "
            "carries it, sequence %d, which this device never sent; %s. Two daemons sharing a "
            "copied state directory do this: give each device its own%s",
            self.device_id,
            event.source,
            event.interface,
            event.sequence,
            remedy,
            f" ({self._unlogged} more since the last warning)" if self._unlogged else "",
        )
        self._logged_at, self._unlogged = now, 0
        return fields

    def summary(self) -> dict[str, Any]:
        """``count``, ``resequenced`` (how many moved our sequence numbers) and ``last``."""
        return {"count": self.count, "resequenced": self.resequenced, "last": self.last}


class ConflictLog:
    """Conflicts with another holder of a claim held here, as ``status`` reports them.

    Each is one claim of this daemon meeting another device that held an intersecting space
    (after a merge or a loss, UIAP §2.1.2): ``kept`` when this daemon denied that device's
    reclaim or won the tie-break, ``lost`` when its claim ended (a collision). ``peer`` is
    the other device's ID when the wire names it (the reclaimer, the tie-break's winner),
    else None (a Claim-Deny names only the attempt it answers, UIAP §4.3). The last
    :data:`KEPT_LAST` are kept.

    References: UIAP §2.1.2, §4.2.2.2, §4.3, §4.4.
    """

    #: Conflicts listed in ``status`` (the newest last).
    KEPT_LAST: Final = 8

    def __init__(self) -> None:
        self.by_outcome: Counter[str] = Counter()
        self.last: deque[dict[str, Any]] = deque(maxlen=self.KEPT_LAST)

    def record(
        self, outcome: str, fields: Mapping[str, Any], reason: str, peer: int | None, at: float
    ) -> None:
        """Count one conflict of the claim ``fields`` describe, seen at Unix time ``at``."""
        self.by_outcome[outcome] += 1
        self.last.append(
            {
                **fields,
                "outcome": outcome,
                "reason": reason,
                "peer": None if peer is None else f"{peer:016x}",
                "at": round(at, 3),
            }
        )

    def summary(self) -> dict[str, Any]:
        """``count``, ``kept``, ``lost`` and ``last`` (JSON-ready)."""
        return {
            "count": sum(self.by_outcome.values()),
            "kept": self.by_outcome["kept"],
            "lost": self.by_outcome["lost"],
            "last": list(self.last),
        }


def verification_status(
    schedule: Mapping[int, float],
    claim_ids: Mapping[int, str],
    interval: float | None,
    to_unix: float,
    counts: Mapping[str, Mapping[str, int]],
) -> dict[str, Any]:
    """The ``status`` reply's ``verification``: ``interval`` (each wait is drawn from
    [0.75, 1] x it; null: the draft, no periodic re-verification), ``next_due`` and per
    held claim ``next`` (Unix seconds: engine time + ``to_unix``), and the counts.

    ``schedule`` is the engine's (:meth:`~uuidkit.uiap.engine.Engine.verification_schedule`),
    ``claim_ids`` maps the engine's handles to claim IDs.

    References: UIAP §2.1.2, §4.4.
    """
    due = sorted(
        (round(at + to_unix, 3), claim_ids[handle])
        for handle, at in schedule.items()
        if handle in claim_ids
    )
    claims = [{"claim": claim, "next": at} for at, claim in due]
    return {
        "interval": interval,
        "next_due": due[0][0] if due else None,
        "claims": claims,
        **{kind: dict(values) for kind, values in counts.items()},
    }
