"""Flood records: expiry that skips the scan when nothing is due forgets exactly what a
full scan from the front forgets (UIAP §2.4.2 "Update last received time", §4.2.2.1).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.uiap.message import MessageID
from uuidkit.uiap.records import FloodRecord, FloodTable

LIFETIME = 10.0


class ScanEveryTime:
    """The reference: records in order of last receipt, scanned from the front on every
    call (what FloodTable did before it learnt to skip scans)."""

    def __init__(self) -> None:
        self.records: dict[MessageID, float] = {}

    def add(self, message_id: MessageID, now: float) -> None:
        self.records[message_id] = now

    def touch(self, message_id: MessageID, now: float) -> None:
        del self.records[message_id]
        self.records[message_id] = now

    def expire(self, now: float) -> None:
        horizon = now - LIFETIME
        for message_id, received in list(self.records.items()):
            if received > horizon:
                return
            del self.records[message_id]


#: (operation, Message ID number, time): times may go backwards, as a caller's might.
operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "touch", "expire"]),
        st.integers(0, 6),
        st.floats(0, 40, allow_nan=False),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(operations)
def test_expiry_forgets_what_a_full_scan_forgets(steps: list[tuple[str, int, float]]) -> None:
    table = FloodTable(LIFETIME)
    reference = ScanEveryTime()
    for operation, number, now in steps:
        message_id = MessageID(1, number)
        record = table.get(message_id)
        assert table.find(message_id.value) is record
        if operation == "add" and record is None:
            table.add(FloodRecord(message_id.value, "eth0", 1, now, now))
            reference.add(message_id, now)
        elif operation == "touch" and record is not None:
            table.touch(record, now)
            reference.touch(message_id, now)
        elif operation == "expire":
            table.expire(now)
            reference.expire(now)
        assert [(r.message_id, r.last_received) for r in table] == list(reference.records.items())


def test_a_touched_front_record_does_not_hide_an_older_one_behind_it() -> None:
    table = FloodTable(LIFETIME)
    first, second = FloodRecord(MessageID(1, 1).value, None, None, 5.0, 5.0), None
    table.add(first)
    second = FloodRecord(MessageID(1, 2).value, None, None, 0.0, 0.0)  # a clock that went back
    table.add(second)
    table.touch(first, 6.0)  # second is now the front, due at 10.0
    table.expire(10.0)
    assert [record.message_id for record in table] == [MessageID(1, 1)]
    table.expire(16.0)
    assert len(table) == 0
