"""The namespace fixture: a fresh Network per test, always torn down; skipped without root.

Every test here runs real processes on a real (namespaced) network for seconds: all are
``slow``, left out of the default run and run by ``python3 -m pytest -m slow`` (CI does).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from netns_topology import Network, cleanup_prefix, namespaces_unavailable

_REASON = namespaces_unavailable()
_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test collected from this directory ``slow``."""
    for item in items:
        if item.path.is_relative_to(_HERE):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def _session_cleanup() -> Iterator[None]:
    """Whatever a test left behind under this run's prefix goes at the end of the session."""
    yield
    if _REASON is None:
        cleanup_prefix()


@pytest.fixture
def network() -> Iterator[Network]:
    if _REASON is not None:
        pytest.skip(_REASON)
    net = Network()
    try:
        yield net
    finally:
        net.close()
