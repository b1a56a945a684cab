"""The compiled uuid3/uuid5 hash the namespace and name themselves (MD5, SHA-1): same as hashlib.

The C accelerator computes MD5 (RFC 1321) and SHA-1 (FIPS 180-4) over the namespace ID and
the name. These tests build the expected value from ``hashlib`` digests directly (RFC 9562
§5.3, §5.5: the first 16 bytes, version and variant set), for random names and for every
length around the 64-byte block boundaries (the 16-byte namespace shifts them: names of
39/40 and 47/48 bytes end the message at 55/56 and 63/64), and check RFC 9562 Appendix A.2
and A.4. On the pure path the same assertions hold for the Python twins.

SHA-1 has two compiled paths: the CPU's SHA-1 instructions where it has them (the x86 SHA
extensions, the 64-bit ARM SHA1 instructions), and the portable code. Every test here runs
on each (the module-scoped ``sha1_path`` fixture of sha1_paths.py switches with
``_sha1_hardware``); the property tests also run the Python twins beside them.

References: RFC 9562 §5.3, §5.5, §6.5, Appendix A.2, A.4; RFC 1321; FIPS 180-4 §6.1.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sha1_paths import cpu_reports_sha1_instructions, sha1_path  # noqa: F401 (the fixture)

import uuidkit
from uuidkit import _accel

VECTORS = Path(__file__).resolve().parent.parent / "vectors" / "rfc9562_appendix_a.json"
NAMESPACES = st.sampled_from(
    [uuid.NAMESPACE_DNS, uuid.NAMESPACE_URL, uuid.UUID(int=0), uuid.UUID(int=(1 << 128) - 1)]
)
#: Message lengths (namespace + name) at and around the padding boundaries of 64-byte blocks.
BOUNDARY_MESSAGES = [55, 56, 57, 63, 64, 65, 119, 120, 121, 127, 128, 129, 183, 184]


pytestmark = pytest.mark.usefixtures("sha1_path")


@pytest.mark.skipif(_accel.SPEEDUPS is None, reason="the pure path has no compiled SHA-1")
@pytest.mark.skipif(not cpu_reports_sha1_instructions(), reason="the CPU lacks SHA-1 instructions")
def test_the_sha1_instructions_are_used_where_the_cpu_has_them(
    request: pytest.FixtureRequest,
) -> None:
    # The kernel's flags (x86: from CPUID; arm64: the hwcaps of the auxiliary vector) are
    # what the module reads too, but are read here independently of it.
    speedups = _accel.SPEEDUPS
    assert speedups._sha1_hardware(True) is True
    assert speedups._sha1_hardware(False) is False
    speedups._sha1_hardware(request.getfixturevalue("sha1_path") == "sha-extensions")


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


#: RFC 9562 Appendix A.2 (Figure 18) and A.4 (Figure 23): "www.example.com" in the DNS namespace.
APPENDIX_A = {3: "5df41881-3aed-3515-88a7-2f4a814cf09e", 5: "2ed6657d-e927-568b-95e1-2665a8aea6a2"}
#: Each function of the module (the compiled one on the path the fixture chose) and its twin.
MAKERS: dict[int, list[Callable[[uuid.UUID, Any], uuid.UUID]]] = {
    3: [uuidkit.uuid3, _accel.PURE_TWINS["uuid3"]],
    5: [uuidkit.uuid5, _accel.PURE_TWINS["uuid5"]],
}
STDLIB: dict[int, Callable[[uuid.UUID, Any], uuid.UUID]] = {3: uuid.uuid3, 5: uuid.uuid5}
HASHES = {3: "md5", 5: "sha1"}
#: Name lengths whose message (16 + length bytes) ends at or next to 55, 56 and 64 bytes mod 64,
#: and names of exactly 55, 56 and 64 bytes.
EDGE_LENGTHS = sorted({*(m - 16 for m in BOUNDARY_MESSAGES), 55, 56, 64, 0, 1, 200})


def _uuid_of_int(value: int) -> uuid.UUID:
    return uuid.UUID(int=value)


ANY_NAMESPACE = st.one_of(NAMESPACES, st.uuids(), st.integers(0, 2**128 - 1).map(_uuid_of_int))


def check_every_maker(namespace: uuid.UUID, name: str | bytes) -> None:
    octets = name.encode() if isinstance(name, str) else name
    for version, makers in MAKERS.items():
        want = expected(HASHES[version], version, namespace, octets)
        # Python 3.11's uuid3/uuid5 take only str names; bytes arrived in 3.12.
        if isinstance(name, str) or sys.version_info >= (3, 12):
            assert STDLIB[version](namespace, name) == want
        for make in makers:
            assert make(namespace, name) == want, (make, version, len(octets))


@pytest.mark.parametrize("version", [3, 5])
def test_appendix_a_on_every_path(version: int) -> None:
    for make in MAKERS[version]:
        assert str(make(uuid.NAMESPACE_DNS, "www.example.com")) == APPENDIX_A[version]
        assert str(make(uuid.NAMESPACE_DNS, b"www.example.com")) == APPENDIX_A[version]


@settings(max_examples=200, deadline=None)
@given(namespace=ANY_NAMESPACE, name=st.binary(max_size=200))
def test_bytes_names_to_200_bytes_on_every_path(namespace: uuid.UUID, name: bytes) -> None:
    check_every_maker(namespace, name)


@settings(max_examples=200, deadline=None)
@given(namespace=ANY_NAMESPACE, name=st.text(max_size=200))
def test_text_names_to_200_characters_on_every_path(namespace: uuid.UUID, name: str) -> None:
    check_every_maker(namespace, name)


@settings(max_examples=200, deadline=None)
@given(namespace=ANY_NAMESPACE, length=st.sampled_from(EDGE_LENGTHS), data=st.data())
def test_names_at_the_padding_edges_on_every_path(
    namespace: uuid.UUID, length: int, data: Any
) -> None:
    # ASCII text: the same length in characters and in UTF-8 octets.
    alphabet = st.characters(min_codepoint=0, max_codepoint=127)
    if data.draw(st.booleans()):
        check_every_maker(namespace, data.draw(st.text(alphabet, min_size=length, max_size=length)))
    else:
        check_every_maker(namespace, data.draw(st.binary(min_size=length, max_size=length)))


@pytest.mark.skipif(_accel.SPEEDUPS is None, reason="the pure path has no compiled SHA-1")
def test_switching_paths_while_threads_hash_gives_every_thread_the_right_value(
    request: pytest.FixtureRequest,
) -> None:
    # The switch is read once per call (a relaxed atomic on a free-threaded build): a call
    # sees one path or the other, and both give the same digest.
    names = [bytes([index]) * index for index in range(120)]
    wanted = [expected("sha1", 5, uuid.NAMESPACE_URL, name) for name in names]
    start = threading.Barrier(3)
    results: list[list[uuid.UUID]] = [[], []]

    def hash_all(into: list[uuid.UUID]) -> None:
        start.wait()
        for _ in range(20):
            into.extend(uuidkit.uuid5(uuid.NAMESPACE_URL, name) for name in names)

    workers = [threading.Thread(target=hash_all, args=(into,)) for into in results]
    for worker in workers:
        worker.start()
    start.wait()
    for flip in range(2000):
        _accel.SPEEDUPS._sha1_hardware(flip % 2 == 0)
    for worker in workers:
        worker.join()
    _accel.SPEEDUPS._sha1_hardware(request.getfixturevalue("sha1_path") == "sha-extensions")
    assert results == [wanted * 20, wanted * 20]
