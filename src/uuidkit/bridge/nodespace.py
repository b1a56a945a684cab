"""The split of the 47-bit node space between leased and statically numbered nodes.

Every node a node-bound generator uses has the multicast bit set (RFC 9562 §6.10: the least
significant bit of octet 0, bit 40 of the 48-bit node), which leaves 47 bits. The most
significant bit of the node (bit 47, the top bit of octet 0) splits them in two halves:

- **leased half** (bit 47 = 0): nodes drawn at random (46 CSPRNG bits, RFC 9562 §6.9) and
  leased from a coordination service (:class:`~uuidkit.bridge.PostgresNodeSource`,
  :class:`~uuidkit.bridge.EtcdNodeSource`), which makes each unique while it is held;
- **static half** (bit 47 = 1): nodes an orchestrator numbers
  (:class:`~uuidkit.bridge.StaticNodeSource`): 29 bits of deployment prefix (the top bits of
  SHA-256 of the deployment's name, so two StatefulSets or Jobs differ) and a 17-bit ordinal
  (a pod ordinal or Job completion index below 131,072).

So a leased node never equals a static one, whatever either side draws or configures. UIAP
claims (:class:`~uuidkit.bridge.UIAPNodeSource`) draw all 47 bits and are unique only among
the hosts of one site: a site uses UIAP alone, or keeps its UUIDs apart from the other
sources' (``docs/fleet.md``).

References: RFC 9562 §6.4 (Node IDs: "the bit space for a given node is unique"), §6.9,
§6.10.
"""

from __future__ import annotations

import hashlib
from typing import Final

from uuidkit.errors import InvalidField
from uuidkit.generators._policy import RandomBytes
from uuidkit.nodelayouts import MULTICAST_BIT, check_claimed_node

__all__ = [
    "ORDINAL_BITS",
    "PREFIX_BITS",
    "STATIC_BIT",
    "deployment_prefix",
    "is_static_node",
    "leased_node",
    "static_node",
]

#: Bit 47 of the node: set in static nodes, clear in leased ones.
STATIC_BIT: Final = 1 << 47
#: Width of a static node's ordinal (pod ordinal or completion index).
ORDINAL_BITS: Final = 17
#: Width of a static node's deployment prefix.
PREFIX_BITS: Final = 29
#: The 46 bits that are neither the split bit nor the multicast bit, low to high.
_FREE_LOW_BITS: Final = 40  # bits 0-39
_FREE_HIGH_BITS: Final = 6  # bits 41-46


def _spread(value46: int) -> int:
    """Place a 46-bit value into the node's free bits (around the multicast bit)."""
    low = value46 & ((1 << _FREE_LOW_BITS) - 1)
    high = value46 >> _FREE_LOW_BITS
    return (high << (_FREE_LOW_BITS + 1)) | low


def leased_node(random_bytes: RandomBytes) -> int:
    """A random node of the leased half: 46 random bits, bit 47 clear, multicast bit set.

    References: RFC 9562 §6.9, §6.10.
    """
    value46 = int.from_bytes(random_bytes(6)) & ((1 << 46) - 1)
    return _spread(value46) | MULTICAST_BIT


def deployment_prefix(deployment: str) -> int:
    """The 29-bit prefix of ``deployment`` (a name such as ``"shop/orders"``): SHA-256's top bits.

    References: RFC 9562 §6.4.
    """
    if not isinstance(deployment, str) or not deployment.strip():
        raise InvalidField(
            f"deployment: expected a non-empty name, found {deployment!r}", "deployment"
        )
    digest = hashlib.sha256(deployment.encode("utf-8")).digest()
    return int.from_bytes(digest[:4]) >> (32 - PREFIX_BITS)


def static_node(ordinal: int, deployment: str) -> int:
    """The static-half node of worker ``ordinal`` (0 to 131,071) of ``deployment``.

    >>> hex(static_node(0, "shop/orders"))
    '0xb313dee20000'
    >>> static_node(3, "shop/orders") != static_node(3, "shop/payments")
    True

    References: RFC 9562 §6.4, §6.10.
    """
    if type(ordinal) is not int or not 0 <= ordinal < 1 << ORDINAL_BITS:
        raise InvalidField(
            f"ordinal: expected an int from 0 to {(1 << ORDINAL_BITS) - 1}, found {ordinal!r}",
            "ordinal",
        )
    value46 = (deployment_prefix(deployment) << ORDINAL_BITS) | ordinal
    return STATIC_BIT | _spread(value46) | MULTICAST_BIT


def is_static_node(node: int) -> bool:
    """True if ``node`` (a claimed node, multicast bit set) is in the static half.

    References: RFC 9562 §6.10.
    """
    check_claimed_node(node)
    return bool(node & STATIC_BIT)
