"""A stand-in for the UIAP daemon's API (the documented JSON-lines schema) on a Unix socket,
for unit tests of UIAPNodeSource: the test decides which claims are denied and which events
are sent, and can make the daemon vanish."""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
import time
from pathlib import Path
from typing import Any

from uuidkit.uiapd.api import decode_line, encode_event, encode_reply


class FakeDaemon:
    """Grants every claim unless its UID (hex) is in ``deny``; records every request."""

    def __init__(self, directory: Path) -> None:
        self.path = str(directory / "uiapd.sock")
        self.deny: set[str] = set()
        #: UIDs whose reclaim (a re-verification) is denied with a collision.
        self.collide_on_reclaim: set[str] = set()
        self.requests: list[dict[str, Any]] = []
        #: While set and not yet set free, a new claim (not a reclaim) waits for it (at most
        #: ``hold_timeout_s``): a claim that "takes forever", to show who waits on one.
        self.hold_claims: threading.Event | None = None
        self.hold_timeout_s = 10.0
        self.claims: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._watchers: list[socket.socket] = []
        self._connections: list[socket.socket] = []
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self.path)
        self._server.listen(16)
        self._stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                self._connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buffer = b""
        while True:
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                self._disconnected(conn)
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                body = decode_line(line)
                with self._lock:
                    self.requests.append(body)
                reply = self._handle(conn, body)
                try:
                    conn.sendall(reply)
                except OSError:
                    return

    def _handle(self, conn: socket.socket, body: dict[str, Any]) -> bytes:
        method, params, request_id = body["method"], body.get("params", {}), body.get("id")
        if method == "watch":
            with self._lock:
                self._watchers.append(conn)
            return encode_reply(request_id, {"watching": True})
        if method == "release":
            with self._lock:
                self.claims.pop(params["claim"], None)
            return encode_reply(request_id, {"released": params["claim"]})
        assert method == "claim", method
        uid = params["uid"]
        if params.get("reclaim"):
            held = [cid for cid, c in self.claims.items() if c["uid"] == uid]
            if uid in self.collide_on_reclaim:
                for cid in held:
                    self.claims.pop(cid, None)
                    self.send_event("collision", {"claim": cid, "uid": uid, "how": "reclaim"})
                return encode_reply(request_id, self._denied(uid, "denied"))
            if held:
                return encode_reply(request_id, self._granted(held[0], uid, params))
        hold = self.hold_claims
        if hold is not None:
            hold.wait(self.hold_timeout_s)
        if uid in self.deny:
            return encode_reply(request_id, self._denied(uid, "denied"))
        claim_id = f"c{next(self._ids)}"
        with self._lock:
            self.claims[claim_id] = dict(params) | {"conn": conn}
        return encode_reply(request_id, self._granted(claim_id, uid, params))

    def _granted(self, claim_id: str, uid: str, params: dict[str, Any]) -> dict[str, Any]:
        expires = time.time() + params["lifetime"]
        return {
            "result": "granted",
            "claim": claim_id,
            "expires": expires,
            "latency": 0.0,
            "reason": None,
            "domain": params["domain"],
            "uid": uid,
        }

    @staticmethod
    def _denied(uid: str, reason: str) -> dict[str, Any]:
        return {
            "result": "denied",
            "claim": None,
            "expires": None,
            "latency": 0.0,
            "reason": reason,
            "uid": uid,
        }

    def _disconnected(self, conn: socket.socket) -> None:
        with self._lock:
            for claim_id, claim in list(self.claims.items()):
                if claim["conn"] is conn and claim.get("release_on_disconnect"):
                    del self.claims[claim_id]

    def send_event(self, name: str, fields: dict[str, Any]) -> None:
        """Send an event line to every watcher."""
        with self._lock:
            watchers = list(self._watchers)
        for conn in watchers:
            with contextlib.suppress(OSError):
                conn.sendall(encode_event(name, fields))

    def send_raw(self, data: bytes) -> None:
        """Send ``data`` as it is to every watcher (a daemon gone wrong)."""
        with self._lock:
            watchers = list(self._watchers)
        for conn in watchers:
            with contextlib.suppress(OSError):
                conn.sendall(data)

    def claim_methods(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["method"] == "claim"]

    def stop(self) -> None:
        """Vanish: the listening socket and every connection close."""
        self._stopped = True
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        self._server.close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()
        Path(self.path).unlink(missing_ok=True)
