"""The daemon on a real network: one process per namespace, the API over Unix sockets.

References: UIAP §2.1.1, §2.1.2, §2.4.1, §4.4, §7.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_process import DOMAIN, DaemonProcess
from netns_topology import Network

from uuidkit.daemon.state import read_state
from uuidkit.uiap.space import UIDSpace


@contextlib.contextmanager
def daemons(
    network: Network, tmp_path: Path, hosts: list[str], **extra: tuple[str, ...]
) -> Iterator[dict[str, DaemonProcess]]:
    for host in hosts:
        network.add_host(host)
    network.segment(hosts)
    started = {host: DaemonProcess(network, host, tmp_path, *extra.get(host, ())) for host in hosts}
    try:
        for process in started.values():
            process.start()
        yield started
    finally:
        for process in started.values():
            process.close()


def test_three_hosts_through_the_command_line(network: Network, tmp_path: Path) -> None:
    with daemons(network, tmp_path, ["a", "b", "c"]) as hosts:
        status, granted = hosts["a"].cli_json("claim", "--domain", DOMAIN, "--uid", "2a")
        assert (status, granted["result"]) == (0, "granted")
        assert granted["claim"] and granted["expires"] and granted["latency"] > 0
        # UIAP §2.4.2: another host asking for the same space is denied (exit 1).
        status, denied = hosts["b"].cli_json("claim", "--domain", DOMAIN, "--uid", "2a")
        assert (status, denied["result"], denied["reason"]) == (1, "denied", "denied")
        assert hosts["c"].cli("claim", "--domain", DOMAIN, "--uid", "2b").returncode == 0
        status, listed = hosts["a"].cli_json("list")
        assert [(c["claim"], c["uid"], c["state"]) for c in listed] == [
            (granted["claim"], "2a", "held")
        ]
        _, about = hosts["a"].cli_json("status")
        assert [i["name"] for i in about["interfaces"] if i["participating"]] == ["e0"]
        assert about["counters"]["engine"]["denied"] >= 1
        assert about["claims"] == {"held": 1, "unverified": 0, "proxied": 0}
        # Release ends the defense.
        assert hosts["a"].cli("release", granted["claim"]).returncode == 0
        assert hosts["b"].cli("claim", "--domain", DOMAIN, "--uid", "2a").returncode == 0
        # SIGHUP reloads (and says so to the service manager); the daemon keeps serving.
        hosts["c"].signal(signal.SIGHUP)
        assert hosts["c"].notified().startswith("RELOADING=1\nMONOTONIC_USEC=")
        assert hosts["c"].notified().startswith("READY=1\nSTATUS=configuration reloaded")
        assert hosts["c"].cli("list").returncode == 0
        # SIGTERM: a clean stop that removes the socket file.
        assert hosts["c"].stop() == 0
        assert not os.path.exists(hosts["c"].socket)


def test_sigkill_then_restart_reclaims_and_reports_a_collision(
    network: Network, tmp_path: Path
) -> None:
    with daemons(network, tmp_path, ["a", "b"]) as hosts:
        with hosts["a"].client() as a:
            kept = a.claim(DOMAIN, UIDSpace.unique(b"\x01"), 600)
            lost = a.claim(DOMAIN, UIDSpace.unique(b"\x02"), 600)
        assert kept.granted and lost.granted
        hosts["a"].kill()  # SIGKILL: nothing saved on the way out, the socket file stays
        with hosts["b"].client() as b:
            assert b.claim(DOMAIN, UIDSpace.unique(b"\x02"), 600).granted
        hosts["a"].start()
        with hosts["a"].client() as a:
            restored = a.status()["restored"]
            while any(entry["result"] == "pending" for entry in restored):
                restored = a.status()["restored"]
            outcomes = {entry["claim"]: entry["result"] for entry in restored}
            # UIAP §4.4: reclaimed with R; B's Claim-Deny makes the second a collision.
            assert outcomes == {kept.claim: "granted", lost.claim: "collision"}
            assert [claim["claim"] for claim in a.list_claims()] == [kept.claim]


def test_partition_and_merge_fail_a_renewal(network: Network, tmp_path: Path) -> None:
    with daemons(network, tmp_path, ["a", "b"]) as hosts, hosts["a"].client() as a:
        events = a.watch()
        network.set_link("sw1", "p1", up=False)  # b's port on the bridge
        mine = a.claim(DOMAIN, UIDSpace.unique(b"\x07"), 2, renew=True)
        with hosts["b"].client() as b:
            # UIAP §2.1.2: each side is unique on its own, so both are granted.
            assert mine.granted and b.claim(DOMAIN, UIDSpace.unique(b"\x07"), 600).granted
        network.set_link("sw1", "p1", up=True)
        for event in events:
            if event.name == "collision":
                break
        assert (event.fields["claim"], event.fields["how"]) == (mine.claim, "renewal")
        events.close()


def test_site_key_on_the_network(network: Network, tmp_path: Path) -> None:
    key = tmp_path / "site.key"
    key.write_text("1 " + "5a" * 32 + " send\n")
    os.chmod(key, 0o600)
    with_key = ("--key-file", str(key))
    with daemons(network, tmp_path, ["a", "b", "c"], a=with_key, b=with_key) as hosts:
        a, b, c = (hosts[name].client() for name in "abc")
        assert a.claim(DOMAIN, UIDSpace.unique(b"\x11"), 60).granted
        assert not b.claim(DOMAIN, UIDSpace.unique(b"\x11"), 60).granted
        # Without the key: not defended against, and unable to deny.
        assert c.claim(DOMAIN, UIDSpace.unique(b"\x11"), 60).granted
        assert c.claim(DOMAIN, UIDSpace.unique(b"\x12"), 60).granted
        assert a.claim(DOMAIN, UIDSpace.unique(b"\x12"), 60).granted
        assert a.status()["drops"].get("auth-missing", 0) >= 1
        # Both sides of the split see it: the keyed hosts hear unsealed datagrams, the
        # keyless one sealed datagrams (counted apart from garbage), and each says so in
        # its log (rate-limited per interface: tests/daemon/test_site_split.py).
        assert a.status()["site_split"]["seen"]["e0"]["auth-missing"] >= 1
        assert c.status()["site_split"]["seen"]["e0"]["auth-unexpected"] >= 1
        assert c.status()["drops"].get("malformed", 0) == 0
        for client in (a, b, c):
            client.close()
        for name, kind in (("a", "auth-missing"), ("b", "auth-missing"), ("c", "auth-unexpected")):
            lines = hosts[name].stderr().splitlines()
            logged = [line for line in lines if "link on e0 carries a different site" in line]
            assert logged and all(f"split): {kind} from" in line for line in logged), name


@pytest.mark.parametrize("flag", ["--interface"])
def test_a_missing_interface_is_one_line_and_status_2(
    network: Network, tmp_path: Path, flag: str
) -> None:
    network.add_host("a")
    process = DaemonProcess(network, "a", tmp_path, flag, "nosuch0")
    try:
        with pytest.raises(RuntimeError, match="'interfaces'"):
            process.start()
        assert process.process is not None and process.process.returncode == 2
    finally:
        process.close()


def test_ipv4_with_unprivileged_ports(network: Network, tmp_path: Path) -> None:
    """UIAP §2.3 "could equally be implemented over IPv4": the daemon's --ipv4 and ports."""
    flags = ("--ipv4", "--port", "41121", "--reply-port", "41122")
    for host in ("a", "b"):
        network.add_host(host)
    network.segment(["a", "b"])
    for number, host in enumerate(("a", "b"), start=1):
        network.add_ipv4(host, "e0", f"169.254.9.{number}/16")
    processes = {host: DaemonProcess(network, host, tmp_path, *flags) for host in ("a", "b")}
    try:
        for process in processes.values():
            process.start()
        with processes["a"].client() as a, processes["b"].client() as b:
            assert a.claim(DOMAIN, UIDSpace.unique(b"\x44"), 60).granted
            assert not b.claim(DOMAIN, UIDSpace.unique(b"\x44"), 60).granted
            status = a.status()["counters"]
            assert (status["family"], status["port"]) == ("ipv4", 41121)
    finally:
        for process in processes.values():
            process.close()


def test_a_link_down_then_up_reverifies_every_held_claim(network: Network, tmp_path: Path) -> None:
    """a's own link goes down: its claim stays held, reported unverified. Meanwhile b is
    granted the same space (nobody could deny it). The link comes back: a re-verifies at
    once (a reclaim, UIAP §4.4), announced by ``suspect``, and b's deny ends a's claim with
    ``collision`` (how ``verify``): one holder again, without waiting for a renewal."""
    space = UIDSpace.unique(b"\x31")
    with daemons(network, tmp_path, ["a", "b"]) as hosts, hosts["a"].client() as a:
        events = a.watch()
        mine = a.claim(DOMAIN, space, 600)
        assert mine.granted

        def next_for_mine(name: str) -> dict[str, object]:
            for event in events:
                if event.name == name and event.fields.get("claim") == mine.claim:
                    return dict(event.fields)
            raise AssertionError(f"the watch ended before {name}")

        network.set_link("a", "e0", up=False)
        assert next_for_mine("unverified")["reason"] == "interface-down"
        [held] = a.list_claims()
        assert (held["state"], held["verified"]) == ("held", False)
        assert a.status()["claims"] == {"held": 1, "unverified": 1, "proxied": 0}
        with hosts["b"].client() as b:
            assert b.claim(DOMAIN, space, 600).granted  # two holders now (UIAP §2.1.2)
        network.set_link("a", "e0", up=True)
        assert next_for_mine("suspect")["reason"] == "interface-up"
        assert next_for_mine("collision")["how"] == "verify"
        assert a.list_claims() == []
        events.close()


def test_a_second_daemon_on_one_state_directory_refuses_to_start(
    network: Network, tmp_path: Path
) -> None:
    """Two namespaces on one link, one state directory: the second daemon would share the
    first one's device ID and erase its claims with its writes. It stops at once, one line
    naming the directory, and the first one's claim stays on disk."""
    with daemons(network, tmp_path, ["a", "b"]) as hosts, hosts["a"].client() as a:
        hosts["b"].kill()
        state_dir = str(hosts["a"].directory / "state")
        second = DaemonProcess(network, "b", tmp_path / "second", "--state-dir", state_dir)
        try:
            with pytest.raises(RuntimeError, match="never ready") as refused:
                second.start()
            assert second.process is not None and second.process.returncode == 2
            message = str(refused.value).split("never ready: ", 1)[1]
            assert message.count("\n") == 1 and "in use by another running daemon" in message
        finally:
            second.close()
        granted = a.claim(DOMAIN, UIDSpace.unique(b"\x32"), 600)
        assert granted.granted
        saved = read_state(str(hosts["a"].directory / "state"))["claims"]
        assert str(granted.claim) in [claim["id"] for claim in saved]
