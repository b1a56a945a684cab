"""The engine's receive path equals a plain reference engine, datagram for datagram.

The receive path takes shortcuts that must not change what the engine does:

* record expiry compares each flood table's front with the shared lifetime instead of
  calling :meth:`FloodTable.expire` on every table for every datagram;
* the rate limiter refills its token buckets inline;
* the interfaces a flood goes out of are kept per arrival interface;
* flood records are keyed by the Message ID's 96-bit number.

:class:`ReferenceEngine` undoes the first three: it expires every table on every datagram,
admits through :class:`ReferenceLimiter` (one refill per bucket per call, written as the
rule says), and lists the onward interfaces afresh for every flood. Both engines get the
same random stream of foreign Claim-Attempts (repeated Message IDs, hop limits 0-32,
X and R flags), Claim-Denies, junk, own claims, interface changes and time steps longer
than a record's lifetime, under tight caps and rate limits; after every step both must
have sent the same octets, emitted the same events, and hold the same counters and
tables.

References: UIAP §2.4.2, §2.4.3, §4.2.2.1, §4.3.2, §5.1, §7.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from engine_wire import DOMAIN, attempt, span, unique
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.uiap import Engine, EngineConfig, encode
from uuidkit.uiap.events import DropReason
from uuidkit.uiap.limits import RateLimiter
from uuidkit.uiap.message import MessageID
from uuidkit.uiap.records import FloodRecord, FloodTable

INTERFACES = ("a", "b", "c")


class ReferenceLimiter(RateLimiter):
    """Admission as the rule reads (limits.py): refill each bucket by the time passed (never
    beyond its burst, nothing for time going backwards), refuse without a token in either
    bucket, else take one from each; the least recently used source bucket goes first."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.sources: OrderedDict[tuple[Hashable, Hashable], list[float]] = OrderedDict()
        self.links: dict[Hashable, list[float]] = {}

    def __len__(self) -> int:
        return len(self.sources) + len(self.links)

    @staticmethod
    def _refill(bucket: list[float], rate: float, burst: float, now: float) -> float:
        tokens, updated = bucket
        if now - updated > 0:
            bucket[0], bucket[1] = min(burst, tokens + (now - updated) * rate), now
        return bucket[0]

    def admit(self, interface: Hashable, source: Hashable, now: float) -> DropReason | None:
        source_bucket = link_bucket = None
        if self.source_rate is not None:
            key = (interface, source)
            if key not in self.sources:
                self.sources[key] = [self.source_burst, now]
                if len(self.sources) > self.max_sources:
                    self.sources.popitem(last=False)
            self.sources.move_to_end(key)
            source_bucket = self.sources[key]
            if self._refill(source_bucket, self.source_rate, self.source_burst, now) < 1:
                return DropReason.RATE_LIMITED_SOURCE
        if self.interface_rate is not None:
            link_bucket = self.links.setdefault(interface, [self.interface_burst, now])
            if self._refill(link_bucket, self.interface_rate, self.interface_burst, now) < 1:
                return DropReason.RATE_LIMITED_INTERFACE
            link_bucket[0] -= 1
        if source_bucket is not None:
            source_bucket[0] -= 1
        return None

    def forget_interface(self, interface: Hashable) -> None:
        self.links.pop(interface, None)


class ReferenceEngine(Engine):
    """The engine with every receive-path shortcut replaced by the plain mechanism."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limiter = self._limiter
        self._limiter = ReferenceLimiter(
            limiter.source_rate,
            limiter.source_burst,
            limiter.interface_rate,
            limiter.interface_burst,
            limiter.max_sources,
        )

    def _expire_records(self, now: float) -> None:
        for table in (self._floods, self._own_floods, self._overflow):
            table.expire(now)

    def _forward_attempt(self, *args: Any) -> None:
        self._onward.clear()  # the onward interfaces listed afresh every time
        super()._forward_attempt(*args)


def _tables(engine: Engine) -> list[list[tuple[object, ...]]]:
    return [
        [(r.key, r.interface, r.sender, r.last_received, r.deny_sent) for r in table]
        for table in (engine._floods, engine._own_floods, engine._overflow)
    ]


def _snapshot(engine: Engine) -> tuple[object, ...]:
    sent = [(t.interface, t.destination, t.data) for t in engine.datagrams_to_send()]
    events = []
    while (event := engine.next_event()) is not None:
        events.append(event)
    return sent, events, engine.stats, engine.table_sizes(), _tables(engine), engine.get_timer()


def _datagram(step: tuple[Any, ...]) -> bytes:
    device, sequence, value, wide, hop_limit, flags, deny = step
    space = span(value, value + 1) if wide else unique(value)
    message = attempt(
        device,
        sequence,
        space,
        hop_limit=hop_limit,
        reclaim=flags > 0,
        proxy=flags > 1,
        lifetime=30,
    )
    return encode(message.deny() if deny else message)


datagrams = st.tuples(
    st.integers(2, 4),  # originating device (this engine is 1)
    st.integers(0, 5),  # sequence: few Message IDs, so copies and repeats are common
    st.integers(0, 5),  # UID: this engine claims some of these
    st.booleans(),  # a range instead of a unique value
    st.sampled_from([0, 1, 32]),  # hop limit
    st.integers(0, 2),  # 0: plain, 1: R, 2: X and R
    st.integers(0, 3).map(lambda roll: roll == 0),  # a Claim-Deny of it, one time in four
)
#: What happens at each step: mostly datagrams; sometimes junk, an own claim, time passing
#: (now and then past a flood record's 10 s), or interface "c" coming or going.
KINDS = ["datagram"] * 6 + ["junk", "claim", "wait", "interface"]
steps = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        datagrams,
        st.sampled_from(INTERFACES),
        st.integers(1, 4),  # link-local source: more than the 2 tracked under tight caps
        st.one_of(st.floats(0.0, 2.0), st.floats(9.0, 12.0)),  # seconds to wait
        st.binary(max_size=40),  # junk
    ),
    min_size=10,
    max_size=80,
)
configs = st.sampled_from(
    [
        EngineConfig(drop_events=True),
        EngineConfig(
            source_rate=1.0,
            source_burst=2,
            interface_rate=2.0,
            interface_burst=3,
            max_tracked_sources=2,
            max_flood_records=4,
            max_overflow_records=2,
            max_proxy_records=2,
        ),
        EngineConfig.draft_only(
            source_rate=0.5, source_burst=1, interface_rate=None, max_overflow_records=0
        ),
    ]
)


@settings(max_examples=300, deadline=None)
@given(configs, steps)
def test_the_receive_path_equals_the_reference(
    config: EngineConfig, script: list[tuple[str, tuple[Any, ...], str, int, float, bytes]]
) -> None:
    fast, plain = Engine(1, random.Random(5), config), ReferenceEngine(1, random.Random(5), config)
    for engine in (fast, plain):
        for interface in INTERFACES[:2]:
            engine.add_interface(interface)
    now = 0.0
    for kind, datagram, interface, source, wait, junk in script:
        for engine in (fast, plain):
            if kind == "datagram":
                engine.receive_datagram(_datagram(datagram), interface, source, now)
            elif kind == "junk":
                engine.receive_datagram(junk, interface, source, now)
            elif kind == "claim":
                engine.claim(DOMAIN, unique(datagram[2]), 20, now)
            elif kind == "interface" and "c" not in engine._interfaces:
                engine.add_interface("c")
            elif kind == "interface":
                engine.remove_interface("c")
            else:
                engine.handle_timer(now)
        assert _snapshot(fast) == _snapshot(plain)
        if kind == "wait":
            now += wait


def test_a_flood_record_is_found_by_the_message_ids_number() -> None:
    # The key is MessageID.value: device ID above the 32-bit sequence number (UIAP §4.1,
    # octets 8-19 of the header).
    table = FloodTable(10.0)
    message_id = MessageID(0x0102030405060708, 0x090A0B0C)
    record = FloodRecord(message_id.value, "eth0", 1, 0.0, 0.0)
    table.add(record)
    assert record.message_id == message_id
    assert table.find(0x0102030405060708_090A0B0C) is record is table.get(message_id)
