"""StaticNodeSource and the split of the node space: static nodes never meet leased ones,
two deployments' ordinals differ, from_environment reads exactly its variables and refuses
missing or ambiguous ones, one node per process (a fork revokes the child's)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uuidkit.bridge import StaticNodeSource, node_bound_generator
from uuidkit.bridge.nodespace import (
    ORDINAL_BITS,
    STATIC_BIT,
    deployment_prefix,
    is_static_node,
    leased_node,
    static_node,
)
from uuidkit.errors import GeneratorError, InvalidField, NodeUnavailableError
from uuidkit.nodelayouts import MULTICAST_BIT, read_node_layout

DEPLOYMENT = "shop/orders"


@given(st.binary(min_size=6, max_size=6))
def test_leased_nodes_are_never_static(draw: bytes) -> None:
    node = leased_node(lambda n: draw)
    assert node & MULTICAST_BIT and not is_static_node(node)


@given(st.integers(0, (1 << ORDINAL_BITS) - 1), st.text(min_size=1).filter(str.strip))
def test_static_nodes_are_static_multicast_and_keep_prefix_and_ordinal(
    ordinal: int, deployment: str
) -> None:
    node = static_node(ordinal, deployment)
    assert node & STATIC_BIT and node & MULTICAST_BIT and node >> 48 == 0
    # The 46 free bits, read back around the multicast bit, are prefix then ordinal.
    free = ((node >> 41) & 0x3F) << 40 | (node & ((1 << 40) - 1))
    assert free == deployment_prefix(deployment) << ORDINAL_BITS | ordinal


def test_two_deployments_ordinals_differ() -> None:
    assert static_node(0, "shop/orders") != static_node(0, "shop/payments")
    assert len({static_node(i, DEPLOYMENT) for i in range(1000)}) == 1000


@pytest.mark.parametrize("ordinal", [-1, 1 << ORDINAL_BITS, 1.0, True])
def test_ordinals_out_of_range_are_refused(ordinal: object) -> None:
    with pytest.raises(InvalidField):
        static_node(ordinal, DEPLOYMENT)  # type: ignore[arg-type]


def test_a_static_source_feeds_a_generator_its_node() -> None:
    node = static_node(5, DEPLOYMENT)
    with StaticNodeSource(node) as source:
        make = node_bound_generator(7, source)
        assert {read_node_layout(v, "v7-node").node for v in make.generate(100)} == {node}
    with pytest.raises(NodeUnavailableError):
        make()


def test_a_node_outside_the_static_half_is_refused() -> None:
    with pytest.raises(InvalidField, match="static half"):
        StaticNodeSource(leased_node(os.urandom))


def test_one_node_one_source_per_process() -> None:
    node = static_node(6, DEPLOYMENT)
    with StaticNodeSource(node), pytest.raises(GeneratorError):
        StaticNodeSource(node)
    StaticNodeSource(node).close()  # free again after close


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"UUIDKIT_NODE_ORDINAL": "7", "UUIDKIT_NODE_DEPLOYMENT": DEPLOYMENT}, 7),
        ({"JOB_COMPLETION_INDEX": "12", "UUIDKIT_NODE_DEPLOYMENT": DEPLOYMENT}, 12),
        (
            {
                "UUIDKIT_NODE_ORDINAL": "hostname",
                "HOSTNAME": "orders-31",
                "UUIDKIT_NODE_DEPLOYMENT": DEPLOYMENT,
            },
            31,
        ),
    ],
)
def test_from_environment_reads_ordinals(env: dict[str, str], expected: int) -> None:
    with StaticNodeSource.from_environment(env) as source:
        assert source.current().node == static_node(expected, DEPLOYMENT)


def test_from_environment_reads_a_whole_node() -> None:
    node = static_node(9, DEPLOYMENT)
    with StaticNodeSource.from_environment({"UUIDKIT_NODE": f"{node:012x}"}) as source:
        assert source.current().node == node


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({}, "environment"),
        ({"UUIDKIT_NODE_ORDINAL": "1", "JOB_COMPLETION_INDEX": "1"}, "environment"),
        ({"UUIDKIT_NODE": "b313dee20000", "UUIDKIT_NODE_ORDINAL": "1"}, "environment"),
        ({"UUIDKIT_NODE_ORDINAL": "1"}, "UUIDKIT_NODE_DEPLOYMENT"),
        ({"UUIDKIT_NODE_ORDINAL": "01", "UUIDKIT_NODE_DEPLOYMENT": "d"}, "UUIDKIT_NODE_ORDINAL"),
        ({"JOB_COMPLETION_INDEX": "x", "UUIDKIT_NODE_DEPLOYMENT": "d"}, "JOB_COMPLETION_INDEX"),
        (
            {"UUIDKIT_NODE_ORDINAL": "hostname", "HOSTNAME": "web", "UUIDKIT_NODE_DEPLOYMENT": "d"},
            "UUIDKIT_NODE_ORDINAL",
        ),
        ({"UUIDKIT_NODE": "xyz"}, "UUIDKIT_NODE"),
        ({"UUIDKIT_NODE": "010000000000"}, "node"),  # leased half
    ],
)
def test_from_environment_refuses_missing_ambiguous_or_malformed(
    env: dict[str, str], field: str
) -> None:
    with pytest.raises(InvalidField) as raised:
        StaticNodeSource.from_environment(env)
    assert raised.value.field == field


def test_a_forked_child_does_not_use_the_parents_static_node() -> None:
    with StaticNodeSource(static_node(8, DEPLOYMENT)) as source:
        make = node_bound_generator(7, source)
        make()
        pid = os.fork()
        if pid == 0:  # the child: exit 0 only if it refuses the node
            try:
                make()
            except NodeUnavailableError:
                os._exit(0)
            os._exit(1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        make()  # the parent keeps it
