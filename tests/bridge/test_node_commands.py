"""``uuidkit gen --node-from SOCKET`` and ``uuidkit inspect --layout`` (in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_daemon import FakeDaemon

from uuidkit.cli import main
from uuidkit.nodelayouts import MULTICAST_BIT, build_v7_node, build_v8_node, read_node_layout
from uuidkit.parse import parse


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("version", "layout"), [(1, "v1-node"), (6, "v6-node"), (7, "v7-node"), (8, "v8-node")]
)
def test_gen_node_from_prints_values_with_the_claimed_node(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, version: int, layout: str
) -> None:
    daemon = FakeDaemon(tmp_path)
    try:
        status, out, _ = run(
            capsys, "gen", "-v", str(version), "--node-from", daemon.path, "-n", "500"
        )
        values = [parse(line) for line in out.splitlines()]
        assert status == 0 and len(set(values)) == 500
        (claim,) = daemon.claim_methods()
        node = int(claim["params"]["uid"], 16)
        assert node & MULTICAST_BIT
        assert {read_node_layout(v, layout).node for v in values} == {node}
    finally:
        daemon.stop()


def test_gen_node_from_without_a_daemon_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run(capsys, "gen", "-v", "7", "--node-from", str(tmp_path / "none.sock"))
    assert (status, out) == (2, "")
    assert "unreachable" in err and err.count("\n") == 1


def test_gen_node_from_refuses_other_versions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_status:
        main(["gen", "-v", "4", "--node-from", "/nonexistent"])
    assert exit_status.value.code == 2
    assert "--node-from" in capsys.readouterr().err


def test_inspect_layout_shows_the_node(capsys: pytest.CaptureFixture[str]) -> None:
    node = 0x0123_4567_89AB | MULTICAST_BIT
    v7 = build_v7_node(0x0190_0000_0000, 12345, node)
    status, out, _ = run(capsys, "inspect", "--layout", "v7-node", "--json", str(v7))
    description = json.loads(out)
    assert status == 0 and description["layout"] == "v7-node"
    assert description["fields"] == {"unix_ts_ms": 0x0190_0000_0000, "counter": 12345, "node": node}
    v8 = build_v8_node(0x0190_0000_0000, 2048, 7, node)
    status, out, _ = run(capsys, "inspect", "--layout", "v8-node", str(v8))
    assert "node                 " in out and f"(0x{node:x})" in out
    assert out.endswith("5000Z\n")  # ms_fraction 2048/4096: half a millisecond (500,000 ns)


def test_inspect_layout_with_the_wrong_version_names_the_input(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["inspect", "--layout", "v7-node", "00000000-0000-4000-8000-000000000000"])
    assert status == 2
    assert "needs a version 7 UUID" in capsys.readouterr().err
