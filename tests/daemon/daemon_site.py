"""Daemons on an in-process site: each with its own API socket and state directory.

Everything real but the network: the API server on a Unix socket, the claim service, the
state directory on disk, the engine. The site (uuidkit.daemon.localsite) carries the
datagrams in memory, so partitions and replays are exact.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from uuidkit.daemon.config import DaemonConfig
from uuidkit.daemon.localsite import LocalSite
from uuidkit.daemon.main import Daemon
from uuidkit.daemon.server import APIServer
from uuidkit.daemon.service import ClaimService
from uuidkit.uiapd.client import AsyncClient

DOMAIN = "0fff:0000:00d0:0000"
#: Fast timers: a new claim takes 3 x 0.02 + 0.05 s; outcomes are asserted, not timings.
FAST: dict[str, Any] = {"claim_period": 0.02, "claim_timeout": 0.05}
#: Generous deadline for anything awaited (the machine is shared and slow).
WAIT_S = 30.0


class Host:
    """One daemon of the site, started with :meth:`start`, stopped with :meth:`stop`."""

    def __init__(self, site: LocalSite, root: Path, name: str, **settings: Any) -> None:
        self.site = site
        self.name = name
        self.directory = root / name
        self.directory.mkdir(exist_ok=True)
        self.settings = {
            "socket": str(self.directory / "api.sock"),
            "state_dir": str(self.directory / "state"),
            **FAST,
            **settings,
        }
        self.daemon: Daemon | None = None
        self.task: asyncio.Task[None] | None = None

    @property
    def socket(self) -> str:
        return str(self.settings["socket"])

    def client(self) -> AsyncClient:
        return AsyncClient(self.socket, timeout=WAIT_S)

    @property
    def server(self) -> APIServer:
        """The running daemon's API server."""
        assert self.daemon is not None and self.daemon.server is not None
        return self.daemon.server

    @property
    def service(self) -> ClaimService:
        """The running daemon's claim service."""
        assert self.daemon is not None and self.daemon.service is not None
        return self.daemon.service

    async def start(self, environ: dict[str, str] | None = None) -> Daemon:
        config = DaemonConfig(**self.settings)
        daemon = Daemon(config, node_factory=self.site.factory, environ=environ or {})
        self.daemon = daemon
        self.task = asyncio.create_task(daemon.serve())
        ready = asyncio.create_task(daemon.ready.wait())
        done, _ = await asyncio.wait(
            {ready, self.task}, timeout=WAIT_S, return_when="FIRST_COMPLETED"
        )
        if self.task in done:
            ready.cancel()
            self.task.result()  # raises the start-up error
        assert ready in done, f"{self.name} never became ready"
        return daemon

    async def stop(self) -> None:
        if self.daemon is not None and self.task is not None:
            self.daemon.stopped.set()
            await asyncio.wait_for(self.task, WAIT_S)
        self.daemon = self.task = None

    def crash(self) -> None:
        """Stop answering at once, as SIGKILL would: nothing is saved or released."""
        daemon, task = self.daemon, self.task
        assert daemon is not None and daemon.service is not None and task is not None
        service, server = daemon.service, daemon.server
        service._stopping = True
        if service._poller is not None:
            service._poller.cancel()
        for record in service.claims.values():
            if record.renewal is not None:
                record.renewal.cancel()
        service.writer._closed = True  # a killed process retries no write
        service.writer._wake.set()
        service.store.close()  # the kernel drops a killed process's flock
        node = service.node
        node.running = False  # type: ignore[attr-defined]
        if node._timer is not None:  # type: ignore[attr-defined]
            node._timer.cancel()  # type: ignore[attr-defined]
        if server is not None:
            server._identity = None  # a killed process removes nothing
            server.stop_accepting()
            for client in server.clients:
                client.writer.transport.abort()
        task.cancel()
        self.daemon = self.task = None


@contextlib.asynccontextmanager
async def running(
    root: Path, names: list[str], **settings: Any
) -> AsyncIterator[tuple[LocalSite, dict[str, Host]]]:
    site = LocalSite()
    hosts = {name: Host(site, root, name, **settings) for name in names}
    try:
        for host in hosts.values():
            await host.start()
        yield site, hosts
    finally:
        for host in hosts.values():
            with contextlib.suppress(Exception):
                await host.stop()


async def next_event(
    events: AsyncIterator[Any], predicate: Callable[[Any], bool], what: str
) -> Any:
    """The first event matching ``predicate`` (generous deadline)."""

    async def find() -> Any:
        async for event in events:
            if predicate(event):
                return event
        raise AssertionError(f"watch ended before {what}")

    return await asyncio.wait_for(find(), WAIT_S)


async def until(check: Callable[[], bool], what: str) -> None:
    """Return once ``check()`` holds (polled on the event loop); fail after ``WAIT_S``. An
    outcome the daemon reaches in its own time, never a fixed sleep: the verdict does not
    depend on how busy the machine is."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"never {what} within {WAIT_S} s")
        await asyncio.sleep(0.01)
