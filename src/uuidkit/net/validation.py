"""What the transport checks before a datagram reaches the engine, and what it counts.

:func:`check_arrival` is pure: the arrival, the participating interfaces and our own
addresses in, a drop reason (or the interface name to hand to the engine) out. The engine
checks the message itself; this layer checks what only the network layer knows: where
the datagram came from, where it arrived and how long it was.

References: UIAP §3.1 (participating interfaces), §4.2.2.1 ("MUST use a valid link-local
address as the source address"), §4.3.2 (Claim-Deny is unicast).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from uuidkit.net.config import Family
from uuidkit.net.interfaces import is_link_local
from uuidkit.net.sockets import Arrival

__all__ = ["Channel", "SendFailure", "TransportDrop", "TransportStats", "check_arrival"]


class TransportDrop(enum.Enum):
    """Why the transport dropped a received datagram before the engine saw it.

    References: UIAP §2.3, §2.4.2; §9 (bounded state).
    """

    #: Longer than ``max_datagram_octets`` (or truncated by the receive buffer).
    OVERSIZED = "oversized"
    #: Arrived on an interface this node does not participate on (or without packet
    #: information naming one).
    NOT_PARTICIPATING = "not-participating"
    #: The source is not a link-local address (UIAP §4.2.2.1).
    NOT_LINK_LOCAL = "not-link-local"
    #: The source is one of this host's own addresses: our own datagram looped back, or a
    #: forgery of it.
    OWN_DATAGRAM = "own-datagram"
    #: On the claim port but not sent to the group, or on the reply port but sent to a
    #: multicast address (Claim-Attempts are multicast, Claim-Denies unicast: UIAP §4.2,
    #: §4.3).
    WRONG_DESTINATION = "wrong-destination"
    #: The authenticator refused it (``open`` returned ``None``, or raised: logged).
    AUTH = "auth"
    #: The engine raised: a bug, logged and counted rather than crashing the node.
    ENGINE_ERROR = "engine-error"


class SendFailure(enum.Enum):
    """Why a datagram the engine asked for was not sent.

    References: UIAP §2.4.3, §2.4.5 (forwarding and sending).
    """

    #: The interface stopped participating between the engine's decision and the send.
    INTERFACE_GONE = "interface-gone"
    #: The socket buffer was full (UDP: the protocol's retransmissions cover it).
    BLOCKED = "blocked"
    #: The kernel refused the send (link down meanwhile, no route...).
    ERROR = "error"
    #: Longer than ``max_datagram_octets`` after sealing.
    OVERSIZED = "oversized"
    #: The authenticator's ``seal`` raised (a bug in it; logged).
    SEAL = "seal-error"


class Channel(enum.Enum):
    """Which of the node's two sockets a datagram arrived on.

    References: UIAP §8.1, §10 (UIAP_CLAIM_PORT and UIAP_REPLY_PORT).
    """

    #: UIAP_CLAIM_PORT: Claim-Attempt floods to the group.
    CLAIM = "claim"
    #: UIAP_REPLY_PORT: unicast Claim-Denies.
    REPLY = "reply"


@dataclass(slots=True)
class TransportStats:
    """Counts of one node's transport since ``start()``; every drop is counted by reason.

    References: UIAP §2.3, §2.4.2.
    """

    #: Datagrams read from the sockets.
    received: int = 0
    #: Datagrams handed to the engine.
    delivered: int = 0
    #: Datagrams sent.
    sent: int = 0
    #: Received datagrams dropped by the transport, by reason.
    dropped: Counter[TransportDrop] = field(default_factory=Counter)
    #: Datagrams not sent, by reason.
    send_failed: Counter[SendFailure] = field(default_factory=Counter)
    #: Socket errors while reading (each ends one read batch).
    receive_errors: int = 0
    #: Datagrams the kernel dropped before we could read them (receive buffer full),
    #: by port (SO_RXQ_OVFL; counted by the kernel per socket, summed here).
    buffer_overflows: Counter[Channel] = field(default_factory=Counter)
    #: The same by interface name, where each interface has its own sockets.
    buffer_overflows_by_interface: Counter[str] = field(default_factory=Counter)
    #: Datagrams received per participating interface name.
    received_by_interface: Counter[str] = field(default_factory=Counter)
    #: Datagrams sent per interface name.
    sent_by_interface: Counter[str] = field(default_factory=Counter)


def check_arrival(
    arrival: Arrival,
    channel: Channel,
    *,
    family: Family,
    group: str,
    participating: Mapping[int, str],
    own_addresses: Collection[str],
    max_datagram_octets: int,
) -> TransportDrop | str:
    """The drop reason for ``arrival``, or the name of the interface it arrived on.

    ``participating`` maps the index of every participating interface to its name.

    References: UIAP §2.3 (link-local only), §2.4.2.
    """
    if arrival.truncated or len(arrival.data) > max_datagram_octets:
        return TransportDrop.OVERSIZED
    interface = participating.get(arrival.ifindex) if arrival.ifindex is not None else None
    if interface is None:
        return TransportDrop.NOT_PARTICIPATING
    # §4.2.2.1: "UIAP devices sending or forwarding a Claim-Attempt message on a link MUST
    # use a valid link-local address as the source address of the message." A Claim-Deny
    # goes to that address, so its sender is link-local too.
    if not is_link_local(arrival.source, family):
        return TransportDrop.NOT_LINK_LOCAL
    if arrival.source in own_addresses:
        return TransportDrop.OWN_DATAGRAM
    to_group = arrival.destination == group
    if channel is Channel.CLAIM and not to_group:
        return TransportDrop.WRONG_DESTINATION
    if channel is Channel.REPLY and (arrival.destination is None or _is_multicast(arrival)):
        return TransportDrop.WRONG_DESTINATION
    return interface


def _is_multicast(arrival: Arrival) -> bool:
    destination = arrival.destination or ""
    if ":" in destination:
        return destination.lower().startswith("ff")
    first = destination.split(".", 1)[0]
    return first.isdigit() and 224 <= int(first) <= 239
