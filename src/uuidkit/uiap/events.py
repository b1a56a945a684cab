"""What a UIAP engine tells its caller: typed, frozen events drained by ``Engine.next_event()``.

Every event is a frozen dataclass, so a caller can match on it::

    while (event := engine.next_event()) is not None:
        match event:
            case ClaimSucceeded(claim=handle):
                ...

``claim`` fields are the integer handles returned by ``Engine.claim``. ``interface`` and
``source`` fields are the opaque keys the caller passed to ``receive_datagram``.

References: draft-white-zeroconf-uiap-00 (UIAP) §2.1.1, §2.4, §4.2.2, §4.3.2, §5.1, §9.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TypeAlias

from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.space import UIDSpace

__all__ = [
    "ClaimDefended",
    "ClaimExpired",
    "ClaimFailed",
    "ClaimLost",
    "ClaimSucceeded",
    "DeviceIDConflictSuspected",
    "DropReason",
    "Event",
    "FailureReason",
    "LossReason",
    "MessageDropped",
    "ProxyDefended",
    "ProxyDefenseEnded",
    "ProxyDefenseStarted",
]


class FailureReason(enum.Enum):
    """Why a claim failed.

    References: UIAP §2.4.1, §2.4.6, §4.2.2.2, §4.3.2.
    """

    #: A Claim-Deny for one of this claim's Claim-Attempts arrived while it was in progress.
    DENIED = "denied"
    #: A conflicting Claim-Attempt of the same kind (new/new or reclaim/reclaim) arrived
    #: while this claim was in progress; both sides deny and fail (§4.2.2.2).
    SIMULTANEOUS_CLAIM = "simultaneous-claim"
    #: This new claim met a conflicting reclaim, and the reclaim takes precedence (§4.2.2.2).
    PREEMPTED_BY_RECLAIM = "preempted-by-reclaim"
    #: The space conflicts with a claim this device already holds or claims (§2.4.1: "a
    #: claim will immediately fail if a conflicting claim already exits on the local
    #: device").
    LOCAL_CONFLICT = "local-conflict"
    #: The space conflicts with a claim this device proxy-defends for another device
    #: (§5.1); ``ClaimFailed.holder`` is that claimant's device ID.
    PROXY_DEFENDED = "proxy-defended"


class LossReason(enum.Enum):
    """Why a claim that had succeeded stopped being this device's (a collision).

    References: UIAP §2.1.2, §4.2.2.2, §4.3.2, §4.4, §5.1.
    """

    #: A Claim-Deny answered a reclaim of this held claim: another device defends an
    #: intersecting space, typically after two sites merged (§2.1.2, §4.4).
    RECLAIM_DENIED = "reclaim-denied"
    #: A Claim-Deny answered the X+R reclaim sent at success to enable proxy defense
    #: (§5.1): another device, or a proxy of one, defends an intersecting space.
    ANNOUNCEMENT_DENIED = "announcement-denied"
    #: This claim's reclaim met another device's reclaim of an intersecting space; both
    #: sides deny and fail (§4.2.2.2).
    SIMULTANEOUS_RECLAIM = "simultaneous-reclaim"
    #: Beyond the draft: a Claim-Deny answered a periodic re-verification of the held
    #: claim (``EngineConfig.verify_interval``): another device defends the space.
    VERIFICATION_DENIED = "verification-denied"
    #: Beyond the draft: another device claiming the space with R set has the larger
    #: device ID (``EngineConfig.tie_break``): this device gave the space up at once,
    #: without denying, so exactly one of the two keeps it (``ClaimLost.winner``).
    YIELDED = "yielded"


class DropReason(enum.Enum):
    """Why a received datagram was not (or not fully) acted on.

    References: UIAP §2.4.2, §2.4.4, §4.1, §4.2.2.1, §4.3.2, §9.
    """

    # A member equals only itself, so the identity hash is a correct one; it is computed in
    # C, where Enum's own ``__hash__`` (of the name) runs in Python, and every dropped
    # datagram is counted by its reason (a third of a flooded site's datagrams are copies).
    __hash__ = object.__hash__

    #: Not a valid UIAP message (the decoder raised ``DecodeError``).
    MALFORMED = "malformed"
    #: A well-formed header with a Version this engine does not speak (§4.1: MAY discard).
    UNSUPPORTED_VERSION = "unsupported-version"
    #: Arrived on an interface that was never added, or has been removed.
    UNKNOWN_INTERFACE = "unknown-interface"
    #: A Claim-Attempt whose Message ID is already recorded, including a copy arriving on
    #: a second interface and this device's own flood coming back (§4.2.2.1, §4.2.2.3).
    DUPLICATE = "duplicate"
    #: This device's own Message ID, no longer recorded (the flood record has expired).
    OWN_MESSAGE = "own-message"
    #: A Claim-Deny whose Message ID matches no recorded Claim-Attempt (§4.3.2).
    DENY_UNMATCHED = "deny-unmatched"
    #: A second Claim-Deny for the same Claim-Attempt (§4.3.2: at most one per attempt).
    DENY_ALREADY_SENT = "deny-already-sent"
    #: A Claim-Deny for this device's own claim after its result was returned (§4.3.2).
    DENY_AFTER_RESULT = "deny-after-result"
    #: A Claim-Deny with Hop Limit 0: processed, but it MUST NOT be forwarded (§4.1).
    DENY_HOP_LIMIT = "deny-hop-limit"
    #: A Claim-Deny to forward out an interface that has been removed since.
    DENY_INTERFACE_GONE = "deny-interface-gone"
    #: A new Claim-Attempt over its (interface, source) rate (``EngineConfig.source_rate``).
    RATE_LIMITED_SOURCE = "rate-limited-source"
    #: A new Claim-Attempt over its interface's rate (``EngineConfig.interface_rate``).
    RATE_LIMITED_INTERFACE = "rate-limited-interface"
    #: An X+R Claim-Attempt was forwarded but not proxy-defended: the proxy table holds
    #: ``EngineConfig.max_proxy_records`` already (§5.1: proxy defense is a MAY).
    PROXY_TABLE_FULL = "proxy-table-full"
    #: A further Claim-Deny for a flood of ours already denied: a copy (``copies``) or a
    #: second defender.
    DENY_COPY = "deny-copy"
    #: A datagram carrying a MAC trailer (``uuidkit.uiap.auth``) reached an engine with
    #: no site key: a keyed site shares the link (the site is split), not garbage.
    AUTH_UNEXPECTED = "auth-unexpected"


@dataclass(frozen=True, slots=True)
class ClaimSucceeded:
    """The claim timed out with no Claim-Deny: the space is unique on this site, now.

    ``expires`` is when this device stops defending it (``None``: infinite lifetime).

    References: UIAP §2.4.1, §2.1.1, §4.5.2.
    """

    claim: int
    domain: DomainID
    space: UIDSpace
    expires: float | None


@dataclass(frozen=True, slots=True)
class ClaimFailed:
    """The claim failed (``reason`` says why); the device does not defend the space.

    References: UIAP §2.4.1, §2.4.6, §4.2.2.2, §4.3.2.
    """

    claim: int
    reason: FailureReason
    domain: DomainID
    space: UIDSpace
    #: For ``PROXY_DEFENDED``: the device ID of the claimant this device defends.
    holder: int | None = None


@dataclass(frozen=True, slots=True)
class ClaimLost:
    """A claim that had succeeded is no longer defended: another device claims it too.

    The draft does not watch held claims (§2.1.2): a collision shows only when this device
    reclaims (``RECLAIM_DENIED``, ``SIMULTANEOUS_RECLAIM``) or announces the claim for
    proxy defense (``ANNOUNCEMENT_DENIED``); beyond the draft, also when a periodic
    re-verification is denied (``VERIFICATION_DENIED``) or this device loses the tie-break
    to a larger device ID (``YIELDED``; ``winner`` is that device's ID, else ``None``).
    The claim ends here. When a reclaim was
    running, its result comes first as usual (``ClaimFailed``), then this event; "recovery
    after collision is the responsibility of the application" (§2.1.2), which should stop
    using the space and claim another.

    References: UIAP §2.1.2, §4.2.2.2, §4.3.2, §4.4, §5.1.
    """

    claim: int
    reason: LossReason
    domain: DomainID
    space: UIDSpace
    winner: int | None = None


@dataclass(frozen=True, slots=True)
class ClaimExpired:
    """A held claim reached the end of its lifetime and is no longer defended.

    References: UIAP §2.1.1, §4.5.2.
    """

    claim: int


@dataclass(frozen=True, slots=True)
class ClaimDefended:
    """This device sent a Claim-Deny to defend one of its own claims.

    ``originator`` and ``sequence`` form the Message ID of the denied Claim-Attempt;
    ``reclaim``: that attempt had the R flag, so its device held the space too (a reclaim,
    UIAP §4.4): two holders met, which the daemon reports as a suspected conflict.

    References: UIAP §2.4.2, §2.4.5, §4.2.2.1, §4.2.2.2, §4.3, §4.4.
    """

    claim: int
    originator: int
    sequence: int
    reclaim: bool = False


@dataclass(frozen=True, slots=True)
class ProxyDefenseStarted:
    """This device started defending another device's claim (a Claim-Attempt with X and R).

    ``expires`` is the lifetime measured from receipt (``None``: infinite lifetime).

    References: UIAP §5.1, §4.5.2.
    """

    claimant: int
    domain: DomainID
    space: UIDSpace
    expires: float | None


@dataclass(frozen=True, slots=True)
class ProxyDefenseEnded:
    """Proxy defense of ``claimant``'s claim ended because its lifetime ran out.

    References: UIAP §5.1 ("MUST stop defending a claim once the lifetime ... expires").
    """

    claimant: int
    domain: DomainID
    space: UIDSpace


@dataclass(frozen=True, slots=True)
class ProxyDefended:
    """This device sent a Claim-Deny on behalf of ``claimant`` (proxy defense).

    ``originator`` and ``sequence`` form the Message ID of the denied Claim-Attempt.

    References: UIAP §5.1.
    """

    claimant: int
    originator: int
    sequence: int


@dataclass(frozen=True, slots=True)
class MessageDropped:
    """A received datagram was dropped (``reason``); it is also counted in ``Engine.stats``.

    References: UIAP §2.4.2, §2.4.4, §4.1, §4.2.2.1, §4.3.2.
    """

    reason: DropReason
    interface: Hashable
    source: Hashable


@dataclass(frozen=True, slots=True)
class DeviceIDConflictSuspected:
    """A message carries this device's ID as originator but this device never sent it.

    ``resequenced`` is true when its sequence number was close to this device's, so the
    device moved its own sequence number away (UIAP §9 MAY).

    References: UIAP §9.
    """

    sequence: int
    interface: Hashable
    source: Hashable
    resequenced: bool


#: Any event the engine reports to the application it serves (UIAP §2.1.1).
Event: TypeAlias = (
    ClaimSucceeded
    | ClaimFailed
    | ClaimLost
    | ClaimExpired
    | ClaimDefended
    | ProxyDefenseStarted
    | ProxyDefenseEnded
    | ProxyDefended
    | MessageDropped
    | DeviceIDConflictSuspected
)
