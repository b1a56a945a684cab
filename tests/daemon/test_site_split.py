"""A link that carries a different site is said in the log, at most once a minute per link.

A keyless daemon hearing sealed datagrams, and a keyed one hearing unsealed ones or ones
sealed with a Key ID it does not accept, both log a warning that the site is split (UIAP §7:
neither hears the other, so each side may be granted what the other holds, §2.1.2).

References: UIAP §1.1, §2.1.2, §7; RFC 8967 §4.3.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from pathlib import Path

import pytest
from daemon_site import DOMAIN, Host

from uuidkit.daemon.localsite import LocalSite
from uuidkit.daemon.sitesplit import WARN_EVERY_S, SiteSplitWarnings, WatchedAuthenticator
from uuidkit.uiap.auth import Authenticator, SiteKeys
from uuidkit.uiap.space import UIDSpace

SPLIT = "carries a different site"
SOURCE, GROUP = "fe80::1", "ff02::114"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "uuidkit.daemon" and SPLIT in record.getMessage()
    ]


def test_one_warning_per_interface_within_the_interval_and_one_after_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [100.0]
    watch = SiteSplitWarnings(lambda: now[0])
    caplog.set_level(logging.WARNING, "uuidkit.daemon")
    watch.saw("eth0", "auth-missing", SOURCE)
    assert len(_warnings(caplog)) == 1 and "eth0" in _warnings(caplog)[0]
    now[0] += WARN_EVERY_S - 0.001  # still within the interval: suppressed
    watch.saw("eth0", "auth-missing", SOURCE)
    watch.saw("eth0", "auth-unknown-key", SOURCE)
    assert len(_warnings(caplog)) == 1
    watch.saw("eth1", "auth-unexpected", SOURCE)  # another link: its own interval
    assert len(_warnings(caplog)) == 2 and "eth1" in _warnings(caplog)[1]
    now[0] += 0.001  # the interval has passed for eth0
    watch.saw("eth0", "auth-missing", SOURCE)
    assert len(_warnings(caplog)) == 3
    assert "(datagrams since the last warning: 3)" in _warnings(caplog)[2]
    assert watch.summary() == {
        "seen": {
            "eth0": {"auth-missing": 3, "auth-unknown-key": 1},
            "eth1": {"auth-unexpected": 1},
        },
        "warnings": 3,
    }


def _authenticator(key_id: int, key: bytes, kind: type[Authenticator]) -> Authenticator:
    keys = SiteKeys({key_id: key}, key_id)
    return kind(keys, random.Random(key_id).randbytes, lambda: 0.0)


def test_the_watched_authenticator_reports_what_means_another_site_and_nothing_else() -> None:
    ours = _authenticator(1, bytes(range(32)), WatchedAuthenticator)
    assert isinstance(ours, WatchedAuthenticator)
    ours.watch = watch = SiteSplitWarnings(lambda: 0.0)
    member = _authenticator(1, bytes(range(32)), Authenticator)
    same_id_other_key = _authenticator(1, bytes(range(1, 33)), Authenticator)
    other_id = _authenticator(2, bytes(range(32)), Authenticator)
    data = b"\x10" * 40

    def opened(sealer: Authenticator | None) -> bytes | None:
        sealed = data if sealer is None else sealer.seal(data, SOURCE, GROUP, "e0")
        return ours.open(sealed, SOURCE, GROUP, "e0")

    assert opened(member) == data
    assert opened(None) is None  # unauthenticated: a keyless host
    assert opened(other_id) is None  # a Key ID not accepted: another site's key
    # A wrong MAC under an accepted ID is a forgery or damage as much as another key: it
    # is counted (auth-bad-mac) but not reported as a split.
    assert opened(same_id_other_key) is None
    assert watch.summary()["seen"] == {"e0": {"auth-missing": 1, "auth-unknown-key": 1}}
    # It opens and counts exactly as its base does.
    assert ours.stats.accepted == 1 and sum(ours.stats.dropped.values()) == 3


def test_a_keyless_and_a_keyed_daemon_on_one_link_both_warn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    key = tmp_path / "site.key"
    key.write_text(f"1 {bytes(range(32)).hex()} send\n")
    os.chmod(key, 0o600)
    caplog.set_level(logging.WARNING, "uuidkit.daemon")

    async def main() -> None:
        site = LocalSite()
        keyed = Host(site, tmp_path, "keyed", key_file=str(key))
        keyless = Host(site, tmp_path, "keyless")
        await keyed.start()
        await keyless.start()
        for host in (keyed, keyless):  # a frozen clock: every later datagram is within N
            host.service.site_split.clock = lambda: 0.0
        try:
            # Each is granted the same space: two sites on one link (UIAP §2.1.2).
            for host in (keyed, keyless):
                async with host.client() as client:
                    assert (await client.claim(DOMAIN, UIDSpace.unique(b"\x61"), 60)).granted
            keyed_status = await keyed.client().status()
            keyless_status = await keyless.client().status()
        finally:
            await keyed.stop()
            await keyless.stop()
        assert keyed_status["site_split"]["seen"]["site0"]["auth-missing"] >= 1
        assert keyless_status["site_split"]["seen"]["site0"]["auth-unexpected"] >= 1
        assert keyless_status["drops"]["auth-unexpected"] >= 1
        assert keyless_status["drops"].get("malformed", 0) == 0
        warned = _warnings(caplog)
        # One line each, however many datagrams each heard.
        assert sum("auth-missing" in line for line in warned) == 1
        assert sum("auth-unexpected" in line for line in warned) == 1

    asyncio.run(main())
