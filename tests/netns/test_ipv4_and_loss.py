"""UIAP over IPv4 link-local multicast, and over a link that loses datagrams.

Loss is real: an nftables rule in the holder's namespace drops a random half of the
Claim-Attempts arriving on the claim port (the kernel here has no netem). The test
asserts what loss may and may not do: a claim is denied exactly when at least one of its
Claim-Attempts reached the holder, and the rule did drop datagrams.

References: UIAP §2.3 ("could equally be implemented over IPv4"), §2.4.1 (three
Claim-Attempts "to help protect against dropped packets"), §4.3.2.
"""

from __future__ import annotations

import shutil

import pytest
from netns_topology import DOMAIN, FAST, Network


def test_ipv4_shared_segment(network: Network) -> None:
    hosts = ["a", "b", "c"]
    for host in hosts:
        network.add_host(host)
    network.segment(hosts)
    # c's first address is not link-local: its 169.254/16 address (RFC 3927) is a second
    # one, which the node must find and send from.
    network.add_ipv4("c", "e0", "10.7.0.3/16")
    for number, host in enumerate(hosts, start=1):
        network.add_ipv4(host, "e0", f"169.254.7.{number}/16")
    config = {"interfaces": ["e0"], "family": "ipv4", "port": 41021, "reply_port": 41022}
    nodes = network.start_nodes({host: config | FAST for host in hosts})
    assert nodes["a"].claim(DOMAIN, {"unique": "2a"})["result"] == "succeeded"
    denied = nodes["b"].claim(DOMAIN, {"unique": "2a"})
    assert (denied["result"], denied["reason"]) == ("failed", "denied")
    assert nodes["c"].claim(DOMAIN, {"unique": "2b"})["result"] == "succeeded"
    status = nodes["a"].status()
    assert status["family"] == "ipv4" and status["group"] == "224.0.0.254"
    assert status["transport"]["dropped"] == {}


#: Claims made across the lossy link; each is denied unless all its attempts are lost.
LOSSY_CLAIMS = 16


def test_loss_on_a_real_link(network: Network) -> None:
    if shutil.which("nft") is None:
        pytest.skip("nft (nftables) is not installed: apt-get install nftables")
    network.add_host("a")
    network.add_host("b")
    network.link("a", "e0", "b", "e0")
    nodes = network.start_nodes({host: {"interfaces": ["e0"], **FAST} for host in "ab"})
    a, b = nodes["a"], nodes["b"]
    spaces = [{"unique": f"{n:02x}"} for n in range(LOSSY_CLAIMS)]
    held = b.requests([{"op": "claim", "domain": DOMAIN, "space": space} for space in spaces])
    assert [reply["result"] for reply in held] == ["succeeded"] * LOSSY_CLAIMS
    network.exec("b", "nft", "add", "table", "inet", "uiaploss")
    hook = "{ type filter hook input priority 0 ; }"
    network.exec("b", "nft", "add", "chain", "inet", "uiaploss", "input", hook)
    rule = "udp dport 1021 numgen random mod 100 < 50 counter drop"
    network.exec("b", "nft", "add", "rule", "inet", "uiaploss", "input", *rule.split())

    seen_by_holder = 0
    for space in spaces:
        before = b.status()["engine"]["attempts_received"]
        result = a.claim(DOMAIN, space)
        heard = b.status()["engine"]["attempts_received"] - before
        # Loss can hide a claim from its holder (then it is wrongly granted, which is why
        # §2.4.1 sends three attempts) but can never grant one the holder heard.
        assert (result["result"] == "failed") == (heard > 0), (result, heard)
        if heard:
            assert result["reason"] == "denied"
            seen_by_holder += 1
    counters = network.exec("b", "nft", "list", "table", "inet", "uiaploss").stdout
    dropped = int(counters.split("counter packets ")[1].split()[0])
    assert dropped > 0, counters
    print(f"loss: {dropped} attempts dropped; {seen_by_holder}/{LOSSY_CLAIMS} claims heard")
