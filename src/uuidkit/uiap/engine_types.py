"""The engine's configuration, its counters, and the datagrams it asks its caller to send.

Kept apart from :mod:`uuidkit.uiap.engine` (which re-exports every name) so the engine
module holds only protocol behaviour.

References: UIAP §2.4.1, §3.1, §4.1, §4.2.2.1, §4.3.2, §4.4, §4.5.2, §5.1, §9, §10.
"""

from __future__ import annotations

import enum
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
from uuidkit.uiap.events import DropReason

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
    """The type of :data:`MULTICAST`, the destination of every Claim-Attempt."""

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
    #: Hop Limit of a new Claim-Attempt and of every new Claim-Deny, in hops (§4.1: 32).
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

    def longest_claim_seconds(self) -> float:
        """Seconds from a claim's first Claim-Attempt to its result (new claim or reclaim)."""
        attempts = max(self.claim_attempts, self.reclaim_attempts)
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
    #: Claim-Deny messages this device originated (its own or a proxied claim).
    denied: int = 0
    #: Claim-Deny messages forwarded towards their originator.
    denies_forwarded: int = 0
    #: Messages carrying this device's ID that it never sent (§9).
    device_id_conflicts: int = 0
    #: Dropped datagrams by reason.
    dropped: Counter[DropReason] = field(default_factory=Counter)
