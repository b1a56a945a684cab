"""The codec's one piece of module state: a bounded cache of parsed Domain IDs.

A site uses a handful of domains, so ``decode`` parses each Domain ID's 8 octets once
(UIAP §4.1, §6.1) and keeps the result in a least-recently-used cache shared by every engine
of the process. Domain IDs are immutable values, so no decode depends on an earlier one;
the cache is fed from the network, so it has a cap (the project's rule for every table fed
from the network).
"""

from __future__ import annotations

from uuidkit import uiap
from uuidkit.uiap import codec


def _datagram(domain: str) -> bytes:
    message = uiap.Message.claim_attempt(
        device_id=0x1122334455667788,
        sequence=7,
        domain=uiap.DomainID.parse(domain),
        space=uiap.UIDSpace.unique(b"\x2a"),
        lifetime=3600,
    )
    return uiap.encode(message)


def test_a_flood_of_distinct_domains_keeps_the_cache_at_its_cap() -> None:
    cap = codec._domain_from_wire.cache_info().maxsize
    assert cap is not None
    for number in range(cap * 4):
        uiap.decode(_datagram(f"0fff:{number >> 16:04x}:{number & 0xFFFF:04x}:0000"))
    assert codec._domain_from_wire.cache_info().currsize <= cap


def test_a_decode_does_not_depend_on_what_was_decoded_before() -> None:
    datagram = _datagram("0fff:0000:00e0:0000")
    codec._domain_from_wire.cache_clear()
    cold = uiap.decode(datagram)
    for number in range(1000):  # evict it, then decode it again from a full cache
        uiap.decode(_datagram(f"0fff:0001:{number:04x}:0000"))
    assert uiap.decode(datagram) == cold
    assert uiap.decode(datagram).domain == uiap.DomainID.parse("0fff:0000:00e0:0000")
