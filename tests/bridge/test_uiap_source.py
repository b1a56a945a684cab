"""UIAPNodeSource against a stand-in daemon speaking the API schema: claim parameters, no
round trip per UUID, renewal, collision on renewal, daemon loss, denial, policies, fork."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest
from fake_daemon import FakeDaemon

from uuidkit.bridge import OnNodeLoss, UIAPNodeSource, node_bound_generator
from uuidkit.errors import InvalidField, NodeUnavailableError
from uuidkit.generators import NodeEvent, NodeEventKind
from uuidkit.nodelayouts import MULTICAST_BIT, read_node_layout
from uuidkit.uiapd.client import MAX_REPLY_OCTETS

WAIT_S = 30.0


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[FakeDaemon]:
    fake = FakeDaemon(tmp_path)
    try:
        yield fake
    finally:
        fake.stop()


class Recorder:
    """Subscribes to a source; ``wait(kind)`` blocks until such an event was seen."""

    def __init__(self, source: UIAPNodeSource) -> None:
        self.events: list[NodeEvent] = []
        self._changed = threading.Condition()
        source.subscribe(self)

    def __call__(self, event: NodeEvent) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def wait(self, kind: NodeEventKind, count: int = 1) -> NodeEvent:
        with self._changed:
            seen = self._changed.wait_for(
                lambda: sum(e.kind is kind for e in self.events) >= count, WAIT_S
            )
            assert seen, f"no {kind} event within {WAIT_S} s: {self.events}"
            return [e for e in self.events if e.kind is kind][count - 1]


def node_of(value: UUID) -> int:
    return read_node_layout(value, "v7-node").node


def test_claims_a_random_multicast_node_in_the_node_domain(daemon: FakeDaemon) -> None:
    with UIAPNodeSource(daemon.path, spares=0, lifetime_s=60) as source:
        generator = node_bound_generator(7, source)
        values = [generator() for _ in range(10_000)]
        node = node_of(values[0])
        assert {node_of(v) for v in values} == {node}
        assert node & MULTICAST_BIT  # RFC 9562 §6.10
        # Holding the claim costs no round trip per UUID: one claim for 10,000 values.
        (claim,) = daemon.claim_methods()
        params = claim["params"]
        assert params["domain"] == "0fff:0000:0006:0000"
        assert params["uid"] == f"{node:012x}"
        assert params["renew"] is True and params["release_on_disconnect"] is True
        assert params["lifetime"] == 60
        assert source.claims_made == 1


def test_collision_on_renewal_switches_node_at_once(daemon: FakeDaemon) -> None:
    with UIAPNodeSource(daemon.path, spares=0) as source:
        generator = node_bound_generator(7, source)
        recorder = Recorder(source)  # after the generator: it hears a loss first
        before = [generator() for _ in range(1000)]
        first_claim = source.claim_id
        daemon.send_event("collision", {"claim": first_claim, "how": "renewal"})
        lost = recorder.wait(NodeEventKind.LOST)
        assert lost.reason == "collision on renewal"
        assert lost.node == node_of(before[0])
        after = [generator() for _ in range(1000)]  # RECLAIM: a new node, a new claim
        assert node_of(after[0]) != node_of(before[0])
        assert {node_of(v) for v in after} == {node_of(after[0])}
        assert not set(before) & set(after)
        assert source.claim_id not in (None, first_claim)
        assert len(daemon.claim_methods()) == 2


def test_raise_policy_after_collision(daemon: FakeDaemon) -> None:
    with UIAPNodeSource(daemon.path, spares=0, on_loss=OnNodeLoss.RAISE) as source:
        generator = node_bound_generator(6, source)
        recorder = Recorder(source)  # after the generator: it hears a loss first
        generator()
        daemon.send_event("collision", {"claim": source.claim_id, "how": "renewal"})
        recorder.wait(NodeEventKind.LOST)
        for _ in range(2):  # and it stays so: never a random node instead
            with pytest.raises(NodeUnavailableError, match="policy RAISE") as error:
                generator()
            assert error.value.reason == "collision on renewal"
        source.restart()
        assert read_node_layout(generator(), "v6-node").node & MULTICAST_BIT


def test_renewal_extends_the_lease(daemon: FakeDaemon) -> None:
    now = [1_000 * 10**9]
    with UIAPNodeSource(daemon.path, spares=0, clock=lambda: now[0]) as source:
        recorder = Recorder(source)
        lease = source.current()
        daemon.send_event(
            "granted", {"claim": source.claim_id, "how": "renewal", "expires": 5_000.0}
        )
        renewed = recorder.wait(NodeEventKind.RENEWED)
        assert (renewed.node, renewed.generation) == (lease.node, lease.generation)
        extended = source.current()
        assert extended.expires_ns == 5_000 * 10**9 - 10**9  # 1 s margin
        now[0] = extended.expires_ns  # no renewal heard by then: the node is dropped
        replacement = source.current()
        assert replacement.generation == lease.generation + 1
        assert recorder.wait(NodeEventKind.LOST).reason.startswith("lease ended")


def test_daemon_loss_stops_the_node_and_never_falls_back(daemon: FakeDaemon) -> None:
    with UIAPNodeSource(daemon.path, spares=0) as source:
        generator = node_bound_generator(1, source)
        recorder = Recorder(source)  # after the generator: it hears a loss first
        generator()
        daemon.stop()
        assert recorder.wait(NodeEventKind.LOST).reason == "daemon connection lost"
        with pytest.raises(NodeUnavailableError, match="unreachable") as error:
            generator()
        assert error.value.reason == "daemon unreachable"


def test_a_line_without_end_from_the_daemon_ends_the_watch(daemon: FakeDaemon) -> None:
    # The watch stream holds at most one line a client accepts, then gives the node up as
    # it does for a daemon gone, instead of buffering whatever the daemon sends.
    with UIAPNodeSource(daemon.path, spares=0) as source:
        recorder = Recorder(source)
        source.current()
        daemon.send_raw(b" " * (MAX_REPLY_OCTETS + 1))
        assert recorder.wait(NodeEventKind.LOST).reason == "daemon connection lost"


def test_denied_nodes_are_replaced_then_given_up(daemon: FakeDaemon) -> None:
    draws = iter([b"\x00\x00\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x02"] * 5)
    with UIAPNodeSource(
        daemon.path, spares=0, random_bytes=lambda n: next(draws), max_attempts=2
    ) as source:
        daemon.deny.add("010000000001")  # the first draw (multicast bit set) is taken
        assert source.current().node == 0x0100_0000_0002
    daemon.deny.add("010000000002")
    with (
        UIAPNodeSource(
            daemon.path, spares=0, random_bytes=lambda n: next(draws), max_attempts=2
        ) as source,
        pytest.raises(NodeUnavailableError, match="no node ID granted in 2 claims"),
    ):
        source.current()


def test_a_suspected_conflict_stops_the_node_until_the_verdict(daemon: FakeDaemon) -> None:
    """``suspect`` from the daemon: the generator stops using the node at once (before the
    verdict), and the source hands it out again only after ``granted`` (how ``verify``).
    Without a verdict the source gives up after its timeout, never using the node."""
    with UIAPNodeSource(daemon.path, spares=0, timeout_s=0.5) as source:
        generator = node_bound_generator(7, source)
        recorder = Recorder(source)
        node = node_of(generator())
        claim = source.claim_id
        daemon.send_event("suspect", {"claim": claim, "reason": "interface-up"})
        suspended = recorder.wait(NodeEventKind.SUSPENDED)
        assert (suspended.node, suspended.reason) == (node, "conflict suspected: interface-up")
        with pytest.raises(NodeUnavailableError, match="suspended") as error:
            generator()
        assert error.value.reason == "conflict suspected"
        daemon.send_event("granted", {"claim": claim, "how": "verify", "expires": None})
        recorder.wait(NodeEventKind.RENEWED)
        assert node_of(generator()) == node and source.claim_id == claim
        assert len(daemon.claim_methods()) == 1  # the daemon verified; the bridge asked nothing


def test_a_suspicion_ending_in_collision_switches_node(daemon: FakeDaemon) -> None:
    """A value asked for during the suspicion waits for the verdict, then carries a new
    node (policy RECLAIM), never the suspected one."""
    with UIAPNodeSource(daemon.path, spares=0) as source:
        generator = node_bound_generator(7, source)
        recorder = Recorder(source)
        node = node_of(generator())
        claim = source.claim_id
        daemon.send_event("suspect", {"claim": claim, "reason": "attempted"})
        recorder.wait(NodeEventKind.SUSPENDED)
        made: list[UUID] = []
        waiting = threading.Thread(target=lambda: made.append(generator()))
        waiting.start()
        daemon.send_event("collision", {"claim": claim, "how": "verify", "reason": "denied"})
        waiting.join(WAIT_S)
        assert recorder.wait(NodeEventKind.LOST).reason == "collision on verify"
        assert len(made) == 1 and node_of(made[0]) != node


def test_closing_the_source_ends_a_wait_for_a_verdict(daemon: FakeDaemon) -> None:
    source = UIAPNodeSource(daemon.path, spares=0)
    recorder = Recorder(source)
    source.current()
    daemon.send_event("suspect", {"claim": source.claim_id, "reason": "attempted"})
    recorder.wait(NodeEventKind.SUSPENDED)
    outcome: list[BaseException] = []

    def wait_for_a_node() -> None:
        try:
            source.current()
        except NodeUnavailableError as error:
            outcome.append(error)

    waiting = threading.Thread(target=wait_for_a_node)
    waiting.start()
    deadline = time.monotonic() + WAIT_S
    while not source._verdict._waiters:  # type: ignore[attr-defined]  # it waits now
        assert time.monotonic() < deadline
        time.sleep(0.001)
    source.close()
    waiting.join(WAIT_S)
    assert not waiting.is_alive() and len(outcome) == 1
    assert getattr(outcome[0], "reason", None) == "source closed"
    assert len(daemon.claim_methods()) == 1  # and nothing claimed after the close


def test_the_watcher_never_waits_on_the_daemon(daemon: FakeDaemon) -> None:
    """The watcher thread only reads the stream: an ``interface-up`` makes no request (the
    daemon re-verifies by itself), so the stream's end, the one signal of a dead daemon,
    is seen at once. The lease cannot end on its own here (a frozen clock): only the end
    of the stream can stop the node."""
    with UIAPNodeSource(daemon.path, spares=0, clock=lambda: 1_000 * 10**9) as source:
        recorder = Recorder(source)
        source.current()
        daemon.send_event("interface-up", {"interface": "eth0"})
        daemon.stop()
        assert recorder.wait(NodeEventKind.LOST).reason == "daemon connection lost"
        assert len(daemon.claim_methods()) == 1


def test_bad_settings_are_named(daemon: FakeDaemon) -> None:
    with pytest.raises(InvalidField, match="max_attempts"):
        UIAPNodeSource(daemon.path, spares=0, max_attempts=0)
    with pytest.raises(InvalidField, match="version"):
        node_bound_generator(4, UIAPNodeSource(daemon.path, spares=0))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_claims_its_own_node(daemon: FakeDaemon) -> None:
    with UIAPNodeSource(daemon.path, spares=0) as source:
        generator = node_bound_generator(7, source)
        parent_node = node_of(generator())
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.write(write_end, f"{node_of(generator()):012x}".encode())
            finally:
                os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            child_node = int(pipe.read(), 16)
        os.waitpid(pid, 0)
        assert child_node != parent_node
        assert {c["params"]["uid"] for c in daemon.claim_methods()} == {
            f"{parent_node:012x}",
            f"{child_node:012x}",
        }
        assert node_of(generator()) == parent_node


def test_a_renewal_heard_after_the_lease_lapsed_here_changes_nothing(
    daemon: FakeDaemon,
) -> None:
    # The node's lease lapsed here (no renewal heard by its end), so it was dropped and a
    # new claim made; then the daemon's late `granted` (how `renewal`) for the old claim
    # arrives. It must neither revive the old node nor extend the new lease with the old
    # claim's lifetime: events count only for the claim in use. Deterministic: the
    # watcher reads the stream in order, so once it reports the `released` sent after the
    # late renewal, the late renewal was handled.
    now = [1_000 * 10**9]
    with UIAPNodeSource(
        daemon.path, spares=0, clock=lambda: now[0], on_loss=OnNodeLoss.RAISE
    ) as source:
        recorder = Recorder(source)
        first = source.current()
        old_claim = source.claim_id
        now[0] = first.expires_ns  # lapsed here: dropped, and RAISE claims nothing new
        with pytest.raises(NodeUnavailableError, match="policy RAISE"):
            source.current()
        source.restart()
        second = source.current()
        assert second.generation == first.generation + 1
        assert source.claim_id not in (None, old_claim)
        daemon.send_event("granted", {"claim": old_claim, "how": "renewal", "expires": 9_000.0})
        daemon.send_event("released", {"claim": source.claim_id})  # the sentinel
        recorder.wait(NodeEventKind.LOST, count=2)
        kinds = [(event.kind, event.generation) for event in recorder.events]
        assert kinds == [
            (NodeEventKind.GRANTED, first.generation),
            (NodeEventKind.LOST, first.generation),
            (NodeEventKind.GRANTED, second.generation),
            (NodeEventKind.LOST, second.generation),
        ]
