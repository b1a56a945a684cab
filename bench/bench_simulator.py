"""The network simulator at scale: 1,000 devices, 1,000 claims, in virtual time.

Run: ``python3 bench/bench_simulator.py`` (``--quick``: 200 devices, 100 claims;
``--topology random --degree 3`` for a mesh; ``--devices``/``--claims`` to resize).

Prints the report of one seeded scale run (messages per claim, latency, outcomes) and the
simulator's speed: events per second of wall time with the real engine, and with a
flood-only engine (one flood per claim, no decoding or claims), which is close to the
simulator's own cost per event. Timings
are best-of-``--repeat`` by ``bench/common.py``'s :class:`Timer`; each figure is a ratio
to the run with the real engine.

References: UIAP §2.4, §3 (flooding), §4.5.1; docs/simulator.md.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Hashable
from typing import Any

from common import Timer
from uuidkit.testing import Report, Scenario, Simulator, build_simulator
from uuidkit.testing.scenario import build_topology
from uuidkit.uiap import MULTICAST, Transmit
from uuidkit.uiap.engine_types import EngineStats


class FloodEngine:
    """Floods one datagram per claim and forwards the first copy of each out every other
    interface, with no decoding, timers or claims: the simulator's own cost of moving a
    flood, for comparison with the real engine."""

    def __init__(self, device_id: int, rng: random.Random) -> None:
        self.stats = EngineStats()
        self._prefix = device_id.to_bytes(8, "big")
        self._claims = 0
        self._seen: set[bytes] = set()
        self._interfaces: list[Hashable] = []
        self._outbox: list[Transmit] = []

    def add_interface(self, interface: Hashable) -> None:
        self._interfaces.append(interface)

    def remove_interface(self, interface: Hashable) -> None:
        self._interfaces.remove(interface)

    def claim(self, domain: Any, space: Any, lifetime: int, now: float, **_: bool) -> int:
        self._claims += 1
        data = self._prefix + self._claims.to_bytes(4, "big")
        self._seen.add(data)
        self._outbox.extend(Transmit(i, MULTICAST, data) for i in self._interfaces)
        return self._claims

    def release(self, claim: int, now: float) -> None:
        return None

    def receive_datagram(
        self, data: bytes, interface: Hashable, source: Hashable, now: float
    ) -> None:
        if data not in self._seen:
            self._seen.add(data)
            self._outbox.extend(
                Transmit(i, MULTICAST, data) for i in self._interfaces if i != interface
            )

    def handle_timer(self, now: float) -> None:
        return None

    def get_timer(self) -> float | None:
        return None

    def datagrams_to_send(self) -> list[Transmit]:
        outbox, self._outbox = self._outbox, []
        return outbox

    def next_event(self) -> None:
        return None


def _uiap_run(scenario: Scenario, reports: list[Report]) -> Callable[[], None]:
    def run() -> None:
        reports.append(build_simulator(scenario).run())

    return run


def _flood_run(scenario: Scenario, reports: list[Report]) -> Callable[[], None]:
    """The same topology and claim schedule, on :class:`FloodEngine`."""
    schedule = [
        (r.device, r.domain, r.space, r.requested) for r in build_simulator(scenario).records
    ]
    topology = build_topology(scenario, random.Random(scenario.seed))

    def run() -> None:
        simulator = Simulator(topology, seed=scenario.seed, engine_factory=FloodEngine)
        for device, domain, space, at in schedule:
            simulator.claim(device, domain, space, at=at)
        reports.append(simulator.run())

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--claims", type=int, default=1000)
    parser.add_argument("--topology", default="segment_tree")
    parser.add_argument("--degree", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.devices, args.claims = 200, 100
    scenario = Scenario(
        topology=args.topology,
        devices=args.devices,
        degree=args.degree,
        claims=args.claims,
        seed=args.seed,
    )
    timer = Timer(number=1, repeat=args.repeat)
    real: list[Report] = []
    null: list[Report] = []
    base = timer.measure("simulator + UIAP engine (one run)", _uiap_run(scenario, real))
    timer.measure("simulator + flood-only engine (one run)", _flood_run(scenario, null))
    report, null_report = real[-1], null[-1]
    print(f"{args.devices} devices ({args.topology}), {args.claims} claims, seed {args.seed}")
    print(report.format_table())
    print()
    for label, run_report in (("UIAP engine", report), ("flood-only engine", null_report)):
        key = f"simulator + {label} (one run)"
        seconds = timer.results[key] / 1e9
        print(
            f"{label:<17} {run_report.events:>10,} events in {seconds:8.2f} s = "
            f"{run_report.events / seconds:>10,.0f} events/s"
        )
    timer.report(base, title="wall time per run")


if __name__ == "__main__":
    main()
