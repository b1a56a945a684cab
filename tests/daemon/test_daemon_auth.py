"""Daemons with a site key (UIAP §7): members work, strangers can neither deny nor be
defended, replays are dropped before the engine sees them.

References: UIAP §7; RFC 8967 §4.3.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from daemon_site import DOMAIN, Host

from uuidkit.daemon.localsite import GROUP, LocalSite
from uuidkit.uiap.space import UIDSpace

X = UIDSpace.unique(b"\x2a")
Y = UIDSpace.unique(b"\x2b")


def _key_file(directory: Path, name: str, key: bytes) -> str:
    path = directory / name
    path.write_text(f"1 {key.hex()} send\n")
    os.chmod(path, 0o600)
    return str(path)


def test_site_key(tmp_path: Path) -> None:
    site_key = _key_file(tmp_path, "site.key", bytes(range(32)))
    other_key = _key_file(tmp_path, "other.key", bytes(range(1, 33)))

    async def main() -> None:
        site = LocalSite()
        hosts = {
            "a": Host(site, tmp_path, "a", key_file=site_key),
            "b": Host(site, tmp_path, "b", key_file=site_key),
            "stranger": Host(site, tmp_path, "stranger"),
            "other": Host(site, tmp_path, "other", key_file=other_key),
        }
        try:
            for host in hosts.values():
                await host.start()
            a, b = hosts["a"].client(), hosts["b"].client()
            stranger, other = hosts["stranger"].client(), hosts["other"].client()
            # Members work as before: a claim, and the same space denied to the other.
            assert (await a.claim(DOMAIN, X, 60)).granted
            assert not (await b.claim(DOMAIN, X, 60)).granted
            # Hosts without the key are not defended against: their attempts are dropped
            # unheard, so they "win" X on their side, and A never learns of it.
            assert (await stranger.claim(DOMAIN, X, 60)).granted
            assert (await other.claim(DOMAIN, UIDSpace.unique(b"\x2c"), 60)).granted
            # ... and cannot deny: they hold Y, yet a member is granted it.
            assert (await stranger.claim(DOMAIN, Y, 60)).granted
            assert (await other.claim(DOMAIN, UIDSpace.unique(b"\x2d"), 60)).granted
            assert (await a.claim(DOMAIN, Y, 60)).granted
            assert (await b.claim(DOMAIN, UIDSpace.unique(b"\x2d"), 60)).granted
            drops = (await a.status())["drops"]
            assert drops["auth-missing"] >= 1 and drops["auth-bad-mac"] >= 1
            # A recorded datagram from a member, delivered again: dropped as a replay.
            source, destination, data = next(
                entry
                for entry in site.recorded
                if entry[0] == site.nodes[0].address and entry[1] == GROUP
            )
            before = (await b.status())["counters"]["engine"]["received"]
            site.nodes[1].receive(data, source, destination)
            status = await b.status()
            assert status["drops"]["auth-replay"] == 1
            assert status["counters"]["engine"]["received"] == before
            assert status["auth"]["enabled"] and status["auth"]["key_ids"] == [1]
            for client in (a, b, stranger, other):
                await client.close()
        finally:
            for host in hosts.values():
                with contextlib.suppress(Exception):
                    await host.stop()

    asyncio.run(main())
