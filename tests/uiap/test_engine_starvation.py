"""A forged flood at 100,000 Claim-Attempts a second, without a key, does not starve a relay.

The site is a line A - R - B: B holds a uid, A claims it, and a hostile sender on A's link
("ar") sends Claim-Attempts from a new link-local source each, as fast as 100,000 a second
of simulated time, for the whole claim. Every rate bucket of R's "ar" interface is spent at
once, so A's attempts reach R over budget: R must still forward them to B (§4.2.2.1 "MUST
forward") and relay B's deny back to A (§4.3.2). Delivery takes ``HOP_DELAY`` per hop, so
the deny crosses R while thousands of forged attempts arrive there; time is injected, the
order is fixed by the seed, nothing depends on the machine.

The limit this rests on, derived from the configuration and not from the engine: a record
of an over-budget attempt lives in a table of ``max_overflow_records`` that the flood
churns at its rate, so R relays a deny that comes back within
``max_overflow_records / rate`` seconds (41 ms at the defaults and 100,000/s);
``HOP_DELAY`` keeps the round trip from R to B and back well inside that. Removing the
overflow table (``max_overflow_records=0``, over-budget attempts not forwarded) makes every
seed grant A's claim, and so does a hop delay of 30 ms (a round trip past the churn time).

References: UIAP §2.4.3, §2.4.5, §4.2.2.1, §4.3.2, §7.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Iterator

import pytest
from engine_wire import DOMAIN, attempt, unique

from uuidkit.uiap import (
    MULTICAST,
    ClaimFailed,
    ClaimSucceeded,
    DomainID,
    Engine,
    EngineConfig,
    FailureReason,
    Transmit,
    UIDSpace,
    encode,
)

FORGED_PER_SECOND = 100_000
#: One hop's delivery time: a busy LAN. The deny's round trip from R (two hops) must stay
#: within the overflow table's churn time (module doc).
HOP_DELAY = 0.002
#: uuidkit's defaults, with the short claim timers the namespace tests use (the starvation
#: depends on the forged rate against the buckets and tables, not on how long a claim
#: lasts; a short claim keeps the run to tens of thousands of forged datagrams).
CONFIG = EngineConfig(claim_period=0.05, claim_timeout=0.1)
#: Tables fed from the network, with their caps (EngineConfig).
CAPS = {
    "_floods": CONFIG.max_flood_records,
    "_overflow": CONFIG.max_overflow_records,
    "_limiter": CONFIG.max_tracked_sources + 2,  # plus one bucket per interface
    "_proxies": CONFIG.max_proxy_records,
    "_events": CONFIG.max_queued_events,
}
#: Another domain than the contested uid's: the forgeries conflict with nothing and no
#: forged proxy can deny A's claim (the verdict is R's forwarding, not a forged proxy).
FORGED_DOMAIN = DomainID.parse("0fff:0000:00ee:0000")
LINKS = {"ar": ("A", "R"), "rb": ("R", "B")}


def forged_attempts(rng: random.Random) -> Iterator[tuple[bytes, str]]:
    """Claim-Attempts with fresh Message IDs, one in four X+R, each from a new fe80:: source."""
    uid = UIDSpace.unique(b"\0\0\0\0")
    plain = bytearray(encode(attempt(1, 0, uid)))
    proxy = bytearray(encode(attempt(1, 0, uid, proxy=True, reclaim=True, lifetime=3600)))
    for template in (plain, proxy):
        template[24:32] = FORGED_DOMAIN.value.to_bytes(8)  # Domain ID (UIAP §4.1)
    for index in itertools.count():
        data = proxy if index % 4 == 3 else plain
        data[8:16] = (rng.getrandbits(63) + 1).to_bytes(8)  # Originating Device ID
        data[16:20] = rng.getrandbits(32).to_bytes(4)  # Sequence Number
        data[36:40] = rng.getrandbits(32).to_bytes(4)  # the UID
        yield bytes(data), f"fe80::{rng.getrandbits(64):x}"


class Line:
    """Engines A, R, B on links "ar" and "rb"; datagrams take ``HOP_DELAY`` per hop."""

    def __init__(self, seed: int) -> None:
        self.engines = {
            name: Engine(device_id, random.Random(seed * 10 + device_id), CONFIG)
            for device_id, name in enumerate("ARB", start=1)
        }
        for link, members in LINKS.items():
            for name in members:
                self.engines[name].add_interface(link)
        self.now = 0.0
        self._queue: list[tuple[float, int, str, str, str, bytes]] = []
        self._order = itertools.count()
        self.results: dict[str, list[object]] = {name: [] for name in self.engines}
        self.largest: dict[tuple[str, str], int] = {}

    def step_to(self, until: float) -> None:
        """Deliver queued datagrams and run timers due up to ``until``, in time order."""
        while True:
            timers = [(t, n) for n, e in self.engines.items() if (t := e.get_timer()) is not None]
            due_timer = min(timers) if timers else None
            due_datagram = self._queue[0][0] if self._queue else None
            if (
                due_timer is not None
                and due_timer[0] <= until
                and (due_datagram is None or due_timer[0] <= due_datagram)
            ):
                self.now = due_timer[0]
                self.engines[due_timer[1]].handle_timer(self.now)
                self._after(due_timer[1])
            elif due_datagram is not None and due_datagram <= until:
                self.now, _, receiver, link, sender, data = heapq.heappop(self._queue)
                self.engines[receiver].receive_datagram(data, link, sender, self.now)
                self._after(receiver)
            else:
                self.now = until
                return

    def hostile(self, data: bytes, source: str) -> None:
        """A forged datagram multicast on "ar" at ``now``: A and R both receive it."""
        for name in LINKS["ar"]:
            self.engines[name].receive_datagram(data, "ar", source, self.now)
            self._after(name)

    def _after(self, name: str) -> None:
        engine = self.engines[name]
        for transmit in engine.datagrams_to_send():
            self._transmit(name, transmit)
        for table, cap in CAPS.items():
            size = len(getattr(engine, table))
            assert size <= cap, (name, table, size)
            key = (name, table)
            self.largest[key] = max(self.largest.get(key, 0), size)
        while (event := engine.next_event()) is not None:
            if isinstance(event, ClaimSucceeded | ClaimFailed):
                self.results[name].append(event)

    def _transmit(self, sender: str, transmit: Transmit) -> None:
        link = str(transmit.interface)
        for receiver in LINKS[link]:
            if receiver == sender or transmit.destination not in (MULTICAST, receiver):
                continue
            due = self.now + HOP_DELAY
            entry = (due, next(self._order), receiver, link, sender, transmit.data)
            heapq.heappush(self._queue, entry)


@pytest.mark.slow  # about 15 s of CPU per seed: 40,000 forged datagrams through three engines
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_relay_under_a_forged_flood_relays_the_holders_deny(seed: int) -> None:
    assert CONFIG.max_overflow_records / FORGED_PER_SECOND > 2 * HOP_DELAY
    line = Line(seed)
    space = unique(5)
    line.engines["B"].claim(DOMAIN, space, 3600, 0.0)
    line.step_to(3.0)
    assert [type(e) for e in line.results["B"]] == [ClaimSucceeded]
    forged = forged_attempts(random.Random(seed))
    rng = random.Random(-seed)
    # The flood starts long enough before A's claim to spend R's bucket on "ar" (its burst
    # at the forged rate), at a random instant, and lasts a claim's time past A's result.
    claim = CONFIG.longest_claim_seconds()
    start = 3.0 + rng.random() * claim
    claim_at = start + 2 * CONFIG.interface_burst / FORGED_PER_SECOND + rng.random() * claim
    end = claim_at + 2 * claim
    handle = None
    for index in itertools.count():
        at = start + index / FORGED_PER_SECOND
        if at > end:
            break
        if handle is None and at >= claim_at:
            line.step_to(claim_at)
            handle = line.engines["A"].claim(DOMAIN, space, 3600, line.now)
            line._after("A")
        line.step_to(at)
        line.hostile(*next(forged))
    line.step_to(end + 1.0)
    (result,) = line.results["A"]
    assert isinstance(result, ClaimFailed) and result.claim == handle, result
    assert result.reason is FailureReason.DENIED
    relay = line.engines["R"]
    # R forwarded the flood over budget rather than dropping it, and relayed B's deny.
    assert relay.stats.forwarded_over_budget > 0
    assert relay.stats.denies_forwarded >= 1
    print(f"seed {seed}: largest tables {line.largest}")
