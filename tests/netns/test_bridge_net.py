"""The bridge on a real network: three hosts with a daemon each, node IDs claimed through it.

1. Two generating processes per host, each making 100,000 UUIDs of every node-bearing
   layout at once: no duplicates; every value carries the node its process's host held
   (granted before the first value, still held after the last, never lost in between); no
   two hosts held the same node.
2. A partition, the same node claimed on both sides, a merge: the renewal (or the
   re-verification when the link comes up) finds the collision, the short-lived side
   switches node at once, and no value repeats.

References: RFC 9562 §6.4, §6.10; UIAP §2.1.2, §4.4.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

from daemon_process import ENV, DaemonProcess
from netns_topology import WAIT_S, Network

from uuidkit.fields import timestamp_ns
from uuidkit.nodelayouts import MULTICAST_BIT, V8NodeFields, read_node_layout

WORKER = Path(__file__).with_name("bridge_worker.py")
HOSTS = ("a", "b", "c")
PER_LAYOUT = 100_000
MASK_48 = (1 << 48) - 1
LAYOUTS = {1: "v1-node", 6: "v6-node", 7: "v7-node", 8: "v8-node"}
UNIT_NS = {1: 100, 6: 100, 7: 1_000_000, 8: 1}


@contextlib.contextmanager
def site(network: Network, tmp_path: Path) -> Iterator[dict[str, DaemonProcess]]:
    for host in HOSTS:
        network.add_host(host)
    network.segment(list(HOSTS))  # sw1: port p0 is a's, p1 b's, p2 c's
    daemons = {host: DaemonProcess(network, host, tmp_path) for host in HOSTS}
    try:
        for daemon in daemons.values():
            daemon.start()
        yield daemons
    finally:
        for daemon in daemons.values():
            daemon.close()


def worker(
    network: Network, host: str, daemon: DaemonProcess, out: Path, name: str, *args: str
) -> subprocess.Popen[str]:
    command = ["ip", "netns", "exec", network.ns(host), sys.executable, str(WORKER), *args]
    command += ["--socket", daemon.socket, "--out", str(out), "--name", name]
    return subprocess.Popen(
        command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(process: subprocess.Popen[str]) -> None:
    _, err = process.communicate(timeout=WAIT_S * 3)
    assert process.returncode == 0, err


def values(path: Path) -> list[int]:
    data = path.read_bytes()
    return [int.from_bytes(data[i : i + 16]) for i in range(0, len(data), 16)]


def embedded_ns(value: int, version: int) -> int:
    record = read_node_layout(UUID(int=value), LAYOUTS[version])
    if isinstance(record, V8NodeFields):
        return record.timestamp_ns
    unix_ns = timestamp_ns(UUID(int=value))
    assert unix_ns is not None
    return unix_ns


def check_bulk(out: Path, names: list[str]) -> None:
    summaries = {name: json.loads((out / f"{name}.json").read_text()) for name in names}
    nodes_by_host: dict[str, set[int]] = {}
    for name, summary in summaries.items():
        node = summary["node"]
        assert node & MULTICAST_BIT  # RFC 9562 §6.10
        # Held by this host's daemon from before the first value to after the last.
        # "renewing": held, with a renewal (a reclaim of the held claim) under way.
        assert summary["held_at_end"].get(f"{node:012x}") in ("held", "renewing"), summary
        assert [e["kind"] for e in summary["events"] if e["kind"] == "lost"] == []
        assert summary["final_node"] == node
        nodes_by_host.setdefault(name.split("-")[0], set()).add(node)
    # No two hosts (and no two processes) held the same node.
    all_nodes = [n for nodes in nodes_by_host.values() for n in nodes]
    assert len(set(all_nodes)) == len(all_nodes) == len(names)
    for version, layout in LAYOUTS.items():
        seen: set[int] = set()
        for name, summary in summaries.items():
            made = values(out / f"{name}-v{version}.bin")
            assert len(made) == PER_LAYOUT
            assert {v & MASK_48 for v in made} == {summary["node"]}, (name, layout)
            # Every value was made while the claim was held (first and last embed times;
            # each generator's times never decrease).
            unit = UNIT_NS[version]
            first, last = embedded_ns(made[0], version), embedded_ns(made[-1], version)
            assert summary["start_ns"] // unit * unit <= first <= last <= summary["end_ns"]
            seen.update(made)
        assert len(seen) == PER_LAYOUT * len(summaries), f"duplicates in {layout}"


def test_three_hosts_two_processes_each_no_duplicates_then_a_merge(
    network: Network, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with site(network, tmp_path) as daemons:
        names = [f"{host}-{i}" for host in HOSTS for i in range(2)]
        # Renewed every 5 s: slack for a busy 2-core machine, and still renewals on the way.
        bulk_args = ("bulk", "--count", str(PER_LAYOUT), "--lifetime", "10")
        processes = [
            worker(network, name[0], daemons[name[0]], out, name, *bulk_args) for name in names
        ]
        for process in processes:
            finish(process)
        check_bulk(out, names)
        merge_and_switch(network, daemons, tmp_path / "merge")


def merge_and_switch(network: Network, daemons: dict[str, DaemonProcess], out: Path) -> None:
    out.mkdir()
    node = 0x0123_4567_89AB | MULTICAST_BIT
    network.set_link("sw1", "p0", up=False)  # partition: a alone, b and c together
    # Both sides claim the same node; each side is unique on its own (UIAP §2.1.2).
    short_args = ("switch", "--node", f"{node:012x}", "--lifetime", "4")  # renewed every 2 s
    short = worker(network, "a", daemons["a"], out, "a", *short_args)
    assert json.loads(short.stdout.readline()) == {"ready": True}  # type: ignore[union-attr]
    long_args = ("switch", "--node", f"{node:012x}", "--lifetime", "600")
    kept = worker(network, "b", daemons["b"], out, "b", *long_args)
    assert json.loads(kept.stdout.readline()) == {"ready": True}  # type: ignore[union-attr]
    network.set_link("sw1", "p0", up=True)  # merge
    finish(short)  # it stops after switching node and making 2,000 more values
    (out / "stop").touch()
    finish(kept)
    a, b = (json.loads((out / f"{name}.json").read_text()) for name in "ab")
    assert a["node"] == b["node"] == node
    lost = [e for e in a["events"] if e["kind"] == "lost"]
    assert lost and lost[0]["node"] == node and "collision" in lost[0]["reason"], a["events"]
    assert a["final_node"] != node and b["final_node"] == node
    assert not [e for e in b["events"] if e["kind"] == "lost"]
    made_a, made_b = values(out / "a-switch.bin"), values(out / "b-switch.bin")
    assert len(set(made_a) | set(made_b)) == len(made_a) + len(made_b)  # no duplicate
    nodes_in_order = [v & MASK_48 for v in made_a]
    switch_at = nodes_in_order.index(a["final_node"])
    assert set(nodes_in_order[:switch_at]) == {node}
    assert set(nodes_in_order[switch_at:]) == {a["final_node"]}  # never back to the lost one
    assert len(nodes_in_order) - switch_at >= 2000
    # The lost node was not used after the loss was reported (embedded time <= loss time).
    versions = [7 if i % 2 == 0 else 1 for i in range(switch_at)]
    last_old = max(
        embedded_ns(v, version) for v, version in zip(made_a[:switch_at], versions, strict=True)
    )
    assert last_old <= lost[0]["wall_ns"]
