"""The daemon's parts on their own: state directory, configuration, key file, sd_notify."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from daemon_site import running

from uuidkit._safefile import FileSystem
from uuidkit.daemon.config import MAX_CONFIG_OCTETS, ConfigError, DaemonConfig, load_config
from uuidkit.daemon.keys import read_key_file
from uuidkit.daemon.main import engine_config_of
from uuidkit.daemon.notify import notify, notify_address
from uuidkit.daemon.state import StateError, StateStore, StateWriter
from uuidkit.uiap.auth import AuthError
from uuidkit.uiap.engine_types import EngineConfig

ROOT = Path(__file__).resolve().parents[2]

# ---------------------------------------------------------------------- state directory


class Crash(Exception):
    """A fault injected half way through a state write."""


def test_a_crash_mid_write_leaves_the_old_state(tmp_path: Path) -> None:
    store = StateStore(str(tmp_path / "state"))
    store.save({"claims": ["old"]})

    class HalfWrite(FileSystem):
        def write(self, descriptor: int, data: memoryview) -> int:
            os.write(descriptor, data[: len(data) // 2])
            raise Crash("power lost")

    store.fs = HalfWrite()
    with pytest.raises(Crash):
        store.save({"claims": ["new", "x" * 1000]})
    assert StateStore(str(tmp_path / "state")).load()["claims"] == ["old"]
    assert sorted(os.listdir(tmp_path / "state")) == ["state.journal", "state.json"]


def test_a_crash_before_the_rename_leaves_the_old_state(tmp_path: Path) -> None:
    store = StateStore(str(tmp_path / "state"))
    store.save({"claims": ["old"]})

    class NoRename(FileSystem):
        def replace(self, source: str, target: str) -> None:
            raise Crash("killed before rename")

    store.fs = NoRename()
    with pytest.raises(Crash):
        store.save({"claims": ["new"]})
    assert store.load()["claims"] == ["old"]


def test_file_then_rename_then_directory_are_synced(tmp_path: Path) -> None:
    """The order that makes a write durable and atomic: fsync(file), rename, fsync(dir)."""
    calls: list[str] = []

    class Recording(FileSystem):
        def fsync(self, descriptor: int) -> None:
            is_dir = stat.S_ISDIR(os.fstat(descriptor).st_mode)
            calls.append("fsync-dir" if is_dir else "fsync-file")
            super().fsync(descriptor)

        def replace(self, source: str, target: str) -> None:
            calls.append("rename")
            super().replace(source, target)

    store = StateStore(str(tmp_path / "state"), Recording())
    store.save({"claims": []})
    # The snapshot, then the journal that extends it (uuidkit.daemon.state).
    assert calls == ["fsync-file", "rename", "fsync-dir"] * 2


def test_leftover_temporaries_of_a_killed_run_are_removed_and_nothing_else(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "state"
    store = StateStore(str(directory))
    store.save({"claims": []})
    (directory / ".state.json.0123456789abcdef.tmp").write_text("torn")
    (directory / "notes.txt").write_text("not ours")
    (directory / ".state.journal.fedcba9876543210.tmp").write_text("torn")
    (directory / ".state.json.evil.tmp").write_text("not our pattern")
    store.load()
    assert sorted(os.listdir(directory)) == [
        ".state.json.evil.tmp",
        "notes.txt",
        "state.journal",
        "state.json",
    ]


def test_a_fifo_at_state_json_is_refused_without_blocking(tmp_path: Path) -> None:
    """A planted FIFO used to hang start-up in open(); it is refused at once (O_NONBLOCK in
    uuidkit._safefile: removing it makes this test fail)."""
    directory = tmp_path / "state"
    store = StateStore(str(directory))
    os.mkfifo(directory / "state.json", 0o600)
    outcome: list[BaseException | object] = []

    def load() -> None:
        try:
            outcome.append(store.load())
        except BaseException as error:
            outcome.append(error)

    loader = threading.Thread(target=load, daemon=True)
    loader.start()
    loader.join(30)
    if loader.is_alive():  # blocked in open(): a writer lets it go, then the test fails
        os.close(os.open(directory / "state.json", os.O_WRONLY | os.O_NONBLOCK))
        loader.join(30)
        pytest.fail("loading the state blocked on a FIFO")
    assert len(outcome) == 1 and isinstance(outcome[0], StateError)
    assert "a FIFO, not a state file" in str(outcome[0])


def test_state_files_are_private_and_never_follow_symlinks(tmp_path: Path) -> None:
    directory = tmp_path / "state"
    store = StateStore(str(directory))
    store.save({"claims": []})
    assert (
        directory.stat().st_mode & 0o777,
        (directory / "state.json").stat().st_mode & 0o777,
    ) == (
        0o700,
        0o600,
    )
    target = tmp_path / "elsewhere.json"
    target.write_text('{"version": 1, "claims": ["planted"]}')
    os.unlink(directory / "state.json")
    os.symlink(target, directory / "state.json")
    with pytest.raises(StateError):
        store.load()
    linked = tmp_path / "linked"
    os.symlink(directory, linked)
    with pytest.raises(StateError):
        StateStore(str(linked))
    wide = tmp_path / "wide"
    wide.mkdir(mode=0o777)
    os.chmod(wide, 0o777)
    with pytest.raises(StateError, match="writable by other users"):
        StateStore(str(wide))


@pytest.mark.parametrize("content", ["not json", '{"version": 7}', "[1]"])
def test_unusable_state_is_an_error_not_a_crash(tmp_path: Path, content: str) -> None:
    directory = tmp_path / "state"
    store = StateStore(str(directory))
    (directory / "state.json").write_text(content)
    with pytest.raises(StateError):
        store.load()


# ---------------------------------------------------------------------- configuration


def test_a_config_file_is_read_with_a_bound(tmp_path: Path) -> None:
    # A sparse file of zeros one octet past the bound stands for /dev/zero: refused by its
    # size after a bounded read (without the bound it would reach the TOML parser).
    path = tmp_path / "huge.toml"
    with path.open("wb") as file:
        file.truncate(MAX_CONFIG_OCTETS + 1)
    with pytest.raises(ConfigError, match=f"larger than {MAX_CONFIG_OCTETS}"):
        load_config(str(path), {})
    path.write_bytes(b'socket = "\xff"\n')
    with pytest.raises(ConfigError, match="is not UTF-8: octet 10"):
        load_config(str(path), {})


def test_toml_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "uiapd.toml"
    path.write_text('socket = "/tmp/x.sock"\nclaim_period = 1\ninterfaces = ["e0", "e1"]\n')
    config = load_config(str(path), {"claim_period": 0.25, "port": None})
    assert config == DaemonConfig(socket="/tmp/x.sock", claim_period=0.25, interfaces=("e0", "e1"))


def test_draft_only_switches_off_what_the_engine_adds(tmp_path: Path) -> None:
    """``draft_only`` gives the engine ``EngineConfig.draft_only()`` with the daemon's timers;
    the default keeps uuidkit's behaviour (docs/uiap.md "Beyond the draft")."""
    path = tmp_path / "uiapd.toml"
    path.write_text("draft_only = true\nclaim_period = 0.25\n")
    draft = engine_config_of(load_config(str(path), {}))
    assert (draft.copies, draft.verify_interval, draft.tie_break) == (1, None, False)
    assert draft.claim_period == 0.25
    default = engine_config_of(DaemonConfig())
    assert (default.copies, default.tie_break) == (EngineConfig().copies, True)
    assert default.verify_interval is not None
    with pytest.raises(ConfigError, match="draft_only"):
        load_config(None, {"draft_only": "yes"})


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("colour = 1", "colour"),
        ("claim_period = -1", "claim_period"),
        ('claim_period = "fast"', "claim_period"),
        ("port = 70000", "port"),
        ("port = 1022", "reply_port"),
        ("ipv4 = 1", "ipv4"),
        ('interfaces = "e0"', "interfaces"),
        ("max_clients = 0", "max_clients"),
        ('log_level = "loud"', "log_level"),
        ("this is not toml", "config"),
    ],
)
def test_a_bad_setting_names_its_key(tmp_path: Path, toml: str, key: str) -> None:
    path = tmp_path / "uiapd.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_config(str(path), {})
    assert caught.value.key == key
    assert f"'{key}'" in str(caught.value)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uuidkit", "uiap", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=60,
    )


def test_the_command_line_says_one_line_and_exits_2(tmp_path: Path) -> None:
    done = _cli("daemon", "--claim-period", "-3", "--state-dir", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "'claim_period'" in done.stderr
    done = _cli("daemon", "--config", str(tmp_path / "missing.toml"))
    assert (done.returncode, done.stderr.count("\n")) == (2, 1)
    key_file = tmp_path / "site.key"
    key_file.write_text("1 " + "ab" * 32)
    os.chmod(key_file, 0o644)
    done = _cli(
        "daemon",
        "--key-file",
        str(key_file),
        "--state-dir",
        str(tmp_path / "s"),
        "--socket",
        str(tmp_path / "s.sock"),
    )
    assert done.returncode == 2 and "'key_file'" in done.stderr and "chmod 600" in done.stderr


def test_the_claim_command_without_a_daemon(tmp_path: Path) -> None:
    sock = str(tmp_path / "none.sock")
    done = _cli("claim", "--socket", sock, "--domain", "0fff:0:1:0", "--uid", "01")
    assert done.returncode == 2 and "cannot reach the UIAP daemon" in done.stderr
    done = _cli("claim", "--socket", sock, "--domain", "0fff:0:1:0", "--uid", "0z")
    assert done.returncode == 2 and "UID space" in done.stderr
    done = _cli("claim", "--socket", sock, "--domain", "nope", "--uid", "01")
    assert done.returncode == 2
    for command in ("list", "status", "watch"):
        assert _cli(command, "--socket", sock).returncode == 2


# ---------------------------------------------------------------------- key file


def test_key_file_permissions(tmp_path: Path) -> None:
    path = tmp_path / "site.key"
    path.write_text("1 " + "ab" * 32 + " send\n")
    for mode in (0o640, 0o604, 0o620):
        os.chmod(path, mode)
        with pytest.raises(AuthError, match="is open to other users"):
            read_key_file(str(path))
    os.chmod(path, 0o600)
    assert read_key_file(str(path)).send_key_id == 1
    link = tmp_path / "link.key"
    os.symlink(path, link)
    with pytest.raises(AuthError):
        read_key_file(str(link))
    with pytest.raises(AuthError, match="a directory, not a key file"):
        read_key_file(str(tmp_path))
    fifo = tmp_path / "fifo.key"
    os.mkfifo(fifo, 0o600)  # refused at once: opened O_NONBLOCK (uuidkit._safefile)
    with pytest.raises(AuthError, match="a FIFO, not a key file"):
        read_key_file(str(fifo))
    path.write_text("1 short\n")
    with pytest.raises(AuthError, match="line 1"):
        read_key_file(str(path))


# ---------------------------------------------------------------------- sd_notify


def test_notify_addresses() -> None:
    assert notify_address("@uiapd/notify") == b"\0uiapd/notify"
    assert notify_address("/run/systemd/notify") == "/run/systemd/notify"
    assert notify_address(None) is None and notify_address("vsock:2:1") is None
    assert notify("READY=1", {}) is None


@pytest.mark.parametrize("abstract", [False, True])
def test_ready_and_stopping_reach_the_service_manager(tmp_path: Path, abstract: bool) -> None:
    manager = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if abstract:
        name = f"uuidkit-test-{os.getpid()}-{id(manager)}"
        manager.bind(b"\0" + name.encode())
        environ = {"NOTIFY_SOCKET": "@" + name}
    else:
        manager.bind(str(tmp_path / "notify"))
        environ = {"NOTIFY_SOCKET": str(tmp_path / "notify")}
    manager.settimeout(10)

    async def main() -> None:
        async with running(tmp_path, []) as (site, _):
            from daemon_site import Host

            host = Host(site, tmp_path, "a")
            await host.start(environ=environ)
            ready = manager.recv(4096).decode()
            assert ready.startswith("READY=1\nSTATUS=serving")
            await host.stop()
            assert manager.recv(4096).decode().startswith("STOPPING=1")

    asyncio.run(main())
    manager.close()


def test_reload_changes_limits_and_keeps_what_needs_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "uiapd.toml"
    path.write_text("max_clients = 5\n")

    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            daemon = hosts["a"].daemon
            assert daemon is not None and daemon.server is not None
            daemon.config_path = str(path)
            daemon.overrides = dict(hosts["a"].settings)
            path.write_text("max_clients = 7\nclaim_period = 3.0\n")
            daemon.overrides.pop("claim_period")
            daemon.reload()
            assert daemon.server.config.max_clients == 7
            assert daemon.server.config.claim_period == 0.02  # needs a restart
            path.write_text("max_clients = -1\n")
            daemon.reload()  # refused: the running configuration stays
            assert daemon.server.config.max_clients == 7

    asyncio.run(main())


def test_group_commit_and_a_failing_disk(tmp_path: Path) -> None:
    """Changes made while a write runs share the next write; a failed write is counted
    and its waiters still run, told the error (a full disk must not hang the API, and a
    change it carried must not be reported durable)."""
    writes: list[dict[str, Any]] = []
    store = StateStore(str(tmp_path / "state"))
    version = {"n": 0}
    fail = {"on": False}
    real_save = store.save

    def save(state: Any) -> None:
        if fail["on"]:
            raise OSError(28, "No space left on device")
        writes.append(dict(state))
        real_save(state)

    store.save = save  # type: ignore[method-assign]

    async def main() -> None:
        writer = StateWriter(store, lambda: {"claims": [version["n"]]})
        done: list[int] = []

        def recorder(number: int) -> Callable[[OSError | None], None]:
            return lambda failure: done.append(number if failure is None else -number)

        for number in range(1, 6):
            version["n"] = number
            writer.save(then=recorder(number))
        await writer.persisted()
        assert done == [1, 2, 3, 4, 5]
        assert 1 <= len(writes) <= 2 and writes[-1]["claims"] == [5]
        fail["on"] = True
        failures: list[OSError | None] = []
        writer.save(then=failures.append)
        await writer.persisted()
        assert writer.errors == 1
        assert len(failures) == 1 and isinstance(failures[0], OSError)
        assert failures[0].errno == 28

    asyncio.run(main())
