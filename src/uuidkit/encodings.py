"""Short text forms of a UUID: ULID's base32, RFC 4648's base32/base32hex/base64url, base58,
base62 and TypeID, each with one fixed width and exactly one spelling per value.

======================  =====  ==============================================================
scheme                  width  packing, alphabet and what decoding accepts
======================  =====  ==============================================================
``base32-crockford``    26     the 128-bit integer, big-endian, in Crockford's alphabet
                               ``0-9A-Z`` minus ``ILOU`` (the ULID canonical form); written in
                               upper case; read case-insensitively with Crockford's
                               substitutions ``I``/``L`` -> 1 and ``O`` -> 0; first digit 0-7
``base32hex``           26     RFC 4648 §7: the 16 bytes as a bit string, 5 bits per digit,
                               unpadded; the 2 trailing pad bits must be zero; upper case only
``base32``              26     RFC 4648 §6, otherwise as ``base32hex`` (does not sort)
``base64url``           22     RFC 4648 §5, unpadded; the 4 trailing pad bits must be zero
                               (does not sort)
``base58btc``           22     the integer in Bitcoin's alphabet, left-padded with ``1`` (the
                               zero digit) to 22 digits; values >= 2**128 rejected
``base62``              22     the integer in ``0-9A-Za-z``, left-padded with ``0`` to 22
                               digits; values >= 2**128 rejected
``typeid``              26+    ``prefix_`` + the ``base32-crockford`` value in lower case,
                               strictly: lower case only, no substitutions (TypeID spec 0.3.0)
======================  =====  ==============================================================

Every scheme except ``base32`` and ``base64url`` keeps the UUIDs' order: the encodings of
two UUIDs compare as strings (code point order) as the UUIDs compare as 128-bit integers,
so UUIDv6/v7 text stays time-ordered (RFC 9562 §6.11).

Bad text raises :class:`~uuidkit.InvalidUUID` with the 0-based ``position`` of the first
character at fault (``None`` for a wrong length or type) and the reason; a bad ``scheme``
or ``prefix`` argument raises :class:`~uuidkit.InvalidField`.

References: RFC 4648 §3.2, §3.5, §5, §6, §7; the ULID specification ("Encoding",
"Overflow Errors when Parsing Base32 Strings"); Crockford's Base32; the TypeID
specification v0.3.0; draft-davis-uuidrev-alt-uuid-encoding-methods §3 (Base58, Base62);
RFC 9562 §6.11.
"""

from __future__ import annotations

from uuid import UUID

from uuidkit._construct import from_int_unchecked
from uuidkit.errors import InvalidField, InvalidUUID

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Final

__all__ = ["SCHEMES", "decode", "encode"]

_BITS: Final = 128
_LIMIT: Final = 1 << _BITS

CROCKFORD: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
RFC4648_BASE32: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
RFC4648_BASE32HEX: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUV"
RFC4648_BASE64URL: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
BITCOIN_BASE58: Final = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BASE62: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
TYPEID_ALPHABET: Final = CROCKFORD.lower()

#: TypeID spec "Type Prefix": at most 63 characters of a-z and "_", first and last a-z (the
#: spec's expression ``([a-z]([a-z_]{0,61}[a-z])?)?``; checked without ``re``, whose compile
#: would cost ``import uuidkit`` a quarter of a millisecond).
_TYPEID_PREFIX_MAX: Final = 63


def _digit_table(alphabet: str, extra: dict[str, int] | None = None) -> dict[str, int]:
    table = {char: value for value, char in enumerate(alphabet)}
    table.update(extra or {})
    return table


# Crockford's Base32: "upper and lower case letters are accepted, and i and l will be treated
# as 1 and o will be treated as 0"; the ULID spec makes its strings case-insensitive.
_CROCKFORD_DECODE: Final = _digit_table(
    CROCKFORD,
    {c.lower(): v for c, v in _digit_table(CROCKFORD).items()}
    | {"I": 1, "i": 1, "L": 1, "l": 1, "O": 0, "o": 0},
)


# The two codec classes are plain slotted classes, not dataclasses: importing dataclasses (and
# the inspect module it loads) would be most of what ``import uuidkit`` costs.
class _Radix:
    """A UUID as one big-endian integer in ``width`` digits of ``alphabet``."""

    __slots__ = ("alphabet", "name", "table", "width")

    def __init__(self, name: str, alphabet: str, width: int, table: dict[str, int]) -> None:
        self.name = name
        self.alphabet = alphabet
        self.width = width
        self.table = table

    def encode(self, value: int) -> str:
        base, alphabet = len(self.alphabet), self.alphabet
        digits = []
        for _ in range(self.width):
            value, digit = divmod(value, base)
            digits.append(alphabet[digit])
        return "".join(reversed(digits))

    def decode(self, text: str, offset: int = 0) -> int:
        _check_length(self.name, text, self.width, offset)
        base, table, value = len(self.alphabet), self.table, 0
        for index, char in enumerate(text):
            digit = table.get(char)
            if digit is None:
                raise _bad_char(self.name, char, offset + index)
            value = value * base + digit
        if value >= _LIMIT:
            # ULID spec: "Any attempt to decode or encode a ULID larger than this should be
            # rejected"; the same holds for every fixed-width radix form of a 128-bit UUID.
            raise InvalidUUID(
                f"{self.name}: value exceeds 128 bits (largest is "
                f"{self.encode(_LIMIT - 1)!r}) at {offset}",
                offset,
            )
        return value


class _BitString:
    """RFC 4648 packing: the 16 bytes as bits, ``bits`` per digit, zero-filled at the end."""

    __slots__ = ("alphabet", "bits", "name", "pad_bits", "width")

    def __init__(self, name: str, alphabet: str, bits: int) -> None:
        self.name = name
        self.alphabet = alphabet
        self.bits = bits
        self.width = -(-_BITS // bits)
        self.pad_bits = self.width * bits - _BITS

    def encode(self, value: int) -> str:
        value <<= self.pad_bits
        mask, bits, alphabet = (1 << self.bits) - 1, self.bits, self.alphabet
        return "".join(
            alphabet[(value >> (bits * i)) & mask] for i in range(self.width - 1, -1, -1)
        )

    def decode(self, text: str, offset: int = 0) -> int:
        _check_length(self.name, text, self.width, offset)
        value, bits, alphabet = 0, self.bits, self.alphabet
        for index, char in enumerate(text):
            digit = alphabet.find(char)
            if digit < 0:
                raise _bad_char(self.name, char, offset + index)
            value = (value << bits) | digit
        pad_mask = (1 << self.pad_bits) - 1
        if value & pad_mask:
            # RFC 4648 §3.5: decoders MAY reject an encoding whose pad bits are not zero;
            # accepting them would give one UUID 2**pad_bits spellings.
            last = offset + self.width - 1
            raise InvalidUUID(
                f"{self.name}: non-zero pad bits in the last character {text[-1]!r} at {last} "
                f"(RFC 4648 §3.5: the last {self.pad_bits} bits must be zero)",
                last,
            )
        return value >> self.pad_bits


def _check_length(name: str, text: str, width: int, offset: int) -> None:
    if len(text) != width:
        raise InvalidUUID(
            f"{name}: expected exactly {width} characters, found {len(text)}"
            + (" (padding '=' is not written)" if "=" in text else ""),
            None if offset == 0 else offset,
        )


def _bad_char(name: str, char: str, position: int) -> InvalidUUID:
    return InvalidUUID(f"{name}: invalid character {char!r} at {position}", position)


_CROCKFORD_CODEC: Final = _Radix("base32-crockford", CROCKFORD, 26, _CROCKFORD_DECODE)
# TypeID spec "Base32 Encoding": "the alphabet encoding is strict: always in lowercase, no
# hyphens allowed, and we never decode multiple ambiguous characters to the same value".
_TYPEID_CODEC: Final = _Radix("typeid", TYPEID_ALPHABET, 26, _digit_table(TYPEID_ALPHABET))

_CODECS: Final[dict[str, _Radix | _BitString]] = {
    "base32-crockford": _CROCKFORD_CODEC,
    "base32hex": _BitString("base32hex", RFC4648_BASE32HEX, 5),
    "base32": _BitString("base32", RFC4648_BASE32, 5),
    "base64url": _BitString("base64url", RFC4648_BASE64URL, 6),
    "base58btc": _Radix("base58btc", BITCOIN_BASE58, 22, _digit_table(BITCOIN_BASE58)),
    "base62": _Radix("base62", BASE62, 22, _digit_table(BASE62)),
}

#: Every scheme name :func:`encode` and :func:`decode` accept.
SCHEMES: Final[tuple[str, ...]] = (*_CODECS, "typeid")

#: Schemes whose text sorts as the UUIDs do (fixed width, alphabet in code point order).
ORDER_PRESERVING: Final = frozenset(
    {"base32-crockford", "base32hex", "base58btc", "base62", "typeid"}
)


def encode(u: UUID, scheme: str, *, prefix: str | None = None) -> str:
    """``u`` as text in ``scheme`` (one of :data:`SCHEMES`); ``prefix`` is for ``typeid`` only.

    >>> encode(UUID("01890a5d-ac96-774b-bcce-b302099a8057"), "typeid", prefix="user")
    'user_01h455vb4pex5vsknk084sn02q'

    References: RFC 4648 §5-§7; ULID specification; TypeID specification v0.3.0.
    """
    if not isinstance(u, UUID):
        raise InvalidUUID(f"expected a uuid.UUID, found {type(u).__name__}")
    value = u.int
    if scheme == "typeid":
        checked = _check_prefix_argument(prefix if prefix is not None else "")
        suffix = _TYPEID_CODEC.encode(value)
        return f"{checked}_{suffix}" if checked else suffix
    return _codec(scheme, prefix).encode(value)


def decode(text: str, scheme: str, *, prefix: str | None = None) -> UUID:
    """The UUID that ``text`` spells in ``scheme``; for ``typeid``, ``prefix`` (if given) must
    equal the text's prefix.

    Raises :class:`~uuidkit.InvalidUUID` naming the position and the reason.

    References: RFC 4648 §3.2, §3.5; ULID specification; TypeID specification v0.3.0.
    """
    if scheme == "typeid":
        return from_int_unchecked(_decode_typeid(_text(text), prefix))
    codec = _codec(scheme, prefix)
    return from_int_unchecked(codec.decode(_text(text)))


def _text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidUUID(f"expected a str, found {type(text).__name__}")
    return text


def _codec(scheme: object, prefix: str | None) -> _Radix | _BitString:
    codec = _CODECS.get(scheme) if isinstance(scheme, str) else None
    if codec is None:
        raise InvalidField(
            f"scheme: unknown encoding {scheme!r}: expected one of {', '.join(SCHEMES)}",
            "scheme",
        )
    if prefix is not None:
        raise InvalidField(f"prefix: only the typeid scheme takes a prefix, not {scheme}", "prefix")
    return codec


def _prefix_problem(prefix: str) -> tuple[str, int | None] | None:
    """Why ``prefix`` is not a TypeID type prefix, and where; None if it is one."""
    if len(prefix) > _TYPEID_PREFIX_MAX:
        return f"prefix is {len(prefix)} characters, at most {_TYPEID_PREFIX_MAX} allowed", None
    if not prefix or (
        prefix.isascii()
        and prefix.islower()  # no A-Z
        and prefix.replace("_", "").isalpha()  # ASCII letters and "_" only
        and prefix[0] != "_" != prefix[-1]
    ):
        return None
    for index, char in enumerate(prefix):
        if not ("a" <= char <= "z" or char == "_"):
            return f"invalid character {char!r} in prefix at {index} (only a-z and _)", index
    # Only letters and underscores: an underscore at one end (TypeID spec: "Must start and
    # end with an alphabetic character").
    index = 0 if prefix.startswith("_") else len(prefix) - 1
    return f"prefix must start and end with a-z, found '_' at {index}", index


def _check_prefix_argument(prefix: object) -> str:
    if not isinstance(prefix, str):
        raise InvalidField(f"prefix: expected a str, found {type(prefix).__name__}", "prefix")
    problem = _prefix_problem(prefix)
    if problem is not None:
        raise InvalidField(f"prefix: {problem[0]}", "prefix")
    return prefix


def _decode_typeid(text: str, expected: str | None) -> int:
    if expected is not None:
        _check_prefix_argument(expected)
    separator = text.rfind("_")
    if separator < 0:
        type_prefix, suffix_at = "", 0
    elif separator == 0:
        # TypeID spec "Separator": "If the prefix is empty, the separator is omitted".
        raise InvalidUUID("typeid: separator '_' at 0 with an empty prefix", 0)
    else:
        type_prefix, suffix_at = text[:separator], separator + 1
        problem = _prefix_problem(type_prefix)
        if problem is not None:
            raise InvalidUUID(f"typeid: {problem[0]}", problem[1])
    if expected is not None and type_prefix != expected:
        raise InvalidUUID(f"typeid: prefix {type_prefix!r} where {expected!r} was expected", 0)
    suffix = text[suffix_at:]
    if len(suffix) != _TYPEID_CODEC.width:
        raise InvalidUUID(
            f"typeid: suffix at {suffix_at} is {len(suffix)} characters, expected 26", suffix_at
        )
    return _TYPEID_CODEC.decode(suffix, suffix_at)
