"""Readers: the variant, the version and every field of a UUID under the RFC's names.

:func:`fields` returns one small frozen record per layout (``V1Fields`` ... ``V8Fields``),
``NilFields``/``MaxFields`` for the two special values, and ``OpaqueFields`` for variants and
versions whose layout RFC 9562 does not define. The bit positions come from the same frame
(:func:`uuidkit._bits.unpack_frame`) the builders in :mod:`uuidkit.layouts` use.

References: RFC 9562 §4.1 (Table 1), §4.2 (Table 2), §5.1-§5.10.
"""

from __future__ import annotations

from enum import StrEnum
from uuid import UUID

from uuidkit._accel import SPEEDUPS, compiled
from uuidkit._bits import MASK_12, MASK_14, MASK_16, MASK_48, MASK_62, MASK_128, unpack_frame
from uuidkit._construct import from_int_unchecked
from uuidkit._record import Record
from uuidkit.errors import InvalidUUID
from uuidkit.timestamps import NS_PER_MS, gregorian_ticks_to_unix_ns, unix_ns_to_datetime

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from datetime import datetime
    from typing import ClassVar, Final, TypeAlias, overload

    # the node-bearing records live with their layouts
    from uuidkit.nodelayouts import NodeFields

__all__ = [
    "MAX",
    "NIL",
    "MaxFields",
    "NilFields",
    "OpaqueFields",
    "UUIDFields",
    "V1Fields",
    "V2Fields",
    "V3Fields",
    "V4Fields",
    "V5Fields",
    "V6Fields",
    "V7Fields",
    "V8Fields",
    "Variant",
    "fields",
    "is_max",
    "is_nil",
    "timestamp_datetime",
    "timestamp_ns",
    "variant",
    "version",
]

#: RFC 9562 §5.9: "all 128 bits set to zero".
NIL: Final = from_int_unchecked(0)
#: RFC 9562 §5.10: "all 128 bits set to 1".
MAX: Final = from_int_unchecked(MASK_128)


class Variant(StrEnum):
    """The four rows of RFC 9562 Table 1, by the most significant bits of octet 8.

    The values are the standard library's strings (``uuid.RFC_4122`` and friends), so
    ``variant(u) == u.variant`` holds for every UUID.

    References: RFC 9562 §4.1 (Table 1).
    """

    #: 0xxx: reserved, NCS backward compatibility; includes the Nil UUID.
    NCS = "reserved for NCS compatibility"
    #: 10xx: the variant of RFC 9562 (and RFC 4122 before it).
    RFC_9562 = "specified in RFC 4122"
    #: 110x: reserved, Microsoft Corporation backward compatibility.
    MICROSOFT = "reserved for Microsoft compatibility"
    #: 111x: reserved for future definition; includes the Max UUID.
    FUTURE = "reserved for future definition"


def _as_int(value: UUID) -> int:
    if not isinstance(value, UUID):
        raise InvalidUUID(f"expected a uuid.UUID, found {type(value).__name__}")
    return value.int


def variant(value: UUID) -> Variant:
    """The variant of ``value`` (RFC 9562 Table 1).

    References: RFC 9562 §4.1.
    """
    top3 = (_as_int(value) >> 61) & 0b111
    if top3 < 0b100:
        return Variant.NCS
    if top3 < 0b110:
        return Variant.RFC_9562
    return Variant.MICROSOFT if top3 == 0b110 else Variant.FUTURE


def version(value: UUID) -> int | None:
    """The version (0-15) of an RFC 9562-variant UUID; ``None`` for the other variants,
    whose bits 48-51 are not a version (this includes Nil and Max).

    References: RFC 9562 §4.2 ("Table 2 lists all of the versions for this UUID variant").
    """
    number = _as_int(value)
    if (number >> 62) & 0b11 != 0b10:
        return None
    return (number >> 76) & 0xF


def is_nil(value: UUID) -> bool:
    """Whether ``value`` is the Nil UUID.

    References: RFC 9562 §5.9.
    """
    return _as_int(value) == 0


def is_max(value: UUID) -> bool:
    """Whether ``value`` is the Max UUID.

    References: RFC 9562 §5.10.
    """
    return _as_int(value) == MASK_128


class V1Fields(Record):
    """UUIDv1 fields; ``timestamp`` is the 60-bit count of 100 ns since 1582-10-15.

    References: RFC 9562 §5.1.
    """

    __slots__ = ()
    __match_args__ = ("time_low", "time_mid", "time_high", "clock_seq", "node")

    version: ClassVar[int] = 1
    time_low: int
    time_mid: int
    time_high: int
    clock_seq: int
    node: int

    @property
    def timestamp(self) -> int:
        """The 60-bit Gregorian timestamp reassembled from time_high, time_mid, time_low, in
        units of 100 nanoseconds since 1582-10-15 00:00:00 UTC (not Unix time: for Unix-epoch
        nanoseconds use :func:`timestamp_ns`).

        References: RFC 9562 §5.1 (time_low: "The least significant 32 bits").
        """
        return (self.time_high << 48) | (self.time_mid << 32) | self.time_low


class V2Fields(Record):
    """UUIDv2 (DCE Security) fields; outside RFC 9562, defined by DCE 1.1.

    ``clock_seq`` has 6 bits; ``local_domain`` (0 person, 1 group, 2 org) and
    ``local_identifier`` (e.g. a POSIX UID) replace clock_seq_low and time_low.

    References: RFC 9562 §5.2; DCE 1.1 Authentication and Security Services, §5.2.1.1.
    """

    __slots__ = ()
    __match_args__ = (
        "local_identifier",
        "time_mid",
        "time_high",
        "clock_seq",
        "local_domain",
        "node",
    )

    version: ClassVar[int] = 2
    local_identifier: int
    time_mid: int
    time_high: int
    clock_seq: int
    local_domain: int
    node: int


class V3Fields(Record):
    """UUIDv3 fields (MD5 bits).

    References: RFC 9562 §5.3.
    """

    __slots__ = ()
    __match_args__ = ("md5_high", "md5_mid", "md5_low")

    version: ClassVar[int] = 3
    md5_high: int
    md5_mid: int
    md5_low: int


class V4Fields(Record):
    """UUIDv4 fields (random bits).

    References: RFC 9562 §5.4.
    """

    __slots__ = ()
    __match_args__ = ("random_a", "random_b", "random_c")

    version: ClassVar[int] = 4
    random_a: int
    random_b: int
    random_c: int


class V5Fields(Record):
    """UUIDv5 fields (SHA-1 bits).

    References: RFC 9562 §5.5.
    """

    __slots__ = ()
    __match_args__ = ("sha1_high", "sha1_mid", "sha1_low")

    version: ClassVar[int] = 5
    sha1_high: int
    sha1_mid: int
    sha1_low: int


class V6Fields(Record):
    """UUIDv6 fields; ``timestamp`` is the 60-bit count of 100 ns since 1582-10-15.

    ``time_low`` holds the 12 least significant timestamp bits, as §5.6 names them
    (Appendix A.5's Figure 25 mislabels them time_high).

    References: RFC 9562 §5.6.
    """

    __slots__ = ()
    __match_args__ = ("time_high", "time_mid", "time_low", "clock_seq", "node")

    version: ClassVar[int] = 6
    time_high: int
    time_mid: int
    time_low: int
    clock_seq: int
    node: int

    @property
    def timestamp(self) -> int:
        """The 60-bit Gregorian timestamp reassembled from time_high, time_mid, time_low, in
        units of 100 nanoseconds since 1582-10-15 00:00:00 UTC (not Unix time: for Unix-epoch
        nanoseconds use :func:`timestamp_ns`).

        References: RFC 9562 §5.6 (time_high: "The most significant 32 bits").
        """
        return (self.time_high << 28) | (self.time_mid << 12) | self.time_low


class V7Fields(Record):
    """UUIDv7 fields.

    References: RFC 9562 §5.7.
    """

    __slots__ = ()
    __match_args__ = ("unix_ts_ms", "rand_a", "rand_b")

    version: ClassVar[int] = 7
    unix_ts_ms: int
    rand_a: int
    rand_b: int


class V8Fields(Record):
    """UUIDv8 fields.

    References: RFC 9562 §5.8.
    """

    __slots__ = ()
    __match_args__ = ("custom_a", "custom_b", "custom_c")

    version: ClassVar[int] = 8
    custom_a: int
    custom_b: int
    custom_c: int


class NilFields(Record):
    """The Nil UUID: no fields.

    References: RFC 9562 §5.9.
    """

    __slots__ = ()


class MaxFields(Record):
    """The Max UUID: no fields.

    References: RFC 9562 §5.10.
    """

    __slots__ = ()


class OpaqueFields(Record):
    """A variant or version whose layout RFC 9562 does not define (NCS, Microsoft, future
    variants; RFC-variant versions 0 and 9-15): the raw 128 bits.

    References: RFC 9562 §4.1 ("outside of the scope of this document"), §4.2 (Table 2).
    """

    __slots__ = ()
    __match_args__ = ("variant", "version", "value")

    variant: Variant
    version: int | None
    value: int


#: Any field record :func:`fields` returns: one per layout of RFC 9562 §5, or opaque bits.
UUIDFields: TypeAlias = (
    V1Fields
    | V2Fields
    | V3Fields
    | V4Fields
    | V5Fields
    | V6Fields
    | V7Fields
    | V8Fields
    | NilFields
    | MaxFields
    | OpaqueFields
)


_tuple_new = tuple.__new__

#: The record of each RFC 9562-variant version that shares the common frame of §5 (48-bit
#: high part, 12-bit mid part, 62-bit low part): 3, 4, 5, 7 and 8.
_FRAME_RECORDS: Final[
    tuple[type[V3Fields | V4Fields | V5Fields | V7Fields | V8Fields] | None, ...]
] = (None, None, None, V3Fields, V4Fields, V5Fields, None, V7Fields, V8Fields) + (None,) * 7
#: The record of versions 1 and 6, whose fields are time parts, clock_seq and node.
_TIME_RECORDS: Final[tuple[type[V1Fields | V6Fields] | None, ...]] = (
    None,
    V1Fields,
    None,
    None,
    None,
    None,
    V6Fields,
) + (None,) * 9


if TYPE_CHECKING:  # the variants exist for type checkers only: typing stays unloaded

    @overload
    def fields(value: UUID, *, layout: None = None) -> UUIDFields: ...
    @overload
    def fields(value: UUID, *, layout: str) -> NodeFields: ...
    @overload
    def fields(value: UUID, *, layout: str | None) -> UUIDFields | NodeFields: ...


def fields(value: UUID, *, layout: str | None = None) -> UUIDFields | NodeFields:
    """Every field of ``value`` under the RFC's names, as a frozen record.

    With ``layout`` (one of ``v1-node``, ``v6-node``, ``v7-node``, ``v8-node``), the fields
    of that node-bearing layout instead (see :mod:`uuidkit.nodelayouts`): nothing in a UUIDv7
    or UUIDv8 says that it carries a node, so the caller names the layout. A value whose
    version is not the layout's, or whose node lacks the multicast bit every claimed node
    has, raises :class:`~uuidkit.InvalidUUID`; an unknown layout :class:`~uuidkit.InvalidField`.

    References: RFC 9562 §5.1-§5.10, §6.4; DCE 1.1 (v2).
    """
    number = value.int if type(value) is UUID else _as_int(value)
    if layout is not None:
        # Loaded on first use, like every node-bearing part: ``import uuidkit`` stays small.
        from uuidkit.nodelayouts import read_node_layout

        return read_node_layout(value, layout)
    if (number >> 62) & 0b11 == 0b10:  # RFC 9562 variant: bits 48-51 are the version
        number_version = (number >> 76) & 0xF
        record = _FRAME_RECORDS[number_version]
        if record is not None:
            return _tuple_new(record, (number >> 80, (number >> 64) & MASK_12, number & MASK_62))
        time_record = _TIME_RECORDS[number_version]
        if time_record is not None:  # 1 and 6 (§5.1, §5.6): 32 + 16 + 12 time bits, clock_seq, node
            return _tuple_new(
                time_record,
                (
                    number >> 96,
                    (number >> 80) & MASK_16,
                    (number >> 64) & MASK_12,
                    (number >> 48) & MASK_14,
                    number & MASK_48,
                ),
            )
        if number_version == 2:
            return _read_v2(number)
    if number == 0:
        return NilFields()
    if number == MASK_128:
        return MaxFields()
    return OpaqueFields(variant(value), version(value), number)


def _read_v2(number: int) -> V2Fields:
    seq_and_domain = (number >> 48) & MASK_14
    return V2Fields._make(
        number >> 96,
        (number >> 80) & MASK_16,
        (number >> 64) & MASK_12,
        seq_and_domain >> 8,
        seq_and_domain & 0xFF,
        number & MASK_48,
    )


def timestamp_ns(value: UUID) -> int | None:
    """The embedded time in nanoseconds since the Unix epoch, 1970-01-01 00:00:00 UTC
    (negative before 1970; v1/v6 Gregorian ticks converted), or ``None`` for
    layouts without a full timestamp (v2 keeps only its top 28 bits; v3/v4/v5/v8 have none).

    v1/v6 resolve 100 ns; v7 resolves 1 ms (its rand_a is not assumed to be a fraction).

    References: RFC 9562 §5.1, §5.6, §5.7, §6.1.
    """
    number = _as_int(value)
    number_version = version(value)
    if number_version == 7:
        return (number >> 80) * NS_PER_MS
    if number_version == 1:
        # RFC 9562 §5.1: time_high (12 bits) | time_mid (16) | time_low (32)
        ticks = (((number >> 64) & MASK_12) << 48) | (((number >> 80) & MASK_16) << 32)
        return gregorian_ticks_to_unix_ns(ticks | (number >> 96))
    if number_version == 6:
        high48, mid12, _ = unpack_frame(number)
        return gregorian_ticks_to_unix_ns((high48 << 12) | (mid12 & MASK_12))
    return None


# The compiled twins (uuidkit._accel): they fill the same records for versions 1 and 3-8 and
# hand every other value to the functions above.
if SPEEDUPS is not None:
    SPEEDUPS.bind_records(V1Fields, V3Fields, V4Fields, V5Fields, V6Fields, V7Fields, V8Fields)
fields = compiled(fields)
timestamp_ns = compiled(timestamp_ns)


def timestamp_datetime(value: UUID) -> datetime | None:
    """The embedded time as an aware UTC ``datetime``, or ``None`` (see :func:`timestamp_ns`).

    ``datetime`` holds microseconds: the last digit of a v1/v6 100 ns tick is truncated.
    A v7 past 9999-12-31 raises :class:`~uuidkit.InvalidField`.

    References: RFC 9562 §5.1, §5.6, §5.7, §6.1.
    """
    unix_ns = timestamp_ns(value)
    return None if unix_ns is None else unix_ns_to_datetime(unix_ns)


timestamp_datetime = compiled(timestamp_datetime)
