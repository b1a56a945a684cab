"""A line of four hosts over three links: the middle hosts forward between two interfaces.

    a.e0 --- e0.b.e1 --- e0.c.e1 --- e0.d

References: UIAP §2.4.3 (forward out every other interface), §2.4.5 and §4.3.2 (the
Claim-Deny retraces the flood hop by hop), §4.1 (Hop Limit: "Messages with a hop limit of 0
SHOULD be processed but MUST NOT be forwarded"), §4.2.2.1.
"""

from __future__ import annotations

from typing import Any

from netns_topology import DOMAIN, FAST, Network, NodeProcess

#: UIAP §2.4.1: a new claim sends three Claim-Attempt floods (the engine's default).
FLOODS_PER_CLAIM = 3
#: These tests count the draft's datagrams one by one: engines with the draft's behaviour
#: only (no copies, no re-verification; docs/uiap.md "Beyond the draft").
DRAFT = {**FAST, "engine": {"copies": 1, "verify_interval": None, "tie_break": False}}


def _line(network: Network) -> None:
    for host in "abcd":
        network.add_host(host)
    network.link("a", "e0", "b", "e0")
    network.link("b", "e1", "c", "e0")
    network.link("c", "e1", "d", "e0")


def _engine(node: NodeProcess) -> dict[str, Any]:
    engine: dict[str, Any] = node.status()["engine"]
    return engine


def _delta(before: dict[str, Any], after: dict[str, Any], key: str) -> int:
    return int(after[key]) - int(before[key])


def test_line_of_four_forwarding_deny_path_and_hop_limit(network: Network) -> None:
    _line(network)
    interfaces = {"a": ["e0"], "b": ["e0", "e1"], "c": ["e0", "e1"], "d": ["e0"]}
    nodes = network.start_nodes({h: {"interfaces": i, **DRAFT} for h, i in interfaces.items()})

    # A claim nobody contests floods the whole line: each middle host forwards each flood
    # once, out its other interface only; in a line no one ever sees a copy twice.
    before = {h: _engine(n) for h, n in nodes.items()}
    assert nodes["a"].claim(DOMAIN, {"unique": "01"})["result"] == "succeeded"
    after = {h: _engine(n) for h, n in nodes.items()}
    for host in "bc":
        assert _delta(before[host], after[host], "forwarded") == FLOODS_PER_CLAIM
    for host in "bcd":
        assert _delta(before[host], after[host], "attempts_received") == FLOODS_PER_CLAIM
    assert _delta(before["d"], after["d"], "forwarded") == 0
    sent_b = nodes["b"].status()["transport"]["sent_by_interface"]
    assert sent_b == {"e1": FLOODS_PER_CLAIM}
    for host in "abcd":
        assert after[host]["dropped"].get("duplicate", 0) == 0

    # d holds 02; a's claim is denied three hops away, the deny retracing c then b.
    assert nodes["d"].claim(DOMAIN, {"unique": "02"})["result"] == "succeeded"
    before = {h: _engine(n) for h, n in nodes.items()}
    denied = nodes["a"].claim(DOMAIN, {"unique": "02"})
    assert (denied["result"], denied["reason"]) == ("failed", "denied")
    after = {h: _engine(n) for h, n in nodes.items()}
    assert _delta(before["d"], after["d"], "denied") >= 1
    for host in "cb":
        assert _delta(before[host], after[host], "denies_forwarded") >= 1
    assert _delta(before["a"], after["a"], "denies_received") >= 1


def test_hop_limit_is_respected(network: Network) -> None:
    _line(network)
    interfaces = {"b": ["e0", "e1"], "c": ["e0", "e1"], "d": ["e0"]}
    nodes = network.start_nodes({h: {"interfaces": i, **DRAFT} for h, i in interfaces.items()})
    assert nodes["d"].claim(DOMAIN, {"unique": "03"})["result"] == "succeeded"
    # a sends its floods with Hop Limit 1: b receives 1 and forwards 0; c processes the
    # 0 and must not forward it, so d, which holds the space, never hears of the claim.
    a = network.start_node("a", {"interfaces": ["e0"], **FAST, "engine": {"hop_limit": 1}})
    before = {h: _engine(n) for h, n in nodes.items()}
    assert a.claim(DOMAIN, {"unique": "03"})["result"] == "succeeded"
    after = {h: _engine(n) for h, n in nodes.items()}
    assert _delta(before["b"], after["b"], "forwarded") == FLOODS_PER_CLAIM
    assert _delta(before["c"], after["c"], "hop_limit_reached") == FLOODS_PER_CLAIM
    assert _delta(before["c"], after["c"], "forwarded") == 0
    assert _delta(before["d"], after["d"], "attempts_received") == 0


def test_a_loop_floods_each_interface_once(network: Network) -> None:
    """A triangle a-b-c-a: every flood reaches a and c twice; each forwards it once.

    UIAP §4.2.2.1: "If a UIAP device receives a duplicate copy of a Claim-Attempt message
    on a second interface ..., the duplicate message MUST be discarded"; §4.2.2.3: the
    originator remembers its own floods, so one coming back is dropped too.
    """
    for host in "abc":
        network.add_host(host)
    network.link("a", "e0", "b", "e0")
    network.link("b", "e1", "c", "e0")
    network.link("c", "e1", "a", "e1")
    both = {"interfaces": ["e0", "e1"], **DRAFT}
    nodes = network.start_nodes({host: both for host in "abc"})
    before = {h: _engine(n) for h, n in nodes.items()}
    assert nodes["b"].claim(DOMAIN, {"unique": "04"})["result"] == "succeeded"
    after = {h: _engine(n) for h, n in nodes.items()}
    for host in "ac":
        assert _delta(before[host], after[host], "attempts_received") == FLOODS_PER_CLAIM
        # Out the one interface the flood did not come in on, once per flood.
        assert _delta(before[host], after[host], "forwarded") == FLOODS_PER_CLAIM
    assert _delta(before["b"], after["b"], "attempts_received") == 0
    # Each forwarded copy arrives once more somewhere and is dropped as a duplicate.
    duplicates = sum(
        after[h]["dropped"].get("duplicate", 0) - before[h]["dropped"].get("duplicate", 0)
        for h in "abc"
    )
    assert duplicates == 2 * FLOODS_PER_CLAIM
