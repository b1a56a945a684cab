"""The engine's boundary contract (network input never raises), by property tests.

``receive_datagram`` never raises for network input: random bytes, mangled datagrams and
random valid messages (drawn from small pools so that IDs repeat, spaces overlap and denies
match) are counted and dropped or processed, mixed with claims, releases and timers. Any
exception escaping is a bug. Along the way the engine must keep the draft's invariants:
every datagram it sends decodes; Claim-Attempts are multicast; a Claim-Deny goes to a
source it was given; at most one Claim-Deny per Claim-Attempt (§4.3.2); nothing is sent
with a hop limit above the configured one.
"""

from __future__ import annotations

import contextlib
import random
from collections import Counter
from collections.abc import Hashable

from engine_wire import DOMAIN, OTHER_DOMAIN
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uuidkit.uiap import (
    MULTICAST,
    DomainID,
    Engine,
    EngineConfig,
    Message,
    MessageID,
    MessageType,
    NumberSpace,
    SpaceError,
    UIDSpace,
    decode,
    encode,
)

OWN_ID = 7
INTERFACES = ("a", "b", "c")
SOURCES = (11, 12, 13)

spaces = st.one_of(
    st.integers(0, 6).map(lambda v: UIDSpace.unique(bytes([v]))),
    st.tuples(st.integers(0, 6), st.integers(0, 6)).map(
        lambda r: UIDSpace.range(bytes([min(r)]), bytes([max(r)]))
    ),
    st.just(UIDSpace.prefix(b"")),
)
domains: st.SearchStrategy[DomainID] = st.sampled_from([DOMAIN, OTHER_DOMAIN])


@st.composite
def messages(draw: st.DrawFn) -> Message:
    """Valid messages from small pools, so that Message IDs and spaces collide."""
    return Message(
        draw(st.sampled_from(MessageType)),
        draw(st.sampled_from([1, 2, OWN_ID])),
        draw(st.integers(0, 4) | st.sampled_from([(1 << 32) - 1, 1 << 31])),
        draw(domains),
        draw(spaces),
        lifetime=draw(st.sampled_from([0, 1, 5, 0xFFFF_FFFF])),
        hop_limit=draw(st.sampled_from([0, 1, 2, 32, 255])),
        claim_reference=draw(st.integers(0, 2)),
        proxy=draw(st.booleans()),
        reclaim=draw(st.booleans()),
    )


@st.composite
def datagrams(draw: st.DrawFn) -> bytes:
    """A valid message, one with a few bytes changed, or any bytes at all."""
    kind = draw(st.sampled_from(["valid", "mangled", "random"]))
    if kind == "random":
        return draw(st.binary(max_size=80))
    data = bytearray(encode(draw(messages())))
    if kind == "mangled":
        for _ in range(draw(st.integers(1, 3))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)


receive = st.tuples(
    st.just("receive"), datagrams(), st.sampled_from(INTERFACES), st.sampled_from(SOURCES)
)
claim = st.tuples(st.just("claim"), domains, spaces, st.booleans(), st.booleans())
actions = st.lists(
    st.one_of(
        receive,
        receive,
        receive,
        claim,
        st.tuples(st.just("release"), st.integers(1, 4)),
        st.tuples(st.just("timer")),
        st.tuples(st.just("remove"), st.sampled_from(INTERFACES)),
    ),
    max_size=40,
)


def check_transmits(engine: Engine, sources: set[Hashable], denies: Counter[MessageID]) -> None:
    for transmit in engine.datagrams_to_send():
        message = decode(transmit.data)
        assert message.hop_limit <= engine.config.hop_limit
        if message.type is MessageType.CLAIM_ATTEMPT:
            assert transmit.destination is MULTICAST
        else:
            assert transmit.destination in sources
            denies[message.message_id] += 1
            assert denies[message.message_id] == 1, "two Claim-Denies for one Claim-Attempt"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions, st.integers(0, 2**32 - 1), st.booleans())
def test_network_input_never_raises_and_invariants_hold(
    steps: list[tuple[object, ...]], seed: int, strict_domain: bool
) -> None:
    config = EngineConfig.draft_only(flood_record_lifetime=3.0)
    # With ``strict_domain`` DOMAIN's specification is known: flat (no prefix claims),
    # octet aligned; decode() rejects what it forbids and the engine compares by it.
    domains = {DOMAIN: NumberSpace(DOMAIN, hierarchical=False)} if strict_domain else None
    engine = Engine(OWN_ID, random.Random(seed), config, domains=domains)
    for interface in INTERFACES:
        engine.add_interface(interface)
    now, received, handles = 0.0, 0, 0
    sources: set[Hashable] = set()
    denies: Counter[MessageID] = Counter()
    for step in steps:
        now += 0.3
        match step:
            case ("receive", bytes() as data, str(interface), int(source)):
                sources.add(source)
                engine.receive_datagram(data, interface, source, now)
                received += 1
            case ("claim", DomainID() as domain, UIDSpace() as space, bool(reclaim), bool(proxy)):
                with contextlib.suppress(SpaceError):  # a prefix in the flat domain
                    handle = engine.claim(domain, space, 2, now, reclaim=reclaim, proxy=proxy)
                    handles = max(handles, handle)
            case ("release", int(chosen)) if chosen <= handles:
                engine.release(chosen, now)
            case ("timer",):
                deadline = engine.get_timer()
                if deadline is not None:
                    now = max(now, deadline)
                    engine.handle_timer(now)
            case ("remove", str(interface)) if interface in engine._interfaces:
                engine.remove_interface(interface)
        check_transmits(engine, sources, denies)
    while list(iter(engine.next_event, None)):
        pass
    assert engine.stats.received == received
