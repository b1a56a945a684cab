"""The compiled uuid3/uuid5 hash the namespace and name themselves (MD5, SHA-1): same as hashlib.

The C accelerator computes MD5 (RFC 1321) and SHA-1 (FIPS 180-4) over the namespace ID and
the name. These tests build the expected value from ``hashlib`` digests directly (RFC 9562
§5.3, §5.5: the first 16 bytes, version and variant set), for random names and for every
length around the 64-byte block boundaries (the 16-byte namespace shifts them: names of
39/40 and 47/48 bytes end the message at 55/56 and 63/64), and check RFC 9562 Appendix A.2
and A.4. On the pure path the same assertions hold for the Python twins.

References: RFC 9562 §5.3, §5.5, Appendix A.2, A.4; RFC 1321; FIPS 180-4 §6.1.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit

VECTORS = Path(__file__).resolve().parent.parent / "vectors" / "rfc9562_appendix_a.json"
NAMESPACES = st.sampled_from(
    [uuid.NAMESPACE_DNS, uuid.NAMESPACE_URL, uuid.UUID(int=0), uuid.UUID(int=(1 << 128) - 1)]
)
#: Message lengths (namespace + name) at and around the padding boundaries of 64-byte blocks.
BOUNDARY_MESSAGES = [55, 56, 57, 63, 64, 65, 119, 120, 121, 127, 128, 129, 183, 184]


def expected(hash_name: str, version: int, namespace: uuid.UUID, name: bytes) -> uuid.UUID:
    digest = hashlib.new(hash_name, namespace.bytes + name, usedforsecurity=False).digest()
    value = int.from_bytes(digest[:16], "big")
    value &= ~(0xF << 76) & ~(0x3 << 62)
    return uuid.UUID(int=value | (version << 76) | (0x2 << 62))


def check(namespace: uuid.UUID, name: bytes) -> None:
    assert uuidkit.uuid3(namespace, name) == expected("md5", 3, namespace, name)
    assert uuidkit.uuid5(namespace, name) == expected("sha1", 5, namespace, name)


@settings(max_examples=300, deadline=None)
@given(namespace=NAMESPACES, name=st.binary(max_size=300))
def test_random_names_match_hashlib(namespace: uuid.UUID, name: bytes) -> None:
    check(namespace, name)


@settings(max_examples=100, deadline=None)
@given(
    namespace=NAMESPACES,
    message=st.sampled_from(BOUNDARY_MESSAGES),
    fill=st.integers(0, 255),
    data=st.data(),
)
def test_names_around_block_boundaries_match_hashlib(
    namespace: uuid.UUID, message: int, fill: int, data: Any
) -> None:
    length = message - 16
    name = data.draw(st.binary(min_size=length, max_size=length)) if fill else bytes(length)
    check(namespace, name)


@pytest.mark.parametrize("length", range(0, 200))
def test_every_length_to_three_blocks_matches_hashlib(length: int) -> None:
    check(uuid.NAMESPACE_DNS, bytes(range(256))[:length] if length <= 256 else b"")


@settings(max_examples=100, deadline=None)
@given(namespace=NAMESPACES, name=st.text(max_size=80))
def test_text_names_hash_their_utf8(namespace: uuid.UUID, name: str) -> None:
    # RFC 9562 §6.5: a name given as text is hashed as its UTF-8 octets.
    assert uuidkit.uuid5(namespace, name) == expected("sha1", 5, namespace, name.encode())
    assert uuidkit.uuid3(namespace, name) == expected("md5", 3, namespace, name.encode())


@pytest.mark.parametrize("vector", ["A.2", "A.4"])
def test_rfc_9562_appendix_a_name_based_vectors(vector: str) -> None:
    rows = json.loads(VECTORS.read_text("utf-8"))["vectors"]
    row = next(row for row in rows if row["vector"] == vector)
    namespace = uuid.UUID(row["inputs"]["namespace"])
    make = uuidkit.uuid3 if row["version"] == 3 else uuidkit.uuid5
    assert str(make(namespace, row["inputs"]["name"])) == row["string"]


def test_a_name_of_many_blocks_matches_hashlib() -> None:
    name = bytes(range(256)) * 4099  # about 1 MiB, not a whole number of blocks
    check(uuid.NAMESPACE_OID, name)
