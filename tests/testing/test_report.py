"""The report: counts, percentiles, JSON and the table."""

from __future__ import annotations

import json

from uuidkit.testing import ClaimOutcome, ClaimRecord, build_report, percentile


def record(outcome: ClaimOutcome | None, latency: float | None = None) -> ClaimRecord:
    claim = ClaimRecord(0, "d", "s", 60, False, False, 0.0)
    if outcome is not None:
        claim.issued = 1.0
        claim.decide(outcome, 1.0 + (latency or 0.0), None)
    return claim


def test_nearest_rank_percentiles() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 0.5), percentile(values, 0.99)) == (50.0, 99.0)
    assert percentile([3.0], 0.99) == 3.0 and percentile([], 0.5) is None


def test_counts_and_latency_cover_decided_claims_only() -> None:
    claims = [
        record(ClaimOutcome.GRANTED, 2.5),
        record(ClaimOutcome.DENIED, 0.5),
        record(ClaimOutcome.LOST),
        record(None),
    ]
    claims[0].wrongly_granted = claims[0].conflicting = True
    report = build_report(claims, messages=10, drops={"x": 2}, events=40, duration=9.0)
    assert (report.claims, report.granted, report.denied, report.lost, report.pending) == (
        4,
        1,
        1,
        1,
        1,
    )
    assert (report.wrongly_granted, report.conflicting) == (1, 1)
    assert (report.messages_per_claim, report.latency_p50, report.latency_p99) == (2.5, 0.5, 2.5)


def test_json_has_the_documented_keys_and_the_table_every_field() -> None:
    report = build_report([record(ClaimOutcome.GRANTED, 2.5)], 3, {"b": 1, "a": 2}, 5, 2.5)
    data = json.loads(json.dumps(report.to_json()))
    for key in (
        "claims",
        "granted",
        "denied",
        "wrongly_granted",
        "messages_per_claim",
        "latency_p50",
        "latency_p99",
    ):
        assert key in data
    assert list(data["drops"]) == ["a", "b"]
    table = report.format_table().splitlines()
    assert table[0].split() == ["claims", "1"]
    assert table[-2:] == ["drop: a             2", "drop: b             1"]


def test_an_empty_run() -> None:
    report = build_report([], 0, {}, 0, 0.0)
    assert (report.claims, report.messages_per_claim, report.latency_p99) == (0, 0.0, None)
    assert "latency_p50         -" in report.format_table()
