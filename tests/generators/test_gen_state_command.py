"""``uuidkit state show`` and ``uuidkit state reset``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gen_fakes import NS_PER_MS, START_NS

from uuidkit.cli import main
from uuidkit.generators.statefile import StateFile, StoredState

START_MS = START_NS // NS_PER_MS


def test_show_human_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.state"
    StateFile(path).write(StoredState("v7", START_MS, START_MS + 999, 42, None, START_NS))
    assert main(["state", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "kind:           v7" in out
    assert "2026-01-01T00:00:00+00:00 .. 2026-01-01T00:00:00.999000+00:00" in out
    assert "next counter:   42" in out
    assert main(["state", "show", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["next_range"] == 42


def test_show_v6_node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v6.state"
    ticks = START_NS // 100 + 0x01B21DD213814000
    StateFile(path).write(StoredState("v6", ticks, ticks + 10, 7, 0x0123456789AB, START_NS))
    assert main(["state", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "node:           0123456789ab" in out and "next clock_seq: 7" in out


def test_show_corrupted_names_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.state"
    path.write_text('{"kind": "v7"}')
    assert main(["state", "show", str(path)]) == 2
    assert "corrupted: checksum" in capsys.readouterr().err
    assert main(["state", "show", str(tmp_path / "none.state")]) == 2
    assert "missing" in capsys.readouterr().err


def test_reset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.state"
    StateFile(path).write(StoredState("v7", 1, 2, 3, None, 4))
    assert main(["state", "reset", str(path)]) == 0
    assert not path.exists()
    assert main(["state", "reset", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"removed {path}", f"no state file at {path}"]


@pytest.mark.timeout(30)
def test_show_refuses_a_fifo_and_a_symlink_without_blocking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe.state"
    os.mkfifo(fifo, 0o600)
    assert main(["state", "show", str(fifo)]) == 2
    assert "a FIFO, not a state file" in capsys.readouterr().err
    link = tmp_path / "link.state"
    StateFile(tmp_path / "real.state").write(StoredState("v7", 1, 2, 3, None, 4))
    link.symlink_to(tmp_path / "real.state")
    assert main(["state", "show", str(link)]) == 2
    assert "a symbolic link, not a state file" in capsys.readouterr().err
