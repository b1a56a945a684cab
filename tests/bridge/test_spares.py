"""Spare nodes (uuidkit.bridge.spares) behind UIAPNodeSource (against the stand-in daemon)
and LeasedNodeSource (against the in-memory service of test_leased_source).

A lost node costs one switch to the spare the source already holds, not a claim; a doubted
node (``suspect``, UIAP §4.4) is replaced by the spare at once and never used while in
doubt; verified, it becomes the spare; resolved against it, its slot claims afresh.

"Without a claim" is shown, not timed: the daemon holds every new claim (``hold_claims``)
while the value is made, so a value that waited for one could not be made before the hold
is lifted, and would carry the new claim's node, not the spare's.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest
from fake_daemon import FakeDaemon
from test_leased_source import (
    LIFETIME_S,
    MARGIN_S,
    WALL_NS,
    FakeClock,
    FakeService,
    counting_bytes,
)

from uuidkit import _system
from uuidkit.bridge import LeasedNodeSource, OnNodeLoss, UIAPNodeSource, node_bound_generator
from uuidkit.errors import InvalidField, NodeUnavailableError
from uuidkit.generators import NodeBoundV7Generator, NodeEvent, NodeEventKind
from uuidkit.nodelayouts import read_node_layout

WAIT_S = 30.0
LAYOUTS = {1: "v1-node", 6: "v6-node", 7: "v7-node", 8: "v8-node"}


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[FakeDaemon]:
    fake = FakeDaemon(tmp_path)
    try:
        yield fake
    finally:
        if fake.hold_claims is not None:
            fake.hold_claims.set()
        fake.stop()


class Recorder:
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


def until(condition: object, what: str) -> None:
    """Wait (bounded, never a verdict on speed) for a state the background filler reaches."""
    deadline = time.monotonic() + WAIT_S
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"not reached within {WAIT_S} s: {what}"
        time.sleep(0.001)


def node_of(value: UUID, version: int = 7) -> int:
    return read_node_layout(value, LAYOUTS[version]).node


def spare_of(source: UIAPNodeSource) -> int:
    until(lambda: len(source.spare_nodes()) == 1, "a spare held")
    (spare,) = source.spare_nodes()
    return spare


@pytest.mark.parametrize("version", [1, 6, 7, 8])
def test_a_lost_node_switches_to_the_spare_without_a_claim(
    daemon: FakeDaemon, version: int
) -> None:
    with UIAPNodeSource(daemon.path) as source:
        generator = node_bound_generator(version, source)
        recorder = Recorder(source)
        first = node_of(generator(), version)
        spare = spare_of(source)
        assert spare != first and source.claims_made == 2
        daemon.hold_claims = threading.Event()  # from now on a new claim never ends
        daemon.send_event("collision", {"claim": source.claim_id, "how": "renewal"})
        assert recorder.wait(NodeEventKind.LOST).node == first
        after = [generator() for _ in range(100)]
        assert {node_of(v, version) for v in after} == {spare}
        daemon.hold_claims.set()  # the lost slot's claim goes through: the next spare
        until(lambda: len(source.spare_nodes()) == 1, "the next spare held")
        (refill,) = source.spare_nodes()
        assert refill not in (first, spare) and source.claims_made == 3
        assert first not in {node_of(generator(), version) for _ in range(100)}


def test_a_doubt_switches_to_the_spare_at_once_and_a_collision_ends_the_node(
    daemon: FakeDaemon,
) -> None:
    with UIAPNodeSource(daemon.path) as source:
        generator = node_bound_generator(7, source)
        recorder = Recorder(source)
        doubted = node_of(generator())
        doubted_claim = source.claim_id
        spare = spare_of(source)
        daemon.hold_claims = threading.Event()
        daemon.send_event("suspect", {"claim": doubted_claim, "reason": "interface-up"})
        suspended = recorder.wait(NodeEventKind.SUSPENDED)
        assert (suspended.node, suspended.reason) == (doubted, "conflict suspected: interface-up")
        # No verdict yet, no claim possible: the next value carries the spare.
        during = [generator() for _ in range(100)]
        assert {node_of(v) for v in during} == {spare}
        assert source.spare_nodes() == []  # the doubted node is no spare while in doubt
        daemon.send_event("collision", {"claim": doubted_claim, "how": "verify"})
        daemon.hold_claims.set()
        until(lambda: len(source.spare_nodes()) == 1, "a spare claimed for the lost one")
        (refill,) = source.spare_nodes()
        assert refill not in (doubted, spare)
        after = [generator() for _ in range(100)]
        assert {node_of(v) for v in after} == {spare}
        assert doubted not in {node_of(v) for v in during + after}


def test_a_node_verified_after_a_doubt_becomes_the_spare(daemon: FakeDaemon) -> None:
    with UIAPNodeSource(daemon.path) as source:
        generator = node_bound_generator(7, source)
        recorder = Recorder(source)
        doubted = node_of(generator())
        doubted_claim = source.claim_id
        spare = spare_of(source)
        daemon.send_event("suspect", {"claim": doubted_claim, "reason": "attempted"})
        recorder.wait(NodeEventKind.SUSPENDED)
        assert node_of(generator()) == spare
        daemon.send_event("granted", {"claim": doubted_claim, "how": "verify", "expires": None})
        until(lambda: source.spare_nodes() == [doubted], "the verified node held as spare")
        assert {node_of(generator()) for _ in range(100)} == {spare}  # no switch back
        assert source.claims_made == 2  # the daemon verified; the bridge claimed nothing


def test_raise_policy_keeps_the_spare_for_restart(daemon: FakeDaemon) -> None:
    with UIAPNodeSource(daemon.path, on_loss=OnNodeLoss.RAISE) as source:
        generator = node_bound_generator(7, source)
        recorder = Recorder(source)
        generator()
        spare = spare_of(source)
        daemon.hold_claims = threading.Event()
        daemon.send_event("collision", {"claim": source.claim_id, "how": "renewal"})
        recorder.wait(NodeEventKind.LOST)
        with pytest.raises(NodeUnavailableError, match="policy RAISE"):
            generator()
        source.restart()
        assert node_of(generator()) == spare


def test_the_spare_setting_is_checked(daemon: FakeDaemon) -> None:
    for bad in (-1, 9, 1.0, True):
        with pytest.raises(InvalidField, match="spares"):
            UIAPNodeSource(daemon.path, spares=bad)  # type: ignore[arg-type]


def test_close_releases_the_spare_too(daemon: FakeDaemon) -> None:
    source = UIAPNodeSource(daemon.path, spares=2)
    generator = node_bound_generator(7, source)
    generator()
    until(lambda: len(source.spare_nodes()) == 2, "two spares held")
    assert len(daemon.claims) == 3
    source.close()
    until(lambda: not daemon.claims, "every claim released")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_claims_its_own_nodes(daemon: FakeDaemon) -> None:
    with UIAPNodeSource(daemon.path) as source:
        generator = node_bound_generator(7, source)
        parent_node = node_of(generator())
        parent_spare = spare_of(source)
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
        assert child_node not in (parent_node, parent_spare)
        assert node_of(generator()) == parent_node
        assert source.spare_nodes() == [parent_spare]


def test_a_lost_lease_switches_to_the_spare_without_a_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """LeasedNodeSource keeps its spare the same way (one shared SpareNodes): a renewal
    refused by the service (fencing) loses the node, and with the service unreachable from
    then on, the next values carry the spare, leased and renewed beforehand."""
    clock = FakeClock()
    monkeypatch.setattr(_system, "monotonic_ns", clock)
    service = FakeService(clock)
    with LeasedNodeSource(
        service,
        lifetime_s=LIFETIME_S,
        margin_s=MARGIN_S,
        random_bytes=counting_bytes(),  # type: ignore[arg-type]
        clock=lambda: WALL_NS,
        threads=False,
    ) as source:
        generator = NodeBoundV7Generator(source, clock=lambda: WALL_NS)
        lost = threading.Event()
        source.subscribe(lambda e: lost.set() if e.kind is NodeEventKind.LOST else None)
        first = node_of(generator())
        until(lambda: len(source.spare_nodes()) == 1, "a spare leased")
        (spare,) = source.spare_nodes()
        (active,) = [s for s in source.slots if s.grant is not None and s.grant.node == first]
        lease, grant = active.current(), active.grant
        assert grant is not None
        del service.held[first]  # the lease lapsed at the service
        assert not active.renew_once(lease, grant)
        assert lost.is_set()
        service.unreachable = True  # no request can succeed from here on
        assert {node_of(generator()) for _ in range(100)} == {spare}
