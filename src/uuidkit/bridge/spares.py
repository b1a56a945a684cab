"""A spare node in hand: the switch every node source with ``spares`` makes on a loss or doubt.

:class:`SpareNodes` is the one place where a node source keeps nodes in reserve. It holds
``1 + spares`` *slots*: single-node sources of one kind (a :class:`UIAPNodeSource` or a
:class:`LeasedNodeSource` with ``spares=0``), each of which claims, defends, renews and
releases its own node exactly as a source without spares does. One slot is *active* (its
node is the one handed to generators); the others are spares, claimed in the background.

- **Loss** (LOST of the active slot: a collision, an expired or revoked lease, the daemon
  gone): the generators hear LOST at once, and the next :meth:`SpareNodes.current` hands
  out a spare's node (a new generation) without a claim; the lost slot claims a fresh node
  in the background and becomes a spare. So losing a node costs one switch, not one claim.
- **Doubt** (SUSPENDED of the active slot: the daemon re-verifies it, UIAP §4.4): if a
  spare is ready, the generators hear SUSPENDED and switch to the spare at once; the
  doubted node is used by nobody while the doubt lasts. Verified in its favour (RENEWED),
  it becomes a spare (the active node stays the one switched to: switching back would be a
  second change of node for nothing); resolved against it (LOST), its slot claims afresh.
  Without a ready spare, the active slot's own rule applies (its ``current()`` waits for
  the verdict), as for a source without spares.
- **Policy**: ``raise_on_loss`` (``OnNodeLoss.RAISE``): after a loss of the active node,
  :meth:`current` raises until :meth:`restart`, which then switches to a spare at once.
- **Safety**: each slot never hands out a node it reported lost or doubts (its own rules);
  this class only chooses which slot's usable node is active, and checks it is usable
  (``usable()``, no I/O) under its lock before handing it out.
- **Thread safety**: one lock, never held across a slot's blocking ``current()`` (a claim,
  a wait for a verdict); events are emitted outside it.
- **Fork**: every slot drops its node in a forked child (its own rule); this class forgets
  which was active and its filler thread.

References: RFC 9562 §6.4, §6.9; UIAP §2.1.2, §4.4.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Sequence
from typing import Final, Protocol

from uuidkit.errors import InvalidField, NodeUnavailableError
from uuidkit.generators._policy import register_for_fork
from uuidkit.generators.nodesource import (
    ListenerSet,
    NodeEvent,
    NodeEventKind,
    NodeLease,
    NodeListener,
)

__all__ = ["MAX_SPARES", "NodeSlot", "SpareNodes", "check_spares"]

_log = logging.getLogger(__name__)
#: Wait before a slot whose claim failed tries again, seconds.
RETRY_S: Final = 0.5
#: Longest wait between two tries.
MAX_RETRY_S: Final = 30.0
#: Most spares a source keeps (each is one more claim or lease held by the process).
MAX_SPARES: Final = 8


class NodeSlot(Protocol):
    """A single-node source :class:`SpareNodes` can keep as active node or spare.

    References: RFC 9562 §6.4.
    """

    def current(self) -> NodeLease:
        """The slot's lease, claiming one if it holds none (may block)."""
        ...

    def usable(self) -> NodeLease | None:
        """The held lease if it may be used now (not lost, doubted or expired); no I/O."""
        ...

    def subscribe(self, listener: NodeListener) -> None:
        """Call ``listener`` on the slot's events."""
        ...

    def close(self) -> None:
        """Release the slot's node."""
        ...


class _State(enum.Enum):
    EMPTY = "empty"  # no node, or one being claimed
    READY = "ready"  # a node held and not doubted
    DOUBTED = "doubted"  # a node held, being re-verified: not to be used


class SpareNodes:
    """``slots[0]`` and its spares behind one :class:`~uuidkit.generators.NodeSource` face.

    See the module docstring. ``slots`` are sources with no spares of their own; this
    object subscribes to them and owns them (``close()`` closes them).

    References: RFC 9562 §6.4; UIAP §2.1.2, §4.4.
    """

    def __init__(self, slots: Sequence[NodeSlot], *, raise_on_loss: bool) -> None:
        self.slots: tuple[NodeSlot, ...] = tuple(slots)
        self.raise_on_loss = raise_on_loss
        self._listeners = ListenerSet()
        self._generation = 0
        self._reset_state()
        for index, slot in enumerate(self.slots):
            slot.subscribe(self._listener_for(index))
        register_for_fork(self)

    def _listener_for(self, index: int) -> NodeListener:
        def on_event(event: NodeEvent) -> None:
            self._on_slot_event(index, event)

        return on_event

    def _reset_state(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._state = [_State.EMPTY] * len(self.slots)
        self._active: int | None = None
        self._active_inner: int | None = None  # the active slot's own generation
        self._lease: NodeLease | None = None  # the lease handed out (our generation)
        self._lost_reason: str | None = None
        self._closed = False
        self._filler: threading.Thread | None = None

    # ------------------------------------------------------------------ NodeSource

    def current(self) -> NodeLease:
        """The active node's lease, a spare's (a switch, no claim), or a new claim's.

        References: RFC 9562 §6.4; UIAP §2.1.2.
        """
        events: list[NodeEvent] = []
        try:
            for _ in range(2 * len(self.slots) + 2):
                with self._lock:
                    lease, target = self._pick(events)
                    if lease is not None:
                        return lease
                # No usable node in hand: the slot's own rule (a claim, or a wait for the
                # verdict on a doubted node), outside our lock.
                inner = self.slots[target].current()
                with self._lock:
                    self._check_open()
                    if self.slots[target].usable() == inner:
                        self._state[target] = _State.READY
                        return self._activate(target, inner, events)
            raise NodeUnavailableError(
                "node source: every node in hand changed while being taken", "node changing"
            )
        finally:
            for event in events:
                self._listeners.emit(event)

    def subscribe(self, listener: NodeListener) -> None:
        """Call ``listener`` on every later event. References: UIAP §2.1.2."""
        self._listeners.add(listener)

    def unsubscribe(self, listener: NodeListener) -> None:
        """Stop calling ``listener``. References: UIAP §2.1.2."""
        self._listeners.discard(listener)

    # ------------------------------------------------------------------ control

    @property
    def active(self) -> NodeSlot | None:
        """The slot whose node is handed out, or ``None``."""
        index = self._active
        return None if index is None else self.slots[index]

    def spare_nodes(self) -> list[int]:
        """The nodes held as ready spares (claimed, not doubted), in slot order."""
        with self._lock:
            nodes = []
            for index, slot in enumerate(self.slots):
                if index != self._active and self._state[index] is _State.READY:
                    lease = slot.usable()
                    if lease is not None:
                        nodes.append(lease.node)
            return nodes

    def restart(self) -> None:
        """After a loss under RAISE: let the next :meth:`current` switch or claim."""
        with self._lock:
            self._lost_reason = None

    def close(self) -> None:
        """Close every slot (each releases its node); the source stays unusable."""
        with self._lock:
            self._closed = True
            self._changed.notify_all()
        for slot in self.slots:
            slot.close()

    def reset_after_fork(self) -> None:
        """In a forked child: forget the active slot and the filler (RFC 9562 §6.9)."""
        self._reset_state()
        self._listeners.reset_after_fork()

    # ------------------------------------------------------------------ internals

    def _check_open(self) -> None:
        if self._closed:
            raise NodeUnavailableError("node source: closed", "source closed")
        if self._lost_reason is not None and self.raise_on_loss:
            raise NodeUnavailableError(
                f"node ID lost ({self._lost_reason}); policy RAISE", self._lost_reason
            )

    def _pick(self, events: list[NodeEvent]) -> tuple[NodeLease | None, int]:
        """(lease, -) if a node in hand is usable now; else (None, the slot to ask)."""
        self._check_open()
        active = self._active
        if active is not None:
            inner = self.slots[active].usable()
            if inner is not None and inner.generation == self._active_inner:
                if self._lease is not None and self._lease.expires_ns == inner.expires_ns:
                    return self._lease, active
                return self._activate(active, inner, events), active
        for index, slot in enumerate(self.slots):
            if index != active and self._state[index] is _State.READY:
                inner = slot.usable()
                if inner is not None:
                    return self._activate(index, inner, events), index
        if active is not None:
            return None, active  # its own rule: wait for a verdict, or claim anew
        empty = [i for i, state in enumerate(self._state) if state is _State.EMPTY]
        return None, (empty or [0])[0]

    def _activate(self, index: int, inner: NodeLease, events: list[NodeEvent]) -> NodeLease:
        """Hand out ``inner`` (lock held): a new generation if the node changed."""
        generation = self._generation
        if index != self._active or inner.generation != self._active_inner:
            self._generation = generation = generation + 1
            self._active, self._active_inner = index, inner.generation
            events.append(NodeEvent(NodeEventKind.GRANTED, inner.node, generation))
            self._changed.notify_all()  # the filler: a slot may need a node now
            self._start_filler()  # spares are claimed after the first node, never before
        self._lease = NodeLease(inner.node, generation, inner.expires_ns, inner.deadline_mono_ns)
        return self._lease

    def _on_slot_event(self, index: int, event: NodeEvent) -> None:
        events: list[NodeEvent] = []
        with self._lock:
            is_active = index == self._active and event.generation == self._active_inner
            lease = self._lease
            kind = event.kind
            if kind is NodeEventKind.GRANTED:
                self._state[index] = _State.READY
            elif kind is NodeEventKind.RENEWED:
                # A renewal, or a doubt resolved in the node's favour (UIAP §4.4): a doubted
                # spare, or a doubted former active node, is a spare again.
                self._state[index] = _State.READY
                if is_active and lease is not None:
                    events.append(NodeEvent(kind, lease.node, lease.generation))
            elif kind is NodeEventKind.SUSPENDED:
                self._state[index] = _State.DOUBTED
                if is_active and lease is not None:
                    events.append(NodeEvent(kind, lease.node, lease.generation, event.reason))
                    if self._ready_spare():
                        # The doubted node is never used again unless verified; the next
                        # value takes the spare (no wait for the verdict).
                        self._active = self._active_inner = self._lease = None
            elif kind is NodeEventKind.LOST:
                self._state[index] = _State.EMPTY
                if is_active and lease is not None:
                    self._active = self._active_inner = self._lease = None
                    self._lost_reason = event.reason
                    events.append(NodeEvent(kind, lease.node, lease.generation, event.reason))
            self._changed.notify_all()
        for node_event in events:
            self._listeners.emit(node_event)

    def _ready_spare(self) -> bool:
        return any(
            index != self._active and state is _State.READY
            for index, state in enumerate(self._state)
        )

    # ------------------------------------------------------------------ the filler

    def _start_filler(self) -> None:
        if (self._filler is None or not self._filler.is_alive()) and len(self.slots) > 1:
            self._filler = threading.Thread(
                target=self._fill, args=(self._lock,), name="uuidkit-node-spares", daemon=True
            )
            self._filler.start()

    def _needing_node(self) -> int | None:
        """A slot that is neither active nor doubted and holds no usable node (lock held)."""
        for index, slot in enumerate(self.slots):
            state = self._state[index]
            if index == self._active or state is _State.DOUBTED:
                continue
            if state is _State.EMPTY or slot.usable() is None:
                return index
        return None

    def _fill(self, lock: threading.Lock) -> None:
        """Keep every spare slot holding a node: claim one whenever a slot has none (after a
        failure, again after RETRY_S, doubling up to MAX_RETRY_S: a full site is not flooded)."""
        delay = RETRY_S
        while True:
            with lock:
                if self._lock is not lock:
                    return  # a forked child's copy of the thread's state
                index = self._needing_node()
                while not self._closed and index is None:
                    self._changed.wait()
                    index = self._needing_node()
                if self._closed or index is None:
                    return
                self._state[index] = _State.EMPTY  # being claimed: not a spare meanwhile
            slot = self.slots[index]
            try:
                lease = slot.current()
                with lock:
                    if self._state[index] is _State.EMPTY and slot.usable() == lease:
                        self._state[index] = _State.READY  # held already: no GRANTED came
                delay = RETRY_S
            except NodeUnavailableError as error:
                _log.info("spare node not claimed (next try in %.1f s): %s", delay, error)
                with lock:
                    if not self._closed:
                        self._changed.wait(delay)
                delay = min(2 * delay, MAX_RETRY_S)


def check_spares(spares: object) -> None:
    """Reject a ``spares`` setting that is not an int from 0 to 8.

    References: RFC 9562 §6.4 (the node IDs a source holds for its generators).
    """
    if type(spares) is not int or not 0 <= spares <= MAX_SPARES:
        raise InvalidField(
            f"spares: expected an int from 0 to {MAX_SPARES}, found {spares!r}", "spares"
        )
