"""Links of the simulated site: who hears a datagram, when, and which copies are lost.

Every impairment (delay jitter, loss, duplication, reordering) is drawn from the one
``random.Random`` the simulator was seeded with, in a fixed order, so a seed replays a run
exactly (architecture.md: seeded network). Loss is a datagram not delivered
(architecture.md: time driven by hand).

Each receiving device's copy has its own fate: on a shared segment one member may miss a
multicast that the others hear, as on a real switch with a lossy port.

References: UIAP §2.3 (link-local multicast), §4.3 (Claim-Deny is unicast to one
link-local address), §2.1.2 (partitions and merges).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from uuidkit.errors import SimulationError

if TYPE_CHECKING:
    import random

    from uuidkit.testing.topologies import Topology

__all__ = ["DROP_LINK_DOWN", "DROP_LOSS", "DROP_NOT_ON_LINK", "Link", "LinkConfig", "Network"]

#: Network drop reasons, reported next to the engines' own drop reasons.
DROP_LOSS = "network: lost on link"
DROP_LINK_DOWN = "network: link down (partition)"
DROP_NOT_ON_LINK = "network: unicast to an address not on the link"


@dataclass(frozen=True, slots=True)
class LinkConfig:
    """How one link treats each copy of a datagram.

    - ``delay``: seconds from send to arrival (the base one-way latency).
    - ``jitter``: seconds; a uniform extra delay in ``[0, jitter)`` per copy, which also
      reorders datagrams sent close together.
    - ``loss``: probability in ``[0, 1]`` that a copy is not delivered.
    - ``duplicate``: probability that a delivered copy arrives twice.
    - ``reorder``: probability that a copy is held back ``reorder_delay`` seconds, so it
      arrives after datagrams sent later.

    References: UIAP §2.3, §3 (floods must survive loss: 3 Claim-Attempts per claim).
    """

    delay: float = 0.001
    jitter: float = 0.0
    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    reorder_delay: float = 0.01

    def __post_init__(self) -> None:
        for name in ("delay", "jitter", "reorder_delay"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise SimulationError(f"link {name}: expected seconds >= 0, found {value}", name)
        for name in ("loss", "duplicate", "reorder"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise SimulationError(
                    f"link {name}: expected a probability in [0, 1], found {value}", name
                )


class Link:
    """One link: its members (device numbers), impairments, and whether it is up.

    References: UIAP §2.3 (link-local multicast), §2.1.2.
    """

    __slots__ = ("config", "members", "name", "up")

    def __init__(self, name: str, members: tuple[int, ...], config: LinkConfig, up: bool) -> None:
        self.name = name
        self.members = members
        self.config = config
        self.up = up


class Network:
    """The links of a :class:`~uuidkit.testing.topologies.Topology`, with impairments.

    :meth:`fan_out` decides the fate of every copy of one transmission; the simulator
    schedules the survivors. ``drops`` counts the copies the network did not deliver, by
    reason.

    References: UIAP §2.3, §4.2.2.1 (flooding), §4.3.2 (unicast Claim-Deny).
    """

    __slots__ = ("_random", "drops", "interfaces", "links")

    def __init__(self, topology: Topology, config: LinkConfig, rng: random.Random) -> None:
        self._random = rng
        self.links = {
            name: Link(name, members, config, name not in topology.down)
            for name, members in topology.links.items()
        }
        self.interfaces = topology.interfaces()
        self.drops: Counter[str] = Counter()

    def link(self, name: str) -> Link:
        """The link called ``name``; raises :class:`SimulationError` for an unknown name.

        References: UIAP §2.3.
        """
        try:
            return self.links[name]
        except KeyError:
            raise SimulationError(f"no link named {name!r}", "link") from None

    def set_up(self, name: str, up: bool) -> None:
        """Connect (merge) or disconnect (partition) a link; copies in flight on a link that
        goes down are lost when they would arrive.

        References: UIAP §2.1.2 (sites that merge or split).
        """
        self.link(name).up = up

    def configure(self, name: str, config: LinkConfig) -> None:
        """Change one link's impairments from now on.

        References: UIAP §2.3.
        """
        self.link(name).config = config

    def fan_out(
        self, link: Link, sender: int, destination: int | None, out: list[tuple[int, float]]
    ) -> None:
        """Append ``(receiver, delay)`` for every copy of one datagram that will arrive.

        ``destination`` ``None`` is a multicast to every other member of the link;
        otherwise a unicast to that member. Lost copies are counted in :attr:`drops`.

        References: UIAP §4.2 (multicast Claim-Attempt), §4.3.2 (unicast Claim-Deny).
        """
        if not link.up:
            self.drops[DROP_LINK_DOWN] += len(link.members) - 1 if destination is None else 1
            return
        config = link.config
        if destination is None:
            if not (config.loss or config.jitter or config.reorder or config.duplicate):
                # A link without impairments draws nothing: every copy arrives after the
                # link's delay (what _fate gives without a draw), in member order.
                delay = config.delay
                out.extend([(receiver, delay) for receiver in link.members if receiver != sender])
                return
            for receiver in link.members:
                if receiver != sender:
                    self._fate(config, receiver, out)
        elif destination in link.members:
            self._fate(config, destination, out)
        else:
            self.drops[DROP_NOT_ON_LINK] += 1

    def _fate(self, config: LinkConfig, receiver: int, out: list[tuple[int, float]]) -> None:
        draw = self._random.random
        if config.loss and draw() < config.loss:
            self.drops[DROP_LOSS] += 1
            return
        delay = config.delay
        if config.jitter:
            delay += draw() * config.jitter
        if config.reorder and draw() < config.reorder:
            delay += config.reorder_delay
        out.append((receiver, delay))
        if config.duplicate and draw() < config.duplicate:
            out.append((receiver, delay + (draw() * config.jitter if config.jitter else 0.0)))
