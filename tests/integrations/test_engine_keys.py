"""Keys for engine partitions without an engine: uuidkit.bulk.v7_node_block against the
v7-node layout's reference, KeyBlock's keys, seed and refusals, and the mapInArrow function
of the Spark adapter on plain Arrow batches (the engines themselves: test_engine_dask.py,
test_engine_spark.py)."""

from __future__ import annotations

from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit import bulk
from uuidkit.errors import InvalidField
from uuidkit.generators import ManualNodeSource, NodeBoundV7Generator
from uuidkit.integrations.engine_keys import ROWS_PER_PARTITION, KeyBlock
from uuidkit.integrations.spark_keys import keyed_batches
from uuidkit.nodelayouts import MULTICAST_BIT, v7_node_int

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numpy")

NODE = 0x0200_0000_00AA | MULTICAST_BIT
nodes = st.integers(0, (1 << 48) - 1).map(lambda n: n | MULTICAST_BIT)


@settings(max_examples=200)
@given(
    nodes,
    st.integers(0, (1 << 48) - 1),
    st.integers(0, ROWS_PER_PARTITION - 40),
    st.integers(0, 40),
)
def test_a_node_block_is_the_v7_node_layout_element_for_element(
    node: int, unix_ts_ms: int, counter: int, count: int
) -> None:
    """RFC 9562 §5.7 with §6.2 Method 1: the counter crosses rand_a into rand_b."""
    expected = [UUID(int=v7_node_int(unix_ts_ms, c, node)) for c in range(counter, counter + count)]
    for into in ("numpy", "arrow", "list"):
        made = bulk.v7_node_block(node, unix_ts_ms, count, counter=counter, into=into)
        assert bulk.to_list(made) == expected


def test_a_node_block_refuses_what_does_not_fit() -> None:
    with pytest.raises(InvalidField, match="26-bit counter"):
        bulk.v7_node_block(NODE, 0, 2, counter=ROWS_PER_PARTITION - 1)
    with pytest.raises(InvalidField, match="multicast bit"):
        bulk.v7_node_block(NODE & ~MULTICAST_BIT, 0, 1)
    with pytest.raises(InvalidField, match="unix_ts_ms"):
        bulk.v7_node_block(NODE, 1 << 48, 1)


@settings(max_examples=50)
@given(st.lists(st.integers(0, 300), min_size=1, max_size=6))
def test_a_blocks_keys_are_distinct_and_ascend_in_partition_then_row_order(
    sizes: list[int],
) -> None:
    block = KeyBlock(NODE, 1_700_000_000_000, len(sizes))
    keys = [k for p, n in enumerate(sizes) for k in bulk.to_list(block.keys(p, n, into="arrow"))]
    assert len(set(keys)) == len(keys) and keys == sorted(keys)
    stamps = bulk.timestamps(block.keys(len(sizes) - 1, 1)) // 1_000_000
    assert stamps.tolist() == [block.first_ms + len(sizes) - 1]  # readable as a v7 time


@settings(max_examples=50)
@given(st.integers(0, 2_000), st.lists(st.integers(0, 500), max_size=6))
def test_keys_in_batches_equal_the_keys_of_the_whole_partition(
    start: int, batches: list[int]
) -> None:
    block = KeyBlock(NODE, 1_700_000_000_000, 3)
    whole = bulk.to_list(block.keys(2, start + sum(batches)))
    offset, pieces = start, bulk.to_list(block.keys(2, start))
    for size in batches:
        pieces += bulk.to_list(block.keys(2, size, offset=offset))
        offset += size
    assert pieces == whole


def test_a_block_refuses_partitions_and_rows_outside_it() -> None:
    block = KeyBlock(NODE, 1_700_000_000_000, 4)
    with pytest.raises(InvalidField, match="0 to 3"):
        block.keys(4, 1)
    with pytest.raises(InvalidField, match="partition 1: rows up to"):
        block.keys(1, 2, offset=ROWS_PER_PARTITION - 1)
    with pytest.raises(InvalidField, match="partitions"):
        KeyBlock(NODE, 1_700_000_000_000, 0)
    with pytest.raises(InvalidField, match="48-bit"):
        KeyBlock(NODE, (1 << 48) - 2, 3)


def test_a_seed_makes_the_same_block_again() -> None:
    block = KeyBlock.reserve(NodeBoundV7Generator(ManualNodeSource(NODE)), 9)
    again = KeyBlock.from_seed(block.seed)
    assert again == block
    assert bulk.to_list(again.keys(8, 5)) == bulk.to_list(block.keys(8, 5))


@pytest.mark.parametrize(
    "seed",
    ["", "0200000000aa.1.2.3", "0200000000aa.x.2", "2000000000aa.1.2", "200000000aa.1.2", 7],
)
def test_a_malformed_seed_is_refused_by_name(seed: object) -> None:
    with pytest.raises(InvalidField) as caught:
        KeyBlock.from_seed(seed)  # type: ignore[arg-type]
    assert caught.value.field in ("seed", "node")


@pytest.mark.parametrize("kind", ["string", "binary"])
def test_the_spark_function_numbers_rows_across_a_tasks_batches(kind: str) -> None:
    block = KeyBlock(NODE, 1_700_000_000_000, 4)
    batches = [pa.record_batch({"x": list(range(n))}) for n in (3, 0, 5)]
    out = list(keyed_batches(block, "key", kind, lambda: 2)(iter(batches)))  # type: ignore[arg-type]
    column = pa.concat_arrays([b.column("key") for b in out])
    expected = block.keys(2, 8, into="arrow")
    if kind == "string":
        assert column.to_pylist() == bulk.format(expected).to_pylist()
    else:
        assert column.to_pylist() == [u.bytes for u in bulk.to_list(expected)]
    assert [b.num_rows for b in out] == [3, 0, 5]
