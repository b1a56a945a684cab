"""The node's socket set reads every socket fairly: a flooded socket delays a datagram on
another by at most one read batch, counted in datagrams read (never in time).

Unix datagram socket pairs stand in for the UDP sockets: a datagram sent on one is queued
on its peer before ``send`` returns, so the queues are filled before the loop runs, with
no dependence on the kernel's network scheduling or on machine load.

References: UIAP §4.2.2.1 (a relay MUST forward), §4.3.2.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest

from uuidkit.net import Arrival, Channel, Family, TransportConfig, TransportStats
from uuidkit.net.socketset import SocketSet

BATCH = 2
#: The overflow count a test receiver reports with every datagram (None: not reported).
OVERFLOWS: dict[int, list[int]] = {}


def _unix_receive(sock: socket.socket, family: Family, octets: int) -> Arrival:
    data = sock.recv(octets)
    reported = OVERFLOWS.get(sock.fileno())
    overflows = reported.pop(0) if reported else None
    return Arrival(data, "fe80::2", 1021, "ff02::114", 1, False, overflows)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()
    OVERFLOWS.clear()


def _pair() -> tuple[socket.socket, socket.socket]:
    ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    ours.setblocking(False)
    peer.setblocking(False)
    return ours, peer


def _fill(peer: socket.socket, tag: bytes) -> int:
    """Queue datagrams on ``peer``'s other end until it is full; returns how many."""
    queued = 0
    while True:
        try:
            peer.send(tag + queued.to_bytes(4, "big"))
        except BlockingIOError:
            return queued
        queued += 1


def _set(loop: asyncio.AbstractEventLoop, read: list[bytes], stats: TransportStats) -> SocketSet:
    config = TransportConfig(receive_batch=BATCH)
    sockets = SocketSet(
        config, stats, lambda _c, a: read.append(a.data), lambda: None, receiver=_unix_receive
    )
    sockets._loop = loop  # the sockets are made here, not opened on UIAP's ports
    return sockets


def test_a_flooded_socket_delays_another_by_at_most_one_batch(
    loop: asyncio.AbstractEventLoop,
) -> None:
    read: list[bytes] = []
    sockets = _set(loop, read, TransportStats())
    flooded, flood_peer = _pair()
    quiet, quiet_peer = _pair()
    sockets.watch(flooded, Channel.CLAIM, "e2")
    sockets.watch(quiet, Channel.CLAIM, "e0")
    queued = _fill(flood_peer, b"f")
    assert queued > BATCH  # else the bound below would hold without any batching
    quiet_peer.send(b"honest")

    async def until_honest_read() -> None:
        while b"honest" not in read:
            await asyncio.sleep(0)

    loop.run_until_complete(asyncio.wait_for(until_honest_read(), 60))
    flood_first = read.index(b"honest")
    assert flood_first <= BATCH, read
    sockets.close()
    for sock in (flood_peer, quiet_peer):
        sock.close()


def test_overflows_are_counted_per_interface_and_survive_a_wrapping_count(
    loop: asyncio.AbstractEventLoop,
) -> None:
    stats = TransportStats()
    read: list[bytes] = []
    sockets = _set(loop, read, stats)
    first, first_peer = _pair()
    second, second_peer = _pair()
    sockets.watch(first, Channel.CLAIM, "e0")
    sockets.watch(second, Channel.REPLY, "e1")
    # SO_RXQ_OVFL is the socket's running count (an unsigned 32-bit value that wraps).
    OVERFLOWS[first.fileno()] = [5, 5, 7]
    OVERFLOWS[second.fileno()] = [(1 << 32) - 1, 2]
    for _ in range(3):
        first_peer.send(b"x")
    for _ in range(2):
        second_peer.send(b"y")

    async def until_all_read() -> None:
        while len(read) < 5:
            await asyncio.sleep(0)

    loop.run_until_complete(asyncio.wait_for(until_all_read(), 60))
    assert stats.buffer_overflows_by_interface == {"e0": 7, "e1": (1 << 32) - 1 + 3}
    assert stats.buffer_overflows == {Channel.CLAIM: 7, Channel.REPLY: (1 << 32) - 1 + 3}
    sockets.close()
    for sock in (first_peer, second_peer):
        sock.close()
