"""Name-based UUIDs: tables for all four namespaces (tests/vectors/namebased.json) checked
against uuidkit and the standard library, differential tests for random names, and v8 over
SHA-2/SHA-3/SHAKE."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sha1_paths import sha1_path  # noqa: F401 (the fixture)

import uuidkit
from uuidkit.errors import InvalidField
from uuidkit.fields import Variant, variant
from uuidkit.namebased import (
    NAME_HASHES,
    NAMESPACE_DNS,
    NAMESPACE_OID,
    NAMESPACE_URL,
    NAMESPACE_X500,
    build_v8_name,
    uuid3,
    uuid5,
)

#: Every test once per SHA-1 path of the compiled uuid5 (the x86 SHA extensions, portable code).
pytestmark = pytest.mark.usefixtures("sha1_path")

_DOC = json.loads(
    (Path(__file__).resolve().parent.parent / "vectors" / "namebased.json").read_text("utf-8")
)
_ROWS: list[dict[str, Any]] = _DOC["vectors"]
NAMESPACES = {
    "DNS": NAMESPACE_DNS,
    "URL": NAMESPACE_URL,
    "OID": NAMESPACE_OID,
    "X500": NAMESPACE_X500,
}
NAMESPACE_STRATEGY = st.sampled_from([*NAMESPACES.values(), uuid.UUID(int=12345)])


def test_namespace_ids_are_table_3_and_the_standard_librarys() -> None:
    assert {k: str(v) for k, v in NAMESPACES.items()} == _DOC["namespaces"]
    assert NAMESPACE_DNS == uuid.NAMESPACE_DNS and NAMESPACE_URL == uuid.NAMESPACE_URL
    assert NAMESPACE_OID == uuid.NAMESPACE_OID and NAMESPACE_X500 == uuid.NAMESPACE_X500
    assert uuidkit.NAMESPACE_X500 is NAMESPACE_X500


@pytest.mark.parametrize("row", _ROWS, ids=[f"{r['namespace']}:{r['name']}" for r in _ROWS])
def test_name_table(row: dict[str, Any]) -> None:
    namespace = NAMESPACES[row["namespace"]]
    name: str = row["name"]
    assert str(uuid3(namespace, name)) == row["uuid3"] == str(uuid.uuid3(namespace, name))
    assert str(uuid5(namespace, name)) == row["uuid5"] == str(uuid.uuid5(namespace, name))
    # RFC 9562 §6.5: a str is its UTF-8 octets, so passing those octets gives the same UUID.
    assert uuid5(namespace, name.encode("utf-8")) == uuid5(namespace, name)
    for algorithm, expected in row["uuid8"].items():
        assert str(build_v8_name(namespace, name, algorithm)) == expected, algorithm


@settings(max_examples=100, deadline=None)
@given(namespace=NAMESPACE_STRATEGY, name=st.text())
def test_differential_against_the_standard_library(namespace: uuid.UUID, name: str) -> None:
    """Python 3.11's uuid3/uuid5 take only ``str`` (bytes names arrived in 3.12)."""
    assert uuidkit.uuid3(namespace, name) == uuid.uuid3(namespace, name)
    assert uuidkit.uuid5(namespace, name) == uuid.uuid5(namespace, name)


@settings(max_examples=50, deadline=None)
@given(namespace=NAMESPACE_STRATEGY, name=st.binary(), algorithm=st.sampled_from(list(NAME_HASHES)))
def test_v8_name_is_the_leftmost_128_bits_stamped(
    namespace: uuid.UUID, name: bytes, algorithm: str
) -> None:
    value = build_v8_name(namespace, name, algorithm)  # type: ignore[arg-type]
    digest = hashlib.new(algorithm, namespace.bytes + name)
    full = digest.digest(64) if algorithm.startswith("shake") else digest.digest()  # type: ignore[call-arg]
    mask = ((1 << 128) - 1) ^ (0xF << 76) ^ (0b11 << 62)
    assert value.int & mask == int.from_bytes(full[:16]) & mask
    assert value.version == 8 and variant(value) is Variant.RFC_9562
    assert uuid.UUID(str(value)) == value and uuid.UUID(bytes_le=value.bytes_le) == value


def test_bad_inputs_name_the_argument() -> None:
    with pytest.raises(InvalidField, match=r"^name: expected str or bytes, found int$"):
        uuid5(NAMESPACE_DNS, 5)  # type: ignore[arg-type]
    with pytest.raises(InvalidField, match=r"^namespace: expected a uuid\.UUID, found str$"):
        uuid3("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "x")  # type: ignore[arg-type]
    with pytest.raises(InvalidField, match=r"^algorithm: expected one of sha256, "):
        build_v8_name(NAMESPACE_DNS, "x", "md5")  # type: ignore[arg-type]
    with pytest.raises(InvalidField, match=r"^algorithm: expected one of sha256, "):
        build_v8_name(NAMESPACE_DNS, "x", ["sha256"])  # type: ignore[arg-type]


@pytest.mark.parametrize("build", [uuid3, uuid5, build_v8_name])
def test_unencodable_name_is_invalid_field_not_unicode_error(build: Any) -> None:
    """RFC 9562 §6.5 hashes a name's octets: a str with a lone surrogate has no UTF-8 octets,
    and the failure must be uuidkit's InvalidField (position included), not UnicodeEncodeError."""
    message = r"^name: character '\\udcff' at 3 is not encodable as UTF-8"
    with pytest.raises(InvalidField, match=message) as caught:
        build(NAMESPACE_DNS, "abc\udcffdef")
    assert caught.value.field == "name"
