"""uuidkit.integrations.sqlite against a real SQLite (the standard library's sqlite3).

References: RFC 9562 §4 (binary form), §6.11 (sorting), §6.13 (DBMS), Appendix A.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit
from uuidkit.integrations import sqlite as uuid_sqlite

#: RFC 9562 Appendix A.6 (UUIDv7, unix_ts_ms 0x017F22E279B0 = 1645557742000 ms) and A.5
#: (UUIDv6 of the same instant as A.1: 1645557742.0 s, Appendix A.1's "Tuesday, February
#: 22, 2022 2:22:22.000000 PM GMT-05:00").
RFC_V7 = uuid.UUID("017F22E2-79B0-7CC3-98C4-DC0C0C07398F")
RFC_V6 = uuid.UUID("1EC9414C-232A-6B00-B3C8-9F6BDECED846")
RFC_V4 = uuid.UUID("919108f7-52d1-4320-9bac-f847db4148a8")
RFC_SECONDS = 1645557742.0


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:", detect_types=sqlite3.PARSE_DECLTYPES)
    uuid_sqlite.register(connection)
    connection.execute("CREATE TABLE item (id uuid PRIMARY KEY DEFAULT (uuid7()), name TEXT)")
    yield connection
    connection.close()


def test_uuid_parameters_are_stored_as_16_byte_blobs_and_read_back(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO item VALUES (?, 'x')", (RFC_V7,))
    stored = db.execute("SELECT typeof(id), length(id), hex(id) FROM item").fetchone()
    assert stored == ("blob", 16, "017F22E279B07CC398C4DC0C0C07398F")
    (value,) = db.execute("SELECT id FROM item").fetchone()
    assert type(value) is uuid.UUID and value == RFC_V7


def test_text_in_a_uuid_column_is_read_as_uuid(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO item VALUES ('{919108F7-52D1-4320-9BAC-F847DB4148A8}', 't')")
    (value,) = db.execute("SELECT id FROM item").fetchone()
    assert value == RFC_V4


def test_bad_stored_value_raises_invalid_uuid(db: sqlite3.Connection) -> None:
    db.execute("INSERT INTO item VALUES (x'0102', 'short')")
    with pytest.raises(uuidkit.InvalidUUID):
        db.execute("SELECT id FROM item").fetchone()


def test_default_uuid7_keys_increase_in_insert_order(db: sqlite3.Connection) -> None:
    db.executemany("INSERT INTO item (name) VALUES (?)", [(str(i),) for i in range(500)])
    rows = db.execute("SELECT id, name FROM item ORDER BY rowid").fetchall()
    ids = [row[0] for row in rows]
    assert all(value.version == 7 for value in ids)
    assert ids == sorted(ids) and len(set(ids)) == 500


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.integers(0, (1 << 128) - 1), min_size=1, max_size=40, unique=True))
def test_order_by_blob_is_python_sort(values: list[int]) -> None:
    connection = sqlite3.connect(":memory:", detect_types=sqlite3.PARSE_DECLTYPES)
    uuid_sqlite.register(connection)
    connection.execute("CREATE TABLE t (id uuid PRIMARY KEY)")
    connection.executemany("INSERT INTO t VALUES (?)", [(uuid.UUID(int=v),) for v in values])
    ordered = [row[0] for row in connection.execute("SELECT id FROM t ORDER BY id")]
    assert ordered == sorted(uuid.UUID(int=v) for v in values)
    connection.close()


def test_sql_functions(db: sqlite3.Connection) -> None:
    row = db.execute(
        "SELECT uuid_str(?), uuid_str('017F22E2-79B0-7CC3-98C4-DC0C0C07398F'), "
        "hex(uuid_blob('017f22e2-79b0-7cc3-98c4-dc0c0c07398f')), uuid_timestamp(?), "
        "uuid_timestamp(?), uuid_timestamp(?), uuid_str(NULL), uuid_timestamp(NULL)",
        (RFC_V7.bytes, RFC_V7, RFC_V6, RFC_V4),
    ).fetchone()
    assert row == (
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "017F22E279B07CC398C4DC0C0C07398F",
        RFC_SECONDS,
        RFC_SECONDS,
        None,
        None,
        None,
    )
    when = db.execute("SELECT datetime(uuid_timestamp(?), 'unixepoch')", (RFC_V7,)).fetchone()
    assert when == ("2022-02-22 19:22:22",)


def test_generating_functions(db: sqlite3.Connection) -> None:
    raw7, raw4 = db.execute("SELECT uuid7(), uuid4()").fetchone()
    assert uuid.UUID(bytes=raw7).version == 7 and uuid.UUID(bytes=raw4).version == 4
    second = db.execute("SELECT uuid7()").fetchone()[0]
    assert second > raw7  # memcmp order = time order for UUIDv7


@pytest.mark.parametrize("bad", ["'not-a-uuid'", "x'00'", "42"])
def test_bad_function_input_is_an_sql_error(db: sqlite3.Connection, bad: str) -> None:
    with pytest.raises(sqlite3.OperationalError, match="user-defined function raised"):
        db.execute(f"SELECT uuid_str({bad})").fetchone()


def test_readers_are_deterministic_so_they_can_be_indexed(db: sqlite3.Connection) -> None:
    db.execute("CREATE INDEX item_time ON item (uuid_timestamp(id))")
    db.execute("INSERT INTO item VALUES (?, 'v7')", (RFC_V7,))
    rows = db.execute("SELECT name FROM item WHERE uuid_timestamp(id) = ?", (RFC_SECONDS,))
    assert rows.fetchall() == [("v7",)]


def test_uuid7_range_bounds_select_a_time_range(db: sqlite3.Connection) -> None:
    # RFC 9562 §6.11/§6.13: BLOB order is time order for v7, so BETWEEN bounds select a range.
    base_ms = 1_700_000_000_000
    keys = [uuidkit.build_v7(base_ms + i, 0, 0) for i in range(10)]
    db.executemany("INSERT INTO item VALUES (?, ?)", [(k, str(i)) for i, k in enumerate(keys)])
    low, high = uuidkit.uuid7_range((base_ms + 3) * 1_000_000, (base_ms + 6) * 1_000_000)
    rows = db.execute("SELECT name FROM item WHERE id BETWEEN ? AND ? ORDER BY id", (low, high))
    assert [row[0] for row in rows] == ["3", "4", "5", "6"]
