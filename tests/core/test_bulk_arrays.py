"""uuidkit.bulk over numpy and Arrow arrays: the compiled loops and the pure path agree.

Every case runs on the path in use (compiled when built) and on the pure-Python path (the
module's ``SPEEDUPS`` set to ``None``), and both must give the same values or the same
error, index and position.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit import _accel, bulk
from uuidkit.errors import InvalidUUID

np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")

GOOD = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
PATHS = ["compiled", "pure"] if _accel.SPEEDUPS is not None else ["pure"]


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "pure":
        monkeypatch.setattr(bulk, "SPEEDUPS", None)
    yield request.param


def _outcome(call: Callable[[], Any]) -> Any:
    """The values of a call, or its error as (message, index, position)."""
    try:
        result = call()
    except InvalidUUID as error:
        return ("error", str(error), error.index, error.position)
    return _as_list(result)


def _as_list(values: Any) -> list[Any]:
    return values if isinstance(values, list) else bulk.to_list(values)


def _on_both_paths(call: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    found = _outcome(call)
    if _accel.SPEEDUPS is not None:
        with monkeypatch.context() as pure:
            pure.setattr(bulk, "SPEEDUPS", None)
            assert _outcome(call) == found
    return found


uuids = st.lists(st.integers(0, (1 << 128) - 1).map(lambda n: uuid.UUID(int=n)), max_size=40)


@settings(max_examples=60, deadline=None)
@given(values=uuids, into=st.sampled_from(["numpy", "arrow"]))
def test_array_format_parse_round_trip_on_both_paths(values: list[uuid.UUID], into: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        for path in PATHS:
            if path == "pure":
                monkeypatch.setattr(bulk, "SPEEDUPS", None)
            array = bulk.from_list(values, into=into)  # type: ignore[arg-type]
            texts = bulk.format(array)
            listed = texts.tolist() if into == "numpy" else texts.to_pylist()
            assert listed == [str(value) for value in values]
            for strict in (False, True):
                back = bulk.parse(texts, into=into, strict=strict)  # type: ignore[arg-type]
                assert bulk.to_list(back) == values
                assert bulk.format(back).equals(texts) if into == "arrow" else True


@settings(max_examples=60, deadline=None)
@given(
    values=uuids,
    forms=st.lists(st.sampled_from(["canonical", "upper", "hex", "braced", "urn"]), min_size=40),
    strict=st.booleans(),
)
def test_every_accepted_form_in_every_container(
    values: list[uuid.UUID], forms: list[str], strict: bool
) -> None:
    """Lenient forms in wide numpy cells and Arrow strings are read as uuidkit.parse reads them."""
    writers: dict[str, Callable[[uuid.UUID], str]] = {
        "canonical": str,
        "upper": lambda u: str(u).upper(),
        "hex": lambda u: u.hex,
        "braced": lambda u: "{" + str(u) + "}",
        "urn": lambda u: u.urn.upper() if u.int % 2 else u.urn,
    }
    texts = [writers[form](value) for value, form in zip(values, forms, strict=False)]
    containers = [texts, np.array(texts, dtype="U45"), pa.array(texts, pa.string())]
    containers.append(np.array([t.encode() for t in texts], dtype="S45"))
    containers.append(pa.array(texts, pa.large_string()))
    with pytest.MonkeyPatch.context() as monkeypatch:
        expected = _outcome(lambda: bulk.parse(texts, into="list", strict=strict))
        for container in containers:

            def parse(made: Any = container) -> Any:
                return bulk.parse(made, into="list", strict=strict)

            assert _on_both_paths(parse, monkeypatch) == expected


def _bad_in_the_middle(bad: str, count: int = 9) -> list[str]:
    texts = [str(uuid.UUID(int=i * 977)) for i in range(count)]
    texts[count // 2] = bad
    return texts


BAD = [
    (GOOD[:-1] + "g", "invalid character 'g' at 35", 35),
    (GOOD[:10] + "é" + GOOD[11:], "invalid character 'é' at 10", 10),
    (GOOD[:8] + "x" + GOOD[9:], "invalid character 'x' at 8", 8),
    (GOOD[:-1], "group 4: expected 12 hex digits, found 11", 35),
    ("", "empty string: expected a UUID such as 8-4-4-4-12 hex digits", None),
]


@pytest.mark.parametrize(("bad", "message", "position"), BAD)
@pytest.mark.parametrize("container", ["list", "numpy", "numpy-strided", "arrow", "chunked"])
def test_a_bad_element_in_the_middle_is_named(
    bad: str, message: str, position: int | None, container: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _bad_in_the_middle(bad)
    makers: dict[str, Callable[[], Any]] = {
        "list": lambda: texts,
        "numpy": lambda: np.array(texts, dtype="U36"),
        "numpy-strided": lambda: np.array([t for text in texts for t in (text, "x")])[::2],
        "arrow": lambda: pa.array(texts),
        "chunked": lambda: pa.chunked_array([texts[:2], texts[2:3], texts[3:]]),
    }
    made = makers[container]()
    found = _on_both_paths(lambda: bulk.parse(made), monkeypatch)
    assert found == ("error", f"element 4: {message}", 4, position)


def test_strict_mode_names_a_lenient_form_in_an_array(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _bad_in_the_middle("{" + GOOD + "}")
    for made in (np.array(texts), pa.array(texts)):

        def parse(strict: bool, strings: Any = made) -> Any:
            return bulk.parse(strings, strict=strict)

        found = _on_both_paths(lambda: parse(True), monkeypatch)
        assert found[:3] == ("error", found[1], 4)
        assert found[1].startswith("element 4: braces are not accepted in strict mode")
        assert _on_both_paths(lambda: parse(False), monkeypatch)[4] == uuid.UUID(GOOD)


def test_arrow_nulls_and_non_ascii_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with_null = pa.array([GOOD, None, GOOD])
    found = _on_both_paths(lambda: bulk.parse(with_null), monkeypatch)
    assert found == ("error", "element 1: expected a str, found NoneType", 1, None)
    sliced = pa.array([None, GOOD, "x" + GOOD[1:]])[1:]
    found = _on_both_paths(lambda: bulk.parse(sliced), monkeypatch)
    assert found == ("error", "element 1: invalid character 'x' at 0", 1, 0)
    wide = pa.array([GOOD, GOOD[:35] + "٦"])  # ARABIC-INDIC DIGIT SIX: a digit, not a hex one
    found = _on_both_paths(lambda: bulk.parse(wide), monkeypatch)
    assert found == ("error", "element 1: invalid character '٦' at 35", 1, 35)


def test_numpy_cells_end_before_trailing_nuls_only(monkeypatch: pytest.MonkeyPatch) -> None:
    value = uuid.UUID(GOOD)
    padded = np.array([value.hex, GOOD], dtype="U40")  # the hex form ends in 8 NULs
    assert _on_both_paths(lambda: bulk.parse(padded), monkeypatch) == [value, value]
    inner = np.array([GOOD[:4] + "\0" + GOOD[5:]])
    found = _on_both_paths(lambda: bulk.parse(inner), monkeypatch)
    assert found[:3] == ("error", "element 0: invalid character '\\x00' at 4", 0)


def test_byte_order_strides_and_the_list_resume(monkeypatch: pytest.MonkeyPatch) -> None:
    values = [uuid.UUID(int=i * 7919 << 64) for i in range(50)]
    texts = [str(value) for value in values]
    big_endian = np.array(texts, dtype=">U36")
    strided = np.array([t for text in texts for t in (text, "not a UUID")], dtype="U36")[::2]
    assert not strided.flags.c_contiguous
    assert _on_both_paths(lambda: bulk.parse(big_endian), monkeypatch) == values
    assert _on_both_paths(lambda: bulk.parse(strided), monkeypatch) == values

    class Text(str):
        pass

    # A str subclass is left to the Python parser, then the compiled loop resumes after it.
    mixed = [texts[0], Text(texts[1]), texts[2], np.str_(texts[3])]
    assert _on_both_paths(lambda: bulk.parse(mixed, into="list"), monkeypatch) == values[:4]


def test_other_shapes_and_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    square = np.array([[GOOD, GOOD]])
    found = _on_both_paths(lambda: bulk.parse(square), monkeypatch)
    assert found == ("error", "expected a 1-D array of strings, found 2 dimensions", None, None)
    objects = np.array([GOOD, 5], dtype=object)
    found = _on_both_paths(lambda: bulk.parse(objects), monkeypatch)
    assert found == ("error", "element 1: expected a str, found int", 1, None)
    binary = pa.array([GOOD.encode()], pa.binary())
    found = _on_both_paths(lambda: bulk.parse(binary), monkeypatch)
    assert found == ("error", "element 0: expected a str, found bytes", 0, None)


def test_a_table_column_is_read_and_other_arrow_types_are_named(path: str) -> None:
    # A table's column is a ChunkedArray; anything but 16-byte fixed-width values is refused
    # with an InvalidUUID naming its type, not a bare ValueError from pyarrow.
    values = [uuid.UUID(GOOD), uuid.UUID(int=1), uuid.UUID(int=2)]
    array = bulk.from_list(values, into="arrow")
    column = pa.table({"id": pa.chunked_array([array[:1], array[1:]])})["id"]
    assert bulk.to_list(column) == values and bulk.format(column).to_pylist() == bulk.format(values)
    assert bulk.to_list(pa.chunked_array([], pa.uuid())) == []
    # Variable-width binary of 16-byte values (Polars' Binary) is read as the same bytes.
    assert bulk.to_list(pa.array([uuid.UUID(GOOD).bytes], pa.binary())) == [uuid.UUID(GOOD)]
    for other in (pa.array([b"x" * 8], pa.binary(8)), pa.array([1], pa.int64())):
        with pytest.raises(InvalidUUID) as refused:
            bulk.to_list(other)
        assert str(refused.value).endswith(f"16-byte binary array, found {other.type}")


@pytest.mark.parametrize(
    "empty",
    [
        lambda: [],
        lambda: np.array([], dtype="U36"),
        lambda: np.array([], dtype="S36"),
        lambda: np.empty(3, dtype="U0"),
        lambda: pa.array([], pa.string()),
        lambda: pa.chunked_array([], pa.string()),
        lambda: pa.chunked_array([[], []], pa.large_string()),
    ],
)
def test_parse_of_empty_containers(empty: Callable[[], Any], path: str) -> None:
    made = empty()
    if len(made):  # 'U0': three empty strings
        with pytest.raises(InvalidUUID, match=r"^element 0: empty string"):
            bulk.parse(made)
        return
    for into in ("numpy", "arrow", "list"):
        assert len(bulk.parse(made, into=into)) == 0


@pytest.mark.parametrize("into", ["list", "numpy", "arrow"])
def test_format_of_empty_and_strided_arrays(into: str, path: str) -> None:
    assert len(bulk.format(bulk.from_list([], into=into))) == 0  # type: ignore[arg-type]
    values = [uuid.UUID(int=(i + 1) << 120 | i) for i in range(20)]
    records = np.frombuffer(b"".join(v.bytes for v in values), dtype="V16")
    assert bulk.format(records[::3]).tolist() == [str(v) for v in values[::3]]
    assert bulk.format(pa.array([v.bytes for v in values], pa.binary(16))[5:9]).to_pylist() == [
        str(v) for v in values[5:9]
    ]


def test_format_switches_to_large_string_past_the_int32_offsets(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = [uuid.UUID(int=i) for i in range(5)]
    monkeypatch.setattr(bulk, "_ARROW_STRING_LIMIT", 36 * 4)
    texts = bulk.format(bulk.from_list(values, into="arrow"))
    assert texts.type == pa.large_string()
    assert texts.to_pylist() == [str(v) for v in values]
    assert bulk.to_list(bulk.parse(texts)) == values


def _ones_fraction(records: Any) -> float:
    """Fraction of one bits among the 122 random bits of each record."""
    octets = np.frombuffer(records, dtype=np.uint8).reshape(-1, 16).copy()
    octets[:, 6] &= 0x0F
    octets[:, 8] &= 0x3F
    return float(np.unpackbits(octets).mean() * 128 / 122)


@pytest.mark.parametrize("version", [4, 8])
def test_large_random_arrays_are_filled_and_stamped_everywhere(version: int, path: str) -> None:
    """Past 1 MiB two threads fill the halves: both halves are random and stamped.

    122 random bits per record, n records: the fraction of ones has standard deviation
    0.5 / sqrt(122 n); 1e-2 is more than 10 of them for n = 20,000.
    """
    count = 80_000  # 1.28 MB
    made = bulk.generate(version, count, into="numpy")
    octets = made.view(np.uint8).reshape(-1, 16)
    assert ((octets[:, 6] >> 4) == version).all()
    assert ((octets[:, 8] >> 6) == 2).all()
    for quarter in np.split(made, 4):
        assert abs(_ones_fraction(quarter) - 0.5) < 1e-2
    assert len(np.unique(made)) == count


@pytest.mark.skipif(_accel.SPEEDUPS is None, reason="uuidkit._speedups not in use")
@pytest.mark.parametrize("threads", [1, 2])
def test_getrandom_into_fills_the_whole_buffer(threads: int) -> None:
    buffer = bytearray(16 * 70_000 + 5)  # the last 5 bytes are not a whole record
    _accel.SPEEDUPS.getrandom_into(buffer, threads)
    for quarter in np.split(np.frombuffer(buffer[:-5], dtype=np.uint8), 4):
        assert abs(float(np.unpackbits(quarter).mean()) - 0.5) < 1e-2
    assert buffer[-5:] == bytes(5)


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(
        st.tuples(
            st.integers(0, (1 << 128) - 1).flatmap(lambda b: st.sampled_from([b, b >> 4, b >> 10])),
            st.sampled_from([1, 6, 7, 7, 4]),
            st.integers(0, 9).map(lambda n: n > 0),
        ),
        max_size=12,
    )
)
def test_timestamps_agree_on_both_paths(values: list[tuple[int, int, bool]]) -> None:
    """Any bits, including times outside int64 nanoseconds and a wrong variant now and then."""
    made = []
    for bits, version, rfc_variant in values:
        value = bits & ~(0xF << 76) | version << 76
        if rfc_variant:
            value = value & ~(3 << 62) | 2 << 62
        made.append(uuid.UUID(int=value))
    with pytest.MonkeyPatch.context() as monkeypatch:
        found = _on_both_paths(lambda: bulk.timestamps(made).tolist(), monkeypatch)
    if not isinstance(found, tuple):
        assert len(found) == len(made)


edge_ints = st.one_of(
    st.integers(0, (1 << 128) - 1),
    st.sampled_from([0, 1, (1 << 128) - 1, 1 << 127, (1 << 120) - 1, 1 << 120, 1 << 30, 1 << 60]),
    st.integers(0, 127).map(lambda bits: (1 << bits) - 1),
)


@settings(max_examples=80, deadline=None)
@given(values=st.lists(edge_ints, max_size=20))
def test_lists_of_uuids_and_ints_convert_on_both_paths(values: list[int]) -> None:
    """Every digit count of a 128-bit int (the compiled path reads an int's digits)."""
    made = [uuid.UUID(int=value) for value in values]
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _on_both_paths(lambda: bulk.from_list(made), monkeypatch) == made
        found = _on_both_paths(lambda: bulk.format(made), monkeypatch)
        assert found == [str(value) for value in made]
        records = bytes(bulk._records_of_ints(values))
        assert records == b"".join(value.bytes for value in made)
        assert bulk._uuids_of_ints(values) == made
