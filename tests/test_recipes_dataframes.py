"""Every example of docs/recipes-dataframes.md runs, as the page shows it.

Each ``python`` block is a complete program, run in a fresh interpreter (the engines start
threads of their own; one program's end cannot disturb the next). A block is skipped only
when an engine it imports is not installed; the test extra installs all of them.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "recipes-dataframes.md"
#: The engines the page covers: each has a section, and a block that imports it.
ENGINES = {"pandas": "pandas", "Polars": "polars", "DuckDB": "duckdb", "Parquet": "pyarrow"}
ENGINES["Dask"] = "dask"


def _blocks() -> list[tuple[str, str]]:
    """(the section heading, the code) of each python block, in page order."""
    text = PAGE.read_text(encoding="utf-8")
    # Split at the blocks: prose and code alternate, code at the odd places.
    parts = re.split(r"^```python\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)
    found: list[tuple[str, str]] = []
    heading = ""
    for index, part in enumerate(parts):
        if index % 2:
            found.append((heading, part))
        elif headings := re.findall(r"^## (.+)$", part, re.MULTILINE):
            heading = headings[-1]
    return found


def _imported(code: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


BLOCKS = _blocks()


def test_every_engine_has_a_section_with_an_example() -> None:
    for section, module in ENGINES.items():
        sections = [heading for heading, code in BLOCKS if module in _imported(code)]
        assert any(heading.startswith(section) for heading in sections), section


@pytest.mark.parametrize(
    "code",
    [code for _, code in BLOCKS],
    ids=[f"{heading.split()[0]}-{index}" for index, (heading, _) in enumerate(BLOCKS)],
)
def test_the_example_runs(code: str, tmp_path: Path) -> None:
    missing = sorted(name for name in _imported(code) if importlib.util.find_spec(name) is None)
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
