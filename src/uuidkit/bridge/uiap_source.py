"""A :class:`~uuidkit.generators.NodeSource` whose node IDs are claimed through UIAP.

:class:`UIAPNodeSource` asks the UIAP daemon on this host (its Unix-socket API) to claim a
random 48-bit node ID, multicast bit set (RFC 9562 §6.10), in the UUID node-ID domain
``0fff:0000:0006:0000``, with ``renew`` (the daemon reclaims halfway through each lifetime)
and ``release_on_disconnect`` (the claim ends with this process). A thread watches the
daemon's event stream:

- ``collision`` for our claim (a renewal or re-verification was denied: another device on a
  merged site holds the node, UIAP §2.1.2), ``expired`` or ``released``: the node is lost;
- ``suspect`` for our claim: the daemon suspects another device holds the node too (a link
  came up, perhaps merging two sites, or it denied another holder's reclaim) and is
  re-verifying it (UIAP §4.4). The node is SUSPENDED at once, before the verdict: the
  generators drop it and :meth:`UIAPNodeSource.current` waits for the verdict;
- ``granted`` for our claim (``how`` = ``renewal`` or ``verify``): the lease is extended to
  the new expiry, and a suspended node is used again (RENEWED);
- the stream ending (the daemon stopped or crashed): the node is lost at once, because
  nobody defends it any more (UIAP §2.1.2: "If a UIAP device goes down, its claims will not
  be defended"). The watcher thread only reads the stream and never waits on the daemon
  otherwise, so the end is seen as soon as the kernel reports it.

A lost node is reported to the generators at once (a LOST event: they drop it before their
next value). What happens next is the policy (:class:`OnNodeLoss`): claim a new random node
on the next request (RECLAIM, default) or raise
:class:`~uuidkit.errors.NodeUnavailableError` until :meth:`UIAPNodeSource.restart`
(RAISE). Never a silent fallback to random nodes.

One claim per process: a forked child drops the parent's lease, connections and claim and
claims its own node on first use (the parent's claim ends with the parent). Threads share
the source; one lock guards its state, and events are emitted outside it.

References: RFC 9562 §6.4, §6.9, §6.10; UIAP §2.1.1, §2.1.2, §4.4, §4.5.2, §6.
"""

from __future__ import annotations

import contextlib
import enum
import json
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final

from uuidkit._system import system_clock_ns
from uuidkit.bridge.spares import SpareNodes, check_spares
from uuidkit.errors import InvalidField, NodeUnavailableError
from uuidkit.generators._policy import register_for_fork
from uuidkit.generators.node import random_node
from uuidkit.generators.nodebound import (
    NodeBoundV1Generator,
    NodeBoundV6Generator,
    NodeBoundV7Generator,
    NodeBoundV8Generator,
)
from uuidkit.generators.nodesource import (
    ListenerSet,
    NodeEvent,
    NodeEventKind,
    NodeLease,
    NodeListener,
    NodeSource,
)
from uuidkit.uiap.numberspaces import UUID_NODE_ID_DOMAIN, node_id_uid
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import PROTOCOL_VERSION, APIError, ErrorCode, decode_line
from uuidkit.uiapd.client import MAX_REPLY_OCTETS, ClaimResult, Client

__all__ = ["OnNodeLoss", "UIAPNodeSource", "node_bound_generator"]

_log = logging.getLogger(__name__)
NS_PER_S: Final = 1_000_000_000
#: Default claim lifetime, seconds: the daemon renews every half lifetime (30 s), which is
#: also the longest a merged site can hold one node twice (docs/distributed.md).
DEFAULT_LIFETIME_S: Final = 60
#: New random nodes tried per request before giving up (each denial is another claim).
DEFAULT_MAX_ATTEMPTS: Final = 8


class OnNodeLoss(enum.Enum):
    """What :meth:`UIAPNodeSource.current` does after the node was lost.

    References: UIAP §2.1.2 ("Recovery after collision is the responsibility of the
    application").
    """

    #: Claim a new random node ID (one claim, 2.5 s with the draft's timers) and go on.
    RECLAIM = "reclaim"
    #: Raise NodeUnavailableError (with the loss's reason) until restart() is called.
    RAISE = "raise"


class _EventStream:
    """The daemon's ``watch`` stream on a connection of its own, closable from any thread."""

    def __init__(self, socket_path: str, timeout_s: float) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.connect(socket_path)
            request = {"v": PROTOCOL_VERSION, "id": "watch", "method": "watch", "params": {}}
            self._sock.sendall(json.dumps(request).encode() + b"\n")
        except OSError as error:
            self._sock.close()
            raise NodeUnavailableError(
                f"UIAP daemon at {socket_path} unreachable: {error.strerror or error}",
                "daemon unreachable",
            ) from None
        self._buffer = bytearray()
        # Wait for the daemon's answer to "watch": only then is the subscription live, so
        # no event about a claim made afterwards can be missed.
        self._sock.settimeout(timeout_s)
        for _ in self._lines():
            break
        else:
            self._sock.close()
            raise NodeUnavailableError(
                f"UIAP daemon at {socket_path}: no answer to watch", "daemon unreachable"
            )
        self._sock.settimeout(None)

    def events(self) -> Iterator[dict[str, Any]]:
        """Event lines until the connection ends (then returns)."""
        for body in self._lines():
            if "event" in body:
                yield body

    def _lines(self) -> Iterator[dict[str, Any]]:
        """Every well-formed line until the connection ends (then returns); a line longer
        than a client accepts (:data:`~uuidkit.uiapd.client.MAX_REPLY_OCTETS`) ends it too,
        rather than growing the buffer without bound."""
        while True:
            while b"\n" not in self._buffer:
                if len(self._buffer) > MAX_REPLY_OCTETS:
                    _log.warning("UIAP daemon sent a line over %d octets", MAX_REPLY_OCTETS)
                    return
                try:
                    chunk = self._sock.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                self._buffer += chunk
            newline = self._buffer.index(b"\n")
            line = bytes(self._buffer[:newline])
            del self._buffer[: newline + 1]
            try:
                yield decode_line(line)
            except APIError:
                continue  # a malformed line is skipped, not trusted

    def shutdown(self) -> None:
        """End the stream (wakes the reading thread)."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()

    def close_fd(self) -> None:
        """Close this process's descriptor only (in a forked child: the parent keeps it)."""
        self._sock.close()


class UIAPNodeSource:
    """Node IDs claimed through the UIAP daemon at ``socket_path``, renewed and watched.

    - **Claim**: a random node (47 CSPRNG bits, multicast bit set, RFC 9562 §6.10) claimed
      for ``lifetime_s`` with renewal; a denial draws another node, up to ``max_attempts``.
    - **Renewal**: done by the daemon every half lifetime; the lease handed to generators
      ends ``expiry_margin_s`` (at most a quarter lifetime) before the claim's expiry, so a
      renewal that is never heard stops the node even if no event arrives.
    - **Loss**: collision, expiry, release or the daemon gone: LOST is emitted at once; then
      ``on_loss`` decides (RECLAIM a new node, or RAISE).
    - **Thread safety**: one lock; listeners are called outside it.
    - **Fork**: the child drops the parent's state and claims its own node (one claim per
      process; RFC 9562 §6.9).

    References: RFC 9562 §6.4, §6.10; UIAP §2.1.2, §4.4.
    """

    def __init__(
        self,
        socket_path: str,
        *,
        lifetime_s: int = DEFAULT_LIFETIME_S,
        on_loss: OnNodeLoss = OnNodeLoss.RECLAIM,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        expiry_margin_s: float = 1.0,
        timeout_s: float = 60.0,
        clock: Callable[[], int] | None = None,
        random_bytes: Callable[[int], bytes] = os.urandom,
        spares: int = 1,
    ) -> None:
        if not isinstance(on_loss, OnNodeLoss):
            raise InvalidField(f"on_loss: expected an OnNodeLoss, found {on_loss!r}", "on_loss")
        if type(max_attempts) is not int or max_attempts < 1:
            raise InvalidField(
                f"max_attempts: expected an int >= 1, found {max_attempts!r}", "max_attempts"
            )
        self.socket_path = socket_path
        self.lifetime_s = lifetime_s
        self.on_loss = on_loss
        self.max_attempts = max_attempts
        # The daemon renews at least half a lifetime before the end; a margin of at most a
        # quarter lifetime leaves the renewal time to be heard before the lease ends.
        self._margin_ns = int(min(expiry_margin_s, lifetime_s / 4) * NS_PER_S)
        self._timeout_s = timeout_s
        self._clock = clock if clock is not None else system_clock_ns
        self._random_bytes = random_bytes
        self._listeners = ListenerSet()
        self._reset_state()
        self._generation = 0
        check_spares(spares)
        self.spares = spares
        #: With spares: the claims (this source's own state unused), see uuidkit.bridge.spares.
        self._pool: SpareNodes | None = None
        if spares:
            slots = [
                UIAPNodeSource(
                    socket_path,
                    lifetime_s=lifetime_s,
                    max_attempts=max_attempts,
                    expiry_margin_s=expiry_margin_s,
                    timeout_s=timeout_s,
                    clock=clock,
                    random_bytes=random_bytes,
                    spares=0,
                )
                for _ in range(1 + spares)
            ]
            self._pool = SpareNodes(slots, raise_on_loss=on_loss is OnNodeLoss.RAISE)
        register_for_fork(self)

    def _reset_state(self) -> None:
        self._lock = threading.RLock()
        #: Notified when a suspicion ends (the verdict came, or the node was lost).
        self._verdict = threading.Condition(self._lock)
        #: Why the node is suspended (a conflict suspected), or None.
        self._suspicion: str | None = None
        self._lease: NodeLease | None = None
        self._claim_id: str | None = None
        self._client: Client | None = None
        self._stream: _EventStream | None = None
        self._watcher: threading.Thread | None = None
        self._lost_reason: str | None = None
        self._closed = False
        self._claims_made = 0

    @property
    def claims_made(self) -> int:
        """How many claims this source made (granted or denied): its messages to the daemon."""
        if self._pool is not None:
            return sum(slot.claims_made for slot in self._slots())
        return self._claims_made

    def _slots(self) -> list[UIAPNodeSource]:
        assert self._pool is not None
        return [slot for slot in self._pool.slots if isinstance(slot, UIAPNodeSource)]

    def spare_nodes(self) -> list[int]:
        """The nodes held as ready spares (claimed and defended, not in use, not doubted)."""
        return [] if self._pool is None else self._pool.spare_nodes()

    def usable(self) -> NodeLease | None:
        """The held lease if it may be used now (not doubted, not expired), without a
        claim or a wait; ``None`` otherwise (a source without spares: a slot's check).

        References: UIAP §4.4.
        """
        with self._lock:
            lease = self._lease
            if self._closed or lease is None or self._suspicion is not None:
                return None
            return lease if self._clock() < lease.expires_ns else None

    # ------------------------------------------------------------------ NodeSource

    def current(self) -> NodeLease:
        """The held lease, or a new claim's (RECLAIM), or NodeUnavailableError (RAISE).

        References: RFC 9562 §6.4; UIAP §2.1.1.
        """
        if self._pool is not None:
            return self._pool.current()
        events: list[NodeEvent] = []
        try:
            with self._lock:
                return self._current_locked(events)
        finally:
            for event in events:
                self._listeners.emit(event)

    def subscribe(self, listener: NodeListener) -> None:
        """Call ``listener`` on every later event. References: UIAP §2.1.2."""
        if self._pool is not None:
            self._pool.subscribe(listener)
            return
        self._listeners.add(listener)

    def unsubscribe(self, listener: NodeListener) -> None:
        """Stop calling ``listener``. References: UIAP §2.1.2."""
        if self._pool is not None:
            self._pool.unsubscribe(listener)
            return
        self._listeners.discard(listener)

    # ------------------------------------------------------------------ control

    @property
    def claim_id(self) -> str | None:
        """The daemon's ID of the claim in use, or ``None``."""
        if self._pool is not None:
            active = self._pool.active
            return active.claim_id if isinstance(active, UIAPNodeSource) else None
        return self._claim_id

    def restart(self) -> None:
        """After a loss under policy RAISE: allow the next :meth:`current` to claim anew.

        References: UIAP §2.1.2.
        """
        if self._pool is not None:
            self._pool.restart()
            return
        with self._lock:
            self._lost_reason = None

    def verify(self) -> bool:
        """Re-verify the held claim now (a reclaim, UIAP §4.4); False if it was lost.

        A collision found this way is reported like one found by a renewal.

        References: UIAP §2.1.2 (a collision "will only be detected if ... [a device]
        attempts to re-claim the UID space"), §4.4.
        """
        if self._pool is not None:
            active = self._pool.active
            return isinstance(active, UIAPNodeSource) and active.verify()
        events: list[NodeEvent] = []
        try:
            with self._lock:
                lease = self._lease
                if lease is None:
                    return False
                try:
                    result = self._claim(lease.node, reclaim=True)
                except NodeUnavailableError as error:
                    self._lose(str(error.reason), events)
                    return False
                if not result.granted:
                    self._lose(f"collision on re-verification ({result.reason})", events)
                    return False
                self._extend(result, events)
                return True
        finally:
            for event in events:
                self._listeners.emit(event)

    def close(self) -> None:
        """Release the claims and close the connections (the source stays unusable)."""
        if self._pool is not None:
            self._pool.close()
        with self._lock:
            self._closed = True
            claim, client, stream = self._claim_id, self._client, self._stream
            self._lease = self._claim_id = self._client = self._stream = None
            self._lost_reason = "source closed"
            self._end_suspicion()  # a value waiting for a verdict gets "closed" at once
        if client is not None:
            if claim is not None:
                try:
                    client.release(claim)
                except APIError as error:
                    _log.info("release of node claim %s failed: %s", claim, error)
            client.close()
        if stream is not None:
            stream.shutdown()

    def __enter__(self) -> UIAPNodeSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset_after_fork(self) -> None:
        """In a forked child: forget the parent's claim; claim our own on first use.

        Only this process's descriptors are closed; the parent's connections, and with them
        its claim, stay open.

        References: RFC 9562 §6.9.
        """
        client, stream = self._client, self._stream
        self._reset_state()
        self._listeners.reset_after_fork()
        if client is not None:
            client.close()  # close() on a socket closes this process's descriptor only
        if stream is not None:
            stream.close_fd()

    # ------------------------------------------------------------------ internals

    def _current_locked(self, events: list[NodeEvent]) -> NodeLease:
        if self._closed:
            raise NodeUnavailableError("node source: closed", "source closed")
        self._await_verdict()
        if self._closed:
            raise NodeUnavailableError("node source: closed", "source closed")
        lease = self._lease
        if lease is not None:
            if self._clock() < lease.expires_ns:
                return lease
            self._release_quietly()
            self._lose("lease ended without a renewal heard from the daemon", events)
        if self._lost_reason is not None and self.on_loss is OnNodeLoss.RAISE:
            raise NodeUnavailableError(
                f"node ID lost ({self._lost_reason}); policy RAISE", self._lost_reason
            )
        return self._claim_new(events)

    def _await_verdict(self) -> None:
        """While a conflict is suspected, wait (lock released) for the verdict: the node
        verified again, or lost; NodeUnavailableError if none comes within the timeout."""
        if self._suspicion is None:
            return
        if not self._verdict.wait_for(lambda: self._suspicion is None, self._timeout_s):
            raise NodeUnavailableError(
                f"node {self._describe_lease()} suspended ({self._suspicion}) and no "
                f"verdict from the daemon within {self._timeout_s} s",
                "conflict suspected",
            )

    def _describe_lease(self) -> str:
        lease = self._lease
        return "(none)" if lease is None else f"{lease.node:012x}"

    def _claim_new(self, events: list[NodeEvent]) -> NodeLease:
        self._ensure_watcher()
        reasons: list[str] = []
        for _ in range(self.max_attempts):
            node = random_node(self._random_bytes)
            result = self._claim(node, reclaim=False)
            if result.granted and result.claim is not None:
                self._generation += 1
                self._claim_id = result.claim
                self._lost_reason = None
                self._lease = NodeLease(node, self._generation, self._expires_ns(result))
                events.append(NodeEvent(NodeEventKind.GRANTED, node, self._generation))
                return self._lease
            reasons.append(str(result.reason))
        raise NodeUnavailableError(
            f"no node ID granted in {self.max_attempts} claims (denied: {', '.join(reasons)})",
            "every claim denied",
        )

    def _claim(self, node: int, *, reclaim: bool) -> ClaimResult:
        if self._client is None:
            self._client = Client(self.socket_path, timeout=self._timeout_s, wait=0)
        self._claims_made += 1
        try:
            return self._client.claim(
                UUID_NODE_ID_DOMAIN,
                UIDSpace.unique(node_id_uid(node)),
                self.lifetime_s,
                reclaim=reclaim,
                renew=True,
                release_on_disconnect=True,
            )
        except APIError as error:
            self._client.close()
            self._client = None
            unreachable = error.code is ErrorCode.UNREACHABLE
            reason = "daemon unreachable" if unreachable else f"daemon: {error.code.value}"
            raise NodeUnavailableError(f"UIAP daemon ({reason}): {error}", reason) from None

    def _expires_ns(self, result: ClaimResult) -> int:
        if result.expires is None:
            return (1 << 63) - 1
        return int(result.expires * NS_PER_S) - self._margin_ns

    def _extend(self, result: ClaimResult | dict[str, Any], events: list[NodeEvent]) -> None:
        lease = self._lease
        if lease is None:
            return
        expires = result.expires if isinstance(result, ClaimResult) else result.get("expires")
        expires_ns = (1 << 63) - 1 if expires is None else int(expires * NS_PER_S) - self._margin_ns
        self._lease = NodeLease(lease.node, lease.generation, expires_ns)
        self._end_suspicion()
        events.append(NodeEvent(NodeEventKind.RENEWED, lease.node, lease.generation))

    def _suspend(self, reason: str) -> None:
        """Stop handing out the node until the verdict (lock held)."""
        lease = self._lease
        if lease is None or self._suspicion is not None:
            return
        self._suspicion = reason  # from now on current() waits for the verdict
        _log.warning("node ID %012x suspended: %s", lease.node, reason)
        event = NodeEvent(NodeEventKind.SUSPENDED, lease.node, lease.generation, reason)
        # Told from a thread of its own: a generator may be waiting in current() for the
        # verdict while holding the lock its listener takes, and the watcher must go on
        # reading the stream to hear that verdict.
        threading.Thread(
            target=self._listeners.emit, args=(event,), name="uuidkit-node-suspend", daemon=True
        ).start()

    def _end_suspicion(self) -> None:
        if self._suspicion is not None:
            self._suspicion = None
            self._verdict.notify_all()

    def _lose(self, reason: str, events: list[NodeEvent]) -> None:
        """Stop handing out the node (lock held); the LOST event goes out after the lock."""
        lease = self._lease
        self._lease = None
        self._claim_id = None
        self._lost_reason = reason
        self._end_suspicion()
        if lease is not None:
            _log.warning("node ID %012x lost: %s", lease.node, reason)
            events.append(NodeEvent(NodeEventKind.LOST, lease.node, lease.generation, reason))

    def _release_quietly(self) -> None:
        claim, self._claim_id = self._claim_id, None
        if claim is not None and self._client is not None:
            with contextlib.suppress(APIError):  # the claim may already have ended
                self._client.release(claim)

    # ------------------------------------------------------------------ the watcher

    def _ensure_watcher(self) -> None:
        if self._watcher is not None and self._watcher.is_alive():
            return
        # Watch before claiming, so no event about the new claim can be missed.
        self._stream = _EventStream(self.socket_path, self._timeout_s)
        stream = self._stream
        self._watcher = threading.Thread(
            target=self._watch, args=(stream,), name="uuidkit-node-watch", daemon=True
        )
        self._watcher.start()

    def _watch(self, stream: _EventStream) -> None:
        for event in stream.events():
            self._on_daemon_event(event)
        events: list[NodeEvent] = []
        with self._lock:
            if self._stream is stream:
                self._stream = None
                if self._client is not None:
                    self._client.close()  # its claims end with the daemon anyway
                    self._client = None
                self._lose("daemon connection lost", events)
        for node_event in events:
            self._listeners.emit(node_event)

    def _on_daemon_event(self, body: dict[str, Any]) -> None:
        # Never a request to the daemon from here: a thread waiting on the daemon would
        # not see the stream end (the daemon re-verifies on interface-up by itself and
        # reports it with suspect and the verdict).
        name = body.get("event")
        events: list[NodeEvent] = []
        with self._lock:
            if self._claim_id is None or body.get("claim") != self._claim_id:
                pass
            elif name == "collision":
                self._lose(f"collision on {body.get('how', 'renewal')}", events)
            elif name in ("expired", "released"):
                self._lose(f"claim {name}", events)
            elif name == "suspect":
                self._suspend(f"conflict suspected: {body.get('reason', 'unknown')}")
            elif name == "granted" and body.get("how") in ("renewal", "verify"):
                self._extend(body, events)
        for event in events:
            self._listeners.emit(event)


NodeBoundGenerator = (
    NodeBoundV1Generator | NodeBoundV6Generator | NodeBoundV7Generator | NodeBoundV8Generator
)


def node_bound_generator(version: int, source: NodeSource) -> NodeBoundGenerator:
    """The node-bound generator of ``version`` (1, 6, 7: v7-node, 8: v8-node) on ``source``
    (any :class:`~uuidkit.generators.NodeSource`: UIAP, leased, static or manual).

    References: RFC 9562 §5.1, §5.6, §5.7, §5.8, §6.4.
    """
    makers: dict[int, type[NodeBoundGenerator]] = {
        1: NodeBoundV1Generator,
        6: NodeBoundV6Generator,
        7: NodeBoundV7Generator,
        8: NodeBoundV8Generator,
    }
    if version not in makers:
        raise InvalidField(
            f"version: node-bearing layouts are 1, 6, 7 and 8, found {version!r}", "version"
        )
    return makers[version](source)
