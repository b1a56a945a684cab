"""UIAP on real networks: the link-local multicast transport, the only package with sockets.

::

    import asyncio
    from uuidkit.net import TransportConfig, UIAPNode
    from uuidkit.uiap import DomainID, UIDSpace

    async def main() -> None:
        config = TransportConfig(interfaces=("eth0",), port=41021, reply_port=41022)
        async with UIAPNode(config) as node:        # on_event=None: events go to node.events
            result = await node.claim_and_wait(DomainID.parse("0fff:0:1:0"),
                                               UIDSpace.unique(b"\\x2a"), lifetime=3600)
            print(result, node.status())

    asyncio.run(main())

Public API (what the daemon builds on):

* :class:`UIAPNode` ``(config, engine_config, device_id, on_event, *, authenticator,
  domains, rng)``: ``async start()`` / ``async stop()`` (or ``async with``);
  ``claim(domain, space, lifetime, *, reclaim=False, proxy=False) -> handle`` (the result
  comes as a ``ClaimSucceeded`` / ``ClaimFailed`` event); ``async claim_and_wait(...)``;
  ``release(handle)``; ``status()`` (a JSON-ready dict: interfaces, transport counters,
  drops by reason, engine counters); ``stats`` (:class:`TransportStats`); ``engine``;
  ``interfaces``; ``events`` (an :class:`asyncio.Queue` used when ``on_event`` is None).
* :class:`TransportConfig`: interfaces, family (:class:`Family`), group and IPv4 group,
  port and reply port, largest datagram, IP hop limit, claim period and timeout
  pass-through, interface poll interval; a unit on every field.
* :class:`Authenticator`: the ``seal`` / ``open`` protocol of a keyed-MAC layer.
* Device IDs (UIAP §4.1): :func:`make_device_id` (the one maker: random by default, the
  modified EUI-64 of an interface's MAC on request), :func:`resolve_device_id` (kept stable
  in a state directory), :func:`random_device_id`, :func:`device_id_from_mac`.
* Interfaces: :func:`discover_interfaces`, :class:`InterfaceInfo`.
* Validation: :func:`check_arrival`, :class:`TransportDrop`, :class:`SendFailure`.

Errors: configuration and set-up problems raise :class:`~uuidkit.errors.TransportError`
(a ``ValueError``); nothing received from the network raises: it is validated, counted by
reason in ``stats.dropped`` and dropped.

References: UIAP §2.3, §3.1, §4.1, §4.2.2.1, §4.3.2, §7, §8.1, §10.
"""

from __future__ import annotations

from uuidkit.errors import TransportError
from uuidkit.net.authenticator import Authenticator
from uuidkit.net.config import IPV6_UNFRAGMENTED_PAYLOAD_OCTETS, Family, TransportConfig
from uuidkit.net.device_id import (
    device_id_from_mac,
    load_or_store_device_id,
    make_device_id,
    random_device_id,
    resolve_device_id,
)
from uuidkit.net.interfaces import InterfaceInfo, discover_interfaces, is_link_local
from uuidkit.net.node import UIAPNode
from uuidkit.net.sockets import Arrival
from uuidkit.net.validation import (
    Channel,
    SendFailure,
    TransportDrop,
    TransportStats,
    check_arrival,
)

__all__ = [
    "IPV6_UNFRAGMENTED_PAYLOAD_OCTETS",
    "Arrival",
    "Authenticator",
    "Channel",
    "Family",
    "InterfaceInfo",
    "SendFailure",
    "TransportConfig",
    "TransportDrop",
    "TransportError",
    "TransportStats",
    "UIAPNode",
    "check_arrival",
    "device_id_from_mac",
    "discover_interfaces",
    "is_link_local",
    "load_or_store_device_id",
    "make_device_id",
    "random_device_id",
    "resolve_device_id",
]
