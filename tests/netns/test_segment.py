"""UIAP between real hosts: network namespaces joined by a bridge (one shared segment).

References: UIAP §2.3, §2.4.1, §2.4.5, §3.1, §4.2.2.1, §4.3.2.
"""

from __future__ import annotations

from netns_topology import DOMAIN, FAST, Network


def test_three_hosts_claim_granted_then_denied(network: Network) -> None:
    hosts = ["a", "b", "c"]
    for host in hosts:
        network.add_host(host)
    network.segment(hosts)
    # The draft's ports (RFC 4727 experiment values 1021/1022): root may bind them.
    nodes = network.start_nodes({host: {"interfaces": ["e0"], **FAST} for host in hosts})

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


def test_an_authenticator_seals_and_opens_every_datagram(network: Network) -> None:
    """UIAP §7: only devices holding the key take part; the rest are dropped as ``auth``."""
    hosts = ["a", "b", "c", "d"]
    for host in hosts:
        network.add_host(host)
    network.segment(hosts)
    site, stranger = {"auth_key": "11" * 32}, {"auth_key": "22" * 32}
    nodes = network.start_nodes(
        {
            "a": {"interfaces": ["e0"], **FAST, **site},
            "b": {"interfaces": ["e0"], **FAST, **site},
            "c": {"interfaces": ["e0"], **FAST, **stranger},
            "d": {"interfaces": ["e0"], **FAST},  # no authenticator: plain UIAP
        }
    )
    assert nodes["a"].claim(DOMAIN, {"unique": "7a"})["result"] == "succeeded"
    denied = nodes["b"].claim(DOMAIN, {"unique": "7a"})
    assert (denied["result"], denied["reason"]) == ("failed", "denied")
    # Outsiders are not part of the authenticated site: a never hears them, so it never
    # denies them (nor can they deny a's site).
    for outsider in "cd":
        before = nodes["a"].status()["transport"]["dropped"].get("auth", 0)
        assert nodes[outsider].claim(DOMAIN, {"unique": "7a"})["result"] == "succeeded"
        after = nodes["a"].status()["transport"]["dropped"].get("auth", 0)
        assert after - before >= 1
