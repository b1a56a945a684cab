"""A time-ordered key column for every partition of a Spark dataframe, the same on a retry.

:func:`add_key` runs ``mapInArrow`` over the frame: each task numbers the rows of its
partition in the order the Arrow batches arrive and appends
``KeyBlock.keys(partition_id, rows, offset=...)``, so a retried task (a lost executor, a
failed attempt) makes the same keys (see :mod:`uuidkit.integrations.engine_keys` for why they
are unique and what is not promised).
Spark has no UUID type: the column is canonical text (``kind="string"``, like Spark SQL's
``uuid()``) or 16 bytes (``"binary"``). Needs ``pyspark`` with pyarrow, imported when called.

References: RFC 9562 §5.7, §6.2 (Method 1), §6.3, §6.4.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal

from uuidkit.errors import InvalidField
from uuidkit.integrations.engine_keys import KeyBlock

__all__ = ["add_key"]

KeyKind = Literal["string", "binary"]


def keyed_batches(
    block: KeyBlock, column: str, kind: KeyKind, partition: Callable[[], int]
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function: each batch of the task's partition with its keys.

    ``partition`` gives the task's partition index (Spark's ``TaskContext.partitionId()``
    in :func:`add_key`), read once per task; rows are numbered across the task's batches.

    References: RFC 9562 §6.2 (Method 1), §6.3.
    """

    def keyed(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from uuidkit import bulk

        index, offset = partition(), 0
        for batch in batches:
            keys = block.keys(index, batch.num_rows, offset=offset, into="arrow")
            offset += batch.num_rows
            values = bulk.format(keys) if kind == "string" else keys.storage.cast(pa.binary())
            yield batch.append_column(column, values)

    return keyed


def _partition_id() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:  # not inside a Spark task
        raise InvalidField("partition: no Spark TaskContext (called outside a task)")
    return int(context.partitionId())


def add_key(frame: Any, column: str, block: KeyBlock, *, kind: KeyKind = "string") -> Any:
    """``frame`` (a ``pyspark.sql.DataFrame``) with a non-null key column ``column``.

    The block must have at least as many partitions as ``frame``
    (``KeyBlock.reserve(generator, frame.rdd.getNumPartitions())``).

    References: RFC 9562 §5.7, §6.2 (Method 1), §6.3, §6.4.
    """
    from pyspark.sql.types import BinaryType, StringType, StructField, StructType

    if kind not in ("string", "binary"):
        raise InvalidField(f"kind: expected 'string' or 'binary', found {kind!r}", "kind")
    partitions = frame.rdd.getNumPartitions()
    if partitions > block.partitions:
        raise InvalidField(
            f"block: {block.partitions} partitions reserved, the frame has {partitions}", "block"
        )
    key_type = StringType() if kind == "string" else BinaryType()
    schema = StructType([*frame.schema.fields, StructField(column, key_type, nullable=False)])
    return frame.mapInArrow(keyed_batches(block, column, kind, _partition_id), schema)
