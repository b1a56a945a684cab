"""Domain IDs: 7 octets naming a domain, 1 octet of flags, and the text form of §6.1.

A Domain ID (DID) is an 8-octet value. Octets 0-1 name the allocating authority (§6),
octets 2-6 are allocated by that authority, and octet 7 holds the flags: its most
significant bit is J, the justification of the domain's UIDs (§4.1: "0 implies left
justified. 1 implies right justified"); its other 7 bits are reserved.

Text form (§6.1): four colon-separated hexadecimal quads of 16 bits each, covering all
8 octets (so the last quad is octet 6 followed by the flags octet):
``'0001:0002:0003:0000'``, or abbreviated ``'1:2:3:0'``. A pattern may put ``*`` in place
of a quad (any value) or ``?`` in place of a hex digit of a fully expanded quad
(``'1:2:3:0???'``). Hex digits are ASCII ``0-9a-fA-F`` only: no signs, underscores, spaces
or non-ASCII digits (the lenient ``int(text, 16)`` accepts all of those).

Ambiguity resolved (§6.1): "substituting an '*' character in place of one or more quads"
is read as one ``*`` per quad, so a pattern always has four components (``'1:*:*:*'``,
not ``'1:*'``); this keeps every pattern the same shape as the DIDs it matches.

References: UIAP §2.2, §4.1 (Domain ID, J), §6, §6.1.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from uuidkit.errors import DomainIDError

__all__ = [
    "AUTHORITY_EXPERIMENTAL",
    "AUTHORITY_IANA",
    "AUTHORITY_PRIVATE",
    "AUTHORITY_RESERVED",
    "DOMAIN_ID_OCTETS",
    "J_FLAG",
    "RESERVED_FLAG_BITS",
    "AllocatingAuthority",
    "DomainID",
    "DomainIDPattern",
    "authority_of",
]

#: A Domain ID is 8 octets including the flags octet (UIAP §4.1, §6).
DOMAIN_ID_OCTETS: Final = 8
#: The J (justification) flag: the most significant bit of the flags octet (UIAP §4.1).
J_FLAG: Final = 0x80
#: The reserved bits of the flags octet: "MUST be set 0 by sender and ignored by receiver".
RESERVED_FLAG_BITS: Final = 0x7F

_MAX_VALUE: Final = (1 << 64) - 1
_QUADS: Final = 4
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")


class AllocatingAuthority(enum.Enum):
    """Who allocates a Domain ID, from its first two octets (the table of UIAP §6).

    References: UIAP §6.
    """

    #: 0x0000, and 0x0002-0x0FFD ("allowing for growth"), and 0x1000.
    RESERVED = "reserved"
    #: 0x0001: IANA standardised allocations.
    IANA = "IANA"
    #: 0x0FFE: private usage, site or organisation local deployment.
    PRIVATE = "private"
    #: 0x0FFF: experimental work.
    EXPERIMENTAL = "experimental"
    #: 0x1001-0xFFFF: reserved for other allocating authorities (organisations).
    OTHER_AUTHORITY = "other authority"


#: The named two-octet authority prefixes of UIAP §6.
AUTHORITY_RESERVED: Final = 0x0000
AUTHORITY_IANA: Final = 0x0001
AUTHORITY_PRIVATE: Final = 0x0FFE
AUTHORITY_EXPERIMENTAL: Final = 0x0FFF
_FIRST_OTHER_AUTHORITY: Final = 0x1001


def authority_of(prefix: int) -> AllocatingAuthority:
    """Classify a two-octet authority prefix (``0 <= prefix <= 0xFFFF``) per the table of §6.

    References: UIAP §6.
    """
    if not 0 <= prefix <= 0xFFFF:
        raise DomainIDError(f"authority prefix: expected 0..0xFFFF, found {prefix:#x}")
    named = {
        AUTHORITY_IANA: AllocatingAuthority.IANA,
        AUTHORITY_PRIVATE: AllocatingAuthority.PRIVATE,
        AUTHORITY_EXPERIMENTAL: AllocatingAuthority.EXPERIMENTAL,
    }
    if prefix in named:
        return named[prefix]
    if prefix >= _FIRST_OTHER_AUTHORITY:
        return AllocatingAuthority.OTHER_AUTHORITY
    return AllocatingAuthority.RESERVED


@dataclass(frozen=True, slots=True)
class DomainID:
    """An 8-octet UIAP Domain ID, held as its 64-bit big-endian value.

    Equal DIDs name the same domain; the whole flags octet is part of the DID (§2.2: the
    flags "are always treated as part of the DID"), the 7 reserved bits beside J included:
    a DID whose reserved bits are set (by a later revision, or a misbehaving sender) is
    kept exactly, forwarded exactly, and is a different domain from the same DID with the
    bits clear (§4.1: "UIAP devices treat the Domain ID as an unformatted identifier").
    Only J changes how UIDs compare.

    References: UIAP §2.2, §4.1 (Domain ID, J), §6, §6.1.
    """

    value: int

    def __post_init__(self) -> None:
        if type(self.value) is not int or not 0 <= self.value <= _MAX_VALUE:
            raise DomainIDError(f"Domain ID: expected a 64-bit unsigned int, found {self.value!r}")

    @classmethod
    def from_parts(cls, identifier: bytes, *, right_justified: bool = False) -> DomainID:
        """The DID with the 7-octet ``identifier`` and the J flag set if ``right_justified``.

        References: UIAP §2.2 ("7 octets of arbitrary identifier and 1 octet of flags").
        """
        if len(identifier) != DOMAIN_ID_OCTETS - 1:
            raise DomainIDError(f"Domain ID identifier: expected 7 octets, found {len(identifier)}")
        flags = J_FLAG if right_justified else 0
        return cls(int.from_bytes(identifier) << 8 | flags)

    @classmethod
    def from_wire(cls, octets: bytes) -> DomainID:
        """The DID in 8 received octets, all of them, reserved flag bits included.

        Choice (§4.1 says the reserved flag bits are "ignored by receiver", §2.2 that the
        flags "are always treated as part of the DID"): they are ignored as flags (only J
        affects comparison) but kept as part of the identifier, so a forwarder never
        rewrites a Domain ID and two DIDs differing there are two domains.

        References: UIAP §2.2, §4.1.
        """
        if len(octets) != DOMAIN_ID_OCTETS:
            raise DomainIDError(f"Domain ID: expected 8 octets, found {len(octets)}")
        return cls(int.from_bytes(octets))

    @classmethod
    def parse(cls, text: str) -> DomainID:
        """Parse the text form of §6.1: four hex quads, full (``0001:...``) or abbreviated.

        Raises :class:`~uuidkit.errors.DomainIDError` naming the offending position.

        References: UIAP §6.1.
        """
        value = 0
        for start, quad in _split_quads(text):
            if not 1 <= len(quad) <= 4:
                raise DomainIDError(
                    f"Domain ID text: quad at {start} must have 1 to 4 hex digits, "
                    f"found {len(quad)}",
                    start,
                )
            _check_hex(quad, start, allow_wildcard=False)
            value = value << 16 | int(quad, 16)
        return cls(value)

    def to_bytes(self) -> bytes:
        """The 8 octets as sent on the wire (UIAP §4.1)."""
        return self.value.to_bytes(DOMAIN_ID_OCTETS)

    @property
    def identifier(self) -> bytes:
        """The first 7 octets: the identifier proper (UIAP §2.2)."""
        return self.to_bytes()[:-1]

    @property
    def flags(self) -> int:
        """The flags octet (octet 7)."""
        return self.value & 0xFF

    @property
    def reserved_flags(self) -> int:
        """The 7 reserved bits of the flags octet (0 in every DID the draft defines)."""
        return self.value & RESERVED_FLAG_BITS

    @property
    def right_justified(self) -> bool:
        """True if the J flag is set: the domain's UIDs are right justified (UIAP §4.1)."""
        return bool(self.value & J_FLAG)

    @property
    def authority_prefix(self) -> int:
        """The first two octets, naming the allocating authority (UIAP §6)."""
        return self.value >> 48

    @property
    def authority(self) -> AllocatingAuthority:
        """The allocating authority named by the first two octets (UIAP §6)."""
        return authority_of(self.authority_prefix)

    def quads(self) -> tuple[int, int, int, int]:
        """The four 16-bit quads of the text form, most significant first (UIAP §6.1)."""
        v = self.value
        return (v >> 48, v >> 32 & 0xFFFF, v >> 16 & 0xFFFF, v & 0xFFFF)

    def __str__(self) -> str:
        """The canonical text form: four fully expanded lower-case quads (UIAP §6.1)."""
        return ":".join(f"{quad:04x}" for quad in self.quads())

    def abbreviated(self) -> str:
        """The abbreviated text form, leading zeros dropped: ``'1:2:3:0'`` (UIAP §6.1)."""
        return ":".join(f"{quad:x}" for quad in self.quads())


@dataclass(frozen=True, slots=True)
class DomainIDPattern:
    """A range of Domain IDs written with ``*`` quads and ``?`` digits (UIAP §6.1).

    A DID matches when ``did.value & mask == value``: ``*`` and ``?`` clear their bits of
    ``mask``. ``text`` keeps the pattern as written.

    References: UIAP §6.1.
    """

    value: int
    mask: int
    text: str

    @classmethod
    def parse(cls, text: str) -> DomainIDPattern:
        """Parse a pattern such as ``'1:2:3:*'`` or ``'1:2:3:0???'``.

        A quad is ``*``, 1 to 4 hex digits, or exactly 4 characters mixing hex digits and
        ``?`` (§6.1: "the quad must be fully expanded").

        References: UIAP §6.1.
        """
        value = mask = 0
        for start, quad in _split_quads(text):
            quad_value, quad_mask = _parse_pattern_quad(quad, start)
            value = value << 16 | quad_value
            mask = mask << 16 | quad_mask
        return cls(value, mask, text)

    def matches(self, domain_id: DomainID) -> bool:
        """True if ``domain_id`` lies in this range (UIAP §6.1)."""
        return domain_id.value & self.mask == self.value

    def __str__(self) -> str:
        return self.text


def _split_quads(text: str) -> list[tuple[int, str]]:
    """``text`` split at colons into exactly four (start index, quad) pairs."""
    if not isinstance(text, str):
        raise DomainIDError(f"Domain ID text: expected str, found {type(text).__name__}")
    quads: list[tuple[int, str]] = []
    start = 0
    for quad in text.split(":"):
        quads.append((start, quad))
        start += len(quad) + 1
    if len(quads) != _QUADS:
        position = len(text) if len(quads) < _QUADS else quads[_QUADS][0] - 1
        raise DomainIDError(
            f"Domain ID text: expected 4 colon-separated quads, found {len(quads)} (at {position})",
            position,
        )
    return quads


def _check_hex(quad: str, start: int, *, allow_wildcard: bool) -> None:
    for offset, char in enumerate(quad):
        if char in _HEX_DIGITS or (allow_wildcard and char == "?"):
            continue
        expected = "hex digit or '?'" if allow_wildcard else "hex digit"
        raise DomainIDError(
            f"Domain ID text: invalid character {char!r} at {start + offset}, expected {expected}",
            start + offset,
        )


def _parse_pattern_quad(quad: str, start: int) -> tuple[int, int]:
    """(value, mask) of one pattern quad."""
    if quad == "*":
        return 0, 0
    if "*" in quad:
        position = start + quad.index("*")
        raise DomainIDError(
            f"Domain ID pattern: '*' at {position} must stand alone for a whole quad, "
            f"found {quad!r}",
            position,
        )
    if "?" not in quad:
        if not 1 <= len(quad) <= 4:
            raise DomainIDError(
                f"Domain ID pattern: quad at {start} must be '*' or 1 to 4 hex digits, "
                f"found {quad!r}",
                start,
            )
        _check_hex(quad, start, allow_wildcard=False)
        return int(quad, 16), 0xFFFF
    if len(quad) != 4:
        # UIAP §6.1: with '?' digits "the quad must be fully expanded".
        raise DomainIDError(
            f"Domain ID pattern: quad at {start} uses '?' so must have 4 characters, "
            f"found {len(quad)}",
            start,
        )
    _check_hex(quad, start, allow_wildcard=True)
    value = mask = 0
    for char in quad:
        wildcard = char == "?"
        value = value << 4 | (0 if wildcard else int(char, 16))
        mask = mask << 4 | (0 if wildcard else 0xF)
    return value, mask
