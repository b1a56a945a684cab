"""The transport's inbound checks, without sockets: each drop reason, each family.

References: UIAP §3.1, §4.2.2.1 (link-local source), §4.2 and §4.3 (multicast attempts,
unicast denies).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uuidkit.net import Arrival, Channel, Family, TransportDrop, check_arrival

GROUP6, GROUP4 = "ff02::114", "224.0.0.254"
PEER6, OURS6 = "fe80::2", "fe80::1"
PEER4, OURS4 = "169.254.0.2", "169.254.0.1"
PARTICIPATING = {7: "e0"}


def _check(
    arrival: Arrival, channel: Channel = Channel.CLAIM, family: Family = Family.IPV6
) -> object:
    return check_arrival(
        arrival,
        channel,
        family=family,
        group=GROUP6 if family is Family.IPV6 else GROUP4,
        participating=PARTICIPATING,
        own_addresses={OURS6, OURS4},
        max_datagram_octets=100,
    )


def _arrival(**fields: object) -> Arrival:
    base: dict[str, object] = {
        "data": bytes(40),
        "source": PEER6,
        "source_port": 1021,
        "destination": GROUP6,
        "ifindex": 7,
        "truncated": False,
    }
    return Arrival(**(base | fields))  # type: ignore[arg-type]


def test_a_valid_flood_is_handed_on_with_its_interface_name() -> None:
    assert _check(_arrival()) == "e0"


def test_a_valid_deny_is_unicast_to_us() -> None:
    assert _check(_arrival(destination=OURS6), Channel.REPLY) == "e0"


@pytest.mark.parametrize(
    ("fields", "channel", "reason"),
    [
        ({"data": bytes(101)}, Channel.CLAIM, TransportDrop.OVERSIZED),
        ({"truncated": True}, Channel.CLAIM, TransportDrop.OVERSIZED),
        ({"ifindex": 8}, Channel.CLAIM, TransportDrop.NOT_PARTICIPATING),
        ({"ifindex": None}, Channel.CLAIM, TransportDrop.NOT_PARTICIPATING),
        # §4.2.2.1: "MUST use a valid link-local address as the source address".
        ({"source": "2001:db8::2"}, Channel.CLAIM, TransportDrop.NOT_LINK_LOCAL),
        ({"source": "fd00::2"}, Channel.CLAIM, TransportDrop.NOT_LINK_LOCAL),
        ({"source": "not an address"}, Channel.CLAIM, TransportDrop.NOT_LINK_LOCAL),
        ({"source": OURS6}, Channel.CLAIM, TransportDrop.OWN_DATAGRAM),
        ({"destination": OURS6}, Channel.CLAIM, TransportDrop.WRONG_DESTINATION),
        ({"destination": None}, Channel.CLAIM, TransportDrop.WRONG_DESTINATION),
        ({"destination": GROUP6}, Channel.REPLY, TransportDrop.WRONG_DESTINATION),
        ({"destination": None}, Channel.REPLY, TransportDrop.WRONG_DESTINATION),
    ],
)
def test_each_drop_reason(
    fields: dict[str, object], channel: Channel, reason: TransportDrop
) -> None:
    assert _check(_arrival(**fields), channel) is reason


@pytest.mark.parametrize(
    ("source", "destination", "channel", "expected"),
    [
        (PEER4, GROUP4, Channel.CLAIM, "e0"),
        (PEER4, OURS4, Channel.REPLY, "e0"),
        ("192.168.1.2", GROUP4, Channel.CLAIM, TransportDrop.NOT_LINK_LOCAL),
        (OURS4, GROUP4, Channel.CLAIM, TransportDrop.OWN_DATAGRAM),
        (PEER4, "239.1.1.1", Channel.REPLY, TransportDrop.WRONG_DESTINATION),
        (PEER6, GROUP4, Channel.CLAIM, TransportDrop.NOT_LINK_LOCAL),
    ],
)
def test_ipv4(source: str, destination: str, channel: Channel, expected: object) -> None:
    arrival = _arrival(source=source, destination=destination)
    assert _check(arrival, channel, Family.IPV4) == expected


@given(
    data=st.binary(max_size=200),
    source=st.one_of(st.text(max_size=40), st.ip_addresses().map(str)),
    destination=st.one_of(st.none(), st.text(max_size=40), st.ip_addresses().map(str)),
    ifindex=st.one_of(st.none(), st.integers(-(2**31), 2**32)),
    truncated=st.booleans(),
    channel=st.sampled_from(Channel),
    family=st.sampled_from(Family),
)
def test_never_raises(
    data: bytes,
    source: str,
    destination: str | None,
    ifindex: int | None,
    truncated: bool,
    channel: Channel,
    family: Family,
) -> None:
    arrival = Arrival(data, source, 1, destination, ifindex, truncated)
    verdict = _check(arrival, channel, family)
    assert verdict == "e0" or isinstance(verdict, TransportDrop)
