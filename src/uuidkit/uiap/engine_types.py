"""The engine's configuration, its counters, and the datagrams it asks its caller to send.

Kept apart from :mod:`uuidkit.uiap.engine` (which re-exports every name) so the engine
module holds only protocol behaviour.

References: UIAP §2.4.1, §3.1, §4.1, §4.2.2.1, §4.3.2, §4.4, §4.5.2, §5.1, §9, §10.
"""

from __future__ import annotations

import enum
import math
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Final

from uuidkit.errors import EngineError
from uuidkit.uiap.constants import (
    UIAP_CLAIM_PERIOD_S,
    UIAP_CLAIM_TIMEOUT_S,
    UIAP_HOP_LIMIT,
    UIAP_NEW_CLAIM_ATTEMPTS,
    UIAP_RECLAIM_ATTEMPTS,
)
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.events import DropReason
from uuidkit.uiap.space import UIDSpace

__all__ = [
    "DEFAULT_ENGINE_CONFIG",
    "LIFETIME_INFINITE",
    "MULTICAST",
    "EngineConfig",
    "EngineStats",
    "Multicast",
    "Transmit",
]

#: A Lifetime of all one bits means "for ever": UIAP §4.5.2 makes the field "semantically
#: identical to that of IPv6 address lifetimes", and RFC 4861 §4.6.2 reads 0xffffffff as
#: infinity.
LIFETIME_INFINITE: Final = 0xFFFF_FFFF


class Multicast(enum.Enum):
    """The type of :data:`MULTICAST`, the destination of every Claim-Attempt.

    References: UIAP §2.4.1, §8.1 (Claim-Attempts go to the multicast group).
    """

    MULTICAST = "multicast"


#: ``Transmit.destination`` of a datagram for the UIAP multicast group (UIAP §3.1, §4.2).
MULTICAST: Final = Multicast.MULTICAST


@dataclass(frozen=True, slots=True)
class Transmit:
    """One datagram to send: out ``interface`` to ``destination``.

    ``destination`` is :data:`MULTICAST` for a Claim-Attempt, or for a Claim-Deny the
    ``source`` address that was passed to ``receive_datagram`` with the Claim-Attempt
    (unicast next hop, UIAP §4.3.2).

    References: UIAP §2.4.3, §2.4.5, §4.2, §4.3.2.
    """

    interface: Hashable
    destination: Hashable
    data: bytes


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """Counts and times of one engine; the defaults are the draft's (UIAP §10, §2.4.1, §4.4).

    §4.2.2.3: "A UIAP device MAY choose any appropriate values for the number of claim
    attempts sent during a claim and the for the various times."

    References: UIAP §2.4.1, §4.1, §4.2.2.1, §4.2.2.3, §4.4, §5.1, §9, §10.
    """

    #: UIAP_CLAIM_PERIOD, seconds between the Claim-Attempt floods of one claim (§10).
    claim_period: float = UIAP_CLAIM_PERIOD_S
    #: UIAP_CLAIM_TIMEOUT, seconds to wait for a Claim-Deny after the last period (§10).
    claim_timeout: float = UIAP_CLAIM_TIMEOUT_S
    #: Claim-Attempt floods per new claim, in messages (§2.4.1: 3).
    claim_attempts: int = UIAP_NEW_CLAIM_ATTEMPTS
    #: Claim-Attempt floods per reclaim, in messages (§4.4: 1; MAY send more).
    reclaim_attempts: int = UIAP_RECLAIM_ATTEMPTS
    #: Hop Limit of each Claim-Attempt flood this device originates, in hops (§4.1: 32).
    #: It is not the IP hop limit (a transport sends every flood with IP hop limit 1), and
    #: it does not apply to Claim-Denies, which always start at 32 (§2.4.5 "Reset hop
    #: limit to maximum (currently 32)", §4.3.1).
    hop_limit: int = UIAP_HOP_LIMIT
    #: Seconds a flood record is kept after its last copy: the draft's "X seconds"
    #: (§4.2.2.1). Choice: 10 s, four times a new claim's 2.5 s, so a record outlives the
    #: whole claim and its denies on the small, low-latency sites UIAP is for (§1).
    flood_record_lifetime: float = 10.0
    #: Whether this device defends other devices' X+R claims (§5.1 is an extension).
    proxy_defense: bool = True
    #: Sequence numbers: a foreign message with our device ID closer than this to our
    #: current number makes us jump away (§9 "close"). Choice: 2**16.
    sequence_guard: int = 1 << 16
    #: Whether every dropped datagram also queues a ``MessageDropped`` event (the counts
    #: in ``Engine.stats`` are kept either way).
    drop_events: bool = True
    #: Flood records of other devices' Claim-Attempts kept at most, in records. When full,
    #: the record whose last copy is oldest is forgotten (counted in
    #: ``EngineStats.flood_records_evicted``). This device's own floods are kept apart and
    #: never evicted (§4.2.2.3 MUST remember them).
    max_flood_records: int = 8192
    #: Proxy records kept at most, in records; an X+R Claim-Attempt beyond is forwarded
    #: but not defended (``DropReason.PROXY_TABLE_FULL``; §5.1 proxy defense is a MAY).
    max_proxy_records: int = 1024
    #: Proxy records one (interface, source) may hold at most, so that no single source
    #: (forging claimant device IDs at will) can fill the table: beyond, its X+R claims are
    #: forwarded but not defended (``PROXY_TABLE_FULL``). Choice: 256, a quarter of the
    #: table: a relay carrying a busy site's announcements stays below, and at least four
    #: sources are needed to fill it.
    max_proxy_records_per_source: int = 256
    #: Seconds a proxied claim is defended at most from receipt, whatever its Lifetime
    #: (infinite included); ``None`` for no cap. §5.1: a proxy "MAY stop defending a
    #: claim at any earlier time". Choice: 24 s, three re-verification intervals: a
    #: uuidkit claimant re-announces X+R with every re-verification (6-8 s), so its
    #: proxies stay refreshed, while one forged X+R datagram blocks a range for 24 s, not
    #: an hour. A site with a key (forgeries never reach the engine) may raise it;
    #: ``draft_only()`` keeps the hour (a draft-only claimant announces once).
    max_proxy_lifetime: float | None = 24.0
    #: New Claim-Attempts admitted per second from one (interface, source), and the
    #: bucket size in Claim-Attempts; ``None`` disables the limit. Copies of known floods
    #: and Claim-Denies are not limited. Choice: 100/s, bursts of 500 -- a claim is three
    #: floods, so a neighbour relaying a busy site (30 new claims a second) stays below.
    #: A refused Claim-Attempt is not recorded or forwarded, but still denied if it
    #: conflicts with a claim this device defends.
    source_rate: float | None = 100.0
    source_burst: int = 500
    #: New Claim-Attempts admitted per second on one interface, whatever the sources,
    #: and the bucket size; ``None`` disables the limit. Choice: 400/s, bursts of 2000:
    #: with the 10 s record lifetime a link adds at most 6,000 flood records, under the
    #: 8192 cap.
    interface_rate: float | None = 400.0
    interface_burst: int = 2000
    #: Per-source rate buckets kept at most (least recently used forgotten first).
    max_tracked_sources: int = 1024
    #: Flood records kept at most for Claim-Attempts over a rate limit, apart from the
    #: others; 0 to neither record nor forward those. Such an attempt is still compared
    #: and denied, and is now recorded here (the oldest forgotten first) and forwarded
    #: (§4.2.2.1 "MUST forward"), so a full bucket never stops a relay forwarding honest
    #: floods or relaying their denies; it creates no proxy record. A flood of them churns
    #: only this table, never the records of admitted floods.
    max_overflow_records: int = 4096
    #: Runs of our own sequence numbers remembered for §9 (one per jump away from a
    #: device sharing our ID), at most; older runs are forgotten.
    max_sequence_runs: int = 16
    #: Events queued at most that the network causes (``MessageDropped``,
    #: ``ClaimDefended``, ``ProxyDefended``, ``ProxyDefenseStarted``/``Ended``,
    #: ``DeviceIDConflictSuspected``); beyond, they are counted in
    #: ``EngineStats.events_dropped`` and not queued. Results of this device's own claims
    #: are always queued.
    max_queued_events: int = 4096
    #: Beyond the draft (docs/uiap.md "Beyond the draft"). Transmissions of every
    #: Claim-Attempt and Claim-Deny this device originates or forwards, per interface,
    #: ``copy_gap`` seconds apart; 1 is the draft. Extra copies carry the same Message ID,
    #: so any receiver drops them as known floods (§4.2.2.1) or further denies (§4.3.2):
    #: the wire format is unchanged. Choice: 2, which takes a hop's loss from p to p**2.
    copies: int = 2
    #: Seconds between the copies of one datagram (spread, so a short burst of loss
    #: does not take them all).
    copy_gap: float = 0.005
    #: Beyond the draft. Longest seconds between two re-verifications of a held claim (a
    #: single Claim-Attempt with R set, as a reclaim, §4.4); each wait is drawn from
    #: [0.75, 1] x this. ``None`` is the draft: a held claim is never re-checked (§2.1.2).
    verify_interval: float | None = 8.0
    #: Beyond the draft. When two claims both marked R (§4.4: each claimant "believes that
    #: this UID has previously been successfully claimed") meet, the larger Originating
    #: Device ID keeps the space and the other yields at once, without denying; ``False``
    #: is the draft's rule (§4.2.2.2: both deny, both fail).
    tie_break: bool = True

    @classmethod
    def draft_only(cls, **overrides: object) -> EngineConfig:
        """A configuration with every behaviour beyond the draft switched off: one copy per
        datagram, no re-verification, the draft's rule for simultaneous reclaims.

        References: UIAP §2.1.2, §4.2.2.2, §4.3.2.
        """
        fields: dict[str, object] = {
            "copies": 1,
            "verify_interval": None,
            "tie_break": False,
            "max_proxy_lifetime": 3600.0,
        }
        fields.update(overrides)
        return cls(**fields)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        if not self.claim_period >= 0 or not self.claim_timeout >= 0:
            raise EngineError("claim_period and claim_timeout must be >= 0 seconds")
        if self.claim_attempts < 1 or self.reclaim_attempts < 1:
            raise EngineError("claim_attempts and reclaim_attempts must be >= 1 message")
        if not 0 <= self.hop_limit <= 0xFF:
            raise EngineError(f"hop_limit must fit the 1-octet field, got {self.hop_limit}")
        if not self.flood_record_lifetime > 0:
            raise EngineError("flood_record_lifetime must be > 0 seconds")
        # §4.2.2.3: "a device MUST remember Claim-Attempt messages that it originates":
        # the record of a claim's first attempt must outlive the claim, or a late deny
        # for it would be dropped as unmatched.
        longest_claim = self.longest_claim_seconds()
        if not self.flood_record_lifetime > longest_claim:
            raise EngineError(
                f"flood_record_lifetime must exceed the longest claim ({longest_claim} s), "
                f"got {self.flood_record_lifetime}"
            )
        self._check_limits()
        if type(self.copies) is not int or not 1 <= self.copies <= 8:
            raise EngineError(f"copies must be an int of 1 .. 8, got {self.copies!r}")
        if not 0 <= self.copy_gap < float("inf"):
            raise EngineError(f"copy_gap must be a finite number >= 0, got {self.copy_gap!r}")
        if self.verify_interval is not None and not 0 < self.verify_interval < float("inf"):
            raise EngineError(
                f"verify_interval must be None or a finite number > 0, got {self.verify_interval!r}"
            )

    def _check_limits(self) -> None:
        counts = {
            "max_flood_records": self.max_flood_records,
            "max_proxy_records": self.max_proxy_records,
            "max_proxy_records_per_source": self.max_proxy_records_per_source,
            "source_burst": self.source_burst,
            "interface_burst": self.interface_burst,
            "max_tracked_sources": self.max_tracked_sources,
            "max_sequence_runs": self.max_sequence_runs,
            "max_queued_events": self.max_queued_events,
        }
        for name, value in counts.items():
            if type(value) is not int or value < 1:
                raise EngineError(f"{name} must be an int >= 1, got {value!r}")
        overflow = self.max_overflow_records
        if type(overflow) is not int or overflow < 0:
            raise EngineError(f"max_overflow_records must be an int >= 0, got {overflow!r}")
        rates = {
            "source_rate": self.source_rate,
            "interface_rate": self.interface_rate,
            "max_proxy_lifetime": self.max_proxy_lifetime,
        }
        for name, rate in rates.items():
            if rate is not None and not 0 <= rate < float("inf"):
                raise EngineError(f"{name} must be None or a finite number >= 0, got {rate!r}")

    def longest_claim_seconds(self) -> float:
        """Seconds from a claim's first Claim-Attempt to its result (new claim or reclaim)."""
        attempts = max(self.claim_attempts, self.reclaim_attempts)
        return attempts * self.claim_period + self.claim_timeout

    def shortest_claim_seconds(self) -> float:
        """Seconds from a claim's first Claim-Attempt to the earliest grant (new claim or
        reclaim, no deny heard): no device can be granted a space sooner after it starts
        claiming it. A holder that stops defending (its daemon killed) is therefore safe to
        generate with for this long after it stopped, less a margin for clock rates.

        References: UIAP §2.4.1 (Claim_Period, Claim_Timeout), §4.4, §10.
        """
        attempts = min(self.claim_attempts, self.reclaim_attempts)
        return attempts * self.claim_period + self.claim_timeout


#: The draft's defaults: what ``Engine`` uses when given no configuration.
DEFAULT_ENGINE_CONFIG: Final = EngineConfig()


@dataclass(slots=True)
class EngineStats:
    """Counts of what one engine did (messages are counted once per datagram).

    References: UIAP §2.4, §4.2.2.1, §4.3.2.
    """

    #: Datagrams passed to ``receive_datagram``.
    received: int = 0
    #: New Claim-Attempt floods received and processed.
    attempts_received: int = 0
    #: Claim-Deny messages received and decoded.
    denies_received: int = 0
    #: Claim-Attempt floods this device originated (each sent out every interface).
    attempts_originated: int = 0
    #: Claim-Attempt datagrams forwarded (one per interface).
    forwarded: int = 0
    #: Received Claim-Attempts that had Hop Limit 0: processed, never forwarded (§4.1).
    hop_limit_reached: int = 0
    #: Claim-Deny messages this device originated (its own or a proxied claim), each with
    #: Hop Limit 32 (§4.3.1).
    denied: int = 0
    #: Claim-Deny messages forwarded towards their originator.
    denies_forwarded: int = 0
    #: Messages carrying this device's ID that it never sent (§9).
    device_id_conflicts: int = 0
    #: Dropped datagrams by reason.
    dropped: Counter[DropReason] = field(default_factory=Counter)
    #: Flood records forgotten before their time because the table was full.
    flood_records_evicted: int = 0
    #: Network-caused events not queued because ``max_queued_events`` were waiting.
    events_dropped: int = 0
    #: Claim-Attempts over a rate limit that were forwarded anyway (recorded apart).
    forwarded_over_budget: int = 0
    #: Beyond the draft: re-verifications of held claims sent (one Claim-Attempt with R,
    #: ``EngineConfig.verify_interval``), and those whose answer window ended with the claim
    #: still held (counted when the claim's next one starts).
    verifications_started: int = 0
    verifications_confirmed: int = 0


def check_time(now: object) -> None:
    """Raise EngineError unless ``now`` is a finite number of seconds (not a bool)."""
    if isinstance(now, bool) or not isinstance(now, int | float) or not math.isfinite(now):
        raise EngineError(f"now: expected a finite number of seconds, found {now!r}")


def check_claim_arguments(
    domain: object, space: object, lifetime: object, now: object, *, reclaim: object, proxy: object
) -> None:
    """Raise EngineError, naming the argument, unless each has the documented type."""
    if not isinstance(domain, DomainID):
        raise EngineError(f"domain: expected a DomainID, found {type(domain).__name__}")
    if not isinstance(space, UIDSpace):
        raise EngineError(f"space: expected a UIDSpace, found {type(space).__name__}")
    if isinstance(lifetime, bool) or not isinstance(lifetime, int):
        raise EngineError(f"lifetime: expected an int of seconds, found {lifetime!r}")
    if not 0 <= lifetime <= LIFETIME_INFINITE:
        raise EngineError(f"lifetime must be 0 .. 2**32-1 seconds, got {lifetime}")
    check_time(now)
    for name, flag in (("reclaim", reclaim), ("proxy", proxy)):
        if not isinstance(flag, bool):
            raise EngineError(f"{name}: expected a bool, found {flag!r}")
