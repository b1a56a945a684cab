"""Skip-or-fail helpers for the tests that need a real PostgreSQL and its drivers.

The tests skip, naming the reason, only when no server can be started here; with
``UUIDKIT_REQUIRE_POSTGRES=1`` (which ``.ci/run`` exports) the same condition fails them,
so CI never passes by skipping.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from types import ModuleType

import pytest

from uuidkit.integrations.pgcluster import Cluster, ClusterUnavailable, start_cluster

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


def throwaway_cluster() -> Iterator[Cluster]:
    """A throwaway cluster for as long as the generator runs (skip or, under CI, fail if none
    can start): the body of each test module's ``pg_cluster`` fixture."""
    try:
        cluster = start_cluster({"fsync": "off", "synchronous_commit": "off"})
    except ClusterUnavailable as error:
        unavailable(f"no PostgreSQL server can be started: {error}")
        raise
    try:
        yield cluster
    finally:
        cluster.stop()
