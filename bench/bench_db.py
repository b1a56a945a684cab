"""Insert locality: random (v4) against time-ordered (v7, v7 in PostgreSQL 18's layout, v6)
keys and a bigint sequence, in SQLite and PostgreSQL, with the page cache kept small.

RFC 9562 §2.1 and §6.11 say time-ordered UUIDs make better database keys than random ones:
new keys land at the right edge of the B-tree instead of on a random page. This measures it:

* **SQLite** (the standard library's sqlite3, a file in a private temporary directory): a
  BLOB primary key, once as a rowid table (the key lives in a separate index) and once
  ``WITHOUT ROWID`` (the table is the key's B-tree). The page cache is set small with
  ``PRAGMA cache_size`` (``--sqlite-cache-pages``, 4 KiB pages) so the index outgrows it;
  ``synchronous=OFF`` and ``journal_mode=MEMORY`` keep fsync out of the figures.
* **PostgreSQL** (a throwaway cluster on a private unix socket, see
  ``uuidkit.integrations.pgcluster``): a ``uuid`` (``bigint`` for the baseline) primary key,
  rows sent with binary COPY. The buffer cache is set small with ``-c shared_buffers=...``
  (``--pg-shared-buffers``; the server's minimum is 128kB = 16 pages) and checkpoints are
  frequent, as on a busy server: a ``CHECKPOINT`` every 10,000 rows
  (``--pg-checkpoint-every``; the run is too short for ``max_wal_size`` or
  ``checkpoint_timeout`` to trigger one), so the first change to a page after each
  checkpoint writes a full-page image to the WAL, as it does in production. The checkpoints'
  time is part of the rows/s. WAL bytes are ``pg_current_wal_lsn()`` after minus before.
  The server is Debian's newest, or the one in ``--pg-bin-dir`` (default
  ``$UUIDKIT_PG18_BINDIR``, the PostgreSQL 18 that ``tools/build-postgresql18.sh`` builds).
  On PostgreSQL 18 one more key kind runs, ``uuidv7()-server``: the key is the column's
  default, ``uuidv7()``, made by the server as each row arrives (so that run's time includes
  making the keys, which the others' does not, and COPY inserts row by row, as it does for
  any volatile default; only the payload is sent).

Keys are made before the clock starts, so the figures are the database's work only. For each
store and key the run reports rows per second over the whole run, the final size of the
key's index (SQLite: ``dbstat``; PostgreSQL: ``pg_relation_size`` of the primary key) and,
for PostgreSQL, the WAL written; then the ratios v7/v4 of the same run. With matplotlib
installed (``pip install -e '.[bench]'``) it writes a plot of insert rate against rows
inserted to ``docs/bench_db.png``.

Run: ``python3 bench/bench_db.py`` (full, for people: 1,000,000 rows per run) or
``--quick`` (60,000 rows, under a minute; CI runs it). ``--rows N`` overrides both.

References: RFC 9562 §2.1, §6.2 Method 3, §6.11, §6.13.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import uuidkit
from uuidkit.generators import uuid7_pg18
from uuidkit.integrations.pgcluster import ClusterUnavailable, start_cluster

DOCS = Path(__file__).resolve().parent.parent / "docs"
KEYS: dict[str, Callable[[], UUID] | None] = {
    "v4": uuidkit.uuid4,
    "v7": uuidkit.uuid7,
    "v7-pg18": uuid7_pg18,
    "v6": uuidkit.uuid6,
    "bigint": None,
}
#: The key PostgreSQL 18 makes itself (a column default): PostgreSQL runs only.
SERVER_KEY = "uuidv7()-server"
PAYLOAD = os.urandom(64)


@dataclass
class Run:
    """One store x key measurement."""

    store: str
    key: str
    rows: int
    seconds: float = 0.0
    index_bytes: int | None = None
    wal_bytes: int | None = None
    curve: list[tuple[int, float]] = field(default_factory=list)  # (rows so far, rows/s)

    @property
    def rate(self) -> float:
        return self.rows / self.seconds


def make_keys(kind: str, rows: int) -> list[Any]:
    maker = KEYS[kind]
    if maker is None:
        return list(range(1, rows + 1))
    return [maker() for _ in range(rows)]


def batches(keys: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(keys), size):
        yield keys[start : start + size]


# --- SQLite -------------------------------------------------------------------------------------


def sqlite_run(directory: Path, key: str, keys: list[Any], without_rowid: bool, cache: int) -> Run:
    store = "SQLite WITHOUT ROWID" if without_rowid else "SQLite rowid table"
    run = Run(store, key, len(keys))
    path = directory / f"{key}-{int(without_rowid)}.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f"PRAGMA cache_size = {cache}")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA journal_mode = MEMORY")
    column = "INTEGER" if key == "bigint" else "BLOB"
    suffix = " WITHOUT ROWID" if without_rowid else ""
    db.execute(f"CREATE TABLE t (id {column} PRIMARY KEY, payload BLOB){suffix}")
    values = keys if key == "bigint" else [k.bytes for k in keys]
    done, start = 0, time.perf_counter()
    for batch in batches(values, 2000):
        began = time.perf_counter()
        db.execute("BEGIN")
        db.executemany("INSERT INTO t VALUES (?, ?)", ((k, PAYLOAD) for k in batch))
        db.execute("COMMIT")
        done += len(batch)
        run.curve.append((done, len(batch) / (time.perf_counter() - began)))
    run.seconds = time.perf_counter() - start
    run.index_bytes = _sqlite_index_bytes(db, key, without_rowid)
    db.close()
    path.unlink()
    return run


def _sqlite_index_bytes(db: sqlite3.Connection, key: str, without_rowid: bool) -> int | None:
    # The key's B-tree: the table itself when it is clustered on the key (WITHOUT ROWID),
    # else the automatic index of the PRIMARY KEY; an INTEGER PRIMARY KEY is the rowid of a
    # rowid table and has no index of its own.
    if key == "bigint" and not without_rowid:
        return None
    name = "t" if without_rowid else "sqlite_autoindex_t_1"
    (size,) = db.execute("SELECT sum(pgsize) FROM dbstat WHERE name = ?", (name,)).fetchone()
    return int(size)


# --- PostgreSQL ---------------------------------------------------------------------------------


def pg_run(conn: Any, key: str, keys: list[Any], checkpoint_every: int) -> Run:
    """One key kind; ``SERVER_KEY``'s ``keys`` are placeholders (the server makes them)."""
    run = Run("PostgreSQL", key, len(keys))
    column = "bigint" if key == "bigint" else "uuid"
    by_server = key == SERVER_KEY
    default = " DEFAULT uuidv7()" if by_server else ""
    conn.execute("DROP TABLE IF EXISTS t")
    conn.execute(f"CREATE TABLE t (id {column} PRIMARY KEY{default}, payload bytea)")
    copy_into = "t (payload)" if by_server else "t (id, payload)"
    conn.execute("CHECKPOINT")
    (wal_before,) = conn.execute("SELECT pg_current_wal_lsn()").fetchone()
    done, start = 0, time.perf_counter()
    for batch in batches(keys, 2000):
        began = time.perf_counter()
        with (
            conn.transaction(),
            conn.cursor() as cursor,
            cursor.copy(f"COPY {copy_into} FROM STDIN (FORMAT BINARY)") as copy,
        ):
            copy.set_types(["bytea"] if by_server else [column, "bytea"])
            for value in batch:
                copy.write_row((PAYLOAD,) if by_server else (value, PAYLOAD))
        done += len(batch)
        if done % checkpoint_every == 0:
            conn.execute("CHECKPOINT")
        run.curve.append((done, len(batch) / (time.perf_counter() - began)))
    run.seconds = time.perf_counter() - start
    (run.wal_bytes,) = conn.execute(
        "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)::bigint", (wal_before,)
    ).fetchone()
    (run.index_bytes,) = conn.execute("SELECT pg_relation_size('t_pkey')").fetchone()
    conn.execute("DROP TABLE t")
    return run


def pg_runs(
    rows: int,
    shared_buffers: str,
    checkpoint_every: int,
    all_keys: dict[str, list[Any]],
    bin_dir: Path | None,
) -> list[Run]:
    try:
        import psycopg
    except ImportError:
        print("PostgreSQL: skipped, psycopg is not installed (pip install -e '.[test]')")
        return []
    settings = {
        "shared_buffers": shared_buffers,
        "max_wal_size": "32MB",
        "min_wal_size": "32MB",
        "checkpoint_timeout": "30s",
        "fsync": "off",
        "synchronous_commit": "off",
    }
    try:
        cluster = start_cluster(settings, bin_dir=bin_dir)
    except ClusterUnavailable as error:
        print(f"PostgreSQL: skipped, {error}")
        return []
    try:
        with psycopg.connect(cluster.dsn(), autocommit=True) as conn:
            version = _scalar(conn, "SHOW server_version")
            buffers = _scalar(conn, "SHOW shared_buffers")
            print(f"PostgreSQL {version}, shared_buffers={buffers}, {rows:,} rows per key")
            kinds = list(KEYS)
            if conn.info.server_version >= 180000:
                kinds.append(SERVER_KEY)
            placeholders = {SERVER_KEY: [None] * rows}
            return [
                pg_run(conn, key, {**all_keys, **placeholders}[key], checkpoint_every)
                for key in kinds
            ]
    finally:
        cluster.stop()


def _scalar(conn: Any, query: str) -> Any:
    row = conn.execute(query).fetchone()
    return row[0]


# --- report -------------------------------------------------------------------------------------


def report(runs: list[Run]) -> None:
    print()
    print("| store | key | rows/s | index size | WAL written |")
    print("|---|---|---:|---:|---:|")
    for run in runs:
        wal = _mib(run.wal_bytes, 1)
        print(f"| {run.store} | {run.key} | {run.rate:,.0f} | {_mib(run.index_bytes, 2)} | {wal} |")
    print()
    print("| store | v7/v4 rows/s | v7/v4 index size | v7/v4 WAL | v7-pg18/v4 rows/s |")
    print("|---|---:|---:|---:|---:|")
    by_store: dict[str, dict[str, Run]] = {}
    for run in runs:
        by_store.setdefault(run.store, {})[run.key] = run
    for store, keyed in by_store.items():
        v4, v7, pg18 = keyed["v4"], keyed["v7"], keyed["v7-pg18"]
        print(
            f"| {store} | {v7.rate / v4.rate:.2f}x | {_ratio(v7.index_bytes, v4.index_bytes)} | "
            f"{_ratio(v7.wal_bytes, v4.wal_bytes)} | {pg18.rate / v4.rate:.2f}x |"
        )


def _mib(size: int | None, digits: int) -> str:
    return "n/a" if size is None else f"{size / 2**20:,.{digits}f} MiB"


def _ratio(a: int | None, b: int | None) -> str:
    return "n/a" if a is None or not b else f"{a / b:.2f}x"


def plot(runs: list[Run], path: Path, title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot: skipped, matplotlib is not installed (pip install -e '.[bench]')")
        return
    stores = list(dict.fromkeys(run.store for run in runs))
    figure, axes = plt.subplots(1, len(stores), figsize=(5 * len(stores), 4), squeeze=False)
    for axis, store in zip(axes[0], stores, strict=True):
        for run in (r for r in runs if r.store == store):
            axis.plot(*zip(*_smooth(run.curve), strict=True), label=run.key)
        axis.set_title(store)
        axis.set_xlabel("rows inserted")
        axis.set_ylabel("rows/s (per batch of 2,000)")
        axis.set_ylim(bottom=0)
        axis.legend()
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    print(f"\nplot written to {path}")


def _smooth(curve: list[tuple[int, float]], window: int = 5) -> list[tuple[int, float]]:
    rates = [rate for _, rate in curve]
    return [
        (
            rows,
            sum(rates[max(0, i - window + 1) : i + 1]) / len(rates[max(0, i - window + 1) : i + 1]),
        )
        for i, (rows, _) in enumerate(curve)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60,000 rows: under a minute")
    parser.add_argument("--rows", type=int, help="rows per run (default 1,000,000)")
    parser.add_argument("--sqlite-cache-pages", type=int, default=64)
    parser.add_argument("--pg-shared-buffers", default="128kB")
    parser.add_argument("--pg-checkpoint-every", type=int, default=10_000, help="rows")
    parser.add_argument(
        "--pg-bin-dir",
        type=Path,
        default=os.environ.get("UUIDKIT_PG18_BINDIR") or None,
        help="the server's bin directory (default: $UUIDKIT_PG18_BINDIR, else Debian's newest)",
    )
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--plot", type=Path, default=DOCS / "bench_db.png")
    args = parser.parse_args(argv)
    rows = args.rows or (60_000 if args.quick else 1_000_000)
    all_keys = {key: make_keys(key, rows) for key in KEYS}
    runs: list[Run] = []
    print(f"SQLite {sqlite3.sqlite_version}, cache_size={args.sqlite_cache_pages} pages, "
          f"{rows:,} rows per key")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="uuidkit-bench-") as directory:
        for without_rowid, key in itertools.product((False, True), KEYS):
            runs.append(
                sqlite_run(
                    Path(directory), key, all_keys[key], without_rowid, args.sqlite_cache_pages
                )
            )
    runs += pg_runs(
        rows, args.pg_shared_buffers, args.pg_checkpoint_every, all_keys, args.pg_bin_dir
    )
    report(runs)
    if not args.no_plot:
        title = f"Insert rate, {rows:,} rows, small page cache (bench/bench_db.py)"
        plot(runs, args.plot, title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
