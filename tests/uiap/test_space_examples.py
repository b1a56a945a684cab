"""The example number spaces of UIAP §3.2.1.2 and the UUID node-ID domain, end to end."""

from __future__ import annotations

import pytest

from uuidkit.errors import SpaceError
from uuidkit.uiap import (
    UID,
    Alignment,
    DataType,
    Justification,
    Message,
    NumberSpace,
    UIDSpace,
    decode,
    encode,
)
from uuidkit.uiap.numberspaces import (
    DNS_NAMES,
    INTEGERS,
    IPV4_ADDRESSES,
    IPV4_SUBNETS,
    IPV6_PREFIXES,
    UUID_NODE_IDS,
    dns_name_uid,
    integer_uid,
    ipv4_address_uid,
    ipv4_subnet_space,
    ipv6_prefix_space,
    node_id_uid,
    prefix_uid,
)

#: §3.2.1.2's table: (space, data, justification, alignment, max octets).
TABLE = [
    (INTEGERS, DataType.BINARY, Justification.RIGHT, Alignment.BIT, 255),
    (IPV4_ADDRESSES, DataType.BINARY, Justification.LEFT, Alignment.OCTET, 4),
    (IPV4_SUBNETS, DataType.BINARY, Justification.LEFT, Alignment.BIT, 4),
    (IPV6_PREFIXES, DataType.BINARY, Justification.LEFT, Alignment.BIT, 8),
    (DNS_NAMES, DataType.CHARACTER, Justification.LEFT, Alignment.OCTET, 255),
    (UUID_NODE_IDS, DataType.BINARY, Justification.LEFT, Alignment.OCTET, 6),
]


@pytest.mark.parametrize(
    ("space", "data", "just", "align", "octets"), TABLE, ids=[row[0].name for row in TABLE]
)
def test_characteristics_follow_the_table(
    space: NumberSpace, data: DataType, just: Justification, align: Alignment, octets: int
) -> None:
    assert (space.data_type, space.justification, space.alignment) == (data, just, align)
    assert space.max_octets == octets
    assert space.domain_id.authority_prefix == 0x0FFF  # §6 experimental: nothing allocated


def test_example_domains_are_distinct() -> None:
    assert len({space.domain_id for space, *_ in TABLE}) == len(TABLE)


def test_dns_names_are_made_left_significant() -> None:
    # §3.2.1.2: "'www.ietf.org' becomes 'org.ietf.www'".
    assert dns_name_uid("www.ietf.org") == UID(b"org.ietf.www")
    assert dns_name_uid("WWW.IETF.ORG.") == UID(b"org.ietf.www")
    www, mail = dns_name_uid("www.ietf.org"), dns_name_uid("mail.ietf.org")
    zone = UIDSpace.prefix(b"org.ietf.")
    assert DNS_NAMES.overlaps(zone, UIDSpace.unique(www))
    assert DNS_NAMES.overlaps(zone, UIDSpace.unique(mail))
    assert not DNS_NAMES.overlaps(zone, UIDSpace.unique(dns_name_uid("ietf.com")))
    for bad in ("a..b", "", "bücher.de", "a." * 128 + "b"):
        with pytest.raises(SpaceError):
            dns_name_uid(bad)


def test_integers_compare_as_numbers() -> None:
    assert integer_uid(0xABC) == UID(b"\x0a\xbc", 4)  # 12 bits: the first octet is partial
    assert integer_uid(5, 16) == UID(b"\x00\x05", 8)
    assert INTEGERS.compare(integer_uid(5), integer_uid(5, 16)) == 0
    assert INTEGERS.compare(integer_uid(256), integer_uid(255)) == 1
    claim = UIDSpace.range(integer_uid(13), integer_uid(42))  # §3.2.2's example range
    assert INTEGERS.overlaps(claim, UIDSpace.unique(integer_uid(42, 32)))
    assert not INTEGERS.overlaps(claim, UIDSpace.unique(integer_uid(43)))
    INTEGERS.check_space(claim)
    for value, width in ((-1, None), (256, 8), (1, 0)):
        with pytest.raises(SpaceError):
            integer_uid(value, width)


def test_ipv4_addresses_and_subnets() -> None:
    address = ipv4_address_uid("192.168.1.20")
    assert address == UID(bytes([192, 168, 1, 20]))
    IPV4_ADDRESSES.check_uid(address)
    # §3.2.2: "everything beginning with 192.168 (i.e. subnet 192.168/16)".
    subnet = ipv4_subnet_space("192.168.0.0/16")
    assert subnet == UIDSpace.prefix(bytes([192, 168]))
    assert IPV4_ADDRESSES.overlaps(subnet, UIDSpace.unique(address))
    slash20 = ipv4_subnet_space("10.1.16.0/20")
    assert slash20.first == UID(bytes([10, 1, 0x10]), 4)
    assert IPV4_SUBNETS.overlaps(slash20, ipv4_subnet_space("10.1.31.0/24"))
    assert not IPV4_SUBNETS.overlaps(slash20, ipv4_subnet_space("10.1.32.0/24"))
    assert ipv4_subnet_space("0.0.0.0/0").first == UID(b"")
    with pytest.raises(SpaceError, match="host bits"):
        ipv4_subnet_space("192.168.1.0/16")
    with pytest.raises(SpaceError):
        ipv4_address_uid("192.168.1")


def test_ipv6_56_inside_48() -> None:
    outer = ipv6_prefix_space("2001:db8:1::/48")
    inner = ipv6_prefix_space("2001:db8:1:100::/56")
    sibling = ipv6_prefix_space("2001:db8:2::/48")
    odd = ipv6_prefix_space("2001:db8:1:80::/57")  # bit aligned: 7 octets + 1 bit
    assert odd.first == UID(bytes.fromhex("20010db8000100") + b"\x80", 1)
    assert IPV6_PREFIXES.overlaps(outer, inner)
    assert IPV6_PREFIXES.overlaps(outer, odd)
    assert not IPV6_PREFIXES.overlaps(inner, odd)
    assert not IPV6_PREFIXES.overlaps(sibling, inner)
    for claim in (outer, inner, odd):
        IPV6_PREFIXES.check_space(claim)
    with pytest.raises(SpaceError, match="64-bit"):
        ipv6_prefix_space("2001:db8::/80")


def test_prefix_uid_masks_host_bits() -> None:
    assert prefix_uid(b"\xff\xff", 12) == UID(b"\xff\xf0", 4)
    with pytest.raises(SpaceError):
        prefix_uid(b"\xff", 9)


def test_uuid_node_ids_claim_and_wire() -> None:
    node = node_id_uid(0x0211_22FF_FE33)
    assert node == UID(bytes.fromhex("021122fffe33"))
    block = UIDSpace.prefix(node.data[:5])  # 256 node IDs
    assert UUID_NODE_IDS.overlaps(block, UIDSpace.unique(node))
    assert not UUID_NODE_IDS.overlaps(block, UIDSpace.unique(node_id_uid(0x0211_22FF_FF00)))
    message = Message.claim_attempt(7, 1, UUID_NODE_IDS.domain_id, UIDSpace.unique(node), 3600)
    decoded = decode(encode(message), domains={UUID_NODE_IDS.domain_id: UUID_NODE_IDS})
    assert decoded == message
    with pytest.raises(SpaceError):
        node_id_uid(1 << 48)
