"""``uuidkit uiap simulate``: flags, scenario files, table and JSON output, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from uuidkit.cli import main
from uuidkit.testing import Scenario, build_simulator
from uuidkit.uiap import UIAP_CLAIM_PERIOD_S, UIAP_CLAIM_TIMEOUT_S, UIAP_NEW_CLAIM_ATTEMPTS

REQUIRED_KEYS = {
    "claims",
    "granted",
    "denied",
    "wrongly_granted",
    "messages_per_claim",
    "latency_p50",
    "latency_p99",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["uiap", "simulate", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    status, out, err = run(capsys, "--json", *argv)
    assert (status, err) == (0, "") and out.count("\n") == 1
    data: dict[str, object] = json.loads(out)
    return data


@pytest.mark.parametrize("topology", ["line", "ring", "star", "grid", "random"])
def test_every_topology_flag_gives_the_json_keys(
    capsys: pytest.CaptureFixture[str], topology: str
) -> None:
    data = run_json(capsys, "--topology", topology, "--devices", "6", "--claims", "4")
    assert data.keys() >= REQUIRED_KEYS
    assert data["claims"] == 4 and data["pending"] == 0


def test_flags_decide_the_run_and_a_seed_replays_it(capsys: pytest.CaptureFixture[str]) -> None:
    # The draft's engines: one datagram per flood and per deny, no re-verification.
    argv = (
        "--topology",
        "ring",
        "--devices",
        "10",
        "--claims",
        "20",
        "--seed",
        "1",
        "--draft-only",
    )
    first = run_json(capsys, *argv)
    assert first == run_json(capsys, *argv)
    # Bounds from the protocol, not numbers the code produced (UIAP §2.4.1, §4.2.2.1):
    # without loss and with claims 3 s apart, the first claim of each space is granted and
    # every later one denied, never wrongly granted; a granted claim takes exactly
    # attempts x period + timeout; its originator sends at least `attempts` datagrams, and
    # each device forwards a message at most once to each of its (devices - 1) neighbours.
    schedule = build_simulator(Scenario(topology="ring", devices=10, claims=20, seed=1))
    distinct_spaces = len({record.space for record in schedule.records})
    assert (first["granted"], first["denied"]) == (distinct_spaces, 20 - distinct_spaces)
    assert first["wrongly_granted"] == 0
    claim_time = UIAP_NEW_CLAIM_ATTEMPTS * UIAP_CLAIM_PERIOD_S + UIAP_CLAIM_TIMEOUT_S
    assert first["latency_p50"] == first["latency_p99"] == pytest.approx(claim_time)
    floods = 20 * (UIAP_NEW_CLAIM_ATTEMPTS + 1)  # each claim's attempts, and one deny
    assert distinct_spaces * UIAP_NEW_CLAIM_ATTEMPTS <= first["messages"] <= floods * 10 * 9  # type: ignore[operator]
    lossy = run_json(capsys, *argv, "--loss", "0.3")
    assert lossy["drops"]["network: lost on link"] > 0  # type: ignore[index]


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "--topology", "grid", "--devices", "9", "--claims", "5", "--seed", "2"
    )
    lines = out.splitlines()
    assert status == 0
    assert lines[0] == "seed 2: 9 devices (grid), link loss 0.0"
    assert lines[1].split() == ["claims", "5"]
    claim_time = UIAP_NEW_CLAIM_ATTEMPTS * UIAP_CLAIM_PERIOD_S + UIAP_CLAIM_TIMEOUT_S
    assert ["latency_p99", str(claim_time)] in [line.split() for line in lines]
    # A 3x3 grid has cycles, so every flood reaches some device twice: duplicates are
    # dropped (UIAP §4.2.2.1) and counted.
    label, duplicates = lines[-1].rsplit(maxsplit=1)
    assert label.split() == ["drop:", "engine:", "duplicate"] and int(duplicates) > 0


def test_a_scenario_file_with_flags_overriding_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "site.json"
    path.write_text(
        json.dumps(
            {"topology": "line", "devices": 4, "claims": 3, "seed": 9, "link": {"delay": 0.01}}
        ),
        encoding="utf-8",
    )
    from_file = run_json(capsys, "--scenario", str(path))
    assert (from_file["seed"], from_file["claims"]) == (9, 3)
    overridden = run_json(capsys, "--scenario", str(path), "--claims", "5", "--loss", "1.0")
    assert overridden["claims"] == 5
    assert overridden["granted"] == 5 - overridden["lost"] - overridden["denied"]  # type: ignore[operator]


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (("--loss", "1.5"), 2, "link loss: expected a probability in [0, 1], found 1.5"),
        (("--topology", "ring", "--devices", "2"), 2, "ring: expected at least 3 devices"),
        # An unreadable file is an OSError: exit status 1 (uuidkit.cli.main).
        (("--scenario", "/nonexistent/site.json"), 1, "No such file"),
    ],
)
def test_bad_input_is_one_line_on_stderr(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], status: int, message: str
) -> None:
    assert run(capsys, *argv)[:2] == (status, "")
    err = run(capsys, *argv)[2]
    assert err.count("\n") == 1 and message in err


def test_the_installed_entry_point() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "uuidkit", "uiap", "simulate", "--claims", "2", "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(completed.stdout).keys() >= REQUIRED_KEYS
