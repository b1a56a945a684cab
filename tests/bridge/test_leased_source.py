"""LeasedNodeSource's timekeeping against an in-memory service and injected clocks.

Every verdict here is driven by a fake monotonic clock (``uuidkit._system.monotonic_ns``,
which both the source and the node-bound generators read) and a fake service, so none
depends on machine load: the deadline is judged from the moment a request was sent, a late
grant is not used, a paused process resumed after its deadline makes no value with the old
node, a refused renewal (fencing) loses the node, and the watchdog revokes at the deadline
while the renewer is stuck.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from uuidkit import _system
from uuidkit.bridge import OnNodeLoss
from uuidkit.bridge.leased import NS_PER_S, Grant, LeasedNodeSource, ServiceUnreachable
from uuidkit.bridge.nodespace import STATIC_BIT
from uuidkit.errors import NodeUnavailableError
from uuidkit.generators import NodeBoundV7Generator, NodeEvent, NodeEventKind
from uuidkit.nodelayouts import MULTICAST_BIT, read_node_layout

LIFETIME_S = 10
MARGIN_S = 1.0
WALL_NS = 1_700_000_000 * NS_PER_S  # a frozen wall clock: only the monotonic one moves


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000 * NS_PER_S

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * NS_PER_S)


class FakeService:
    """Leases by node with an expiry on the *service's* clock (here the same fake clock),
    fencing by a token per grant; ``reply_delay_s`` elapses between processing and reply."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.held: dict[int, tuple[int, int]] = {}  # node -> (token, expires)
        self.tokens = 0
        self.reply_delay_s = 0.0
        self.unreachable = False
        self.renew_gate: threading.Event | None = None
        self.released: list[int] = []

    def _check(self) -> None:
        if self.unreachable:
            raise ServiceUnreachable("fake service: unreachable")

    def acquire(self, node: int, lifetime_s: int) -> Grant | None:
        self._check()
        held = self.held.get(node)
        if held is not None and held[1] > self.clock.now:
            return None
        self.tokens += 1
        self.held[node] = (self.tokens, self.clock.now + lifetime_s * NS_PER_S)
        self.clock.advance(self.reply_delay_s)
        return Grant(node, lifetime_s * NS_PER_S, self.tokens)

    def renew(self, grant: Grant, lifetime_s: int) -> int | None:
        if self.renew_gate is not None:
            self.renew_gate.wait(60)
        self._check()
        held = self.held.get(grant.node)
        if held is None or held[0] != grant.token or held[1] <= self.clock.now:
            return None
        self.held[grant.node] = (held[0], self.clock.now + lifetime_s * NS_PER_S)
        return lifetime_s * NS_PER_S

    def release(self, grant: Grant) -> None:
        self.released.append(grant.node)
        if self.held.get(grant.node, (None,))[0] == grant.token:
            del self.held[grant.node]

    def close(self) -> None:
        pass

    def forget_after_fork(self) -> None:
        pass


def counting_bytes() -> object:
    """Distinct deterministic 'random' draws: 1, 2, 3, ... in the low bytes."""
    state = {"n": 0}

    def draw(n: int) -> bytes:
        state["n"] += 1
        return state["n"].to_bytes(n)

    return draw


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(_system, "monotonic_ns", fake)
    return fake


@pytest.fixture
def service(clock: FakeClock) -> FakeService:
    return FakeService(clock)


@pytest.fixture
def source(service: FakeService) -> Iterator[LeasedNodeSource]:
    leased = LeasedNodeSource(
        service,
        spares=0,  # the lease mechanism of one node (spares: test_spares.py)
        lifetime_s=LIFETIME_S,
        margin_s=MARGIN_S,
        random_bytes=counting_bytes(),  # type: ignore[arg-type]
        clock=lambda: WALL_NS,
        threads=False,
    )
    yield leased
    leased.close()


def generator(source: LeasedNodeSource) -> NodeBoundV7Generator:
    return NodeBoundV7Generator(source, clock=lambda: WALL_NS)


def test_leased_nodes_are_in_the_leased_half_with_the_multicast_bit(
    source: LeasedNodeSource,
) -> None:
    node = source.current().node
    assert node & MULTICAST_BIT and not node & STATIC_BIT


def test_the_deadline_counts_from_the_moment_the_request_was_sent(
    source: LeasedNodeSource, service: FakeService, clock: FakeClock
) -> None:
    service.reply_delay_s = 3.0  # the grant takes 3 s to come back
    sent = clock.now
    lease = source.current()
    assert lease.deadline_mono_ns == sent + (LIFETIME_S - MARGIN_S) * NS_PER_S
    assert lease.expires_ns == WALL_NS + (lease.deadline_mono_ns - clock.now)


def test_a_grant_that_arrives_after_its_deadline_is_not_used(
    source: LeasedNodeSource, service: FakeService
) -> None:
    service.reply_delay_s = LIFETIME_S - MARGIN_S  # arrives exactly at its deadline
    with pytest.raises(NodeUnavailableError):
        source.current()
    assert len(service.released) == source.max_attempts  # each late grant given back


def test_a_process_resumed_after_its_deadline_never_uses_the_old_node(
    source: LeasedNodeSource, service: FakeService, clock: FakeClock
) -> None:
    events: list[NodeEvent] = []
    source.subscribe(events.append)
    make = generator(source)
    old = read_node_layout(make(), "v7-node").node
    # Paused (SIGSTOP) past the deadline; meanwhile the service gave the node to another.
    clock.advance(LIFETIME_S)
    service.held[old] = (999, clock.now + LIFETIME_S * NS_PER_S)
    # The wall clock has not moved (stepped back, or frozen): only the monotonic deadline
    # tells the generator that its cached lease ended.
    new = read_node_layout(make(), "v7-node").node
    assert new != old
    assert service.held[new][0] != 999
    kinds = [e.kind for e in events]
    assert kinds == [NodeEventKind.GRANTED, NodeEventKind.LOST, NodeEventKind.GRANTED]
    assert events[1].node == old


def test_a_renewal_keeps_the_node_and_moves_the_deadline_from_its_send_time(
    source: LeasedNodeSource, service: FakeService, clock: FakeClock
) -> None:
    lease = source.current()
    grant = source.grant
    assert grant is not None
    clock.advance(LIFETIME_S / 3)
    sent = clock.now
    assert source.renew_once(lease, grant)
    renewed = source.current()
    assert renewed.node == lease.node and renewed.generation == lease.generation
    assert renewed.deadline_mono_ns == sent + (LIFETIME_S - MARGIN_S) * NS_PER_S


def test_a_lapsed_lease_regranted_elsewhere_cannot_be_renewed_back(
    source: LeasedNodeSource, service: FakeService, clock: FakeClock
) -> None:
    events: list[NodeEvent] = []
    source.subscribe(events.append)
    lease = source.current()
    grant = source.grant
    assert grant is not None
    clock.advance(LIFETIME_S + 1)
    service.held[lease.node] = (999, clock.now + LIFETIME_S * NS_PER_S)  # fenced
    assert not source.renew_once(lease, grant)
    assert events[-1].kind is NodeEventKind.LOST and events[-1].node == lease.node
    assert source.current().node != lease.node


def test_policy_raise_raises_after_a_loss_until_restart(
    service: FakeService, clock: FakeClock
) -> None:
    with LeasedNodeSource(
        service, lifetime_s=LIFETIME_S, on_loss=OnNodeLoss.RAISE, threads=False, spares=0
    ) as source:
        first = source.current()
        clock.advance(LIFETIME_S)
        with pytest.raises(NodeUnavailableError) as raised:
            source.current()
        assert raised.value.reason == "lease ended before a renewal was confirmed"
        source.restart()
        assert source.current().generation == first.generation + 1


def test_an_unreachable_service_stops_the_node_at_its_deadline(
    source: LeasedNodeSource, service: FakeService, clock: FakeClock
) -> None:
    make = generator(source)
    lease = source.current()
    grant = source.grant
    assert grant is not None
    make()
    service.unreachable = True
    clock.advance(LIFETIME_S / 2)
    assert not source.renew_once(lease, grant)
    make()  # still before the deadline: the node is still ours
    assert lease.deadline_mono_ns is not None
    clock.now = lease.deadline_mono_ns
    with pytest.raises(NodeUnavailableError):
        make()  # no new node to be had, and never the old one


def test_the_watchdog_revokes_at_the_deadline_while_the_renewer_is_stuck() -> None:
    # Real clocks and threads: the verdict is the order of events, not their timing.
    service = FakeService(FakeClock())
    service.clock = _RealClock()
    service.renew_gate = threading.Event()  # every renewal hangs (a server that stopped)
    lost = threading.Event()
    with LeasedNodeSource(service, spares=0, lifetime_s=2, margin_s=0.5) as source:
        source.subscribe(lambda e: lost.set() if e.kind is NodeEventKind.LOST else None)
        try:
            lease = source.current()
            assert lease.deadline_mono_ns is not None
            assert lost.wait(30), "no LOST event while the renewal hung"
            assert _system.monotonic_ns() >= lease.deadline_mono_ns
        finally:
            service.renew_gate.set()


class _RealClock(FakeClock):
    @property
    def now(self) -> int:
        return _system.monotonic_ns()

    @now.setter
    def now(self, value: int) -> None:
        pass


def test_a_renewal_confirmed_after_the_node_was_revoked_here_does_not_revive_it(
    service: FakeService, clock: FakeClock
) -> None:
    # The renewal is processed by the service (the lease there is still live: 10 s) but
    # its reply comes back only after this source's own deadline (9 s: lifetime minus
    # margin) passed and the node was revoked here. The rule (leased.py, renew_once): a
    # renewal confirmed for a lease already revoked does not revive it; the node stays
    # lost and is given back. Deterministic: the revocation runs inside the fake's renew,
    # between the service processing the request and the reply reaching the source.
    events: list[NodeEvent] = []
    with LeasedNodeSource(
        service,
        spares=0,
        lifetime_s=LIFETIME_S,
        margin_s=MARGIN_S,
        on_loss=OnNodeLoss.RAISE,  # the revocation then needs no new request
        random_bytes=counting_bytes(),  # type: ignore[arg-type]
        clock=lambda: WALL_NS,
        threads=False,
    ) as source:
        source.subscribe(events.append)
        lease = source.current()
        grant = source.grant
        assert grant is not None and lease.deadline_mono_ns is not None
        deadline = lease.deadline_mono_ns
        renew = service.renew

        def renew_then_revoke_before_the_reply(grant: Grant, lifetime_s: int) -> int | None:
            # Still within the service's lifetime (renewed there), past our deadline.
            clock.now = deadline
            ttl_ns = renew(grant, lifetime_s)
            assert ttl_ns is not None, "the service renewed: the lease was live there"
            with pytest.raises(NodeUnavailableError):
                source.current()  # revoked here: LOST, and RAISE gives no new node
            return ttl_ns

        service.renew = renew_then_revoke_before_the_reply  # type: ignore[method-assign]
        assert not source.renew_once(lease, grant)
        kinds = [event.kind for event in events]
        assert kinds == [NodeEventKind.GRANTED, NodeEventKind.LOST]
        assert source.grant is None
        assert service.released == [lease.node]  # given back, not kept at the service
        with pytest.raises(NodeUnavailableError):
            source.current()  # still lost (RAISE): the old node is not handed out again
        source.restart()
        again = source.current()
        assert again.generation == lease.generation + 1 and again.node != lease.node
