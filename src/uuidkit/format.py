"""Writing UUIDs: every text form :func:`uuidkit.parse` reads, plus integer and byte forms.

The named helpers are thin and fast; :func:`format_uuid` picks a text style by name (the
command line's ``--format``). Each takes a :class:`uuid.UUID` (any subclass): anything else
raises :class:`~uuidkit.errors.InvalidUUID` rather than formatting ``str(5)`` as a UUID.
Every text style except ``int`` and ``bytes_le`` is read back by :func:`uuidkit.parse`;
``int`` by :func:`uuidkit.from_int` and ``bytes_le`` by :func:`uuidkit.from_bytes_le` after
:meth:`bytes.fromhex`. The short encodings of :mod:`uuidkit.encodings` (``base32-crockford``
... ``typeid``, without a TypeID prefix) are styles too, read back by :func:`uuidkit.decode`.

References: RFC 9562 §4 (hex-and-dash form, Figures 1-4), RFC 8141 (URN syntax).
"""

from __future__ import annotations

from uuid import UUID

from uuidkit._accel import compiled
from uuidkit.errors import InvalidField, InvalidUUID

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Final

__all__ = [
    "FORMAT_STYLES",
    "format_uuid",
    "to_braced",
    "to_bytes",
    "to_bytes_le",
    "to_hex",
    "to_hyphenated",
    "to_int",
    "to_upper",
    "to_urn",
]


def _checked(u: object) -> UUID:
    """``u`` if it is a :class:`uuid.UUID`; otherwise an :class:`InvalidUUID` naming its type."""
    if isinstance(u, UUID):
        return u
    raise InvalidUUID(f"expected a uuid.UUID, found {type(u).__name__} {u!r:.40}")


def to_hyphenated(u: UUID) -> str:
    """``f81d4fae-7dec-11d0-a765-00a0c91e6bf6``: the lower-case 8-4-4-4-12 form (``str(u)``).

    References: RFC 9562 §4 (Figure 1).
    """
    if type(u) is UUID:  # the common case, written here: cheaper than str(u)'s own __str__
        digits = u.int.to_bytes(16).hex()
        return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
    return str(_checked(u))  # a subclass keeps its own __str__


def to_upper(u: UUID) -> str:
    """``F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6``: the same form in upper case.

    References: RFC 9562 §4 ("uppercase or lowercase alphanumeric hexadecimal characters").
    """
    return str(_checked(u)).upper()


def to_urn(u: UUID) -> str:
    """``urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6``.

    References: RFC 9562 §4 (Figure 4), RFC 8141.
    """
    return "urn:uuid:" + str(_checked(u))


def to_braced(u: UUID) -> str:
    """``{f81d4fae-7dec-11d0-a765-00a0c91e6bf6}``, as Microsoft tools and registries write it.

    References: RFC 9562 §4 (the curly-brace form of [Python] and [Microsoft]).
    """
    return "{" + str(_checked(u)) + "}"


def to_hex(u: UUID) -> str:
    """``f81d4fae7dec11d0a76500a0c91e6bf6``: 32 lower-case hex digits.

    References: RFC 9562 §4.
    """
    return _checked(u).hex


def to_int(u: UUID) -> int:
    """The unsigned 128-bit integer (``329800735698586629295641978511506172918``).

    References: RFC 9562 §4 (Figure 3).
    """
    return _checked(u).int


def to_bytes(u: UUID) -> bytes:
    """The 16 octets in network byte order (most significant first).

    References: RFC 9562 §4 ("sequencing all fields in big-endian format").
    """
    if type(u) is UUID:  # what UUID.bytes computes, without its property call
        return u.int.to_bytes(16)
    return _checked(u).bytes  # a subclass keeps its own bytes


def to_bytes_le(u: UUID) -> bytes:
    """The 16 octets in Microsoft GUID order: first three fields little-endian.

    References: RFC 9562 §4 (the COM GUID caveat, [MS_COM_GUID]).
    """
    return _checked(u).bytes_le


def _bytes_le_hex(u: UUID) -> str:
    return _checked(u).bytes_le.hex()


def _decimal(u: UUID) -> str:
    return str(_checked(u).int)


def _encoder(scheme: str) -> Callable[[UUID], str]:
    def encoded(u: UUID) -> str:
        from uuidkit.encodings import encode  # on first use: most programs never encode

        return encode(u, scheme)

    return encoded


#: :data:`uuidkit.encodings.SCHEMES`, in its order, named here so that ``import uuidkit`` does
#: not load the encodings (the format tests check that the two agree).
_SCHEMES: Final = (
    "base32-crockford",
    "base32hex",
    "base32",
    "base64url",
    "base58btc",
    "base62",
    "typeid",
)


#: Text styles by name, for :func:`format_uuid` and the command line's ``--format``.
FORMAT_STYLES: Final[dict[str, Callable[[UUID], str]]] = {
    "hyphenated": to_hyphenated,
    "upper": to_upper,
    "urn": to_urn,
    "braced": to_braced,
    "hex": to_hex,
    "int": _decimal,
    "bytes_le": _bytes_le_hex,
    **{scheme: _encoder(scheme) for scheme in _SCHEMES},
}


#: The default style, compared by identity on the fast path of :func:`format_uuid` (string
#: literals are interned, so ``format_uuid(u, "hyphenated")`` takes it too).
_HYPHENATED: Final = "hyphenated"


def format_uuid(u: UUID, style: str = _HYPHENATED) -> str:
    """``u`` as text in ``style``, one of :data:`FORMAT_STYLES`.

    ``int`` is the decimal integer and ``bytes_le`` the 32 hex digits of the GUID byte
    order; an unknown style raises :class:`~uuidkit.errors.InvalidField` (``.field`` is
    ``"style"``) listing the styles, and a ``u`` that is not a UUID
    :class:`~uuidkit.errors.InvalidUUID`.

    References: RFC 9562 §4.
    """
    # The common case in this one frame, as to_hyphenated writes it: no lookup, no call. An
    # identity test never runs a foreign __eq__; any other style goes through the table.
    if style is _HYPHENATED and type(u) is UUID:
        digits = u.int.to_bytes(16).hex()
        return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
    # isinstance first: an unhashable argument must not escape as TypeError from dict.get.
    formatter = FORMAT_STYLES.get(style) if isinstance(style, str) else None
    if formatter is None:
        styles = ", ".join(FORMAT_STYLES)
        raise InvalidField(f"style: expected one of {styles}, found {style!r:.40}", "style")
    return formatter(u)


# The compiled twins (uuidkit._accel), when the accelerator is built. FORMAT_STYLES keeps the
# Python functions: the compiled format_uuid hands the styles it does not write to them.
format_uuid = compiled(format_uuid)
to_hyphenated = compiled(to_hyphenated)
to_upper = compiled(to_upper)
to_urn = compiled(to_urn)
to_braced = compiled(to_braced)
to_hex = compiled(to_hex)
to_bytes = compiled(to_bytes)
to_bytes_le = compiled(to_bytes_le)
