"""Links that go down and come back, and interfaces that appear while a node runs.

    a.e0 --- e0.b.e1 --- e0.c          (the b-c link is the one cut)

References: UIAP §2.1.2 (merged sites: "The collision will only be detected if one of the
UIAP devices ... attempts to re-claim the UID space"), §2.4.3 ("active interface"),
§4.2.2.2 and §4.4 (a reclaim takes precedence over a new claim).
"""

from __future__ import annotations

from typing import Any

from netns_topology import DOMAIN, FAST, Network, NodeProcess

#: A new claim that stays in progress for 12 s: long enough that a reclaim sent right
#: after it starts is certain to meet it in progress, on any load.
SLOW = {"claim_period": 4.0, "claim_timeout": 0.0, "engine": {"flood_record_lifetime": 60.0}}


def _participating(node: NodeProcess, interface: str, *, expected: bool) -> None:
    def check(status: dict[str, Any]) -> bool:
        names = {i["name"] for i in status["interfaces"] if i["participating"]}
        return (interface in names) == expected

    node.wait_until(check, f"{'participating' if expected else 'off'} on {interface}")


def test_partition_merge_and_reclaim(network: Network) -> None:
    for host in "abc":
        network.add_host(host)
    network.link("a", "e0", "b", "e0")
    network.link("b", "e1", "c", "e0")
    nodes = network.start_nodes(
        {
            "a": {"interfaces": ["e0"], **FAST},
            "b": {"interfaces": ["e0", "e1"], **SLOW},
            "c": {"interfaces": ["e0"], **FAST},
        }
    )
    a, b, c = nodes["a"], nodes["b"], nodes["c"]

    # Partition: the b-c link goes down; both sides stop using it.
    network.set_link("b", "e1", up=False)
    _participating(b, "e1", expected=False)
    _participating(c, "e0", expected=False)
    # Conflicting claims on both sides are both granted: each site is unique to itself.
    assert a.claim(DOMAIN, {"unique": "10"})["result"] == "succeeded"
    assert c.claim(DOMAIN, {"unique": "10"})["result"] == "succeeded"

    # Merge: the link comes back and is used again.
    network.set_link("b", "e1", up=True)
    _participating(b, "e1", expected=True)
    _participating(c, "e0", expected=True)
    # a reclaims (§4.4): c holds the space and denies; the collision is found and a's
    # claim ends. Exactly one holder remains, and a third device is denied by it.
    reclaim = a.claim(DOMAIN, {"unique": "10"}, reclaim=True)
    assert reclaim["result"] == "failed"
    assert reclaim["reason"] in ("denied", "reclaim-denied")
    assert a.claim(DOMAIN, {"unique": "10"})["reason"] == "denied"

    # §4.2.2.2: a reclaim meeting a new claim in progress wins; the new claim fails
    # (preempted, or denied if the new claim's flood reached the reclaimer first).
    pending = b.request("start-claim", domain=DOMAIN, space={"unique": "20"})
    assert c.claim(DOMAIN, {"unique": "20"}, reclaim=True)["result"] == "succeeded"
    result = b._wait(
        lambda line: line.get("event") == "ClaimFailed" and line.get("claim") == pending["handle"]
    )
    assert result["reason"] in ("FailureReason.PREEMPTED_BY_RECLAIM", "FailureReason.DENIED")


def test_an_interface_that_appears_while_running_is_used(network: Network) -> None:
    network.add_host("a")
    network.add_host("b")
    # interfaces=None: every usable interface; a has none yet. Polling is all but off, so
    # only the kernel's rtnetlink notifications can make a notice the changes in time.
    a = network.start_node("a", {"interfaces": None, **FAST, "interface_poll_interval": 3600})
    assert a.ready["interfaces"] == []
    network.link("a", "e0", "b", "e0")
    _participating(a, "e0", expected=True)
    b = network.start_node("b", {"interfaces": None, **FAST})
    b.wait_participating(["e0"])
    assert b.claim(DOMAIN, {"unique": "30"})["result"] == "succeeded"
    assert a.claim(DOMAIN, {"unique": "30"})["reason"] == "denied"
    # The link is deleted (a's e0 vanishes), then made again with a new index.
    network.exec("a", "ip", "link", "del", "e0")
    _participating(a, "e0", expected=False)
    network.link("a", "e0", "b", "e0")
    _participating(a, "e0", expected=True)
    b.wait_participating(["e0"])
    assert a.claim(DOMAIN, {"unique": "30"})["reason"] == "denied"
