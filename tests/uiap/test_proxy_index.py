"""Proxy records indexed by interval (uuidkit.uiap.proxy): the same answers as comparing
with every record (UIAP §4.2.2.1, §5.1), at the cost of a bisection, not a scan."""

from __future__ import annotations

import pytest
from engine_wire import DOMAIN
from hypothesis import given
from hypothesis import strategies as st

from uuidkit.uiap import proxy as proxy_module
from uuidkit.uiap.message import Message, MessageType
from uuidkit.uiap.proxy import MAX_OVERLAPPING, ProxyTable
from uuidkit.uiap.space import NumberSpace, UIDSpace, intervals_overlap

RULES = NumberSpace.generic(DOMAIN)


def announcement(claimant: int, low: int, high: int) -> Message:
    space = UIDSpace.range(low.to_bytes(2, "big"), high.to_bytes(2, "big"))
    return Message(
        MessageType.CLAIM_ATTEMPT, claimant, 1, DOMAIN, space, proxy=True, reclaim=True,
        lifetime=600, claim_reference=claimant,
    )  # fmt: skip


def fill(table: ProxyTable, spans: list[tuple[int, int]]) -> None:
    for claimant, (low, high) in enumerate(spans, start=1):
        message = announcement(claimant, low, high)
        interval = RULES.interval(message.space)
        if not table.full_for(message, interval):
            table.remember(message, 0.0, interval)


spans = st.tuples(st.integers(0, 500), st.integers(0, 60)).map(lambda p: (p[0], p[0] + p[1]))


@given(st.lists(spans, max_size=80), st.lists(spans, min_size=1, max_size=10), st.data())
def test_meeting_equals_comparing_with_every_record(
    stored: list[tuple[int, int]], queries: list[tuple[int, int]], data: st.DataObject
) -> None:
    table = ProxyTable(capacity=1000)
    fill(table, stored)
    # Forget some, so removal keeps the index in step.
    for record in list(table):
        if data.draw(st.booleans()):
            table.forget(record)
    for low, high in queries:
        interval = RULES.interval(announcement(9999, low, high).space)
        found = {r.key for r in table.meeting(DOMAIN, interval)}
        expected = {r.key for r in table if intervals_overlap(r.interval, interval)}
        assert found == expected


def test_an_incoming_attempt_is_not_compared_with_every_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = ProxyTable(capacity=2000)
    fill(table, [(3 * i, 3 * i + 1) for i in range(1000)])  # 1,000 disjoint records
    assert len(table) == 1000
    calls = 0

    def counting(a: object, b: object) -> bool:
        nonlocal calls
        calls += 1
        return bool(intervals_overlap(a, b))  # type: ignore[arg-type]

    monkeypatch.setattr(proxy_module, "intervals_overlap", counting)
    interval = RULES.interval(announcement(9999, 1500, 1500).space)
    assert [r.space for r in table.meeting(DOMAIN, interval)] == [announcement(1, 1500, 1501).space]
    # Only the short list of overlapping records is scanned (empty here).
    assert calls <= MAX_OVERLAPPING


def test_overlapping_records_beyond_the_short_list_are_not_kept() -> None:
    table = ProxyTable(capacity=2000)
    fill(table, [(10, 20)] * (MAX_OVERLAPPING + 5))
    assert len(table) == MAX_OVERLAPPING + 1  # one indexed, the rest listed
