"""The PostgreSQL test plumbing: CI turns "no server" into a failure; the cluster helper says
why it cannot start.

References: RFC 9562 §6.13 (the database tests this plumbing guards).
"""

from __future__ import annotations

from pathlib import Path

import pg_support
import pytest

from uuidkit.integrations import pgcluster


@pytest.mark.parametrize(("required", "outcome"), [(True, "Failed"), (False, "Skipped")])
def test_unavailable_fails_under_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch, required: bool, outcome: str
) -> None:
    monkeypatch.setattr(pg_support, "REQUIRED", required)
    with pytest.raises(BaseException) as caught:
        pg_support.unavailable("no server")
    assert type(caught.value).__name__ == outcome
    assert "no server" in str(caught.value)


def test_missing_driver_is_reported_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_support, "REQUIRED", True)
    with pytest.raises(BaseException, match="no_such_driver is not installed"):
        pg_support.require_module("no_such_driver")


def test_no_binaries_is_cluster_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pgcluster, "find_bin_dir", lambda: None)
    with pytest.raises(pgcluster.ClusterUnavailable, match="no pg_ctl/initdb"):
        pgcluster.start_cluster()


@pytest.mark.parametrize(("required", "outcome"), [(True, "Failed"), (False, "Skipped")])
def test_pg18_absent_fails_under_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch, required: bool, outcome: str
) -> None:
    monkeypatch.setattr(pg_support, "PG18_REQUIRED", required)
    monkeypatch.setattr(pg_support, "REQUIRED", not required)  # the two are independent
    monkeypatch.delenv("UUIDKIT_PG18_BINDIR", raising=False)
    with pytest.raises(BaseException) as caught:
        next(pg_support.throwaway_pg18_cluster())
    assert type(caught.value).__name__ == outcome
    assert "UUIDKIT_PG18_BINDIR is not set" in str(caught.value)


def test_a_named_directory_without_a_server_is_cluster_unavailable(tmp_path: Path) -> None:
    with pytest.raises(pgcluster.ClusterUnavailable, match="no pg_ctl and initdb in"):
        pgcluster.start_cluster(bin_dir=tmp_path)
