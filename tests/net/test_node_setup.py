"""UIAPNode set-up errors, without namespaces: they name what is wrong (TransportError)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from uuidkit.errors import TransportError
from uuidkit.net import TransportConfig, UIAPNode


def test_a_named_interface_that_does_not_exist_is_refused() -> None:
    node = UIAPNode(TransportConfig(interfaces=("nosuch0",), port=47021, reply_port=47022))
    with pytest.raises(TransportError, match="no interface named 'nosuch0'") as caught:
        asyncio.run(node.start())
    assert caught.value.field == "interfaces"
    assert isinstance(caught.value, ValueError)


def test_a_port_in_use_is_refused_clearly() -> None:
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as holder:
        holder.bind(("::", 0))
        port = holder.getsockname()[1]
        node = UIAPNode(TransportConfig(interfaces=(), port=port, reply_port=port + 1))
        with pytest.raises(TransportError, match=f"UDP port {port} is in use"):
            asyncio.run(node.start())


def test_claim_before_start_is_an_error() -> None:
    node = UIAPNode(TransportConfig(interfaces=()))
    with pytest.raises(TransportError, match="not running"):
        node.release(1)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"port": 0}, "port"),
        ({"reply_port": 70000}, "reply_port"),
        ({"port": 5000, "reply_port": 5000}, "reply_port"),
        ({"group": "ff05::114"}, "group"),
        ({"group": "2001:db8::1"}, "group"),
        ({"ipv4_group": "239.0.0.1"}, "ipv4_group"),
        ({"group": "nonsense"}, "group"),
        ({"max_datagram_octets": 10}, "max_datagram_octets"),
        ({"ip_hop_limit": 0}, "ip_hop_limit"),
        ({"claim_period": -1.0}, "claim_period"),
        ({"interfaces": "eth0"}, "interfaces"),
        ({"interface_poll_interval": 0}, "interface_poll_interval"),
    ],
)
def test_bad_configuration_names_the_field(fields: dict[str, object], field: str) -> None:
    with pytest.raises(TransportError) as caught:
        TransportConfig(**fields)  # type: ignore[arg-type]
    assert caught.value.field == field


def test_timers_pass_through_to_the_engine() -> None:
    node = UIAPNode(TransportConfig(claim_period=0.05, claim_timeout=0.1))
    assert (node.engine.config.claim_period, node.engine.config.claim_timeout) == (0.05, 0.1)
    default = UIAPNode(TransportConfig())
    # UIAP §10: the draft's 500 ms and 1 s stay the defaults.
    assert (default.engine.config.claim_period, default.engine.config.claim_timeout) == (0.5, 1.0)
