"""Noticing interface changes, and logging network trouble without flooding the log.

:class:`LinkWatcher` calls back soon after the kernel reports a link or address change
(an rtnetlink socket subscribed to link, IPv4 and IPv6 address notifications, rtnetlink(7))
and every ``interval`` seconds anyway, so a missed or unavailable notification only delays
the change. The notifications are not parsed: they say "something changed", and the
caller reads the new state from the kernel.

References: UIAP §2.4.3 ("active interface"), §3.1.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable
from typing import Final

__all__ = ["LinkWatcher", "RateLimitedLog"]

#: rtnetlink multicast groups (<linux/rtnetlink.h>): links, IPv4 and IPv6 addresses.
_RTMGRP_LINK: Final = 0x1
_RTMGRP_IPV4_IFADDR: Final = 0x10
_RTMGRP_IPV6_IFADDR: Final = 0x100


class RateLimitedLog:
    """At most one warning per kind per ``interval`` seconds, with a count of the rest.

    References: UIAP §9 (bounded state under hostile input).
    """

    def __init__(
        self,
        logger: logging.Logger,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._clock = clock
        self._interval = interval
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def warning(self, kind: str, message: str, *args: object, exc_info: bool = False) -> None:
        now = self._clock()
        last = self._last.get(kind)
        if last is not None and now - last < self._interval:
            self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
            return
        self._last[kind] = now
        suppressed = self._suppressed.pop(kind, 0)
        suffix = f" ({suppressed} similar suppressed)" if suppressed else ""
        self._logger.warning(message + suffix, *args, exc_info=exc_info)


class LinkWatcher:
    """Calls ``on_change`` (once per burst of notifications) and every ``interval`` s.

    References: UIAP §2.3; §4.4 (reclaim when an interface comes up).
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, interval: float, on_change: Callable[[], None]
    ) -> None:
        self._loop = loop
        self._interval = interval
        self._on_change = on_change
        self._netlink: socket.socket | None = None
        self._poller: asyncio.TimerHandle | None = None
        self._pending = False
        self._running = False

    @property
    def notified(self) -> bool:
        """Whether kernel notifications are used (else polling alone)."""
        return self._netlink is not None

    def start(self) -> None:
        self._running = True
        self._open_netlink()
        self._schedule_poll()

    def stop(self) -> None:
        self._running = False
        if self._poller is not None:
            self._poller.cancel()
            self._poller = None
        if self._netlink is not None:
            self._loop.remove_reader(self._netlink.fileno())
            self._netlink.close()
            self._netlink = None

    def _schedule_poll(self) -> None:
        self._poller = self._loop.call_later(self._interval, self._poll)

    def _poll(self) -> None:
        if self._running:
            self._on_change()
            self._schedule_poll()

    def _open_netlink(self) -> None:
        try:
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        except (OSError, AttributeError):
            return  # polling alone
        try:
            sock.bind((0, _RTMGRP_LINK | _RTMGRP_IPV4_IFADDR | _RTMGRP_IPV6_IFADDR))
            sock.setblocking(False)
        except OSError:
            sock.close()
            return
        self._netlink = sock
        self._loop.add_reader(sock.fileno(), self._on_readable)

    def _on_readable(self) -> None:
        sock = self._netlink
        if sock is None:
            return
        while True:
            try:
                sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:  # ENOBUFS: notifications were lost; the rescan covers them
                break
        if not self._pending:
            self._pending = True
            self._loop.call_soon(self._changed)

    def _changed(self) -> None:
        self._pending = False
        if self._running:
            self._on_change()
