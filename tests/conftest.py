"""Suite-wide settings: no test's verdict depends on how loaded the machine is, and the
fixtures of the namespace tests (tests/netns).

Hypothesis by default fails an example that takes longer than 200 ms (``deadline``) and a
test whose data generation is slow (``HealthCheck.too_slow``): both are wall-clock
verdicts, which a busy machine (or one of several pytest-xdist workers) turns into
failures of correct code. The profile below drops them for every property test; speed is
measured in ``bench/``, never asserted here. A test's own ``@settings`` still choose its
number of examples.

The namespace tests run real processes on a real (namespaced) network for seconds: every
test under tests/netns is ``slow``, left out of the default run and run by
``python3 -m pytest -m slow`` (CI does). They live in this one conftest (not one in
tests/netns) because mypy checks the suite as modules named by file, and two
``conftest`` modules would clash.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from netns_topology import Network

settings.register_profile("uuidkit", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("uuidkit")

_NETNS = Path(__file__).parent / "netns"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test collected from tests/netns ``slow``."""
    for item in items:
        if item.path.is_relative_to(_NETNS):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def _namespace_cleanup() -> Iterator[None]:
    """Whatever a namespace test left behind under this process's prefix goes at the end of
    the session (netns_topology is imported only where a namespace test was collected)."""
    yield
    topology = sys.modules.get("netns_topology")
    if topology is not None:
        with contextlib.suppress(OSError):  # no ip command: nothing was made
            topology.cleanup_prefix()


@pytest.fixture
def network() -> Iterator[Network]:
    """A fresh namespace network, always torn down; skipped without root."""
    import netns_topology  # tests/netns is on sys.path once one of its modules is collected

    reason = netns_topology.namespaces_unavailable()
    if reason is not None:
        pytest.skip(reason)
    net = netns_topology.Network()
    try:
        yield net
    finally:
        net.close()
