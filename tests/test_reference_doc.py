"""docs/reference.md is generated from the docstrings and cannot go stale.

If this fails after you changed a public name or its docstring, regenerate the file:
``PYTHONPATH=src python3 tools/gen_reference.py``.
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "tools/gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_public_name_has_a_row_with_a_line_of_text() -> None:
    generator = _generator()
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    for module_name in generator.MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            rows = [line for line in text.splitlines() if line.startswith(f"| `{name}")]
            assert rows, f"{module_name}.{name} has no row"
            assert all(row.split(" | ")[1].strip() for row in rows), rows


def test_the_reference_matches_the_code() -> None:
    # In a fresh process, as CI's clone runs it: the generator documents the pure-Python
    # reference (the accelerator's compiled twins have no introspectable signatures).
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools/gen_reference.py"), "--check"],
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, (
        "docs/reference.md is stale: PYTHONPATH=src python3 tools/gen_reference.py\n"
        + result.stderr
    )
