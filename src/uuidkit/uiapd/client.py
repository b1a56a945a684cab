"""Clients of the UIAP daemon's API, for applications: :class:`Client` and :class:`AsyncClient`.

::

    from uuidkit.uiap import UIDSpace
    from uuidkit.uiapd.client import Client

    with Client() as client:         # $UUIDKIT_UIAP_SOCKET, else /run/uuidkit/uiapd.sock
        result = client.claim("0fff:0000:0006:0000", UIDSpace.unique(node), lifetime=3600)
        if result.granted:
            ...                      # result.claim is the claim ID, result.expires Unix time
        for event in client.watch():  # a second connection, an endless stream of events
            ...

Every method raises :class:`~uuidkit.uiapd.api.APIError` (a ``ValueError``) with the
daemon's error code, or with ``unreachable`` when the socket cannot be reached or the
daemon closed the connection; a denied claim is not an error (``result.granted`` is false).

A client without a socket path uses the environment variable ``UUIDKIT_UIAP_SOCKET``, else
the daemon's default ``/run/uuidkit/uiapd.sock`` (:func:`socket_path`). A daemon that is
starting has no socket yet, or one that does not accept yet: a client retries its connect for
up to ``wait`` seconds (:data:`DEFAULT_WAIT_S`) before it says ``unreachable``.

The clients live beside the schema they speak (:mod:`uuidkit.uiapd.api`), apart from the
protocol package :mod:`uuidkit.uiap` (which has no sockets) and from the daemon's own code
(:mod:`uuidkit.daemon`), so an application that talks to the daemon loads neither the
daemon nor anything it alone needs (see the layer table in docs/architecture.md).

References: UIAP §2.1.1 (the service an application invokes); docs/uiap-api.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import json
import os
import socket
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import (
    DEFAULT_LIFETIME_S,
    DEFAULT_SOCKET,
    PROTOCOL_VERSION,
    SOCKET_ENV,
    APIError,
    ClaimParams,
    ErrorCode,
    decode_line,
)

__all__ = ["DEFAULT_WAIT_S", "AsyncClient", "ClaimResult", "Client", "Event", "socket_path"]

#: Longest reply line a client accepts, in octets (a ``list`` of many claims is long).
MAX_REPLY_OCTETS: Final = 16 * 1024 * 1024
#: Seconds a client waits for a reply by default: a new claim takes 2.5 s with the
#: draft's timers (UIAP §2.4.1, §10).
DEFAULT_TIMEOUT_S: Final = 60.0
#: Seconds a client keeps trying to connect to a daemon that is starting: the daemon's socket
#: appears within about a second of its start (it binds after reading its state and opening
#: its network sockets), so five seconds cover a start on a busy host.
DEFAULT_WAIT_S: Final = 5.0
#: Seconds between connect attempts while waiting.
_RETRY_S: Final = 0.05
#: Connect errors that mean "not there yet": no socket file (the daemon renames it into place
#: once it listens) or a socket nobody accepts on (a dead daemon's file, before the new one
#: replaces it). Anything else (a permission error, say) will not change by waiting.
_STARTING: Final = frozenset({errno.ENOENT, errno.ECONNREFUSED})


def socket_path(path: str | None = None) -> str:
    """The API socket a client uses: ``path`` if given, else the environment variable
    ``UUIDKIT_UIAP_SOCKET`` if set and not empty, else the daemon's default
    ``/run/uuidkit/uiapd.sock``.

    References: UIAP §2.1.1 (the service an application invokes); docs/uiap-api.md.
    """
    if path:
        return path
    return os.environ.get(SOCKET_ENV) or DEFAULT_SOCKET


#: The pause between connect attempts (a module attribute, so a test can replace it and run
#: a wait without real time passing). The wait is counted in pauses, not read from a clock
#: (the clients read none): ``wait`` seconds are ``wait / _RETRY_S`` pauses, and a connect to
#: a Unix socket that is missing or refuses fails at once.
_pause: Callable[[float], None] = time.sleep


def _pauses(wait: float) -> list[float]:
    """The pauses between connect attempts: :data:`_RETRY_S` each, adding up to ``wait``."""
    whole, rest = divmod(max(0.0, wait), _RETRY_S)
    return [_RETRY_S] * int(whole) + ([rest] if rest > 1e-9 else [])


def _connect_waiting(connect: Callable[[], None], wait: float) -> None:
    """``connect()``, retried for up to ``wait`` seconds while it fails with an error of a
    daemon that is starting; the last error is raised."""
    for pause in [*_pauses(wait), None]:
        try:
            connect()
            return
        except OSError as error:
            if error.errno not in _STARTING or pause is None:
                raise
        _pause(pause)


async def _connect_waiting_async(connect: Callable[[], Awaitable[None]], wait: float) -> None:
    """The asyncio twin of :func:`_connect_waiting` (it pauses with ``asyncio.sleep``)."""
    for pause in [*_pauses(wait), None]:
        try:
            await connect()
            return
        except OSError as error:
            if error.errno not in _STARTING or pause is None:
                raise
        await asyncio.sleep(pause)


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """The outcome of a claim: ``granted`` or not, the claim ID, expiry (Unix seconds,
    ``None`` for an infinite lifetime or a denial), latency (seconds, measured by the
    daemon) and, for a denial, the ``reason`` (``denied``, ``simultaneous-claim``, ...).

    References: UIAP §2.4.1, §4.5.2; docs/uiap-api.md (claim).
    """

    granted: bool
    claim: str | None
    expires: float | None
    latency: float
    reason: str | None
    raw: Mapping[str, Any] = field(repr=False, compare=False)

    @property
    def result(self) -> str:
        """``"granted"`` or ``"denied"``."""
        return "granted" if self.granted else "denied"

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> ClaimResult:
        try:
            return cls(
                body["result"] == "granted",
                body.get("claim"),
                body.get("expires"),
                float(body.get("latency", 0.0)),
                body.get("reason"),
                body,
            )
        except (KeyError, TypeError, ValueError):
            raise APIError(ErrorCode.BAD_REPLY, f"not a claim result: {body!r:.200}") from None


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a ``watch`` stream: ``name`` (``granted``, ``denied``, ``expired``,
    ``collision``, ``released``, ``interface-up``, ``interface-down``, ...) and its fields.

    References: docs/uiap-api.md (watch); UIAP §2.1.2, §4.4.
    """

    name: str
    fields: Mapping[str, Any]


def _claim_params(
    domain: DomainID | str,
    space: UIDSpace,
    lifetime: int,
    reclaim: bool,
    renew: bool,
    release_on_disconnect: bool,
) -> dict[str, Any]:
    did = domain if isinstance(domain, DomainID) else DomainID.parse(domain)
    return ClaimParams(did, space, lifetime, reclaim, renew, release_on_disconnect).to_json()


def _request_line(request_id: int, method: str, params: Mapping[str, Any]) -> bytes:
    body = {"v": PROTOCOL_VERSION, "id": request_id, "method": method, "params": params}
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


def _result(body: Mapping[str, Any], request_id: int) -> Any:
    """The ``result`` of a reply, or the daemon's error raised as :class:`APIError`."""
    if body.get("v") != PROTOCOL_VERSION:
        raise APIError(ErrorCode.BAD_REPLY, f"daemon speaks protocol {body.get('v')!r}")
    if body.get("ok") is True and body.get("id") == request_id:
        return body.get("result")
    error = body.get("error")
    if body.get("ok") is False and isinstance(error, dict):
        try:
            code = ErrorCode(error.get("code"))
        except ValueError:
            code = ErrorCode.BAD_REPLY
        raise APIError(code, str(error.get("message", "")), error.get("field"))
    raise APIError(ErrorCode.BAD_REPLY, f"unexpected reply: {body!r:.200}")


def _closed_idle(body: Mapping[str, Any]) -> bool:
    """The daemon's notice that it closed this connection for being idle (not an answer:
    it carries no request ``id``, and nothing sent after it was read)."""
    error = body.get("error")
    return (
        body.get("ok") is False
        and body.get("id") is None
        and isinstance(error, dict)
        and error.get("code") == ErrorCode.IDLE_TIMEOUT.value
    )


def _unreachable(path: str, error: OSError) -> APIError:
    reason = error.strerror or str(error)
    return APIError(ErrorCode.UNREACHABLE, f"cannot reach the UIAP daemon at {path}: {reason}")


def _event(body: Mapping[str, Any]) -> Event:
    fields = {key: value for key, value in body.items() if key not in ("v", "event")}
    return Event(str(body["event"]), fields)


def _resolve(path: str | None) -> str:
    return socket_path(path)


class Client:
    """A synchronous client on one connection (opened on first use; not thread-safe).

    Requests on one connection are answered in order; use one client per thread, and
    :meth:`watch` opens a connection of its own.

    References: UIAP §2.1.1; docs/uiap-api.md (Python clients).
    """

    def __init__(
        self,
        socket_path: str | None = None,
        *,
        timeout: float | None = DEFAULT_TIMEOUT_S,
        wait: float = DEFAULT_WAIT_S,
    ) -> None:
        self.socket_path = _resolve(socket_path)
        self.timeout = timeout
        self.wait = wait
        self._sock: socket.socket | None = None
        self._buffer = bytearray()
        self._ids = itertools.count(1)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (claims made with ``release_on_disconnect`` end)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self._buffer = bytearray()

    def _connect(self) -> socket.socket:
        if self._sock is None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                _connect_waiting(lambda: sock.connect(self.socket_path), self.wait)
            except OSError as error:
                sock.close()
                raise _unreachable(self.socket_path, error) from None
            self._sock = sock
        return self._sock

    def _read_line(self) -> dict[str, Any]:
        sock = self._connect()
        # Only the octets a chunk added are searched, and the buffer grows in place: a long
        # reply (``list`` of thousands of claims) costs time linear in its length.
        searched = 0
        while (end := self._buffer.find(b"\n", searched)) < 0:
            searched = len(self._buffer)
            try:
                chunk = sock.recv(65536)
            except OSError as error:
                self.close()
                raise APIError(ErrorCode.UNREACHABLE, f"UIAP daemon: {error}") from None
            if not chunk:
                self.close()
                raise APIError(ErrorCode.UNREACHABLE, "the UIAP daemon closed the connection")
            self._buffer += chunk
            if len(self._buffer) > MAX_REPLY_OCTETS:
                self.close()
                raise APIError(ErrorCode.BAD_REPLY, "reply longer than the client accepts")
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        try:
            return decode_line(line, MAX_REPLY_OCTETS)
        except APIError as error:
            raise APIError(ErrorCode.BAD_REPLY, f"reply: {error}") from None

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Send one request and return its ``result`` (events read meanwhile are skipped).

        A connection the daemon closed for being idle is replaced once, and the request sent
        again: the daemon closes without reading anything more, so it never saw the request.
        """
        request_id = next(self._ids)
        line = _request_line(request_id, method, params or {})
        for retry in (True, False):
            reused = self._sock is not None
            sock = self._connect()
            try:
                sock.sendall(line)
            except OSError as error:
                self.close()
                if reused and retry:
                    continue
                raise APIError(ErrorCode.UNREACHABLE, f"UIAP daemon: {error}") from None
            body = self._read_line()
            while "event" in body:
                body = self._read_line()
            if not (reused and retry and _closed_idle(body)):
                break
            self.close()
        return _result(body, request_id)

    def claim(
        self,
        domain: DomainID | str,
        space: UIDSpace,
        lifetime: int = DEFAULT_LIFETIME_S,
        *,
        reclaim: bool = False,
        renew: bool = False,
        release_on_disconnect: bool = False,
    ) -> ClaimResult:
        """Claim ``space`` in ``domain`` for ``lifetime`` seconds; waits for the outcome.

        ``reclaim`` sends a reclaim (R flag, UIAP §4.4) instead of a new claim; ``renew``
        asks the daemon to reclaim before every lifetime ends until the claim is released;
        ``release_on_disconnect`` ends the claim when this connection closes.
        """
        params = _claim_params(domain, space, lifetime, reclaim, renew, release_on_disconnect)
        return ClaimResult.from_json(self.call("claim", params))

    def release(self, claim: str) -> None:
        """Release claim ``claim`` (its owner or root only)."""
        self.call("release", {"claim": claim})

    def list_claims(self) -> list[dict[str, Any]]:
        """Every claim the daemon holds or is making (the ``list`` method)."""
        return list(self.call("list")["claims"])

    def status(self) -> dict[str, Any]:
        """Device ID, interfaces, counters and drops by reason (the ``status`` method)."""
        return dict(self.call("status"))

    def metrics(self) -> str:
        """The daemon's metrics in the Prometheus text format (the ``metrics`` method)."""
        return str(self.call("metrics")["text"])

    def watch(self) -> Generator[Event, None, None]:
        """Events, for ever, on a connection of their own (closed when the iterator is)."""
        watcher = Client(self.socket_path, timeout=None, wait=self.wait)
        try:
            watcher.call("watch")
            while True:
                body = watcher._read_line()
                if "event" in body:
                    yield _event(body)
        finally:
            watcher.close()


class AsyncClient:
    """The asyncio twin of :class:`Client` (one connection; requests answered in order).

    References: UIAP §2.1.1; docs/uiap-api.md (Python clients).
    """

    def __init__(
        self,
        socket_path: str | None = None,
        *,
        timeout: float | None = DEFAULT_TIMEOUT_S,
        wait: float = DEFAULT_WAIT_S,
    ) -> None:
        self.socket_path = _resolve(socket_path)
        self.timeout = timeout
        self.wait = wait
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._streams is not None:
            writer = self._streams[1]
            self._streams = None
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._streams is None:
            opened: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

            async def connect() -> None:
                opened.append(
                    await asyncio.open_unix_connection(self.socket_path, limit=MAX_REPLY_OCTETS)
                )

            try:
                await _connect_waiting_async(connect, self.wait)
            except OSError as error:
                raise _unreachable(self.socket_path, error) from None
            self._streams = opened[0]
        return self._streams

    async def _read_line(self) -> dict[str, Any]:
        reader, _ = await self._connect()
        try:
            line = await reader.readuntil(b"\n")
        except (asyncio.IncompleteReadError, ConnectionError) as error:
            await self.close()
            raise APIError(ErrorCode.UNREACHABLE, f"UIAP daemon closed: {error}") from None
        except asyncio.LimitOverrunError:
            await self.close()
            raise APIError(ErrorCode.BAD_REPLY, "reply longer than the client accepts") from None
        try:
            return decode_line(line, MAX_REPLY_OCTETS)
        except APIError as error:
            raise APIError(ErrorCode.BAD_REPLY, f"reply: {error}") from None

    async def call(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Send one request and return its ``result`` (see :meth:`Client.call`)."""
        async with self._lock:
            return await asyncio.wait_for(self._call(method, params or {}), self.timeout)

    async def _call(self, method: str, params: Mapping[str, Any]) -> Any:
        request_id = next(self._ids)
        line = _request_line(request_id, method, params)
        for retry in (True, False):  # an idle-closed connection is replaced once
            reused = self._streams is not None
            _, writer = await self._connect()
            try:
                writer.write(line)
                await writer.drain()
            except ConnectionError as error:
                await self.close()
                if reused and retry:
                    continue
                raise APIError(ErrorCode.UNREACHABLE, f"UIAP daemon: {error}") from None
            body = await self._read_line()
            while "event" in body:
                body = await self._read_line()
            if not (reused and retry and _closed_idle(body)):
                break
            await self.close()
        return _result(body, request_id)

    async def claim(
        self,
        domain: DomainID | str,
        space: UIDSpace,
        lifetime: int = DEFAULT_LIFETIME_S,
        *,
        reclaim: bool = False,
        renew: bool = False,
        release_on_disconnect: bool = False,
    ) -> ClaimResult:
        """See :meth:`Client.claim`."""
        params = _claim_params(domain, space, lifetime, reclaim, renew, release_on_disconnect)
        return ClaimResult.from_json(await self.call("claim", params))

    async def release(self, claim: str) -> None:
        await self.call("release", {"claim": claim})

    async def list_claims(self) -> list[dict[str, Any]]:
        return list((await self.call("list"))["claims"])

    async def status(self) -> dict[str, Any]:
        return dict(await self.call("status"))

    async def metrics(self) -> str:
        return str((await self.call("metrics"))["text"])

    async def watch(self) -> AsyncGenerator[Event, None]:
        """Events, for ever, on a connection of their own."""
        watcher = AsyncClient(self.socket_path, timeout=None, wait=self.wait)
        try:
            await watcher.call("watch")
            while True:
                body = await watcher._read_line()
                if "event" in body:
                    yield _event(body)
        finally:
            await watcher.close()
