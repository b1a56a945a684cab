"""Wrongly granted claims under loss: the draft's engine against uuidkit's, in the simulator.

Run: ``python3 bench/bench_uiap_loss.py`` (``--quick``: 200 trials per cell;
``--trials N``; ``--engines draft,uuidkit``; ``--loss 0,0.1,0.3``; ``--rates 5,100``;
``--topologies line6,grid,random100``).

One cell is ``trials`` conflicting claims on one topology at one loss rate and one claim
rate. A trial: a holder claims a fresh UID; 3 s later (after its 2.5 s claim) a claimant
claims the same UID, which must be denied; both are released 3 s after that. Trials
start ``2 / rate`` seconds apart, so the site carries ``rate`` claims a second (two per
trial, distinct UIDs per trial so trials never conflict with each other). Every link
loses each copy independently with the cell's probability, holder's claims included.

- ``line6``: 6 devices in a line, holder device 0, claimant device 5 (5 hops);
- ``grid``: 100 devices in a 10 x 10 grid, holder and claimant a random pair per trial;
- ``random100``: 100 devices, random connected graph of average degree 3, random pairs.

Printed per cell: conflicting claims (the claimant's claims made while the holder held;
a holder's claim that was itself refused makes the trial not count), wrongly granted
(granted while the holder held), their ratio, the mean hop distance of the pairs, and
datagrams sent per claim (all engines, every copy counted, verification floods included).
Seeds are fixed (``--seed``), so a run replays exactly.

References: UIAP §2.4.1 (three attempts), §4.3.2 (Claim-Deny hop by hop), §10 (timers).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from collections.abc import Callable

from uuidkit.testing import LinkConfig, Simulator, topologies
from uuidkit.testing.engines import engine_factory
from uuidkit.testing.topologies import Topology
from uuidkit.uiap import DomainID, UIDSpace
from uuidkit.uiap.engine import EngineConfig

DOMAIN = DomainID.parse("fff:0:1:0")


def engine_configs() -> dict[str, EngineConfig]:
    """The configurations compared: the draft's behaviour, and uuidkit's default."""
    uuidkit = EngineConfig(drop_events=False)
    draft_only = getattr(EngineConfig, "draft_only", None)
    draft = draft_only(drop_events=False) if draft_only else uuidkit
    configs = {"draft": draft, "uuidkit": uuidkit}
    if "copies" in {f.name for f in dataclasses.fields(EngineConfig)}:
        configs["uuidkit-3"] = dataclasses.replace(uuidkit, copies=3)
    return configs


def build_topology(name: str) -> tuple[Topology, Callable[[random.Random], tuple[int, int]]]:
    """The topology and a chooser of (holder, claimant) per trial."""
    if name == "line6":
        return topologies.line(6), lambda rng: (0, 5)
    if name == "grid":
        topology = topologies.grid(100, 10)
    elif name == "random100":
        topology = topologies.random_graph(100, 3, random.Random(100))
    else:
        raise SystemExit(f"unknown topology {name!r}")
    devices = topology.devices

    def pair(rng: random.Random) -> tuple[int, int]:
        holder, claimant = rng.sample(range(devices), 2)
        return holder, claimant

    return topology, pair


def run_cell(
    topology_name: str, config: EngineConfig, loss: float, rate: float, trials: int, seed: int
) -> dict[str, float]:
    """One cell of the table; returns its figures."""
    topology, choose = build_topology(topology_name)
    sim = Simulator(
        topology,
        seed=seed,
        link=LinkConfig(delay=0.001, loss=loss),
        engine_factory=engine_factory(config),
    )
    rng = random.Random(seed + 1)
    spacing = 2.0 / rate
    pairs = []
    hops = 0
    for trial in range(trials):
        holder, claimant = choose(rng)
        hops += topology.hops_from(holder)[claimant] or 0
        uid = UIDSpace.unique(trial.to_bytes(3, "big"))
        start = trial * spacing
        held = sim.claim(holder, DOMAIN, uid, at=start, lifetime=3600)
        tried = sim.claim(claimant, DOMAIN, uid, at=start + 3.0, lifetime=3600)
        sim.release(held, at=start + 6.0)
        sim.release(tried, at=start + 6.0)
        pairs.append((held, tried))
    report = sim.run()
    conflicting = sum(tried.conflicting for _, tried in pairs)
    wrong = sum(tried.wrongly_granted for _, tried in pairs)
    return {
        "conflicting": conflicting,
        "wrong": wrong,
        "rate": 100.0 * wrong / conflicting if conflicting else float("nan"),
        "hops": hops / trials,
        "per_claim": report.messages_per_claim,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="200 trials per cell")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engines", default="draft,uuidkit")
    parser.add_argument("--loss", default="0,0.1,0.3")
    parser.add_argument("--rates", default="5")
    parser.add_argument("--topologies", default="line6,grid,random100")
    args = parser.parse_args(argv)
    trials = 200 if args.quick else args.trials
    configs = engine_configs()
    print(
        f"{'topology':<10} {'engine':<10} {'loss':>5} {'claims/s':>8} {'hops':>5} "
        f"{'conflicting':>11} {'wrong':>6} {'wrong %':>8} {'datagrams/claim':>16}"
    )
    for topology_name in args.topologies.split(","):
        for rate in (float(r) for r in args.rates.split(",")):
            for loss in (float(p) for p in args.loss.split(",")):
                for name in args.engines.split(","):
                    started = time.perf_counter()
                    cell = run_cell(topology_name, configs[name], loss, rate, trials, args.seed)
                    print(
                        f"{topology_name:<10} {name:<10} {loss:>5.2f} {rate:>8g} "
                        f"{cell['hops']:>5.2f} {cell['conflicting']:>11.0f} "
                        f"{cell['wrong']:>6.0f} {cell['rate']:>7.1f}% "
                        f"{cell['per_claim']:>16.1f}   ({time.perf_counter() - started:.1f} s)",
                        flush=True,
                    )


if __name__ == "__main__":
    main(sys.argv[1:])
