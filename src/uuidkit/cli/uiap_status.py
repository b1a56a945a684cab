"""``uuidkit uiap status`` for a person: the ``status`` reply (docs/uiap-api.md) in lines.

Claims held, being made, unverified and proxy-defended for other devices; when held claims
are next re-verified; the conflicts seen with other holders; datagrams that show another site
on a link; drops; authentication; whether the state directory is written.

References: UIAP §2.1.2 (merges), §4.4 (reclaim), §5.1 (proxy defense), §7.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["status_lines"]

#: Conflicts listed (the newest), of the ``last`` the daemon keeps.
CONFLICTS_SHOWN: Final = 3


def status_lines(body: Mapping[str, Any], now: float) -> list[str]:
    """The lines printed for the ``status`` reply ``body`` at Unix time ``now``.

    References: UIAP §2.1.2, §4.4, §5.1, §7.
    """
    names = [i["name"] for i in body["interfaces"] if i.get("participating", True)]
    claims = body["claims"]
    lines = [
        f"device ID {body['device_id']}, pid {body['pid']}, protocol {body['version']}",
        f"interfaces: {', '.join(names) or 'none'}",
        f"claims: held {claims.get('held', 0)} (unverified {claims.get('unverified', 0)}), "
        f"claiming {claims.get('claiming', 0)}, reclaiming {claims.get('reclaiming', 0)}; "
        f"proxy-defended for other devices {claims.get('proxied', 0)}",
        _verification(body.get("verification", {}), now),
        *_conflicts(body.get("conflicts", {})),
        _site_split(body.get("site_split", {})),
        f"drops: {json.dumps(body['drops'], sort_keys=True)}",
        f"authentication: {'on' if body['auth']['enabled'] else 'off'}",
        _state(body),
    ]
    return lines


def _stamp(unix: float) -> str:
    return datetime.datetime.fromtimestamp(unix, datetime.UTC).isoformat(timespec="seconds")


def _at(unix: float, now: float) -> str:
    return f"{_stamp(unix)} (in {max(0.0, unix - now):.1f} s)"


def _verification(verification: Mapping[str, Any], now: float) -> str:
    interval = verification.get("interval")
    if interval is None:
        return "re-verification: off (the draft's behaviour: only renewals re-check a claim)"
    period = f"every {0.75 * interval:g}-{interval:g} s per held claim"
    due = verification.get("next_due")
    probes = verification.get("probes", {})
    counts = f"{probes.get('started', 0)} sent, {probes.get('confirmed', 0)} confirmed"
    return f"re-verification: {period}; next {'none' if due is None else _at(due, now)}; {counts}"


def _conflicts(conflicts: Mapping[str, Any]) -> list[str]:
    if not conflicts.get("count"):
        return ["conflicts: none seen"]
    lines = [
        f"conflicts: {conflicts['count']} seen (kept {conflicts.get('kept', 0)}, "
        f"lost {conflicts.get('lost', 0)})"
    ]
    for entry in list(conflicts.get("last", []))[-CONFLICTS_SHOWN:]:
        space = entry.get("uid") or entry.get("prefix") or "..".join(entry.get("range", []))
        peer = entry.get("peer") or "unknown"
        lines.append(
            f"  {_stamp(entry['at'])}  claim {entry['claim']}  "
            f"{entry['domain']} {space}  {entry['outcome']} ({entry['reason']}), peer {peer}"
        )
    return lines


def _site_split(split: Mapping[str, Any]) -> str:
    seen = split.get("seen", {})
    if not seen:
        return "site split: none seen"
    parts = [
        f"{interface}: " + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))
        for interface, kinds in sorted(seen.items())
    ]
    return f"SITE SPLIT: another site on {'; '.join(parts)} (see the daemon's log)"


def _state(body: Mapping[str, Any]) -> str:
    saves = body.get("state_saves", {})
    written = f"{saves.get('written', 0)} saves written, {saves.get('failed', 0)} failed"
    if body.get("state_write_pending"):
        return (
            f"state: NOT WRITTEN, retrying ({body.get('state_write_last_error')}; "
            f"{body.get('state_write_errors')} failed writes; {written})"
        )
    return f"state: written ({written})"
