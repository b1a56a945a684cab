"""The node's UDP sockets: one pair per interface, each read fairly, so a flood on one link
cannot starve the others.

A relay MUST forward honest Claim-Attempts and their Claim-Denies (UIAP §4.2.2.1, §4.3.2)
whatever arrives on its other links. With one socket per port for every interface, a
flood on one link fills that socket's kernel queue, and the honest datagrams of the
other links are dropped by the kernel, or read after their claim's timeout, before any
code of ours could tell them apart. So each participating interface gets its own pair
(claim port, reply port):

* bound to the interface with ``SO_BINDTODEVICE`` (socket(7)), so it hears that link
  only. Joining the group on one interface index is not enough: Linux hands a multicast
  datagram to every socket that joined the group on *any* interface;
* joining the group on its own interface index only;
* with its own receive buffer (``receive_buffer_octets``) and its own overflow count
  (``SO_RXQ_OVFL``), reported per interface;
* read by its own event-loop reader, which takes at most ``receive_batch`` datagrams per
  wake-up: the loop runs every ready reader once per turn, so a datagram on a quiet link
  waits behind at most one batch of a flooded one.

Sockets bound to different devices share a port without ``SO_REUSEADDR``, and a second
node on the same interface still fails to bind. Sending uses the interface's own socket.

Where ``SO_BINDTODEVICE`` is refused (before Linux 5.7 it needs CAP_NET_RAW) the set falls
back to one wildcard pair for every interface: packet information (``IPV6_PKTINFO``)
still names each datagram's interface and validation drops the others, but a flood on
one link then shares the queue of all of them.

References: UIAP §2.3, §4.2.2.1, §4.3.2, §7, §8.1, §10.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass

from uuidkit.errors import TransportError
from uuidkit.net.config import Family, TransportConfig
from uuidkit.net.interfaces import InterfaceInfo
from uuidkit.net.sockets import (
    Arrival,
    can_bind_to_device,
    join_group,
    leave_group,
    open_udp_socket,
    receive,
)
from uuidkit.net.validation import Channel, TransportStats
from uuidkit.net.watch import RateLimitedLog

__all__ = ["SocketSet"]

_log = logging.getLogger("uuidkit.net")
#: SO_RXQ_OVFL is an unsigned 32-bit count that wraps.
_OVERFLOW_MODULUS = 1 << 32

Receiver = Callable[[socket.socket, Family, int], Arrival]


@dataclass(slots=True, eq=False)
class _Reader:
    """One socket and what its datagrams are: its port and (unless shared) its interface."""

    sock: socket.socket
    channel: Channel
    interface: str | None
    #: The socket's SO_RXQ_OVFL count when last read (counted once into the stats).
    overflows_seen: int = 0
    open: bool = True


class SocketSet:
    """The node's sockets: see the module docstring.

    ``deliver`` gets every datagram read with the port it arrived on; ``after_batch``
    runs after each read batch (the node sends, hands out events and re-arms its timer).
    ``receiver`` reads one datagram (raising ``BlockingIOError`` when none waits).

    References: UIAP §2.3, §4.2.2.1, §8.1.
    """

    def __init__(
        self,
        config: TransportConfig,
        stats: TransportStats,
        deliver: Callable[[Channel, Arrival], None],
        after_batch: Callable[[], None],
        *,
        receiver: Receiver = receive,
    ) -> None:
        self._config = config
        self._stats = stats
        self._deliver = deliver
        self._after_batch = after_batch
        self._receive = receiver
        self._loop: asyncio.AbstractEventLoop | None = None
        #: The wildcard pair (the fallback), by port.
        self._shared: dict[Channel, _Reader] = {}
        #: Each interface's pair, by interface name and port.
        self._own: dict[str, dict[Channel, _Reader]] = {}
        self._log = RateLimitedLog(_log, config.log_interval)
        #: One socket pair per interface (``SO_BINDTODEVICE``), else one shared pair.
        self.per_interface = False

    def open(self, loop: asyncio.AbstractEventLoop, *, per_interface: bool | None = None) -> None:
        """Check both ports can be bound, then choose per-interface sockets if the kernel
        lets this process bind to a device (``per_interface`` forces the choice).

        Raises :class:`TransportError` naming a port that cannot be bound.
        """
        config, family = self._config, self._config.family
        pair = {Channel.CLAIM: self._open(config.port, None)}
        try:
            pair[Channel.REPLY] = self._open(config.reply_port, None)
        except TransportError:
            pair[Channel.CLAIM].close()
            raise
        self._loop = loop
        chosen = can_bind_to_device(family) if per_interface is None else per_interface
        self.per_interface = chosen
        if chosen:
            # The wildcard pair only proved the ports free: bound, it would share them.
            for sock in pair.values():
                sock.close()
            return
        _log.warning("UIAP: cannot bind sockets to interfaces; one socket serves them all")
        self._shared = {channel: self.watch(sock, channel, None) for channel, sock in pair.items()}

    def _open(self, port: int, device: str | None) -> socket.socket:
        config = self._config
        return open_udp_socket(
            config.family,
            port,
            config.ip_hop_limit,
            config.receive_buffer_octets,
            device=device,
        )

    def attach(self, info: InterfaceInfo) -> None:
        """Hear and send on ``info``: its own socket pair (or the shared pair) joins the
        group on its index. Raises :class:`TransportError` or ``OSError``."""
        config = self._config
        if not self.per_interface:
            shared = self._shared[Channel.CLAIM].sock
            join_group(shared, config.family, config.active_group, info.index)
            return
        claim = self._open(config.port, info.name)
        try:
            reply = self._open(config.reply_port, info.name)
        except TransportError:
            claim.close()
            raise
        try:
            join_group(claim, config.family, config.active_group, info.index)
        except OSError:
            claim.close()
            reply.close()
            raise
        self._own[info.name] = {
            Channel.CLAIM: self.watch(claim, Channel.CLAIM, info.name),
            Channel.REPLY: self.watch(reply, Channel.REPLY, info.name),
        }

    def detach(self, info: InterfaceInfo) -> None:
        """Stop hearing ``info``: close its pair (or leave the group on the shared one)."""
        if not self.per_interface:
            if Channel.CLAIM in self._shared:
                with contextlib.suppress(OSError):
                    leave_group(
                        self._shared[Channel.CLAIM].sock,
                        self._config.family,
                        self._config.active_group,
                        info.index,
                    )
            return
        for reader in self._own.pop(info.name, {}).values():
            self._unwatch(reader)

    def sender(self, channel: Channel, interface: str) -> socket.socket | None:
        """The socket that sends on ``interface`` from ``channel``'s port, ``None`` if none."""
        readers = self._own.get(interface) if self.per_interface else self._shared
        reader = readers.get(channel) if readers is not None else None
        return reader.sock if reader is not None else None

    def close(self) -> None:
        """Close every socket."""
        for reader in list(self._shared.values()):
            self._unwatch(reader)
        for pair in self._own.values():
            for reader in pair.values():
                self._unwatch(reader)
        self._shared.clear()
        self._own.clear()
        self._loop = None

    # ------------------------------------------------------------------ reading

    def watch(self, sock: socket.socket, channel: Channel, interface: str | None) -> _Reader:
        """Read ``sock`` from now on, a bounded batch per wake-up (its own reader)."""
        if self._loop is None:
            raise TransportError("the socket set is not open")
        reader = _Reader(sock, channel, interface)
        self._loop.add_reader(sock.fileno(), self._on_readable, reader)
        return reader

    def _unwatch(self, reader: _Reader) -> None:
        reader.open = False
        if self._loop is not None and reader.sock.fileno() >= 0:
            self._loop.remove_reader(reader.sock.fileno())
        reader.sock.close()

    def _on_readable(self, reader: _Reader) -> None:
        config = self._config
        buffer_octets = config.max_datagram_octets + 1
        # At most one batch: every other ready socket gets its turn before this one's next.
        for _ in range(config.receive_batch):
            if not reader.open:
                break
            try:
                arrival = self._receive(reader.sock, config.family, buffer_octets)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as error:
                # e.g. ECONNREFUSED/EHOSTUNREACH reported for an earlier send.
                self._stats.receive_errors += 1
                self._log.warning("receive", "UIAP receive failed: %s", error)
                break
            if arrival.overflows is not None:
                self._count_overflows(reader, arrival.overflows)
            self._deliver(reader.channel, arrival)
        self._after_batch()

    def _count_overflows(self, reader: _Reader, overflows: int) -> None:
        new = (overflows - reader.overflows_seen) % _OVERFLOW_MODULUS
        if new:
            reader.overflows_seen = overflows
            self._stats.buffer_overflows[reader.channel] += new
            if reader.interface is not None:
                self._stats.buffer_overflows_by_interface[reader.interface] += new
