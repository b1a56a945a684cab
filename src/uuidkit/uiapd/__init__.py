"""Talking to the UIAP daemon (uiapd): its JSON-lines API schema and its clients.

* :mod:`~uuidkit.uiapd.api`: the schema, sans-I/O: requests parsed, replies and events built,
  :class:`~uuidkit.uiapd.api.APIError` and its codes. The daemon and the clients share it.
* :mod:`~uuidkit.uiapd.client`: :class:`~uuidkit.uiapd.client.Client` (blocking) and
  :class:`~uuidkit.uiapd.client.AsyncClient` (asyncio), for applications.

The daemon itself is :mod:`uuidkit.daemon`; it imports the schema, never the clients, and
nothing here imports the daemon. This package imports neither of its modules, so importing
the schema does not load the clients' sockets. See ``docs/uiap-api.md``.

References: UIAP §2.1.1 (the service to applications).
"""

from __future__ import annotations

__all__: list[str] = []
