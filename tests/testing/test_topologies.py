"""Built-in topologies: shapes, connectivity, and the checks on their parameters."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.errors import SimulationError
from uuidkit.testing import topologies
from uuidkit.testing.topologies import BRIDGE, Topology


def degrees(topology: Topology) -> list[int]:
    return [len(links) for links in topology.interfaces()]


def connected(topology: Topology) -> bool:
    return None not in topology.hops_from(0)


def test_line_ring_star_shapes() -> None:
    assert topologies.line(4).links == {"l0": (0, 1), "l1": (1, 2), "l2": (2, 3)}
    assert topologies.line(40).hops_from(0)[39] == 39
    assert degrees(topologies.ring(5)) == [2] * 5
    assert topologies.ring(6).hops_from(0)[3] == 3
    assert degrees(topologies.star(5)) == [4, 1, 1, 1, 1]


def test_grid_rows_and_columns() -> None:
    grid = topologies.grid(9)
    assert len(grid.links) == 12  # 3 rows x 2 + 3 columns x 2
    assert grid.hops_from(0)[8] == 4
    assert degrees(topologies.grid(6, columns=3)) == [2, 3, 2, 2, 3, 2]


def test_segment_tree_is_shared_segments_in_a_tree() -> None:
    tree = topologies.segment_tree(10, segment_size=4)
    assert tree.links == {"s0": (0, 1, 2, 3), "s1": (0, 4, 5, 6), "s2": (1, 7, 8, 9)}
    assert tree.hops_from(9) == [2, 1, 2, 2, 3, 3, 3, 1, 1, 0]


def test_two_sites_are_apart_until_the_bridge_is_up() -> None:
    sites = topologies.two_sites(topologies.line(3), topologies.ring(3), bridge=(2, 1))
    assert sites.devices == 6 and sites.down == {BRIDGE}
    assert sites.links[BRIDGE] == (2, 4)
    assert sites.hops_from(0)[3:] == [None, None, None]
    assert sites.hops_from(0, include_down=True)[3:] == [4, 3, 4]
    assert sites.sites == (frozenset({0, 1, 2}), frozenset({3, 4, 5}))


@settings(max_examples=40, deadline=None)
@given(devices=st.integers(1, 60), degree=st.floats(1.0, 6.0), seed=st.integers(0, 2**32))
def test_random_graphs_are_connected_with_the_average_degree(
    devices: int, degree: float, seed: int
) -> None:
    graph = topologies.random_graph(devices, degree, random.Random(seed))
    assert connected(graph)
    wanted = min(round(devices * degree / 2), devices * (devices - 1) // 2)
    assert len(graph.links) == max(wanted, devices - 1)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: topologies.ring(2), "ring: expected at least 3 devices, found 2"),
        (lambda: topologies.star(1), "star: expected at least 2 devices"),
        (lambda: topologies.random_graph(5, 0.5, random.Random(0)), "degree >= 1"),
        (lambda: topologies.segment_tree(5, segment_size=1), "segment_size >= 2"),
        (lambda: Topology("x", 2, {"a": (0, 0)}), "2 or more distinct devices"),
        (lambda: Topology("x", 2, {"a": (0, 2)}), "device 2 is not in 0..1"),
        (lambda: Topology("x", 0, {}), "at least 1 device"),
    ],
)
def test_bad_parameters_are_refused(build: object, message: str) -> None:
    with pytest.raises(SimulationError, match=message):
        build()  # type: ignore[operator]
