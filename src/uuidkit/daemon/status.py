"""What the claim service reports about itself: the data behind the API's ``status``.

:meth:`~uuidkit.daemon.service.ClaimService.status` returns a :class:`ServiceStatus`, a
snapshot the API server turns into its reply (docs/uiap-api.md, ``status``) without
reading the service's node, state writer or claims itself.

References: UIAP §2.1.1 (the service), §7 (authentication).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from uuidkit.uiap.auth import Authenticator

__all__ = ["ServiceStatus", "auth_status", "node_drops"]


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
