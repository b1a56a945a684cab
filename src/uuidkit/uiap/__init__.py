"""UIAP, the Unique Identifier Allocation Protocol (draft-white-zeroconf-uiap-00), sans-I/O.

The data layer: :class:`Message` and its wire codec (:func:`encode`, :func:`decode`,
:class:`DecodeError`), Domain IDs (:class:`DomainID`, :class:`DomainIDPattern`), UIDs and
UID spaces with the comparison and overlap rules of their number space
(:class:`UID`, :class:`UIDSpace`, :class:`NumberSpace`, :func:`spaces_overlap`), and the
protocol constants. No sockets, timers or threads: bytes in, typed values out.

References: draft-white-zeroconf-uiap-00 §2.2, §3.2, §4.1, §6, §6.1, §10.
"""

from __future__ import annotations

from uuidkit.errors import (
    DecodeError,
    DomainIDError,
    EngineError,
    SpaceError,
    UIAPError,
    UnsupportedVersion,
)
from uuidkit.uiap.codec import decode, encode
from uuidkit.uiap.constants import (
    DEFAULT_MULTICAST,
    HEADER_LENGTH_OCTETS,
    MAX_DATAGRAM_OCTETS,
    MAX_UID_OCTETS,
    UIAP_CLAIM_PERIOD_S,
    UIAP_CLAIM_PORT,
    UIAP_CLAIM_TIMEOUT_S,
    UIAP_HOP_LIMIT,
    UIAP_MULTICAST_ADDR_IPV4,
    UIAP_MULTICAST_ADDR_IPV6,
    UIAP_NEW_CLAIM_ATTEMPTS,
    UIAP_RECLAIM_ATTEMPTS,
    UIAP_REPLY_PORT,
    UIAP_VERSION,
    MulticastConfig,
)
from uuidkit.uiap.domain import AllocatingAuthority, DomainID, DomainIDPattern
from uuidkit.uiap.engine import (
    LIFETIME_INFINITE,
    MULTICAST,
    Engine,
    EngineConfig,
    EngineStats,
    Multicast,
    Transmit,
)
from uuidkit.uiap.events import (
    ClaimDefended,
    ClaimExpired,
    ClaimFailed,
    ClaimLost,
    ClaimSucceeded,
    DeviceIDConflictSuspected,
    DropReason,
    Event,
    FailureReason,
    LossReason,
    MessageDropped,
    ProxyDefended,
    ProxyDefenseEnded,
    ProxyDefenseStarted,
)
from uuidkit.uiap.message import Message, MessageID, MessageType, next_sequence, sequence_distance
from uuidkit.uiap.space import (
    UID,
    Alignment,
    DataType,
    Fmt,
    Justification,
    NumberSpace,
    UIDKey,
    UIDSpace,
    spaces_overlap,
)

__all__ = [
    "DEFAULT_MULTICAST",
    "HEADER_LENGTH_OCTETS",
    "LIFETIME_INFINITE",
    "MAX_DATAGRAM_OCTETS",
    "MAX_UID_OCTETS",
    "MULTICAST",
    "UIAP_CLAIM_PERIOD_S",
    "UIAP_CLAIM_PORT",
    "UIAP_CLAIM_TIMEOUT_S",
    "UIAP_HOP_LIMIT",
    "UIAP_MULTICAST_ADDR_IPV4",
    "UIAP_MULTICAST_ADDR_IPV6",
    "UIAP_NEW_CLAIM_ATTEMPTS",
    "UIAP_RECLAIM_ATTEMPTS",
    "UIAP_REPLY_PORT",
    "UIAP_VERSION",
    "UID",
    "Alignment",
    "AllocatingAuthority",
    "ClaimDefended",
    "ClaimExpired",
    "ClaimFailed",
    "ClaimLost",
    "ClaimSucceeded",
    "DataType",
    "DecodeError",
    "DeviceIDConflictSuspected",
    "DomainID",
    "DomainIDError",
    "DomainIDPattern",
    "DropReason",
    "Engine",
    "EngineConfig",
    "EngineError",
    "EngineStats",
    "Event",
    "FailureReason",
    "Fmt",
    "Justification",
    "LossReason",
    "Message",
    "MessageDropped",
    "MessageID",
    "MessageType",
    "Multicast",
    "MulticastConfig",
    "NumberSpace",
    "ProxyDefended",
    "ProxyDefenseEnded",
    "ProxyDefenseStarted",
    "SpaceError",
    "Transmit",
    "UIAPError",
    "UIDKey",
    "UIDSpace",
    "UnsupportedVersion",
    "decode",
    "encode",
    "next_sequence",
    "sequence_distance",
    "spaces_overlap",
]
