"""docs/reference.md is generated from the docstrings and cannot go stale.

If this fails after you changed a public name or its docstring, regenerate the file:
``PYTHONPATH=src python3 tools/gen_reference.py``.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
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


_FROM_IMPORT = re.compile(r"^(?:>>> |\.\.\. )?from (uuidkit[\w.]*) import ([\w, ]+)$", re.MULTILINE)
_IMPORT = re.compile(r"^(?:>>> |\.\.\. )?import (uuidkit[\w.]*)", re.MULTILINE)


def _documented_names(text: str) -> dict[str, set[str]]:
    """The names with a row in each ``## `module``` section of the reference."""
    sections: dict[str, set[str]] = {}
    names: set[str] = set()
    for line in text.splitlines():
        if heading := re.fullmatch(r"## `([\w.]+)`", line):
            names = sections.setdefault(heading.group(1), set())
        elif row := re.match(r"\| `(\w+)", line):
            names.add(row.group(1))
    return sections


def test_every_module_and_name_the_docs_import_is_in_the_reference() -> None:
    # What the README and docs show a user importing is public: it has a section (a module)
    # or a row in its module's section (a name), so MODULES cannot fall behind the docs.
    generator = _generator()
    sections = _documented_names((ROOT / "docs" / "reference.md").read_text(encoding="utf-8"))
    assert set(sections) == set(generator.MODULES)
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for module in _IMPORT.findall(text):
            assert module in sections, f"{path.name}: import {module}"
        for module, imported in _FROM_IMPORT.findall(text):
            for entry in imported.split(","):
                name = entry.split(" as ")[0].strip()
                public = name in sections.get(module, set()) or f"{module}.{name}" in sections
                assert public, f"{path.name}: from {module} import {name}"
