"""The claim table's counts (the ``claims`` of ``status``) stay right as claims change.

References: UIAP §4.4 (claims held, renewed and reclaimed).
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.daemon.record import ClaimRecord, ClaimTable
from uuidkit.uiapd.api import parse_claim_params

SPACES = [
    parse_claim_params({"domain": "0fff:0000:00b0:0000", "uid": uid, "lifetime": 60})
    for uid in ("2a", "2b")
]
OWNERS = (0, 1000, 1001)
SESSIONS = (object(), object())
STATES = ("claiming", "held", "renewing", "reclaiming")


def recounted(table: ClaimTable) -> dict[str, int]:
    """The counts computed from scratch, the way ``status`` did before the table."""
    counts = dict(Counter(record.public_state for record in table.values()))
    counts["unverified"] = sum(1 for record in table.values() if record.unverified)
    return counts


operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "state", "verified", "session", "pop", "del", "readd"]),
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
    changes to a record no longer in the table count for nothing; the indexes by space, by
    owner and by session match a search. Removing ClaimRecord.__setattr__'s report to its
    table makes this test fail."""
    table = ClaimTable()
    records = [ClaimRecord(f"c{n}", SPACES[n % 2], OWNERS[n % 3], 0.0) for n in range(6)]
    for operation, index, state, verified in steps:
        record = records[index]
        if operation in ("add", "readd"):
            table[record.id] = record
        elif operation == "state":
            record.state = state
        elif operation == "verified":
            record.verified = verified
        elif operation == "session":
            record.session = SESSIONS[index % 2] if verified else None
        elif operation == "pop":
            table.pop(record.id, None)
        elif record.id in table:
            del table[record.id]
        assert table.counts() == recounted(table)
        for params in SPACES:
            found = [r for r in table.values() if r.params.space == params.space]
            assert sorted(r.id for r in table.holding(params)) == sorted(r.id for r in found)
        for session in SESSIONS:
            found = [r for r in table.values() if r.session is session]
            assert sorted(r.id for r in table.of_session(session)) == sorted(r.id for r in found)
        for owner in OWNERS:
            assert table.owned_by(owner) == sum(r.owner_uid == owner for r in table.values())
