"""``uuidkit uiap status`` for a person: every part of the status reply an operator acts on
is in the lines (held, unverified and proxied claims, the re-verification schedule, the
conflicts seen, a split site, the state writes).

References: UIAP §2.1.2, §4.4, §5.1, §7; docs/uiap-api.md (status).
"""

from __future__ import annotations

from typing import Any

from uuidkit.cli.uiap_status import CONFLICTS_SHOWN, status_lines

NOW = 1_800_000_000.0


def _conflict(number: int) -> dict[str, Any]:
    return {
        "claim": f"c{number}", "domain": "0fff:0000:00d0:0000", "uid": f"{number:02x}",
        "outcome": "lost", "reason": "yielded", "peer": f"{number:016x}", "at": NOW - number,
    }  # fmt: skip


def _body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "device_id": "00112233445566aa", "pid": 7, "version": 1,
        "interfaces": [{"name": "e0", "participating": True}],
        "claims": {"held": 3, "unverified": 1, "claiming": 2, "proxied": 4},
        "verification": {
            "interval": 8.0, "next_due": NOW + 2.5, "claims": [],
            "probes": {"started": 10, "confirmed": 9},
        },
        "conflicts": {
            "count": 5, "kept": 1, "lost": 4, "last": [_conflict(n) for n in range(1, 6)],
        },
        "site_split": {"seen": {"e0": {"auth-missing": 7}}, "warnings": 1},
        "drops": {}, "auth": {"enabled": True},
        "state_write_pending": False, "state_saves": {"written": 6, "failed": 0},
    }  # fmt: skip
    return body | changes


def test_the_lines_show_claims_schedule_conflicts_split_and_state() -> None:
    text = "\n".join(status_lines(_body(), NOW))
    assert "held 3 (unverified 1), claiming 2" in text
    assert "proxy-defended for other devices 4" in text
    assert "every 6-8 s per held claim" in text  # [0.75, 1] x the interval
    assert "(in 2.5 s)" in text and "10 sent, 9 confirmed" in text
    assert "conflicts: 5 seen (kept 1, lost 4)" in text
    shown = [line for line in text.splitlines() if line.startswith("  ")]
    assert len(shown) == CONFLICTS_SHOWN  # the newest ones, with their peer
    assert "claim c5" in shown[-1] and f"peer {5:016x}" in shown[-1]
    assert "SITE SPLIT: another site on e0: auth-missing 7" in text
    assert "state: written (6 saves written, 0 failed)" in text


def test_the_quiet_case_says_none() -> None:
    quiet = _body(
        conflicts={"count": 0, "kept": 0, "lost": 0, "last": []},
        site_split={"seen": {}, "warnings": 0},
        verification={"interval": None, "next_due": None, "claims": []},
    )
    text = "\n".join(status_lines(quiet, NOW))
    assert "conflicts: none seen" in text and "site split: none seen" in text
    assert "re-verification: off" in text
