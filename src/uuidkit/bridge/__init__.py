"""The bridge between RFC 9562 generators and UIAP: node IDs claimed through the daemon.

:class:`UIAPNodeSource` claims a random node ID (multicast bit set) in the UUID node-ID
domain through the UIAP daemon's API, keeps it with renewals, watches for collisions and for
the daemon going away, and hands it to the node-bound generators of
:mod:`uuidkit.generators.nodebound`. See ``docs/distributed.md``.

References: RFC 9562 §6.4, §6.10; UIAP §2.1, §4.4, §6.
"""

from __future__ import annotations

from uuidkit.bridge.uiap_source import OnNodeLoss, UIAPNodeSource, node_bound_generator

__all__ = ["OnNodeLoss", "UIAPNodeSource", "node_bound_generator"]
