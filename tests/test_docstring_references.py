"""Every public docstring ends with a References line (docs/architecture.md, "Cite the spec
where it binds").

A public name is a public module of the package (no part of its dotted name starts with
``_``) or a class or function that such a module lists in ``__all__`` and that uuidkit
defines (the standard library's ``uuid.UUID``, which uuidkit re-exports, is not uuidkit's to
document). Its docstring's last paragraph must start with ``References:``.

References: RFC 9562; draft-white-zeroconf-uiap-00 (the specs the References lines cite).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import uuidkit


def _public_modules() -> list[ModuleType]:
    names = ["uuidkit"] + [
        info.name
        for info in pkgutil.walk_packages(uuidkit.__path__, "uuidkit.")
        if not any(part.startswith("_") for part in info.name.split("."))
    ]
    return [importlib.import_module(name) for name in names]


def _is_uuidkits(value: object) -> bool:
    return (inspect.isclass(value) or callable(value)) and str(
        getattr(value, "__module__", "")
    ).startswith("uuidkit")


def public_names() -> dict[str, object]:
    """Each public module and each class or function they export, by a dotted name."""
    found: dict[int, tuple[str, object]] = {}
    for module in _public_modules():
        found.setdefault(id(module), (module.__name__, module))
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if inspect.ismodule(value) or _is_uuidkits(value):
                found.setdefault(id(value), (f"{module.__name__}.{name}", value))
    return dict(found.values())


def ends_with_references(doc: str | None) -> bool:
    paragraphs = inspect.cleandoc(doc or "").split("\n\n")
    return paragraphs[-1].lstrip().startswith("References:")


PUBLIC = public_names()


def test_there_are_public_names_of_every_kind() -> None:
    kinds = {type(value).__name__ for value in PUBLIC.values()}
    assert {"module", "type", "function"} <= kinds, kinds
    assert len(PUBLIC) > 300


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_docstring_ends_with_a_references_line(name: str) -> None:
    value = PUBLIC[name]
    doc = value.__doc__ if inspect.ismodule(value) else inspect.getdoc(value)
    assert ends_with_references(doc), f"{name}: its last paragraph is no References line"


def test_the_check_reads_the_last_paragraph() -> None:
    assert ends_with_references("Make one.\n\nReferences: RFC 9562 §5.7.")
    assert ends_with_references("Make one.\n\n    References: RFC 9562 §5.7,\n    §6.2.\n")
    assert not ends_with_references("Make one.\n\nReferences: RFC 9562 §5.7.\n\nMore text.")
    assert not ends_with_references("Make one.")
    assert not ends_with_references(None)
