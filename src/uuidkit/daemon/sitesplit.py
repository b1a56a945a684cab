"""Warnings that a link carries a different site: one key, no key, or another key.

A site is the set of devices that hear each other (UIAP §1.1). With uuidkit's site key
(UIAP §7), a device accepts only datagrams sealed with a key it holds, so a host with no key,
or with a key the others do not accept, forms a second site on the same link: each side is
granted what the other holds (UIAP §2.1.2), silently. Both sides see it in their counters,
and :class:`SiteSplitWarnings` makes them say it in the log too:

* a daemon without a key hears sealed datagrams (the engine's drop ``auth-unexpected``);
* a daemon with a key hears unsealed ones (``auth-missing``) or ones sealed with a Key ID it
  does not accept (``auth-unknown-key``), found by :class:`WatchedAuthenticator`.

At most one line per interface every :data:`WARN_EVERY_S` seconds (60): a flood of such
datagrams, or a long-lived split, is one line a minute per link, with the number of
datagrams seen since the last line. The clock is injected (tests).

References: UIAP §1.1 (site), §2.1.2 (separate sites), §7 (authentication); RFC 8967 §4.3.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

from uuidkit.uiap.auth import AuthDrop, Authenticator

__all__ = ["SPLIT_KINDS", "WARN_EVERY_S", "SiteSplitWarnings", "WatchedAuthenticator"]

_log = logging.getLogger("uuidkit.daemon")

#: Seconds between two warnings about one interface.
WARN_EVERY_S: Final = 60.0
#: What each kind of datagram says about the other side, for the log line.
SPLIT_KINDS: Final = {
    "auth-unexpected": "authenticated datagrams, but this daemon has no site key",
    AuthDrop.NO_TRAILER.value: "unauthenticated datagrams, but this daemon requires its site key",
    AuthDrop.UNKNOWN_KEY.value: "datagrams sealed with a Key ID this daemon does not accept",
}


class SiteSplitWarnings:
    """Counts datagrams that show another site on a link; logs at most one line per
    interface every ``every_s`` seconds of ``clock`` (monotonic seconds).

    References: UIAP §1.1, §2.1.2, §7.
    """

    def __init__(self, clock: Callable[[], float], every_s: float = WARN_EVERY_S) -> None:
        self.clock = clock
        self.every_s = every_s
        #: Datagrams seen, by (interface, kind).
        self.seen: Counter[tuple[str, str]] = Counter()
        self.warnings = 0
        self._logged_at: dict[str, float] = {}
        self._since: Counter[str] = Counter()

    def saw(self, interface: object, kind: str, source: object) -> None:
        """One datagram of ``kind`` (a key of :data:`SPLIT_KINDS`) from ``source``."""
        name = str(interface)
        self.seen[(name, kind)] += 1
        self._since[name] += 1
        now = self.clock()
        last = self._logged_at.get(name)
        if last is not None and now - last < self.every_s:
            return
        _log.warning(
            "the link on %s carries a different site (the site is split): %s from %s, %s "
            "(datagrams since the last warning: %d). Hosts on each side can be granted "
            "what the other holds: give every host the same site keys (docs/uiap-daemon.md, "
            "Operating a site)",
            name,
            kind,
            source,
            SPLIT_KINDS.get(kind, kind),
            self._since[name],
        )
        self.warnings += 1
        self._logged_at[name] = now
        self._since[name] = 0

    def summary(self) -> dict[str, Any]:
        """JSON-ready: datagrams seen by interface and kind, and warnings logged."""
        by_interface: dict[str, dict[str, int]] = {}
        for (interface, kind), count in sorted(self.seen.items()):
            by_interface.setdefault(interface, {})[kind] = count
        return {"seen": by_interface, "warnings": self.warnings}


class WatchedAuthenticator(Authenticator):
    """An :class:`Authenticator` that tells ``watch`` (set by the claim service) about every
    datagram refused for a reason that means another site: no trailer, or a Key ID not
    accepted. It opens and counts exactly as its base does.

    References: UIAP §7; RFC 8967 §4.3.
    """

    watch: SiteSplitWarnings | None = None

    def open(self, data: bytes, source: str, destination: str, interface: str) -> bytes | None:
        dropped = self.stats.dropped
        before = (dropped[AuthDrop.NO_TRAILER], dropped[AuthDrop.UNKNOWN_KEY])
        opened = super().open(data, source, destination, interface)
        if opened is None and self.watch is not None:
            for kind, count in zip(_SPLIT_DROPS, before, strict=True):
                if dropped[kind] > count:
                    self.watch.saw(interface, kind.value, source)
        return opened


_SPLIT_DROPS: Final = (AuthDrop.NO_TRAILER, AuthDrop.UNKNOWN_KEY)
