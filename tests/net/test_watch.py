"""LinkWatcher's polling fallback and the rate-limited log, without namespaces."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest

from uuidkit.net.watch import LinkWatcher, RateLimitedLog


def test_without_netlink_it_still_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    real_socket = socket.socket

    def no_netlink(family: int = -1, *args: object) -> socket.socket:
        if family == socket.AF_NETLINK:
            raise OSError("netlink unavailable")
        return real_socket(family, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "socket", no_netlink)
    calls: list[float] = []

    async def run() -> bool:
        loop = asyncio.get_running_loop()
        watcher = LinkWatcher(loop, 0.01, lambda: calls.append(loop.time()))
        watcher.start()
        while len(calls) < 3:
            await asyncio.sleep(0.01)
        watcher.stop()
        count = len(calls)
        await asyncio.sleep(0.05)
        assert len(calls) == count, "stop() ends the polling"
        return watcher.notified

    assert asyncio.run(asyncio.wait_for(run(), 30)) is False


def test_the_log_is_rate_limited(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    log = RateLimitedLog(logging.getLogger("uuidkit.test"), interval=10.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, "uuidkit.test"):
        for _ in range(5):
            log.warning("send", "send failed: %s", "ENETDOWN")
        log.warning("receive", "receive failed")
        now[0] += 10.0
        log.warning("send", "send failed: %s", "ENETDOWN")
    assert [r.getMessage() for r in caplog.records] == [
        "send failed: ENETDOWN",
        "receive failed",
        "send failed: ENETDOWN (4 similar suppressed)",
    ]
