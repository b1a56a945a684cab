"""UUID columns between uuidkit.bulk and DuckDB, Polars and pandas, both ways, never as text.

A ``bulk`` Arrow array (``arrow.uuid``, 16 bytes a value in network byte order, RFC 9562 §4)
goes into each engine and comes back into ``bulk.to_list``/``format``/``timestamps`` as the
same 16 bytes: DuckDB keeps a ``UUID`` column, Polars ``Binary``, pandas the Arrow type (or
``uuid.UUID`` objects). The property tests draw arrays of UUIDv7 over the whole 48-bit
millisecond range, so the values straddle the top bit, where DuckDB's internal
representation (a signed 128-bit integer with that bit flipped) would show if its order
differed from the byte order (RFC 9562 §6.11).

References: RFC 9562 §4, §5.7, §6.11.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit import bulk
from uuidkit.errors import InvalidUUID

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")
pl = pytest.importorskip("polars")
pd = pytest.importorskip("pandas")

#: RFC 9562 §5.7: unix_ts_ms (48 bits), ver 0b0111, rand_a (12), var 0b10, rand_b (62).
V7 = st.builds(
    lambda ms, rand_a, rand_b: uuid.UUID(
        int=ms << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    ),
    # Mostly times bulk.timestamps reads (int64 nanoseconds end in 2262), some up to the
    # 48-bit end (year 10889), across the top bit (2**47 ms, year 6429).
    st.one_of(st.integers(0, ((1 << 63) - 1) // 1_000_000), st.integers(0, (1 << 48) - 1)),
    st.integers(0, (1 << 12) - 1),
    st.integers(0, (1 << 62) - 1),
)
V7_ARRAYS = st.lists(V7, max_size=30, unique=True)
EXAMPLES = settings(max_examples=25, deadline=None)
#: The last millisecond whose nanoseconds fit an int64 (bulk.timestamps' range).
LAST_NS_MS = ((1 << 63) - 1) // 1_000_000
TOP_MS = 1 << 47
#: Just below and just above the top bit of the 128-bit value.
BELOW_TOP = uuid.UUID("7fffffff-ffff-7fff-bfff-ffffffffffff")
ABOVE_TOP = uuid.UUID("80000000-0000-7000-8000-000000000000")


def _arrow(values: list[uuid.UUID]) -> Any:
    return bulk.from_list(values, into="arrow")


def _ms(values: list[uuid.UUID]) -> list[int]:
    """RFC 9562 §5.7: the top 48 bits are unix_ts_ms."""
    return [value.int >> 80 for value in values]


def _check_times(column: Any, values: list[uuid.UUID]) -> None:
    """bulk.timestamps reads each unix_ts_ms, or names the first it cannot hold."""
    late = [index for index, ms in enumerate(_ms(values)) if ms > LAST_NS_MS]
    if late:
        with pytest.raises(InvalidUUID, match="a time between 1677 and 2262") as caught:
            bulk.timestamps(column)
        assert caught.value.index == late[0]
    else:
        assert (bulk.timestamps(column) // 1_000_000).tolist() == _ms(values)


def _duckdb_with(values: list[uuid.UUID]) -> Any:
    connection = duckdb.connect()
    connection.register("keys", pa.table({"id": _arrow(values)}))
    return connection


# --- DuckDB -------------------------------------------------------------------------------


@EXAMPLES
@given(V7_ARRAYS)
def test_duckdb_reads_a_uuid_column_in_byte_order(values: list[uuid.UUID]) -> None:
    connection = _duckdb_with(values)
    if values:
        assert connection.sql("SELECT DISTINCT typeof(id) FROM keys").fetchall() == [("UUID",)]
    ordered = connection.sql("SELECT id FROM keys ORDER BY id").fetchall()
    assert [row[0] for row in ordered] == sorted(values)  # uuid.UUID orders by the 128-bit int
    # DuckDB reads unix_ts_ms as a signed 48-bit number: from 2**47 ms (year 6429) on,
    # its times are 2**48 ms early (negative), where the bytes and uuidkit say otherwise.
    milliseconds = "SELECT epoch_ms(uuid_extract_timestamp(id)) FROM keys"
    signed = [ms - (1 << 48) if ms >= TOP_MS else ms for ms in _ms(values)]
    assert [row[0] for row in connection.sql(milliseconds).fetchall()] == signed


@EXAMPLES
@given(V7_ARRAYS)
def test_duckdb_hands_back_the_16_bytes(values: list[uuid.UUID]) -> None:
    connection = _duckdb_with(values)
    as_blob = connection.sql("SELECT id::BLOB AS id FROM keys").to_arrow_table()["id"]
    assert pa.types.is_binary(as_blob.type) and bulk.to_list(as_blob) == values
    connection.execute("SET arrow_lossless_conversion = true")
    as_uuid = connection.sql("SELECT id FROM keys").to_arrow_table()["id"]
    assert as_uuid.type == pa.uuid()
    assert bulk.to_list(as_uuid) == values
    assert bulk.format(as_uuid).to_pylist() == [str(value) for value in values]
    _check_times(as_uuid, values)


def test_duckdb_orders_across_the_top_bit_as_the_bytes_do() -> None:
    connection = _duckdb_with([ABOVE_TOP, BELOW_TOP])
    assert connection.sql("SELECT id FROM keys ORDER BY id").fetchall() == [
        (BELOW_TOP,),
        (ABOVE_TOP,),
    ]
    assert connection.execute(
        "SELECT min(id), max(id), count(*) FILTER (WHERE id > ?) FROM keys", [BELOW_TOP]
    ).fetchall() == [(BELOW_TOP, ABOVE_TOP, 1)]


def test_duckdb_text_is_refused_with_the_way_to_read_it() -> None:
    # Without arrow_lossless_conversion DuckDB's Arrow output is text: bulk reads no text
    # as bytes, and says where text goes.
    connection = _duckdb_with([BELOW_TOP])
    as_text = connection.sql("SELECT id FROM keys").to_arrow_table()["id"]
    assert pa.types.is_string(as_text.type)
    with pytest.raises(InvalidUUID, match=r"found string \(text: uuidkit.bulk.parse reads it\)"):
        bulk.to_list(as_text)
    assert bulk.parse(as_text, into="list") == [BELOW_TOP]


# --- Polars --------------------------------------------------------------------------------


@EXAMPLES
@given(V7_ARRAYS)
def test_polars_keeps_the_16_bytes_and_their_order(values: list[uuid.UUID]) -> None:
    column = pl.Series("id", _arrow(values))
    assert column.dtype == pl.Binary
    assert column.to_list() == [value.bytes for value in values]
    assert column.sort().to_list() == [value.bytes for value in sorted(values)]
    assert bulk.to_list(column) == values
    assert bulk.format(column).to_pylist() == [str(value) for value in values]
    _check_times(column, values)
    assert bulk.to_list(pl.DataFrame({"id": column})["id"].slice(1)) == values[1:]


def test_polars_binary_becomes_a_duckdb_uuid_by_a_cast() -> None:
    values = [ABOVE_TOP, BELOW_TOP]
    frame = pl.DataFrame({"id": _arrow(values)})
    connection = duckdb.connect()
    connection.register("frame", frame)
    assert connection.sql("SELECT typeof(id) FROM frame LIMIT 1").fetchall() == [("BLOB",)]
    cast = connection.sql("SELECT id::UUID FROM frame ORDER BY id").fetchall()
    assert [row[0] for row in cast] == sorted(values)


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ([b"\x00" * 16, b"\x00" * 15], "element 1: expected 16 bytes, found 15"),
        ([b"\x00" * 16, b"\x00" * 17], "element 1: expected 16 bytes, found 17"),
        ([b"\x00" * 16, None], "element 1: null where a UUID is expected"),
        ([1, 2], "found int64"),
    ],
)
def test_a_polars_column_that_is_not_uuids_is_refused_by_index(
    column: list[Any], message: str
) -> None:
    with pytest.raises(InvalidUUID, match=message) as caught:
        bulk.to_list(pl.Series(column))
    if "element" in message:
        assert caught.value.index == 1


# --- pandas --------------------------------------------------------------------------------


@EXAMPLES
@given(V7_ARRAYS)
def test_pandas_keeps_the_arrow_type_or_the_objects(values: list[uuid.UUID]) -> None:
    table = pa.table({"id": _arrow(values)})
    typed = table.to_pandas(types_mapper=pd.ArrowDtype)["id"]
    assert str(typed.dtype) == "extension<arrow.uuid>[pyarrow]"
    objects = table.to_pandas()["id"]
    for column in (typed, objects):
        assert bulk.to_list(column) == values
        texts = bulk.format(column)  # Arrow strings from the Arrow column, str from objects
        assert (texts if isinstance(texts, list) else texts.to_pylist()) == list(map(str, values))
        _check_times(column, values)
    back = pd.Series(pd.arrays.ArrowExtensionArray(_arrow(values)))
    assert back.dtype == typed.dtype and back.tolist() == values


def test_a_pandas_object_column_names_the_element_that_is_not_a_uuid() -> None:
    column = pd.Series([BELOW_TOP, str(ABOVE_TOP)], dtype=object)
    with pytest.raises(InvalidUUID, match=r"element 1: expected a uuid\.UUID, found str"):
        bulk.to_list(column)


def test_a_table_is_not_a_column() -> None:
    with pytest.raises(InvalidUUID, match="found struct"):
        bulk.to_list(pa.table({"id": _arrow([BELOW_TOP])}))
