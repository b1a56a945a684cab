"""The UIAP daemon (``uuidkit uiap daemon``): a composition root around the transport.

* :mod:`~uuidkit.daemon.config`: :class:`DaemonConfig` from TOML and flags.
* :mod:`~uuidkit.daemon.state`: the state directory, written atomically.
* :mod:`~uuidkit.daemon.service`: claims by ID, restart reclaims, renewals, events.
* :mod:`~uuidkit.daemon.server`: the Unix-socket API (``docs/uiap-api.md``).
* :mod:`~uuidkit.daemon.keys`, :mod:`~uuidkit.daemon.notify`: the site key file, sd_notify.
* :mod:`~uuidkit.daemon.main`: :class:`Daemon` and :func:`run`, signals and reload.
* :mod:`~uuidkit.daemon.localsite`: an in-process site for tests and benchmarks.

References: UIAP §2.1.1, §4.4, §7.
"""

from __future__ import annotations

__all__: list[str] = []
