"""The own-claim index finds exactly the claims a linear scan would (UIAP §4.2.2.1).

An incoming Claim-Attempt "MUST compare the UID space ... to its own list of current
claims"; ``uuidkit.uiap.index`` does it by bisection over one domain's sorted, disjoint
intervals. Here random claims (unique values, ranges, prefixes, some refused as local
conflicts) are made, released and compared with random spaces, and every answer is checked
against comparing with each claim in turn.
"""

from __future__ import annotations

import random

from engine_wire import DOMAIN
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.uiap import ClaimFailed, Engine, NumberSpace, UIDSpace
from uuidkit.uiap.engine import EngineConfig
from uuidkit.uiap.index import DomainClaims

#: The draft's behaviour only: these tests pin the draft's mechanics (docs/uiap.md).
DRAFT = EngineConfig.draft_only()

_OCTETS = st.lists(st.sampled_from([0, 1, 2, 0x80, 0xFF]), max_size=3).map(bytes)


@st.composite
def spaces(draw: st.DrawFn) -> UIDSpace:
    kind = draw(st.sampled_from(["unique", "range", "prefix"]))
    if kind == "range":
        low, high = sorted([draw(_OCTETS), draw(_OCTETS)])
        return UIDSpace.range(low, high)
    return UIDSpace.prefix(draw(_OCTETS)) if kind == "prefix" else UIDSpace.unique(draw(_OCTETS))


@settings(max_examples=200, deadline=None)
@given(st.lists(spaces(), max_size=25), st.lists(spaces(), max_size=10), st.data())
def test_the_index_finds_what_a_linear_scan_finds(
    claimed: list[UIDSpace], probes: list[UIDSpace], data: st.DataObject
) -> None:
    engine = Engine(1, random.Random(0), DRAFT)
    handles = {}
    for space in claimed:
        handle = engine.claim(DOMAIN, space, 60, 0.0)
        if not any(isinstance(e, ClaimFailed) for e in iter(engine.next_event, None)):
            handles[handle] = space
    for handle in data.draw(st.lists(st.sampled_from(sorted(handles) or [0]), max_size=5)):
        if handles.pop(handle, None) is not None:
            engine.release(handle, 0.0)
    rules = NumberSpace.generic(DOMAIN)
    index: DomainClaims | None = engine._own_index.get(DOMAIN)
    assert (index is None) == (not handles)
    for probe in probes + claimed:
        expected = sorted(h for h, space in handles.items() if rules.overlaps(space, probe))
        found = sorted(index.meeting(rules.interval(probe))) if index is not None else []
        assert found == expected
