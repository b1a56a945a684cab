"""The UIAP data layer's hot paths: decode, encode, and the overlap test, per call.

Run: ``python3 bench/bench_uiap_codec.py`` (``--quick`` for a fast smoke run).

Every figure is a ratio to the floor of the same run: ``struct.unpack_from`` of the 36-octet
header alone, which any Python decoder must pay. The engine decodes every datagram it
receives and asks the overlap question once per claim it defends, so these bound how many
datagrams per second one core can examine.

References: UIAP §3.2.4, §4.1.
"""

from __future__ import annotations

import struct
import sys

from common import Timer
from uuidkit.uiap import UID, DomainID, Message, UIDSpace, decode, encode, spaces_overlap
from uuidkit.uiap.numberspaces import IPV6_PREFIXES, UUID_NODE_IDS, ipv6_prefix_space, node_id_uid

BASELINE = "struct unpack of the 36-octet header"


def main(argv: list[str]) -> None:
    timer = Timer(
        number=2_000 if "--quick" in argv else 50_000, repeat=3 if "--quick" in argv else 7
    )
    header = struct.Struct(">BBBBIQII8sBBBB")
    node_claim = Message.claim_attempt(
        0x021122FFFE334455,
        7,
        UUID_NODE_IDS.domain_id,
        UIDSpace.unique(node_id_uid(0x0211_22FF_FE33)),
        3600,
    )
    node_datagram = encode(node_claim)
    range_claim = node_claim.replace(
        domain=DomainID.parse("0fff:0:1:80"),
        space=UIDSpace.range(UID(b"\x0a\xbc", 4), UID(b"\x1f\xff", 5)),
    )
    range_datagram = encode(range_claim)
    outer, inner = ipv6_prefix_space("2001:db8:1::/48"), ipv6_prefix_space("2001:db8:1:100::/56")
    did = UUID_NODE_IDS.domain_id
    a, b = node_claim.space, UIDSpace.unique(node_id_uid(0x0211_22FF_FE34))

    timer.measure(BASELINE, lambda: header.unpack_from(node_datagram))
    timer.measure("decode: unique 6-octet node ID", lambda: decode(node_datagram))
    timer.measure("decode: bit-aligned range, J = 1", lambda: decode(range_datagram))
    timer.measure("encode: unique 6-octet node ID", lambda: encode(node_claim))
    timer.measure("deny(): Claim-Deny from an attempt", node_claim.deny)
    timer.measure("overlap: two node IDs (generic rules)", lambda: spaces_overlap(a, b, did))
    timer.measure("overlap: IPv6 /48 vs /56 prefixes", lambda: IPV6_PREFIXES.overlaps(outer, inner))
    timer.report(BASELINE, "UIAP data layer")


if __name__ == "__main__":
    main(sys.argv[1:])
