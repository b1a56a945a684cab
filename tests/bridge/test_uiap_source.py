"""UIAPNodeSource against a stand-in daemon speaking the API schema: claim parameters, no
round trip per UUID, renewal, collision on renewal, daemon loss, denial, policies, fork."""

from __future__ import annotations

import os
import threading
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
    with UIAPNodeSource(daemon.path, lifetime_s=60) as source:
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
    with UIAPNodeSource(daemon.path) as source:
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
    with UIAPNodeSource(daemon.path, on_loss=OnNodeLoss.RAISE) as source:
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
    with UIAPNodeSource(daemon.path, clock=lambda: now[0]) as source:
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
    with UIAPNodeSource(daemon.path) as source:
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
    with UIAPNodeSource(daemon.path) as source:
        recorder = Recorder(source)
        source.current()
        daemon.send_raw(b" " * (MAX_REPLY_OCTETS + 1))
        assert recorder.wait(NodeEventKind.LOST).reason == "daemon connection lost"


def test_denied_nodes_are_replaced_then_given_up(daemon: FakeDaemon) -> None:
    draws = iter([b"\x00\x00\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x02"] * 5)
    with UIAPNodeSource(daemon.path, random_bytes=lambda n: next(draws), max_attempts=2) as source:
        daemon.deny.add("010000000001")  # the first draw (multicast bit set) is taken
        assert source.current().node == 0x0100_0000_0002
    daemon.deny.add("010000000002")
    with (
        UIAPNodeSource(daemon.path, random_bytes=lambda n: next(draws), max_attempts=2) as source,
        pytest.raises(NodeUnavailableError, match="no node ID granted in 2 claims"),
    ):
        source.current()


def test_interface_up_reverifies_and_finds_a_collision(daemon: FakeDaemon) -> None:
    with UIAPNodeSource(daemon.path) as source:
        recorder = Recorder(source)
        node = source.current().node
        daemon.collide_on_reclaim.add(f"{node:012x}")
        daemon.send_event("interface-up", {"interface": "eth0"})
        lost = recorder.wait(NodeEventKind.LOST)
        assert "collision" in lost.reason
        reclaims = [r for r in daemon.claim_methods() if r["params"].get("reclaim")]
        assert [r["params"]["uid"] for r in reclaims] == [f"{node:012x}"]
        assert source.current().node != node


def test_bad_settings_are_named(daemon: FakeDaemon) -> None:
    with pytest.raises(InvalidField, match="max_attempts"):
        UIAPNodeSource(daemon.path, max_attempts=0)
    with pytest.raises(InvalidField, match="version"):
        node_bound_generator(4, UIAPNodeSource(daemon.path))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_claims_its_own_node(daemon: FakeDaemon) -> None:
    with UIAPNodeSource(daemon.path) as source:
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
