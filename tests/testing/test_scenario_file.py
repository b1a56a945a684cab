"""Scenario files: every key and timeline action, and errors that name the key at fault."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from uuidkit.errors import SimulationError
from uuidkit.testing import (
    ClaimOutcome,
    LinkConfig,
    Scenario,
    build_simulator,
    load_scenario,
    parse_scenario,
    run_scenario,
)
from uuidkit.testing.scenario import MAX_SCENARIO_OCTETS, build_topology
from uuidkit.uiap import UIDSpace

MERGE_SCENARIO: dict[str, Any] = {
    "topology": "two_sites",
    "site_topology": "line",
    "devices": 6,
    "seed": 4,
    "claims": 0,
    "lifetime": 120,
    "link": {"delay": 0.002},
    "engine": {"claim_attempts": 2},
    "timeline": [
        {"at": 0, "claim": {"device": 0, "uid": "2a"}},
        {"at": 0, "claim": {"device": 5, "prefix": "2a", "lifetime": 60}},
        {"at": 5, "merge": "bridge"},
        {"at": 10, "claim": {"device": 0, "uid": "2a", "reclaim": True, "proxy": True}},
        {"at": 11, "crash": 1, "keep_state": True},
        {"at": 12, "restart": 1},
        {"at": 13, "link": "a.l0", "config": {"loss": 1.0}},
        {"at": 14, "partition": "bridge"},
        {"at": 15, "claim": {"device": 2, "range": ["20", "30"]}},
    ],
    "until": 30,
}


def test_a_scenario_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "merge.json"
    path.write_text(json.dumps(MERGE_SCENARIO), encoding="utf-8")
    scenario = load_scenario(path)
    assert scenario.link == LinkConfig(delay=0.002)
    assert scenario.engine.claim_attempts == 2 and not scenario.engine.drop_events
    sim = build_simulator(scenario)
    report = sim.run(scenario.until)
    outcomes = [(r.device, r.outcome, r.reason) for r in sim.records]
    assert outcomes == [
        (0, ClaimOutcome.GRANTED, None),
        (5, ClaimOutcome.GRANTED, None),
        # After the merge the reclaim of 2a meets device 5's prefix 2a and is denied.
        (0, ClaimOutcome.DENIED, "denied"),
        # Device 2 forwarded that X+R reclaim and proxy-defends it: §5.1 proxies cannot
        # know it was denied ("at the expense of some false Claim-Deny messages").
        (2, ClaimOutcome.DENIED, "proxy-defended"),
    ]
    assert sim.records[1].lifetime == 60 and sim.records[0].lifetime == 120
    assert sim.records[3].space == UIDSpace.range(b"\x20", b"\x30")
    assert report.wrongly_granted == 1 and report.duration == 30.0


def test_run_scenario_with_a_workload() -> None:
    report = run_scenario(Scenario(topology="star", devices=5, claims=10, spaces=4, seed=2))
    assert (report.claims, report.pending) == (10, 0)
    assert report.granted == 4 and report.wrongly_granted == 0


def test_every_topology_kind_builds() -> None:
    import random

    for kind in ("line", "ring", "star", "grid", "random", "segment_tree", "two_sites"):
        topology = build_topology(Scenario(topology=kind, devices=9), random.Random(0))
        assert topology.devices == 9


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"topolgy": "ring"}, "topolgy"),
        ({"topology": "torus"}, "topology"),
        ({"devices": "ten"}, "devices"),
        ({"devices": True}, "devices"),
        ({"degree": "x"}, "degree"),
        ({"link": {"loss": 2.0}}, "link"),
        ({"link": {"speed": 1}}, "link"),
        ({"engine": {"claim_attempts": 0}}, "engine"),
        ({"domain": "1:2:3"}, "domain"),
        ({"timeline": [{"at": 0}]}, "timeline[0]"),
        ({"timeline": [{"at": 0, "crash": 1, "restart": 1}]}, "timeline[0]"),
        ({"timeline": [{"claim": {"device": 0, "uid": "00"}}]}, "timeline[0].at"),
        ({"timeline": [{"at": 0, "claim": {"uid": "00"}}]}, "timeline[0].claim.device"),
        ({"timeline": [{"at": 0, "claim": {"device": 0, "uid": "zz"}}]}, "timeline[0].claim.uid"),
        ({"timeline": [{"at": 0, "claim": {"device": 0}}]}, "timeline[0].claim"),
        (
            {"timeline": [{"at": 0, "claim": {"device": 0, "range": ["00"]}}]},
            "timeline[0].claim.range",
        ),
        ({"timeline": [{"at": 0, "partition": 3}]}, "timeline[0].partition"),
        (
            {"timeline": [{"at": 0, "claim": {"device": 0, "uid": "00", "lifetime": "60"}}]},
            "timeline[0].claim.lifetime",
        ),
        (
            {"timeline": [{"at": 0, "claim": {"device": 0, "uid": "00", "reclaim": "no"}}]},
            "timeline[0].claim.reclaim",
        ),
        (
            {"timeline": [{"at": 0, "claim": {"device": 0, "uid": "00", "proxy": 1}}]},
            "timeline[0].claim.proxy",
        ),
        ({"timeline": [{"at": 0, "crash": 1, "keep_state": "no"}]}, "timeline[0].keep_state"),
        ({"claims": -1}, "claims"),
        ({"until": -5}, "until"),
        ({"site_topology": "two_sites", "topology": "two_sites"}, "site_topology"),
        ([], "(top level)"),
    ],
)
def test_errors_name_the_key(data: Any, field: str) -> None:
    with pytest.raises(SimulationError) as caught:
        build_simulator(parse_scenario(data))
    assert caught.value.field == field
    assert str(caught.value).startswith(f"scenario {field}:")


def test_a_scenario_file_is_read_with_a_bound(tmp_path: Path) -> None:
    # As the daemon's configuration: a stand-in for /dev/zero is refused by its size.
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(MAX_SCENARIO_OCTETS + 1)
    with pytest.raises(SimulationError, match=f"larger than {MAX_SCENARIO_OCTETS} octets"):
        load_scenario(path)
    path.write_bytes(b'{"devices": "\xff"}')
    with pytest.raises(SimulationError, match="not UTF-8: octet 13"):
        load_scenario(path)


def test_a_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{\n  'devices': 3\n}", encoding="utf-8")
    with pytest.raises(SimulationError, match=r"not JSON: .* at line 2 column 3"):
        load_scenario(path)
