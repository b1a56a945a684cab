"""The public surface: ``__all__`` sorted and complete, the standard library's uuid names
present, and ``import uuidkit`` free of optional dependencies (architecture.md: public surface).

References: RFC 9562 (the names of Python 3.14's ``uuid`` module it implements).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
import uuid

import pytest

import uuidkit

#: The standard library's names (Python 3.14's uuid module) that uuidkit must provide.
STDLIB_NAMES = [
    "MAX",
    "NAMESPACE_DNS",
    "NAMESPACE_OID",
    "NAMESPACE_URL",
    "NAMESPACE_X500",
    "NIL",
    "UUID",
    "uuid1",
    "uuid3",
    "uuid4",
    "uuid5",
    "uuid6",
    "uuid7",
    "uuid8",
]

#: Packages ``import uuidkit`` must not pull in: outer layers and optional dependencies.
OPTIONAL_MODULES = [
    "uuidkit.cli",
    "uuidkit.integrations",
    "uuidkit.net",
    "uuidkit.testing",
    "uuidkit.uiap",
    "asyncio",
    "dask",
    "distributed",
    "hypothesis",
    "numpy",
    "psycopg",
    "psycopg2",
    "pyarrow",
    "pydantic",
    "pyspark",
    "pytest",
    "sqlalchemy",
    "uuid6",
    "uuid_utils",
]


def _isort_key(name: str) -> tuple[int, list[str | int]]:
    """ruff RUF022's isort-style order: CONSTANTS, then Classes, then functions; natural sort."""
    if name.isupper() or (name.upper() == name and any(c.isalpha() for c in name)):
        category = 0
    elif name[:1].isupper():
        category = 1
    else:
        category = 2
    parts = [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
    return category, parts


def test_all_is_sorted() -> None:
    assert uuidkit.__all__ == sorted(uuidkit.__all__, key=_isort_key)
    assert len(set(uuidkit.__all__)) == len(uuidkit.__all__)


def test_every_listed_name_exists() -> None:
    missing = [name for name in uuidkit.__all__ if not hasattr(uuidkit, name)]
    assert missing == []


def test_every_public_name_is_listed() -> None:
    public = {
        name
        for name, value in vars(uuidkit).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and not name.startswith("__")
    }
    public -= {"annotations"}  # from __future__ import annotations
    assert sorted(public - set(uuidkit.__all__)) == []


@pytest.mark.parametrize("name", STDLIB_NAMES)
def test_standard_library_name_is_provided(name: str) -> None:
    assert name in uuidkit.__all__
    assert hasattr(uuidkit, name)


@pytest.mark.parametrize(
    "name", ["MAX", "NAMESPACE_DNS", "NAMESPACE_OID", "NAMESPACE_URL", "NAMESPACE_X500", "NIL"]
)
def test_constants_equal_the_standard_library(name: str) -> None:
    expected = {
        "MAX": uuid.UUID(int=(1 << 128) - 1),
        "NIL": uuid.UUID(int=0),
    }.get(name) or getattr(uuid, name)
    assert getattr(uuidkit, name) == expected
    assert isinstance(getattr(uuidkit, name), uuid.UUID)


def test_uuid_is_the_standard_library_class() -> None:
    assert uuidkit.UUID is uuid.UUID


@pytest.mark.parametrize("name", ["uuid1", "uuid4", "uuid6", "uuid7", "uuid8"])
def test_generators_return_standard_library_uuids(name: str) -> None:
    value = getattr(uuidkit, name)()
    assert isinstance(value, uuid.UUID)
    assert value.version == int(name.removeprefix("uuid"))
    assert value.variant == uuid.RFC_4122


def test_import_pulls_in_no_optional_dependency() -> None:
    script = "import json, sys; import uuidkit; print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = set(json.loads(result.stdout))
    unexpected = [
        name
        for name in OPTIONAL_MODULES
        if name in loaded or any(module.startswith(name + ".") for module in loaded)
    ]
    assert unexpected == []
