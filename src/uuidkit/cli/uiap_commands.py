"""``uuidkit uiap simulate``: run UIAP on a simulated site and print what happened.

The embedded default for trying UIAP without a network::

    uuidkit uiap simulate --topology ring --devices 10 --claims 100 --loss 0.1 --seed 1
    uuidkit uiap simulate --scenario site.json --json

Flags given on the command line override the same keys of a ``--scenario`` file (see
:mod:`uuidkit.testing.scenario`). The report is a table, or with ``--json`` one JSON object
with at least ``claims``, ``granted``, ``denied``, ``wrongly_granted``,
``messages_per_claim``, ``latency_p50`` and ``latency_p99`` (seconds).

References: UIAP §2.4 (the protocol simulated), §3 (flooding), §2.1.2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any, Final

from uuidkit.testing.scenario import TOPOLOGIES, Scenario, load_scenario, run_scenario

__all__ = ["register", "simulate_command"]

#: Flags that map one-to-one onto :class:`Scenario` fields.
_SCENARIO_FLAGS: Final = (
    "topology",
    "devices",
    "degree",
    "claims",
    "spaces",
    "lifetime",
    "spacing",
    "seed",
    "until",
)


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``uiap simulate`` to ``subparsers``.

    References: UIAP §2.4 (the protocol simulated).
    """
    uiap = subparsers.add_parser("uiap", help="UIAP node-ID allocation (draft-white-zeroconf)")
    commands = uiap.add_subparsers(dest="uiap_command", metavar="COMMAND", required=True)
    simulate = commands.add_parser(
        "simulate",
        help="run UIAP over a simulated site and report claims, messages and latency",
        description="Run UIAP engines over a simulated network in virtual time.",
    )
    simulate.add_argument("--scenario", metavar="FILE", help="a JSON scenario file")
    simulate.add_argument("--topology", choices=TOPOLOGIES, help="site shape (default random)")
    simulate.add_argument("--devices", type=int, metavar="N", help="devices (default 20)")
    simulate.add_argument(
        "--degree", type=float, metavar="D", help="average degree of --topology random (default 3)"
    )
    simulate.add_argument("--claims", type=int, metavar="N", help="random claims (default 100)")
    simulate.add_argument(
        "--spaces",
        type=int,
        metavar="N",
        help="distinct UIDs the claims choose from (default: --claims)",
    )
    simulate.add_argument("--lifetime", type=int, metavar="S", help="claim lifetime, seconds")
    simulate.add_argument(
        "--spacing",
        type=float,
        metavar="S",
        help="seconds between claims (default 3; a new claim takes 2.5)",
    )
    simulate.add_argument("--loss", type=float, metavar="P", help="per-link loss probability")
    simulate.add_argument("--seed", type=int, metavar="N", help="the one random seed (default 0)")
    simulate.add_argument("--until", type=float, metavar="S", help="stop at this virtual time")
    simulate.add_argument("--json", action="store_true", help="print one JSON object")
    simulate.set_defaults(handler=simulate_command)


def _scenario(args: argparse.Namespace) -> Scenario:
    scenario = load_scenario(args.scenario) if args.scenario else Scenario()
    overrides = {
        name: getattr(args, name) for name in _SCENARIO_FLAGS if getattr(args, name) is not None
    }
    if args.loss is not None:
        overrides["link"] = dataclasses.replace(scenario.link, loss=args.loss)
    return dataclasses.replace(scenario, **overrides)


def simulate_command(args: argparse.Namespace) -> int:
    """Run the scenario and print its report; exit status 0.

    References: UIAP §2.4.
    """
    scenario = _scenario(args)
    report = run_scenario(scenario)
    if args.json:
        print(json.dumps({"seed": scenario.seed, **report.to_json()}, sort_keys=True))
    else:
        print(
            f"seed {scenario.seed}: {scenario.devices} devices ({scenario.topology}), "
            f"link loss {scenario.link.loss}"
        )
        print(report.format_table())
    return 0
