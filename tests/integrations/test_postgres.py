"""UUIDs through a real PostgreSQL server with psycopg 3, asyncpg and SQLAlchemy 2.

Every version round-trips through ``uuid``, ``bytea`` and ``text`` columns; ``ORDER BY`` on a
``uuid`` column is Python's sort; :func:`uuidkit.uuid7_range` bounds select exactly the rows
of a time range through the primary-key index; binary COPY carries UUIDs both ways.

References: RFC 9562 §4 (binary form), §5 (versions), §6.11 (sorting), §6.13 (DBMS),
Appendices A and B.
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pg_support import require_module, throwaway_cluster

import uuidkit
from uuidkit.generators import build_v7_pg18, uuid7_pg18
from uuidkit.integrations.pgcluster import Cluster

VECTORS = Path(__file__).resolve().parent.parent / "vectors"


def _every_version() -> list[uuid.UUID]:
    """RFC 9562's example of every version, fresh values of each, Nil, Max, PG18 profile."""
    values = [uuid.UUID(v["string"]) for v in _vectors("rfc9562_appendix_a.json")]
    values += [uuid.UUID(v["string"]) for v in _vectors("rfc9562_appendix_b.json")]
    values += [uuidkit.uuid1(), uuidkit.uuid4(), uuidkit.uuid6(), uuidkit.uuid7()]
    values += [uuidkit.uuid8(), uuidkit.uuid3(uuidkit.NAMESPACE_DNS, "www.example.com")]
    values += [uuidkit.uuid5(uuidkit.NAMESPACE_DNS, "www.example.com"), uuid7_pg18()]
    values += [uuidkit.NIL, uuidkit.MAX, uuid.UUID("00000013-0000-0000-c000-000000000000")]
    return list(dict.fromkeys(values))  # uuid3/uuid5 of www.example.com are A.2/A.4


def _vectors(name: str) -> list[dict[str, Any]]:
    data = json.loads((VECTORS / name).read_text(encoding="utf-8"))
    vectors: list[dict[str, Any]] = data["vectors"]
    return vectors


@pytest.fixture(scope="module")
def pg_cluster() -> Iterator[Cluster]:
    """One throwaway cluster for this module."""
    yield from throwaway_cluster()


@pytest.fixture(scope="module")
def psycopg() -> Any:
    return require_module("psycopg")


@pytest.fixture
def conn(pg_cluster: Cluster, psycopg: Any) -> Iterator[Any]:
    with psycopg.connect(pg_cluster.dsn(), autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS t")
        connection.execute("CREATE TABLE t (u uuid, b bytea, s text)")
        yield connection


def test_psycopg_round_trips_every_version(conn: Any) -> None:
    values = _every_version()
    with conn.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO t VALUES (%s, %s, %s)", [(v, v.bytes, str(v)) for v in values]
        )
    rows = conn.execute(
        "SELECT u, b, s, uuid_send(u) = b, u::text = s, s::uuid = u FROM t"
    ).fetchall()
    assert [row[0] for row in rows] == values
    assert all(type(row[0]) is uuid.UUID for row in rows)
    assert [uuid.UUID(bytes=bytes(row[1])) for row in rows] == values
    assert [uuid.UUID(row[2]) for row in rows] == values
    assert all(row[3] and row[4] and row[5] for row in rows)


def test_order_by_uuid_is_python_sort(conn: Any) -> None:
    rng = random.Random(9562)
    values = [uuid.UUID(int=rng.getrandbits(128)) for _ in range(3000)]
    values += [uuidkit.NIL, uuidkit.MAX, uuid.UUID(int=1 << 127), uuid.UUID(int=(1 << 127) - 1)]
    values += [uuidkit.uuid7() for _ in range(200)] + [uuid7_pg18() for _ in range(200)]
    with conn.cursor() as cursor:
        cursor.executemany("INSERT INTO t (u) VALUES (%s)", [(v,) for v in values])
    ordered = [row[0] for row in conn.execute("SELECT u FROM t ORDER BY u")]
    assert ordered == sorted(values)


def test_uuid7_range_selects_exactly_a_time_range_through_the_index(conn: Any) -> None:
    rng = random.Random(6)
    base_ms = 1_700_000_000_000
    keys = [
        uuidkit.build_v7(base_ms + rng.randrange(2000), rng.getrandbits(12), rng.getrandbits(62))
        for _ in range(6000)
    ]
    keys += [build_v7_pg18((base_ms + rng.randrange(2000)) * 10**6 + rng.randrange(10**6), 0)
             for _ in range(2000)]  # fmt: skip
    conn.execute("CREATE TABLE k (id uuid PRIMARY KEY, n int)")
    with conn.cursor() as cursor:
        cursor.executemany("INSERT INTO k VALUES (%s, %s)", [(k, i) for i, k in enumerate(keys)])
    conn.execute("ANALYZE k")
    start_ns, end_ns = (base_ms + 700) * 10**6, (base_ms + 759) * 10**6 + 999_999
    low, high = uuidkit.uuid7_range(start_ns, end_ns)
    query = "SELECT id FROM k WHERE id BETWEEN %s AND %s"
    plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + query, (low, high)))
    # 60 of 2000 ms is 3 % of the rows: the planner picks the index without being forced.
    assert "Index" in plan and "k_pkey" in plan, plan
    got = {row[0] for row in conn.execute(query, (low, high))}
    expected = {k for k in keys if base_ms + 700 <= k.int >> 80 <= base_ms + 759}
    assert got == expected and len(expected) > 0
    conn.execute("DROP TABLE k")


def test_binary_copy_in_and_out(conn: Any) -> None:
    values = _every_version()
    with conn.cursor() as cursor:
        with cursor.copy("COPY t (u, b, s) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(["uuid", "bytea", "text"])
            for value in values:
                copy.write_row((value, value.bytes, str(value)))
        with cursor.copy("COPY t (u, b, s) TO STDOUT (FORMAT BINARY)") as copy:
            copy.set_types(["uuid", "bytea", "text"])
            rows = list(copy.rows())
    assert [row[0] for row in rows] == values
    assert [bytes(row[1]) for row in rows] == [v.bytes for v in values]
    assert conn.execute("SELECT count(*) FROM t WHERE uuid_send(u) = b").fetchone()[0] == len(
        values
    )


def test_asyncpg_round_trips_and_binary_copy(pg_cluster: Cluster) -> None:
    asyncpg = require_module("asyncpg")
    values = _every_version()

    async def run() -> tuple[list[Any], list[Any]]:
        connection = await asyncpg.connect(
            host=str(pg_cluster.socket_dir), port=pg_cluster.port, user=pg_cluster.user
        )
        try:
            await connection.execute(
                "DROP TABLE IF EXISTS a; CREATE TABLE a (u uuid, b bytea, s text)"
            )
            await connection.executemany(
                "INSERT INTO a VALUES ($1, $2, $3)", [(v, v.bytes, str(v)) for v in values]
            )
            inserted = await connection.fetch("SELECT u, b, s FROM a")
            await connection.execute("TRUNCATE a")
            # copy_records_to_table speaks COPY ... FROM STDIN (FORMAT binary).
            await connection.copy_records_to_table(
                "a", records=[(v, v.bytes, str(v)) for v in values], columns=["u", "b", "s"]
            )
            copied = await connection.fetch("SELECT u, b, s FROM a")
            return list(inserted), list(copied)
        finally:
            await connection.close()

    inserted, copied = asyncio.run(run())
    for rows in (inserted, copied):
        # asyncpg returns its own UUID class: a uuid.UUID subclass that compares equal.
        assert all(isinstance(row["u"], uuid.UUID) for row in rows)
        assert [uuid.UUID(str(row["u"])) for row in rows] == values
        assert [row["u"] for row in rows] == values
        assert [hash(row["u"]) for row in rows] == [hash(v) for v in values]
        assert [uuidkit.encode(row["u"], "base58btc") for row in rows] == [
            uuidkit.encode(v, "base58btc") for v in values
        ]
        assert [bytes(row["b"]) for row in rows] == [v.bytes for v in values]
        assert [row["s"] for row in rows] == [str(v) for v in values]


def test_sqlalchemy_uuid_type_with_uuid7_default(pg_cluster: Cluster) -> None:
    sqlalchemy = require_module("sqlalchemy")
    metadata = sqlalchemy.MetaData()
    table = sqlalchemy.Table(
        "orm_item",
        metadata,
        sqlalchemy.Column("id", sqlalchemy.Uuid, primary_key=True, default=uuidkit.uuid7),
        sqlalchemy.Column("raw", sqlalchemy.LargeBinary),
        sqlalchemy.Column("text", sqlalchemy.String(36)),
    )
    engine = sqlalchemy.create_engine(pg_cluster.url("postgresql+psycopg"))
    values = _every_version()
    try:
        metadata.drop_all(engine)
        metadata.create_all(engine)
        with engine.begin() as connection:
            connection.execute(table.insert(), [{"id": v, "raw": v.bytes, "text": str(v)}
                                                for v in values])  # fmt: skip
            connection.execute(table.insert(), [{"raw": None, "text": "default"}] * 3)
            column_type = connection.execute(
                sqlalchemy.text(
                    "SELECT data_type FROM information_schema.columns "
                    "WHERE table_name = 'orm_item' AND column_name = 'id'"
                )
            ).scalar_one()
            rows = connection.execute(sqlalchemy.select(table).order_by(table.c.id)).all()
        assert column_type == "uuid"
        explicit = [row for row in rows if row.text != "default"]
        assert [row.id for row in explicit] == sorted(values)
        assert all(bytes(row.raw) == row.id.bytes and row.text == str(row.id) for row in explicit)
        defaults = [row.id for row in rows if row.text == "default"]
        assert all(type(v) is uuid.UUID and v.version == 7 for v in defaults)
    finally:
        metadata.drop_all(engine)
        engine.dispose()
