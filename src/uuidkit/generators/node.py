"""Node IDs for UUIDv1 and UUIDv6: random (default), stable per host, or the MAC address.

References: RFC 9562 §5.1 (node), §6.9, §6.10 (UUIDs That Do Not Identify the Host).
"""

from __future__ import annotations

import enum
import platform
import sys
import uuid

from uuidkit._bits import MASK_48
from uuidkit.errors import GeneratorError
from uuidkit.generators._policy import RandomBytes

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "MULTICAST_BIT",
    "NODE_BITS",
    "NodePolicy",
    "mac_node",
    "random_node",
    "resolve_node",
    "stable_node",
    "system_identity",
]

#: RFC 9562 §5.1: the node is 48 bits.
NODE_BITS: Final = 48
#: The unicast/multicast bit: the least significant bit of the first octet of the node.
MULTICAST_BIT: Final = 1 << 40
#: Files that hold a per-installation identifier on common systems.
_MACHINE_ID_FILES: Final = ("/etc/machine-id", "/var/lib/dbus/machine-id")


class NodePolicy(enum.Enum):
    """Where a UUIDv1/v6 generator takes its 48-bit node from.

    References: RFC 9562 §5.1, §6.10.
    """

    #: 48 CSPRNG bits with the multicast bit set (RFC 9562 §6.10); the default.
    RANDOM = "random"
    #: SHA-256 of the host's identity (machine id, host name, platform), multicast bit set:
    #: the same on every run of this host, and never equal to a real IEEE 802 address.
    STABLE = "stable"
    #: The host's IEEE 802 MAC address; identifies the host, so only when asked for.
    MAC = "mac"


def random_node(random_bytes: RandomBytes) -> int:
    """A random 48-bit node with the multicast bit set.

    References: RFC 9562 §6.10, Appendix A.
    """
    # RFC 9562 §6.10: "implementations MUST set the least significant bit of the first octet
    # of the Node ID to 1".
    return int.from_bytes(random_bytes(6)) | MULTICAST_BIT


def system_identity() -> bytes:
    """The host facts §6.10 suggests hashing: machine id, host name, OS and platform names.

    References: RFC 9562 §6.10 ("accumulate as many sources as possible into a buffer").
    """
    from pathlib import Path  # here, not at module level: keeps `import uuidkit` fast

    parts = [platform.node(), sys.platform, platform.platform(), platform.machine()]
    for name in _MACHINE_ID_FILES:
        try:
            parts.append(Path(name).read_text(encoding="ascii").strip())
            break
        except (OSError, UnicodeDecodeError):
            continue
    return "\x00".join(parts).encode("utf-8", "surrogateescape")


def stable_node(identity: bytes | None = None) -> int:
    """A node derived from the host's identity: 6 bytes of its SHA-256, multicast bit set.

    References: RFC 9562 §6.10 ("use a message digest (such as SHA-256 ...), take an
    arbitrary 6 bytes from the hash value, and set the multicast bit").
    """
    import hashlib  # here, not at module level: keeps `import uuidkit` fast

    digest = hashlib.sha256(identity if identity is not None else system_identity()).digest()
    # RFC 9562 §6.10: the multicast bit MUST be set on a node that is not an IEEE address.
    return int.from_bytes(digest[:6]) | MULTICAST_BIT


def mac_node() -> int:
    """The host's IEEE 802 address; raises :class:`~uuidkit.GeneratorError` if there is none.

    References: RFC 9562 §5.1 (node from an IEEE 802 MAC address).
    """
    node = uuid.getnode() & MASK_48
    if node & MULTICAST_BIT:
        # The standard library returns a random multicast node when it finds no interface.
        raise GeneratorError("node: no IEEE 802 MAC address found on this host (policy MAC)")
    return node


def resolve_node(policy: NodePolicy, random_bytes: RandomBytes) -> int:
    """The node for ``policy``.

    References: RFC 9562 §5.1, §6.10.
    """
    if policy is NodePolicy.RANDOM:
        return random_node(random_bytes)
    if policy is NodePolicy.STABLE:
        return stable_node()
    return mac_node()
