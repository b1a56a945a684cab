"""Run inside a namespace: a node's socket set on the named interfaces, reporting which
socket (the interface it is bound to) read each datagram.

Prints ``{"ready": ...}`` once every interface is attached, then reads until ``--expect``
datagrams have arrived, then reads every socket dry (without waiting: a multicast datagram
is queued on every socket that takes it at once), detaches and re-attaches the last
interface, and prints what was read and whether that worked as one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys

from uuidkit.net import Arrival, Channel, Family, TransportConfig, TransportStats
from uuidkit.net.interfaces import discover_interfaces
from uuidkit.net.sockets import receive
from uuidkit.net.socketset import SocketSet

_SO_BINDTODEVICE = getattr(socket, "SO_BINDTODEVICE", 25)


def _bound_to(sock: socket.socket) -> str:
    raw = sock.getsockopt(socket.SOL_SOCKET, _SO_BINDTODEVICE, 16)
    return raw.rstrip(b"\0").decode() or "*"


async def main(names: list[str], expect: int, wait_s: float, shared: bool) -> None:
    read: list[dict[str, object]] = []
    arrived = asyncio.Event()
    by_index = {info.index: name for name, info in discover_interfaces().items()}

    def receiver(sock: socket.socket, family: Family, octets: int) -> Arrival:
        arrival = receive(sock, family, octets)
        read.append(
            {
                "socket": _bound_to(sock),
                "arrived_on": by_index.get(arrival.ifindex or 0, "?"),
                "data": arrival.data.decode(),
            }
        )
        return arrival

    def deliver(channel: Channel, arrival: Arrival) -> None:
        if len(read) >= expect:
            arrived.set()

    sockets = SocketSet(
        TransportConfig(interfaces=tuple(names)),
        TransportStats(),
        deliver,
        lambda: None,
        receiver=receiver,
    )
    sockets.open(asyncio.get_running_loop(), per_interface=False if shared else None)
    known = discover_interfaces()
    for name in names:
        sockets.attach(known[name])
    print(json.dumps({"ready": True, "per_interface": sockets.per_interface}), flush=True)
    await asyncio.wait_for(arrived.wait(), wait_s)
    for name in names:
        for channel in Channel:
            sock = sockets.sender(channel, name)
            while sock is not None:
                try:
                    receiver(sock, Family.IPV6, 2048)
                except BlockingIOError:
                    break
    # An interface that goes away takes its sockets with it: none sends on it, and its
    # ports on that interface are free again (binding them anew would fail otherwise).
    last = known[names[-1]]
    sockets.detach(last)
    detached = sockets.sender(Channel.CLAIM, last.name) is None
    sockets.attach(last)
    reattached = sockets.sender(Channel.CLAIM, last.name) is not None
    sockets.close()
    print(json.dumps({"read": read, "detached": detached, "reattached": reattached}), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--interfaces", nargs="+", required=True)
    parser.add_argument("--expect", type=int, required=True)
    parser.add_argument("--wait", type=float, default=60.0)
    parser.add_argument("--shared", action="store_true", help="force the shared fallback")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.interfaces, arguments.expect, arguments.wait, arguments.shared))
    sys.exit(0)
