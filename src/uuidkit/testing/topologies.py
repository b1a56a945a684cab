"""Built-in site topologies for the simulator: which devices share which links.

A topology is data only: a number of devices (numbered ``0 .. devices - 1``) and a list of
named links, each listing the devices attached to it. A link with two members is a
point-to-point link; a link with more is a shared segment (several devices on one switch),
where one multicast reaches every other member. A device has one interface per link it is
on, and the simulator uses the link's name as that interface's key.

References: UIAP §2.3 (link-local multicast), §3 (flooding out every participating
interface), §2.1.2 (sites that merge).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from uuidkit.errors import SimulationError

if TYPE_CHECKING:
    import random

__all__ = [
    "BRIDGE",
    "Topology",
    "grid",
    "line",
    "random_graph",
    "ring",
    "segment_tree",
    "star",
    "two_sites",
]

#: Name of the link that joins the two sites of :func:`two_sites`.
BRIDGE = "bridge"


@dataclass(frozen=True, slots=True)
class Topology:
    """Devices ``0 .. devices - 1`` and the links between them.

    ``links`` maps each link name to the devices attached to it (two for point-to-point,
    more for a shared segment); ``down`` names links that start disconnected (a partition
    that a scenario merges later); ``sites`` lists device sets that form separate sites.

    References: UIAP §2.3, §2.1.2.
    """

    name: str
    devices: int
    links: dict[str, tuple[int, ...]]
    down: frozenset[str] = frozenset()
    sites: tuple[frozenset[int], ...] = field(default=())

    def __post_init__(self) -> None:
        if self.devices < 1:
            raise SimulationError(
                f"topology {self.name}: expected at least 1 device, found {self.devices}", "devices"
            )
        for link, members in self.links.items():
            if len(members) < 2 or len(set(members)) != len(members):
                raise SimulationError(
                    f"link {link!r}: expected 2 or more distinct devices, found {members}", link
                )
            for device in members:
                if not 0 <= device < self.devices:
                    raise SimulationError(
                        f"link {link!r}: device {device} is not in 0..{self.devices - 1}", link
                    )

    def interfaces(self) -> list[list[str]]:
        """For each device, the names of the links it is attached to (its interfaces).

        References: UIAP §3 (participating interfaces).
        """
        result: list[list[str]] = [[] for _ in range(self.devices)]
        for link, members in self.links.items():
            for device in members:
                result[device].append(link)
        return result

    def hops_from(self, source: int, *, include_down: bool = False) -> list[int | None]:
        """Hop count from ``source`` to every device (``None``: unreachable); one link, one hop.

        References: UIAP §4.1 (Hop Limit).
        """
        return _bfs(self, source, include_down)


def _bfs(topology: Topology, source: int, include_down: bool) -> list[int | None]:
    by_device = topology.interfaces()
    distance: list[int | None] = [None] * topology.devices
    distance[source] = 0
    queue = deque([source])
    while queue:
        device = queue.popleft()
        next_hop = (distance[device] or 0) + 1
        for link in by_device[device]:
            if link in topology.down and not include_down:
                continue
            for neighbour in topology.links[link]:
                if distance[neighbour] is None:
                    distance[neighbour] = next_hop
                    queue.append(neighbour)
    return distance


def _require(name: str, devices: int, minimum: int) -> None:
    if devices < minimum:
        raise SimulationError(
            f"{name}: expected at least {minimum} devices, found {devices}", "devices"
        )


def _point_to_point(pairs: Iterable[tuple[int, int]]) -> dict[str, tuple[int, ...]]:
    return {f"l{index}": pair for index, pair in enumerate(pairs)}


def line(devices: int) -> Topology:
    """``0 - 1 - 2 - ... - (n-1)`` over point-to-point links; ``n - 1`` hops end to end.

    References: UIAP §4.1 (Hop Limit), §2.4.3.
    """
    _require("line", devices, 1)
    return Topology("line", devices, _point_to_point((i, i + 1) for i in range(devices - 1)))


def ring(devices: int) -> Topology:
    """A line whose ends are joined: every flood reaches each device by two paths (a loop).

    References: UIAP §4.5.1 (message IDs prevent loops).
    """
    _require("ring", devices, 3)
    pairs = [(i, (i + 1) % devices) for i in range(devices)]
    return Topology("ring", devices, _point_to_point(pairs))


def star(devices: int) -> Topology:
    """Device 0 is the hub, with a point-to-point link to each other device.

    References: UIAP §3 (forwarding out every other participating interface).
    """
    _require("star", devices, 2)
    return Topology("star", devices, _point_to_point((0, i) for i in range(1, devices)))


def grid(devices: int, columns: int | None = None) -> Topology:
    """Devices in rows of ``columns`` (default: about the square root), linked to the right and
    below; a dense mesh with many equal-length paths.

    References: UIAP §4.2.2.1 (duplicates on a second interface are discarded).
    """
    _require("grid", devices, 1)
    width = columns or max(1, math.isqrt(devices - 1) + 1)
    pairs = []
    for device in range(devices):
        if (device + 1) % width and device + 1 < devices:
            pairs.append((device, device + 1))
        if device + width < devices:
            pairs.append((device, device + width))
    return Topology("grid", devices, _point_to_point(pairs))


def random_graph(devices: int, degree: float, rng: random.Random) -> Topology:
    """A random connected graph of point-to-point links with average degree ``degree``.

    Connected by construction: device ``i`` first links to a random earlier device (a random
    spanning tree), then random extra links are added until ``devices * degree / 2`` links
    exist (or the graph is complete).

    References: UIAP §3 (flooding to all connected devices).
    """
    _require("random", devices, 1)
    if degree < 1 and devices > 1:
        raise SimulationError(f"random: expected degree >= 1, found {degree}", "degree")
    edges: set[tuple[int, int]] = set()
    for device in range(1, devices):
        edges.add((rng.randrange(device), device))
    wanted = min(round(devices * degree / 2), devices * (devices - 1) // 2)
    while len(edges) < wanted:
        a, b = rng.randrange(devices), rng.randrange(devices)
        if a != b:
            edges.add((min(a, b), max(a, b)))
    return Topology("random", devices, _point_to_point(sorted(edges)))


def segment_tree(devices: int, segment_size: int = 4) -> Topology:
    """A tree of shared segments: segment ``s0`` holds the first ``segment_size`` devices;
    each device, in order, roots a child segment with ``segment_size - 1`` new devices.

    Every device but the leaves has two interfaces; one multicast reaches a whole segment.

    References: UIAP §2.3 (link-local multicast to all listening nodes).
    """
    _require("segment_tree", devices, 2)
    if segment_size < 2:
        raise SimulationError(
            f"segment_tree: expected segment_size >= 2, found {segment_size}", "segment_size"
        )
    links: dict[str, tuple[int, ...]] = {}
    next_device = min(segment_size, devices)
    links["s0"] = tuple(range(next_device))
    parents = deque(range(next_device))
    while next_device < devices:
        parent = parents.popleft()
        end = min(next_device + segment_size - 1, devices)
        links[f"s{len(links)}"] = (parent, *range(next_device, end))
        parents.extend(range(next_device, end))
        next_device = end
    return Topology("segment_tree", devices, links)


def two_sites(site_a: Topology, site_b: Topology, bridge: tuple[int, int] = (0, 0)) -> Topology:
    """Two separate sites joined by a point-to-point link :data:`BRIDGE` that starts down.

    Devices of ``site_b`` are renumbered after those of ``site_a``; links are prefixed
    ``a.`` and ``b.``. ``bridge`` names the device in each site (in its own numbering) that
    the bridge joins. A scenario merges the sites by bringing :data:`BRIDGE` up.

    References: UIAP §2.1.2 ("If two UIAP sites merge ... UIAP has no mechanism to detect
    this").
    """
    offset = site_a.devices
    links = {f"a.{name}": members for name, members in site_a.links.items()}
    for name, members in site_b.links.items():
        links[f"b.{name}"] = tuple(device + offset for device in members)
    links[BRIDGE] = (bridge[0], bridge[1] + offset)
    sites = (frozenset(range(offset)), frozenset(range(offset, offset + site_b.devices)))
    return Topology(
        f"two_sites({site_a.name},{site_b.name})",
        offset + site_b.devices,
        links,
        down=frozenset({BRIDGE}),
        sites=sites,
    )
