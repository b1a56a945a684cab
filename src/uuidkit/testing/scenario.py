"""Scenario files: a site, its links, a claim workload and a timeline, as one JSON object.

::

    {
      "topology": "random", "devices": 50, "degree": 4, "seed": 7,
      "link": {"delay": 0.001, "jitter": 0.0005, "loss": 0.1},
      "engine": {"claim_attempts": 3},
      "claims": 1000, "spaces": 1000, "lifetime": 3600, "spacing": 3.0,
      "timeline": [
        {"at": 0.0, "claim": {"device": 0, "uid": "0001", "lifetime": 60, "proxy": true}},
        {"at": 9.0, "claim": {"device": 0, "uid": "0001", "reclaim": true}},
        {"at": 2.0, "partition": "bridge"}, {"at": 8.0, "merge": "bridge"},
        {"at": 3.0, "crash": 4, "keep_state": false}, {"at": 5.0, "restart": 4},
        {"at": 6.0, "link": "l0", "config": {"loss": 0.5}}
      ],
      "until": 100.0
    }

Every key is optional. ``topology`` is one of :data:`TOPOLOGIES`; ``two_sites`` splits
``devices`` into two sites of kind ``site_topology`` joined by a ``"bridge"`` link that
starts down. ``claims`` random new claims, one every ``spacing`` seconds from ``start``,
are made by uniformly random devices for uniformly random 2-octet UIDs among ``spaces``
values (default: as many as claims), in ``domain``. A timeline claim names its space by
``uid`` (unique value), ``prefix`` or ``range`` (two UIDs), in hexadecimal.

References: UIAP §3.2.2 (unique, prefix, range), §4.4 (reclaim), §5.1 (proxy), §2.1.2
(merges), §10 (engine defaults).
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from uuidkit.errors import SimulationError, UIAPError
from uuidkit.testing import topologies
from uuidkit.testing.engines import engine_factory
from uuidkit.testing.network import LinkConfig
from uuidkit.testing.report import Report
from uuidkit.testing.simulator import Simulator
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.engine import EngineConfig
from uuidkit.uiap.space import UIDSpace

__all__ = [
    "TOPOLOGIES",
    "Scenario",
    "add_random_claims",
    "build_simulator",
    "build_topology",
    "load_scenario",
    "parse_scenario",
    "run_scenario",
]

#: The largest scenario file read: far above any real one, and a bound for a path that is
#: not a scenario at all (``/dev/zero``).
MAX_SCENARIO_OCTETS: Final = 1024 * 1024
#: The topology names a scenario's ``topology`` key may give.
TOPOLOGIES: Final = ("line", "ring", "star", "grid", "random", "segment_tree", "two_sites")
#: Random claims use UIDs of this many octets, so ``spaces`` may be up to 65,536.
_WORKLOAD_UID_OCTETS: Final = 2
_TIMELINE_ACTIONS: Final = ("claim", "partition", "merge", "crash", "restart", "link")


@dataclass(frozen=True)
class Scenario:
    """Everything one simulated run needs; the fields are the scenario file's keys.

    Times are seconds of virtual time; ``loss`` and the other link fields are in ``link``.

    References: UIAP §2.1.2, §3.2.2, §4.4, §5.1, §10.
    """

    topology: str = "random"
    devices: int = 20
    degree: float = 3.0
    columns: int | None = None
    segment_size: int = 4
    site_topology: str = "line"
    seed: int = 0
    link: LinkConfig = field(default_factory=LinkConfig)
    engine: EngineConfig = field(default_factory=lambda: EngineConfig(drop_events=False))
    domain: str = "fff:0:1:0"
    claims: int = 100
    spaces: int | None = None
    lifetime: int = 3600
    spacing: float = 3.0
    start: float = 0.0
    timeline: tuple[Mapping[str, Any], ...] = ()
    until: float | None = None


def _fail(message: str, key: str) -> SimulationError:
    return SimulationError(f"scenario {key}: {message}", key)


def _expect(value: Any, kinds: type | tuple[type, ...], key: str) -> Any:
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise _fail(f"expected {kinds}, found {value!r}", key)
    if not isinstance(value, kinds):
        raise _fail(f"expected {kinds}, found {value!r}", key)
    return value


def parse_scenario(data: Mapping[str, Any]) -> Scenario:
    """A :class:`Scenario` from a decoded JSON object; unknown keys and wrong types raise
    :class:`SimulationError` naming the key.

    References: UIAP §10 (engine defaults), §3.2.2.
    """
    _expect(data, dict, "(top level)")
    names = {f.name for f in dataclasses.fields(Scenario)}
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in names:
            raise _fail(f"unknown key (expected one of {sorted(names)})", key)
        values[key] = value
    for key in ("devices", "segment_size", "seed", "claims", "lifetime"):
        if key in values:
            _expect(values[key], int, key)
    for key in ("degree", "spacing", "start"):
        if key in values:
            values[key] = float(_expect(values[key], (int, float), key))
    for key in ("spaces", "columns"):
        if values.get(key) is not None:
            _expect(values[key], int, key)
    if values.get("until") is not None:
        values["until"] = float(_expect(values["until"], (int, float), "until"))
    for key in ("topology", "site_topology"):
        if key in values and values[key] not in TOPOLOGIES:
            raise _fail(f"expected one of {TOPOLOGIES}, found {values[key]!r}", key)
    if "link" in values:
        values["link"] = _build("link", LinkConfig, values["link"])
    if "engine" in values:
        engine = {"drop_events": False, **_expect(values["engine"], dict, "engine")}
        values["engine"] = _build("engine", EngineConfig, engine)
    if "domain" in values:
        _domain(_expect(values["domain"], str, "domain"))
    values["timeline"] = tuple(
        _check_action(entry, index)
        for index, entry in enumerate(_expect(values.get("timeline", []), list, "timeline"))
    )
    return Scenario(**values)


def _build(key: str, kind: Callable[..., Any], options: Any) -> Any:
    try:
        return kind(**_expect(options, dict, key))
    except TypeError as error:
        raise _fail(str(error), key) from None
    except UIAPError as error:
        raise _fail(str(error), key) from None


def _domain(text: str) -> DomainID:
    try:
        return DomainID.parse(text)
    except UIAPError as error:
        raise _fail(str(error), "domain") from None


def _check_action(entry: Any, index: int) -> Mapping[str, Any]:
    key = f"timeline[{index}]"
    checked: dict[str, Any] = _expect(entry, dict, key)
    _expect(entry.get("at"), (int, float), f"{key}.at")
    actions = [name for name in _TIMELINE_ACTIONS if name in entry]
    if len(actions) != 1:
        raise _fail(f"expected exactly one of {_TIMELINE_ACTIONS}, found {actions}", key)
    if actions[0] == "claim":
        claim = _expect(entry["claim"], dict, f"{key}.claim")
        _expect(claim.get("device"), int, f"{key}.claim.device")
        _space(claim, f"{key}.claim")
        # Checked here, not when the run reaches the entry: a string lifetime would raise
        # TypeError mid-run, and "reclaim": "no" would silently be a reclaim.
        if "lifetime" in claim:
            _expect(claim["lifetime"], int, f"{key}.claim.lifetime")
        for flag in ("reclaim", "proxy"):
            if flag in claim:
                _expect(claim[flag], bool, f"{key}.claim.{flag}")
    elif actions[0] in ("crash", "restart"):
        _expect(entry[actions[0]], int, f"{key}.{actions[0]}")
        if "keep_state" in entry:
            _expect(entry["keep_state"], bool, f"{key}.keep_state")
    else:
        _expect(entry[actions[0]], str, f"{key}.{actions[0]}")
        if actions[0] == "link":
            _build(f"{key}.config", LinkConfig, entry.get("config", {}))
    return checked


def _hex(text: Any, key: str) -> bytes:
    try:
        return bytes.fromhex(_expect(text, str, key))
    except ValueError:
        raise _fail(f"expected hexadecimal octets, found {text!r}", key) from None


def _space(claim: Mapping[str, Any], key: str) -> UIDSpace:
    forms = [name for name in ("uid", "prefix", "range") if name in claim]
    if len(forms) != 1:
        raise _fail(f"expected exactly one of uid, prefix, range; found {forms}", key)
    if forms[0] == "uid":
        return UIDSpace.unique(_hex(claim["uid"], f"{key}.uid"))
    if forms[0] == "prefix":
        return UIDSpace.prefix(_hex(claim["prefix"], f"{key}.prefix"))
    bounds = _expect(claim["range"], list, f"{key}.range")
    if len(bounds) != 2:
        raise _fail(f"expected two UIDs, found {len(bounds)}", f"{key}.range")
    return UIDSpace.range(_hex(bounds[0], f"{key}.range"), _hex(bounds[1], f"{key}.range"))


def load_scenario(path: str | Path) -> Scenario:
    """Read and parse a scenario file (UTF-8 JSON).

    References: UIAP §10.
    """
    with Path(path).open("rb") as file:
        raw = file.read(MAX_SCENARIO_OCTETS + 1)  # bounded: never the whole of a device
    if len(raw) > MAX_SCENARIO_OCTETS:
        raise SimulationError(
            f"scenario {path}: larger than {MAX_SCENARIO_OCTETS} octets", "(file)"
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise SimulationError(
            f"scenario {path}: not UTF-8: octet {error.start}", "(file)"
        ) from None
    except json.JSONDecodeError as error:
        raise SimulationError(
            f"scenario {path}: not JSON: {error.msg} at line {error.lineno} column {error.colno}",
            "(file)",
        ) from None
    return parse_scenario(data)


def build_topology(scenario: Scenario, rng: random.Random) -> topologies.Topology:
    """The scenario's topology; a random graph draws from ``rng``.

    References: UIAP §2.3, §2.1.2.
    """
    kind, devices = scenario.topology, scenario.devices
    if kind == "two_sites":
        half = devices // 2
        site_a = _single(scenario.site_topology, half, scenario, rng)
        site_b = _single(scenario.site_topology, devices - half, scenario, rng)
        return topologies.two_sites(site_a, site_b)
    return _single(kind, devices, scenario, rng)


def _single(kind: str, devices: int, scenario: Scenario, rng: random.Random) -> topologies.Topology:
    if kind == "line":
        return topologies.line(devices)
    if kind == "ring":
        return topologies.ring(devices)
    if kind == "star":
        return topologies.star(devices)
    if kind == "grid":
        return topologies.grid(devices, scenario.columns)
    if kind == "random":
        return topologies.random_graph(devices, scenario.degree, rng)
    if kind == "segment_tree":
        return topologies.segment_tree(devices, scenario.segment_size)
    raise _fail(f"a site cannot itself be {kind!r}", "site_topology")


def add_random_claims(
    simulator: Simulator,
    domain: DomainID,
    claims: int,
    *,
    spaces: int | None = None,
    lifetime: int = 3600,
    spacing: float = 3.0,
    start: float = 0.0,
) -> None:
    """Schedule ``claims`` new claims by random devices for random 2-octet UIDs, drawn from
    the simulator's generator.

    References: UIAP §2.4.1, §3.2.2 (unique value).
    """
    if claims < 0:
        raise _fail(f"expected 0 or more claims, found {claims}", "claims")
    pool = spaces if spaces is not None else max(claims, 1)
    if not 1 <= pool <= 1 << (8 * _WORKLOAD_UID_OCTETS):
        raise _fail(f"expected 1 .. 65536 spaces, found {pool}", "spaces")
    draw = simulator.random.randrange
    devices = len(simulator.devices)
    for index in range(claims):
        uid = draw(pool).to_bytes(_WORKLOAD_UID_OCTETS, "big")
        simulator.claim(
            draw(devices),
            domain,
            UIDSpace.unique(uid),
            at=start + index * spacing,
            lifetime=lifetime,
        )


def build_simulator(scenario: Scenario) -> Simulator:
    """A simulator with the scenario's topology, links, engines, workload and timeline.

    References: UIAP §2.4, §2.1.2, §5.1.
    """
    if scenario.until is not None and not scenario.until >= 0:
        raise _fail(f"expected seconds >= 0, found {scenario.until!r}", "until")
    rng = random.Random(scenario.seed)
    topology = build_topology(scenario, rng)
    simulator = Simulator(
        topology,
        seed=scenario.seed,
        rng=rng,
        link=scenario.link,
        engine_factory=engine_factory(scenario.engine),
    )
    domain = _domain(scenario.domain)
    add_random_claims(
        simulator,
        domain,
        scenario.claims,
        spaces=scenario.spaces,
        lifetime=scenario.lifetime,
        spacing=scenario.spacing,
        start=scenario.start,
    )
    for entry in scenario.timeline:
        _schedule(simulator, domain, entry, scenario.lifetime)
    return simulator


def _schedule(
    simulator: Simulator, domain: DomainID, entry: Mapping[str, Any], lifetime: int
) -> None:
    at = float(entry["at"])
    if "claim" in entry:
        claim = entry["claim"]
        simulator.claim(
            claim["device"],
            domain,
            _space(claim, "claim"),
            at=at,
            lifetime=claim.get("lifetime", lifetime),
            reclaim=bool(claim.get("reclaim")),
            proxy=bool(claim.get("proxy")),
        )
    elif "partition" in entry:
        simulator.partition(entry["partition"], at=at)
    elif "merge" in entry:
        simulator.merge(entry["merge"], at=at)
    elif "crash" in entry:
        simulator.crash(entry["crash"], at=at, keep_state=bool(entry.get("keep_state")))
    elif "restart" in entry:
        simulator.restart(entry["restart"], at=at)
    else:
        simulator.configure_link(entry["link"], LinkConfig(**entry.get("config", {})), at=at)


def run_scenario(scenario: Scenario) -> Report:
    """Build and run the scenario to its ``until`` (or until nothing is left to do).

    References: UIAP §2.4.
    """
    return build_simulator(scenario).run(scenario.until)
