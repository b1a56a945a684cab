"""Site-key rollover on a real network, one host at a time, with claims running throughout.

The procedure of docs/uiap-daemon.md ("Operating a site: rotating the site key"): add the new
key on every host (accepted, not sent), make it the sending key on every host, then remove
the old key, reloading each host (SIGHUP) on its own. After every single host's reload the
site must still be one site: a claim from each host is granted, and the same space claimed
from each other host is denied (a host that could not verify the holder's datagrams, or whose
datagrams the holder refused, would be granted it: a second site). A claimer runs beside the
steps the whole time and none of its claims fails; no host drops a datagram for its key.

The last test shows what the procedure avoids: replacing the key on one host at once (a flag
day) splits the site at once, which the same check sees.

References: UIAP §2.1.2 (separate sites), §2.4.2 (denial), §7 (authentication); RFC 8967
§1.1 (several keys at once, for rotation).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

from daemon_process import DOMAIN, DaemonProcess
from netns_topology import Network

from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.client import Client

OLD, NEW = "1 " + "a5" * 32, "2 " + "3c" * 32
#: The key file of each step of the procedure, in order.
STEPS = (
    f"{OLD} send\n{NEW}\n",  # 1. the new key everywhere, accepted but not sent
    f"{OLD}\n{NEW} send\n",  # 2. sending with the new key
    f"{NEW} send\n",  # 3. the old key gone
)
HOSTS = ("a", "b", "c")
KEY_DROPS = ("auth-missing", "auth-bad-mac", "auth-unknown-key", "auth-truncated")


def _write_key(path: Path, text: str) -> None:
    path.write_text(text)
    os.chmod(path, 0o600)


def _reload(process: DaemonProcess) -> None:
    """SIGHUP, and wait until the daemon says the new configuration is in force."""
    process.signal(signal.SIGHUP)
    assert process.notified().startswith("RELOADING=1")
    done = process.notified()
    assert done.startswith("READY=1\nSTATUS=configuration reloaded"), done


@contextlib.contextmanager
def _site(
    network: Network, tmp_path: Path
) -> Iterator[tuple[dict[str, DaemonProcess], dict[str, Path]]]:
    for host in HOSTS:
        network.add_host(host)
    network.segment(list(HOSTS))
    keys = {host: tmp_path / f"{host}.key" for host in HOSTS}
    for path in keys.values():
        _write_key(path, f"{OLD} send\n")
    processes = {
        host: DaemonProcess(network, host, tmp_path, "--key-file", str(keys[host]))
        for host in HOSTS
    }
    try:
        for process in processes.values():
            process.start()
        yield processes, keys
    finally:
        for process in processes.values():
            process.close()


_uids = itertools.count(0x100)


def _one_site(processes: dict[str, DaemonProcess]) -> list[str]:
    """What shows the site split, for every ordered pair of hosts (empty: one site)."""
    problems = []
    for holder in HOSTS:
        space = UIDSpace.unique(next(_uids).to_bytes(2))
        with processes[holder].client() as client:
            result = client.claim(DOMAIN, space, 60, release_on_disconnect=True)
            if not result.granted:
                problems.append(f"{holder}'s claim failed: {result.reason}")
                continue
            for other in HOSTS:
                if other == holder:
                    continue
                with processes[other].client() as rival:
                    if rival.claim(DOMAIN, space, 60, release_on_disconnect=True).granted:
                        problems.append(f"{other} did not hear {holder}: a second site")
    return problems


class Claimer(threading.Thread):
    """Claims fresh spaces from one host until stopped; records every outcome."""

    def __init__(self, process: DaemonProcess) -> None:
        super().__init__(daemon=True)
        self.process = process
        self.results: list[bool] = []
        self.stop_now = threading.Event()

    def run(self) -> None:
        with Client(self.process.socket, timeout=60) as client:
            for uid in itertools.count(0x8000):
                if self.stop_now.is_set():
                    return
                space = UIDSpace.unique(uid.to_bytes(2))
                self.results.append(client.claim(DOMAIN, space, 60).granted)


def _key_drops(processes: dict[str, DaemonProcess]) -> dict[str, dict[str, int]]:
    drops = {}
    for host, process in processes.items():
        with process.client() as client:
            found = client.status()["drops"]
        drops[host] = {k: v for k, v in found.items() if k in KEY_DROPS and v}
    return drops


def test_rollover_one_host_at_a_time_keeps_one_site(network: Network, tmp_path: Path) -> None:
    with _site(network, tmp_path) as (processes, keys):
        assert _one_site(processes) == []
        claimer = Claimer(processes["c"])
        claimer.start()
        try:
            for step, text in enumerate(STEPS, 1):
                for host in HOSTS:
                    _write_key(keys[host], text)
                    _reload(processes[host])
                    assert _one_site(processes) == [], f"step {step}, after {host}"
        finally:
            claimer.stop_now.set()
            claimer.join(timeout=120)
        assert claimer.results and all(claimer.results), claimer.results
        assert _key_drops(processes) == {host: {} for host in HOSTS}
        for process in processes.values():
            with process.client() as client:
                auth = client.status()["auth"]
            assert (auth["send_key_id"], auth["key_ids"]) == (2, [2])


def test_a_flag_day_splits_the_site(network: Network, tmp_path: Path) -> None:
    with _site(network, tmp_path) as (processes, keys):
        assert _one_site(processes) == []
        _write_key(keys["a"], f"{NEW} send\n")  # the new key alone, on one host
        _reload(processes["a"])
        problems = _one_site(processes)
        assert "b did not hear a: a second site" in problems
        assert "a did not hear b: a second site" in problems
        assert _key_drops(processes)["a"].get("auth-unknown-key", 0) >= 1
