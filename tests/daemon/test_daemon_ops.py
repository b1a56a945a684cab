"""What an operator sees of the daemon: the status reply as documented, and the service
manager's news around a reload.

References: UIAP §2.1.1 (the service); docs/uiap-api.md (status); systemd's sd_notify(3)
protocol (RELOADING=1 with MONOTONIC_USEC=, STATUS=).
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
from pathlib import Path

from daemon_site import Host, running

ROOT = Path(__file__).resolve().parents[2]


def _documented_status_members() -> list[str]:
    """The first column of the member table under ``### `status``` in docs/uiap-api.md."""
    text = (ROOT / "docs" / "uiap-api.md").read_text(encoding="utf-8")
    section = text.split("### `status`", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE)


def test_the_status_reply_has_exactly_the_documented_members(tmp_path: Path) -> None:
    documented = _documented_status_members()
    assert len(documented) >= 10 and "uptime" in documented  # the table was found

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            async with hosts["a"].client() as client:
                before = time.monotonic()
                status = await client.status()
            assert sorted(status) == sorted(documented)
            # uptime: seconds since the start, so no more than this test has been running.
            assert 0 <= status["uptime"] <= time.monotonic() - started + 1e-3
            assert before >= started

    started = time.monotonic()
    asyncio.run(main())


def _manager(tmp_path: Path) -> tuple[socket.socket, dict[str, str]]:
    manager = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    manager.bind(str(tmp_path / "notify"))
    manager.settimeout(10)
    return manager, {"NOTIFY_SOCKET": str(tmp_path / "notify")}


def _fields(message: bytes) -> dict[str, str]:
    return dict(line.split("=", 1) for line in message.decode().splitlines())


def test_a_reload_tells_the_manager_when_it_began_and_how_it_ended(tmp_path: Path) -> None:
    manager, environ = _manager(tmp_path)
    config = tmp_path / "uiapd.toml"
    config.write_text("max_clients = 5\n")

    async def main() -> None:
        async with running(tmp_path, []) as (site, _):
            host = Host(site, tmp_path, "a")
            daemon = await host.start(environ=environ)
            assert _fields(manager.recv(4096))["READY"] == "1"
            daemon.config_path, daemon.overrides = str(config), dict(host.settings)

            before_us = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
            daemon.reload()
            after_us = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
            reloading, ready = _fields(manager.recv(4096)), _fields(manager.recv(4096))
            assert reloading["RELOADING"] == "1" and reloading["STATUS"]
            # sd_notify(3): RELOADING=1 carries the time the reload began, CLOCK_MONOTONIC µs.
            assert before_us <= int(reloading["MONOTONIC_USEC"]) <= after_us
            assert ready["READY"] == "1" and "reloaded" in ready["STATUS"]

            config.write_text("max_clients = -1\n")
            daemon.reload()  # refused: the manager hears why, and that the daemon is ready
            first, second = _fields(manager.recv(4096)), _fields(manager.recv(4096))
            assert first["RELOADING"] == "1" and "MONOTONIC_USEC" in first
            assert second["READY"] == "1" and "refused" in second["STATUS"]
            assert "max_clients" in second["STATUS"]
            await host.stop()

    asyncio.run(main())
    manager.close()
