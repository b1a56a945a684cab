"""A node-bound value's time is read after its node is held.

Getting a node may block for a whole claim (2.5 s with UIAP's timers); a value dated before
the claim sorts before values other hosts made meanwhile, and eats the ordering margin
``docs/distributed.md`` relies on. The source here advances an injected clock while it
"claims", as a real claim lets real time pass.

References: RFC 9562 §6.2 (monotonicity), §6.4 (node IDs); UIAP §2.4.1 (a claim's duration).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from gen_fakes import NS_PER_MS, FakeClock, seeded_bytes

from uuidkit.fields import timestamp_ns
from uuidkit.generators import (
    ManualNodeSource,
    NodeBoundV1Generator,
    NodeBoundV6Generator,
    NodeBoundV7Generator,
    NodeBoundV8Generator,
    NodeLease,
)
from uuidkit.nodelayouts import MULTICAST_BIT

NODE = 0x0200_0000_00AA | MULTICAST_BIT
#: How long the fake claim takes: the draft's three attempts, 0.5 s apart, then 1 s.
CLAIM_NS = 2_500 * NS_PER_MS
GENERATORS = {
    1: NodeBoundV1Generator,
    6: NodeBoundV6Generator,
    7: NodeBoundV7Generator,
    8: NodeBoundV8Generator,
}


class SlowClaimSource(ManualNodeSource):
    """Hands out NODE only after a claim that lets ``CLAIM_NS`` pass on ``clock``."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock

    def current(self) -> NodeLease:
        try:
            return super().current()
        except Exception:
            self.clock.advance(CLAIM_NS)  # the claim's round of attempts
            self.assign(NODE)
            return super().current()


def _time_ns(value: UUID) -> int:
    """The value's time; v8-node keeps unix_ts_ms in its top 48 bits, as v7 does."""
    embedded = timestamp_ns(value)
    return (value.int >> 80) * NS_PER_MS if embedded is None else embedded


@pytest.mark.parametrize("version_number", [1, 6, 7, 8])
def test_the_first_value_is_dated_after_its_node_was_claimed(version_number: int) -> None:
    clock = FakeClock()
    asked_at = clock()
    generator: Any = GENERATORS[version_number](
        SlowClaimSource(clock), clock=clock, random_bytes=seeded_bytes(3), sleep_ns=clock.sleep
    )
    first = generator()
    # Before the fix v7-node and v8-node carried asked_at: 2.5 s before the node was held.
    assert _time_ns(first) >= asked_at + CLAIM_NS - NS_PER_MS
    assert generator.node == NODE
