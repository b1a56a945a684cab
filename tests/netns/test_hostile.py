"""A hostile host on the segment: forged and malformed datagrams at a high rate.

Every kind the hostile sender sends is dropped somewhere and counted by reason (by the
transport before the engine, or by the engine), and honest claims still work meanwhile.

References: UIAP §4.1, §4.2.2.1 (link-local source), §4.3.2, §7 (a rogue sender is the
threat the draft asks authentication for: without it, forged Claim-Attempts for other
domains cost memory and time but cannot take an honest claim).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from netns_topology import DOMAIN, FAST, ROOT, WAIT_S, Network

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
        # Honest claims while the flood runs: granted, then denied by the holder.
        assert nodes["a"].claim(DOMAIN, {"unique": "beef"})["result"] == "succeeded"
        denied = nodes["b"].claim(DOMAIN, {"unique": "beef"})
        assert (denied["result"], denied["reason"]) == ("failed", "denied")
        sent = json.loads(hostile.stdout.readline())
        assert hostile.wait(timeout=WAIT_S) == 0
    finally:
        if hostile.poll() is None:
            hostile.kill()
            hostile.wait()

    status = nodes["a"].status()
    print(f"hostile sent {sent}; a: {status['transport']} {status['engine']}")
    transport, engine = status["transport"]["dropped"], status["engine"]["dropped"]
    # Each kind was counted under its reason (at most what was sent: UDP may lose some
    # in a full socket buffer, which the kernel counts, not us).
    for kind, reason in [
        ("oversized", "oversized"),
        ("not-link-local", "not-link-local"),
        ("wrong-destination", "wrong-destination"),
    ]:
        assert 0 < transport[reason] <= sent[kind], (kind, status)
    assert 0 < engine["malformed"] <= sent["garbage"] + sent["truncated"]
    assert 0 < engine.get("deny-unmatched", 0) <= sent["forged-deny"]
    assert status["engine"]["attempts_received"] > 0
    # After the flood, a is still a working UIAP device.
    assert nodes["b"].claim(DOMAIN, {"unique": "cafe"})["result"] == "succeeded"
    assert nodes["a"].claim(DOMAIN, {"unique": "cafe"})["reason"] == "denied"
