"""Name-based UUIDs: v3 (MD5), v5 (SHA-1), and v8 over modern hashes.

A name is hashed after its namespace ID, both as octets: a ``str`` name is encoded as UTF-8,
``bytes`` are used as given. Only the leftmost 128 bits of the digest are kept; the version
and variant bits are then overwritten (RFC 9562 Appendix A.2, A.4, B.2).

RFC 9562 §5.5 puts name-based UUIDs over SHA-256 and newer hashes in the v8 space ("These
name-based UUIDs MUST NOT utilize UUIDv5 and MUST be within the UUIDv8 space");
:func:`build_v8_name` implements Appendix B.2's scheme for SHA-256 and extends it to SHA-512,
SHA3-256/512 and SHAKE128/256. A v8 name-based UUID only means something to readers that
know which hash was used: record it alongside.

References: RFC 9562 §5.3, §5.5, §6.5, §6.6 (Table 3), Appendix A.2, A.4, B.2.
"""

from __future__ import annotations

from uuid import UUID

from uuidkit._accel import compiled
from uuidkit._construct import from_int_unchecked
from uuidkit.errors import InvalidField
from uuidkit.layouts import (
    build_v3,
    build_v5,
    hash_constructor,
    name_based_int,
    name_bytes,
    namespace_bytes,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Final, Literal, Protocol, TypeAlias

__all__ = [
    "NAMESPACE_DNS",
    "NAMESPACE_OID",
    "NAMESPACE_URL",
    "NAMESPACE_X500",
    "NAME_HASHES",
    "NameHash",
    "build_v8_name",
    "uuid3",
    "uuid5",
]

#: RFC 9562 §6.6 Table 3: the namespace IDs for DNS, URL, OID and X.500 names.
NAMESPACE_DNS: Final = UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
NAMESPACE_URL: Final = UUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")
NAMESPACE_OID: Final = UUID("6ba7b812-9dad-11d1-80b4-00c04fd430c8")
NAMESPACE_X500: Final = UUID("6ba7b814-9dad-11d1-80b4-00c04fd430c8")

#: The same as the standard library's ``uuid.uuid3``, with RFC 9562 §6.5 name encoding.
uuid3: Final = compiled(build_v3, "uuid3", __name__)
#: The same as the standard library's ``uuid.uuid5``, with RFC 9562 §6.5 name encoding.
uuid5: Final = compiled(build_v5, "uuid5", __name__)

if TYPE_CHECKING:  # at run time, made on first use by __getattr__ below
    NameHash: TypeAlias = Literal[
        "sha256", "sha512", "sha3_256", "sha3_512", "shake_128", "shake_256"
    ]

#: Bytes taken from each hash: the leftmost 128 bits. For SHAKE the request length does not
#: change the leftmost bits, so asking for 16 bytes equals truncating a longer output.
_DIGEST_BYTES: Final = 16


if TYPE_CHECKING:  # the digest signatures, for the type checker only

    class _FixedHash(Protocol):
        def digest(self) -> bytes: ...

    class _ExtendableHash(Protocol):
        def digest(self, length: int, /) -> bytes: ...


def _fixed(name: str) -> Callable[[bytes], bytes]:
    def digest(data: bytes) -> bytes:
        hashed: _FixedHash = hash_constructor(name)(data)
        return hashed.digest()

    return digest


def _shake(name: str) -> Callable[[bytes], bytes]:
    def digest(data: bytes) -> bytes:
        hashed: _ExtendableHash = hash_constructor(name)(data)
        # RFC 9562 Appendix B.2: for SHAKE "the output hash MUST be 128 bits or larger".
        return hashed.digest(_DIGEST_BYTES)

    return digest


#: The digest function of each supported hash, by its :mod:`hashlib` name.
NAME_HASHES: Final[dict[str, Callable[[bytes], bytes]]] = {
    "sha256": _fixed("sha256"),
    "sha512": _fixed("sha512"),
    "sha3_256": _fixed("sha3_256"),
    "sha3_512": _fixed("sha3_512"),
    "shake_128": _shake("shake_128"),
    "shake_256": _shake("shake_256"),
}


def build_v8_name(namespace: UUID, name: str | bytes, algorithm: NameHash = "sha256") -> UUID:
    """The name-based UUIDv8 of ``name`` in ``namespace`` using the hash ``algorithm``.

    With ``"sha256"`` this reproduces RFC 9562 Appendix B.2.

    References: RFC 9562 §5.5, §5.8, §6.5, Appendix B.2.
    """
    # isinstance first: an unhashable argument must not escape as TypeError from dict.get.
    digest_function = NAME_HASHES.get(algorithm) if isinstance(algorithm, str) else None
    if digest_function is None:
        raise InvalidField(
            f"algorithm: expected one of {', '.join(NAME_HASHES)}, found {algorithm!r}",
            "algorithm",
        )
    digest = digest_function(namespace_bytes(namespace) + name_bytes(name))
    return from_int_unchecked(name_based_int(digest, 8))


def __getattr__(name: str) -> object:
    """``NameHash``, the ``Literal`` of the hash names, built on first use.

    Building it needs :mod:`typing`, which ``import uuidkit`` does not otherwise load.
    """
    if name != "NameHash":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Literal

    alias: object = Literal[tuple(NAME_HASHES)]  # the same names, in the same order
    globals()[name] = alias  # the next lookup is a plain attribute
    return alias


def __dir__() -> list[str]:
    return sorted({*globals(), "NameHash"})
