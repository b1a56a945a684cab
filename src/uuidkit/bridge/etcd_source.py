"""Node IDs leased from etcd v3: :class:`EtcdNodeSource`, over etcd's JSON gateway.

The source speaks etcd's v3 gRPC API through its JSON gateway (``POST /v3/...``, keys and
values base64) with :mod:`http.client`, so it needs no package beyond Python:

- **Grant**: ``/v3/lease/grant`` with ``TTL = lifetime`` (once per source; etcd counts the TTL
  on its own clock from when its leader granted it); then ``/v3/kv/txn``: *if*
  ``create_revision(/uuidkit/nodes/<node>) == 0`` (the key does not exist) *then* put it,
  attached to the lease. A key that exists belongs to a live lease (etcd deletes a lease's
  keys when it ends), so the node is taken and another is drawn.
- **Renewal**: ``/v3/lease/keepalive``; an answer without a TTL (or TTL 0) means the lease
  ended at etcd, and with it the key: the node is lost and cannot be renewed back, because a
  new holder's key carries its own lease.
- **Release**: ``/v3/lease/revoke`` (deletes the key at once).

References: RFC 9562 §6.4, §6.9, §6.10; etcd API "KV.Txn", "Lease.LeaseGrant",
"Lease.LeaseKeepAlive", "Lease.LeaseRevoke".
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import urllib.parse
from collections.abc import Callable
from typing import Any, Final

from uuidkit.bridge.leased import (
    DEFAULT_LIFETIME_S,
    DEFAULT_MARGIN_S,
    NS_PER_S,
    Grant,
    LeasedNodeSource,
    ServiceUnreachable,
)
from uuidkit.bridge.uiap_source import OnNodeLoss
from uuidkit.errors import InvalidField, NodeUnavailableError

__all__ = ["DEFAULT_ENDPOINT", "KEY_PREFIX", "EtcdLeases", "EtcdNodeSource", "node_key"]

#: etcd's default client URL.
DEFAULT_ENDPOINT: Final = "http://127.0.0.1:2379"
#: Where the node keys live: ``/uuidkit/nodes/<12 hex digits>``.
KEY_PREFIX: Final = "/uuidkit/nodes/"
#: Longest answer read from etcd (a lease or txn answer is a few hundred octets).
MAX_ANSWER_OCTETS: Final = 1 << 16


def node_key(node: int, prefix: str = KEY_PREFIX) -> str:
    """The etcd key of ``node``: ``/uuidkit/nodes/`` and 12 lower-case hex digits.

    References: RFC 9562 §6.4.
    """
    return f"{prefix}{node:012x}"


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class EtcdLeases:
    """The etcd backend of :class:`EtcdNodeSource`: one etcd lease, one node key on it.

    References: RFC 9562 §6.4; etcd API "KV.Txn", "Lease".
    """

    def __init__(
        self, endpoint: str = DEFAULT_ENDPOINT, prefix: str = KEY_PREFIX, timeout_s: float = 5.0
    ) -> None:
        url = urllib.parse.urlsplit(endpoint)
        if url.scheme != "http" or not url.hostname or url.path not in ("", "/"):
            raise InvalidField(
                f"endpoint: expected http://HOST:PORT, found {endpoint!r}", "endpoint"
            )
        self.endpoint = endpoint
        self.prefix = prefix
        self._host = url.hostname
        self._port = url.port or 2379
        self._timeout_s = timeout_s
        self._lease_id: str | None = None

    def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        connection = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout_s)
        try:
            connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            response = connection.getresponse()
            data = response.read(MAX_ANSWER_OCTETS + 1)
        except (OSError, http.client.HTTPException) as error:
            raise ServiceUnreachable(f"etcd at {self.endpoint}: {error}") from None
        finally:
            connection.close()
        if len(data) > MAX_ANSWER_OCTETS:
            raise ServiceUnreachable(f"etcd at {self.endpoint}: answer over {MAX_ANSWER_OCTETS}")
        try:
            answer = json.loads(data.decode().strip().splitlines()[0] if data.strip() else "{}")
        except (UnicodeDecodeError, ValueError):
            answer = None
        if response.status != 200 or not isinstance(answer, dict):
            raise NodeUnavailableError(
                f"etcd at {self.endpoint} answered {path} with HTTP {response.status}: "
                f"{data[:200]!r}",
                "service error",
            )
        return answer

    def acquire(self, node: int, lifetime_s: int) -> Grant | None:
        """Put the node's key if absent, on a fresh etcd lease. References: RFC 9562 §6.4."""
        granted = self._call("/v3/lease/grant", {"TTL": lifetime_s})
        lease_id, ttl_s = str(granted.get("ID", "")), int(granted.get("TTL", 0))
        if not lease_id or ttl_s <= 0:
            raise NodeUnavailableError(f"etcd granted no lease: {granted}", "service error")
        key = _b64(node_key(node, self.prefix))
        txn = {
            "compare": [
                {"key": key, "target": "CREATE", "result": "EQUAL", "create_revision": "0"}
            ],
            "success": [{"request_put": {"key": key, "value": _b64("1"), "lease": lease_id}}],
        }
        if not self._call("/v3/kv/txn", txn).get("succeeded"):
            self._revoke(lease_id)
            return None
        self._lease_id = lease_id
        return Grant(node, ttl_s * NS_PER_S, lease_id)

    def renew(self, grant: Grant, lifetime_s: int) -> int | None:
        """Keep the lease alive: its TTL in ns, or ``None`` once etcd ended it.

        References: RFC 9562 §6.4; etcd API "Lease.LeaseKeepAlive".
        """
        answer = self._call("/v3/lease/keepalive", {"ID": grant.token})
        result = answer.get("result", {})
        ttl_s = int(result.get("TTL", 0)) if isinstance(result, dict) else 0
        return ttl_s * NS_PER_S if ttl_s > 0 else None

    def release(self, grant: Grant) -> None:
        """Revoke the lease (etcd deletes the node key). References: RFC 9562 §6.4."""
        self._revoke(str(grant.token))

    def _revoke(self, lease_id: str) -> None:
        with contextlib.suppress(NodeUnavailableError):  # else it ends at its TTL
            self._call("/v3/lease/revoke", {"ID": lease_id})

    def close(self) -> None:
        """Nothing to close: one HTTP connection per request. References: RFC 9562 §6.4."""

    def forget_after_fork(self) -> None:
        """Forget the parent's lease (it ends with the parent). References: RFC 9562 §6.9."""
        self._lease_id = None


class EtcdNodeSource(LeasedNodeSource):
    """Node IDs leased from etcd v3 (see :mod:`uuidkit.bridge.etcd_source`).

    ``EtcdNodeSource("http://127.0.0.1:2379", lifetime_s=30)``. Deadline, renewal, loss
    policy and fork: as :class:`~uuidkit.bridge.leased.LeasedNodeSource`.

    References: RFC 9562 §6.4, §6.9, §6.10.
    """

    def __init__(
        self,
        endpoint: str = DEFAULT_ENDPOINT,
        *,
        lifetime_s: int = DEFAULT_LIFETIME_S,
        margin_s: float = DEFAULT_MARGIN_S,
        on_loss: OnNodeLoss = OnNodeLoss.RECLAIM,
        prefix: str = KEY_PREFIX,
        timeout_s: float = 5.0,
        max_attempts: int = 8,
        random_bytes: Callable[[int], bytes] = os.urandom,
        spares: int = 1,
    ) -> None:
        super().__init__(
            EtcdLeases(endpoint, prefix, timeout_s),
            lifetime_s=lifetime_s,
            margin_s=margin_s,
            on_loss=on_loss,
            max_attempts=max_attempts,
            random_bytes=random_bytes,
            spares=spares,
        )

    def __enter__(self) -> EtcdNodeSource:
        return self
