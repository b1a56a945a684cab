"""UIAP between real hosts: network namespaces joined by a bridge (one shared segment).

References: UIAP §2.3, §2.4.1, §2.4.5, §3.1, §4.2.2.1, §4.3.2.
"""

from __future__ import annotations

from netns_topology import Network

DOMAIN = "0fff:0000:00e0:0000"
#: Fast timers: claims run in tens of milliseconds. Outcomes are asserted, not timings.
FAST = {"claim_period": 0.05, "claim_timeout": 0.1}


def test_three_hosts_claim_granted_then_denied(network: Network) -> None:
    hosts = ["a", "b", "c"]
    for host in hosts:
        network.add_host(host)
    network.segment(hosts)
    # The draft's ports (RFC 4727 experiment values 1021/1022): root may bind them.
    nodes = {host: network.start_node(host, {"interfaces": ["e0"], **FAST}) for host in hosts}
    for node in nodes.values():
        assert node.ready["interfaces"] == ["e0"]

    granted = nodes["a"].claim(DOMAIN, {"unique": "2a"})
    assert granted["result"] == "succeeded"
    # §2.4.2: the holder denies; §4.3.2: the deny comes back unicast and fails the claim.
    denied = nodes["b"].claim(DOMAIN, {"unique": "2a"})
    assert (denied["result"], denied["reason"]) == ("failed", "denied")
    # A different UID does not conflict.
    assert nodes["c"].claim(DOMAIN, {"unique": "2b"})["result"] == "succeeded"

    holder = nodes["a"].status()
    assert holder["engine"]["denied"] >= 1
    assert holder["transport"]["dropped"] == {}
    claimant = nodes["b"].status()
    assert claimant["engine"]["denies_received"] >= 1
