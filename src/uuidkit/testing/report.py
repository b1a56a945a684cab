"""What a simulated run produced: every claim's outcome, and the figures of the whole run.

A claim is *wrongly granted* when it succeeds while another device holds a conflicting
claim (two devices holding overlapping spaces at the same time) — the failure UIAP exists
to prevent, and the one loss, partitions and merges can cause (UIAP §2.1.2). A claim is
*conflicting* when, at the moment it was made, another device already held a conflicting
claim: those are the claims that must be denied, so ``wrongly_granted / conflicting`` is
the measured failure rate of the protocol.

References: UIAP §2.1.1, §2.1.2, §2.4.1, §3 (3 attempts), §4.3.2.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ClaimOutcome", "ClaimRecord", "Report", "build_report", "percentile"]


class ClaimOutcome(enum.Enum):
    """How a claim ended.

    References: UIAP §2.4.1, §2.1.2 ("If a UIAP device goes down, its claims will not be
    defended").
    """

    GRANTED = "granted"
    DENIED = "denied"
    #: The device crashed (or was down) before the claim returned a result.
    LOST = "lost"


class ClaimRecord:
    """One claim made by a device's application, filled in as the run proceeds.

    ``requested`` is the scheduled time, ``issued`` when the engine got it (``None`` while
    the device was down), ``decided`` when the result came back, ``expires`` when a granted
    claim's lifetime ends (``None``: infinite). ``reason`` says why it was denied or lost.

    References: UIAP §2.4.1, §4.5.2.
    """

    __slots__ = (
        "conflicting",
        "decided",
        "device",
        "domain",
        "expires",
        "handle",
        "issued",
        "lifetime",
        "lost_at",
        "lost_reason",
        "outcome",
        "proxy",
        "reason",
        "reclaim",
        "requested",
        "space",
        "wrongly_granted",
    )

    def __init__(
        self,
        device: int,
        domain: Any,
        space: Any,
        lifetime: int,
        reclaim: bool,
        proxy: bool,
        requested: float,
    ) -> None:
        self.device = device
        self.domain = domain
        self.space = space
        self.lifetime = lifetime
        self.reclaim = reclaim
        self.proxy = proxy
        self.requested = requested
        self.issued: float | None = None
        self.handle: int | None = None
        self.outcome: ClaimOutcome | None = None
        self.decided: float | None = None
        self.reason: str | None = None
        self.expires: float | None = None
        self.conflicting = False
        self.wrongly_granted = False
        #: When a granted claim was lost to a collision (``ClaimLost``), and why.
        self.lost_at: float | None = None
        self.lost_reason: str | None = None

    def decide(self, outcome: ClaimOutcome, now: float, reason: str | None) -> None:
        """Record the result of the claim.

        References: UIAP §2.4.1.
        """
        self.outcome = outcome
        self.decided = now
        self.reason = reason

    @property
    def latency(self) -> float | None:
        """Seconds from issuing the claim to its result (``None`` until decided).

        References: UIAP §2.4.1, §10 (UIAP_CLAIM_PERIOD, UIAP_CLAIM_TIMEOUT).
        """
        if self.issued is None or self.decided is None:
            return None
        return self.decided - self.issued

    def __repr__(self) -> str:
        return (
            f"ClaimRecord(device={self.device}, space={self.space!r}, reclaim={self.reclaim}, "
            f"outcome={self.outcome}, reason={self.reason!r}, decided={self.decided})"
        )


def percentile(values: list[float], fraction: float) -> float | None:
    """The nearest-rank percentile of ``values`` (``fraction`` in ``(0, 1]``), ``None`` if
    empty.

    References: UIAP §10 (the timers the latencies are made of).
    """
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True, slots=True)
class Report:
    """The figures of one run. Times are seconds of virtual time.

    - ``claims``: claims made; ``granted``/``denied``/``lost`` by outcome; ``pending``:
      claims with no result when the run stopped (a stuck claim, if the run was long enough).
    - ``wrongly_granted``: granted while another device held a conflicting claim;
      ``conflicting``: made while another device held a conflicting claim.
    - ``messages``: datagrams sent by all engines (one per multicast or unicast send);
      ``messages_per_claim``: ``messages / claims``.
    - ``latency_p50``/``latency_p99``: claim latency percentiles (issue to result), seconds.
    - ``drops``: datagrams not delivered or not acted on, by reason (network and engines).
    - ``events``: simulator entries processed; ``duration``: virtual time at the end.

    References: UIAP §2.4.1, §2.1.2.
    """

    claims: int
    granted: int
    denied: int
    lost: int
    pending: int
    wrongly_granted: int
    conflicting: int
    messages: int
    messages_per_claim: float
    latency_p50: float | None
    latency_p99: float | None
    drops: Mapping[str, int]
    events: int
    duration: float

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with every field (``drops`` sorted by reason).

        References: UIAP §2.4.1.
        """
        result = {name: getattr(self, name) for name in self.__dataclass_fields__}
        result["drops"] = dict(sorted(self.drops.items()))
        return result

    def format_table(self) -> str:
        """The report as a two-column text table, drops last.

        References: UIAP §2.4.1.
        """
        rows: list[tuple[str, str]] = []
        for name in self.__dataclass_fields__:
            if name == "drops":
                continue
            rows.append((name, _format_value(getattr(self, name))))
        rows.extend((f"drop: {reason}", str(count)) for reason, count in sorted(self.drops.items()))
        width = max(len(label) for label, _ in rows)
        return "\n".join(f"{label:<{width}}  {value}" for label, value in rows)


def _format_value(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def build_report(
    records: Iterable[ClaimRecord],
    messages: int,
    drops: Mapping[str, int],
    events: int,
    duration: float,
) -> Report:
    """Summarise the claim records and counters of a run into a :class:`Report`.

    References: UIAP §2.4.1.
    """
    claims = list(records)
    outcomes = [record.outcome for record in claims]
    latencies = [
        latency
        for record in claims
        if record.outcome in (ClaimOutcome.GRANTED, ClaimOutcome.DENIED)
        and (latency := record.latency) is not None
    ]
    return Report(
        claims=len(claims),
        granted=outcomes.count(ClaimOutcome.GRANTED),
        denied=outcomes.count(ClaimOutcome.DENIED),
        lost=outcomes.count(ClaimOutcome.LOST),
        pending=outcomes.count(None),
        wrongly_granted=sum(record.wrongly_granted for record in claims),
        conflicting=sum(record.conflicting for record in claims),
        messages=messages,
        messages_per_claim=messages / len(claims) if claims else 0.0,
        latency_p50=percentile(latencies, 0.50),
        latency_p99=percentile(latencies, 0.99),
        drops=dict(drops),
        events=events,
        duration=duration,
    )
