"""Rate limits on the Claim-Attempts that make an engine remember something.

Every new Claim-Attempt costs a flood record (§4.2.2.1 "MUST be remembered"), and an X+R
one possibly a proxy record (§5.1). The draft leaves authentication to IPsec (§7), so a
device on the link can forge any number of Message IDs. Two token buckets stand between
such a sender and the tables: one per (interface, link-local source) and one per
interface. A bucket holds at most ``burst`` tokens, gains ``rate`` tokens per second of
engine time (passed in, never read from a clock), and a new Claim-Attempt is admitted
only when both of its buckets hold a token; it then takes one from each. Copies of known
floods and Claim-Denies create no state and are not limited. A refused Claim-Attempt is
neither recorded nor forwarded, but the engine still denies it if it conflicts with a
claim it defends: the limits bound memory, never defense.

The per-source buckets are themselves a table fed from the network: at most
``max_sources`` are kept, the least recently used forgotten first. A sender that forges
many source addresses gets a fresh bucket each time, which is why the per-interface
bucket exists: it bounds what one link can push in, whatever the sources.

References: UIAP §4.2.2.1, §5.1, §7.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from uuidkit.uiap.events import DropReason

__all__ = ["RateLimiter", "TokenBucket"]


class TokenBucket:
    """``tokens`` (at most the burst) as of engine time ``updated`` (seconds); see
    :meth:`RateLimiter.admit` for how it refills.

    References: UIAP §9 (bounded work under a flood); §4.2.2.1.
    """

    __slots__ = ("tokens", "updated")

    def __init__(self, burst: float, now: float) -> None:
        self.tokens = burst
        self.updated = now


class RateLimiter:
    """Token buckets per interface and per (interface, source): see the module doc.

    ``source_rate``/``interface_rate`` are Claim-Attempts per second, ``*_burst`` the
    bucket sizes in Claim-Attempts; a rate of ``None`` disables that bucket.

    References: UIAP §4.2.2.1, §7.
    """

    __slots__ = (
        "_interfaces",
        "_sources",
        "interface_burst",
        "interface_rate",
        "max_sources",
        "source_burst",
        "source_rate",
    )

    def __init__(
        self,
        source_rate: float | None,
        source_burst: float,
        interface_rate: float | None,
        interface_burst: float,
        max_sources: int,
    ) -> None:
        self.source_rate = source_rate
        self.source_burst = source_burst
        self.interface_rate = interface_rate
        self.interface_burst = interface_burst
        self.max_sources = max_sources
        self._sources: OrderedDict[tuple[Hashable, Hashable], TokenBucket] = OrderedDict()
        self._interfaces: dict[Hashable, TokenBucket] = {}

    def __len__(self) -> int:
        """The number of buckets kept (per source and per interface)."""
        return len(self._sources) + len(self._interfaces)

    def admit(self, interface: Hashable, source: Hashable, now: float) -> DropReason | None:
        """Take a token for one new Claim-Attempt; returns why it is refused, or ``None``.

        Each bucket is first refilled with the tokens earned since its last refill, at
        most its burst. Time that goes backwards earns nothing (the caller's clock is
        trusted to be monotonic, but a bucket must not be filled by a clock step). This
        runs for every new Claim-Attempt, so the refill is written out for each bucket
        and a new bucket, which is full, skips it.
        """
        source_bucket = None
        rate = self.source_rate
        if rate is not None:
            key = (interface, source)
            sources = self._sources
            source_bucket = sources.get(key)
            if source_bucket is None:
                source_bucket = sources[key] = TokenBucket(self.source_burst, now)
                if len(sources) > self.max_sources:
                    sources.popitem(last=False)  # the least recently used
            else:
                sources.move_to_end(key)
                elapsed = now - source_bucket.updated
                if elapsed > 0:
                    # min(burst, earned), written out: the burst unless fewer were earned.
                    earned = source_bucket.tokens + elapsed * rate
                    burst = self.source_burst
                    source_bucket.tokens = earned if earned < burst else burst
                    source_bucket.updated = now
            if source_bucket.tokens < 1:
                return DropReason.RATE_LIMITED_SOURCE
        rate = self.interface_rate
        if rate is not None:
            bucket = self._interfaces.get(interface)
            if bucket is None:
                bucket = self._interfaces[interface] = TokenBucket(self.interface_burst, now)
            else:
                elapsed = now - bucket.updated
                if elapsed > 0:
                    earned = bucket.tokens + elapsed * rate
                    burst = self.interface_burst
                    bucket.tokens = earned if earned < burst else burst
                    bucket.updated = now
            if bucket.tokens < 1:
                return DropReason.RATE_LIMITED_INTERFACE
            bucket.tokens -= 1
        if source_bucket is not None:
            source_bucket.tokens -= 1
        return None

    def forget_interface(self, interface: Hashable) -> None:
        """Drop the buckets of a removed interface (its sources' buckets age out)."""
        self._interfaces.pop(interface, None)
