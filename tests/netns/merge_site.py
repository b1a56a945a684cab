"""Two sides of a site holding one node, node-bound generators on both, then a merge: how
long two hosts emit with that node, and whether any value repeats (shared by
``test_merge_generators.py`` and ``bench/bench_uiap_netns_merge.py``).

    a.e0 --- [sw1] --- e0.b.e1 --- e0.c.e1 --- e0.d

A daemon on every host (test timers); the holders are ``a`` and ``d``, three hops apart.
Two kinds of partition and merge:

- ``own``: ``a``'s own link: its interface goes down (the switch port loses carrier) and
  comes back up, as when a holder is unplugged and plugged in again. ``a``'s daemon sees its
  interface come up and re-verifies every held claim at once.
- ``elsewhere``: the ``b``-``c`` link, between two hosts that hold nothing: nftables drops
  every datagram arriving on it at both ends, then the rules are deleted. Neither holder sees
  anything; the merge is found by the next periodic re-verification of either holder.

During the partition ``a`` and ``d`` each run a ``merge_worker.py`` that claims the same node
(each side grants it: UIAP §2.1.2) and makes v1 values continuously. After the merge the
first holder to re-verify meets the other holder's deny and loses the node (its generator
switches to a new one); the other holder suspends its node when it denies, re-verifies and
resumes it. The figure: the time from the merge to the last value the losing host made with
the node (read from that value's own timestamp), after which no two hosts emit with it.

References: UIAP §2.1.2, §4.4; RFC 9562 §5.1, §6.10; docs/distributed.md "The merge window".
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from uuid import UUID

import numpy as np
from daemon_process import ENV, DaemonProcess
from netns_topology import WAIT_S, Network

from uuidkit.fields import timestamp_ns
from uuidkit.nodelayouts import MULTICAST_BIT

WORKER = Path(__file__).with_name("merge_worker.py")
HOLDERS = ("a", "d")
MASK_48 = (1 << 48) - 1
KINDS = ("own", "elsewhere")
#: The nftables table of the elsewhere partition (in b's and c's namespaces).
TABLE = "uiapcut"


@dataclasses.dataclass
class MergeResult:
    """What one partition-and-merge run showed."""

    kind: str
    node: int
    values: int
    repeats: int
    winner: str | None
    loser: str | None
    #: Seconds from the merge to the loser's last value with the node (its own timestamp).
    last_shared_s: float
    #: Seconds from the merge to the loser's first node event after it (SUSPENDED or LOST:
    #: its generator drops the node then) and to its LOST event, as its source recorded them.
    first_event_s: float
    lost_s: float
    summaries: dict[str, dict[str, Any]]
    held: dict[str, list[str]]


class MergeSite:
    """The four hosts and their daemons; :meth:`run` does one partition and merge."""

    def __init__(self, network: Network, directory: Path, *extra: str) -> None:
        self.network, self.directory = network, directory
        for host in "abcd":
            network.add_host(host)
        network.segment(["a", "b"])  # sw1: a's port p0, b's e0
        network.link("b", "e1", "c", "e0")
        network.link("c", "e1", "d", "e0")
        relays = ("b", "c")  # on e0 and e1
        self.daemons = {
            host: DaemonProcess(
                network, host, directory, *(("--interface", "e1") if host in relays else ()), *extra
            )
            for host in "abcd"
        }

    def start(self) -> None:
        for daemon in self.daemons.values():
            daemon.start()

    def close(self) -> None:
        for daemon in self.daemons.values():
            daemon.close()

    def _participating(self, host: str, interface: str) -> bool:
        with self.daemons[host].client() as client:
            interfaces = client.status()["counters"]["interfaces"]
        return any(i["name"] == interface and i["participating"] for i in interfaces)

    def _wait_participating(self, host: str, interface: str, expected: bool) -> None:
        deadline = time.monotonic() + WAIT_S
        while self._participating(host, interface) != expected:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{host}: {interface} never {expected}")
            time.sleep(0.05)

    def partition(self, kind: str) -> None:
        if kind == "own":
            self.network.set_link("a", "e0", up=False)
            self._wait_participating("a", "e0", False)
            return
        for host, interface in (("b", "e1"), ("c", "e0")):
            self.network.exec(host, "nft", "add", "table", "inet", TABLE)
            hook = "{ type filter hook input priority 0 ; }"
            self.network.exec(host, "nft", "add", "chain", "inet", TABLE, "input", hook)
            rule = f"iifname {interface} drop"
            self.network.exec(host, "nft", "add", "rule", "inet", TABLE, "input", *rule.split())

    def merge(self, kind: str) -> None:
        if kind == "own":
            self.network.set_link("a", "e0", up=True)
            return
        for host in ("b", "c"):
            self.network.exec(host, "nft", "delete", "table", "inet", TABLE)

    def _worker(self, host: str, out: Path, node: int) -> subprocess.Popen[str]:
        command = ["ip", "netns", "exec", self.network.ns(host), sys.executable, str(WORKER)]
        command += ["--socket", self.daemons[host].socket, "--out", str(out), "--name", host]
        command += ["--node", f"{node:012x}"]
        return subprocess.Popen(
            command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def _held(self) -> dict[str, list[str]]:
        held = {}
        for host in HOLDERS:
            with self.daemons[host].client() as client:
                held[host] = [c["uid"] for c in client.list_claims() if c["state"] == "held"]
        return held

    def run(self, kind: str, out: Path, before_s: float, after_s: float) -> MergeResult:
        """Partition, both holders generating with one node for ``before_s``, merge, wait
        until one holder is left, ``after_s`` more, stop, heal nothing else."""
        out.mkdir(parents=True)
        node = int.from_bytes(os.urandom(6)) | MULTICAST_BIT
        uid = f"{node:012x}"  # the UID of the node in the daemon's list (UIAP §3.2.1.2)
        self.partition(kind)
        workers = {host: self._worker(host, out, node) for host in HOLDERS}
        try:
            for host, process in workers.items():
                assert process.stdout is not None
                ready = process.stdout.readline()
                assert ready, f"{host}: worker ended: {process.communicate()[1]}"
                assert json.loads(ready)["node"] == node, ready  # both sides hold it
            time.sleep(before_s)
            merge_ns = time.time_ns()
            self.merge(kind)
            self._wait_one_holder(uid)
            time.sleep(after_s)
            held = self._held()  # before the workers end (their claims end with them)
        finally:
            (out / "stop").touch()
            for process in workers.values():
                _, err = process.communicate(timeout=WAIT_S)
                assert process.returncode == 0, err
        if kind == "own":
            self._wait_participating("a", "e0", True)
        return analyse(kind, out, node, merge_ns, held)

    def _wait_one_holder(self, uid: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while sum(uid in uids for uids in self._held().values()) != 1:
            if time.monotonic() > deadline:
                raise TimeoutError(f"two holders of {uid} {WAIT_S} s after the merge")
            time.sleep(0.05)


def values(path: Path) -> np.ndarray[Any, np.dtype[np.void]]:
    """The values of a worker's file, one 16-octet item each."""
    return np.frombuffer(path.read_bytes(), dtype=np.dtype((np.void, 16)))


def nodes_of(made: np.ndarray[Any, np.dtype[np.void]]) -> np.ndarray[Any, np.dtype[np.uint64]]:
    """The node field (the low 48 bits) of every value."""
    words = np.frombuffer(made.tobytes(), dtype=">u8").reshape(-1, 2)
    return (words[:, 1] & np.uint64(MASK_48)).astype(np.uint64)


def analyse(
    kind: str, out: Path, node: int, merge_ns: int, held: dict[str, list[str]]
) -> MergeResult:
    """Repeats over both workers' values, the winner and loser, and the loser's timing."""
    summaries = {host: json.loads((out / f"{host}.json").read_text()) for host in HOLDERS}
    made = {host: values(out / f"{host}.bin") for host in HOLDERS}
    together = np.concatenate(list(made.values()))
    repeats = len(together) - len(np.unique(together))
    keepers = [host for host in HOLDERS if summaries[host]["final_node"] == node]
    losers = [host for host in HOLDERS if summaries[host]["final_node"] != node]
    loser = losers[0] if len(losers) == 1 else None
    last_shared_s = first_event_s = lost_s = float("nan")
    if loser is not None:
        shared = np.flatnonzero(nodes_of(made[loser]) == np.uint64(node))
        last = UUID(bytes=made[loser][shared[-1]].tobytes())
        last_ns = timestamp_ns(last)
        assert last_ns is not None
        last_shared_s = (last_ns - merge_ns) / 1e9
        after = [e for e in summaries[loser]["events"] if e["wall_ns"] >= merge_ns]
        dropped = [e for e in after if e["kind"] in ("suspended", "lost")]
        if dropped:
            first_event_s = (dropped[0]["wall_ns"] - merge_ns) / 1e9
        lost = [e for e in after if e["kind"] == "lost"]
        if lost:
            lost_s = (lost[0]["wall_ns"] - merge_ns) / 1e9
    return MergeResult(
        kind=kind,
        node=node,
        values=len(together),
        repeats=repeats,
        winner=keepers[0] if len(keepers) == 1 else None,
        loser=loser,
        last_shared_s=last_shared_s,
        first_event_s=first_event_s,
        lost_s=lost_s,
        summaries=summaries,
        held=held,
    )
