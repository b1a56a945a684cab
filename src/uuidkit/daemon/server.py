"""The API server: a Unix stream socket speaking the JSON-lines protocol of uuidkit.uiapd.api.

The socket file is created with mode 0660 and never exists with wider permissions: it is
bound inside a fresh private directory (mode 0700, random name, next to the target) under
a umask of 0117, listens, then is renamed into place. A file already at the path is
replaced only if it is a socket that is provably dead: a connect (bounded by a timeout) is
refused (ECONNREFUSED) or finds it gone (ENOENT). A live socket, one that cannot be probed
(EACCES, a full queue, a timeout) and anything that is not a socket are kept, and the start
fails naming the path. The probe and the rename run under an ``flock`` of the directory, so
two daemons starting on one path take turns instead of both replacing the same stale file.
On stop the socket file is removed, under the same lock, only if it is still the one this
process created (same device and inode).

Every client is isolated: a line longer than :data:`~uuidkit.uiapd.api.MAX_LINE_OCTETS`,
half a line followed by silence for ``request_timeout`` seconds, no request at all for
``idle_timeout`` seconds (except on a connection that watches or holds
``release_on_disconnect`` claims), more than ``max_clients``
connections, or a watcher that does not read its events, each get a clear error and lose
their own connection only. A client that does not read its replies is dropped once a reply
has waited ``send_timeout`` seconds to be sent: while a reply waits, the connection reads no
request, so no other timeout would ever end it, and one user could pin its slots. The
peer's uid comes from ``SO_PEERCRED``.

References: UIAP §2.1.1 (the service); docs/uiap-api.md (the protocol).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import itertools
import logging
import os
import socket
import stat
import struct
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from uuidkit.daemon.config import DaemonConfig
from uuidkit.daemon.metrics import ClaimMetrics, render_metrics
from uuidkit.daemon.service import ClaimService
from uuidkit.uiapd.api import (
    MAX_LINE_OCTETS,
    PROTOCOL_VERSION,
    APIError,
    ErrorCode,
    Request,
    encode_error,
    encode_event,
    encode_reply,
    parse_claim_params,
    parse_request,
)

__all__ = ["APIServer", "SocketError", "bind_api_socket"]

_log = logging.getLogger("uuidkit.daemon")
_PEERCRED = struct.Struct("3i")
#: Connections the kernel queues before the daemon accepts them (the kernel caps it at
#: net.core.somaxconn).
_BACKLOG = 4096
#: Seconds a probe of an existing socket file may take before it counts as "not provably
#: dead" (a live daemon whose queue is full does not answer at once).
_PROBE_TIMEOUT_S = 1.0
#: Seconds to wait for the socket directory's lock (another daemon starting there).
_LOCK_WAIT_S = 10.0


class SocketError(OSError):
    """The API socket cannot be created at the configured path.

    References: UIAP §2.1.1; docs/uiap-api.md (the API socket).
    """


def bind_api_socket(
    path: str, *, lock_wait: float = _LOCK_WAIT_S
) -> tuple[socket.socket, tuple[int, int]]:
    """A listening socket at ``path`` (mode 0660) and its (device, inode).

    Under the directory's lock (see :func:`_directory_lock`): refuse a live socket or
    anything that is not a provably dead socket, bind in a private directory, listen, and
    only then rename into place, so no probe ever finds a starting daemon's socket refusing.

    References: UIAP §2.1.1; docs/uiap-api.md (the API socket).
    """
    path = os.path.abspath(path)
    directory = os.path.dirname(path)
    with _directory_lock(directory, lock_wait):
        _refuse_live_or_foreign(path)
        private = tempfile.mkdtemp(prefix=".uiapd-", dir=directory)
        temporary = os.path.join(private, "api.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            previous = os.umask(0o117)
            try:
                sock.bind(temporary)
            finally:
                os.umask(previous)
            os.chmod(temporary, 0o660)
            sock.listen(_BACKLOG)
            os.rename(temporary, path)
            info = os.lstat(path)
        except OSError:
            sock.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        finally:
            os.rmdir(private)
    return sock, (info.st_dev, info.st_ino)


@contextlib.contextmanager
def _directory_lock(directory: str, wait: float) -> Iterator[None]:
    """An ``flock`` on the socket's directory, for the probe and the rename (and the removal
    at stop): two daemons starting on one path take turns, so they cannot both find the
    same stale file and replace each other's socket. Waits at most ``wait`` seconds."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise SocketError(
                        f"{directory} stayed locked for {wait} s (another daemon starting or "
                        "stopping there?); try again"
                    ) from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # releases the lock


def _refuse_live_or_foreign(path: str) -> None:
    """Return only if nothing is at ``path`` or it is a socket provably nobody serves."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise SocketError(f"{path} exists and is not a socket; refusing to replace it")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    probe.settimeout(_PROBE_TIMEOUT_S)
    try:
        probe.connect(path)
    except (ConnectionRefusedError, FileNotFoundError):
        return  # stale (nobody accepts on it) or gone: the rename replaces it
    except OSError as error:
        # EACCES, a full queue (EAGAIN), a timeout: someone may well be serving it.
        reason = error.strerror or type(error).__name__
        raise SocketError(
            f"{path} exists and cannot be proven stale ({reason}); refusing to replace it"
        ) from None
    finally:
        probe.close()
    raise SocketError(f"another process is serving {path}")


class _Client:
    def __init__(self, number: int, uid: int, writer: asyncio.StreamWriter) -> None:
        self.number = number
        self.uid = uid
        self.writer = writer
        self.watching = False
        #: A request is being answered (its reply not yet written).
        self.busy = False


class APIServer:
    """Serves :class:`ClaimService` on the API socket (see the module docstring).

    References: UIAP §2.1.1 (the service to applications); docs/uiap-api.md.
    """

    def __init__(self, service: ClaimService, config: DaemonConfig) -> None:
        self.service = service
        self.config = config
        self.clients: set[_Client] = set()
        self.errors: Counter[str] = Counter()
        self.requests = 0
        self.connections = 0
        self._numbers = itertools.count(1)
        self._server: asyncio.AbstractServer | None = None
        self._identity: tuple[int, int] | None = None
        self._path = os.path.abspath(config.socket)
        self._tasks: set[asyncio.Task[None]] = set()
        #: Outcomes and latencies of the claims answered here (the ``metrics`` method).
        self.claim_metrics = ClaimMetrics()
        #: When :meth:`start` began serving, on the monotonic clock (for ``uptime``).
        self._started = 0.0

    async def start(self) -> None:
        sock, self._identity = bind_api_socket(self._path)
        self._started = time.monotonic()
        self._server = await asyncio.start_unix_server(self._accept, sock=sock, backlog=_BACKLOG)

    def stop_accepting(self) -> None:
        """Accept no new connection; the clients connected go on being served.

        References: UIAP §2.1.1 (the service to applications).
        """
        if self._server is not None:
            self._server.close()

    async def stop(self) -> None:
        """Stop accepting, close every client, remove the socket file we created."""
        self.stop_accepting()
        # Let the requests in progress write their replies ("stopping" for abandoned
        # claims), for at most two seconds.
        for _ in range(200):
            if not any(client.busy for client in self.clients):
                break
            await asyncio.sleep(0.01)
        for client in list(self.clients):
            client.writer.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._remove_socket_file()

    def _remove_socket_file(self) -> None:
        """Unlink the socket file if it is still ours, under the directory lock (a daemon
        starting meanwhile may replace it between our check and our unlink otherwise)."""
        if self._identity is None:
            return
        identity, self._identity = self._identity, None
        try:
            with _directory_lock(os.path.dirname(self._path), 2.0):
                info = os.lstat(self._path)
                if (info.st_dev, info.st_ino) == identity:
                    os.unlink(self._path)
        except OSError as error:  # SocketError included: a stale file, replaced next start
            _log.warning("socket file %s left in place: %s", self._path, error)

    def stats(self) -> dict[str, Any]:
        return {
            "clients": len(self.clients),
            "connections": self.connections,
            "requests": self.requests,
            "errors": dict(self.errors),
        }

    # ------------------------------------------------------------------ one connection

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            uid = _peer_uid(writer)
            refusal = self._refusal(uid)
            if refusal is not None:
                await self._fail(writer, None, APIError(ErrorCode.TOO_MANY_CLIENTS, refusal))
                return
            client = _Client(next(self._numbers), uid, writer)
            self.clients.add(client)
            try:
                await self._serve(client, reader)
            finally:
                self.clients.discard(client)
                self.service.unsubscribe(self._watcher(client))
                self.service.session_closed(client)
        except (ConnectionError, asyncio.CancelledError):
            pass
        except Exception:
            _log.exception("API client failed")
        finally:
            writer.close()
            self._tasks.discard(task)

    def _refusal(self, uid: int) -> str | None:
        """Why a new connection of ``uid`` is refused, or None. One user (other than root)
        may hold at most ``max_clients_per_uid`` connections, so one user cannot take every
        slot from the others."""
        if len(self.clients) >= self.config.max_clients:
            return f"the daemon serves {self.config.max_clients} clients already; try later"
        if uid != 0:
            mine = sum(1 for client in self.clients if client.uid == uid)
            if mine >= self.config.max_clients_per_uid:
                return f"uid {uid} has {mine} connections already (the most per user)"
        return None

    async def _serve(self, client: _Client, reader: asyncio.StreamReader) -> None:
        buffer = bytearray()
        while True:
            newline = buffer.find(b"\n")
            if newline < 0:
                if len(buffer) >= MAX_LINE_OCTETS:
                    error = APIError(
                        ErrorCode.LINE_TOO_LONG, f"request longer than {MAX_LINE_OCTETS} octets"
                    )
                    await self._fail(client.writer, None, error)
                    return
                timeout = self._read_timeout(client, buffer)
                try:
                    chunk = await asyncio.wait_for(reader.read(65536), timeout)
                except TimeoutError:
                    await self._fail(client.writer, None, self._timeout_error(buffer))
                    return
                if not chunk:
                    return
                buffer += chunk
                continue
            line = bytes(buffer[:newline])
            del buffer[: newline + 1]
            if len(line) >= MAX_LINE_OCTETS:
                error = APIError(
                    ErrorCode.LINE_TOO_LONG, f"request longer than {MAX_LINE_OCTETS} octets"
                )
                await self._fail(client.writer, None, error)
                return
            if line.strip() and not await self._answer(client, line):
                return

    def _read_timeout(self, client: _Client, buffer: bytearray) -> float | None:
        """How long the next read may wait: ``request_timeout`` inside a line, else
        ``idle_timeout``, so a client that connects and says nothing cannot keep its slot
        for ever. None (no limit) for a watcher, whose connection exists to wait, and for
        a connection holding ``release_on_disconnect`` claims, whose life holds them."""
        if buffer:
            return self.config.request_timeout
        if client.watching or self.service.holds_session_claims(client):
            return None
        return self.config.idle_timeout

    def _timeout_error(self, buffer: bytearray) -> APIError:
        if buffer:
            return APIError(
                ErrorCode.TIMEOUT,
                f"half a request and no newline for {self.config.request_timeout} s",
            )
        return APIError(
            ErrorCode.IDLE_TIMEOUT,
            f"no request for {self.config.idle_timeout} s (idle_timeout); connection closed",
        )

    async def _answer(self, client: _Client, line: bytes) -> bool:
        """Handle one request line; false when the connection must close."""
        self.requests += 1
        client.busy = True
        try:
            return await self._answer_one(client, line)
        finally:
            client.busy = False

    async def _answer_one(self, client: _Client, line: bytes) -> bool:
        request_id: int | str | None = None
        try:
            request = parse_request(line)
            request_id = request.id
            result = await self._dispatch(client, request)
            reply = encode_reply(request_id, result)
        except APIError as error:
            if error.request_id is not None:
                request_id = error.request_id
            self.errors[error.code.value] += 1
            reply = encode_error(request_id, error)
            if error.code is ErrorCode.STOPPING:
                await self._send(client, reply)
                return False
        except Exception as error:
            _log.exception("API request failed: %r", line[:200])
            self.errors[ErrorCode.INTERNAL.value] += 1
            reply = encode_error(
                request_id, APIError(ErrorCode.INTERNAL, f"internal error: {error}")
            )
        return await self._send(client, reply)

    async def _dispatch(self, client: _Client, request: Request) -> dict[str, Any]:
        method, params = request.method, request.params
        if method == "claim":
            result = await self.service.claim(parse_claim_params(params), client.uid, client)
            self.claim_metrics.observe(result)
            return result
        if method == "release":
            claim = params.get("claim")
            if not isinstance(claim, str):
                raise APIError(ErrorCode.BAD_PARAMS, "expected 'claim', a claim ID", "claim")
            return await self.service.release(claim, client.uid)
        _no_params(params)
        if method == "list":
            return {"claims": self.service.list_claims()}
        if method == "status":
            return self._status()
        if method == "metrics":
            return {"text": self.metrics_text()}
        client.watching = True
        self.service.subscribe(self._watcher(client))
        return {"watching": True}

    def metrics_text(self) -> str:
        """The ``metrics`` reply's text: the status and the claim outcomes, Prometheus format.

        References: docs/uiap-api.md (metrics); UIAP §2.4.
        """
        return render_metrics(self._status(), self.claim_metrics)

    def _status(self) -> dict[str, Any]:
        snapshot = self.service.status()
        return {
            "version": PROTOCOL_VERSION,
            "pid": os.getpid(),
            "uptime": round(time.monotonic() - self._started, 3) if self._started else 0.0,
            "device_id": f"{snapshot.device_id:016x}",
            "interfaces": snapshot.interfaces,
            "claims": snapshot.claims,
            "counters": snapshot.counters,
            "drops": snapshot.drops,
            "api": self.stats(),
            "events": snapshot.events,
            "state_write_errors": snapshot.state_write_errors,
            "state_write_pending": snapshot.state_write_pending,
            "state_write_last_error": snapshot.state_write_last_error,
            "restored": snapshot.restored,
            "auth": snapshot.auth,
            "device_id_conflicts": snapshot.device_id_conflicts,
            "tables": snapshot.tables,
            "verification": snapshot.verification,
            "conflicts": snapshot.conflicts,
            "state_saves": snapshot.state_saves,
            "site_split": snapshot.site_split,
        }

    def _watcher(self, client: _Client) -> Any:
        return _Watcher(client, self.config.max_client_backlog)

    async def _send(self, client: _Client, line: bytes) -> bool:
        """Write a reply; false (the client dropped) when it is not read in
        ``send_timeout`` seconds."""
        client.writer.write(line)
        try:
            await asyncio.wait_for(client.writer.drain(), self.config.send_timeout)
        except TimeoutError:
            self.errors["send-timeout"] += 1
            _log.warning(
                "API client %d has not read its replies for %g s (send_timeout); disconnecting it",
                client.number,
                self.config.send_timeout,
            )
            client.writer.transport.abort()
            return False
        return True

    async def _fail(
        self, writer: asyncio.StreamWriter, request_id: int | str | None, error: APIError
    ) -> None:
        self.errors[error.code.value] += 1
        with contextlib.suppress(ConnectionError):
            writer.write(encode_error(request_id, error))
            await asyncio.wait_for(writer.drain(), 1.0)


class _Watcher:
    """Writes events to a watching client; drops a client whose backlog is too long.

    Equal for the same client, so unsubscribe finds the callback subscribe stored.
    """

    def __init__(self, client: _Client, backlog: int) -> None:
        self.client = client
        self.backlog = backlog

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Watcher) and other.client is self.client

    def __hash__(self) -> int:
        return hash(self.client.number)

    def __call__(self, name: str, fields: dict[str, Any]) -> None:
        transport = self.client.writer.transport
        if transport.is_closing():
            return
        if transport.get_write_buffer_size() > self.backlog:
            _log.warning(
                "API client %d does not read its events; disconnecting it", self.client.number
            )
            transport.abort()
            return
        transport.write(encode_event(name, fields))


def _peer_uid(writer: asyncio.StreamWriter) -> int:
    sock = writer.get_extra_info("socket")
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    _pid, uid, _gid = _PEERCRED.unpack(raw)
    return int(uid)


def _no_params(params: Any) -> None:
    if params:
        name = sorted(params)[0]
        raise APIError(ErrorCode.BAD_PARAMS, f"unknown parameter {name!r}", name)
