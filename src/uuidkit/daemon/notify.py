"""The service manager's readiness protocol (sd_notify), written out: one datagram each.

systemd passes ``NOTIFY_SOCKET``, the path of a Unix datagram socket (a leading ``@``
means the abstract namespace: a NUL octet, then the rest). A notification is one
datagram of ``KEY=value`` lines: ``READY=1`` once the service is up, ``STOPPING=1`` when
it begins to stop, ``RELOADING=1`` on a reload, ``STATUS=...`` as free text. Without
``NOTIFY_SOCKET`` every call does nothing. Failures are returned, never raised: the
service keeps running without its manager's news.

References: systemd's sd_notify(3) protocol description.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping

__all__ = ["notify", "notify_address", "reloading"]


def notify_address(value: str | None) -> str | bytes | None:
    """The socket address of ``NOTIFY_SOCKET``: a path, an abstract name (bytes) or None.

    References: the systemd sd_notify(3) protocol (NOTIFY_SOCKET).
    """
    if not value:
        return None
    if value.startswith("@"):
        return b"\0" + value[1:].encode()
    if value.startswith("/"):
        return value
    return None  # vsock addresses and the like are not ours to speak


def notify(message: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Send ``message`` (``"READY=1"``, ``"STOPPING=1\\nSTATUS=..."``); the error or None.

    References: the systemd sd_notify(3) protocol (READY=1, STOPPING=1, STATUS=).
    """
    address = notify_address((environ if environ is not None else os.environ).get("NOTIFY_SOCKET"))
    if address is None:
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.sendto(message.encode(), address)
    except OSError as error:
        return f"sd_notify to {address!r} failed: {error}"
    return None


def reloading(status: str, monotonic_ns: Callable[[], int] | None = None) -> str:
    """The message that starts a reload: ``RELOADING=1``, the time it began as
    ``MONOTONIC_USEC=`` (CLOCK_MONOTONIC in microseconds, which sd_notify(3) asks to accompany
    ``RELOADING=1`` so the manager can tell this reload from an earlier one) and ``STATUS=``.

    References: the systemd sd_notify(3) protocol (RELOADING=1, MONOTONIC_USEC=, STATUS=).
    """
    now_ns = (
        monotonic_ns() if monotonic_ns is not None else time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    )
    return f"RELOADING=1\nMONOTONIC_USEC={now_ns // 1000}\nSTATUS={status}"
