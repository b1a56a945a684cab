"""Write docs/reference.md from the docstrings: every public name, its signature, one line.

Usage: ``PYTHONPATH=src python3 tools/gen_reference.py`` (rewrites docs/reference.md) or
``--check`` (exit status 1 if the file is stale). ``tests/test_reference_doc.py`` runs the
check, so the reference cannot drift from the code.

For each module below, every name of its ``__all__`` gets a row: the signature (classes: their
constructor; constants: their value), the first sentence of its docstring, and the spec
sections of its "References:" line. Names the standard library defines are described as such
rather than with the running Python's docstrings, and enums by their members rather than by
the enum machinery's constructor, so the output is the same on every Python.
The pure-Python reference modules are documented (``UUIDKIT_PURE=1``), never the compiled
twins the optional accelerator swaps in, whose signatures Python cannot introspect.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

# Before uuidkit is imported: document the reference implementation, not the accelerator.
os.environ["UUIDKIT_PURE"] = "1"

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "uuidkit"
TARGET = ROOT / "docs" / "reference.md"

#: The UIAP daemon's client library (one place to change should it move).
UIAP_CLIENT = "uuidkit.uiapd.client"

#: The modules a user imports, in the order the reference presents them: the one place that
#: says which modules are public (tests/test_reference_doc.py holds the docs' imports to it).
MODULES = (
    "uuidkit",
    "uuidkit.errors",
    "uuidkit.generators",
    "uuidkit.bulk",
    "uuidkit.encodings",
    "uuidkit.timeranges",
    "uuidkit.legacy",
    "uuidkit.nodelayouts",
    "uuidkit.integrations.sqlite",
    "uuidkit.integrations.pgcluster",
    "uuidkit.integrations.engine_keys",
    "uuidkit.integrations.dask_keys",
    "uuidkit.integrations.spark_keys",
    "uuidkit.uiap",
    "uuidkit.uiap.numberspaces",
    "uuidkit.uiapd.api",
    UIAP_CLIENT,
    "uuidkit.uiap.auth",
    "uuidkit.bridge",
    "uuidkit.net",
    "uuidkit.daemon.config",
    "uuidkit.daemon.main",
    "uuidkit.daemon.localsite",
    "uuidkit.testing",
    "uuidkit.testing.topologies",
)

HEADER = """# uuidkit reference

Every public name, with its signature, what it does in one line, and the specification
sections it implements. Generated from the docstrings by `tools/gen_reference.py`; a test
fails when this file and the code disagree, so regenerate it rather than editing by hand:

```sh
PYTHONPATH=src python3 tools/gen_reference.py
```

Specifications are cited by name and section: RFC 9562 (UUIDs), RFC 4122 (its predecessor),
UIAP (draft-white-zeroconf-uiap-00), DCE 1.1 (UUIDv2). Longer explanations: `docs/generators.md`,
`docs/uiap.md`, `docs/simulator.md`, `docs/recipes.md`, `docs/recipes-dataframes.md`.
"""


def _first_sentence(doc: str) -> str:
    text = " ".join(doc.strip().split("\n\n")[0].split())
    # A sentence ends at a full stop before a capital letter or the end ("e.g. a" goes on).
    match = re.match(r"(.+?\.)(?=\s+[A-Z`(]|$)", text)
    return (match.group(1) if match else text).replace("|", "\\|")


def _constant_comments() -> dict[str, str]:
    """``#:`` comments above module-level assignments in src/uuidkit, by name.

    Top-level assignments first; then those one level in (a name bound at run time on
    first use, declared with its comment under ``if TYPE_CHECKING:``), where no top-level
    assignment of the name has a comment.
    """
    comments: dict[str, str] = {}
    texts = [path.read_text(encoding="utf-8") for path in sorted(SOURCE.rglob("*.py"))]
    for indent in ("", "    "):
        pattern = re.compile(
            rf"((?:^{indent}#:.*\n)+)^{indent}([A-Z_][A-Za-z0-9_]*)\s*[:=]", re.MULTILINE
        )
        for text in texts:
            for match in pattern.finditer(text):
                lines = match.group(1).splitlines()
                comment = " ".join(line.strip()[2:].strip() for line in lines)
                comments.setdefault(match.group(2), comment)
    return comments


_COMMENTS: dict[str, str] = {}


def _type_name(value: Any) -> str:
    """The name of ``value``'s type, the same on every version: an ``A | B`` alias is a
    ``types.UnionType`` up to CPython 3.13 and a ``typing.Union`` from 3.14, and is shown as
    ``Union`` on all of them."""
    import types
    import typing

    if isinstance(value, types.UnionType) or typing.get_origin(value) is typing.Union:
        return "Union"
    return type(value).__name__


def _constant_row(name: str, value: Any) -> str:
    if not _COMMENTS:
        _COMMENTS.update(_constant_comments())
    shown = repr(value)
    # A flag that depends on the environment (ACCELERATED) is shown by its type, not its value.
    if isinstance(value, bool) or " object at 0x" in shown or len(shown) > 60:
        signature = f"`{name}: {_type_name(value)}`"
    else:
        signature = f"`{name} = {shown}`"
    comment = _COMMENTS.get(name, "")
    specs = re.findall(r"(?:RFC \d+|UIAP|DCE 1\.1) §[\d.]+(?:\s*\([^)]*\))?", comment)
    what = _first_sentence(comment) if comment else "(constant)"
    signature = signature.replace("|", "\\|")
    return f"| {signature} | {what} | {', '.join(specs)} |"


def _references(doc: str) -> str:
    match = re.search(r"References?:\s*(.+?)(\n\s*\n|$)", doc, re.DOTALL)
    if not match:
        return ""
    return " ".join(match.group(1).split()).rstrip(".").replace("|", "\\|")


def _signature(name: str, value: Any) -> str:
    if inspect.isclass(value) and issubclass(value, enum.Enum):
        # An enum by its members: what a user writes. Its constructor's signature is the
        # enum machinery's, which differs between Python versions (3.12 changed it).
        members = ", ".join(f"`{member.name}`" for member in value)
        return f"`{name}` enum: {members}".replace("|", "\\|")
    if inspect.isclass(value) or inspect.isroutine(value):
        try:
            # A NamedTuple's fields under postponed annotations are ForwardRef('T') up to
            # CPython 3.13 and T from 3.14: one text on every version.
            text = re.sub(r"ForwardRef\('([^']*)'\)", r"\1", str(inspect.signature(value)))
        except (TypeError, ValueError):
            text = "(...)"
        text = re.sub(r" at 0x[0-9a-f]+", "", text)
        return f"`{name}{text}`".replace("|", "\\|")
    return f"`{name} = {value!r:.80}`".replace("|", "\\|")


def _row(module: Any, name: str) -> str:
    value = getattr(module, name)
    from_stdlib = getattr(uuid, name, None) is value and value is not None
    if from_stdlib:
        what = f"the standard library's `uuid.{name}`, re-exported unchanged"
        signature = f"`{name}`"
        return f"| {signature} | {what} | Python `uuid` |"
    if inspect.ismodule(value):
        summary = _first_sentence(inspect.getdoc(value) or "")
        return f"| `{name}` | the module `{value.__name__}`: {summary} |  |"
    if not (inspect.isclass(value) or inspect.isroutine(value)):
        return _constant_row(name, value)
    doc = inspect.getdoc(value)
    what = _first_sentence(doc or "") or "(constant)"
    return f"| {_signature(name, value)} | {what} | {_references(doc or '')} |"


def render() -> str:
    """The text of docs/reference.md."""
    parts = [HEADER]
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        summary = _first_sentence(inspect.getdoc(module) or "")
        parts.append(f"\n## `{module_name}`\n\n{summary}\n")
        parts.append("| name and signature | what it does | spec |\n|---|---|---|")
        parts.extend(_row(module, name) for name in module.__all__)
    return "\n".join(parts) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print("docs/reference.md is stale: run tools/gen_reference.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
