"""Reading UUIDs from text, bytes, integers and fields: strict, fast, and precise when it fails.

:func:`parse` tries a fast path first (length, hyphen positions, then :meth:`bytes.fromhex`
on the 32 remaining characters) and only when that fails runs a slow diagnostic pass that
names the exact problem and its index (architecture.md: strict input)::

    >>> from uuidkit import parse
    >>> parse("f81d4fae-7dec-11d0-a765-00a0c91e6bfg")
    Traceback (most recent call last):
    uuidkit.errors.InvalidUUID: invalid character 'g' at 35

Accepted text forms:

* strict (``strict=True``): only RFC 9562 §4's ABNF, ``8-4-4-4-12`` hexadecimal digits
  separated by single hyphens. ABNF strings are case-insensitive (RFC 5234 §2.3), so upper,
  lower and mixed case are all accepted, as §4 says.
* lenient (the default): the strict form; the same wrapped in ``{...}``; with a
  ``urn:uuid:`` prefix in any case (RFC 9562 §4 Figure 4); or 32 bare hex digits.

Everything else is rejected, in particular what ``int(s, 16)`` would let through:
``+``/``-`` signs, ``_`` separators, ``0x`` prefixes, whitespace and non-ASCII digits.

Groups in messages are numbered from 0, as Rust's ``uuid`` crate does: group 4 is the
final 12 digits.

References: RFC 9562 §4 (UUID Format, ABNF), RFC 5234 §2.3, RFC 8141 (URN).
"""

from __future__ import annotations

from uuid import UUID

from uuidkit._accel import compiled
from uuidkit._bits import check_field, describe_int, pack_frame
from uuidkit._construct import (
    MAX_INT,
    SLOT_PROTOCOL,
    UNKNOWN_SAFETY,
    from_int_unchecked,
    new_blank,
    set_int,
    set_is_safe,
)
from uuidkit.errors import InvalidField, InvalidUUID
from uuidkit.fields import (
    MaxFields,
    NilFields,
    OpaqueFields,
    UUIDFields,
    V1Fields,
    V2Fields,
    V3Fields,
    V4Fields,
    V5Fields,
    V6Fields,
    V7Fields,
    V8Fields,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Final

__all__ = [
    "FIELD_NAMES",
    "from_bytes",
    "from_bytes_le",
    "from_fields",
    "from_int",
    "parse",
]

_fromhex = bytes.fromhex
_int_from_bytes = int.from_bytes

_CANONICAL_LENGTH: Final = 36
_HEX_LENGTH: Final = 32
_URN_PREFIX: Final = "urn:uuid:"
#: The longest accepted form: ``urn:uuid:`` and 36 characters.
_LONGEST_FORM: Final = len(_URN_PREFIX) + _CANONICAL_LENGTH
#: Longer text is refused by its length alone, without a pass over its characters.
_DIAGNOSED_LENGTH: Final = 4 * _LONGEST_FORM
_GROUP_LENGTHS: Final = (8, 4, 4, 4, 12)
_HYPHEN_POSITIONS: Final = (8, 13, 18, 23)
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")

#: The six ``fields`` of RFC 4122 §4.1.2 and the standard library, with their widths in bits.
FIELD_NAMES: Final = (
    ("time_low", 32),
    ("time_mid", 16),
    ("time_hi_version", 16),
    ("clock_seq_hi_variant", 8),
    ("clock_seq_low", 8),
    ("node", 48),
)


def parse(text: str, *, strict: bool = False) -> UUID:
    """The UUID written in ``text``; raise :class:`~uuidkit.errors.InvalidUUID` otherwise.

    ``strict=True`` accepts only RFC 9562 §4's ``8-4-4-4-12`` form (any letter case);
    the default also accepts ``{...}``, a ``urn:uuid:`` prefix and 32 bare hex digits.
    A non-``str`` argument raises :class:`~uuidkit.errors.InvalidUUID` too, never
    :class:`TypeError`. The error's ``position`` is the index of the first offending
    character (``None`` when the input as a whole is wrong).

    References: RFC 9562 §4 (ABNF and Figure 4), RFC 5234 §2.3 (case-insensitive strings).
    """
    if type(text) is str:
        length = len(text)
        if length == _CANONICAL_LENGTH:
            # RFC 9562 §4: UUID = 4hexOctet "-" 2hexOctet "-" 2hexOctet "-" 2hexOctet "-" 6hexOctet
            if text[8] == "-" and text[13] == "-" and text[18] == "-" and text[23] == "-":
                try:
                    octets = _fromhex(text.replace("-", ""))
                except ValueError:
                    octets = b""
                # fromhex skips ASCII whitespace; exactly 16 octets means 32 hex digits.
                if len(octets) == 16 and SLOT_PROTOCOL:
                    result = new_blank(UUID)
                    set_int(result, _int_from_bytes(octets))
                    set_is_safe(result, UNKNOWN_SAFETY)
                    return result
                if len(octets) == 16:  # see uuidkit._construct.SLOT_PROTOCOL
                    return from_int_unchecked(_int_from_bytes(octets))
        elif not strict and length <= _LONGEST_FORM:
            value = _lenient_only_value(text, length)
            if value is not None:
                return from_int_unchecked(value)
    if isinstance(text, str) and type(text) is not str:
        return parse(str.__str__(text), strict=strict)  # a str subclass: read its characters
    raise _diagnose(text, strict)


# The compiled twin (uuidkit._accel): the same fast path in C; it calls the function above
# for everything else, so errors and their positions are identical.
parse = compiled(parse)


def _canonical_value(text: str) -> int | None:
    """The value of a 36-character hyphenated form, or ``None`` if it is not one."""
    if len(text) != _CANONICAL_LENGTH:
        return None
    if text[8] != "-" or text[13] != "-" or text[18] != "-" or text[23] != "-":
        return None
    return _hex_value(text.replace("-", ""))


def _hex_value(digits: str) -> int | None:
    """The value of exactly 32 hex digits, or ``None``."""
    try:
        octets = _fromhex(digits)
    except ValueError:
        return None
    return _int_from_bytes(octets) if len(octets) == 16 else None


def _lenient_only_value(text: str, length: int) -> int | None:
    """The value of the lenient-only forms: 32 hex digits, ``{...}``, ``urn:uuid:...``."""
    if length == _HEX_LENGTH:
        return _hex_value(text)
    if length == _CANONICAL_LENGTH + 2 and text[0] == "{" and text[-1] == "}":
        return _canonical_value(text[1:-1])
    prefix_length = len(_URN_PREFIX)
    if length == _CANONICAL_LENGTH + prefix_length:
        prefix = text[:prefix_length]
        if prefix.isascii() and prefix.lower() == _URN_PREFIX:
            return _canonical_value(text[prefix_length:])
    return None


# --- the slow diagnostic pass: only runs once the input is known to be invalid -------------


def _diagnose(text: object, strict: bool) -> InvalidUUID:
    """The error that best explains why the fast path rejected ``text``."""
    if not isinstance(text, str):
        return InvalidUUID(f"expected a str, found {type(text).__name__}")
    if not text:
        return InvalidUUID("empty string: expected a UUID such as 8-4-4-4-12 hex digits")
    if len(text) > _DIAGNOSED_LENGTH:
        # Checked before any pass over the characters: a 10 MB string fails at once, while
        # a near miss still gets the exact character at fault.
        return InvalidUUID(
            f"too long: {len(text)} characters, a UUID has at most {_LONGEST_FORM}", _LONGEST_FORM
        )
    wrapper = _unwrap(text, strict)
    if isinstance(wrapper, InvalidUUID):
        return wrapper
    start, end, wrapped = wrapper
    body = text[start:end]
    for index, char in enumerate(body, start):
        if char != "-" and char not in _HEX_DIGITS:
            return InvalidUUID(f"invalid character {char!r} at {index}", index)
    if "-" in body:
        return _diagnose_groups(body, start)
    return _diagnose_unhyphenated(body, start, strict, wrapped)


def _unwrap(text: str, strict: bool) -> tuple[int, int, bool] | InvalidUUID:
    """``(start, end, wrapped)`` of the part inside braces or after ``urn:uuid:``."""
    prefix_length = len(_URN_PREFIX)
    has_urn = text[:prefix_length].lower() == _URN_PREFIX and text[:prefix_length].isascii()
    if strict and (text[0] == "{" or has_urn):
        form = "braces are" if text[0] == "{" else "the urn:uuid: prefix is"
        return InvalidUUID(
            f"{form} not accepted in strict mode: expected only RFC 9562 §4's 8-4-4-4-12 form", 0
        )
    if text[0] == "{":
        if len(text) < 2 or text[-1] != "}":
            return InvalidUUID(f"missing closing brace '}}' at {len(text)}", len(text))
        return 1, len(text) - 1, True
    if has_urn:
        return prefix_length, len(text), True
    return 0, len(text), False


def _diagnose_groups(body: str, start: int) -> InvalidUUID:
    """Explain a hyphenated ``body`` (known to hold only hex digits and hyphens)."""
    if len(body) == _CANONICAL_LENGTH and body.count("-") == len(_HYPHEN_POSITIONS):
        misplaced = next(i for i, c in enumerate(body) if c == "-" and i not in _HYPHEN_POSITIONS)
        expected = ", ".join(str(start + i) for i in _HYPHEN_POSITIONS)
        return InvalidUUID(
            f"misplaced hyphen at {start + misplaced}: expected hyphens at {expected}",
            start + misplaced,
        )
    group_start = start
    groups = body.split("-")
    for number, group in enumerate(groups):
        if number == len(_GROUP_LENGTHS):
            hyphen = group_start - 1
            return InvalidUUID(f"unexpected hyphen at {hyphen}: a UUID has 5 groups", hyphen)
        expected_length = _GROUP_LENGTHS[number]
        if len(group) != expected_length:
            return InvalidUUID(
                f"group {number}: expected {expected_length} hex digits, found {len(group)}",
                group_start + min(len(group), expected_length),
            )
        group_start += len(group) + 1
    end = start + len(body)
    return InvalidUUID(
        f"expected 5 hyphen-separated groups (8-4-4-4-12), found {len(groups)} ending at {end}",
        end,
    )


def _diagnose_unhyphenated(body: str, start: int, strict: bool, wrapped: bool) -> InvalidUUID:
    """Explain a ``body`` of hex digits only, without hyphens."""
    found = len(body)
    if strict:
        if found == _HEX_LENGTH:
            return InvalidUUID(
                "missing hyphens: strict mode accepts only RFC 9562 §4's 8-4-4-4-12 form", 8
            )
        return InvalidUUID(
            f"expected 36 characters (8-4-4-4-12 hex digits and hyphens), found {found}"
        )
    if wrapped:
        if found <= _HYPHEN_POSITIONS[0]:
            return _diagnose_groups(body, start)  # too short to be missing a hyphen
        hyphen = start + _HYPHEN_POSITIONS[0]
        return InvalidUUID(
            f"expected a hyphen at {hyphen}: braces and urn:uuid: wrap only the 8-4-4-4-12 form",
            hyphen,
        )
    return InvalidUUID(
        f"expected 32 hex digits, found {found}",
        start + min(found, _HEX_LENGTH),
    )


# --- other constructors ---------------------------------------------------------------------


def _octets(data: object, what: str) -> bytes:
    """``data`` as 16 :class:`bytes`, or :class:`~uuidkit.errors.InvalidUUID`."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InvalidUUID(f"{what}: expected 16 bytes, found {type(data).__name__}")
    octets = bytes(data)
    if len(octets) != 16:
        raise InvalidUUID(f"{what}: expected 16 bytes, found {len(octets)}")
    return octets


def from_bytes(data: bytes | bytearray | memoryview) -> UUID:
    """The UUID whose 16 octets, most significant first, are ``data``.

    Accepts :class:`bytes`, :class:`bytearray` and :class:`memoryview`.

    References: RFC 9562 §4 ("sequencing all fields in big-endian format").
    """
    return from_int_unchecked(_int_from_bytes(_octets(data, "bytes")))


def from_bytes_le(data: bytes | bytearray | memoryview) -> UUID:
    """The UUID stored in Microsoft GUID byte order (``uuid.UUID(bytes_le=...)``).

    The first three fields (time_low, time_mid, time_hi_version) are little-endian; the
    last 8 octets are in network order.

    References: RFC 9562 §4 (the COM GUID caveat, [MS_COM_GUID]).
    """
    octets = _octets(data, "bytes_le")
    big_endian = octets[3::-1] + octets[5:3:-1] + octets[7:5:-1] + octets[8:]
    return from_int_unchecked(_int_from_bytes(big_endian))


def from_int(value: int) -> UUID:
    """The UUID holding the unsigned 128-bit integer ``value``.

    References: RFC 9562 §4 ("UUIDs MAY be represented as binary data or integers", Figure 3).
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidUUID(f"int: expected an int, found {type(value).__name__}")
    # The exact int behind a subclass: its own comparisons and __int__ may lie.
    exact = int.__index__(value)
    if not 0 <= exact <= MAX_INT:
        raise InvalidUUID(f"int: expected 0 <= int < 2**128, found {describe_int(exact)}")
    return from_int_unchecked(exact)


def from_fields(fields: Sequence[int] | UUIDFields) -> UUID:
    """The UUID made of ``fields``: a record from :func:`uuidkit.fields` or the standard
    library's six-tuple ``uuid.UUID.fields``.

    ``from_fields(uuidkit.fields(u)) == u`` for every ``u`` (the record holds every bit but
    the version and variant, which its type implies), and so does
    ``from_fields(u.fields)``: ``(time_low, time_mid, time_hi_version, clock_seq_hi_variant,
    clock_seq_low, node)`` of 32, 16, 16, 8, 8 and 48 bits. A field out of range raises
    :class:`~uuidkit.errors.InvalidField` naming it.

    References: RFC 4122 §4.1.2 (Layout and Byte Order), RFC 9562 §5 (each layout's fields).
    """
    if isinstance(fields, _RECORD_TYPES):
        return from_int_unchecked(_record_value(fields))
    # Not at import: collections.abc imports collections, which CPython 3.13's uuid does not.
    from collections.abc import Sequence

    if isinstance(fields, str | bytes) or not isinstance(fields, Sequence):
        raise InvalidField(f"fields: expected 6 integers, found {type(fields).__name__}", "fields")
    if len(fields) != len(FIELD_NAMES):
        raise InvalidField(f"fields: expected 6 integers, found {len(fields)}", "fields")
    value = 0
    for (name, bits), field in zip(FIELD_NAMES, fields, strict=True):
        value = (value << bits) | check_field(name, field, bits)
    return from_int_unchecked(value)


#: Widths of the three parts of the common frame (RFC 9562 §5.3-§5.5, §5.7, §5.8).
_FRAME_BITS: Final = (48, 12, 62)
#: Widths of the five fields of the time-based layouts, in record order (§5.1, §5.6).
_TIME_BITS: Final = (32, 16, 12, 14, 48)
_RECORD_TYPES: Final = (
    V1Fields,
    V2Fields,
    V3Fields,
    V4Fields,
    V5Fields,
    V6Fields,
    V7Fields,
    V8Fields,
    NilFields,
    MaxFields,
    OpaqueFields,
)


def _record_value(record: UUIDFields) -> int:
    """The 128-bit value a :func:`uuidkit.fields` record describes (fields range-checked)."""
    if isinstance(record, NilFields):
        return 0
    if isinstance(record, MaxFields):
        return MAX_INT
    if isinstance(record, OpaqueFields):
        return check_field("value", record.value, 128)
    if isinstance(record, V2Fields):
        # DCE 1.1: a 6-bit clock_seq and an 8-bit local_domain share the 14 bits of v1's.
        seq_and_domain = (check_field("clock_seq", record.clock_seq, 6) << 8) | check_field(
            "local_domain", record.local_domain, 8
        )
        parts = (record.local_identifier, record.time_mid, record.time_high, seq_and_domain)
        return _time_frame(2, (*parts, record.node), ("local_identifier", "time_mid"))
    names = list(record.__match_args__)
    values = tuple(getattr(record, name) for name in names)
    if len(values) == len(_FRAME_BITS):
        checked = [check_field(n, v, b) for n, v, b in zip(names, values, _FRAME_BITS, strict=True)]
        return pack_frame(record.version, *checked)
    return _time_frame(record.version, values, names)


def _time_frame(version: int, values: Sequence[int], names: Sequence[str]) -> int:
    """The v1/v2/v6 frame from its five fields (the first two named by ``names``)."""
    labels = [*names[:2], "time_high" if version != 6 else "time_low", "clock_seq", "node"]
    first, second, third, clock_seq, node = (
        check_field(label, value, bits)
        for label, value, bits in zip(labels, values, _TIME_BITS, strict=True)
    )
    return pack_frame(version, (first << 16) | second, third, (clock_seq << 48) | node)
