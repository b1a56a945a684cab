"""Who reads the clock and the system's entropy (docs/architecture.md, "Two clocks").

In the UUID core exactly one module, ``_system.py``, reads the system clock and the
operating system's entropy; every other core module takes them as arguments (defaulting to
``_system``'s names), so tests control both. The protocol (``uiap/``) and the simulator
(``testing/``) read neither: time is passed in, and randomness is a ``random.Random`` they
are given or seed. Only the I/O layers (``net/``, ``daemon/``, ``bridge/``, ``cli/``,
``integrations/``) read clocks of their own, such as the event loop's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "uuidkit"

#: Packages that do I/O and may read a clock or entropy themselves.
IO_LAYERS = {"net", "daemon", "bridge", "cli", "integrations"}
#: The one core module that reads them.
THE_READER = "_system.py"

#: ``module.function`` reads of a clock or of entropy.
READS = {
    "time": {"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns"},
    "os": {"urandom", "getrandom"},
    "datetime": {"now", "utcnow", "today"},
    "date": {"today"},
    "random": {"random", "randrange", "randint", "getrandbits", "choice", "shuffle", "uniform"},
}
#: Modules every use of which reads entropy.
ENTROPY_MODULES = {"secrets"}


def reads_in(source: str) -> list[str]:
    """Each clock or entropy read in ``source``, as ``line: what``."""
    tree = ast.parse(source)
    aliases = {
        alias.asname or alias.name: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner, name = aliases.get(node.value.id, node.value.id), node.attr
            if name in READS.get(owner, ()) or owner in ENTROPY_MODULES:
                found.append(f"{node.lineno}: {owner}.{name}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            # loop.time(), self._loop.time(): the event loop's clock (time.time() is above)
            owner_node = node.func.value
            is_time_module = isinstance(owner_node, ast.Name) and owner_node.id == "time"
            if node.func.attr == "time" and not node.args and not is_time_module:
                found.append(f"{node.lineno}: .time()")
        elif isinstance(node, ast.ImportFrom) and node.module in READS:
            for alias in node.names:
                if alias.name in READS[node.module]:
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module in ENTROPY_MODULES:
            found.append(f"{node.lineno}: from {node.module} import ...")
    return found


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _layer(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else "core"


@pytest.mark.parametrize(
    "path",
    [p for p in _modules() if _layer(p) not in IO_LAYERS and p.name != THE_READER],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_no_module_outside_the_io_layers_but_system_reads_a_clock(path: Path) -> None:
    assert not reads_in(path.read_text(encoding="utf-8")), f"{path.name} reads a clock or entropy"


def test_the_reader_reads_both() -> None:
    found = " ".join(reads_in((PACKAGE / THE_READER).read_text(encoding="utf-8")))
    assert "time.time_ns" in found and "os.urandom" in found


@pytest.mark.parametrize(
    "sample",
    [
        "import time\nnow = time.time_ns()",
        "import time\nclock = time.monotonic",
        "import time as clock\nnow = clock.monotonic_ns",
        "from time import perf_counter",
        "import os\nos.urandom(16)",
        "import secrets\nsecrets.token_bytes(8)",
        "from datetime import datetime\ndatetime.now()",
        "import random\nrandom.getrandbits(64)",
        "now = loop.time()",
        "now = self._loop.time()",
    ],
)
def test_the_scan_catches_each_kind_of_read(sample: str) -> None:
    assert reads_in(sample)


def test_the_scan_passes_injected_sources() -> None:
    source = "import random\nrng = random.Random(7)\nnow = clock()\nrng.random()\n"
    assert not reads_in(source)
