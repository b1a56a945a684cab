"""Legacy layouts of draft-peabody-dispatch-new-uuid-format-01 (April 2021).

Before RFC 9562, that draft gave versions 7 and 8 different layouts, and values built to it
exist in the wild. They carry the same version numbers as RFC 9562's v7/v8, so nothing in a
value tells the two apart: call these functions only for data known to follow the draft.

Draft UUIDv7 (§4.4): a 36-bit count of Unix *seconds* (unixts), then a binary fraction of
a second spread over subsec_a (12 bits), subsec_b (12 bits, after the version) and
subsec_seq_node (62 bits, after the variant): 86 fraction bits in all, read "where most to
least significant bits represent a further division by two" (§4.4.4.2). An encoder keeps
as many fraction bits as its precision needs and follows them with a sequence counter and
random bits; a decoder reads the fraction at whatever precision it wants.
:func:`build_draft_v7` encodes at millisecond, microsecond or nanosecond precision with the
field widths of the draft's Figures 3, 4 and 5.

Draft UUIDv8 (§4.5): timestamp_32 | timestamp_48 | ver | time_or_seq | var | seq_or_node |
node (Figure 6), with the generic 32-, 48-, 60- and 64-bit timestamp layouts of §4.5.4.

References: draft-peabody-dispatch-new-uuid-format-01 §4.4, §4.4.4.1 (Figures 3-5),
§4.4.4.2, §4.5, §4.5.1, §4.5.4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, TypeAlias
from uuid import UUID

from uuidkit._bits import (
    MASK_12,
    MASK_16,
    MASK_62,
    check_field,
    pack_frame,
    require_version,
    unpack_frame,
)
from uuidkit._construct import from_int_unchecked
from uuidkit._system import POOL
from uuidkit.errors import InvalidField, InvalidUUID

__all__ = [
    "DRAFT_V7_PRECISIONS",
    "DraftV7Fields",
    "DraftV7Precision",
    "DraftV8Fields",
    "DraftV8Value",
    "build_draft_v7",
    "build_draft_v8",
    "draft_v7_fields",
    "draft_v7_timestamp_ns",
    "draft_v8_fields",
    "read_draft_v8",
]

_NS_PER_S: Final = 1_000_000_000
#: Draft v7: fraction bits available in subsec_a + subsec_b + subsec_seq_node (§4.4).
_FRACTION_BITS: Final = 86
_UNIXTS_BITS: Final = 36

PrecisionName: TypeAlias = Literal["s", "ms", "us", "ns"]
DraftV8TimestampBits: TypeAlias = Literal[32, 48, 60, 64]


@dataclass(frozen=True, slots=True)
class DraftV7Precision:
    """One encoding of the draft v7's 86 bits: sub-second fraction, then seq, then random.

    References: draft-peabody-dispatch-new-uuid-format-01 §4.4.4.1 (Figures 3-5).
    """

    units_per_second: int
    subsec_bits: int
    seq_bits: int
    rand_bits: int


#: The draft's three worked encodings (each sums to 86 bits) and whole seconds for reading.
DRAFT_V7_PRECISIONS: Final[dict[str, DraftV7Precision]] = {
    "s": DraftV7Precision(1, 0, 0, 86),
    "ms": DraftV7Precision(1_000, 12, 12, 62),  # Figure 3: msec | seq | rand
    "us": DraftV7Precision(1_000_000, 24, 14, 48),  # Figure 4: usec | usec | seq | rand
    "ns": DraftV7Precision(_NS_PER_S, 38, 8, 40),  # Figure 5: nsec x3 | seq | rand
}


def _precision(name: str) -> DraftV7Precision:
    # isinstance first: an unhashable argument must not escape as TypeError from dict.get.
    found = DRAFT_V7_PRECISIONS.get(name) if isinstance(name, str) else None
    if found is None:
        raise InvalidField(
            f"precision: expected one of {', '.join(DRAFT_V7_PRECISIONS)}, found {name!r}",
            "precision",
        )
    return found


@dataclass(frozen=True, slots=True)
class DraftV7Fields:
    """A draft UUIDv7 under the draft's field names (Figure 2).

    References: draft-peabody-dispatch-new-uuid-format-01 §4.4.
    """

    unixts: int
    subsec_a: int
    subsec_b: int
    subsec_seq_node: int

    @property
    def subsec(self) -> int:
        """The 86 fraction bits as one integer: the fraction of a second is subsec / 2**86.

        References: draft-peabody-dispatch-new-uuid-format-01 §4.4.4.2.
        """
        return (self.subsec_a << 74) | (self.subsec_b << 62) | self.subsec_seq_node


def draft_v7_fields(value: UUID) -> DraftV7Fields:
    """The draft v7 fields of ``value``.

    References: draft-peabody-dispatch-new-uuid-format-01 §4.4.
    """
    high48, mid12, low62 = unpack_frame(require_version(value, 7))
    return DraftV7Fields(high48 >> 12, high48 & MASK_12, mid12, low62)


def draft_v7_timestamp_ns(value: UUID, precision: PrecisionName = "ns") -> int:
    """The time of a draft UUIDv7 in Unix-epoch nanoseconds, truncated to ``precision``.

    Reading at a precision finer than the encoder's yields its random bits as sub-units
    (the draft's Scenario 2); coarser yields the encoder's value truncated (Scenario 1).

    References: draft-peabody-dispatch-new-uuid-format-01 §4.4.4.2.
    """
    units_per_second = _precision(precision).units_per_second
    draft = draft_v7_fields(value)
    # §4.4.4.2: "take the first (most significant/leftmost) N bits of subsec and divide it
    # by 2^N"; with all 86 bits, then truncated to whole units of the stated precision.
    units = (draft.subsec * units_per_second) >> _FRACTION_BITS
    return draft.unixts * _NS_PER_S + units * (_NS_PER_S // units_per_second)


def build_draft_v7(
    unix_ns: int, precision: PrecisionName = "ms", seq: int = 0, rand: int | None = None
) -> UUID:
    """A draft UUIDv7 for ``unix_ns`` at ``precision`` "ms", "us" or "ns", with a sequence
    counter ``seq`` and random bits ``rand`` (drawn from the CSPRNG when ``None``).

    The fraction is rounded up to the next representable binary fraction, so reading it back
    at the same (or a coarser) precision returns ``unix_ns`` truncated to that precision.

    References: draft-peabody-dispatch-new-uuid-format-01 §4.4.1, §4.4.3, §4.4.4.1.
    """
    layout = _precision(precision)
    if layout.subsec_bits == 0:
        raise InvalidField("precision: build at 'ms', 'us' or 'ns', found 's'", "precision")
    if isinstance(unix_ns, bool) or not isinstance(unix_ns, int):
        raise InvalidField(f"unix_ns: expected an int, found {type(unix_ns).__name__}", "unix_ns")
    seconds, sub_ns = divmod(unix_ns, _NS_PER_S)
    # §4.4.1: "UUIDv7 utilizes a 36-bit big-endian unsigned Unix Timestamp value".
    check_field("unixts", seconds, _UNIXTS_BITS)
    check_field("seq", seq, layout.seq_bits)
    if rand is None:
        rand = _nonzero_random(layout.rand_bits)
    check_field("rand", rand, layout.rand_bits)
    # §4.4.3: "the node MUST NOT be set to all 0s".
    if rand == 0:
        raise InvalidField("rand: the draft forbids an all-zero node (§4.4.3)", "rand")
    units = sub_ns * layout.units_per_second // _NS_PER_S
    scale = layout.units_per_second
    subsec = -((-units << layout.subsec_bits) // scale)  # ceil(units * 2**bits / scale)
    payload = (subsec << (_FRACTION_BITS - layout.subsec_bits)) | (seq << layout.rand_bits) | rand
    high48 = (seconds << 12) | (payload >> 74)
    return from_int_unchecked(pack_frame(7, high48, (payload >> 62) & MASK_12, payload & MASK_62))


def _nonzero_random(bits: int) -> int:
    while True:
        value = POOL.next_u128() >> (128 - bits)
        if value:
            return value


@dataclass(frozen=True, slots=True)
class DraftV8Fields:
    """A draft UUIDv8 under the draft's field names (Figure 6).

    References: draft-peabody-dispatch-new-uuid-format-01 §4.5.
    """

    timestamp_32: int
    timestamp_48: int
    time_or_seq: int
    seq_or_node: int
    node: int


@dataclass(frozen=True, slots=True)
class DraftV8Value:
    """A draft UUIDv8 decoded under one of the generic layouts of §4.5.4.

    For the 64-bit layout ``timestamp`` has its 4 least significant bits zero: the layout
    keeps the 60 most significant bits.

    References: draft-peabody-dispatch-new-uuid-format-01 §4.5.1, §4.5.4.
    """

    timestamp_bits: int
    timestamp: int
    seq: int
    node: int


#: §4.5.2/§4.5.3: (sequence bits, node bits) of each generic timestamp width.
_DRAFT_V8_LAYOUTS: Final[dict[int, tuple[int, int]]] = {
    32: (12, 62),  # seq in time_or_seq; node = seq_or_node + node
    48: (12, 62),
    60: (8, 54),  # timestamp fills time_or_seq; seq in seq_or_node
    64: (8, 54),  # §4.5.4: "truncated to 60-bits", keeping "the most significant 60-bits"
}


def _draft_v8_layout(timestamp_bits: int) -> tuple[int, int]:
    known = isinstance(timestamp_bits, int) and not isinstance(timestamp_bits, bool)
    layout = _DRAFT_V8_LAYOUTS.get(timestamp_bits) if known else None
    if layout is None:
        raise InvalidField(
            f"timestamp_bits: expected 32, 48, 60 or 64, found {timestamp_bits!r}",
            "timestamp_bits",
        )
    return layout


def draft_v8_fields(value: UUID) -> DraftV8Fields:
    """The draft v8 fields of ``value`` (Figure 6).

    References: draft-peabody-dispatch-new-uuid-format-01 §4.5.
    """
    high48, mid12, low62 = unpack_frame(require_version(value, 8))
    return DraftV8Fields(high48 >> 16, high48 & MASK_16, mid12, low62 >> 54, low62 & (2**54 - 1))


def build_draft_v8(
    timestamp: int, timestamp_bits: DraftV8TimestampBits, seq: int, node: int
) -> UUID:
    """A draft UUIDv8 with a 32-, 48-, 60- or 64-bit ``timestamp``, sequence and node.

    32/48-bit timestamps take a 12-bit ``seq`` (time_or_seq) and a 62-bit ``node``; 60/64-bit
    timestamps a 8-bit ``seq`` (seq_or_node) and a 54-bit ``node``.

    References: draft-peabody-dispatch-new-uuid-format-01 §4.5.1-§4.5.4.
    """
    seq_bits, node_bits = _draft_v8_layout(timestamp_bits)
    check_field("timestamp", timestamp, timestamp_bits)
    check_field("seq", seq, seq_bits)
    check_field("node", node, node_bits)
    # §4.5.3: "the node MUST NOT be set to all 0s".
    if node == 0:
        raise InvalidField("node: the draft forbids an all-zero node (§4.5.3)", "node")
    if timestamp_bits == 32:
        # §4.5.1: leftover timestamp_48 bits "MUST" be set to 0.
        return from_int_unchecked(pack_frame(8, timestamp << 16, seq, node))
    if timestamp_bits == 48:
        return from_int_unchecked(pack_frame(8, timestamp, seq, node))
    timestamp60 = timestamp >> 4 if timestamp_bits == 64 else timestamp
    low62 = (seq << 54) | node
    return from_int_unchecked(pack_frame(8, timestamp60 >> 12, timestamp60 & MASK_12, low62))


def read_draft_v8(value: UUID, timestamp_bits: DraftV8TimestampBits) -> DraftV8Value:
    """Decode a draft UUIDv8 known to use the generic ``timestamp_bits`` layout.

    References: draft-peabody-dispatch-new-uuid-format-01 §4.5.1, §4.5.4.
    """
    _draft_v8_layout(timestamp_bits)
    high48, mid12, low62 = unpack_frame(require_version(value, 8))
    if timestamp_bits == 32:
        if high48 & MASK_16:
            raise InvalidUUID(f"{value}: timestamp_48 is not 0, not a 32-bit timestamp layout")
        return DraftV8Value(32, high48 >> 16, mid12, low62)
    if timestamp_bits == 48:
        return DraftV8Value(48, high48, mid12, low62)
    timestamp60 = (high48 << 12) | mid12
    timestamp = timestamp60 << 4 if timestamp_bits == 64 else timestamp60
    return DraftV8Value(timestamp_bits, timestamp, low62 >> 54, low62 & (2**54 - 1))
