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
import sys
from typing import Any, Final

from uuidkit.testing.scenario import TOPOLOGIES, Scenario, load_scenario, run_scenario

__all__ = ["register", "simulate_command"]

#: Exit status of a denied claim (0: granted, 2: bad input or daemon unreachable).
EXIT_DENIED: Final = 1
EXIT_UNREACHABLE: Final = 2

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
    simulate.add_argument(
        "--draft-only",
        action="store_true",
        help="engines with the draft's behaviour only (no copies, re-verification, tie-break)",
    )
    simulate.set_defaults(handler=simulate_command)
    _register_daemon_commands(commands)


def _scenario(args: argparse.Namespace) -> Scenario:
    scenario = load_scenario(args.scenario) if args.scenario else Scenario()
    overrides = {
        name: getattr(args, name) for name in _SCENARIO_FLAGS if getattr(args, name) is not None
    }
    if args.loss is not None:
        overrides["link"] = dataclasses.replace(scenario.link, loss=args.loss)
    if args.draft_only:
        overrides["engine"] = dataclasses.replace(
            scenario.engine, copies=1, verify_interval=None, tie_break=False
        )
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


# ---------------------------------------------------------------------- the daemon and its API


def _register_daemon_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """``uiap daemon`` and the API commands ``claim``, ``release``, ``list``, ``status``,
    ``watch`` (docs/uiap-api.md).

    References: UIAP §2.1.1, §4.4, §7, §10.
    """
    daemon = commands.add_parser(
        "daemon",
        help="run the UIAP service in the foreground (API on a Unix socket)",
        description="Run the UIAP daemon; flags override the --config TOML file.",
    )
    daemon.add_argument("--config", metavar="FILE", help="TOML configuration file")
    daemon.add_argument(
        "--socket", metavar="PATH", help="API socket path (default /run/uuidkit/uiapd.sock)"
    )
    daemon.add_argument("--state-dir", metavar="DIR", help="claims and device ID directory")
    daemon.add_argument(
        "--interface", action="append", metavar="NAME", help="run on NAME (repeatable)"
    )
    daemon.add_argument("--claim-period", type=float, metavar="S", help="UIAP_CLAIM_PERIOD")
    daemon.add_argument("--claim-timeout", type=float, metavar="S", help="UIAP_CLAIM_TIMEOUT")
    daemon.add_argument("--group", metavar="ADDR", help="UIAP multicast group")
    daemon.add_argument("--port", type=int, metavar="N", help="UDP claim port (default 1021)")
    daemon.add_argument("--reply-port", type=int, metavar="N", help="UDP reply port (1022)")
    daemon.add_argument("--ipv4", action="store_true", default=None, help="use IPv4")
    daemon.add_argument("--key-file", metavar="FILE", help="site key file (mode 0600)")
    daemon.add_argument(
        "--draft-only",
        action="store_true",
        default=None,
        help="the draft's behaviour only (no copies, re-verification, tie-break)",
    )
    daemon.add_argument("--log-level", choices=("debug", "info", "warning", "error"))
    daemon.set_defaults(handler=daemon_command)

    claim = _api_parser(commands, "claim", "claim a UID space through the daemon")
    claim.add_argument("--domain", required=True, metavar="DID", help="Domain ID (UIAP §6.1)")
    space = claim.add_mutually_exclusive_group(required=True)
    space.add_argument("--uid", metavar="HEX", help="one UID")
    space.add_argument("--prefix", metavar="HEX", help="every UID with this prefix")
    space.add_argument("--range", nargs=2, metavar="HEX", help="an inclusive range")
    claim.add_argument("--lifetime", type=int, default=3600, metavar="S", help="seconds")
    claim.add_argument("--reclaim", action="store_true", help="send a reclaim (R flag)")
    claim.add_argument("--renew", action="store_true", help="keep renewing until released")
    claim.add_argument("--json", action="store_true", help="print one JSON object")
    claim.set_defaults(handler=claim_command)
    release = _api_parser(commands, "release", "release a claim")
    release.add_argument("claim", metavar="CLAIM", help="claim ID")
    release.set_defaults(handler=release_command)
    for name, what, handler in (
        ("list", "list the daemon's claims", list_command),
        ("status", "show the daemon's status", status_command),
    ):
        parser = _api_parser(commands, name, what)
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.set_defaults(handler=handler)
    metrics = _api_parser(commands, "metrics", "print the daemon's metrics (Prometheus text)")
    metrics.set_defaults(handler=metrics_command)
    watch = _api_parser(commands, "watch", "print the daemon's events as JSON lines")
    watch.set_defaults(handler=watch_command)


def _api_parser(commands: argparse._SubParsersAction[Any], name: str, what: str) -> Any:
    parser = commands.add_parser(name, help=what, description=what.capitalize() + ".")
    parser.add_argument(
        "--socket",
        metavar="PATH",
        help="the daemon's socket (default: $UUIDKIT_UIAP_SOCKET, else /run/uuidkit/uiapd.sock)",
    )
    parser.add_argument(
        "--wait",
        type=_seconds,
        default=None,
        metavar="S",
        help="wait up to S seconds for a daemon that is starting (default 5)",
    )
    return parser


def _seconds(text: str) -> float:
    """A ``--wait`` value: finite seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected finite seconds >= 0, got {text!r}")
    return value


def _client(args: argparse.Namespace) -> Any:
    """The client an API command uses: ``--socket`` or its defaults, ``--wait`` or 5 s."""
    from uuidkit.uiapd.client import DEFAULT_WAIT_S, Client

    wait = DEFAULT_WAIT_S if args.wait is None else args.wait
    return Client(args.socket, wait=wait)


def daemon_command(args: argparse.Namespace) -> int:
    """Run the daemon in the foreground; 2 for a bad setting (one line naming the key)."""
    from uuidkit.daemon.main import run

    overrides = {
        "socket": args.socket,
        "state_dir": args.state_dir,
        "interfaces": tuple(args.interface) if args.interface else None,
        "claim_period": args.claim_period,
        "claim_timeout": args.claim_timeout,
        "group": args.group,
        "port": args.port,
        "reply_port": args.reply_port,
        "ipv4": args.ipv4,
        "key_file": args.key_file,
        "draft_only": args.draft_only,
        "log_level": args.log_level,
    }
    return run(args.config, overrides)


def _api_call(args: argparse.Namespace, call: Any) -> tuple[int, Any]:
    """Run ``call(client)``; an unreachable daemon or an API error is one line, status 2."""
    from uuidkit.uiapd.api import APIError

    try:
        with _client(args) as client:
            return 0, call(client)
    except APIError as error:
        print(f"uuidkit: error: {error} ({error.code.value})", file=sys.stderr)
        return EXIT_UNREACHABLE, None


def claim_command(args: argparse.Namespace) -> int:
    """Claim; 0 granted, 1 denied, 2 bad input or daemon unreachable."""
    from uuidkit.errors import SpaceError
    from uuidkit.uiap.domain import DomainID
    from uuidkit.uiap.space import UIDSpace

    domain = DomainID.parse(args.domain)
    try:
        if args.uid is not None:
            space = UIDSpace.unique(bytes.fromhex(args.uid))
        elif args.prefix is not None:
            space = UIDSpace.prefix(bytes.fromhex(args.prefix))
        else:
            space = UIDSpace.range(bytes.fromhex(args.range[0]), bytes.fromhex(args.range[1]))
    except ValueError as error:  # bytes.fromhex; uuidkit's own errors are ValueErrors too
        raise SpaceError(f"UID space: {error}") from None
    status, result = _api_call(
        args,
        lambda client: client.claim(
            domain, space, args.lifetime, reclaim=args.reclaim, renew=args.renew
        ),
    )
    if result is None:
        return status
    if args.json:
        print(json.dumps(dict(result.raw), sort_keys=True))
    elif result.granted:
        expires = "never" if result.expires is None else _when(result.expires)
        print(f"granted: claim {result.claim}, expires {expires} ({result.latency:.3f} s)")
    else:
        print(f"denied: {result.reason} ({result.latency:.3f} s)")
    return 0 if result.granted else EXIT_DENIED


def _when(unix: float) -> str:
    import datetime

    return datetime.datetime.fromtimestamp(unix, datetime.UTC).isoformat(timespec="seconds")


def release_command(args: argparse.Namespace) -> int:
    status, _ = _api_call(args, lambda client: client.release(args.claim))
    if status == 0:
        print(f"released {args.claim}")
    return status


def list_command(args: argparse.Namespace) -> int:
    status, claims = _api_call(args, lambda client: client.list_claims())
    if claims is None:
        return status
    if args.json:
        print(json.dumps(claims, sort_keys=True))
        return 0
    for claim in claims:
        space = claim.get("uid") or claim.get("prefix") or "..".join(claim.get("range", []))
        kind = "uid" if "uid" in claim else "prefix" if "prefix" in claim else "range"
        expires = "never" if claim["expires"] is None else _when(claim["expires"])
        print(
            f"{claim['claim']}  {claim['state']:<10} {claim['domain']}  {kind} {space}  "
            f"expires {expires}{'  renew' if claim['renew'] else ''}"
            f"{'  UNVERIFIED' if claim.get('verified') is False else ''}"
        )
    return 0


def status_command(args: argparse.Namespace) -> int:
    status, body = _api_call(args, lambda client: client.status())
    if body is None:
        return status
    if args.json:
        print(json.dumps(body, sort_keys=True))
        return 0
    import time

    from uuidkit.cli.uiap_status import status_lines

    print("\n".join(status_lines(body, time.time())))
    return 0


def metrics_command(args: argparse.Namespace) -> int:
    """Print the daemon's metrics in the Prometheus text exposition format."""
    status, text = _api_call(args, lambda client: client.metrics())
    if text is not None:
        sys.stdout.write(text)
    return status


def watch_command(args: argparse.Namespace) -> int:
    """Print events as JSON lines until interrupted or the daemon goes away."""
    from uuidkit.uiapd.api import APIError

    try:
        for event in _client(args).watch():
            print(json.dumps({"event": event.name, **event.fields}, sort_keys=True), flush=True)
    except APIError as error:
        print(f"uuidkit: error: {error} ({error.code.value})", file=sys.stderr)
        return EXIT_UNREACHABLE
    except KeyboardInterrupt:
        return 0
    return 0
