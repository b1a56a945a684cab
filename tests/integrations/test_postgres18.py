"""uuidkit's PostgreSQL 18 profile against the server's own ``uuidv7()``, on a real server.

The server is a throwaway PostgreSQL 18 cluster (``UUIDKIT_PG18_BINDIR``, which
``tools/build-postgresql18.sh`` builds; see ``pg_support``). Values made by
:func:`uuidkit.generators.uuid7_pg18` in Python and by the server in the same milliseconds go
into one primary-key index and come back in the order they were made; uuidkit reads the
times of the server's values as the server does (``uuid_extract_timestamp``) and, through the
12-bit fraction, to within one step of the server's own clock.

References: RFC 9562 §5.7, §6.2 (Method 3), §6.11, §6.13; PostgreSQL 18 ``uuidv7()``.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pg_support import require_module, throwaway_pg18_cluster

import uuidkit
from uuidkit import bulk
from uuidkit.generators import pg18_time_ns, uuid7_pg18
from uuidkit.generators.pg18 import PG18_MINIMAL_STEP_NS
from uuidkit.integrations.pgcluster import Cluster

#: Same-millisecond neighbours (one value from each side) the interleaving test waits for.
SHARED_MILLISECONDS = 100
#: ... for at most this many values: each is a round trip of tens of microseconds, so a
#: millisecond holds several even on a loaded machine.
MAX_STEPS = 50_000
NS_PER_US = 1_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def pg18_cluster() -> Iterator[Cluster]:
    yield from throwaway_pg18_cluster()


@pytest.fixture
def conn(pg18_cluster: Cluster) -> Iterator[Any]:
    psycopg = require_module("psycopg")
    with psycopg.connect(pg18_cluster.dsn(), autocommit=True) as connection:
        yield connection


def _ns(when: datetime) -> int:
    """A timestamptz from the server (microseconds) as Unix nanoseconds, exactly."""
    return (when - EPOCH) // timedelta(microseconds=1) * NS_PER_US


def test_the_server_is_postgresql_18(conn: Any) -> None:
    assert conn.info.server_version // 10000 == 18
    value = conn.execute("SELECT uuidv7()").fetchone()[0]
    assert type(value) is uuid.UUID and value.version == 7


def test_application_and_server_values_interleave_in_one_index(conn: Any) -> None:
    conn.execute("CREATE TABLE interleaved (id uuid PRIMARY KEY, step int, by_server bool)")
    insert_ours = "INSERT INTO interleaved VALUES (%s, %s, false)"
    insert_theirs = "INSERT INTO interleaved VALUES (uuidv7(), %s, true) RETURNING id"
    made: list[uuid.UUID] = []
    shared = 0
    while shared < SHARED_MILLISECONDS and len(made) < MAX_STEPS:
        step = len(made)
        if step % 2:
            made.append(conn.execute(insert_theirs, (step,)).fetchone()[0])
        else:
            made.append(uuid7_pg18())
            conn.execute(insert_ours, (made[-1], step))
        shared += step > 0 and made[-1].int >> 80 == made[-2].int >> 80
    assert shared >= SHARED_MILLISECONDS, f"{len(made)} values, {shared} shared milliseconds"
    # Made one after another on one host, from one clock (CLOCK_REALTIME): each value's time
    # is read after the previous value's and a round trip (far more than the 245 ns step of
    # RFC 9562 §6.2 Method 3 with 12 bits) before the next one's. With the same layout, the
    # index gives them back as made, within the shared milliseconds too.
    conn.execute("SET enable_seqscan = off")
    plan = " ".join(row[0] for row in conn.execute("EXPLAIN SELECT step FROM interleaved "
                                                   "ORDER BY id").fetchall())  # fmt: skip
    assert "Index" in plan and "interleaved_pkey" in plan
    steps = [row[0] for row in conn.execute("SELECT step FROM interleaved ORDER BY id")]
    assert steps == list(range(len(made)))
    assert sorted(made) == made


def test_uuidkit_reads_the_servers_times(conn: Any) -> None:
    before = conn.execute("SELECT clock_timestamp()").fetchone()[0]
    rows = conn.execute(
        "SELECT u, uuid_extract_timestamp(u), uuid_extract_version(u)"
        " FROM (SELECT uuidv7() AS u FROM generate_series(1, 2000)) AS made"
    ).fetchall()
    after = conn.execute("SELECT clock_timestamp()").fetchone()[0]
    values = [row[0] for row in rows]
    assert all(row[2] == 7 for row in rows)
    # The millisecond, one value at a time and in bulk, as the server reads it (RFC 9562 §5.7).
    server_ms = [_ns(row[1]) for row in rows]
    assert [uuidkit.timestamp_ns(value) for value in values] == server_ms
    assert bulk.timestamps(bulk.from_list(values)).tolist() == server_ms
    # The 12-bit fraction: the server's clock read between the two clock_timestamp() calls
    # (truncated to microseconds: up to 999 ns before the reading), each stamp at most one
    # 245 ns step ahead of its reading, and pg18_time_ns up to one step below the stamp.
    times = [pg18_time_ns(value) for value in values]
    assert _ns(before) - PG18_MINIMAL_STEP_NS < times[0]
    assert times[-1] < _ns(after) + NS_PER_US + PG18_MINIMAL_STEP_NS
    # One statement, one backend: stamps a step apart at least, so the times increase.
    assert all(a < b for a, b in itertools.pairwise(times))
    assert values == sorted(values)


def test_the_server_reads_uuidkits_times(conn: Any) -> None:
    values = [uuid7_pg18() for _ in range(500)]
    rows = conn.execute(
        "SELECT uuid_extract_timestamp(u), uuid_extract_version(u) FROM unnest(%s::uuid[]) AS u",
        (values,),
    ).fetchall()
    assert [_ns(row[0]) for row in rows] == [uuidkit.timestamp_ns(value) for value in values]
    assert all(row[1] == 7 for row in rows)
