"""UIDs, UID spaces, and the ordering and overlap rules of a domain's number space.

A :class:`UID` is 0 to 255 octets plus the number of significant bits in its partial
octet. A :class:`UIDSpace` is what a claim covers: one unique value, an inclusive range,
or every UID sharing a prefix. A :class:`NumberSpace` holds the characteristics a domain's
specification fixes (§3.2.1.1) and answers the one question the engine asks: do two
spaces of this domain overlap (§3.2.4: "The comparison fails if two UID spaces overlap at
any point")?

How the order is computed. Each rule of §3.2.4 becomes a sort key, compared as a tuple:

=========================  =======================  =======================================
justification              zeros significant        zeros not significant
=========================  =======================  =======================================
left (J=0)                 (octets, bit length)     octets, trailing zero octets removed
right (J=1)                (length, octets, bits)   octets, leading zero octets removed,
                                                    then compared as (length, octets)
=========================  =======================  =======================================

* Left, zeros significant: "a simple string comparison"; "longer UIDs are considered
  larger" is read as the string rule for a common prefix (``'ab' < 'abc'``), not as a
  length-first order, which would not be a string comparison.
* Right, zeros significant: "the longer string is larger", then octet by octet.
* Zeros not significant: "the shorter UID is zero-padded", on the unjustified side.
* Bit-aligned UIDs "identical on an octet-by-octet comparison but [with] different bit
  lengths": the longer is larger. Ambiguity resolved: this tie-break applies when zeros
  are significant. Where they are not, zero padding makes a shorter bit string equal to
  the longer one padded with zero bits, and only that reading keeps equality transitive
  (``0x0A/7 bits == 0x0A00`` and ``0x0A/8 bits == 0x0A00`` would otherwise contradict
  ``0x0A/7 bits < 0x0A/8 bits``).

Partial octets. §3.2.1.1 puts the partially significant octet "on the unjustified side":
for a left-justified UID it is the last octet and its low bits are insignificant; for a
right-justified UID (an integer) it is the first octet and its high bits are. §3.2.3
requires the insignificant bits to be 0.

Overlap. Every space is an interval of the domain's order: a unique value ``u`` is
``[u, u]``; a range is ``[lower, upper]``; a prefix ``p`` (left-justified hierarchical
domains only, §3.2.2) is ``[p, p followed by one bits up to 255 octets]``, because in a
left-significant order the UIDs that start with ``p`` are exactly those between those two.
Two spaces overlap when their intervals intersect; an inverted range is empty.

References: UIAP §1.1 (UID, UID Space), §3.2, §3.2.1.1, §3.2.1.2, §3.2.2, §3.2.3, §3.2.4.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from uuidkit.errors import SpaceError
from uuidkit.uiap.constants import MAX_UID_OCTETS
from uuidkit.uiap.domain import DomainID

__all__ = [
    "UID",
    "Alignment",
    "DataType",
    "Fmt",
    "Interval",
    "Justification",
    "NumberSpace",
    "UIDKey",
    "UIDSpace",
    "insignificant_bits_clear",
    "intervals_overlap",
    "spaces_overlap",
]

_FULL_OCTET: Final = 8
#: How a frozen dataclass sets its fields; the decoder builds values it has checked this way.
_set_field: Final = object.__setattr__
_new: Final = object.__new__

#: A sort key: (length or 0, octets, bit tie-break) — see the module docstring's table.
_Key = tuple[int, bytes, int]
#: A space as the inclusive [low, high] sort keys it spans (see "Overlap" above).
Interval = tuple[_Key, _Key]


class Fmt(enum.IntEnum):
    """How a claim's UID data describes its space: the 2-bit Fmt field (UIAP §4.1).

    References: UIAP §3.2.2, §4.1 (Fmt).
    """

    UNIQUE = 0
    PREFIX = 1
    RANGE = 2


class Justification(enum.Enum):
    """Whether a domain's UIDs align by their leftmost or rightmost octet.

    References: UIAP §3.2.1.1, §4.1 (J).
    """

    LEFT = 0
    RIGHT = 1


class DataType(enum.Enum):
    """Whether a domain's UIDs are binary or character data.

    References: UIAP §3.2.1.1.
    """

    BINARY = "binary"
    CHARACTER = "character"


class Alignment(enum.Enum):
    """Whether a domain's UIDs may end in a partially significant octet.

    References: UIAP §3.2.1.1.
    """

    OCTET = "octet"
    BIT = "bit"


@dataclass(frozen=True, slots=True)
class UID:
    """A unique identifier: 0 to 255 octets, most significant first (UIAP §3.2.3).

    ``bits`` is the number of significant bits (1 to 8) in the partial octet, which sits on
    the unjustified side (§3.2.1.1); 8, the default, means every bit is significant and is
    sent as BA = 0. An empty UID has no partial octet, so its ``bits`` is 8.

    References: UIAP §1.1 (UID), §3.2.1.1, §3.2.3, §4.1 (BA, UID Len).
    """

    data: bytes
    bits: int = _FULL_OCTET

    def __post_init__(self) -> None:
        if not isinstance(self.data, bytes):
            raise SpaceError(f"UID data: expected bytes, found {type(self.data).__name__}")
        if len(self.data) > MAX_UID_OCTETS:
            # UIAP §1.1: "a binary string up to 255 octets in length".
            raise SpaceError(f"UID data: expected at most 255 octets, found {len(self.data)}")
        if type(self.bits) is not int or not 1 <= self.bits <= _FULL_OCTET:
            raise SpaceError(f"UID bits: expected 1 to 8 significant bits, found {self.bits!r}")
        if not self.data and self.bits != _FULL_OCTET:
            raise SpaceError(f"UID bits: an empty UID has no partial octet, found {self.bits}")

    @classmethod
    def _unchecked(cls, data: bytes, bits: int) -> UID:
        """A UID built without the checks of ``__post_init__``: for the decoder only, which
        read ``data`` (at most 255 octets, UID Len being one octet) and ``bits`` (1 to 8,
        8 for empty data) from a datagram (UIAP §4.1)."""
        uid = _new(cls)
        _set_field(uid, "data", data)
        _set_field(uid, "bits", bits)
        return uid

    @classmethod
    def from_ba(cls, data: bytes, ba: int) -> UID:
        """The UID sent as ``data`` with Bit Alignment ``ba`` (0 means all 8 bits; UIAP §4.1)."""
        return cls(data, ba or _FULL_OCTET)

    @property
    def ba(self) -> int:
        """The BA field for this UID: significant bits of the partial octet, 0 for all."""
        return self.bits % _FULL_OCTET

    @property
    def bit_length(self) -> int:
        """The number of significant bits."""
        return len(self.data) * _FULL_OCTET - (_FULL_OCTET - self.bits) if self.data else 0

    def __str__(self) -> str:
        suffix = "" if self.bits == _FULL_OCTET else f"/{self.bit_length}b"
        return f"0x{self.data.hex()}{suffix}" if self.data else "<empty>"


def insignificant_bits_clear(uid: UID, justification: Justification) -> bool:
    """True if the insignificant bits of ``uid``'s partial octet are 0 (UIAP §3.2.3 MUST).

    References: UIAP §3.2.1.1 (partial octet "on the unjustified side"), §3.2.3.
    """
    if uid.bits == _FULL_OCTET:
        return True
    if justification is Justification.LEFT:
        return uid.data[-1] & ((1 << (_FULL_OCTET - uid.bits)) - 1) == 0
    return uid.data[0] >> uid.bits == 0


def _as_uid(value: UID | bytes) -> UID:
    return value if isinstance(value, UID) else UID(value)


@dataclass(frozen=True, slots=True)
class UIDSpace:
    """A claimed UID space: a unique value, an inclusive range, or a prefix (UIAP §3.2.2).

    Build one with :meth:`unique`, :meth:`range` or :meth:`prefix`. ``second`` is set only
    for a range, whose two UIDs are the lower and upper bound.

    References: UIAP §1.1 (UID Space), §3.2.2, §4.1 (Fmt, UID).
    """

    fmt: Fmt
    first: UID
    second: UID | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.fmt, Fmt):
            raise SpaceError(f"UID space Fmt: expected a Fmt, found {self.fmt!r}")
        if (self.fmt is Fmt.RANGE) != (self.second is not None):
            raise SpaceError(
                f"UID space: a range needs exactly two UIDs, other formats one "
                f"(Fmt {self.fmt.name})"
            )

    @classmethod
    def _unchecked(cls, fmt: Fmt, first: UID, second: UID | None) -> UIDSpace:
        """A space built without the checks of ``__post_init__``: for the decoder only,
        which pairs a second UID with Fmt 2 (range) and with nothing else (UIAP §4.1)."""
        space = _new(cls)
        _set_field(space, "fmt", fmt)
        _set_field(space, "first", first)
        _set_field(space, "second", second)
        return space

    @classmethod
    def unique(cls, uid: UID | bytes) -> UIDSpace:
        """A single UID (Fmt 0)."""
        return cls(Fmt.UNIQUE, _as_uid(uid))

    @classmethod
    def prefix(cls, uid: UID | bytes) -> UIDSpace:
        """Every UID beginning with ``uid`` (Fmt 1; left-justified hierarchical domains)."""
        return cls(Fmt.PREFIX, _as_uid(uid))

    @classmethod
    def range(cls, lower: UID | bytes, upper: UID | bytes) -> UIDSpace:
        """Every UID from ``lower`` to ``upper`` inclusive (Fmt 2)."""
        return cls(Fmt.RANGE, _as_uid(lower), _as_uid(upper))

    @property
    def uids(self) -> tuple[UID, ...]:
        """The one or two UIDs carried in a message, in wire order."""
        return (self.first,) if self.second is None else (self.first, self.second)

    def __str__(self) -> str:
        if self.second is not None:
            return f"range {self.first}..{self.second}"
        return f"{self.fmt.name.lower()} {self.first}"


@dataclass(frozen=True, slots=True)
class UIDKey:
    """A UID placed in its domain's order; keys of different domains refuse to be ordered.

    ``<``, ``<=``, ``>``, ``>=`` raise :class:`~uuidkit.errors.SpaceError` across domains
    (§3.2.4: "UIAP devices MUST NOT perform such a comparison"); ``==`` across domains is
    simply False, so keys can live in sets and dicts.

    References: UIAP §3.2.4.
    """

    domain_id: DomainID
    key: _Key

    def _other(self, other: UIDKey) -> _Key:
        if self.domain_id != other.domain_id:
            # UIAP §3.2.4: "UIAP devices MUST NOT perform such a comparison."
            raise SpaceError(
                f"UIDs of domains {self.domain_id} and {other.domain_id} cannot be compared"
            )
        return other.key

    def __lt__(self, other: UIDKey) -> bool:
        return self.key < self._other(other)

    def __le__(self, other: UIDKey) -> bool:
        return self.key <= self._other(other)

    def __gt__(self, other: UIDKey) -> bool:
        return self.key > self._other(other)

    def __ge__(self, other: UIDKey) -> bool:
        return self.key >= self._other(other)


@dataclass(frozen=True, slots=True)
class NumberSpace:
    """A domain's number space: its DID and the characteristics its specification fixes.

    Justification comes from the DID's J flag; the other characteristics of §3.2.1.1
    (data type, bit or octet alignment, significant zeros, length) and whether the space
    is hierarchical (which allows prefix claims, §3.2.2) come from the domain's
    specification, which UIAP does not carry on the wire. :meth:`generic` gives the rules
    a device applies knowing only the DID.

    References: UIAP §2.2, §3.2.1, §3.2.1.1, §3.2.2, §3.2.4.
    """

    domain_id: DomainID
    data_type: DataType = DataType.BINARY
    alignment: Alignment = Alignment.OCTET
    significant_zeros: bool = True
    hierarchical: bool = False
    min_octets: int = 0
    max_octets: int = MAX_UID_OCTETS
    name: str = ""

    def __post_init__(self) -> None:
        if self.data_type is DataType.CHARACTER and self.alignment is Alignment.BIT:
            # UIAP §3.2.1.1: "UIDs represented as characters are octet aligned".
            raise SpaceError("number space: character data must be octet aligned")
        if not 0 <= self.min_octets <= self.max_octets <= MAX_UID_OCTETS:
            raise SpaceError(
                f"number space length: expected 0 <= min <= max <= 255, "
                f"found {self.min_octets}..{self.max_octets}"
            )

    @classmethod
    def generic(cls, domain_id: DomainID) -> NumberSpace:
        """The rules known from the DID alone: J's justification, all data significant.

        §3.2.1.1: "UIAP treats all data in a UID as significant". Bit alignment is allowed
        (the wire carries BA), and prefixes are allowed in left-justified domains.

        References: UIAP §2.2, §3.2.1.1, §3.2.2.
        """
        return _generic(domain_id)

    @property
    def justification(self) -> Justification:
        """LEFT or RIGHT, from the DID's J flag (UIAP §4.1)."""
        return Justification.RIGHT if self.domain_id.right_justified else Justification.LEFT

    @property
    def allows_prefix(self) -> bool:
        """Prefixes "are only valid for hierarchical, left justified, number spaces" (§3.2.2)."""
        return self.hierarchical and not self.domain_id.right_justified

    def key(self, uid: UID) -> UIDKey:
        """``uid``'s place in this domain's order (see the module docstring's table)."""
        return UIDKey(self.domain_id, self._sort_key(uid))

    def compare(self, a: UID, b: UID) -> int:
        """-1, 0 or 1 as ``a`` sorts before, equal to, or after ``b`` (UIAP §3.2.4)."""
        ka, kb = self._sort_key(a), self._sort_key(b)
        return (ka > kb) - (ka < kb)

    def contains(self, space: UIDSpace, uid: UID) -> bool:
        """True if ``uid`` lies in ``space`` (UIAP §3.2.2, §3.2.4)."""
        low, high = self._interval(space)
        return low <= self._sort_key(uid) <= high

    def overlaps(self, a: UIDSpace, b: UIDSpace) -> bool:
        """True if the two spaces share a UID: the claims conflict (UIAP §3.2.4, §4.2.2.1).

        References: UIAP §3.2.4 ("fails if two UID spaces overlap at any point").
        """
        return intervals_overlap(self._interval(a), self._interval(b))

    def interval(self, space: UIDSpace) -> Interval:
        """``space`` as the [low, high] sort keys it spans in this domain's order, for
        callers that compare one space with many (:func:`intervals_overlap`).

        References: UIAP §3.2.2, §3.2.4.
        """
        return self._interval(space)

    def check_uid(self, uid: UID, field: str = "UID") -> None:
        """Raise :class:`~uuidkit.errors.SpaceError` unless ``uid`` is legal here.

        References: UIAP §3.2.1.1, §3.2.3.
        """
        if not self.min_octets <= len(uid.data) <= self.max_octets:
            raise SpaceError(
                f"{field}: {self.label} expects {self.min_octets} to {self.max_octets} octets, "
                f"found {len(uid.data)}"
            )
        if self.alignment is Alignment.OCTET and uid.bits != _FULL_OCTET:
            raise SpaceError(
                f"{field}: {self.label} is octet aligned, found {uid.bits} significant bits"
            )
        if not insignificant_bits_clear(uid, self.justification):
            # UIAP §3.2.3: "Insignificant bits in the last octet MUST be set 0."
            raise SpaceError(f"{field}: insignificant bits of the partial octet are not 0")

    def check_space(self, space: UIDSpace) -> None:
        """Raise :class:`~uuidkit.errors.SpaceError` unless ``space`` is legal here.

        References: UIAP §3.2.2, §3.2.3.
        """
        if space.fmt is Fmt.PREFIX and not self.allows_prefix:
            # UIAP §3.2.2: prefixes "are only valid for hierarchical, left justified" spaces.
            raise SpaceError(f"Fmt: {self.label} is not left-justified and hierarchical")
        for field, uid in zip(("UID", "UID 2"), space.uids, strict=False):
            self.check_uid(uid, field)
        if space.second is not None and self.compare(space.first, space.second) > 0:
            raise SpaceError(f"range: lower bound {space.first} is above upper {space.second}")

    def canonical(self, space: UIDSpace) -> UIDSpace:
        """``space`` in the form that compares the same under every device's rules.

        Devices compare by the rules the wire carries (the DID's J flag, all data
        significant, §3.2.1.1); the domain's own rules are applied by the claimant. Where
        this domain's zeros are not significant, equal UIDs may be written with more or
        fewer zero octets on the unjustified side (``0x0005 == 0x05``), so the claimant
        sends the shortest: zero octets on the unjustified side removed, every bit of
        the last octet significant (padding with zeros also pads bits). Two claims equal
        (or ordered) under this domain's rules are then equal (ordered alike) under the
        wire's. A prefix is sent as given: removing its zeros would widen it. In a
        domain whose zeros are significant every form is already canonical.

        References: UIAP §3.2.1.1 ("The domain specification describes whether (and how)
        UIDs are to be padded"), §3.2.4.
        """
        if self.significant_zeros or space.fmt is Fmt.PREFIX:
            return space
        uids = tuple(self._shortest(uid) for uid in space.uids)
        return UIDSpace(space.fmt, *uids)

    def _shortest(self, uid: UID) -> UID:
        if self.domain_id.right_justified:
            return UID(uid.data.lstrip(b"\0"))
        return UID(uid.data.rstrip(b"\0"))

    @property
    def label(self) -> str:
        """The domain's name, or its DID, for messages."""
        return self.name or f"domain {self.domain_id}"

    def _sort_key(self, uid: UID) -> _Key:
        return self._key_of(uid.data, uid.bits)

    def _key_of(self, data: bytes, bits: int) -> _Key:
        if self.domain_id.right_justified:
            if self.significant_zeros:
                return (len(data), data, bits)
            stripped = data.lstrip(b"\0")
            return (len(stripped), stripped, 0)
        if self.significant_zeros:
            return (0, data, bits)
        return (0, data.rstrip(b"\0"), 0)

    def _interval(self, space: UIDSpace) -> Interval:
        if space.second is not None:
            return self._sort_key(space.first), self._sort_key(space.second)
        low = self._sort_key(space.first)
        if space.fmt is Fmt.UNIQUE:
            return low, low
        if not self.allows_prefix:
            raise SpaceError(f"Fmt: prefix claims need a left-justified hierarchical {self.label}")
        return low, self._key_of(_last_with_prefix(space.first), _FULL_OCTET)


def intervals_overlap(a: Interval, b: Interval) -> bool:
    """True if two intervals of one domain's order (:meth:`NumberSpace.interval`) share a
    key; an inverted range is empty.

    References: UIAP §3.2.4 ("fails if two UID spaces overlap at any point").
    """
    (low_a, high_a), (low_b, high_b) = a, b
    return low_a <= high_a and low_b <= high_b and max(low_a, low_b) <= min(high_a, high_b)


def _last_with_prefix(prefix: UID) -> bytes:
    """The octets of the largest UID beginning with ``prefix``: its bits, then ones up to
    255 octets (all 8 bits of the last octet significant)."""
    data = prefix.data
    if prefix.bits != _FULL_OCTET:
        data = data[:-1] + bytes((data[-1] | (1 << (_FULL_OCTET - prefix.bits)) - 1,))
    return data + b"\xff" * (MAX_UID_OCTETS - len(data))


@lru_cache(maxsize=256)
def _generic(domain_id: DomainID) -> NumberSpace:
    return NumberSpace(
        domain_id,
        alignment=Alignment.BIT,
        significant_zeros=True,
        hierarchical=not domain_id.right_justified,
    )


def spaces_overlap(a: UIDSpace, b: UIDSpace, rules: NumberSpace | DomainID) -> bool:
    """True if ``a`` and ``b``, two spaces of one domain, share at least one UID.

    ``rules`` is the domain's :class:`NumberSpace`, or just its DID, in which case the
    generic rules of :meth:`NumberSpace.generic` apply. This is the engine's conflict test
    (§4.2.2.1: "same DID and intersecting UID space"); checking the DIDs are equal is the
    caller's part.

    References: UIAP §3.2.4, §4.2.2.1.
    """
    number_space = rules if isinstance(rules, NumberSpace) else _generic(rules)
    return number_space.overlaps(a, b)
