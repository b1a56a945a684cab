"""The daemon's metrics in the Prometheus text exposition format (version 0.0.4).

:func:`render_metrics` turns the ``status`` reply (docs/uiap-api.md) and the API's claim
outcomes (:class:`ClaimMetrics`) into the text a Prometheus server scrapes: one ``# HELP`` and
one ``# TYPE`` line per family, then its samples. The same text is the ``metrics`` API method
(``uuidkit uiap metrics``), the optional HTTP endpoint and the optional node-exporter textfile
(:mod:`uuidkit.daemon.metrics_export`). Names follow Prometheus conventions: the ``uiapd_``
prefix, base units (seconds), ``_total`` on counters; label values are escaped as the format
requires.

References: UIAP §2.4 (claims and their outcomes), §3 (flooding), §4.3 (Claim-Deny), §7
(authentication), §9 (device ID conflicts); the Prometheus text exposition format.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = ["CONTENT_TYPE", "LATENCY_BUCKETS_S", "ClaimMetrics", "render_metrics"]

#: The HTTP Content-Type of the text format.
CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
#: Upper bounds of the claim-latency histogram, in seconds: a denial comes in milliseconds, a
#: grant takes three claim periods and the timeout (2.5 s with the draft's timers, UIAP §10).
LATENCY_BUCKETS_S: Final = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

#: Engine counters (the node's ``counters.engine``) exported one to one: name, help.
_ENGINE_COUNTERS: Final = (
    ("received", "datagrams_processed_total", "Datagrams the engine processed."),
    ("attempts_originated", "claim_attempts_originated_total", "Claim-Attempt floods sent."),
    ("attempts_received", "claim_attempts_received_total", "New Claim-Attempt floods heard."),
    ("forwarded", "claim_attempts_forwarded_total", "Claim-Attempt datagrams forwarded."),
    ("denied", "claim_denies_sent_total", "Claim-Deny messages this host originated."),
    ("denies_received", "claim_denies_received_total", "Claim-Deny messages received."),
    ("denies_forwarded", "claim_denies_forwarded_total", "Claim-Deny messages forwarded."),
    ("hop_limit_reached", "hop_limit_reached_total", "Claim-Attempts heard with Hop Limit 0."),
    (
        "device_id_conflicts",
        "device_id_conflicts_total",
        "Messages carrying this host's device ID that it never sent (UIAP §9).",
    ),
    (
        "flood_records_evicted",
        "flood_records_evicted_total",
        "Flood records forgotten early because the table was full.",
    ),
    ("events_dropped", "engine_events_dropped_total", "Engine events not queued (queue full)."),
)


class ClaimMetrics:
    """Outcomes and latencies of the claims answered through the API (a histogram).

    References: UIAP §2.4.1 (a claim and its timers), §2.4.2 (denial).
    """

    def __init__(self) -> None:
        self.results: Counter[tuple[str, str]] = Counter()
        self.bucket_counts = [0] * len(LATENCY_BUCKETS_S)
        self.count = 0
        self.latency_sum = 0.0

    def observe(self, result: Mapping[str, Any]) -> None:
        """Count one claim reply (``result``, ``reason``, ``latency`` as the API sends them)."""
        outcome = str(result.get("result", "unknown"))
        self.results[(outcome, str(result.get("reason") or ""))] += 1
        latency = result.get("latency")
        if isinstance(latency, int | float) and math.isfinite(latency) and latency >= 0:
            self.count += 1
            self.latency_sum += float(latency)
            for index, bound in enumerate(LATENCY_BUCKETS_S):
                if latency <= bound:
                    self.bucket_counts[index] += 1


def _escape(value: object) -> str:
    """A label value as the text format needs it: backslash, quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value)) if math.isfinite(value) else ("+Inf" if value > 0 else "NaN")


class _Text:
    """The exposition being written: families in order, each announced once."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, kind: str, text: str) -> None:
        self.lines += [f"# HELP uiapd_{name} {text}", f"# TYPE uiapd_{name} {kind}"]

    def sample(self, name: str, value: float, labels: Mapping[str, object] | None = None) -> None:
        pairs = ",".join(f'{key}="{_escape(v)}"' for key, v in (labels or {}).items())
        self.lines.append(
            f"uiapd_{name}{{{pairs}}} {_number(value)}"
            if pairs
            else f"uiapd_{name} {_number(value)}"
        )

    def labelled(
        self, name: str, kind: str, text: str, label: str, counts: Mapping[str, Any]
    ) -> None:
        self.family(name, kind, text)
        for key in sorted(counts):
            self.sample(name, counts[key], {label: key})


def _claims(out: _Text, claims: ClaimMetrics) -> None:
    out.family("claim_requests_total", "counter", "Claims answered through the API, by outcome.")
    for (outcome, reason), count in sorted(claims.results.items()):
        out.sample("claim_requests_total", count, {"result": outcome, "reason": reason})
    out.family("claim_latency_seconds", "histogram", "Time from a claim request to its answer.")
    for bound, count in zip(LATENCY_BUCKETS_S, claims.bucket_counts, strict=True):
        out.sample("claim_latency_seconds_bucket", count, {"le": _number(bound)})
    out.sample("claim_latency_seconds_bucket", claims.count, {"le": "+Inf"})
    out.sample("claim_latency_seconds_sum", claims.latency_sum)
    out.sample("claim_latency_seconds_count", claims.count)


def _transport(out: _Text, transport: Mapping[str, Any]) -> None:
    for key, name, what in (
        ("received_by_interface", "datagrams_received_total", "Datagrams received"),
        ("sent_by_interface", "datagrams_sent_total", "Datagrams sent"),
        (
            "buffer_overflows_by_interface",
            "receive_buffer_overflows_total",
            "Datagrams the kernel dropped from a full receive queue (a flood)",
        ),
    ):
        out.labelled(name, "counter", f"{what}, by interface.", "interface", transport.get(key, {}))
    out.labelled(
        "send_failures_total",
        "counter",
        "Datagrams that could not be sent, by reason.",
        "reason",
        transport.get("send_failed", {}),
    )


def _auth(out: _Text, auth: Mapping[str, Any]) -> None:
    out.family("auth_enabled", "gauge", "1 when a site key authenticates every datagram.")
    out.sample("auth_enabled", bool(auth.get("enabled")))
    out.labelled(
        "auth_failures_total",
        "counter",
        "Datagrams refused by authentication, by kind.",
        "kind",
        auth.get("dropped", {}),
    )
    for key, name, text in (
        ("sealed", "auth_sealed_total", "Datagrams sealed with the sending key."),
        ("accepted", "auth_accepted_total", "Datagrams whose authentication was accepted."),
    ):
        out.family(name, "counter", text)
        out.sample(name, int(auth.get(key, 0)))
    out.family("auth_key_ids", "gauge", "Site keys accepted on receipt (1 per key ID).")
    for key_id in auth.get("key_ids", []):
        sending = key_id == auth.get("send_key_id")
        out.sample("auth_key_ids", 1, {"key_id": key_id, "sending": "yes" if sending else "no"})


def _tables(out: _Text, tables: Mapping[str, Any]) -> None:
    out.labelled(
        "table_entries", "gauge", "Entries in the engine's tables (proxy_records: claims "
        "proxy-defended for others; flood_records: other devices' floods), by table.",
        "table", tables,
    )  # fmt: skip


def _verification(out: _Text, status: Mapping[str, Any]) -> None:
    verification = status.get("verification", {})
    kinds = {
        "probe": verification.get("probes", {}),
        "suspicion": verification.get("suspicions", {}),
    }
    for key, text in (
        ("started", "Re-verifications of held claims started"),
        ("confirmed", "Re-verifications that found no other holder"),
    ):
        name = f"reverifications_{key}_total"
        out.family(name, "counter", f"{text}, by kind (probe: periodic; suspicion: a reclaim).")
        for kind, counts in kinds.items():
            out.sample(name, int(counts.get(key, 0)), {"kind": kind})
    conflicts = status.get("conflicts", {})
    out.family(
        "conflicts_found_total", "counter", "Other holders of a claim held here found, by "
        "outcome (kept: this host keeps it; lost: its claim ended).",
    )  # fmt: skip
    for outcome in ("kept", "lost"):
        out.sample("conflicts_found_total", int(conflicts.get(outcome, 0)), {"outcome": outcome})


def _sites(out: _Text, split: Mapping[str, Any]) -> None:
    out.family(
        "site_split_datagrams_total", "counter", "Datagrams showing another site on a link "
        "(another key or none), by interface and kind.",
    )  # fmt: skip
    for interface, kinds in sorted(split.get("seen", {}).items()):
        for kind, count in sorted(kinds.items()):
            labels = {"interface": interface, "kind": kind}
            out.sample("site_split_datagrams_total", int(count), labels)
    out.family("site_split_warnings_total", "counter", "Site-split warnings logged.")
    out.sample("site_split_warnings_total", int(split.get("warnings", 0)))


def _gauges(out: _Text, items: Iterable[tuple[str, str, float]]) -> None:
    for name, text, value in items:
        out.family(name, "gauge", text)
        out.sample(name, value)


def render_metrics(status: Mapping[str, Any], claims: ClaimMetrics) -> str:
    """The exposition text of one ``status`` snapshot and the API's claim outcomes.

    References: UIAP §2.4, §3, §4.3, §7, §9; the Prometheus text exposition format.
    """
    out = _Text()
    out.family("info", "gauge", "The daemon's identity (always 1).")
    out.sample("info", 1, {"device_id": status["device_id"], "api_version": status["version"]})
    _gauges(
        out,
        [
            ("uptime_seconds", "Seconds since the daemon started serving.", status["uptime"]),
            ("state_write_pending", "1 while the state file is older than the daemon's claims.",
             bool(status["state_write_pending"])),
            ("api_clients", "API connections open now.", status["api"]["clients"]),
        ],
    )  # fmt: skip
    out.labelled(
        "claims", "gauge", "Claims held or being made, by state.", "state", status["claims"]
    )
    _claims(out, claims)
    engine = status["counters"].get("engine", {})
    for key, name, text in _ENGINE_COUNTERS:
        out.family(name, "counter", text)
        out.sample(name, int(engine.get(key, 0)))
    _transport(out, status["counters"].get("transport", {}))
    out.labelled(
        "datagrams_dropped_total", "counter", "Datagrams dropped, by reason.", "reason",
        status["drops"],
    )  # fmt: skip
    _auth(out, status["auth"])
    out.family("state_write_failures_total", "counter", "Failed writes of the state file.")
    out.sample("state_write_failures_total", int(status["state_write_errors"]))
    out.labelled(
        "state_saves_total", "counter", "Grants and releases whose state write ended, by "
        "result (written, failed); each is answered only then.", "result",
        status.get("state_saves", {}),
    )  # fmt: skip
    _tables(out, status.get("tables", {}))
    _verification(out, status)
    _sites(out, status.get("site_split", {}))
    out.labelled(
        "events_total", "counter", "Events sent to watchers, by name (collision: a conflict "
        "found when a claim was re-verified).", "event", status["events"],
    )  # fmt: skip
    api = status["api"]
    out.family("api_requests_total", "counter", "API requests answered.")
    out.sample("api_requests_total", int(api["requests"]))
    out.family("api_connections_total", "counter", "API connections accepted.")
    out.sample("api_connections_total", int(api.get("connections", 0)))
    out.labelled(
        "api_errors_total", "counter", "API error replies, by code.", "code", api["errors"]
    )
    return "\n".join(out.lines) + "\n"
