"""Import rules of DESIGN.md "Layers", enforced on the source tree rather than by memory.

An import under ``if TYPE_CHECKING:`` is for annotations only and does not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "uuidkit"

COMPOSITION_ROOTS = {"cli", "daemon", "__main__"}
OUTER_LAYERS = {"uiap", "net", "integrations", "testing", "bridge"} | COMPOSITION_ROOTS
#: uiap/ and testing/ are sans-I/O (UIAP engine issue): no real time, sockets or threads.
SANS_IO_FORBIDDEN = {"asyncio", "socket", "time", "threading", "selectors"}
#: The API client is the one module of uiap/ with a socket: applications import it next to
#: the types they pass to it; the protocol engine and the API schema stay sans-I/O.
SANS_IO_EXEMPT = {"uiap/client.py"}
#: Only uuidkit._system reads the system clock and entropy (DESIGN.md "Two clocks").
CLOCK_AND_ENTROPY = {"time", "secrets", "random"}


def _module_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _subpackage(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py")


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module imported at run time by ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if _is_type_checking_block(node):
            skipped.update(id(child) for child in ast.walk(node))
    package_parts = ["uuidkit", *path.relative_to(PACKAGE).parts[:-1]]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _top(name: str) -> str:
    return name.split(".")[0]


def _uuidkit_subpackage(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if parts[0] == "uuidkit" and len(parts) > 1 else None


@pytest.mark.parametrize("path", _module_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_import_rules(path: Path) -> None:
    layer = _subpackage(path)
    imported = _imports(path)
    imported_layers = {_uuidkit_subpackage(name) for name in imported} - {None}
    if layer not in OUTER_LAYERS:
        assert not imported_layers & OUTER_LAYERS, f"core module imports {imported_layers}"
        if path.name != "_system.py":
            assert not {_top(n) for n in imported} & CLOCK_AND_ENTROPY, (
                "only uuidkit._system may read the system clock or entropy"
            )
    if layer not in COMPOSITION_ROOTS:
        assert not imported_layers & COMPOSITION_ROOTS, "nothing imports a composition root"
    exempt = str(path.relative_to(PACKAGE)) in SANS_IO_EXEMPT
    if layer in {"uiap", "testing"} and not exempt:
        assert not {_top(n) for n in imported} & SANS_IO_FORBIDDEN, "uiap/ is sans-I/O"
        assert "net" not in imported_layers
    if layer == "uiap":
        assert "random" not in {_top(n) for n in imported}, "randomness is passed in"
        assert "testing" not in imported_layers


@pytest.mark.parametrize(
    "path",
    sorted((PACKAGE / "testing").rglob("*.py")),
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_simulator_uses_only_seeded_random_instances(path: Path) -> None:
    """testing/ may import :mod:`random` only to make seeded ``random.Random`` instances:
    the module-level functions share one unseeded global state (DESIGN.md example 9)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "random":
            assert [alias.name for alias in node.names] == ["Random"], ast.unparse(node)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "random"
        ):
            assert node.attr == "Random", f"line {node.lineno}: random.{node.attr}"
