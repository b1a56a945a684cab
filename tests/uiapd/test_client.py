"""The API clients (uuidkit.uiapd.client) against a scripted server on a real Unix socket."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import APIError, ErrorCode, encode_error, encode_event, encode_reply
from uuidkit.uiapd.client import AsyncClient, Client

DID = "0fff:0000:0001:0080"
Script = Callable[[dict[str, Any]], list[bytes]]


def _reply(request: dict[str, Any]) -> list[bytes]:
    method = request["method"]
    if method == "claim":
        granted = request["params"]["uid"] == "01"
        result = {"result": "granted" if granted else "denied", "latency": 0.01}
        result |= {"claim": "c1", "expires": 99.0} if granted else {"reason": "denied"}
        # An event line before the reply: a client skips it.
        return [encode_event("granted", {"claim": "x"}), encode_reply(request["id"], result)]
    if method == "release":
        error = APIError(ErrorCode.PERMISSION_DENIED, "claim c2 belongs to uid 7", "claim")
        return [encode_error(request["id"], error)]
    if method == "list":
        return [encode_reply(request["id"], {"claims": [{"claim": "c1"}]})]
    if method == "watch":
        return [
            encode_reply(request["id"], {"watching": True}),
            encode_event("interface-up", {"interface": "eth0"}),
            encode_event("expired", {"claim": "c1"}),
        ]
    return [encode_reply(request["id"], {"device_id": "00"})]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    path = str(tmp_path / "api.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen()
    serve_on(listener)
    yield path
    listener.close()


def serve_on(listener: socket.socket) -> None:
    """Answer every connection ``listener`` accepts with :func:`_reply`, in threads."""

    def serve(conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as lines:
            for line in lines:
                for out in _reply(json.loads(line)):
                    conn.sendall(out)

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def test_sync_client(server: str) -> None:
    with Client(server, timeout=5) as client:
        granted = client.claim(DID, UIDSpace.unique(b"\x01"), 60)
        assert (granted.granted, granted.result, granted.claim, granted.expires) == (
            True,
            "granted",
            "c1",
            99.0,
        )
        denied = client.claim(DID, UIDSpace.unique(b"\x02"))
        assert (denied.granted, denied.reason, denied.claim) == (False, "denied", None)
        assert client.list_claims() == [{"claim": "c1"}]
        assert client.status() == {"device_id": "00"}
        with pytest.raises(APIError) as caught:
            client.release("c2")
        assert (caught.value.code, caught.value.field) == (ErrorCode.PERMISSION_DENIED, "claim")
        events = client.watch()
        assert [next(events).name, next(events).fields] == ["interface-up", {"claim": "c1"}]
        events.close()


def test_unreachable(tmp_path: Path) -> None:
    with pytest.raises(APIError) as caught:
        Client(str(tmp_path / "nothing.sock"), wait=0).status()
    assert caught.value.code is ErrorCode.UNREACHABLE
    assert "nothing.sock" in str(caught.value)


def test_a_bad_domain_is_refused_before_sending(server: str) -> None:
    with pytest.raises(ValueError):
        Client(server).claim("not a did", UIDSpace.unique(b"\x01"))


def test_async_client(server: str) -> None:
    async def main() -> None:
        async with AsyncClient(server, timeout=5) as client:
            result = await client.claim(DID, UIDSpace.unique(b"\x01"), renew=True)
            assert result.granted and result.claim == "c1"
            assert await client.list_claims() == [{"claim": "c1"}]
            with pytest.raises(APIError):
                await client.release("c2")
            events = client.watch()
            assert (await events.__anext__()).name == "interface-up"
            await events.aclose()

    asyncio.run(main())


def test_async_unreachable(tmp_path: Path) -> None:
    async def main() -> None:
        with pytest.raises(APIError) as caught:
            await AsyncClient(str(tmp_path / "none.sock"), wait=0).status()
        assert caught.value.code is ErrorCode.UNREACHABLE

    asyncio.run(main())
