"""A time-ordered key column for every partition of a Dask dataframe, the same on a rerun.

:func:`add_key` maps each partition to itself plus a key column whose values are
``KeyBlock.keys(partition_index, len(partition))`` (:mod:`uuidkit.integrations.engine_keys`):
a worker that dies mid-task and the task run again elsewhere give the same keys (see
:mod:`uuidkit.integrations.engine_keys` for why they are unique and what is not promised).
Needs ``dask[dataframe]`` and pandas with pyarrow (``pip install 'uuidkit-rfc9562[engines]'``),
imported when called.

References: RFC 9562 §5.7, §6.2 (Method 1), §6.3, §6.4.
"""

from __future__ import annotations

import importlib
from typing import Any, Literal

from uuidkit.errors import InvalidField
from uuidkit.integrations.engine_keys import KeyBlock

__all__ = ["add_key"]

KeyKind = Literal["uuid", "string"]


def _key_series(block: KeyBlock, partition: int, frame: Any, kind: KeyKind) -> Any:
    from uuidkit import bulk

    pd = importlib.import_module("pandas")  # pandas ships no type hints: an Any module

    keys = block.keys(partition, len(frame), into="arrow")
    values = bulk.format(keys) if kind == "string" else keys
    return pd.Series(pd.arrays.ArrowExtensionArray(values), index=frame.index)


def _with_keys(
    frame: Any, column: str, block: KeyBlock, kind: KeyKind, partition_info: Any = None
) -> Any:
    # Dask passes partition_info={"number": i, ...} to a function that names it; the meta
    # call (no partition) gets None and an empty frame.
    number = 0 if partition_info is None else partition_info["number"]
    return frame.assign(**{column: _key_series(block, number, frame, kind)})


def add_key(frame: Any, column: str, block: KeyBlock, *, kind: KeyKind = "uuid") -> Any:
    """``frame`` (a ``dask.dataframe.DataFrame``) with a key column ``column`` added lazily.

    ``kind="uuid"``: an Arrow ``arrow.uuid`` column (16 bytes a key, pandas
    ``ArrowDtype``); ``"string"``: canonical lower-case text. The block must have at least
    as many partitions as ``frame`` (``KeyBlock.reserve(generator, frame.npartitions)``).

    References: RFC 9562 §5.7, §6.2 (Method 1), §6.3, §6.4.
    """
    if kind not in ("uuid", "string"):
        raise InvalidField(f"kind: expected 'uuid' or 'string', found {kind!r}", "kind")
    if frame.npartitions > block.partitions:
        raise InvalidField(
            f"block: {block.partitions} partitions reserved, the frame has {frame.npartitions}",
            "block",
        )
    meta = _with_keys(frame._meta, column, block, kind)
    return frame.map_partitions(_with_keys, column, block, kind, meta=meta)
