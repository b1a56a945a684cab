"""The daemon as an operator installs it: the systemd unit verifies, the manual page it names
exists and matches the command line, and the install section points the unit at what it installs.

References: UIAP §2.1.1 (the service); systemd.unit(5) (Documentation=), systemd-analyze(1)
(verify); docs/uiap-daemon.md (installing under systemd).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "contrib" / "systemd" / "uuidkit-uiapd.service"
MANPAGE = ROOT / "docs" / "uuidkit.1"
#: Where the install section's virtual environment puts the command the unit runs.
VENV_COMMAND = "/opt/uuidkit/bin/uuidkit"


def test_the_manual_page_matches_the_parser() -> None:
    # In a fresh process, as CI's clone runs it. Stale? PYTHONPATH=src python3 tools/gen_manpage.py
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_manpage.py"), "--check"],
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


def test_the_manual_page_names_every_command() -> None:
    text = MANPAGE.read_text(encoding="utf-8")
    assert text.startswith('.\\" Generated') and ".TH UUIDKIT 1 " in text
    for command in ("gen", "inspect", "convert", "uiap daemon", "uiap claim", "uiap metrics"):
        assert f".SS uuidkit {command}\n" in text, command
    assert "UUIDKIT_UIAP_SOCKET" in text and "\\-\\-wait" in text


def test_the_unit_runs_the_command_the_install_section_installs() -> None:
    unit = UNIT.read_text(encoding="utf-8")
    (exec_start,) = re.findall(r"^ExecStart=(\S+) uiap daemon ", unit, re.MULTILINE)
    assert exec_start == VENV_COMMAND
    assert "Documentation=man:uuidkit(1)" in unit
    guide = (ROOT / "docs" / "uiap-daemon.md").read_text(encoding="utf-8")
    install = guide.split("## Installing under systemd", 1)[1].split("\n## ", 1)[0]
    assert "python3 -m venv /opt/uuidkit" in install
    assert "/opt/uuidkit/bin/pip install" in install or "/opt/uuidkit/bin/python3 -m pip" in install
    assert "docs/uuidkit.1" in install  # the page the unit's Documentation= names
    # Every ExecStart the guide shows runs the same command as the unit.
    for command in re.findall(r"ExecStart=(\S+)", install):
        assert command == VENV_COMMAND, command


def _verify(unit: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = ["systemd-analyze", "verify", str(unit)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
def test_the_unit_verifies(tmp_path: Path) -> None:
    """``systemd-analyze verify`` as on an installed host: the command the unit runs exists
    (a stand-in at the venv's path, the only change to the file) and ``man uuidkit(1)``
    finds the page (MANPATH names a copy of docs/uuidkit.1)."""
    command = tmp_path / "opt" / "uuidkit" / "bin" / "uuidkit"
    command.parent.mkdir(parents=True)
    command.write_text("#!/bin/sh\nexit 0\n")
    command.chmod(0o755)
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text(encoding="utf-8").replace(VENV_COMMAND, str(command)))
    (tmp_path / "man" / "man1").mkdir(parents=True)
    shutil.copy(MANPAGE, tmp_path / "man" / "man1" / "uuidkit.1")
    env = {**os.environ, "MANPATH": str(tmp_path / "man"), "SYSTEMD_LOG_LEVEL": "notice"}
    done = _verify(unit, env)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
def test_the_verify_check_catches_a_missing_manual_page(tmp_path: Path) -> None:
    # The check above would fail without the page: the unit's Documentation= is checked.
    command = tmp_path / "uuidkit"
    command.write_text("#!/bin/sh\nexit 0\n")
    command.chmod(0o755)
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text(encoding="utf-8").replace(VENV_COMMAND, str(command)))
    (tmp_path / "man").mkdir()
    env = {**os.environ, "MANPATH": str(tmp_path / "man")}
    done = _verify(unit, env)
    assert done.returncode != 0 and "uuidkit(1)" in done.stdout + done.stderr
