"""Skip-or-fail helpers for the tests that need a real PostgreSQL and its drivers.

The tests skip, naming the reason, only when no server can be started here; with
``UUIDKIT_REQUIRE_POSTGRES=1`` (which ``.ci/run`` exports) the same condition fails them,
so CI never passes by skipping.

PostgreSQL 18 (the server's own ``uuidv7()``) is found through ``UUIDKIT_PG18_BINDIR``, the
bin directory of a server built from source (``tools/build-postgresql18.sh`` prints it);
``UUIDKIT_REQUIRE_PG18=1`` (which ``.ci/run`` exports) turns its absence into a failure.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from uuidkit.integrations.pgcluster import Cluster, ClusterUnavailable, start_cluster

REQUIRED = os.environ.get("UUIDKIT_REQUIRE_POSTGRES") == "1"
PG18_REQUIRED = os.environ.get("UUIDKIT_REQUIRE_PG18") == "1"


def unavailable(reason: str, *, pg18: bool = False) -> None:
    """Skip with ``reason``, or fail when CI requires PostgreSQL (``pg18``: PostgreSQL 18)."""
    if PG18_REQUIRED if pg18 else REQUIRED:
        variable = "UUIDKIT_REQUIRE_PG18" if pg18 else "UUIDKIT_REQUIRE_POSTGRES"
        pytest.fail(f"{variable}=1 but {reason}")
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


def throwaway_pg18_cluster() -> Iterator[Cluster]:
    """As :func:`throwaway_cluster`, with the PostgreSQL 18 server ``UUIDKIT_PG18_BINDIR``
    names (skip or, under ``UUIDKIT_REQUIRE_PG18=1``, fail without one)."""
    named = os.environ.get("UUIDKIT_PG18_BINDIR")
    if not named:
        unavailable(
            "UUIDKIT_PG18_BINDIR is not set (tools/build-postgresql18.sh builds PostgreSQL 18 "
            "and prints the directory to set it to)",
            pg18=True,
        )
    try:
        cluster = start_cluster(
            {"fsync": "off", "synchronous_commit": "off"}, bin_dir=Path(str(named))
        )
    except ClusterUnavailable as error:
        unavailable(f"no PostgreSQL 18 server can be started: {error}", pg18=True)
        raise
    try:
        yield cluster
    finally:
        cluster.stop()
