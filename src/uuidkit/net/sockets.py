"""UDP sockets for link-local multicast: open, join by interface index, receive with the
arrival interface and destination, send out one given interface.

One socket per UDP port (the claim port and the reply port) and per interface, bound to
that interface (``SO_BINDTODEVICE``, socket(7); see :mod:`uuidkit.net.socketset`), or one
per port bound to the wildcard address where the kernel refuses that; with packet
information on every datagram (``IPV6_RECVPKTINFO`` / ``IP_PKTINFO``,
ip(7) and ipv6(7)): the arrival interface index and the destination address come from the
kernel, not from the datagram. The multicast group is joined per interface index
(RFC 3493 §5.2); sending to ``ff02::/16`` names the interface by its scope id, over IPv4 by
an ``IP_PKTINFO`` control message. Multicast loopback is off: a node never hears itself.

No ``SO_REUSEADDR``: a second node in the same network namespace would silently share the
multicast port and lose unicast replies, so it fails at once with a clear error instead.
Sockets bound to different devices do not conflict on one port without it (the kernel
checks a port's users per bound device), so one node's per-interface sockets coexist.

References: UIAP §2.3, §3.1, §4.2.2.1 (link-local source), §4.3.2 (unicast Claim-Deny);
RFC 3542 §6 (IPV6_PKTINFO); RFC 3493 §5.2 (IPV6_JOIN_GROUP).
"""

from __future__ import annotations

import contextlib
import errno
import socket
import struct
import sys
from typing import Final, NamedTuple

from uuidkit.errors import TransportError
from uuidkit.net.config import Family

__all__ = [
    "Arrival",
    "can_bind_to_device",
    "join_group",
    "leave_group",
    "open_udp_socket",
    "receive",
    "send",
]

#: ip(7) IP_PKTINFO; Python 3.11's socket module does not export it on every build.
_IP_PKTINFO: Final = getattr(socket, "IP_PKTINFO", 8)
#: struct in6_pktinfo: address (16), interface index (unsigned int).
_IN6_PKTINFO: Final = struct.Struct("@16sI")
#: struct in_pktinfo: interface index (int), spec_dst (4), address (4).
_IN_PKTINFO: Final = struct.Struct("@i4s4s")
#: struct ip_mreqn: group (4), local address (4), interface index (int).
_IP_MREQN: Final = struct.Struct("@4s4si")
#: socket(7) SO_RXQ_OVFL: every datagram carries the socket's count of datagrams the
#: kernel dropped because the receive buffer was full.
_SO_RXQ_OVFL: Final = getattr(socket, "SO_RXQ_OVFL", 40)
_IPV6_PKTINFO: Final = socket.IPV6_PKTINFO
_IPPROTO_IPV6: Final = socket.IPPROTO_IPV6
_SO_RCVBUFFORCE: Final = getattr(socket, "SO_RCVBUFFORCE", 33)
#: socket(7) SO_BINDTODEVICE: the socket sends and receives on one interface only.
_SO_BINDTODEVICE: Final = getattr(socket, "SO_BINDTODEVICE", 25)
_ANCILLARY_OCTETS: Final = socket.CMSG_SPACE(_IN6_PKTINFO.size) + socket.CMSG_SPACE(32) * 2


class Arrival(NamedTuple):
    """One received datagram with what the kernel said about it (a tuple: one is made
    per datagram, so it must be cheap).

    References: UIAP §2.3 (link-local multicast), §2.4.2 (receive a Claim-Attempt).
    """

    #: The UDP payload (at most the receive buffer; see ``truncated``).
    data: bytes
    #: The sender's address, text without scope.
    source: str
    #: The sender's UDP port.
    source_port: int
    #: The destination address (text) from packet information, ``None`` if missing.
    destination: str | None
    #: The arrival interface index from packet information, ``None`` if missing.
    ifindex: int | None
    #: The datagram was longer than the receive buffer (MSG_TRUNC).
    truncated: bool
    #: Datagrams the kernel dropped on this socket so far for want of buffer space
    #: (SO_RXQ_OVFL), ``None`` if not reported.
    overflows: int | None = None


def open_udp_socket(
    family: Family,
    port: int,
    hop_limit: int,
    receive_buffer_octets: int = 1 << 20,
    *,
    device: str | None = None,
) -> socket.socket:
    """A non-blocking UDP socket on ``port``, bound to the wildcard address, and to the
    interface named ``device`` if one is given (it then hears that interface only).

    Raises :class:`TransportError` naming the port (and the device) when it cannot be bound.

    References: UIAP §8.1, §10 (the two UDP ports).
    """
    if family is Family.IPV6:
        sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        _configure(sock, family, hop_limit)
        _set_receive_buffer(sock, receive_buffer_octets)
        if device is not None:
            sock.setsockopt(socket.SOL_SOCKET, _SO_BINDTODEVICE, device.encode())
        sock.bind(("::", port) if family is Family.IPV6 else ("0.0.0.0", port))
    except OSError as error:
        sock.close()
        where = "" if device is None else f" on {device}"
        raise TransportError(_bind_error(port, error, where), "port") from error
    sock.setblocking(False)
    return sock


def can_bind_to_device(family: Family, device: str = "lo") -> bool:
    """Whether this process may bind a UDP socket to one interface (``SO_BINDTODEVICE``:
    any user since Linux 5.7, before that only with CAP_NET_RAW).

    References: UIAP §2.3 (the link a datagram arrived on).
    """
    kind = socket.AF_INET6 if family is Family.IPV6 else socket.AF_INET
    try:
        with socket.socket(kind, socket.SOCK_DGRAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, _SO_BINDTODEVICE, device.encode())
    except OSError:
        return False
    return True


def _configure(sock: socket.socket, family: Family, hop_limit: int) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, _SO_RXQ_OVFL, 1)
    if family is Family.IPV6:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVPKTINFO, 1)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, hop_limit)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, hop_limit)
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_LOOP, 0)
    else:
        sock.setsockopt(socket.IPPROTO_IP, _IP_PKTINFO, 1)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, hop_limit)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, hop_limit)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)


def _set_receive_buffer(sock: socket.socket, octets: int) -> None:
    # SO_RCVBUFFORCE (socket(7)) lets a privileged node exceed net.core.rmem_max; anyone
    # else gets SO_RCVBUF, which the kernel caps there.
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_RCVBUFFORCE, octets)
    except OSError:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, octets)


def _bind_error(port: int, error: OSError, where: str = "") -> str:
    if error.errno == errno.EADDRINUSE:
        return f"UDP port {port} is in use{where} (another UIAP node in this network namespace?)"
    if error.errno == errno.EACCES:
        return f"UDP port {port} needs privileges (CAP_NET_BIND_SERVICE); configure a port >= 1024"
    return f"cannot bind UDP port {port}{where}: {error.strerror}"


def join_group(sock: socket.socket, family: Family, group: str, ifindex: int) -> None:
    """Join ``group`` on interface ``ifindex``; joining twice is harmless.

    References: UIAP §2.3, §8.1 (the link-local multicast group).
    """
    try:
        sock.setsockopt(*_membership(family, group, ifindex, leave=False))
    except OSError as error:
        if error.errno != errno.EADDRINUSE:  # already a member
            raise


def leave_group(sock: socket.socket, family: Family, group: str, ifindex: int) -> None:
    """Leave ``group`` on ``ifindex``; an interface already gone is not an error.

    References: UIAP §2.3, §8.1.
    """
    try:
        sock.setsockopt(*_membership(family, group, ifindex, leave=True))
    except OSError as error:
        if error.errno not in (errno.EADDRNOTAVAIL, errno.ENODEV, errno.EINVAL):
            raise


def _membership(family: Family, group: str, ifindex: int, *, leave: bool) -> tuple[int, int, bytes]:
    if family is Family.IPV6:
        option = socket.IPV6_LEAVE_GROUP if leave else socket.IPV6_JOIN_GROUP
        request = socket.inet_pton(socket.AF_INET6, group) + struct.pack("@I", ifindex)
        return socket.IPPROTO_IPV6, option, request
    option = socket.IP_DROP_MEMBERSHIP if leave else socket.IP_ADD_MEMBERSHIP
    request = _IP_MREQN.pack(socket.inet_aton(group), bytes(4), ifindex)
    return socket.IPPROTO_IP, option, request


def receive(sock: socket.socket, family: Family, buffer_octets: int) -> Arrival:
    """Read one datagram; raises ``BlockingIOError`` when none is waiting.

    References: UIAP §2.3, §2.4.2.
    """
    data, ancillary, flags, address = sock.recvmsg(buffer_octets, _ANCILLARY_OCTETS)
    destination: str | None = None
    ifindex: int | None = None
    overflows: int | None = None
    ipv6 = family is Family.IPV6
    for level, kind, payload in ancillary:
        if kind == _SO_RXQ_OVFL and level == socket.SOL_SOCKET and len(payload) >= 4:
            overflows = int.from_bytes(payload[:4], sys.byteorder)
        elif ipv6 and kind == _IPV6_PKTINFO and level == _IPPROTO_IPV6:
            if len(payload) >= _IN6_PKTINFO.size:
                raw, ifindex = _IN6_PKTINFO.unpack_from(payload)
                destination = socket.inet_ntop(socket.AF_INET6, raw)
        elif (
            not ipv6
            and kind == _IP_PKTINFO
            and level == socket.IPPROTO_IP
            and len(payload) >= _IN_PKTINFO.size
        ):
            ifindex, _, raw = _IN_PKTINFO.unpack_from(payload)
            destination = socket.inet_ntoa(raw)
    # Python renders a scoped IPv6 source as "fe80::1%eth0"; the scope is the arrival
    # interface, which packet information already gives.
    source: str = address[0]
    if "%" in source:
        source = source.partition("%")[0]
    truncated = bool(flags & socket.MSG_TRUNC)
    return Arrival(data, source, address[1], destination, ifindex, truncated, overflows)


def send(
    sock: socket.socket,
    family: Family,
    data: bytes,
    destination: str,
    port: int,
    ifindex: int,
    source: str,
) -> None:
    """Send ``data`` to ``destination``:``port`` out interface ``ifindex`` from ``source``.

    Over IPv6 the scope id picks the interface of a link-local or ``ff02::`` destination
    (ipv6(7)), and the kernel picks the interface's link-local source. Over IPv4 an
    ``IP_PKTINFO`` control message names the interface and the source address.

    References: UIAP §2.4.1, §2.4.3, §2.4.5 (claims, forwards, denies).
    """
    if family is Family.IPV6:
        sock.sendto(data, (destination, port, 0, ifindex))
        return
    info = _IN_PKTINFO.pack(ifindex, socket.inet_aton(source), bytes(4))
    sock.sendmsg([data], [(socket.IPPROTO_IP, _IP_PKTINFO, info)], 0, (destination, port))
