"""Rows per second per worker for a key column in Dask and Spark: uuidkit's rerun-stable keys
(``uuidkit.integrations``) against each engine's own way, and the duplicates among the keys.

Dask (``distributed.LocalCluster`` of ``--workers`` single-threaded worker processes):
``map_partitions`` with ``uuid.uuid4()`` per row (text) against ``dask_keys.add_key`` (an
``arrow.uuid`` column, and text). Spark (``local[--workers]``): Spark SQL's ``uuid()``, a
pandas UDF with ``uuid.uuid4()``, against ``spark_keys.add_key`` (text, and 16 bytes).
Each run is timed from submission to the last row (Dask: the key column's partition lengths;
Spark: a ``noop`` write, which computes every column); "no key" is the same frame without a
key column, the cost of making and moving the rows themselves. ``--check`` collects
uuidkit's keys and counts the distinct ones.

Run: ``python3 bench/bench_engines.py [--rows 10000000] [--workers 2] [--engine dask|spark]
[--check]``
"""

from __future__ import annotations

import argparse
import importlib
import time
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from uuidkit.generators import ManualNodeSource, NodeBoundV7Generator
from uuidkit.integrations import dask_keys, spark_keys
from uuidkit.integrations.engine_keys import KeyBlock

NODE = 0x0123_4567_89AB | 1 << 40
PARTITIONS = 20
#: The engines and pandas, as untyped modules (they ship no type hints, or partial ones).
pd: Any = importlib.import_module("pandas")


def _report(engine: str, rows: int, workers: int, label: str, seconds: float) -> None:
    per_worker = rows / seconds / workers
    print(f"{engine:<6} {label:<34} {seconds:8.2f} s {per_worker:14,.0f} rows/s/worker")


def _block() -> KeyBlock:
    return KeyBlock.reserve(NodeBoundV7Generator(ManualNodeSource(NODE)), PARTITIONS)


def _partition(number: int, rows: int) -> Any:
    start = number * rows
    return pd.DataFrame({"x": np.arange(start, start + rows, dtype=np.int64)})


def _uuid4_text(frame: Any) -> Any:
    return frame.assign(key=[str(uuid.uuid4()) for _ in range(len(frame))])


def bench_dask(rows: int, workers: int, check: bool) -> None:
    dd = importlib.import_module("dask.dataframe")
    distributed = importlib.import_module("distributed")

    cluster = distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as client:
        frame = dd.from_map(_partition, range(PARTITIONS), rows=rows // PARTITIONS)
        variants: dict[str, Callable[[], Any]] = {
            "no key": lambda: frame["x"],
            "map_partitions uuid.uuid4() (text)": lambda: frame.map_partitions(_uuid4_text)["key"],
            "uuidkit add_key (arrow.uuid)": lambda: dask_keys.add_key(frame, "key", _block())[
                "key"
            ],
            "uuidkit add_key (text)": lambda: dask_keys.add_key(
                frame, "key", _block(), kind="string"
            )["key"],
        }
        for label, column in variants.items():
            started = time.perf_counter()
            total = int(column().map_partitions(len).compute().sum())
            _report("dask", total, workers, label, time.perf_counter() - started)
        if check:
            keys = client.compute(dask_keys.add_key(frame, "key", _block())["key"]).result()
            storage = pa.array(keys).storage
            distinct = pc.count_distinct(storage).as_py()
            duplicates = len(storage) - distinct
            print(f"dask   uuidkit keys: {len(storage):,} rows, {duplicates} duplicates")


def bench_spark(rows: int, workers: int, check: bool) -> None:
    sql = importlib.import_module("pyspark.sql")
    functions = importlib.import_module("pyspark.sql.functions")
    spark = (
        sql.SparkSession.builder.master(f"local[{workers}]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "4g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    def uuid4_text(ids: Any) -> Any:  # nested: shipped to Spark's workers by value
        return pd.Series([str(uuid.uuid4()) for _ in range(len(ids))])

    uuid4_udf = functions.pandas_udf(uuid4_text, "string")

    frame = spark.range(0, rows, numPartitions=PARTITIONS)
    variants: dict[str, Callable[[], Any]] = {
        "no key": lambda: frame,
        "Spark SQL uuid()": lambda: frame.withColumn("key", functions.expr("uuid()")),
        "pandas UDF uuid.uuid4() (text)": lambda: frame.withColumn("key", uuid4_udf("id")),
        "uuidkit add_key (text)": lambda: spark_keys.add_key(frame, "key", _block()),
        "uuidkit add_key (16 bytes)": lambda: spark_keys.add_key(
            frame, "key", _block(), kind="binary"
        ),
    }
    for label, make in variants.items():
        started = time.perf_counter()
        make().write.format("noop").mode("overwrite").save()
        _report("spark", rows, workers, label, time.perf_counter() - started)
    if check:
        keys = spark_keys.add_key(frame, "key", _block()).select("key").toArrow().column("key")
        distinct = pc.count_distinct(keys).as_py()
        print(f"spark  uuidkit keys: {len(keys):,} rows, {len(keys) - distinct} duplicates")
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--engine", choices=("dask", "spark", "both"), default="both")
    parser.add_argument("--check", action="store_true", help="count duplicate uuidkit keys")
    args = parser.parse_args()
    if args.engine in ("dask", "both"):
        bench_dask(args.rows, args.workers, args.check)
    if args.engine in ("spark", "both"):
        bench_spark(args.rows, args.workers, args.check)


if __name__ == "__main__":
    main()
