"""The API server against bad and many clients: each gets a clear error or is served, and
none affects the others. Also the socket file's mode and life cycle, and SO_PEERCRED.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from daemon_site import DOMAIN, WAIT_S, running, until

from uuidkit.daemon.server import SocketError, bind_api_socket
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import MAX_LINE_OCTETS, APIError, ErrorCode
from uuidkit.uiapd.client import AsyncClient

ROOT = Path(__file__).resolve().parents[2]


async def _exchange(path: str, data: bytes, *, replies: int = 1) -> list[dict[str, Any]]:
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(data)
    await writer.drain()
    out = []
    for _ in range(replies):
        line = await asyncio.wait_for(reader.readline(), WAIT_S)
        if not line:
            break
        out.append(json.loads(line))
    writer.close()
    return out


@pytest.mark.parametrize(
    ("request_line", "code", "field"),
    [
        (b"{oops\n", "bad-json", None),
        (b"\xff\xfe\n", "bad-json", None),
        (b"42\n", "bad-request", None),
        (b'{"id": 1}\n', "bad-request", "method"),
        (b'{"id": 2, "method": "explode"}\n', "unknown-method", "method"),
        (b'{"id": 3, "method": "list", "v": 9}\n', "unsupported-version", "v"),
        (b'{"id": 4, "method": "list", "params": {"x": 1}}\n', "bad-params", "x"),
        (
            b'{"id": 5, "method": "claim", "params": {"domain": "bad", "uid": "01"}}\n',
            "bad-params",
            "domain",
        ),
        (b'{"id": 6, "method": "release", "params": {}}\n', "bad-params", "claim"),
        # A right-justified domain (J = 1) has no prefixes (UIAP §3.2.2): refused, not a crash.
        (
            b'{"id": 7, "method": "claim", "params": {"domain": "0fff:0:1:80", "prefix": "01"}}\n',
            "bad-params",
            None,
        ),
    ],
)
def test_bad_requests_get_typed_errors_and_the_connection_stays(
    tmp_path: Path, request_line: bytes, code: str, field: str | None
) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"]) as (_, hosts):
            # The bad line, then a good one on the same connection: still served.
            bad, good = await _exchange(
                hosts["a"].socket, request_line + b'{"id": "ok", "method": "list"}\n', replies=2
            )
            assert bad["v"] == 1 and bad["ok"] is False
            assert (bad["error"]["code"], bad["error"].get("field")) == (code, field)
            assert good == {"v": 1, "id": "ok", "ok": True, "result": {"claims": []}}

    asyncio.run(main())


def test_oversized_line_and_half_a_line_do_not_affect_others(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"], request_timeout=0.5) as (_, hosts):
            path = hosts["a"].socket
            silent_reader, silent = await asyncio.open_unix_connection(path)
            silent.write(b'{"method": "li')  # half a line, then silence
            huge = asyncio.create_task(_exchange(path, b"x" * (MAX_LINE_OCTETS + 10)))
            # Meanwhile another client is served at once.
            assert await AsyncClient(path).list_claims() == []
            [too_long] = await huge
            assert too_long["error"]["code"] == "line-too-long"
            line = await asyncio.wait_for(silent_reader.readline(), WAIT_S)
            assert json.loads(line)["error"]["code"] == "timeout"
            assert await silent_reader.read() == b""  # closed
            status = await AsyncClient(path).status()
            assert status["api"]["errors"] == {"line-too-long": 1, "timeout": 1}

    asyncio.run(main())


def test_a_thousand_clients_at_once(tmp_path: Path) -> None:
    """1000 concurrent connections each claim a UID of their own: every one is served."""

    async def main() -> None:
        async with running(tmp_path, ["a", "b"]) as (_, hosts):
            clients = [hosts["a"].client() for _ in range(1000)]

            async def one(number: int) -> bool:
                space = UIDSpace.unique(number.to_bytes(2, "big"))
                result = await clients[number].claim(DOMAIN, space, 60)
                return result.granted

            results = await asyncio.gather(*(one(n) for n in range(1000)))
            assert all(results)
            assert len(await clients[0].list_claims()) == 1000
            # The other site member denies every one of them (UIAP §2.4.2).
            b = hosts["b"].client()
            assert not (
                await b.claim(DOMAIN, UIDSpace.unique((999).to_bytes(2, "big")), 60)
            ).granted
            for client in clients:
                await client.close()

    asyncio.run(main())


def test_clients_beyond_the_cap_are_refused_clearly(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"], max_clients=20) as (_, hosts):
            path = hosts["a"].socket
            held = [await asyncio.open_unix_connection(path) for _ in range(20)]
            for _, writer in held:
                writer.write(b'{"method": "status"}\n')
            for reader, _ in held:
                assert json.loads(await reader.readline())["ok"] is True
            with pytest.raises(APIError) as caught:
                await AsyncClient(path).list_claims()
            # The refused client reads a clear error before the connection closes.
            [refused] = await _exchange(path, b"")
            assert refused["error"]["code"] == "too-many-clients"
            assert caught.value.code in (ErrorCode.TOO_MANY_CLIENTS, ErrorCode.UNREACHABLE)
            for _, writer in held:
                writer.close()
            server = hosts["a"].server
            await until(lambda: not server.clients, "freed the closed clients' slots")
            assert await AsyncClient(path).list_claims() == []

    asyncio.run(main())


def test_a_watcher_that_never_reads_is_dropped_alone(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a"], max_client_backlog=4096) as (_, hosts):
            path = hosts["a"].socket
            reader, writer = await asyncio.open_unix_connection(path)
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            writer.write(b'{"method": "watch"}\n')
            assert json.loads(await reader.readline())["result"] == {"watching": True}
            # Small kernel buffers on the daemon's side too, so the backlog builds up in
            # the daemon, where the cap applies.
            [watcher] = hosts["a"].daemon.server.clients  # type: ignore[union-attr]
            watcher.writer.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_SNDBUF, 4096
            )
            clients = [hosts["a"].client() for _ in range(200)]

            async def churn(number: int) -> None:
                # 255-octet UIDs make each event about 1 KiB: 400 events overflow the
                # kernel's socket buffers and the daemon's 4 KiB backlog.
                space = UIDSpace.unique(number.to_bytes(2, "big") * 127 + b"\x00")
                result = await clients[number].claim(DOMAIN, space, 60)
                await clients[number].release(str(result.claim))

            await asyncio.gather(*(churn(n) for n in range(200)))
            server = hosts["a"].server
            await until(lambda: watcher not in server.clients, "dropped the watcher")
            # Only the 200 well-behaved clients remain connected.
            assert len(server.clients) == 200
            assert await reader.read() != b""  # what was sent before the cut
            writer.close()
            for client in clients:
                await client.close()

    asyncio.run(main())


def test_the_socket_is_never_wider_than_0660(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, int, int]] = []
    real_rename = os.rename

    def spy(source: str, target: str) -> None:
        seen.append(
            (
                os.path.dirname(source),
                stat.S_IMODE(os.stat(os.path.dirname(source)).st_mode),
                stat.S_IMODE(os.lstat(source).st_mode),
            )
        )
        real_rename(source, target)

    monkeypatch.setattr(os, "rename", spy)
    os.umask(0o022)
    path = str(tmp_path / "api.sock")
    sock, _ = bind_api_socket(path)
    [(directory, directory_mode, socket_mode)] = seen
    # Bound in a private directory of its own (nobody else can reach it there) ...
    assert directory != str(tmp_path) and directory_mode == 0o700
    # ... already 0660 when it appears at its public path.
    assert socket_mode == 0o660
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o660
    assert sorted(os.listdir(tmp_path)) == ["api.sock"]
    sock.close()


def test_stale_live_and_foreign_files_at_the_socket_path(tmp_path: Path) -> None:
    path = str(tmp_path / "api.sock")
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(path)
    stale.close()  # a socket file nobody accepts on: replaced
    live, _ = bind_api_socket(path)
    with pytest.raises(SocketError, match="another process"):
        bind_api_socket(path)
    live.close()
    other = tmp_path / "not-a-socket"
    other.write_text("keep me")
    with pytest.raises(SocketError, match="not a socket"):
        bind_api_socket(str(other))
    assert other.read_text() == "keep me"


def test_stop_removes_only_its_own_socket_file(tmp_path: Path) -> None:
    async def main() -> None:
        async with running(tmp_path, ["a", "b"]) as (_, hosts):
            await hosts["a"].stop()
            assert not Path(hosts["a"].socket).exists()
            # Someone replaced b's socket file meanwhile: b must not delete theirs.
            os.unlink(hosts["b"].socket)
            Path(hosts["b"].socket).write_text("someone else's")
            await hosts["b"].stop()
            assert Path(hosts["b"].socket).read_text() == "someone else's"

    asyncio.run(main())


_MANY_AS_NOBODY = """
import json, os, socket, sys
os.setgid(65534); os.setuid(65534)
held = []
for _ in range(4):
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(sys.argv[1])
    held.append(sock)
sock = held[-1]
print(json.loads(sock.makefile("rb").readline())["error"]["code"])
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another uid needs root")
def test_one_user_cannot_take_every_slot(tmp_path: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="uuidkit-peruid-"))
    os.chmod(root, 0o755)

    async def main() -> None:
        async with running(root, ["a"], max_clients_per_uid=3) as (_, hosts):
            os.chmod(hosts["a"].directory, 0o755)
            os.chmod(hosts["a"].socket, 0o666)  # let uid 65534 connect, for this test only
            done = await asyncio.create_subprocess_exec(
                sys.executable, "-c", _MANY_AS_NOBODY, hosts["a"].socket,
                stdout=subprocess.PIPE,
            )  # fmt: skip
            out, _ = await done.communicate()
            assert out.decode().strip() == "too-many-clients"
            # Root is not counted against a user's share.
            assert await hosts["a"].client().list_claims() == []

    try:
        asyncio.run(main())
    finally:
        shutil.rmtree(root)


_OTHER_USER = """
import os, sys
from uuidkit.uiapd.client import Client
from uuidkit.uiap import UIDSpace
os.setgid(65534); os.setuid(65534)
client = Client(sys.argv[1])
try:
    client.release(sys.argv[2])
except ValueError as error:
    print(error.code.value)
# A reclaim of the same space must not join the other user's claim (UIAP §4.4 reclaim).
try:
    client.claim(sys.argv[3], UIDSpace.unique(b"\\x01"), 60, reclaim=True)
except ValueError as error:
    print(error.code.value)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another uid needs root")
def test_only_the_owner_or_root_releases(tmp_path: Path) -> None:
    # uid 65534 must be able to reach the socket: pytest's own tmp directories are 0700.
    root = Path(tempfile.mkdtemp(prefix="uuidkit-peercred-"))
    os.chmod(root, 0o755)

    async def main() -> None:
        async with running(root, ["a"]) as (_, hosts):
            os.chmod(hosts["a"].directory, 0o755)
            os.chmod(hosts["a"].socket, 0o666)  # let uid 65534 connect, for this test only
            client = hosts["a"].client()
            claim = (await client.claim(DOMAIN, UIDSpace.unique(b"\x01"), 60)).claim
            done = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _OTHER_USER,
                hosts["a"].socket,
                str(claim),
                str(DOMAIN),
                stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
            )
            out, _ = await done.communicate()
            assert out.decode().split() == ["permission-denied", "permission-denied"]
            [listed] = await client.list_claims()
            assert listed["owner_uid"] == 0
            await client.release(str(claim))  # root (the owner here) may

    try:
        asyncio.run(main())
    finally:
        shutil.rmtree(root)
