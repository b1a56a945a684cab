"""Skip-or-fail helpers for the tests that need a real PostgreSQL and its drivers.

The tests skip, naming the reason, only when no server can be started here; with
``UUIDKIT_REQUIRE_POSTGRES=1`` (which ``.ci/run`` exports) the same condition fails them,
so CI never passes by skipping.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

REQUIRED = os.environ.get("UUIDKIT_REQUIRE_POSTGRES") == "1"


def unavailable(reason: str) -> None:
    """Skip with ``reason``, or fail when CI requires PostgreSQL."""
    if REQUIRED:
        pytest.fail(f"UUIDKIT_REQUIRE_POSTGRES=1 but {reason}")
    pytest.skip(reason)


def require_module(name: str) -> ModuleType:
    """Import a driver of the test extra, or skip/fail naming it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        unavailable(f"{name} is not installed (pip install -e '.[test]')")
        raise  # unreachable: unavailable() raises
