"""The layer table of docs/architecture.md, enforced on the source tree rather than by memory.

:data:`LAYERS` is the one statement of the rules: which files make up each layer, which other
layers it may import at run time, and which standard-library modules it never imports. The
tests below check every module of ``src/uuidkit`` against it, check that the table itself
keeps the project's headline rules (the protocol knows neither the UUID core nor the
transport, the daemon knows no generator, nothing imports the command line, ...), and check
that docs/architecture.md shows exactly this table.

An import under ``if TYPE_CHECKING:`` is for annotations only and does not count; an import
inside a function does (it runs when the function does).
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "uuidkit"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

#: Only the system layer reads the system clock and the operating system's entropy.
CLOCK_AND_ENTROPY = ("random", "secrets", "time")
#: What a sans-I/O layer never touches: sockets, event loops, threads, real time.
SANS_IO = ("asyncio", "selectors", "socket", "threading", "time")
#: Written in a layer's ``may_import`` for the composition root.
EVERY_LAYER = "*"


@dataclass(frozen=True)
class Layer:
    """One row of the table. ``files`` are paths under ``src/uuidkit``: ``"dir/"`` is a whole
    package, a name without ``/`` is a top-level module (``*`` matches any name), anything
    else one file. A file belongs to the layer whose entry names it most exactly."""

    name: str
    role: str
    files: tuple[str, ...]
    may_import: tuple[str, ...]
    never_imports: tuple[str, ...] = ()


LAYERS: tuple[Layer, ...] = (
    Layer(
        "errors",
        "the one error hierarchy; CPython's private names, each with its public fallback",
        ("errors.py", "_stdlib.py"),
        (),
        CLOCK_AND_ENTROPY,
    ),
    Layer("system", "the one reader of the system clock and entropy", ("_system.py",), ("errors",)),
    Layer(
        "safe files",
        "every file uuidkit writes: atomic replace, no symlinks, owner and mode checks",
        ("_safefile.py",),
        ("errors", "system"),
        CLOCK_AND_ENTROPY,
    ),
    Layer(
        "accelerator",
        "the compiled twins of hot functions, and the switch that picks them or the pure ones",
        ("_accel.py", "*.c"),
        (),
    ),
    Layer(
        "UUID core",
        "RFC 9562: layouts, parsing, formatting, timestamps, encodings",
        ("*.py",),
        ("errors", "system", "accelerator"),
        CLOCK_AND_ENTROPY,
    ),
    Layer(
        "generators",
        "time-based generators and their one policy engine",
        ("generators/",),
        ("errors", "system", "safe files", "accelerator", "UUID core"),
        CLOCK_AND_ENTROPY,
    ),
    Layer(
        "arrays",
        "bulk arrays; the only importer of numpy and pyarrow",
        ("bulk.py", "_bulkarrow.py"),
        ("errors", "system", "accelerator", "UUID core", "generators"),
        CLOCK_AND_ENTROPY,
    ),
    Layer(
        "public API",
        "`import uuidkit`; loads generators and arrays lazily",
        ("__init__.py", "_stdlib_main.py"),
        ("errors", "system", "accelerator", "UUID core", "generators", "arrays"),
        CLOCK_AND_ENTROPY,
    ),
    Layer(
        "protocol",
        "UIAP sans-I/O: wire format, number spaces, engine, authentication",
        ("uiap/",),
        ("errors", "accelerator"),
        (*SANS_IO, "random"),
    ),
    Layer(
        "simulator",
        "the deterministic network simulator",
        ("testing/",),
        ("errors", "protocol"),
        SANS_IO,
    ),
    Layer(
        "API schema",
        "the daemon's JSON-lines requests, replies and error codes",
        ("uiapd/",),
        ("errors", "protocol"),
        (*SANS_IO, "random"),
    ),
    Layer(
        "API client",
        "blocking and asyncio clients of the daemon",
        ("uiapd/client.py",),
        ("errors", "protocol", "API schema"),
    ),
    Layer(
        "transport",
        "sockets and the asyncio driver around the engine",
        ("net/",),
        ("errors", "system", "safe files", "protocol"),
    ),
    Layer(
        "daemon",
        "the UIAP service: configuration, state, the API server",
        ("daemon/",),
        ("errors", "system", "safe files", "protocol", "transport", "API schema"),
    ),
    Layer(
        "bridge",
        "node IDs claimed through the daemon, leased or numbered, for the node-bound generators",
        ("bridge/",),
        ("errors", "system", "UUID core", "generators", "protocol", "API schema", "API client"),
    ),
    Layer(
        "integrations",
        "database and dataframe-engine glue; each module imports its own dependency",
        ("integrations/",),
        ("errors", "system", "UUID core", "generators", "arrays"),
    ),
    Layer("CLI", "the composition root", ("cli/", "__main__.py"), (EVERY_LAYER,)),
)

#: Imports the table does not allow yet, each with the change that removes it:
#: (importing file, imported file) -> why it is still there.
EXCEPTIONS: dict[tuple[str, str], str] = {}

BY_NAME = {layer.name: layer for layer in LAYERS}


def _specificity(spec: str, relative: str) -> int:
    """How exactly ``spec`` names ``relative`` (0: not at all)."""
    if spec == relative:
        return 3
    if spec.endswith("/") and relative.startswith(spec):
        return 2
    if "/" not in spec and "/" not in relative and fnmatch.fnmatchcase(relative, spec):
        return 1
    return 0


def layer_of(relative: str) -> Layer:
    """The layer of the file ``relative`` (a path under ``src/uuidkit``)."""
    scored = sorted(
        ((max(_specificity(s, relative) for s in layer.files), layer) for layer in LAYERS),
        key=lambda pair: pair[0],
        reverse=True,
    )
    (best, layer), (runner_up, other) = scored[0], scored[1]
    assert best, f"{relative} is in no layer: add it to LAYERS and the docs' table"
    assert best > runner_up, f"{relative} is in both {layer.name} and {other.name}"
    return layer


def allowed(layer: Layer) -> set[str]:
    if EVERY_LAYER in layer.may_import:
        return set(BY_NAME)
    return {layer.name, *layer.may_import}


def reachable(name: str) -> set[str]:
    """Every layer ``name`` may reach through chains of allowed imports (itself only
    through a cycle)."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        for following in allowed(BY_NAME[current]) - {current} - seen:
            seen.add(following)
            todo.append(following)
    return seen


def _module_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _relative(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _resolve(module: str) -> str | None:
    """The file under ``src/uuidkit`` that defines ``module`` (a dotted name, possibly ending
    in a name imported from it), or None for a module outside uuidkit."""
    parts = module.split(".")
    if parts[0] != "uuidkit":
        return None
    for end in range(len(parts), 0, -1):
        base = PACKAGE.joinpath(*parts[1:end])
        for candidate in (base / "__init__.py", base.with_suffix(".py"), base.with_suffix(".c")):
            if (end > 1 or candidate.name == "__init__.py") and candidate.is_file():
                return _relative(candidate)
    raise AssertionError(f"{module} names no file of uuidkit")


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module (or ``module.name``) imported at run time by ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if _is_type_checking_block(node):
            skipped.update(id(child) for child in ast.walk(node))
    package_parts = ["uuidkit", *path.relative_to(PACKAGE).parts[:-1]]
    names: set[str] = set()
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
            # ``from uuidkit import _system`` imports the module uuidkit._system; the name
            # resolves to the module it lives in when it is not a module itself.
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _violations(relative: str, imported: set[str]) -> list[str]:
    layer = layer_of(relative)
    found = [
        f"{relative} ({layer.name}) imports {name}, never allowed there"
        for name in imported
        if name.split(".")[0] in layer.never_imports
    ]
    for name in imported:
        target = _resolve(name)
        if target is None or target == relative or (relative, target) in EXCEPTIONS:
            continue
        target_layer = layer_of(target).name
        if target_layer not in allowed(layer):
            found.append(f"{relative} ({layer.name}) imports {name} ({target_layer})")
    return found


@pytest.mark.parametrize("path", _module_files(), ids=_relative)
def test_every_module_keeps_its_layers_rules(path: Path) -> None:
    assert _violations(_relative(path), _imports(path)) == []


def test_the_check_catches_a_forbidden_import() -> None:
    # Each headline rule, broken once on purpose, is reported.
    assert _violations("uiap/message.py", {"uuidkit._bits.check_field"})
    assert _violations("uiap/engine.py", {"uuidkit.net.node"})
    assert _violations("uiap/engine.py", {"asyncio"})
    assert _violations("net/node.py", {"uuidkit.generators.v7"})
    assert _violations("daemon/service.py", {"uuidkit.generators"})
    assert _violations("daemon/server.py", {"uuidkit.uiapd.client.Client"})
    assert _violations("bridge/uiap_source.py", {"uuidkit.daemon.main"})
    assert _violations("generators/v7.py", {"uuidkit.cli.main"})
    assert _violations("uiapd/api.py", {"uuidkit.uiapd.client"})
    assert _violations("layouts.py", {"time"})
    assert not _violations("bridge/uiap_source.py", {"uuidkit.uiapd.client.Client"})


def test_every_file_is_in_exactly_one_layer() -> None:
    for path in [*_module_files(), *PACKAGE.glob("*.c")]:
        layer_of(_relative(path))  # asserts


def test_the_deferred_submodules_of_the_public_api_are_allowed_imports() -> None:
    uuidkit = importlib.import_module("uuidkit")
    for module in (f"uuidkit.{name}" for name in uuidkit._DEFERRED_SUBMODULES):
        target = _resolve(module)
        assert target is not None
        assert layer_of(target).name in allowed(BY_NAME["public API"]), module


def test_the_table_keeps_the_headline_rules() -> None:
    for layer in LAYERS:
        assert set(layer.may_import) <= {*BY_NAME, EVERY_LAYER}, layer.name
        assert layer.name not in reachable(layer.name), f"{layer.name} is on a cycle"
    assert reachable("protocol").isdisjoint({"UUID core", "system", "transport", "generators"})
    assert not reachable("accelerator")  # the protocol's compiled decoder brings in nothing
    assert reachable("simulator").isdisjoint({"UUID core", "system", "transport"})
    assert "generators" not in reachable("transport")
    assert reachable("daemon").isdisjoint({"generators", "UUID core", "API client", "bridge"})
    assert "API client" in allowed(BY_NAME["bridge"])
    assert "daemon" not in reachable("bridge")
    assert reachable("API client").isdisjoint({"daemon", "transport"})
    assert [layer.name for layer in LAYERS if "CLI" in allowed(layer)] == ["CLI"]
    for (importer, imported), why in EXCEPTIONS.items():
        assert why and layer_of(imported).name not in allowed(layer_of(importer))


def _code(items: tuple[str, ...]) -> str:
    return ", ".join(f"`{item}`" for item in items)


def table_markdown() -> str:
    """The layer table as docs/architecture.md shows it."""
    lines = [
        "| layer | what | files under `src/uuidkit/` | may import (besides itself) "
        "| never imports |",
        "|---|---|---|---|---|",
    ]
    for layer in LAYERS:
        may = "every layer" if EVERY_LAYER in layer.may_import else ", ".join(layer.may_import)
        lines.append(
            f"| {layer.name} | {layer.role} | {_code(layer.files)} | {may or 'nothing'} "
            f"| {_code(tuple(sorted(layer.never_imports))) or '-'} |"
        )
    for (importer, imported), why in EXCEPTIONS.items():
        lines.append(f"\nException: `{importer}` imports `{imported}` {why}.")
    return "\n".join(lines) + "\n"


def test_the_docs_show_exactly_this_table() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert table_markdown() in text, (
        "docs/architecture.md's layer table differs from tests/test_layering.py's LAYERS; "
        "paste the output of table_markdown()"
    )


@pytest.mark.parametrize(
    "path",
    sorted((PACKAGE / "testing").rglob("*.py")),
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_simulator_uses_only_seeded_random_instances(path: Path) -> None:
    """testing/ may import :mod:`random` only to make seeded ``random.Random`` instances:
    the module-level functions share one unseeded global state, so a seed would not replay
    a run."""
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
