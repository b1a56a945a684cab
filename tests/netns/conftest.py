"""The namespace fixture: a fresh Network per test, always torn down; skipped without root."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from netns_topology import Network, cleanup_prefix, namespaces_unavailable

_REASON = namespaces_unavailable()


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
