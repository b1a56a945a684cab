"""The daemon's parts talk through interfaces: the node hands events over after the call
that caused them, the service reports a status snapshot and decides every answer's
durability, and ``Daemon.serve`` turns only the node's typed errors into a bad setting."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from daemon_site import DOMAIN, FAST, WAIT_S, running

from uuidkit.daemon.config import ConfigError, DaemonConfig
from uuidkit.daemon.localsite import LocalSite
from uuidkit.daemon.main import Daemon
from uuidkit.daemon.record import ClaimRecord
from uuidkit.daemon.server import APIServer
from uuidkit.daemon.service import ClaimService
from uuidkit.daemon.state import StateStore, read_state
from uuidkit.daemon.status import ServiceStatus
from uuidkit.errors import TransportError
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.engine_types import EngineConfig
from uuidkit.uiap.events import ClaimFailed, ClaimSucceeded, Event, FailureReason
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import APIError, ErrorCode, parse_claim_params

ENGINE = EngineConfig(claim_period=FAST["claim_period"], claim_timeout=FAST["claim_timeout"])
SPACE = UIDSpace.unique(b"\x2a")
#: The keys of the ``status`` reply, as docs/uiap-api.md ("status") lists them.
STATUS_KEYS = {
    "version",
    "pid",
    "uptime",
    "device_id",
    "interfaces",
    "claims",
    "counters",
    "drops",
    "api",
    "events",
    "state_write_errors",
    "state_write_pending",
    "state_write_last_error",
    "restored",
    "device_id_conflicts",
    "auth",
    "tables",
    "verification",
    "conflicts",
    "state_saves",
    "site_split",
}


def test_a_local_node_hands_over_a_claims_events_after_claim_returns() -> None:
    # A local conflict fails inside the engine's claim(); the service must still learn the
    # handle before the event that names it.
    async def main() -> None:
        delivered: list[Event] = []
        node = LocalSite().node(1, ENGINE, None, delivered.append)
        await node.start()
        domain = DomainID.parse(DOMAIN)
        node.claim(domain, SPACE, 60)
        second = node.claim(domain, SPACE, 60)
        assert delivered == []  # nothing from inside claim()
        await asyncio.sleep(0)
        assert delivered == [ClaimFailed(second, FailureReason.LOCAL_CONFLICT, domain, SPACE)]
        await node.stop()

    asyncio.run(main())


class _OnlyAStatus:
    """A service that offers nothing but its snapshot: the server must need nothing else."""

    def __init__(self, snapshot: ServiceStatus) -> None:
        self.snapshot = snapshot

    def status(self) -> ServiceStatus:
        return self.snapshot


def test_the_servers_status_reads_only_the_services_snapshot(tmp_path: Path) -> None:
    snapshot = ServiceStatus(
        device_id=0x1234,
        interfaces=[{"name": "e0"}],
        claims={"held": 2},
        counters={"engine": {}},
        drops={"auth-replay": 1},
        events={"granted": 2},
        state_write_errors=3,
        state_write_pending=True,
        state_write_last_error="No space left on device",
        restored=[{"claim": "c", "result": "granted"}],
        auth={"enabled": False},
    )
    config = DaemonConfig(socket=str(tmp_path / "api.sock"), state_dir=str(tmp_path / "state"))
    server = APIServer(_OnlyAStatus(snapshot), config)  # type: ignore[arg-type]
    status = server._status()
    assert set(status) == STATUS_KEYS
    assert status["device_id"] == "0000000000001234"
    assert (status["state_write_pending"], status["restored"]) == (True, snapshot.restored)


def test_the_status_reply_keeps_its_documented_keys(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            await hosts["a"].client().claim(DOMAIN, SPACE, 60)
            status = await hosts["a"].client().status()
            assert set(status) == STATUS_KEYS
            assert status["claims"] == {"held": 1, "unverified": 0, "proxied": 0}

    asyncio.run(main())


class _FailingStore(StateStore):
    """A state directory whose writes fail while ``failing`` is set (a full disk)."""

    failing = False

    def save(self, state: Any) -> None:
        if self.failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        super().save(state)

    def append(self, changes: Any) -> None:
        if self.failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        super().append(changes)


def _service(tmp_path: Path, store: StateStore) -> ClaimService:
    site = LocalSite()
    return ClaimService(lambda on_event: site.node(1, ENGINE, None, on_event), store, ENGINE)


def test_the_service_answers_a_release_once_it_is_written_or_says_it_was_not(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        store = _FailingStore(str(tmp_path / "state"))
        service = _service(tmp_path, store)
        await service.start({})
        params = parse_claim_params({"domain": DOMAIN, "uid": "2a", "lifetime": 60})
        first = await service.claim(params, 1000, object())
        assert (await service.release(first["claim"], 1000)) == {"released": first["claim"]}
        assert read_state(store.directory)["claims"] == []  # on disk before the answer
        second = await service.claim(params, 1000, object())
        store.failing = True
        with pytest.raises(APIError) as caught:
            await service.release(second["claim"], 1000)
        assert (caught.value.code, caught.value.field) == (ErrorCode.STATE_WRITE_FAILED, "claim")
        assert second["claim"] not in service.claims  # released all the same
        store.failing = False
        await service.stop()
        store.close()

    asyncio.run(main())


class _NodeThatCannotStart:
    """A node whose start raises ``error``; records whether it was stopped."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.device_id = 1
        self.stopped = False
        self.interfaces: tuple[str, ...] = ()

    async def start(self) -> None:
        raise self.error

    async def stop(self) -> None:
        self.stopped = True

    def claim(self, *args: Any, **kwargs: Any) -> int:
        raise AssertionError("never started")

    def release(self, handle: int) -> None:
        raise AssertionError("never started")

    def status(self) -> dict[str, Any]:
        return {}


def _serve_with(
    tmp_path: Path, error: Exception
) -> tuple[_NodeThatCannotStart, Callable[[], None]]:
    node = _NodeThatCannotStart(error)
    config = DaemonConfig(socket=str(tmp_path / "api.sock"), state_dir=str(tmp_path / "state"))
    daemon = Daemon(config, node_factory=lambda *args: node, environ={})

    def serve() -> None:
        asyncio.run(daemon.serve())

    return node, serve


def test_a_transport_error_at_start_is_the_setting_it_names(tmp_path: Path) -> None:
    node, serve = _serve_with(tmp_path, TransportError("no interface named 'zz0'", "interfaces"))
    with pytest.raises(ConfigError, match="zz0") as caught:
        serve()
    assert caught.value.key == "interfaces"
    assert node.stopped


def test_another_value_error_at_start_is_not_taken_for_a_bad_setting(tmp_path: Path) -> None:
    node, serve = _serve_with(tmp_path, ValueError("a bug in the node"))
    with pytest.raises(ValueError, match="a bug in the node") as caught:
        serve()
    assert not isinstance(caught.value, ConfigError)
    assert node.stopped


def test_a_grant_names_a_handle_the_service_knows(tmp_path: Path) -> None:
    # The service's own record of which events it received: every claim event it is
    # handed names a claim it already tracks (no event arrives before its handle).
    async def main() -> None:
        store = StateStore(str(tmp_path / "state"))
        service = _service(tmp_path, store)
        unknown: list[Event] = []
        handled = service._on_event

        def watch(event: Event) -> None:
            known = getattr(event, "claim", None) in service._by_handle
            if isinstance(event, ClaimSucceeded | ClaimFailed) and not known:
                unknown.append(event)
            handled(event)

        service.node.on_event = watch  # type: ignore[attr-defined]
        await service.start({})
        params = parse_claim_params({"domain": DOMAIN, "uid": "2a", "lifetime": 60})
        granted = await service.claim(params, 1000, object())
        # A bound for the failure only: with the event lost the claim would wait for ever.
        denied = await asyncio.wait_for(service.claim(params, 1000, object()), WAIT_S)
        assert (granted["result"], denied["result"], denied["reason"]) == (
            "granted",
            "denied",
            "local-conflict",
        )
        assert unknown == []
        await service.stop()
        store.close()

    asyncio.run(main())


def test_a_saved_claim_whose_lifetime_ended_while_the_daemon_was_down_is_not_reclaimed(
    tmp_path: Path,
) -> None:
    # A restart reclaims what is saved (UIAP §4.4) only while its lifetime lasts: once it
    # ended, the space may have been claimed by another device (§2.4.1, §4.5.2), so the
    # claim is dropped and reported `expired`, not reclaimed. The wall clock is injected:
    # one saved claim ended an hour before the restart, the other lasts an hour after it.
    now = 1_700_000_000.0
    params = parse_claim_params({"domain": DOMAIN, "uid": "2a", "lifetime": 60})
    other = parse_claim_params({"domain": DOMAIN, "uid": "2b", "lifetime": 60})
    ended = ClaimRecord("c-ended", params, 1000, now - 7200)
    ended.expires = now - 3600
    live = ClaimRecord("c-live", other, 1000, now - 60)
    live.expires = now + 3600

    async def main() -> None:
        store = StateStore(str(tmp_path / "state"))
        site = LocalSite()
        service = ClaimService(
            lambda on_event: site.node(1, ENGINE, None, on_event),
            store,
            ENGINE,
            wall_clock=lambda: now,
        )
        await service.start({"claims": [ended.saved_form(), live.saved_form()]})
        assert service.restored["c-ended"]["result"] == "expired"
        assert "c-ended" not in service.claims
        assert "c-live" in service.claims  # the control: a live saved claim is reclaimed
        assert [entry["id"] for entry in read_state(store.directory)["claims"]] == ["c-live"]
        await service.stop()
        store.close()

    asyncio.run(main())
