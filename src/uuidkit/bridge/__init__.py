"""Node IDs for the node-bound generators: claimed through UIAP, leased, or numbered.

- :class:`UIAPNodeSource` claims a random node ID (multicast bit set) in the UUID node-ID
  domain through the UIAP daemon's API, keeps it with renewals and watches for collisions
  and for the daemon going away (one site; ``docs/distributed.md``);
- :class:`PostgresNodeSource` and :class:`EtcdNodeSource` lease one from a coordination
  service, with a deadline on the client's monotonic clock and fencing at the service;
- :class:`StaticNodeSource` takes one an orchestrator numbers (a StatefulSet ordinal, an
  Indexed Job's completion index) or configuration gives (``docs/fleet.md``).

Each hands its node to the node-bound generators of :mod:`uuidkit.generators.nodebound`
through :func:`node_bound_generator`.

References: RFC 9562 §6.4, §6.10; UIAP §2.1, §4.4, §6.
"""

from __future__ import annotations

from uuidkit.bridge.etcd_source import EtcdNodeSource
from uuidkit.bridge.leased import LeasedNodeSource
from uuidkit.bridge.postgres_source import PostgresNodeSource
from uuidkit.bridge.static_source import StaticNodeSource
from uuidkit.bridge.uiap_source import OnNodeLoss, UIAPNodeSource, node_bound_generator

__all__ = [
    "EtcdNodeSource",
    "LeasedNodeSource",
    "OnNodeLoss",
    "PostgresNodeSource",
    "StaticNodeSource",
    "UIAPNodeSource",
    "node_bound_generator",
]
