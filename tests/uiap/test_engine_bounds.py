"""Every table the network feeds has a cap and an expiry, and a flood of forged
Claim-Attempts neither grows memory past a documented bound nor stops honest claims.

The memory bound is derived from the caps of ``EngineConfig`` and the per-entry budgets
documented in docs/uiap.md ("Bounded state"), not from anything the engine reports.

References: UIAP §4.2.2.1, §5.1, §7, §9.
"""

from __future__ import annotations

import gc
import random
import sys
import types
from collections.abc import Iterator

import pytest
from engine_wire import DOMAIN, attempt, inject, run_timers, unique

from uuidkit.uiap import (
    LIFETIME_INFINITE,
    ClaimFailed,
    ClaimSucceeded,
    DomainID,
    DropReason,
    Engine,
    EngineConfig,
    FailureReason,
    Message,
    MessageType,
    ProxyDefenseEnded,
    ProxyDefenseStarted,
    UIDSpace,
    decode,
    encode,
)
from uuidkit.uiap.limits import RateLimiter

#: Per-entry memory budgets, in bytes, as documented in docs/uiap.md ("Bounded state").
FLOOD_RECORD_BYTES = 512
PROXY_RECORD_BYTES = 1536
SOURCE_BUCKET_BYTES = 512
QUEUED_EVENT_BYTES = 256
FIXED_BYTES = 2 * 1024 * 1024

FORGED_ATTEMPTS = 100_000
FORGED_PROXIES = 10_000
ATTACK_SECONDS = 5.0
#: Memory is measured after every this many forged datagrams (and after the last one).
#: Nothing held shrinks while the flood lasts (it ends before the first flood record is
#: ``flood_record_lifetime`` old, and nobody drains the events), so what is held only
#: grows until the caps stop it: a missing cap is seen at every later measurement, and the
#: last one comes after the whole flood.
MEASURE_EVERY = 22_000


def memory_bound(config: EngineConfig) -> int:
    """The documented bound: every cap times its entry's budget, plus the fixed part."""
    return (
        config.max_flood_records * FLOOD_RECORD_BYTES
        + config.max_proxy_records * PROXY_RECORD_BYTES
        + config.max_tracked_sources * SOURCE_BUCKET_BYTES
        + config.max_overflow_records * FLOOD_RECORD_BYTES
        + config.max_queued_events * QUEUED_EVENT_BYTES
        + FIXED_BYTES
    )


def _is_state(obj: object) -> bool:
    """Data, not program: modules, code and builtins are not entered, classes and functions
    only when uuidkit defines them (their dicts and closures may hold caches)."""
    if isinstance(obj, types.ModuleType | types.CodeType | types.BuiltinFunctionType):
        return False
    if isinstance(obj, type | types.FunctionType):
        return str(getattr(obj, "__module__", "")).startswith("uuidkit")
    return True


def held_bytes(engine: Engine) -> int:
    """Bytes (``sys.getsizeof``) of every object reachable from ``engine`` and from every
    uuidkit module: the engine's tables and the process-wide caches (the decoder's Domain
    IDs, the number spaces) both count. tracemalloc measures the same state and agrees
    within a few percent, but it makes the engine six times slower."""
    roots: list[object] = [engine]
    roots += [vars(m) for n, m in sys.modules.items() if n.partition(".")[0] == "uuidkit"]
    seen: set[int] = set()
    total = 0
    while roots:
        obj = roots.pop()
        if id(obj) in seen or not _is_state(obj):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj, 0)
        roots.extend(gc.get_referents(obj))
    return total


def forged_datagrams(seed: int) -> Iterator[bytes]:
    """100,000 Claim-Attempts from random device IDs in the honest domain and 10,000 X+R
    proxies (infinite lifetime, random prefixes) in random domains, interleaved."""
    rng = random.Random(seed)
    attempt_template = bytearray(encode(attempt(1, 0, UIDSpace.unique(b"\0\0\0\0"))))
    every = FORGED_ATTEMPTS // FORGED_PROXIES
    for index in range(FORGED_ATTEMPTS + FORGED_PROXIES):
        if index % (every + 1) == every:
            domain = DomainID(rng.getrandbits(56) << 8)
            space = UIDSpace.prefix(rng.randbytes(rng.randrange(1, 6)))
            message = Message(
                MessageType.CLAIM_ATTEMPT, rng.getrandbits(63) + 1, rng.getrandbits(32),
                domain, space, lifetime=LIFETIME_INFINITE, proxy=True, reclaim=True,
                claim_reference=rng.getrandbits(32),
            )  # fmt: skip
            yield encode(message)
            continue
        data = attempt_template
        data[8:16] = (rng.getrandbits(63) + 1).to_bytes(8)  # Originating Device ID
        data[16:20] = rng.getrandbits(32).to_bytes(4)  # Sequence Number
        data[36:40] = rng.getrandbits(32).to_bytes(4)  # the UID
        yield bytes(data)


@pytest.fixture(scope="module")
def forged_flood() -> list[bytes]:
    """The flood, made once for both runs (10 MB while the module runs)."""
    return list(forged_datagrams(seed=7))


class Site:
    """Target T (device 1) on links "evil" and "good"; honest H (device 2) on "good"."""

    def __init__(self, config: EngineConfig) -> None:
        self.target = Engine(1, random.Random(1), config)
        self.honest = Engine(2, random.Random(2), config)
        self.target.add_interface("evil")
        self.target.add_interface("good")
        self.honest.add_interface("good")

    def pump(self, now: float) -> None:
        """Run both engines' timers and move datagrams on "good" until it is quiet."""
        target, honest = self.target, self.honest
        target.handle_timer(now)
        honest.handle_timer(now)
        while True:
            to_honest = [t for t in target.datagrams_to_send() if t.interface == "good"]
            to_target = honest.datagrams_to_send()
            if not to_honest and not to_target:
                return
            for transmit in to_honest:
                honest.receive_datagram(transmit.data, "good", 1, now)
            for transmit in to_target:
                target.receive_datagram(transmit.data, "good", 2, now)


def drain(engine: Engine) -> list[object]:
    return list(iter(engine.next_event, None))


@pytest.mark.slow
@pytest.mark.parametrize("limits", ["default", "off"])
def test_a_forged_flood_stays_within_the_memory_bound_and_honest_claims_work(
    limits: str, forged_flood: list[bytes]
) -> None:
    unlimited = {"source_rate": None, "interface_rate": None}
    config = EngineConfig.draft_only(**(unlimited if limits == "off" else {}))
    bound = memory_bound(config)
    site = Site(config)
    target, honest = site.target, site.honest
    target.claim(DOMAIN, unique(5), 3600, 0.0)
    run_timers(target, 3.0)
    site.pump(3.0)
    start = 3.0
    base = held_bytes(target)
    total = len(forged_flood)
    assert total == FORGED_ATTEMPTS + FORGED_PROXIES
    step = ATTACK_SECONDS / total
    for index, data in enumerate(forged_flood):
        now = start + index * step
        # Forged source addresses too: every datagram from a new link-local source.
        target.receive_datagram(data, "evil", ("fe80::", index), now)
        target.datagrams_to_send()
        if index % 100 == 0:
            site.pump(now)
            if index == total // 5:  # one second into the attack
                fresh = honest.claim(DOMAIN, unique(7), 600, now)
                taken = honest.claim(DOMAIN, unique(5), 600, now)
                own = target.claim(DOMAIN, unique(9), 600, now)
        if (index + 1) % MEASURE_EVERY == 0 or index + 1 == total:
            held = held_bytes(target) - base
            assert held < bound, f"{held} bytes after {index + 1} datagrams, bound {bound}"
    site.pump(start + ATTACK_SECONDS + 5.0)
    held = held_bytes(target) - base
    assert held < bound, f"{held} bytes after the flood expired, bound {bound}"
    honest_results = [e for e in drain(honest) if isinstance(e, ClaimSucceeded | ClaimFailed)]
    assert [(type(e), e.claim) for e in honest_results] == [
        (ClaimFailed, taken),  # denied by T, who holds 5
        (ClaimSucceeded, fresh),
    ]
    assert isinstance(honest_results[0], ClaimFailed)
    assert honest_results[0].reason is FailureReason.DENIED
    assert any(isinstance(e, ClaimSucceeded) and e.claim == own for e in drain(target))
    stats = target.stats
    if limits == "off":
        # The caps alone: the flood table evicts, the proxy table refuses.
        assert stats.flood_records_evicted > 0
        assert stats.dropped[DropReason.PROXY_TABLE_FULL] > 0
    else:
        limited = stats.dropped[DropReason.RATE_LIMITED_INTERFACE]
        limited += stats.dropped[DropReason.RATE_LIMITED_SOURCE]
        # Admitted: at most the interface's burst plus its rate over the attack.
        admitted = total - limited
        assert config.interface_rate is not None
        assert admitted <= config.interface_burst + config.interface_rate * ATTACK_SECONDS + 1
    assert stats.events_dropped > 0  # nobody drained the events during the attack


# ---------------------------------------------------------------- each bound on its own


def test_flood_records_are_capped_but_own_floods_are_never_evicted() -> None:
    config = EngineConfig.draft_only(max_flood_records=50, source_rate=None, interface_rate=None)
    engine = Engine(1, random.Random(0), config)
    engine.add_interface("a")
    handle = engine.claim(DOMAIN, unique(5), 60, 0.0)
    (own,) = engine.datagrams_to_send()
    for sequence in range(500):
        inject(engine, attempt(7, sequence, unique(9)), "a", 7, 0.1)
    assert engine.stats.flood_records_evicted == 450
    # §4.2.2.3: our own attempt is still remembered: a deny for it fails the claim.
    deny = bytearray(own.data)
    deny[1] |= MessageType.CLAIM_DENY << 4
    engine.receive_datagram(bytes(deny), "a", 7, 0.2)
    results = [e for e in drain(engine) if isinstance(e, ClaimFailed)]
    assert results == [ClaimFailed(handle, FailureReason.DENIED, DOMAIN, unique(5))]
    # An evicted flood's copy is processed again (forwarded, not a duplicate).
    duplicates = engine.stats.dropped[DropReason.DUPLICATE]
    inject(engine, attempt(7, 0, unique(9)), "a", 7, 0.3)
    assert engine.stats.dropped[DropReason.DUPLICATE] == duplicates


def test_proxy_records_are_capped_and_their_lifetime_too() -> None:
    config = EngineConfig.draft_only(max_proxy_records=3, max_proxy_lifetime=100.0)
    engine = Engine(9, random.Random(0), config)
    engine.add_interface("a")
    for claimant in range(1, 6):
        x_r = attempt(claimant, 1, unique(claimant), proxy=True, reclaim=True)
        inject(engine, x_r.replace(lifetime=LIFETIME_INFINITE), "a", claimant, 1.0)
    started = [e for e in drain(engine) if isinstance(e, ProxyDefenseStarted)]
    # §5.1: a proxy "MAY stop defending a claim at any earlier time": 100 s, not for ever.
    assert [(e.claimant, e.expires) for e in started] == [(1, 101.0), (2, 101.0), (3, 101.0)]
    assert engine.stats.dropped[DropReason.PROXY_TABLE_FULL] == 2
    # A known claim may still be renewed when the table is full.
    inject(engine, attempt(1, 2, unique(1), proxy=True, reclaim=True, lifetime=30), "a", 1, 2.0)
    assert engine.stats.dropped[DropReason.PROXY_TABLE_FULL] == 2
    engine.handle_timer(101.0)
    ended = [e.claimant for e in drain(engine) if isinstance(e, ProxyDefenseEnded)]
    assert sorted(ended) == [1, 2, 3]  # claimant 1's renewal ended at 32 s


def test_renewals_leave_the_timer_heap_small() -> None:
    # Each renewal of a proxy record (or reclaim of a claim) used to leave its old
    # deadline in the heap until it came due: one entry per renewal.
    engine = Engine(
        9, random.Random(0), EngineConfig.draft_only(source_rate=None, interface_rate=None)
    )
    engine.add_interface("a")
    handle = engine.claim(DOMAIN, unique(5), 100_000, 0.0)
    run_timers(engine, 5.0)
    for sequence in range(2_000):
        x_r = attempt(1, sequence, unique(1), proxy=True, reclaim=True, lifetime=50_000)
        inject(engine, x_r, "a", 1, 5.0 + sequence * 0.001)
    for step in range(200):
        now = 10.0 + step * 2
        assert engine.claim(DOMAIN, unique(5), 100_000, now, reclaim=True) == handle
        run_timers(engine, now + 1.5)
    live = engine._timers.live
    assert live == 2  # the claim's expiry and the proxy record's
    assert len(engine._timers) <= 2 * live + 32


def test_sequence_runs_are_capped() -> None:
    # §9: forged messages with our device ID and a close sequence number make us jump.
    config = EngineConfig.draft_only(max_sequence_runs=4, source_rate=None, interface_rate=None)
    engine = Engine(1, random.Random(0), config)
    engine.add_interface("a")
    for index in range(50):
        current = engine._sequences.current
        inject(engine, attempt(1, (current + 1) % 2**32, unique(index)), "a", 7, 1.0)
    assert engine.stats.device_id_conflicts == 50
    assert engine._sequences.run_count == 4


def test_network_events_are_capped_but_results_always_queue() -> None:
    config = EngineConfig.draft_only(max_queued_events=10)
    engine = Engine(9, random.Random(0), config)
    engine.add_interface("a")
    handle = engine.claim(DOMAIN, unique(5), 60, 0.0)
    for index in range(100):
        engine.receive_datagram(b"\x01junk", "a", index, 0.1)
    run_timers(engine, 3.0)
    events = drain(engine)
    assert len(events) == 11 and engine.stats.events_dropped == 90
    assert isinstance(events[-1], ClaimSucceeded) and events[-1].claim == handle


def test_token_buckets_refill_with_the_time_passed_in() -> None:
    limiter = RateLimiter(2.0, 3, 1.0, 4, max_sources=2)
    admitted = [limiter.admit("a", "s", 0.0) is None for _ in range(5)]
    assert admitted == [True, True, True, False, False]  # the source's burst of 3
    assert limiter.admit("a", "s", 0.5) is None  # 0.5 s at 2/s: one more for "s"
    assert limiter.admit("a", "s", 0.5) is DropReason.RATE_LIMITED_SOURCE
    # "t" has a full bucket, but the interface's 4 + 0.5 tokens are spent.
    assert limiter.admit("a", "t", 0.5) is DropReason.RATE_LIMITED_INTERFACE
    assert limiter.admit("a", "t", 1.0) is None  # 0.5 s more at 1/s
    assert limiter.admit("a", "u", 1.0) is DropReason.RATE_LIMITED_INTERFACE
    assert len(limiter) == 3  # two sources kept ("s", least recently used, forgotten) + "a"
    assert limiter.admit("a", "s", 0.0) is DropReason.RATE_LIMITED_INTERFACE  # no refill back


def test_without_an_overflow_table_a_rate_limited_attempt_is_denied_but_not_forwarded() -> None:
    # The limits bound what we remember, never whether we defend (§4.2.2.1 "the device
    # MUST send back a Claim-Deny").
    config = EngineConfig.draft_only(source_rate=0.0, source_burst=2, max_overflow_records=0)
    engine = Engine(9, random.Random(0), config)
    engine.add_interface("a")
    engine.add_interface("b")
    engine.claim(DOMAIN, unique(5), 600, 0.0)
    engine.handle_timer(5.0)
    engine.datagrams_to_send()
    for sequence in (1, 2):  # the burst: recorded and forwarded
        inject(engine, attempt(7, sequence, unique(9)), "a", 7, 5.0)
    assert len(engine.datagrams_to_send()) == 2
    inject(engine, attempt(7, 3, unique(9)), "a", 7, 5.0)  # refused: not forwarded
    assert engine.datagrams_to_send() == []
    conflicting = attempt(7, 4, unique(5))
    inject(engine, conflicting, "a", 7, 5.0)
    (deny,) = engine.datagrams_to_send()
    assert (deny.interface, deny.destination) == ("a", 7)
    assert deny.data == encode(conflicting.deny())
    assert engine.stats.dropped[DropReason.RATE_LIMITED_SOURCE] == 2
    assert engine.stats.attempts_received == 2  # nothing recorded past the burst


def test_a_rate_limited_attempt_is_forwarded_and_its_deny_relayed_without_a_proxy_record() -> None:
    # §4.2.2.1 "MUST forward": a spent budget never stops a relay. The attempt is recorded
    # apart (max_overflow_records), so a deny coming back is relayed to its sender.
    config = EngineConfig.draft_only(source_rate=0.0, source_burst=1)
    engine = Engine(9, random.Random(0), config)
    engine.add_interface("a")
    engine.add_interface("b")
    inject(engine, attempt(7, 1, unique(1)), "a", 7, 5.0)  # the burst
    engine.datagrams_to_send()
    over = attempt(7, 2, unique(9), proxy=True, reclaim=True, lifetime=600)
    inject(engine, over, "a", 7, 5.0)
    (forwarded,) = engine.datagrams_to_send()
    assert forwarded.interface == "b" and decode(forwarded.data).message_id == over.message_id
    assert engine.stats.forwarded_over_budget == 1
    assert len(engine._proxies) == 0  # no proxy state from an attempt over budget
    inject(engine, over, "a", 7, 5.0)  # a copy: known, not forwarded twice
    assert engine.datagrams_to_send() == []
    engine.receive_datagram(encode(over.deny()), "b", 3, 5.01)
    (relayed,) = engine.datagrams_to_send()
    assert (relayed.interface, relayed.destination) == ("a", 7)


def test_no_single_source_fills_the_proxy_table() -> None:
    # A forger on one link-local source announces X+R claims under ever new device IDs: it
    # gets its share of the table, no more, and an honest claimant behind another source
    # is still defended (UIAP §5.1: proxy defense is a MAY, so a refused one is dropped).
    share, capacity = 4, 10
    config = EngineConfig(
        max_proxy_records=capacity, max_proxy_records_per_source=share, source_rate=None,
        interface_rate=None,
    )  # fmt: skip
    engine = Engine(9, random.Random(0), config)
    engine.add_interface("a")
    for claimant in range(100, 100 + 3 * capacity):
        forged = attempt(claimant, 1, unique(claimant % 250), proxy=True, reclaim=True)
        inject(engine, forged.replace(lifetime=60), "a", 66, 1.0)
    started = [e.claimant for e in drain(engine) if isinstance(e, ProxyDefenseStarted)]
    assert len(started) == share
    assert engine.stats.dropped[DropReason.PROXY_TABLE_FULL] == 3 * capacity - share
    honest = attempt(5, 1, unique(251), proxy=True, reclaim=True).replace(lifetime=60)
    inject(engine, honest, "a", 5, 1.5)
    assert [e.claimant for e in drain(engine) if isinstance(e, ProxyDefenseStarted)] == [5]
    # A claim already defended may be renewed from its source when the share is used up.
    renewal = attempt(started[0], 2, unique(started[0] % 250), proxy=True, reclaim=True)
    refused = engine.stats.dropped[DropReason.PROXY_TABLE_FULL]
    inject(engine, renewal.replace(lifetime=60), "a", 66, 2.0)
    assert engine.stats.dropped[DropReason.PROXY_TABLE_FULL] == refused


@pytest.mark.parametrize("reclaim", [False, True], ids=["new-claim", "reclaim"])
@pytest.mark.parametrize(
    "config",
    [EngineConfig(), EngineConfig.draft_only(), EngineConfig(claim_period=0.05, claim_timeout=0.1)],
    ids=["defaults", "draft-only", "test-timers"],
)
def test_no_grant_comes_sooner_than_the_shortest_claim(reclaim: bool, config: EngineConfig) -> None:
    # The bound behind "a node-bound generator may outlive its daemon by a little": a holder
    # that stops defending at t lets another device be granted its node no sooner than
    # t + shortest_claim_seconds() (UIAP §2.4.1: the attempts Claim_Period apart, then
    # Claim_Timeout with no deny), whatever that device's timing. Stepped at every deadline.
    engine = Engine(3, random.Random(0), config)
    engine.add_interface("a")
    attempts = config.reclaim_attempts if reclaim else config.claim_attempts
    expected = attempts * config.claim_period + config.claim_timeout  # §2.4.1, §4.4
    handle = engine.claim(DOMAIN, unique(7), 60, 100.0, reclaim=reclaim)
    granted_at = None
    now = 100.0
    while granted_at is None and (deadline := engine.get_timer()) is not None:
        now = deadline
        engine.handle_timer(now)
        if any(isinstance(e, ClaimSucceeded) and e.claim == handle for e in drain(engine)):
            granted_at = now
    assert granted_at is not None
    assert granted_at - 100.0 >= config.shortest_claim_seconds() - 1e-9
    assert granted_at - 100.0 == pytest.approx(expected)
