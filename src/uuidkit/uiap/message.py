"""The UIAP message: one immutable value holding every field of the common format (§4.1).

Field map (wire name -> attribute)::

    Version                 version            (1 octet; this is version 0x01)
    Type                    type               (4 bits; MessageType)
    0 (2 bits), 0 (1 octet) -                  (reserved: sent as 0, ignored on receipt)
    X                       proxy              (Proxy Enable flag)
    R                       reclaim            (Reclaim flag)
    Hop Limit               hop_limit          (1 octet, in hops)
    Lifetime                lifetime           (4 octets, in seconds)
    Originating Device ID   device_id          (8 octets, an int, never 0)
    Sequence Number         sequence           (4 octets)
    Claim Reference Number  claim_reference    (4 octets)
    Domain ID (7 + 1)       domain             (DomainID; its flags octet holds J)
    0 (1 octet)             -                  (reserved)
    BA, BA2, Fmt            ba, ba2, fmt       (derived from space)
    UID Len, UID Len 2      uid_len, uid_len2  (derived from space)
    UID                     space              (UIDSpace: one UID, or two for a range)

A Claim-Deny (§4.3.1) is "a copy of the Claim-Attempt message being denied, except that
the Type field is set to 0x1 and the Hop Limit field is reset to 32"; :meth:`Message.deny`
makes one. X and R are copied unchanged ("ignored on Claim-Deny messages"), so a deny
stays a faithful copy. A Reclaim (§4.4) is a Claim-Attempt with R set.

References: UIAP §1.1 (Message ID), §4.1, §4.1.1, §4.3.1, §4.4, §4.5.1, §4.5.2.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any, Final

from uuidkit.errors import InvalidMessage, UIAPError
from uuidkit.uiap.constants import SEQUENCE_MODULUS, UIAP_HOP_LIMIT, UIAP_VERSION
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.space import Fmt, Justification, UIDSpace, insignificant_bits_clear

__all__ = [
    "Fmt",
    "Message",
    "MessageID",
    "MessageType",
    "message_key",
    "next_sequence",
    "sequence_distance",
]

_DEVICE_ID_BITS: Final = 64
#: How a frozen dataclass sets its fields; used to build a message without re-validation.
_set_field: Final = object.__setattr__
_new_message: Final = object.__new__
_SEQUENCE_BITS: Final = 32
#: Longest int an error message spells out in decimal; a longer one is described by its size.
_MAX_SHOWN_BITS: Final = 256


def _check_width(name: str, value: int, bits: int) -> None:
    """Raise :class:`~uuidkit.errors.InvalidMessage` naming ``name`` unless ``value`` is an
    unsigned int of at most ``bits`` bits (every UIAP §4.1 field has a fixed width).

    ``bool`` is refused although it subclasses ``int``: ``True`` as a sequence number is a bug.

    References: UIAP §4.1 (the common message format).
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidMessage(
            f"{name}: expected an int of {bits} bits, found {type(value).__name__}", name
        )
    exact = int.__index__(value)  # the int behind a subclass: its own comparisons may lie
    if not 0 <= exact < (1 << bits):
        size = exact.bit_length()
        sign = "a negative" if exact < 0 else "an"
        shown = str(exact) if size <= _MAX_SHOWN_BITS else f"{sign} int of {size} bits"
        raise InvalidMessage(f"{name}: expected 0 <= {name} < 2**{bits}, found {shown}", name)


class MessageType(enum.IntEnum):
    """The 4-bit Type field (UIAP §4.1.1).

    References: UIAP §4.1.1, §4.2.1, §4.3.1.
    """

    CLAIM_ATTEMPT = 0x0
    CLAIM_DENY = 0x1


def message_key(device_id: int, sequence: int) -> int:
    """The Message ID (device ID, sequence number) as one 96-bit number, as
    :attr:`MessageID.value` gives it, without building the pair: the form a datagram's
    octets 8-19 give directly.

    References: UIAP §1.1 (Message ID), §4.1 (the header's octets 8-19).
    """
    return device_id << _SEQUENCE_BITS | sequence


@dataclass(frozen=True, slots=True)
class MessageID:
    """The 96-bit Message ID: (originating device ID, sequence number) (UIAP §1.1, §4.2.2.1).

    References: UIAP §1.1 (Message ID), §4.2.2.1, §4.5.1.
    """

    device_id: int
    sequence: int

    @property
    def value(self) -> int:
        """The 96-bit number: device ID in the upper 64 bits, sequence number below."""
        return message_key(self.device_id, self.sequence)

    @classmethod
    def of_key(cls, key: int) -> MessageID:
        """The Message ID whose :attr:`value` is ``key``."""
        return cls(key >> _SEQUENCE_BITS, key & (SEQUENCE_MODULUS - 1))

    def __str__(self) -> str:
        return f"{self.device_id:016x}/{self.sequence}"


def next_sequence(sequence: int) -> int:
    """The sequence number after ``sequence``: "0 is the sequence number that follows 2^32-1".

    References: UIAP §4.5.1.
    """
    return (sequence + 1) % SEQUENCE_MODULUS


def sequence_distance(earlier: int, later: int) -> int:
    """How many increments lead from ``earlier`` to ``later``, modulo 2^32 (UIAP §4.5.1, §9).

    A device orders its own sequence numbers this way across the wrap; §9 asks whether a
    foreign message's number is "close" to the device's own.

    References: UIAP §4.5.1, §9.
    """
    return (later - earlier) % SEQUENCE_MODULUS


@dataclass(frozen=True, slots=True)
class Message:
    """A UIAP message with every field of the common format (UIAP §4.1).

    Values are checked on construction: every integer must fit its field, and the
    Originating Device ID must not be 0 (§4.1: "MUST NOT appear in a message"). Errors
    raise :class:`~uuidkit.errors.InvalidMessage` (a ``UIAPError`` and an ``InvalidField``)
    naming the field.

    References: UIAP §4.1, §4.1.1, §4.3.1, §4.4.
    """

    type: MessageType
    #: Originating Device ID, 0 < device_id < 2**64 (§4.1).
    device_id: int
    #: Sequence Number, 0 <= sequence < 2**32 (§4.5.1).
    sequence: int
    domain: DomainID
    space: UIDSpace
    #: Lifetime in seconds, 0 <= lifetime < 2**32; 0 is valid (§4.5.2).
    lifetime: int = 0
    #: Hop Limit in hops, 0..255 (§4.1).
    hop_limit: int = UIAP_HOP_LIMIT
    #: Claim Reference Number, the originator's own claim tag (§4.1).
    claim_reference: int = 0
    #: X, Proxy Enable flag (§4.1, §5.1).
    proxy: bool = False
    #: R, Reclaim flag (§4.1, §4.4).
    reclaim: bool = False
    #: Version, 0..255; this implementation speaks UIAP_VERSION (§4.1).
    version: int = UIAP_VERSION

    def __post_init__(self) -> None:
        self._check_fields()

    def _check_fields(self) -> None:
        if not isinstance(self.type, MessageType):
            raise InvalidMessage(f"Type: expected a MessageType, found {self.type!r}", "Type")
        _check_width("Originating Device ID", self.device_id, _DEVICE_ID_BITS)
        if self.device_id == 0:
            # UIAP §4.1: "ID 0 (all bits 0) is reserved ... and MUST NOT appear in a message."
            raise InvalidMessage("Originating Device ID: 0 is reserved", "Originating Device ID")
        _check_width("Sequence Number", self.sequence, _SEQUENCE_BITS)
        _check_width("Lifetime", self.lifetime, 32)
        _check_width("Hop Limit", self.hop_limit, 8)
        _check_width("Claim Reference Number", self.claim_reference, 32)
        _check_width("Version", self.version, 8)
        if not isinstance(self.domain, DomainID):
            raise InvalidMessage(
                f"Domain ID: expected a DomainID, found {self.domain!r}", "Domain ID"
            )
        if not isinstance(self.space, UIDSpace):
            raise InvalidMessage(f"UID: expected a UIDSpace, found {self.space!r}", "UID")
        self._check_space_fits_domain()

    def _check_space_fits_domain(self) -> None:
        """The wire-level rules that depend on the DID's J flag, so encode() never emits
        what decode() rejects."""
        right = self.domain.right_justified
        if self.space.fmt is Fmt.PREFIX and right:
            # UIAP §3.2.2: prefixes "are only valid for hierarchical, left justified" spaces.
            raise InvalidMessage("Fmt: a prefix claim needs a left-justified domain (J = 0)", "Fmt")
        justification = Justification.RIGHT if right else Justification.LEFT
        for field, uid in zip(("UID", "UID 2"), self.space.uids, strict=False):
            if not insignificant_bits_clear(uid, justification):
                # UIAP §3.2.3: "Insignificant bits in the last octet MUST be set 0."
                raise InvalidMessage(
                    f"{field}: insignificant bits of the partial octet are not 0", field
                )

    @classmethod
    def _unchecked(
        cls,
        message_type: MessageType,
        device_id: int,
        sequence: int,
        domain: DomainID,
        space: UIDSpace,
        lifetime: int,
        hop_limit: int,
        claim_reference: int,
        proxy: bool,
        reclaim: bool,
        version: int,
    ) -> Message:
        """A message built without the checks of ``__post_init__``: for the decoder only.

        The caller guarantees what those checks would establish: every integer was read
        from a field of its own width, the device ID is not 0, and the UIDs' insignificant
        bits and the prefix/J rule were checked against the datagram (UIAP §3.2.2, §3.2.3,
        §4.1). Every other way of making a message validates.

        References: UIAP §4.1.
        """
        message = _new_message(cls)
        # Unrolled: this runs once per received datagram.
        _set_field(message, "type", message_type)
        _set_field(message, "device_id", device_id)
        _set_field(message, "sequence", sequence)
        _set_field(message, "domain", domain)
        _set_field(message, "space", space)
        _set_field(message, "lifetime", lifetime)
        _set_field(message, "hop_limit", hop_limit)
        _set_field(message, "claim_reference", claim_reference)
        _set_field(message, "proxy", proxy)
        _set_field(message, "reclaim", reclaim)
        _set_field(message, "version", version)
        return message

    @classmethod
    def claim_attempt(
        cls,
        device_id: int,
        sequence: int,
        domain: DomainID,
        space: UIDSpace,
        lifetime: int,
        *,
        reclaim: bool = False,
        proxy: bool = False,
        claim_reference: int = 0,
    ) -> Message:
        """A new Claim-Attempt (type 0) with the initial hop limit of 32; R set for a Reclaim.

        References: UIAP §4.1, §4.2.1, §4.4.
        """
        return cls(
            MessageType.CLAIM_ATTEMPT,
            device_id,
            sequence,
            domain,
            space,
            lifetime=lifetime,
            claim_reference=claim_reference,
            proxy=proxy,
            reclaim=reclaim,
        )

    @property
    def message_id(self) -> MessageID:
        """The Message ID (originating device ID, sequence number) (UIAP §4.2.2.1)."""
        return MessageID(self.device_id, self.sequence)

    @property
    def is_attempt(self) -> bool:
        """True for a Claim-Attempt, including a Reclaim (UIAP §4.1.1, §4.4)."""
        return self.type is MessageType.CLAIM_ATTEMPT

    @property
    def is_deny(self) -> bool:
        """True for a Claim-Deny (UIAP §4.1.1)."""
        return self.type is MessageType.CLAIM_DENY

    @property
    def is_reclaim(self) -> bool:
        """A Reclaim: "a Claim-Attempt message (message type 0x0) with the Reclaim flag set"."""
        return self.is_attempt and self.reclaim

    @property
    def proxiable(self) -> bool:
        """Only Claim-Attempts "with both the X ... and R ... flags set may be proxied" (§5.1)."""
        return self.is_attempt and self.proxy and self.reclaim

    @property
    def fmt(self) -> Fmt:
        """The Fmt field: unique, prefix or range (UIAP §4.1)."""
        return self.space.fmt

    @property
    def ba(self) -> int:
        """The BA field: significant bits in the first UID's partial octet, 0 for all."""
        return self.space.first.ba

    @property
    def ba2(self) -> int:
        """The BA2 field: as BA for the second UID of a range; 0 otherwise (UIAP §4.1)."""
        return 0 if self.space.second is None else self.space.second.ba

    @property
    def uid_len(self) -> int:
        """The UID Len field, in octets."""
        return len(self.space.first.data)

    @property
    def uid_len2(self) -> int:
        """The UID Len 2 field, in octets: the second UID of a range, 0 otherwise."""
        return 0 if self.space.second is None else len(self.space.second.data)

    def deny(self, *, zero_lifetime: bool = False) -> Message:
        """The Claim-Deny for this Claim-Attempt: a copy with Type 1 and Hop Limit 32.

        §4.5.2: "Devices sending Claim-Deny messages MAY choose not to copy the lifetime
        from the request, and set it to 0 instead": pass ``zero_lifetime=True``.

        References: UIAP §2.4.5, §4.3.1, §4.5.2.
        """
        if not self.is_attempt:
            raise UIAPError(f"only a Claim-Attempt can be denied, not {self.type.name}")
        return replace(
            self,
            type=MessageType.CLAIM_DENY,
            hop_limit=UIAP_HOP_LIMIT,
            lifetime=0 if zero_lifetime else self.lifetime,
        )

    def forwarded(self) -> Message:
        """The copy to forward on another link: Hop Limit decremented (UIAP §2.4.3, §4.1).

        Raises :class:`~uuidkit.errors.UIAPError` at hop limit 0: such messages "SHOULD be
        processed but MUST NOT be forwarded" (§4.1).

        References: UIAP §2.4.3, §2.4.5, §4.1 (Hop Limit).
        """
        if self.hop_limit == 0:
            # UIAP §4.1: "Messages with a hop limit of 0 ... MUST NOT be forwarded."
            raise UIAPError(f"message {self.message_id} has hop limit 0 and must not be forwarded")
        return replace(self, hop_limit=self.hop_limit - 1)

    def replace(self, **changes: Any) -> Message:
        """A copy with the given fields changed, validated like a new message."""
        return replace(self, **changes)

    @property
    def can_forward(self) -> bool:
        """False at hop limit 0, which "MUST NOT be forwarded" (UIAP §4.1)."""
        return self.hop_limit > 0
