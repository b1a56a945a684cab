"""Where the daemon's metrics go besides the API: a local HTTP endpoint and a textfile.

Both are off unless the configuration names them (docs/uiap-daemon.md, "Operating a site"):

* ``metrics_http = "127.0.0.1:9464"``: a minimal HTTP/1.0 server answering ``GET /metrics``
  with the text format (:data:`~uuidkit.daemon.metrics.CONTENT_TYPE`); anything else gets 404
  or 405. A request must arrive whole within :data:`REQUEST_TIMEOUT_S` and fit in
  :data:`MAX_REQUEST_OCTETS`; at most :data:`MAX_HTTP_CLIENTS` are served at once, the rest
  are closed unanswered, so a scraper that misbehaves cannot tie up the daemon.
* ``metrics_textfile = "/run/uuidkit/uiapd.prom"``: the same text written every
  ``metrics_interval`` seconds for node-exporter's textfile collector, replaced atomically
  through :mod:`uuidkit._safefile` (a collector never reads half a file).

References: UIAP §2.1.1 (the service); the Prometheus text exposition format; RFC 9110 §9.3.1
(GET), §15.5.5 (404), §15.5.6 (405).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Final

from uuidkit._safefile import SafeFile
from uuidkit.daemon.config import DaemonConfig, split_host_port
from uuidkit.daemon.metrics import CONTENT_TYPE
from uuidkit.errors import StateFileError

__all__ = ["MAX_HTTP_CLIENTS", "MAX_REQUEST_OCTETS", "REQUEST_TIMEOUT_S", "MetricsExporter"]

_log = logging.getLogger("uuidkit.daemon")

#: Longest request head (request line and headers) read, in octets.
MAX_REQUEST_OCTETS: Final = 8192
#: Seconds a scraper has to send its whole request head.
REQUEST_TIMEOUT_S: Final = 5.0
#: Scrapes served at once.
MAX_HTTP_CLIENTS: Final = 16


class MetricsExporter:
    """Serves ``render()`` over HTTP and writes it to a textfile, as ``config`` chooses.

    References: the Prometheus text exposition format; RFC 9110 §9.3.1.
    """

    def __init__(self, render: Callable[[], str], config: DaemonConfig) -> None:
        self.render = render
        self.config = config
        self.address: tuple[str, int] | None = None
        self._server: asyncio.Server | None = None
        self._writer: asyncio.Task[None] | None = None
        self._clients = 0
        self._write_failing = False

    async def start(self) -> None:
        """Listen and start writing; an address that cannot be bound raises ``OSError``."""
        if self.config.metrics_http:
            host, port = split_host_port(self.config.metrics_http)
            self._server = await asyncio.start_server(self._serve, host, port)
            self.address = self._server.sockets[0].getsockname()[:2]
        if self.config.metrics_textfile:
            self.write_textfile()
            self._writer = asyncio.create_task(self._write_periodically())

    async def stop(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def write_textfile(self) -> None:
        """Replace the textfile with the current metrics; a failure is logged once."""
        try:
            SafeFile(self.config.metrics_textfile, kind="metrics file").replace(
                self.render().encode()
            )
        except (OSError, StateFileError) as error:
            if not self._write_failing:
                _log.error("cannot write %s: %s", self.config.metrics_textfile, error)
            self._write_failing = True
            return
        if self._write_failing:
            _log.warning("writing %s again", self.config.metrics_textfile)
        self._write_failing = False

    async def _write_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.config.metrics_interval)
            self.write_textfile()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._clients >= MAX_HTTP_CLIENTS:
            writer.close()
            return
        self._clients += 1
        try:
            head = await asyncio.wait_for(_read_head(reader), REQUEST_TIMEOUT_S)
            writer.write(self._response(head))
            await asyncio.wait_for(writer.drain(), REQUEST_TIMEOUT_S)
        except (TimeoutError, ConnectionError, ValueError):
            pass
        finally:
            self._clients -= 1
            writer.close()

    def _response(self, head: bytes) -> bytes:
        parts = head.split(b"\r\n", 1)[0].split(b" ")
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/"):
            return _http(400, "Bad Request", b"bad request\n")
        method, target = parts[0], parts[1].split(b"?", 1)[0]
        if target != b"/metrics":
            return _http(404, "Not Found", b"metrics are at /metrics\n")
        if method not in (b"GET", b"HEAD"):
            return _http(405, "Method Not Allowed", b"GET only\n", b"Allow: GET, HEAD\r\n")
        body = self.render().encode()
        return _http(200, "OK", b"" if method == b"HEAD" else body, length=len(body))


async def _read_head(reader: asyncio.StreamReader) -> bytes:
    """The request line and headers, up to the blank line; ValueError when too long."""
    head = b""
    while b"\r\n\r\n" not in head and b"\n\n" not in head:
        chunk = await reader.read(1024)
        if not chunk:
            break
        head += chunk
        if len(head) > MAX_REQUEST_OCTETS:
            raise ValueError("request head too long")
    return head


def _http(
    status: int, reason: str, body: bytes, extra: bytes = b"", length: int | None = None
) -> bytes:
    content_type = CONTENT_TYPE if status == 200 else "text/plain; charset=utf-8"
    size = len(body) if length is None else length
    return (
        f"HTTP/1.0 {status} {reason}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {size}\r\nConnection: close\r\n".encode()
        + extra
        + b"\r\n"
        + body
    )
