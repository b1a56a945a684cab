"""The example number spaces of §3.2.1.2 as ready-made domains, plus UUID node IDs.

=====================  ======  =====  ==========  =========  ===========================
number space           data    just.  length      alignment  DID (experimental, §6)
=====================  ======  =====  ==========  =========  ===========================
integers               binary  right  varies      bit        ``0fff:0000:0001:0080``
IPv4 addresses         binary  left   4 octets    octet      ``0fff:0000:0002:0000``
IPv4 CIDR subnets      binary  left   up to 4     bit        ``0fff:0000:0003:0000``
IPv6 prefixes          binary  left   up to 8     bit        ``0fff:0000:0004:0000``
DNS names              char    left   varies      octet      ``0fff:0000:0005:0000``
UUID node IDs          binary  left   6 octets    octet      ``0fff:0000:0006:0000``
=====================  ======  =====  ==========  =========  ===========================

No authority has allocated DIDs for these domains, so they live under the experimental
authority prefix 0x0FFF (§6: "Experimental work"). The flags octet carries J: 0x80 for
the right-justified integers, 0x00 for the rest. Characteristics the table leaves open are
chosen and documented per domain below (significant zeros, hierarchy).

Subnets and prefixes are claimed as prefix spaces (§3.2.2: "everything beginning with
192.168 (i.e. subnet 192.168/16)"), so a /56 conflicts with the /48 that contains it.

The UUID node-ID domain lets a device claim the 48-bit node field of RFC 9562 UUIDv1/v6
(§5.1: "the 48-bit node ID") so that devices on one site never share one. Its DID,
``0fff:0000:0006:0000`` (:data:`UUID_NODE_ID_DOMAIN`), is stable: uuidkit will not move it
while the domain stays experimental, so devices running different uuidkit versions on one
site defend each other's node IDs. Its specification (UIAP §6: "describing the semantics of
that domain and how UIDs from that domain may be constructed"):

- a UID is exactly 6 octets, the node in network byte order (RFC 9562 §5.1: octet 0 of the
  node first); binary, left-justified, octet-aligned, zeros significant;
- claims are single UIDs, or prefixes for a block of node IDs (the space is hierarchical);
- a node ID claimed for UUID generation sets the multicast bit, the least significant bit
  of octet 0 (RFC 9562 §6.10), so it never equals an IEEE 802 address; UIAP does not
  enforce that (§2.2: "legal but meaningless claims"), the claiming application does;
- a holder uses the node ID in UUIDs only while its claim is held (granted and, once the
  lifetime ends, renewed), and stops at once when a renewal reports a collision.

References: UIAP §3.2.1.1, §3.2.1.2, §3.2.2, §6; RFC 9562 §5.1, §6.10; RFC 4632 §3.1;
RFC 4291 §2.3; RFC 1034 §3.1.
"""

from __future__ import annotations

import ipaddress
from typing import Final

from uuidkit.errors import SpaceError
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.space import UID, Alignment, DataType, NumberSpace, UIDSpace

__all__ = [
    "DNS_NAMES",
    "INTEGERS",
    "IPV4_ADDRESSES",
    "IPV4_SUBNETS",
    "IPV6_PREFIXES",
    "UUID_NODE_IDS",
    "UUID_NODE_ID_DOMAIN",
    "dns_name_uid",
    "integer_uid",
    "ipv4_address_uid",
    "ipv4_subnet_space",
    "ipv6_prefix_space",
    "node_id_uid",
    "prefix_uid",
]

_NODE_ID_OCTETS: Final = 6
_MAX_DNS_NAME_OCTETS: Final = 255

#: Integers: binary, right-justified, variable length, bit aligned (§3.2.1.2). Zeros are
#: not significant, so 0x0005 == 0x05 == 5, as numbers compare.
INTEGERS: Final = NumberSpace(
    DomainID.parse("0fff:0000:0001:0080"),
    alignment=Alignment.BIT,
    significant_zeros=False,
    name="integers",
)

#: IPv4 addresses: binary, left-justified, 4 octets, hierarchical (§3.2.1.2).
IPV4_ADDRESSES: Final = NumberSpace(
    DomainID.parse("0fff:0000:0002:0000"),
    hierarchical=True,
    min_octets=4,
    max_octets=4,
    name="IPv4 addresses",
)

#: IPv4 CIDR subnets: binary, left-justified, up to 4 octets, bit aligned (§3.2.1.2).
#: Zeros are significant: 10.0.0.0/16 and 10.0.0.0/8 are different subnets.
IPV4_SUBNETS: Final = NumberSpace(
    DomainID.parse("0fff:0000:0003:0000"),
    alignment=Alignment.BIT,
    hierarchical=True,
    max_octets=4,
    name="IPv4 CIDR subnets",
)

#: IPv6 prefixes: binary, left-justified, up to 8 octets (a /64), bit aligned (§3.2.1.2).
IPV6_PREFIXES: Final = NumberSpace(
    DomainID.parse("0fff:0000:0004:0000"),
    alignment=Alignment.BIT,
    hierarchical=True,
    max_octets=8,
    name="IPv6 prefixes",
)

#: DNS names: character data, left-justified after reversing the labels, octet aligned.
DNS_NAMES: Final = NumberSpace(
    DomainID.parse("0fff:0000:0005:0000"),
    data_type=DataType.CHARACTER,
    hierarchical=True,
    name="DNS names",
)

#: The stable DID of :data:`UUID_NODE_IDS` (experimental authority 0x0FFF, UIAP §6).
UUID_NODE_ID_DOMAIN: Final = DomainID.parse("0fff:0000:0006:0000")

#: UUID node IDs: the 48-bit node field of RFC 9562 v1/v6, 6 octets, left-justified and
#: hierarchical so a block of node IDs can be claimed by prefix.
UUID_NODE_IDS: Final = NumberSpace(
    UUID_NODE_ID_DOMAIN,
    hierarchical=True,
    min_octets=_NODE_ID_OCTETS,
    max_octets=_NODE_ID_OCTETS,
    name="UUID node IDs",
)


def integer_uid(value: int, bit_length: int | None = None) -> UID:
    """``value`` as a right-justified, bit-aligned UID of ``bit_length`` bits.

    The default width is the value's own (at least 1 bit). The partial octet is the first
    one, its unused high bits 0 (§3.2.1.1: partial "on the unjustified side").

    References: UIAP §3.2.1.1, §3.2.1.2, §3.2.3.
    """
    width = max(1, value.bit_length()) if bit_length is None else bit_length
    if value < 0 or not 1 <= width <= 255 * 8 or value.bit_length() > width:
        raise SpaceError(f"integer UID: {value} does not fit {width} bits (1 to 2040 bits)")
    octets = (width + 7) // 8
    return UID(value.to_bytes(octets), width - 8 * (octets - 1))


def prefix_uid(packed: bytes, prefix_length: int) -> UID:
    """The first ``prefix_length`` bits of ``packed`` as a left-justified bit-aligned UID.

    References: UIAP §3.2.1.1, §3.2.3 ("Insignificant bits in the last octet MUST be set 0").
    """
    if not 0 <= prefix_length <= 8 * len(packed):
        raise SpaceError(f"prefix length {prefix_length} exceeds {8 * len(packed)} bits")
    octets = (prefix_length + 7) // 8
    if octets == 0:
        return UID(b"")
    bits = prefix_length - 8 * (octets - 1)
    data = bytearray(packed[:octets])
    data[-1] &= 0xFF << (8 - bits) & 0xFF
    return UID(bytes(data), bits)


def ipv4_address_uid(address: str | ipaddress.IPv4Address) -> UID:
    """An IPv4 address as a 4-octet UID for :data:`IPV4_ADDRESSES`.

    References: UIAP §3.2.1.2; RFC 791 §3.1.
    """
    try:
        return UID(ipaddress.IPv4Address(address).packed)
    except ValueError as error:
        raise SpaceError(f"IPv4 address: {error}") from None


def ipv4_subnet_space(network: str | ipaddress.IPv4Network) -> UIDSpace:
    """The prefix claim for an IPv4 CIDR subnet: ``'192.168.0.0/16'`` (UIAP §3.2.2).

    Host bits must be zero (``'192.168.1.0/16'`` is rejected, not silently truncated).

    References: UIAP §3.2.1.2, §3.2.2; RFC 4632 §3.1.
    """
    try:
        parsed = ipaddress.IPv4Network(network)
    except ValueError as error:
        raise SpaceError(f"IPv4 subnet: {error}") from None
    return UIDSpace.prefix(prefix_uid(parsed.network_address.packed, parsed.prefixlen))


def ipv6_prefix_space(network: str | ipaddress.IPv6Network) -> UIDSpace:
    """The prefix claim for an IPv6 prefix of at most 64 bits: ``'2001:db8:1::/48'``.

    References: UIAP §3.2.1.2 ("IPv6 prefixes ... up to 8" octets), §3.2.2; RFC 4291 §2.3.
    """
    try:
        parsed = ipaddress.IPv6Network(network)
    except ValueError as error:
        raise SpaceError(f"IPv6 prefix: {error}") from None
    if parsed.prefixlen > 64:
        raise SpaceError(f"IPv6 prefix: /{parsed.prefixlen} is longer than the 64-bit space")
    return UIDSpace.prefix(prefix_uid(parsed.network_address.packed, parsed.prefixlen))


def dns_name_uid(name: str) -> UID:
    """A DNS name in left-significant form: ``'www.ietf.org'`` -> ``b'org.ietf.www'``.

    §3.2.1: "Right-significant number spaces (eg DNS names) MUST be transformed into a
    left significant form." Labels are reversed; a trailing root dot is dropped; ASCII
    letters are lower-cased because DNS compares names case-insensitively (RFC 4343).
    Internationalised names must be given as A-labels (``xn--...``).

    References: UIAP §3.2.1, §3.2.1.2; RFC 1034 §3.1; RFC 4343.
    """
    labels = name.removesuffix(".").split(".")
    for index, label in enumerate(labels):
        if not label:
            raise SpaceError(f"DNS name {name!r}: empty label at label {index}")
        if not label.isascii():
            raise SpaceError(f"DNS name {name!r}: label {index} is not ASCII (use an A-label)")
    data = ".".join(reversed(labels)).lower().encode("ascii")
    if len(data) > _MAX_DNS_NAME_OCTETS:
        raise SpaceError(f"DNS name: {len(data)} octets, expected at most 255")
    return UID(data)


def node_id_uid(node: int) -> UID:
    """A 48-bit RFC 9562 node ID as a 6-octet UID for the :data:`UUID_NODE_IDS` domain.

    References: RFC 9562 §5.1 (node), §6.10; UIAP §3.2.1.2.
    """
    if type(node) is not int or not 0 <= node < 1 << 48:
        raise SpaceError(f"node ID: expected 0 <= node < 2**48, found {node!r}")
    return UID(node.to_bytes(_NODE_ID_OCTETS))
