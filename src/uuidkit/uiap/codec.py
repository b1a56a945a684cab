"""Bytes to :class:`~uuidkit.uiap.message.Message` and back, exact to the bit (UIAP §4.1).

The common format, big-endian, one row per 32 bits (bit 0 is the most significant bit
of octet 0)::

    octet  0      Version
    octet  1      Type (bits 8-11) | 0 (bits 12-13) | X (bit 14) | R (bit 15)
    octet  2      0 (reserved)
    octet  3      Hop Limit
    octets 4-7    Lifetime
    octets 8-15   Originating Device ID
    octets 16-19  Sequence Number
    octets 20-23  Claim Reference Number
    octets 24-31  Domain ID; octet 31 is the flags: J (bit 248) | 0 (7 bits)
    octet  32     0 (reserved)
    octet  33     BA (bits 264-266) | BA2 (bits 267-269) | Fmt (bits 270-271)
    octet  34     UID Len
    octet  35     UID Len 2
    octets 36-    UID, then (for a range) UID 2 "beginning the octet after the first ends"

The Domain ID is read and written as all 8 octets: its reserved flag bits are part of the
DID (§2.2 "always treated as part of the DID") and are never cleared.

Boundary contract: :func:`decode` raises only :class:`~uuidkit.errors.DecodeError` (or
its subclass :class:`~uuidkit.errors.UnsupportedVersion`) for any input, naming the field
and its byte offset. Reserved fields are written as 0 and ignored when read, as are BA2 and
UID Len 2 when the space is not a range (§4.1: "ignored by receiver").

Choices where the draft is silent, each tested:

* The Version is checked before the length: a future version may have another layout,
  so even a 1-octet datagram of version 2 is :class:`UnsupportedVersion` (§4.1: "MAY
  silently discard"), which an engine can count apart from malformed input.
* Fmt 3 is undefined (§4.1 defines 0, 1, 2) and rejected.
* A non-zero BA on an empty UID is rejected: there is no last octet to qualify.
* A prefix in a right-justified domain (J = 1) is rejected (§3.2.2).

References: UIAP §3.2.2, §3.2.3, §4.1, §4.1.1.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from functools import lru_cache
from typing import Final

from uuidkit._accel import SPEEDUPS, compiled
from uuidkit.errors import DecodeError, UnsupportedVersion
from uuidkit.uiap.constants import HEADER_LENGTH_OCTETS, UIAP_VERSION
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.message import Message, MessageType
from uuidkit.uiap.space import (
    UID,
    Alignment,
    Fmt,
    Justification,
    NumberSpace,
    UIDSpace,
    insignificant_bits_clear,
)

__all__ = [
    "DecodeError",
    "UnsupportedVersion",
    "as_encoded",
    "decode",
    "encode",
    "with_hop_limit",
]

_HEADER: Final = struct.Struct(">BBBBIQII8sBBBB")

#: (field name, offset, size in octets) of the fixed header, in wire order (UIAP §4.1).
HEADER_FIELDS: Final = (
    ("Version", 0, 1),
    ("Type", 1, 1),
    ("Reserved", 2, 1),
    ("Hop Limit", 3, 1),
    ("Lifetime", 4, 4),
    ("Originating Device ID", 8, 8),
    ("Sequence Number", 16, 4),
    ("Claim Reference Number", 20, 4),
    ("Domain ID", 24, 8),
    ("Reserved", 32, 1),
    ("BA/BA2/Fmt", 33, 1),
    ("UID Len", 34, 1),
    ("UID Len 2", 35, 1),
)

_TYPE_SHIFT: Final = 4
_X_BIT: Final = 0x02
_R_BIT: Final = 0x01
_BA_SHIFT: Final = 5
_BA2_SHIFT: Final = 2
_THREE_BITS: Final = 0x7
_FMT_MASK: Final = 0x3
_OFFSET_TYPE: Final = 1
_OFFSET_RESERVED: Final = 2
_OFFSET_HOP_LIMIT: Final = 3
_OFFSET_RESERVED_2: Final = 32
#: Octet 1 bits 12-13, which are reserved (§4.1 "0").
_RESERVED_TYPE_BITS: Final = 0x0C
#: BA2 within octet 33, "MUST be set 0 by senders" when the space is not a range (§4.1).
_BA2_BITS: Final = _THREE_BITS << _BA2_SHIFT
_OFFSET_DEVICE_ID: Final = 8
_OFFSET_FORMAT: Final = 33
_OFFSET_UID_LEN: Final = 34
_OFFSET_UID_LEN2: Final = 35
_MESSAGE_TYPES: Final = {int(t): t for t in MessageType}
#: A site uses a handful of domains: parse each Domain ID's 8 octets once.
_domain_from_wire: Final = lru_cache(maxsize=256)(DomainID.from_wire)
_FORMATS: Final = {int(f): f for f in Fmt}
_FULL_OCTET_BITS: Final = 8


def encode(message: Message) -> bytes:
    """The datagram for ``message``; reserved fields are 0 (UIAP §4.1 "MUST be set 0").

    References: UIAP §4.1.
    """
    space = message.space
    first_byte = message.type << _TYPE_SHIFT
    if message.proxy:
        first_byte |= _X_BIT
    if message.reclaim:
        first_byte |= _R_BIT
    # BA2 and UID Len 2 "MUST be set 0 by senders" when the space is not a range (§4.1);
    # Message.ba2 and Message.uid_len2 are 0 then.
    format_byte = message.ba << _BA_SHIFT | message.ba2 << _BA2_SHIFT | space.fmt
    header = _HEADER.pack(
        message.version,
        first_byte,
        0,
        message.hop_limit,
        message.lifetime,
        message.device_id,
        message.sequence,
        message.claim_reference,
        message.domain.to_bytes(),
        0,
        format_byte,
        message.uid_len,
        message.uid_len2,
    )
    return b"".join((header, *(uid.data for uid in space.uids)))


def decode(
    data: bytes | bytearray | memoryview,
    *,
    domains: Mapping[DomainID, NumberSpace] | None = None,
) -> Message:
    """The message in ``data``, validated; raises only :class:`DecodeError` for bad input.

    ``domains`` maps DIDs to their number spaces; a message in a listed domain is also
    checked against that domain's rules (octet alignment, UID lengths, prefixes allowed,
    range order), since those rules are not carried on the wire (UIAP §3.2.1.1).

    References: UIAP §3.2.3, §4.1, §4.1.1.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise DecodeError(f"datagram: expected bytes, found {type(data).__name__}", None, 0)
    datagram = bytes(data)
    if not datagram:
        raise DecodeError("truncated datagram: empty, Version expected at offset 0", "Version", 0)
    if datagram[0] != UIAP_VERSION:
        # UIAP §4.1: "UIAP devices MAY silently discard UIAP messages with unknown version
        # numbers": a distinct error, so an engine can count these apart.
        raise UnsupportedVersion(
            f"Version: unsupported version {datagram[0]} at offset 0, expected {UIAP_VERSION}",
            "Version",
            0,
        )
    if len(datagram) < HEADER_LENGTH_OCTETS:
        _raise_truncated_header(len(datagram))
    fields = _HEADER.unpack_from(datagram)
    message_type = _decode_type(fields[1])
    device_id = fields[5]
    if device_id == 0:
        # UIAP §4.1: device ID 0 "MUST NOT appear in a message".
        raise DecodeError(
            "Originating Device ID: 0 is reserved for a non-existent device (offset 8)",
            "Originating Device ID",
            _OFFSET_DEVICE_ID,
        )
    domain = _domain_from_wire(fields[8])
    space = _decode_space(datagram, fields[10], fields[11], fields[12], domain)
    if domains and domain in domains:  # an empty mapping: no DomainID hash to compute
        _check_domain_rules(domains[domain], space)
    # Every field was read at its own width and checked above (device ID not 0, insignificant
    # bits clear, no prefix with J = 1), which is all Message's own validation establishes.
    return Message._unchecked(
        message_type,
        device_id,
        fields[6],
        domain,
        space,
        fields[4],
        fields[3],
        fields[7],
        bool(fields[1] & _X_BIT),
        bool(fields[1] & _R_BIT),
        fields[0],
    )


def _compiled_decode() -> None:
    """Put the compiled twin of :func:`decode` in its place when the accelerator is built.

    The twin validates every field on the octets and builds the same Message, UIDSpace and
    UID objects from this module's classes, enum members and Domain ID cache; it hands every
    datagram it does not accept to the pure :func:`decode`, so the errors are the same. A
    class layout the twin cannot fill leaves the pure decoder in use.

    References: UIAP §4.1.
    """
    global decode
    if SPEEDUPS is None or not SPEEDUPS.bind_uiap(
        Message, UIDSpace, UID, tuple(MessageType), tuple(Fmt), _domain_from_wire
    ):
        return
    twin = compiled(decode, "uiap_decode")
    twin.__name__ = twin.__qualname__ = "decode"  # published (and pickled) as codec.decode
    decode = twin


_compiled_decode()


def as_encoded(message: Message, received: bytes) -> bytes:
    """``encode(message)`` for the ``message`` that :func:`decode` read from ``received``.

    That is ``received`` itself unless a field the receiver ignores was set in it: a
    reserved field (octet 1 bits 12-13, octet 2, octet 32), or BA2 or UID Len 2 of a space
    that is not a range. The reserved flag bits of the Domain ID are not among them: they
    are part of the DID (§2.2) and go out as they came in. Every other octet is
    decoded exactly (integers at their own width, UID octets as sent, BA 0 for 8 bits), so
    re-encoding such a datagram gives back the same octets; this saves encoding them again
    when a message is forwarded (UIAP §2.4.3) or denied (§4.3.1).

    References: UIAP §4.1 (reserved fields: "MUST be set 0 by sender and ignored by
    receiver"; BA2 and UID Len 2).
    """
    format_byte = received[_OFFSET_FORMAT]
    if (
        received[_OFFSET_TYPE] & _RESERVED_TYPE_BITS
        or received[_OFFSET_RESERVED]
        or received[_OFFSET_RESERVED_2]
        or (
            format_byte & _FMT_MASK != Fmt.RANGE
            and (format_byte & _BA2_BITS or received[_OFFSET_UID_LEN2])
        )
    ):
        return encode(message)
    return received


def with_hop_limit(
    datagram: bytes, hop_limit: int, message_type: MessageType | None = None
) -> bytes:
    """``datagram``, as :func:`encode` made it, with another Hop Limit and optionally Type.

    Equal to ``encode(message.replace(hop_limit=hop_limit, type=message_type))`` for
    ``datagram == encode(message)``: the two fields are whole octets or bits of their own
    (Type is the high 4 bits of octet 1, beside X and R; Hop Limit is octet 3), and the
    reserved bits around them are 0 in anything :func:`encode` made. This is how a
    Claim-Attempt is forwarded (§2.4.3: "Decrement Hop Limit") and a Claim-Deny made from
    one (§4.3.1: "a copy ... except that the Type field is set to 0x1 and the Hop Limit
    field is reset to 32") without encoding the message again.

    References: UIAP §2.4.3, §2.4.5, §4.1, §4.3.1.
    """
    if message_type is None:
        type_byte = datagram[_OFFSET_TYPE]
    else:
        type_byte = message_type << _TYPE_SHIFT | datagram[_OFFSET_TYPE] & (_X_BIT | _R_BIT)
    # Octets 1-3 are Type/X/R, the reserved octet (0), and the Hop Limit.
    patched = bytes((type_byte, 0, hop_limit))
    return b"".join((datagram[:_OFFSET_TYPE], patched, datagram[_OFFSET_HOP_LIMIT + 1 :]))


def _raise_truncated_header(length: int) -> None:
    for name, offset, size in HEADER_FIELDS:
        if offset + size > length:
            raise DecodeError(
                f"truncated datagram: {length} octets, {name} needs octets "
                f"{offset}..{offset + size - 1} (header is {HEADER_LENGTH_OCTETS} octets)",
                name,
                offset,
            )


def _decode_type(first_byte: int) -> MessageType:
    code = first_byte >> _TYPE_SHIFT
    message_type = _MESSAGE_TYPES.get(code)
    if message_type is None:
        # UIAP §4.1.1 defines only 0 (Claim-Attempt) and 1 (Claim-Deny).
        raise DecodeError(
            f"Type: unknown message type {code} at offset 1, expected 0 or 1", "Type", _OFFSET_TYPE
        )
    return message_type


def _decode_space(
    data: bytes, format_byte: int, uid_len: int, uid_len2: int, domain: DomainID
) -> UIDSpace:
    fmt = _FORMATS.get(format_byte & _FMT_MASK)
    if fmt is None:
        raise DecodeError(
            f"Fmt: undefined format {format_byte & _FMT_MASK} at offset 33, expected 0, 1 or 2",
            "Fmt",
            _OFFSET_FORMAT,
        )
    if fmt is Fmt.PREFIX and domain.right_justified:
        # UIAP §3.2.2: prefixes "are only valid for hierarchical, left justified" spaces.
        raise DecodeError(
            "Fmt: a prefix claim in a right-justified domain (J = 1) at offset 33",
            "Fmt",
            _OFFSET_FORMAT,
        )
    if fmt is not Fmt.RANGE:
        uid_len2 = 0  # UID Len 2: "If not a range, ... ignored by receiver" (§4.1).
    first_end = HEADER_LENGTH_OCTETS + uid_len
    if len(data) != first_end + uid_len2:
        _check_length(len(data), uid_len, uid_len2, fmt)  # raises, naming the field
    justification = Justification.RIGHT if domain.right_justified else Justification.LEFT
    first = _decode_uid(
        data, HEADER_LENGTH_OCTETS, first_end, format_byte >> _BA_SHIFT, 1, justification
    )
    if fmt is not Fmt.RANGE:
        return UIDSpace._unchecked(fmt, first, None)
    ba2 = format_byte >> _BA2_SHIFT & _THREE_BITS
    second = _decode_uid(data, first_end, len(data), ba2, 2, justification)
    return UIDSpace._unchecked(fmt, first, second)


def _check_length(length: int, uid_len: int, uid_len2: int, fmt: Fmt) -> None:
    first_end = HEADER_LENGTH_OCTETS + uid_len
    expected = first_end + uid_len2
    if length < first_end:
        raise DecodeError(
            f"truncated datagram: UID Len {uid_len} needs octets 36..{first_end - 1}, "
            f"datagram has {length}",
            "UID",
            HEADER_LENGTH_OCTETS,
        )
    if length < expected:
        raise DecodeError(
            f"truncated datagram: UID Len 2 {uid_len2} needs octets {first_end}..{expected - 1}, "
            f"datagram has {length}",
            "UID 2",
            first_end,
        )
    if length > expected:
        what = "a second UID" if fmt is not Fmt.RANGE else "trailing octets"
        raise DecodeError(
            f"over-long datagram: {length - expected} octets of {what} at offset {expected} "
            f"after the UID{'s' if fmt is Fmt.RANGE else ''} (Fmt {fmt.name.lower()}), "
            f"expected {expected} octets in all",
            "UID 2" if fmt is not Fmt.RANGE else "UID Len 2",
            expected,
        )


def _decode_uid(
    data: bytes, start: int, end: int, ba: int, index: int, justification: Justification
) -> UID:
    octets = data[start:end]
    if not ba:
        # BA 0: every bit of every octet is significant (§4.1), which any octets satisfy.
        return UID._unchecked(octets, _FULL_OCTET_BITS)
    uid_field = "UID" if index == 1 else "UID 2"
    ba_field = "BA" if index == 1 else "BA2"
    if not octets:
        raise DecodeError(
            f"{ba_field}: {ba} significant bits but {uid_field} is empty (offset 33)",
            ba_field,
            _OFFSET_FORMAT,
        )
    uid = UID._unchecked(octets, ba)
    if not insignificant_bits_clear(uid, justification):
        # UIAP §3.2.3: "Insignificant bits in the last octet MUST be set 0"; the partial
        # octet is on the unjustified side (§3.2.1.1): last if left-, first if right-justified.
        partial = end - 1 if justification is Justification.LEFT else start
        raise DecodeError(
            f"{uid_field}: insignificant bits of the partial octet at offset {partial} are not 0 "
            f"({ba_field} = {ba})",
            uid_field,
            partial,
        )
    return uid


def _check_domain_rules(number_space: NumberSpace, space: UIDSpace) -> None:
    """Rules of the domain's specification that the wire does not carry (UIAP §3.2.1.1)."""
    if space.fmt is Fmt.PREFIX and not number_space.allows_prefix:
        raise DecodeError(
            f"Fmt: {number_space.label} does not allow prefix claims (offset 33)",
            "Fmt",
            _OFFSET_FORMAT,
        )
    for index, uid in enumerate(space.uids, start=1):
        suffix = "" if index == 1 else " 2"
        if number_space.alignment is Alignment.OCTET and uid.bits != 8:
            # UIAP §4.1 BA: "Octet aligned data always sets this field 0."
            raise DecodeError(
                f"BA{'2' if index == 2 else ''}: {number_space.label} is octet aligned, "
                f"found {uid.ba} significant bits (offset 33)",
                "BA" if index == 1 else "BA2",
                _OFFSET_FORMAT,
            )
        if not number_space.min_octets <= len(uid.data) <= number_space.max_octets:
            raise DecodeError(
                f"UID Len{suffix}: {number_space.label} expects {number_space.min_octets} to "
                f"{number_space.max_octets} octets, found {len(uid.data)}",
                f"UID Len{suffix}",
                _OFFSET_UID_LEN if index == 1 else _OFFSET_UID_LEN2,
            )
    if space.second is not None and number_space.compare(space.first, space.second) > 0:
        second_offset = HEADER_LENGTH_OCTETS + len(space.first.data)
        raise DecodeError(
            f"UID 2: range upper bound at offset {second_offset} is below the lower bound",
            "UID 2",
            second_offset,
        )
