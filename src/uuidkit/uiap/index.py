"""This device's own claims, indexed by domain and interval for the comparison of §4.2.2.1.

Every new Claim-Attempt is compared with "its own list of current claims" (§4.2.2.1). A
linear scan costs one interval test per claim per attempt; here each domain keeps its
claims' intervals sorted, and a Claim-Attempt finds the claims it meets by bisection.

The intervals of one domain never overlap: a claim that conflicts with any claim already
on the device fails before it is made (§2.4.1 "a claim will immediately fail if a
conflicting claim already exits on the local device"), and every interval here is
non-empty (an inverted range is refused by ``NumberSpace.check_space``). Sorted by their
low ends, disjoint intervals are sorted by their high ends too, so the claims meeting
``[low, high]`` are a contiguous run: from the first whose high end is at or above
``low`` up to the last whose low end is at or below ``high``.

References: UIAP §2.4.1, §3.2.4, §4.2.2.1.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TypeAlias

from uuidkit.uiap.space import Interval, NumberSpace

__all__ = ["DomainClaims"]

#: One end of an interval: a sort key of :class:`NumberSpace` (``space.Interval``).
_Key: TypeAlias = tuple[int, bytes, int]


class DomainClaims:
    """The intervals of one domain's own claims, under ``rules`` (the wire's rules).

    ``lows``, ``highs`` and ``handles`` are parallel lists sorted by the low end.

    References: UIAP §3.2.4, §4.2.2.1.
    """

    __slots__ = ("handles", "highs", "lows", "rules")

    def __init__(self, rules: NumberSpace) -> None:
        self.rules = rules
        self.lows: list[_Key] = []
        self.highs: list[_Key] = []
        self.handles: list[int] = []

    def __len__(self) -> int:
        return len(self.handles)

    def add(self, handle: int, interval: Interval) -> None:
        """Index claim ``handle``; the caller checked that it meets no indexed claim."""
        low, high = interval
        position = bisect_left(self.lows, low)
        self.lows.insert(position, low)
        self.highs.insert(position, high)
        self.handles.insert(position, handle)

    def remove(self, handle: int, interval: Interval) -> None:
        """Forget claim ``handle``, indexed with ``interval``."""
        position = bisect_left(self.lows, interval[0])
        # Low ends are distinct (disjoint, non-empty intervals), so this is the entry.
        assert self.handles[position] == handle, "own claim index out of step"
        del self.lows[position], self.highs[position], self.handles[position]

    def meeting(self, interval: Interval) -> list[int]:
        """The handles of the claims whose intervals meet ``interval`` (empty if inverted)."""
        low, high = interval
        if low > high:
            return []  # an inverted range is empty (§3.2.2)
        lows = self.lows
        start = bisect_left(self.highs, low)
        end = start
        count = len(lows)
        while end < count and lows[end] <= high:
            end += 1
        return self.handles[start:end]
