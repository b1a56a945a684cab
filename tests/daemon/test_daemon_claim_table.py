"""The claim table's counts (the ``claims`` of ``status``) stay right as claims change.

References: UIAP §4.4 (claims held, renewed and reclaimed).
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.daemon.record import ClaimRecord, ClaimTable
from uuidkit.uiapd.api import parse_claim_params

PARAMS = parse_claim_params({"domain": "0fff:0000:00b0:0000", "uid": "2a", "lifetime": 60})
STATES = ("claiming", "held", "renewing", "reclaiming")


def recounted(table: ClaimTable) -> dict[str, int]:
    """The counts computed from scratch, the way ``status`` did before the table."""
    counts = dict(Counter(record.public_state for record in table.values()))
    counts["unverified"] = sum(1 for record in table.values() if record.unverified)
    return counts


operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "state", "verified", "pop", "del", "readd"]),
        st.integers(0, 5),
        st.sampled_from(STATES),
        st.booleans(),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(operations)
def test_the_counts_follow_every_change(steps: list[tuple[str, int, str, bool]]) -> None:
    """Claims added, changed (state, verified), removed and added again, in any order;
    changes to a record no longer in the table count for nothing. Removing
    ClaimRecord.__setattr__'s report to its table makes this test fail."""
    table = ClaimTable()
    records = [ClaimRecord(f"c{n}", PARAMS, 1000, 0.0) for n in range(6)]
    for operation, index, state, verified in steps:
        record = records[index]
        if operation in ("add", "readd"):
            table[record.id] = record
        elif operation == "state":
            record.state = state
        elif operation == "verified":
            record.verified = verified
        elif operation == "pop":
            table.pop(record.id, None)
        elif record.id in table:
            del table[record.id]
        assert table.counts() == recounted(table)
