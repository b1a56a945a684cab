"""A line of six hosts with a real daemon each and random loss on every link, and the
conflicting-claims trial that measures what loss does to UIAP (shared by
``test_loss_line.py`` and ``bench/bench_uiap_netns_loss.py``).

    a.e0 --- e0.b.e1 --- e0.c.e1 --- e0.d.e1 --- e0.e.e1 --- e0.f

Loss: an nftables rule in every host's namespace drops each UIAP datagram arriving on any
interface (UDP to the claim or the reply port) with the given probability, drawn per
datagram (``numgen random``; the kernel here has no netem). Every datagram crosses one link
and is received once, so each link loses each copy independently, as the simulator's
``LinkConfig(loss=p)`` does.

A trial, as in the simulator's table (``bench/bench_uiap_loss.py``): the holder ``a`` claims
a fresh UID; once granted, a claimant one hop (``b``) or five hops (``f``) away claims the
same UID; then both are released. A grant of the second claim while ``a`` holds the UID is
a wrongly granted claim. Both claims end within two claim durations of each other, long
before the holder's first re-verification (at least 0.75 x 8 s after its grant), so the
measurement is the claim's defence alone, as in the simulator.

References: UIAP §2.4.1 (three Claim-Attempts "to help protect against dropped packets"),
§4.2.2.1, §4.3.2 (the Claim-Deny retraces the flood hop by hop), §10.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from daemon_process import DOMAIN, DaemonProcess
from netns_topology import Network

from uuidkit.uiap.space import UIDSpace

HOSTS = "abcdef"
HOLDER = "a"
#: The claimant at each hop distance from the holder.
CLAIMANTS = {1: "b", 5: "f"}
#: The nftables table every host gets (its own namespace, so the name is free).
TABLE = "uiaploss"
#: Test timers for the daemons (seconds): a new claim is three floods 0.05 s apart and a
#: 0.3 s wait after the last, 0.45 s in all. Loss is drawn per datagram, so the timers do
#: not change which datagrams are lost; they could only grant a claim whose deny arrives
#: after the wait, which the lossless cells rule out (0 wrongly granted) and the denied
#: claims' latencies bound (a deny comes back within tens of milliseconds over five hops).
TIMERS = ("--claim-period", "0.05", "--claim-timeout", "0.3")
#: The draft's timers (UIAP §10), for a run that checks the test timers change nothing.
DRAFT_TIMERS = ("--claim-period", "0.5", "--claim-timeout", "1.0")


@dataclasses.dataclass
class Cell:
    """Outcomes of the trials at one hop distance."""

    conflicting: int = 0
    wrong: int = 0
    denied_latencies: list[float] = dataclasses.field(default_factory=list)
    reasons: Counter[str] = dataclasses.field(default_factory=Counter)


class LossyLine:
    """Six hosts in a line, a daemon on each; :meth:`set_loss` changes every link's loss."""

    def __init__(self, network: Network, directory: Path, *extra: str) -> None:
        self.network = network
        for host in HOSTS:
            network.add_host(host)
        for left, right in itertools.pairwise(HOSTS):
            interface = "e0" if left == HOSTS[0] else "e1"
            network.link(left, interface, right, "e0")
        self.daemons: dict[str, DaemonProcess] = {}
        for host in HOSTS:
            both = () if host in (HOSTS[0], HOSTS[-1]) else ("--interface", "e1")
            self.daemons[host] = DaemonProcess(network, host, directory, *both, *extra)
        self.loss = 0.0

    def start(self) -> None:
        for daemon in self.daemons.values():
            daemon.start()

    def close(self) -> None:
        for daemon in self.daemons.values():
            daemon.close()

    def set_loss(self, loss: float) -> None:
        """Drop each arriving UIAP datagram with probability ``loss`` on every host."""
        percent = round(loss * 100)
        for host in HOSTS:
            self.network.exec(host, "nft", "delete", "table", "inet", TABLE, check=False)
            if percent == 0:
                continue
            self.network.exec(host, "nft", "add", "table", "inet", TABLE)
            hook = "{ type filter hook input priority 0 ; }"
            self.network.exec(host, "nft", "add", "chain", "inet", TABLE, "input", hook)
            rule = f"udp dport {{ 1021, 1022 }} numgen random mod 100 < {percent} counter drop"
            self.network.exec(host, "nft", "add", "rule", "inet", TABLE, "input", *rule.split())
        self.loss = loss

    def dropped(self) -> int:
        """Datagrams the loss rules have dropped so far, on every host."""
        total = 0
        for host in HOSTS:
            listing = self.network.exec(host, "nft", "list", "table", "inet", TABLE, check=False)
            if listing.returncode == 0:
                total += int(listing.stdout.split("counter packets ")[1].split()[0])
        return total

    def counters(self) -> dict[str, Any]:
        """Datagrams sent by every daemon, and the engine's drops by reason, summed."""
        sent, drops = 0, Counter[str]()
        for daemon in self.daemons.values():
            with daemon.client() as client:
                counters = client.status()["counters"]
            sent += int(counters["transport"]["sent"])
            drops.update(counters["engine"]["dropped"])
        return {"sent": sent, "drops": drops}

    def trial(self, number: int, hops: int) -> tuple[bool, Any] | None:
        """One conflicting claim ``hops`` away: (wrongly granted, the claimant's result), or
        None when the holder's own claim was not granted (the trial does not count)."""
        space = UIDSpace.unique(number.to_bytes(3, "big"))
        with self.daemons[HOLDER].client() as holder:
            held = holder.claim(DOMAIN, space, 600)
            if not held.granted:
                return None
            with self.daemons[CLAIMANTS[hops]].client() as claimant:
                tried = claimant.claim(DOMAIN, space, 600)
                if tried.granted and tried.claim is not None:
                    claimant.release(tried.claim)
            assert held.claim is not None
            holder.release(held.claim)
        return tried.granted, tried

    def run(
        self, first: int, per_hop: int, parallel: int, distances: tuple[int, ...] = (1, 5)
    ) -> dict[int, Cell]:
        """``per_hop`` trials at each hop distance, ``parallel`` at a time, UIDs from
        ``first`` on (distinct per trial, so trials never conflict with each other)."""
        jobs = [
            (first + len(distances) * i + k, hops)
            for i in range(per_hop)
            for k, hops in enumerate(distances)
        ]
        cells = {hops: Cell() for hops in distances}
        with ThreadPoolExecutor(parallel) as pool:
            outcomes = list(pool.map(lambda job: (job[1], self.trial(*job)), jobs))
        for hops, outcome in outcomes:
            if outcome is None:
                continue
            wrong, result = outcome
            cell = cells[hops]
            cell.conflicting += 1
            cell.wrong += wrong
            if not wrong:
                cell.denied_latencies.append(result.latency)
                cell.reasons[str(result.reason)] += 1
        return cells
