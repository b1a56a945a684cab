"""Network interfaces as the kernel reports them: name, index, flags, link-local addresses.

Read from the kernel's own interfaces, never from a subprocess: :func:`socket.if_nameindex`
for names and indexes, ``/proc/net/if_inet6`` for IPv6 addresses and their scope and
flags, getifaddrs(3) for every IPv4 address, and the ``SIOCGIFFLAGS`` / ``SIOCGIFHWADDR``
ioctls (netdevice(7)) for the interface flags and the hardware address (``SIOCGIFADDR``,
the first IPv4 address only, where getifaddrs is unavailable).

References: UIAP §2.3 (link-local multicast), §3.1 (participating interfaces), §4.1
(device ID from an EUI); RFC 4291 §2.5.6 (fe80::/10), RFC 3927 (169.254/16).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import ipaddress
import socket
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from uuidkit.net.config import Family

__all__ = ["InterfaceInfo", "discover_interfaces", "is_link_local"]

# netdevice(7) ioctls and <linux/if.h> flags.
_SIOCGIFFLAGS: Final = 0x8913
_SIOCGIFADDR: Final = 0x8915
_SIOCGIFHWADDR: Final = 0x8927
_IFF_UP: Final = 0x1
_IFF_LOOPBACK: Final = 0x8
_IFF_RUNNING: Final = 0x40
_IFF_MULTICAST: Final = 0x1000
_ARPHRD_ETHER: Final = 1
_IFNAMSIZ: Final = 16
#: Scope and flag values of /proc/net/if_inet6 (<net/ipv6.h>, <linux/if_addr.h>).
_SCOPE_LINK: Final = 0x20
_IFA_F_DADFAILED: Final = 0x08
_IFA_F_TENTATIVE: Final = 0x40
_IF_INET6: Final = Path("/proc/net/if_inet6")
_IPV4_LINK_LOCAL: Final = ipaddress.IPv4Network("169.254.0.0/16")


@dataclass(frozen=True, slots=True)
class InterfaceInfo:
    """One interface at the moment it was read.

    References: UIAP §3.1; netdevice(7).
    """

    #: Kernel name, e.g. ``eth0``.
    name: str
    #: Kernel interface index (the IPv6 scope id).
    index: int
    #: Interface flags (IFF_*), 0 when unreadable.
    flags: int
    #: Usable IPv6 link-local addresses (fe80::/10, not tentative), compressed text.
    ipv6_link_local: tuple[str, ...]
    #: Every IPv4 address of the interface (getifaddrs(3); the primary one alone where
    #: that is unavailable).
    ipv4_addresses: tuple[str, ...]
    #: The 6-octet Ethernet address, or ``None`` for interfaces without one.
    mac: bytes | None

    @property
    def up(self) -> bool:
        """Administratively up and with a carrier (IFF_UP and IFF_RUNNING)."""
        return self.flags & (_IFF_UP | _IFF_RUNNING) == _IFF_UP | _IFF_RUNNING

    @property
    def multicast(self) -> bool:
        """Multicast-capable and not loopback."""
        return bool(self.flags & _IFF_MULTICAST) and not self.flags & _IFF_LOOPBACK

    def link_local_addresses(self, family: Family) -> tuple[str, ...]:
        """The addresses UIAP may send from on this interface (UIAP §4.2.2.1)."""
        if family is Family.IPV6:
            return self.ipv6_link_local
        return tuple(a for a in self.ipv4_addresses if is_link_local(a, family))

    def usable(self, family: Family) -> bool:
        """Up, multicast-capable and with a link-local address of ``family``."""
        return self.up and self.multicast and bool(self.link_local_addresses(family))


@functools.lru_cache(maxsize=4096)
def is_link_local(address: str, family: Family) -> bool:
    """Whether ``address`` (text, no scope) is link-local unicast for ``family``.

    Cached (bounded): every datagram's source is checked, and a link has few senders.

    References: RFC 4291 §2.5.6 (fe80::/10); RFC 3927 §2.1 (169.254/16).
    """
    try:
        if family is Family.IPV6:
            return ipaddress.IPv6Address(address).is_link_local
        return ipaddress.IPv4Address(address) in _IPV4_LINK_LOCAL
    except ValueError:
        return False


def discover_interfaces() -> dict[str, InterfaceInfo]:
    """Every interface of this network namespace, by name.

    References: UIAP §2.3 (interfaces with link-local multicast).
    """
    ipv6 = _ipv6_link_local_by_index()
    ipv4 = _ipv4_addresses_by_name()
    found: dict[str, InterfaceInfo] = {}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for index, name in socket.if_nameindex():
            found[name] = InterfaceInfo(
                name=name,
                index=index,
                flags=_flags(probe, name),
                ipv6_link_local=tuple(ipv6.get(index, ())),
                ipv4_addresses=_ipv4_of(ipv4, probe, name),
                mac=_mac(probe, name),
            )
    return found


def _ipv4_of(
    table: dict[str, list[str]] | None, probe: socket.socket, name: str
) -> tuple[str, ...]:
    if table is not None:
        return tuple(table.get(name, ()))
    primary = _ipv4_address(probe, name)
    return (primary,) if primary is not None else ()


class _SockaddrIn(ctypes.Structure):
    _fields_ = (
        ("family", ctypes.c_ushort),
        ("port", ctypes.c_ushort),
        ("address", ctypes.c_ubyte * 4),
    )


class _IfAddrs(ctypes.Structure):
    pass


_IfAddrs._fields_ = (
    ("next", ctypes.POINTER(_IfAddrs)),
    ("name", ctypes.c_char_p),
    ("flags", ctypes.c_uint),
    ("address", ctypes.POINTER(_SockaddrIn)),
    ("netmask", ctypes.c_void_p),
    ("broadcast_or_destination", ctypes.c_void_p),
    ("data", ctypes.c_void_p),
)


def _ipv4_addresses_by_name() -> dict[str, list[str]] | None:
    """Every IPv4 address per interface name from getifaddrs(3), or ``None`` when the C
    library does not offer it (the primary address from SIOCGIFADDR is used then)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        getifaddrs, freeifaddrs = libc.getifaddrs, libc.freeifaddrs
    except (OSError, AttributeError):
        return None
    head = ctypes.POINTER(_IfAddrs)()
    if getifaddrs(ctypes.byref(head)) != 0:
        return None
    found: dict[str, list[str]] = {}
    try:
        entry = head
        while entry:
            item = entry.contents
            if item.address and item.address.contents.family == socket.AF_INET and item.name:
                text = socket.inet_ntoa(bytes(item.address.contents.address))
                found.setdefault(item.name.decode(errors="replace"), []).append(text)
            entry = item.next
    finally:
        freeifaddrs(head)
    return found


def _ifreq(name: str) -> bytes:
    return struct.pack(f"{_IFNAMSIZ}s{_IFNAMSIZ}x", name.encode()[: _IFNAMSIZ - 1])


def _ioctl(probe: socket.socket, request: int, name: str) -> bytes | None:
    try:
        return fcntl.ioctl(probe.fileno(), request, _ifreq(name))
    except OSError:
        return None  # gone meanwhile, or no address of that kind


def _flags(probe: socket.socket, name: str) -> int:
    reply = _ioctl(probe, _SIOCGIFFLAGS, name)
    return 0 if reply is None else int(struct.unpack_from("H", reply, _IFNAMSIZ)[0])


def _ipv4_address(probe: socket.socket, name: str) -> str | None:
    reply = _ioctl(probe, _SIOCGIFADDR, name)
    if reply is None:
        return None
    # struct sockaddr_in after the name: family (2), port (2), address (4).
    return socket.inet_ntoa(reply[_IFNAMSIZ + 4 : _IFNAMSIZ + 8])


def _mac(probe: socket.socket, name: str) -> bytes | None:
    reply = _ioctl(probe, _SIOCGIFHWADDR, name)
    if reply is None:
        return None
    family = struct.unpack_from("H", reply, _IFNAMSIZ)[0]
    mac = reply[_IFNAMSIZ + 2 : _IFNAMSIZ + 8]
    return mac if family == _ARPHRD_ETHER and any(mac) else None


def _ipv6_link_local_by_index() -> dict[int, list[str]]:
    """Link-local IPv6 addresses per interface index from /proc/net/if_inet6.

    Each line: address (32 hex digits), index, prefix length, scope, flags, name (all hex
    but the name). Tentative addresses (DAD still running) and ones that failed DAD cannot
    be sent from, so they are left out.
    """
    found: dict[int, list[str]] = {}
    with contextlib.suppress(OSError):
        text = _IF_INET6.read_text(encoding="ascii")
        for line in text.splitlines():
            fields = line.split()
            if len(fields) < 6:
                continue
            try:
                address = ipaddress.IPv6Address(bytes.fromhex(fields[0]))
                index, scope, flags = (int(fields[i], 16) for i in (1, 3, 4))
            except ValueError:
                continue
            if scope != _SCOPE_LINK or flags & (_IFA_F_TENTATIVE | _IFA_F_DADFAILED):
                continue
            found.setdefault(index, []).append(address.compressed)
    return found
