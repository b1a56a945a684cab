"""The three-host example of docs/uiap-testbed.md, run as a reader pastes it: one block, the
daemons started in the background and the first claim sent at once (the client waits for the
daemon's socket), the client commands' socket from ``UUIDKIT_UIAP_SOCKET``.

Only the names are made unique (this run's namespace prefix and a temporary directory), and
``uuidkit`` on ``PATH`` is this checkout. The output must match the page's, up to what differs
from run to run (claim and device IDs, times, the pid).

References: UIAP §2.4.1, §2.4.2 (granted, then denied to a second host); docs/uiap-testbed.md.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from netns_topology import PREFIX, ROOT, Network, cleanup_prefix

PAGE = ROOT / "docs" / "uiap-testbed.md"
MARKER = "<!-- netns example:"


def _blocks() -> tuple[str, str]:
    """The example's commands and the output the page shows for them."""
    text = PAGE.read_text(encoding="utf-8")
    after = text[text.index(MARKER) :]
    commands = after.split("```sh\n", 1)[1].split("```", 1)[0]
    output = after.split("```\n", 2)[2].split("```", 1)[0]
    return commands, output


def _normalised(text: str) -> list[str]:
    """Lines with what differs between runs replaced by placeholders."""
    lines = []
    for line in text.strip().splitlines():
        line = re.sub(r"\b[0-9a-f]{16}\b", "<id>", line)
        line = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", "<time>", line)
        line = re.sub(r"\b\d+\.\d+\b", "<number>", line)
        line = re.sub(r"\bpid \d+", "pid <pid>", line)
        # Duplicate flood copies dropped on the way vary with the order datagrams arrive in.
        line = re.sub(r"^drops: \{.*\}$", "drops: <counts>", line)
        lines.append(line)
    return lines


def test_the_testbed_example_runs_as_pasted(network: Network, tmp_path: Path) -> None:
    commands, expected = _blocks()
    site = tmp_path / "site"
    script = commands.replace("uiap-", f"{PREFIX}-").replace("/tmp/uiap", str(site))
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "uuidkit").write_text(f'#!/bin/sh\nexec {sys.executable} -m uuidkit "$@"\n')
    (shim / "uuidkit").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{shim}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT / "src"),
    }
    env.pop("UUIDKIT_UIAP_SOCKET", None)
    try:
        done = subprocess.run(
            ["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120
        )
    finally:
        cleanup_prefix()  # whatever the script left, should it stop early
    assert done.returncode == 0, done.stderr
    assert _normalised(done.stdout) == _normalised(expected), done.stderr
    assert not site.exists()  # the block cleans up after itself
