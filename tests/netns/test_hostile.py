"""A hostile host on the segment: forged and malformed datagrams faster than a device reads.

Asserted is what must hold under that overload, however loaded the machine: nothing
crashes; every kind the hostile sender sends is dropped somewhere and counted under its
reason (by the transport before the engine, or by the engine), never more often than it
was sent; a claim nobody holds is granted; a claim of a held uid is denied, or, if it was
granted, a counter shows the overload that kept the holder's deny from arriving in time
(never a silent wrong grant); and once the flood has drained, a device still answers a
conflicting claim. Whether one particular honest datagram is read in time under a flood
is not asserted: without a site key an on-link sender can always disrupt (UIAP §7).

With a site key (the last test) the same flood costs honest claims nothing: every forged
datagram fails its MAC in the transport, before the engine and so before any rate budget,
table or counter of the engine sees it, and a claim of a held uid is denied.

References: UIAP §4.1, §4.2.2.1 (link-local source), §4.3.2, §7.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from netns_topology import DOMAIN, FAST, ROOT, WAIT_S, Network, NodeProcess

SENDER = Path(__file__).with_name("hostile_sender.py")


def test_hostile_host_is_counted_and_honest_claims_work(network: Network) -> None:
    hosts = ["a", "b", "h"]
    for host in hosts:
        network.add_host(host)
    network.segment(hosts)
    network.exec("h", "ip", "addr", "add", "fd00::99/64", "dev", "e0", "nodad")
    nodes = network.start_nodes({host: {"interfaces": ["e0"], **FAST} for host in "ab"})

    command = ["ip", "netns", "exec", network.ns("h"), sys.executable, str(SENDER)]
    command += ["--interface", "e0", "--ula-source", "fd00::99", "--seconds", "2", "--rate", "4000"]
    hostile = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )
    try:
        assert hostile.stdout is not None
        assert json.loads(hostile.stdout.readline()) == {"started": True}
        # While the flood runs: a uid nobody holds is granted (nothing may deny it) ...
        assert nodes["a"].claim(DOMAIN, {"unique": "beef"})["result"] == "succeeded"
        # ... and one a holds is denied, unless the flood delays or drops a's deny.
        contested = nodes["b"].claim(DOMAIN, {"unique": "beef"})
        sent = json.loads(hostile.stdout.readline())
        assert hostile.wait(timeout=WAIT_S) == 0
    finally:
        if hostile.poll() is None:
            hostile.kill()
            hostile.wait()

    # Every datagram the kernel queued has been read: the counters below are final.
    for host in "ab":
        _wait_until_read(network, host)
    status = {host: node.status() for host, node in nodes.items()}
    print(f"hostile sent {sent}; b's claim of a's uid: {contested}; status: {status}")
    transport, engine = status["a"]["transport"]["dropped"], status["a"]["engine"]["dropped"]
    # Each kind was counted under its reason: at least once (the first round reaches an
    # empty socket buffer) and at most as often as it was sent (a full buffer loses some,
    # which the kernel counts, not us).
    for kind, reason in [
        ("oversized", "oversized"),
        ("not-link-local", "not-link-local"),
        ("wrong-destination", "wrong-destination"),
    ]:
        assert 0 < transport[reason] <= sent[kind], (kind, status["a"])
    assert 0 < engine["malformed"] <= sent["garbage"] + sent["truncated"]
    assert 0 < engine.get("deny-unmatched", 0) <= sent["forged-deny"]
    assert status["a"]["engine"]["attempts_received"] > 0

    # Never a silent wrong grant: granted only if a counter shows why a's deny was late or lost.
    if contested["result"] == "failed":
        assert contested["reason"] == "denied", contested
    else:
        assert contested["result"] == "succeeded", contested
        assert _overload_counted(status["a"], status["b"]), status

    # After the flood: a claim nobody holds is granted, and its holder answers a conflict.
    assert nodes["b"].claim(DOMAIN, {"unique": "cafe"})["result"] == "succeeded"
    _assert_denied_or_deny_arrives_late(nodes["a"], {"unique": "cafe"})


def _overload_counted(holder: dict[str, Any], claimant: dict[str, Any]) -> bool:
    """Whether the counters show a way the holder's deny missed the claimant's timeout: a
    full socket buffer on either side (the attempt or the deny lost; the hostile sender
    fills both ports), the holder's shared per-interface budget spent (per-source budgets
    are the claimant's own: its three attempts never spend one), a failed send, or the
    deny arriving after the claimant's result."""
    return any(
        [
            holder["transport"]["buffer_overflows"] > 0,
            claimant["transport"]["buffer_overflows"] > 0,
            holder["engine"]["dropped"].get("rate-limited-interface", 0) > 0,
            sum(holder["transport"]["send_failed"].values()) > 0,
            sum(claimant["transport"]["send_failed"].values()) > 0,
            claimant["engine"]["dropped"].get("deny-after-result", 0) > 0,
        ]
    )


def _assert_denied_or_deny_arrives_late(claimant: NodeProcess, space: dict[str, Any]) -> None:
    """A claim of a held uid on a quiet link: denied, or (a machine too loaded to answer
    within the claim timeout) granted and the holder's deny counted when it arrives."""
    late_before = claimant.status()["engine"]["dropped"].get("deny-after-result", 0)
    result = claimant.claim(DOMAIN, space)
    if result["result"] == "failed":
        assert result["reason"] == "denied", result
        return
    claimant.wait_until(
        lambda status: status["engine"]["dropped"].get("deny-after-result", 0) > late_before,
        "counting the holder's late deny",
    )


def _wait_until_read(network: Network, host: str) -> None:
    """Wait until no UDP socket in ``host``'s namespace has a datagram queued (ss Recv-Q)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        listing = network.exec(host, "ss", "-uanH").stdout
        queued = [int(line.split()[1]) for line in listing.splitlines() if line.split()]
        if not any(queued):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{host}: datagrams still queued after {WAIT_S} s: {listing}")
        time.sleep(0.05)


#: The site key of the keyed test (hex, the driver's test MAC); the hostile host lacks it.
SITE_KEY = "5e" * 32
#: Engine counters only a datagram that reached the engine can raise: with a key, none of
#: the hostile host's may (the honest hosts send no malformed, unmatched or excess ones).
FORGED_ONLY = ("malformed", "deny-unmatched", "rate-limited-source", "rate-limited-interface")


def test_with_a_site_key_forged_datagrams_stop_at_the_mac_and_cost_honest_claims_nothing(
    network: Network,
) -> None:
    hosts = ["a", "b", "h"]
    for host in hosts:
        network.add_host(host)
    network.segment(hosts)
    network.exec("h", "ip", "addr", "add", "fd00::99/64", "dev", "e0", "nodad")
    # The draft's timers (UIAP §10): a deny has the whole claim timeout to come back.
    keyed = {"interfaces": ["e0"], "auth_key": SITE_KEY, "engine": {"drop_events": False}}
    nodes = network.start_nodes({host: keyed for host in "ab"})

    command = ["ip", "netns", "exec", network.ns("h"), sys.executable, str(SENDER)]
    command += ["--interface", "e0", "--ula-source", "fd00::99", "--seconds", "7", "--rate", "4000"]
    hostile = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )
    try:
        assert hostile.stdout is not None
        assert json.loads(hostile.stdout.readline()) == {"started": True}
        fresh = nodes["a"].claim(DOMAIN, {"unique": "beef"})
        contested = nodes["b"].claim(DOMAIN, {"unique": "beef"})
        sent = json.loads(hostile.stdout.readline())
        assert hostile.wait(timeout=WAIT_S) == 0
    finally:
        if hostile.poll() is None:
            hostile.kill()
            hostile.wait()
    for host in "ab":
        _wait_until_read(network, host)
    status = {host: node.status() for host, node in nodes.items()}
    print(f"keyed: hostile sent {sent}; a: {fresh}; b's claim of a's uid: {contested}")
    for host in "ab":
        transport, engine = status[host]["transport"], status[host]["engine"]
        # The forged datagrams the transport let through were dropped by their MAC ...
        forged = sent["garbage"] + sent["truncated"] + sent["forged-attempt"]
        forged += sent["forged-proxy"] + sent["forged-deny"]
        assert 0 < transport["dropped"]["auth"] <= forged, (host, transport)
        # ... so none reached the engine: no budget spent, nothing malformed or unmatched.
        assert not any(engine["dropped"].get(reason, 0) for reason in FORGED_ONLY), (host, engine)
    assert fresh["result"] == "succeeded", fresh
    if contested["result"] == "failed":
        assert contested["reason"] == "denied", contested
    else:
        # Only the kernel can have lost the deny or the attempts, before any MAC: counted.
        assert contested["result"] == "succeeded", contested
        assert any(status[host]["transport"]["buffer_overflows"] for host in "ab"), status
