"""Keys in a Spark dataframe (local mode, PySpark on Java 17): a task that fails on its first
attempt is retried and the keys equal those of a run without the failure; every key distinct.

One local session (``local[2,4]``: two cores, a task may fail up to four times) serves the
module. 1,000,000 rows keep the module near a minute on two loaded cores; the 10,000,000-row
duplicate check runs in Dask (``test_engine_dask.py -m slow``) and ``bench/bench_engines.py``,
since the keys are the same function of (block, partition, row) in both engines.

Slow (``-m slow``). With ``UUIDKIT_REQUIRE_SPARK=1`` (which ``.ci/run`` exports) a missing
PySpark or Java fails instead of skipping.
"""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from uuidkit.generators import ManualNodeSource, NodeBoundV7Generator
from uuidkit.integrations.engine_keys import KeyBlock
from uuidkit.integrations.spark_keys import add_key
from uuidkit.nodelayouts import MULTICAST_BIT

pytestmark = pytest.mark.slow
REQUIRED = os.environ.get("UUIDKIT_REQUIRE_SPARK") == "1"
pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

NODE = 0x0200_0000_00BB | MULTICAST_BIT
ROWS = 1_000_000
PARTITIONS = 4


def _pyspark_sql() -> Any:
    if REQUIRED:
        if shutil.which("java") is None:
            pytest.fail("UUIDKIT_REQUIRE_SPARK=1 but no java on PATH")
        return importlib.import_module("pyspark.sql")
    if shutil.which("java") is None:
        pytest.skip("no java on PATH")
    return pytest.importorskip("pyspark.sql")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    session = (
        _pyspark_sql()
        .SparkSession.builder.master("local[2,4]")
        .appName("uuidkit-engine-keys")
        .config("spark.ui.enabled", "false")
        .config("spark.task.maxFailures", "4")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _failing_first_attempt(marks: str, partition: int) -> Any:
    """A mapInArrow step that passes batches through, except that ``partition``'s first
    attempt fails after its first batch (the keys of that batch were made, then lost)."""

    def step(batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None  # inside a task
        for batch in batches:
            yield batch
            if context.partitionId() == partition and context.attemptNumber() == 0:
                Path(marks, "failed").write_text(str(context.attemptNumber()))
                raise RuntimeError("the first attempt fails on purpose")

    return step


def _keys(frame: Any) -> Any:
    return frame.select("key").toArrow().column("key").combine_chunks()


def test_a_retried_task_makes_the_same_keys(spark: Any, tmp_path: Path) -> None:
    block = KeyBlock.reserve(NodeBoundV7Generator(ManualNodeSource(NODE)), PARTITIONS)
    frame = spark.range(0, ROWS, numPartitions=PARTITIONS)
    keyed = add_key(frame, "key", block)
    calm = _keys(keyed)

    failing = keyed.mapInArrow(_failing_first_attempt(str(tmp_path), 1), keyed.schema)
    retried = _keys(failing)

    assert (tmp_path / "failed").read_text() == "0"  # partition 1 failed once, then passed
    assert len(calm) == ROWS and calm.equals(retried)
    assert pc.count_distinct(calm).as_py() == ROWS
    # Canonical lower-case text sorts as the 128-bit values do (RFC 9562 §6.11): time order.
    assert calm.to_pylist()[:1000] == sorted(calm.to_pylist()[:1000])


def test_binary_keys_are_16_bytes_and_match_the_blocks_keys(spark: Any) -> None:
    from uuidkit import bulk

    block = KeyBlock.reserve(NodeBoundV7Generator(ManualNodeSource(NODE)), 2)
    frame = spark.range(0, 10, numPartitions=2)
    rows = add_key(frame, "key", block, kind="binary").orderBy("id").collect()
    expected = [*bulk.to_list(block.keys(0, 5)), *bulk.to_list(block.keys(1, 5))]
    assert [bytes(row["key"]) for row in rows] == [u.bytes for u in expected]


def test_a_block_smaller_than_the_frame_is_refused(spark: Any) -> None:
    from uuidkit.errors import InvalidField

    block = KeyBlock.reserve(NodeBoundV7Generator(ManualNodeSource(NODE)), 2)
    with pytest.raises(InvalidField, match="2 partitions reserved, the frame has 3"):
        add_key(spark.range(0, 10, numPartitions=3), "key", block)
