"""The network simulator at site scale: events per CPU-second with the real engine.

Run: ``python3 bench/bench_simulator.py`` (3,000 devices as a tree of 4-device shared
segments, 300 claims 3 s apart, seed 1, engines with the draft's behaviour only). Options:
``--quick`` (500 devices, 50 claims); ``--devices``/``--claims``/``--seed``/``--lifetime``;
``--topology random --degree 3`` for a mesh; ``--engine defaults`` for uuidkit's defaults
(two copies of every datagram, held claims re-verified every 6-8 s until their lifetime
ends: far more events per claim, so bound the run with ``--until``); ``--flood-only`` to
add a run on an engine that only floods (the simulator's own cost per event).

Add ``--compare REV`` to run the same scenario on another revision in the same run: REV
is a git revision (its ``src`` is exported with ``git archive`` into a temporary
directory) or the path of a tree whose C extension is built in place. Each tree runs in
its own child process; ``--rounds`` alternates them and each keeps its best CPU time. The
simulator is deterministic, so both trees must report the same outcomes, messages, drops
and events for the same seed; the bench says whether they do and prints the ratio of
events per CPU-second.

Figures: ``events`` (heap entries processed), the process CPU time of building and of
running the simulation (``time.process_time``, which other processes on a shared machine
do not inflate the way they inflate wall time), the wall time, and events per CPU-second
of the run.

References: UIAP §2.4, §3 (flooding), §4.5.1; docs/simulator.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Hashable
from pathlib import Path
from typing import Any

from uuidkit.testing import Scenario, Simulator, build_simulator
from uuidkit.testing.scenario import build_topology
from uuidkit.uiap import MULTICAST, Transmit
from uuidkit.uiap.engine import EngineConfig
from uuidkit.uiap.engine_types import EngineStats

BENCH_DIR = Path(__file__).resolve().parent


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


def scenario_of(options: argparse.Namespace) -> Scenario:
    """The scenario the options describe (the same in every tree compared)."""
    engine = EngineConfig(drop_events=False)
    if options.engine == "draft":
        engine = dataclasses.replace(EngineConfig.draft_only(), drop_events=False)
    return Scenario(
        topology=options.topology,
        devices=options.devices,
        degree=options.degree,
        claims=options.claims,
        lifetime=options.lifetime,
        seed=options.seed,
        engine=engine,
        until=options.until,
    )


def measure(scenario: Scenario) -> dict[str, Any]:
    """Build and run ``scenario`` once: its report, CPU and wall seconds of each phase."""
    wall, cpu = time.perf_counter(), time.process_time()
    simulator = build_simulator(scenario)
    built_cpu = time.process_time()
    report = simulator.run(scenario.until)
    done_wall, done_cpu = time.perf_counter(), time.process_time()
    return {
        "report": report.to_json(),
        "build_cpu": built_cpu - cpu,
        "run_cpu": done_cpu - built_cpu,
        "wall": done_wall - wall,
    }


def measure_flood_only(scenario: Scenario) -> dict[str, Any]:
    """The same topology and claim schedule on :class:`FloodEngine`."""
    schedule = [
        (r.device, r.domain, r.space, r.requested) for r in build_simulator(scenario).records
    ]
    topology = build_topology(scenario, random.Random(scenario.seed))
    wall, cpu = time.perf_counter(), time.process_time()
    simulator = Simulator(topology, seed=scenario.seed, engine_factory=FloodEngine)
    for device, domain, space, at in schedule:
        simulator.claim(device, domain, space, at=at)
    built_cpu = time.process_time()
    report = simulator.run()
    return {
        "report": report.to_json(),
        "build_cpu": built_cpu - cpu,
        "run_cpu": time.process_time() - built_cpu,
        "wall": time.perf_counter() - wall,
    }


def _tree_source(revision: str, scratch: str) -> Path:
    """The ``src`` directory of ``revision``: a built tree's own, or a ``git archive``."""
    if Path(revision).is_dir():
        return Path(revision).resolve() / "src"
    archive = subprocess.run(
        ["git", "-C", str(BENCH_DIR.parent), "archive", revision, "src"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", scratch], input=archive, check=True)
    return Path(scratch) / "src"


def measure_in_child(source: Path, arguments: list[str]) -> dict[str, Any]:
    """One run of this script in a child whose ``uuidkit`` is imported from ``source``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(source), str(BENCH_DIR)]))
    command = [sys.executable, str(Path(__file__).resolve()), *arguments, "--json"]
    result = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    figures: dict[str, Any] = json.loads(result.stdout)
    return figures


def _keep_best(kept: dict[str, Any] | None, fresh: dict[str, Any]) -> dict[str, Any]:
    """The round with the lower run CPU time; a report that changes between rounds of one
    tree would mean the simulator is not deterministic, so it is an error."""
    if kept is None:
        return fresh
    if kept["report"] != fresh["report"]:
        raise SystemExit("the same tree reported two different runs of one seed")
    return fresh if fresh["run_cpu"] < kept["run_cpu"] else kept


def _line(label: str, figures: dict[str, Any]) -> str:
    events = figures["report"]["events"]
    total = figures["build_cpu"] + figures["run_cpu"]
    return (
        f"{label:<14} {events:>11,} {figures['build_cpu']:>9.2f} {figures['run_cpu']:>9.2f} "
        f"{total:>9.2f} {figures['wall']:>9.2f} {events / figures['run_cpu']:>12,.0f}"
    )


def _differences(left: dict[str, Any], right: dict[str, Any]) -> list[str]:
    return [
        f"{key}: {left.get(key)!r} != {right.get(key)!r}"
        for key in sorted(set(left) | set(right))
        if left.get(key) != right.get(key)
    ]


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The options, and the arguments that describe the scenario (passed to a child)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=3000)
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--topology", default="segment_tree")
    parser.add_argument("--degree", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--lifetime", type=int, default=3600)
    parser.add_argument("--until", type=float, default=None)
    parser.add_argument("--engine", choices=("draft", "defaults"), default="draft")
    parser.add_argument("--quick", action="store_true", help="500 devices, 50 claims")
    parser.add_argument("--json", action="store_true", help="one run, its figures as JSON")
    parser.add_argument("--compare", metavar="REV", help="also run a git revision or a tree")
    parser.add_argument("--rounds", type=int, default=1, help="alternate the trees this often")
    parser.add_argument("--flood-only", action="store_true", help="add a flood-only run")
    options = parser.parse_args(argv)
    if options.quick:
        options.devices, options.claims = 500, 50
    scenario_arguments = [
        f"--devices={options.devices}",
        f"--claims={options.claims}",
        f"--topology={options.topology}",
        f"--degree={options.degree}",
        f"--seed={options.seed}",
        f"--lifetime={options.lifetime}",
        f"--engine={options.engine}",
        *([f"--until={options.until}"] if options.until is not None else []),
    ]
    return options, scenario_arguments


def main(argv: list[str]) -> None:
    options, scenario_arguments = parse(argv)
    scenario = scenario_of(options)
    if options.json:
        print(json.dumps(measure(scenario)))
        return
    # On a shared machine the load changes from second to second: the trees are measured
    # in alternation, each in a fresh child process, and each keeps its best round.
    this_tree: dict[str, Any] | None = None
    other: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="uuidkit-bench-") as scratch:
        other_source = _tree_source(options.compare, scratch) if options.compare else None
        for _ in range(max(1, options.rounds)):
            if other_source is not None:
                other = _keep_best(other, measure_in_child(other_source, scenario_arguments))
            this_tree = _keep_best(
                this_tree, measure_in_child(BENCH_DIR.parent / "src", scenario_arguments)
            )
    assert this_tree is not None
    print(
        f"{options.devices} devices ({options.topology}), {options.claims} claims, "
        f"seed {options.seed}, {options.engine} engines, until {options.until}"
        + (f"; compared: {options.compare}" if options.compare else "")
    )
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) after the runs")
    print(json.dumps(this_tree["report"]))
    print()
    header = f"{'tree':<14} {'events':>11} {'build cpu':>9} {'run cpu':>9} {'cpu s':>9}"
    print(f"{header} {'wall s':>9} {'events/cpu-s':>12}")
    print(_line("this tree", this_tree))
    if other is not None:
        print(_line("compared", other))
        differences = _differences(this_tree["report"], other["report"])
        identical = "identical" if not differences else "DIFFERENT: " + "; ".join(differences)
        print(f"reports of the two trees: {identical}")
        now_rate = this_tree["report"]["events"] / this_tree["run_cpu"]
        then_rate = other["report"]["events"] / other["run_cpu"]
        print(f"events per CPU-second, this tree / {options.compare}: {now_rate / then_rate:.2f}x")
    if options.flood_only:
        print(_line("flood-only", measure_flood_only(scenario)))


if __name__ == "__main__":
    main(sys.argv[1:])
