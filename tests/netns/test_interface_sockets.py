"""Each interface's datagrams are read from that interface's own socket, and only there.

Host r has two links to host s (r:e0 - s:e0, r:e1 - s:e1) and a socket set on both; s sends
one group datagram (claim port) and one unicast datagram (reply port) out of each link.
Every datagram must be read exactly once, from the socket bound to the interface it
arrived on: none from the other link's socket (Linux hands a group datagram to every socket
that joined the group on any interface, so joining per index alone would not do), and no
copies left on any socket once all were read. An interface detached has its sockets closed
(they can be opened again on it).

References: UIAP §2.3, §4.2.2.1, §4.3.2, §8.1.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from netns_topology import ROOT, WAIT_S, Network

PROBE = Path(__file__).with_name("socket_probe.py")
GROUP, CLAIM_PORT, REPLY_PORT = "ff02::114", 1021, 1022

SEND = """
import socket, sys
for name in ("e0", "e1"):
    index = socket.if_nametoindex(name)
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)
        sock.sendto(("group-" + name).encode(), (sys.argv[1], int(sys.argv[2]), 0, index))
        sock.sendto(("unicast-" + name).encode(), (sys.argv[3 + ("e0", "e1").index(name)],
                                                     int(sys.argv[5]), 0, index))
"""


def _link_local(network: Network, host: str, interface: str) -> str:
    """The interface's link-local address, once the kernel has made it (it may not yet
    have when the link has just come up)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        shown = network.exec(host, "ip", "-6", "-o", "addr", "show", "dev", interface)
        fields = shown.stdout.split()
        if "fe80::" in shown.stdout and "tentative" not in fields:
            return fields[3].split("/")[0]
        assert time.monotonic() < deadline, f"no link-local address on {host}:{interface}"
        time.sleep(0.05)


def _probe(network: Network, *extra: str) -> tuple[bool, dict[str, Any]]:
    """Run the socket probe on r:e0 and r:e1 while s sends; its ready line and report."""
    for host in ("r", "s"):
        network.add_host(host)
    network.link("r", "e0", "s", "e0")
    network.link("r", "e1", "s", "e1")
    targets = [_link_local(network, "r", name) for name in ("e0", "e1")]
    for name in ("e0", "e1"):
        _link_local(network, "s", name)
    command = ["ip", "netns", "exec", network.ns("r"), sys.executable, str(PROBE)]
    command += ["--interfaces", "e0", "e1", "--expect", "4", "--wait", str(WAIT_S), *extra]
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    probe = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert probe.stdout is not None
        ready = json.loads(probe.stdout.readline())
        network.exec(
            "s", sys.executable, "-c", SEND, GROUP, str(CLAIM_PORT), *targets, str(REPLY_PORT)
        )
        report: dict[str, Any] = json.loads(probe.stdout.readline())
        assert probe.wait(timeout=WAIT_S) == 0
    finally:
        if probe.poll() is None:
            probe.kill()
            probe.wait()
    print(report)
    return bool(ready["per_interface"]), report


#: What the probe sends: one multicast and one unicast datagram on each link, named by it.
SENT = ["group-e0", "group-e1", "unicast-e0", "unicast-e1"]


def test_a_datagram_is_read_from_its_own_interfaces_socket_only(network: Network) -> None:
    per_interface, report = _probe(network)
    assert per_interface
    read = report["read"]
    assert sorted(entry["data"] for entry in read) == SENT
    for entry in read:
        assert entry["socket"] == entry["arrived_on"] == entry["data"].rpartition("-")[2], read
    # Detaching an interface closes its sockets: its ports can be bound there again.
    assert (report["detached"], report["reattached"]) == (True, True)


def test_the_shared_fallback_still_names_each_datagrams_interface(network: Network) -> None:
    """Where binding to a device is refused, one wildcard pair serves both links: every
    datagram is read once, from it, with packet information naming its link (validation
    drops those of links that do not take part); detaching only leaves the group."""
    per_interface, report = _probe(network, "--shared")
    assert not per_interface
    read = report["read"]
    assert sorted(entry["data"] for entry in read) == SENT
    for entry in read:
        assert entry["socket"] == "*", read
        assert entry["arrived_on"] == entry["data"].rpartition("-")[2], read
    assert (report["detached"], report["reattached"]) == (False, True)
