"""Pure builders: the RFC's own fields in, a :class:`uuid.UUID` out.

Each version has two entry points:

- ``build_vN(...)`` validates every field (out of range raises
  :class:`~uuidkit.InvalidField` naming the field) and returns a :class:`uuid.UUID`;
- ``vN_int(...)`` is the unchecked core returning the 128-bit integer, for generators that
  produce fields already in range on their hot path.

Every layout is the frame of :func:`uuidkit._bits.pack_frame` (48 bits, version, 12 bits,
variant, 62 bits) with its own field names, so each bit layout is written down once. The
matching readers are in :mod:`uuidkit.fields`. Nothing here reads a clock or draws random
bits except :func:`build_v4` without ``data``; "now" belongs to the generators.

Timestamps of v1/v2/v6 are 60-bit counts of 100 ns since 1582-10-15 (see
:mod:`uuidkit.timestamps` to convert from Unix nanoseconds or ``datetime``).

References: RFC 9562 §5.1-§5.8; DCE 1.1 Authentication and Security Services (v2).
"""

from __future__ import annotations

from uuid import UUID

from uuidkit._bits import (
    CLOCK_SEQ_BITS,
    FRAME_HIGH_SHIFT,
    FRAME_MID_SHIFT,
    MASK_12,
    MASK_32,
    pack_frame,
    require_version,
    stamp,
    unpack_frame,
    version_bits,
)
from uuidkit._bits import check_field as _check
from uuidkit._construct import from_int_unchecked
from uuidkit._system import POOL
from uuidkit.errors import InvalidField

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "DCE_DOMAIN_GROUP",
    "DCE_DOMAIN_ORG",
    "DCE_DOMAIN_PERSON",
    "build_v1",
    "build_v2",
    "build_v3",
    "build_v4",
    "build_v5",
    "build_v6",
    "build_v7",
    "build_v8",
    "name_based_int",
    "name_bytes",
    "namespace_bytes",
    "v1_int",
    "v1_to_v6",
    "v2_int",
    "v6_int",
    "v6_to_v1",
    "v7_int",
    "v8_int",
]

#: DCE 1.1 local domains of a v2 UUID: POSIX UID, POSIX GID, organisation.
DCE_DOMAIN_PERSON: Final = 0
DCE_DOMAIN_GROUP: Final = 1
DCE_DOMAIN_ORG: Final = 2

_V7_BITS: Final = version_bits(7)


# --- unchecked integer cores (callers guarantee every field is in range) ---------------------


def v1_int(timestamp: int, clock_seq: int, node: int) -> int:
    """UUIDv1 as an int: time_low (32), time_mid (16), ver, time_high (12), var, clock_seq, node.

    References: RFC 9562 §5.1 (Figure 6).
    """
    time_low_and_mid = ((timestamp & MASK_32) << 16) | ((timestamp >> 32) & 0xFFFF)
    return pack_frame(1, time_low_and_mid, timestamp >> 48, (clock_seq << 48) | node)


def v2_int(
    local_domain: int, local_identifier: int, timestamp: int, clock_seq: int, node: int
) -> int:
    """UUIDv2 as an int: v1 with time_low replaced by the local identifier and clock_seq_low by
    the local domain, leaving 6 bits of clock_seq.

    References: RFC 9562 §5.2 (out of scope there); DCE 1.1 Authentication and Security
    Services, §5.2.1.1.
    """
    identifier_and_time_mid = (local_identifier << 16) | ((timestamp >> 32) & 0xFFFF)
    domain_part = (clock_seq << 56) | (local_domain << 48) | node
    return pack_frame(2, identifier_and_time_mid, timestamp >> 48, domain_part)


def v6_int(timestamp: int, clock_seq: int, node: int) -> int:
    """UUIDv6 as an int: the 60-bit timestamp most significant first, then clock_seq, node.

    References: RFC 9562 §5.6 (Figure 10).
    """
    return pack_frame(6, timestamp >> 12, timestamp & MASK_12, (clock_seq << 48) | node)


def v7_int(unix_ts_ms: int, rand_a: int, rand_b: int) -> int:
    """UUIDv7 as an int: unix_ts_ms (48), ver, rand_a (12), var, rand_b (62).

    The frame of :func:`uuidkit._bits.pack_frame`, inlined: this is the generators' hot path.

    References: RFC 9562 §5.7 (Figure 11).
    """
    return (unix_ts_ms << FRAME_HIGH_SHIFT) | _V7_BITS | (rand_a << FRAME_MID_SHIFT) | rand_b


def v8_int(custom_a: int, custom_b: int, custom_c: int) -> int:
    """UUIDv8 as an int: custom_a (48), ver, custom_b (12), var, custom_c (62).

    References: RFC 9562 §5.8 (Figure 12).
    """
    return pack_frame(8, custom_a, custom_b, custom_c)


def name_based_int(digest: bytes, version: int) -> int:
    """The leftmost 128 bits of ``digest`` with version and variant overwritten.

    References: RFC 9562 §5.3, §5.5, Appendix A.2/A.4 ("Ver and Var Overwrite"), B.2.
    """
    return stamp(int.from_bytes(digest[:16]), version)


# --- checked builders -----------------------------------------------------------------------


def _time_fields(timestamp: int, clock_seq: int, node: int) -> None:
    _check("timestamp", timestamp, 60)
    _check("clock_seq", clock_seq, CLOCK_SEQ_BITS)
    _check("node", node, 48)


def build_v1(timestamp: int, clock_seq: int, node: int) -> UUID:
    """A UUIDv1 from its 60-bit Gregorian timestamp (100 ns ticks), 14-bit clock_seq, 48-bit node.

    UUIDv1 does not sort by time: its string starts with time_low, the fastest-changing part.

    References: RFC 9562 §5.1, Appendix A.1.
    """
    _time_fields(timestamp, clock_seq, node)
    return from_int_unchecked(v1_int(timestamp, clock_seq, node))


def build_v2(
    local_domain: int, local_identifier: int, timestamp: int, clock_seq: int, node: int
) -> UUID:
    """A UUIDv2 (DCE Security) from its local domain (8 bits), local identifier (32 bits, e.g.
    a POSIX UID), 60-bit timestamp, 6-bit clock_seq and 48-bit node.

    The low 32 bits of ``timestamp`` are discarded: the local identifier takes their place,
    so a v2 only resolves time to about 7 minutes. UUIDv2 is outside RFC 9562's scope
    (§5.2 defers it to DCE); uuidkit supports it as an extension following DCE 1.1.

    References: RFC 9562 §5.2; DCE 1.1 Authentication and Security Services, §5.2.1.1.
    """
    _check("local_domain", local_domain, 8)
    _check("local_identifier", local_identifier, 32)
    _check("timestamp", timestamp, 60)
    _check("clock_seq", clock_seq, 6)
    _check("node", node, 48)
    return from_int_unchecked(v2_int(local_domain, local_identifier, timestamp, clock_seq, node))


def name_bytes(name: str | bytes) -> bytes:
    """The octets hashed for ``name``: UTF-8 for ``str``, ``bytes`` as given.

    A ``str`` that UTF-8 cannot encode (a lone surrogate, as ``os.fsdecode`` produces for
    undecodable file names) raises :class:`~uuidkit.InvalidField` naming its position.

    References: RFC 9562 §6.5 ("A note on names": a canonical sequence of octets).
    """
    if isinstance(name, str):
        try:
            return name.encode("utf-8")
        except UnicodeEncodeError as error:
            raise InvalidField(
                f"name: character {name[error.start]!r} at {error.start} is not encodable as "
                "UTF-8 (a lone surrogate); pass the name's octets as bytes",
                "name",
            ) from None
    if type(name) is bytes:  # immutable: hashed as it is, no copy
        return name
    if isinstance(name, bytes | bytearray | memoryview):
        return bytes(name)
    raise InvalidField(f"name: expected str or bytes, found {type(name).__name__}", "name")


def namespace_bytes(namespace: UUID) -> bytes:
    """The 16 octets of ``namespace`` in network byte order.

    References: RFC 9562 §5.3 ("in network byte order"), §6.6.
    """
    if not isinstance(namespace, UUID):
        raise InvalidField(
            f"namespace: expected a uuid.UUID, found {type(namespace).__name__}", "namespace"
        )
    return namespace.bytes


#: The hash constructors by name, found on first use by :func:`hash_constructor`.
_HASH_CONSTRUCTORS: dict[str, Any] = {}


def hash_constructor(algorithm: str) -> Any:
    """The constructor of the :mod:`hashlib` hash ``algorithm``, loaded on first use.

    The interpreter's own module (``_md5``, ``_sha1``, ...) where it has one, else
    :mod:`hashlib`'s: the same digest, but hashlib's OpenSSL constructors look the algorithm
    up again on every call, a quarter to a half of a name-based UUID's time. Neither module is
    imported with uuidkit: loading OpenSSL is a large part of an import.
    """
    constructor = _HASH_CONSTRUCTORS.get(algorithm)
    if constructor is None:
        try:
            constructor = getattr(__import__("_" + algorithm), algorithm)
        except (ImportError, AttributeError):  # built without it: OpenSSL's through hashlib
            import hashlib

            constructor = getattr(hashlib, algorithm)
        _HASH_CONSTRUCTORS[algorithm] = constructor
    return constructor


def build_v3(namespace: UUID, name: str | bytes) -> UUID:
    """The UUIDv3 of ``name`` in ``namespace``: MD5 over namespace octets then name octets.

    References: RFC 9562 §5.3, §6.5, Appendix A.2.
    """
    message = namespace_bytes(namespace) + name_bytes(name)
    digest = hash_constructor("md5")(message, usedforsecurity=False).digest()
    return from_int_unchecked(name_based_int(digest, 3))


def build_v5(namespace: UUID, name: str | bytes) -> UUID:
    """The UUIDv5 of ``name`` in ``namespace``: SHA-1, leftmost 128 bits, rest discarded.

    References: RFC 9562 §5.5, §6.5, Appendix A.4.
    """
    message = namespace_bytes(namespace) + name_bytes(name)
    digest = hash_constructor("sha1")(message, usedforsecurity=False).digest()
    return from_int_unchecked(name_based_int(digest, 5))


def build_v4(data: bytes | None = None) -> UUID:
    """A UUIDv4 from 16 given octets (version and variant overwritten) or from the CSPRNG.

    References: RFC 9562 §5.4, §6.9, Appendix A.3.
    """
    if data is None:
        return from_int_unchecked(stamp(POOL.next_u128(), 4))
    if not isinstance(data, bytes | bytearray) or len(data) != 16:
        size = len(data) if isinstance(data, bytes | bytearray) else type(data).__name__
        raise InvalidField(f"data: expected 16 bytes, found {size}", "data")
    return from_int_unchecked(stamp(int.from_bytes(data), 4))


def build_v6(timestamp: int, clock_seq: int, node: int) -> UUID:
    """A UUIDv6 from its 60-bit Gregorian timestamp (100 ns ticks), 14-bit clock_seq, 48-bit node.

    References: RFC 9562 §5.6, Appendix A.5.
    """
    _time_fields(timestamp, clock_seq, node)
    return from_int_unchecked(v6_int(timestamp, clock_seq, node))


def build_v7(unix_ts_ms: int, rand_a: int, rand_b: int) -> UUID:
    """A UUIDv7 from unix_ts_ms (48 bits), rand_a (12 bits) and rand_b (62 bits).

    References: RFC 9562 §5.7, Appendix A.6.
    """
    _check("unix_ts_ms", unix_ts_ms, 48)
    _check("rand_a", rand_a, 12)
    _check("rand_b", rand_b, 62)
    return from_int_unchecked(v7_int(unix_ts_ms, rand_a, rand_b))


def build_v8(custom_a: int, custom_b: int, custom_c: int) -> UUID:
    """A UUIDv8 from custom_a (48 bits), custom_b (12 bits) and custom_c (62 bits).

    References: RFC 9562 §5.8, Appendix B.1.
    """
    _check("custom_a", custom_a, 48)
    _check("custom_b", custom_b, 12)
    _check("custom_c", custom_c, 62)
    return from_int_unchecked(v8_int(custom_a, custom_b, custom_c))


# --- v1 <-> v6 --------------------------------------------------------------------------------


def _v1_timestamp(number: int) -> int:
    time_low_and_mid, time_high, _ = unpack_frame(number)
    return (time_high << 48) | ((time_low_and_mid & 0xFFFF) << 32) | (time_low_and_mid >> 16)


def v1_to_v6(value: UUID) -> UUID:
    """The UUIDv6 with the same timestamp, clock_seq and node as the UUIDv1 ``value``.

    Lossless: ``v6_to_v1(v1_to_v6(u)) == u``.

    References: RFC 9562 §5.6 ("a field-compatible version of UUIDv1 ... reordered").
    """
    number = require_version(value, 1)
    return from_int_unchecked(v6_int(_v1_timestamp(number), 0, 0) | (number & ((1 << 62) - 1)))


def v6_to_v1(value: UUID) -> UUID:
    """The UUIDv1 with the same timestamp, clock_seq and node as the UUIDv6 ``value``.

    References: RFC 9562 §5.6.
    """
    number = require_version(value, 6)
    high48, mid12, low62 = unpack_frame(number)
    return from_int_unchecked(v1_int((high48 << 12) | mid12, 0, 0) | low62)
