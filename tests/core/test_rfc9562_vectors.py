"""RFC 9562 Appendix A and B vectors, each pushed through every representation.

One table (tests/vectors/rfc9562_appendix_{a,b}.json, named after their appendix) and one
test per vector: built from the RFC's inputs, then compared as every string form, bytes,
bytes_le, int, fields, timestamp, version and variant; ordering is checked across the table.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

import uuidkit
from uuidkit import fields as read_fields
from uuidkit.fields import Variant

VECTORS_DIR = Path(__file__).resolve().parent.parent / "vectors"
_TABLE: list[dict[str, Any]] = [
    vector
    for appendix in ("rfc9562_appendix_a.json", "rfc9562_appendix_b.json")
    for vector in json.loads((VECTORS_DIR / appendix).read_text(encoding="utf-8"))["vectors"]
]


def _hex_ints(mapping: dict[str, str]) -> dict[str, int]:
    return {name: int(value, 16) for name, value in mapping.items()}


def _build(vector: dict[str, Any]) -> uuid.UUID:
    builder = getattr(uuidkit, vector["builder"])
    inputs = dict(vector["inputs"])
    if "namespace" in inputs:
        inputs["namespace"] = uuid.UUID(inputs["namespace"])
        result: uuid.UUID = builder(**inputs)
        return result
    if "data" in inputs:
        result = builder(bytes.fromhex(inputs["data"]))
        return result
    result = builder(**_hex_ints(inputs))
    return result


@pytest.mark.parametrize("vector", _TABLE, ids=[v["vector"] for v in _TABLE])
def test_vector_through_every_representation(vector: dict[str, Any]) -> None:
    built = _build(vector)
    expected_text = vector["string"].lower()
    # string forms (RFC 9562 §4: hex-and-dash, either case; URN; braces; 32 hex digits)
    assert str(built) == expected_text
    assert uuidkit.to_upper(built) == expected_text.upper()
    assert uuidkit.to_urn(built) == "urn:uuid:" + expected_text
    assert uuidkit.to_braced(built) == "{" + expected_text + "}"
    assert uuidkit.to_hex(built) == expected_text.replace("-", "")
    for text in (vector["string"], expected_text, "urn:uuid:" + expected_text):
        assert uuidkit.parse(text) == built
    assert uuidkit.parse(expected_text, strict=True) == built
    # binary and integer forms, both ways
    assert built.bytes == bytes.fromhex(vector["bytes"]) == uuidkit.to_bytes(built)
    assert built.bytes_le == bytes.fromhex(vector["bytes_le"]) == uuidkit.to_bytes_le(built)
    assert built.int == int(vector["int"])
    assert uuidkit.from_bytes(built.bytes) == built
    assert uuidkit.from_bytes_le(built.bytes_le) == built
    assert uuidkit.from_int(built.int) == built
    assert uuidkit.from_fields(built.fields) == built
    assert type(built) is uuid.UUID and built == uuid.UUID(vector["string"])
    # version, variant, fields under the RFC's names
    assert uuidkit.version(built) == vector["version"] == built.version
    assert uuidkit.variant(built) is Variant[vector["variant"]]
    assert uuidkit.variant(built) == built.variant
    record = read_fields(built)
    assert record.version == vector["version"]  # type: ignore[union-attr]
    for name, value in _hex_ints(vector["fields"]).items():
        assert getattr(record, name) == value, name
    # timestamp, where the layout has one
    assert uuidkit.timestamp_ns(built) == vector["timestamp_ns"]
    if vector["timestamp_ns"] is not None:
        moment = uuidkit.timestamp_datetime(built)
        assert moment is not None and moment.isoformat() == "2022-02-22T19:22:22+00:00"


def test_appendix_a_time_based_vectors_share_one_instant() -> None:
    """Appendix A: "Both UUIDv1 and UUIDv6 test vectors utilize the same 60-bit timestamp";
    A.6 uses the same moment in milliseconds."""
    instants = {v["timestamp_ns"] for v in _TABLE if v["timestamp_ns"] is not None}
    assert instants == {1_645_557_742_000_000_000}
    v1 = uuid.UUID(next(v["string"] for v in _TABLE if v["vector"] == "A.1"))
    v6 = uuid.UUID(next(v["string"] for v in _TABLE if v["vector"] == "A.5"))
    assert uuidkit.v1_to_v6(v1) == v6 and uuidkit.v6_to_v1(v6) == v1
    assert v1.time == read_fields(v6).timestamp  # type: ignore[union-attr]


def test_b1_is_reproducible_from_its_timestamp() -> None:
    """B.1: a 60-bit count of 10 ns since 1970 spread over custom_a and custom_b."""
    steps_of_10ns = 1_645_557_742_000_000_000 // 10
    assert steps_of_10ns == 0x2489E9AD2EE2E00
    vector = next(v for v in _TABLE if v["vector"] == "B.1")
    custom_c = int(vector["inputs"]["custom_c"], 16)
    built = uuidkit.build_v8(steps_of_10ns >> 12, steps_of_10ns & 0xFFF, custom_c)
    assert str(built) == vector["string"].lower()


def test_ordering_across_the_table() -> None:
    """Sorting by int, by bytes and by lowercase string agree (RFC 9562 §6.11); the v6 and
    v7 vectors lie inside the time-range bounds of their instant."""
    values = [uuid.UUID(v["string"]) for v in _TABLE]
    by_int = sorted(values, key=lambda u: u.int)
    assert sorted(values, key=lambda u: u.bytes) == by_int
    assert sorted(values, key=str) == by_int
    assert sorted(values) == by_int
    instant = 1_645_557_742_000_000_000
    v6 = uuid.UUID(next(v["string"] for v in _TABLE if v["vector"] == "A.5"))
    v7 = uuid.UUID(next(v["string"] for v in _TABLE if v["vector"] == "A.6"))
    assert uuidkit.uuid6_min(instant) <= v6 <= uuidkit.uuid6_max(instant)
    assert uuidkit.uuid7_min(instant) <= v7 <= uuidkit.uuid7_max(instant)
    assert not uuidkit.uuid7_min(instant + 1_000_000) <= v7
