"""Node IDs leased from a PostgreSQL table: :class:`PostgresNodeSource`.

The lease table (created if missing; the name is configurable)::

    CREATE TABLE uuidkit_node_leases (
        node    bigint PRIMARY KEY,    -- the 48-bit node, multicast bit set
        epoch   bigint NOT NULL,       -- fencing epoch: +1 on every new grant of the node
        holder  text NOT NULL,         -- a random token of the grant's holder
        expires timestamptz NOT NULL   -- computed by the server: now() + lifetime
    )

- **Grant**: one ``INSERT ... ON CONFLICT (node) DO UPDATE ... WHERE expires <= now()``: a
  new row with epoch 1, or a lapsed row taken over with ``epoch + 1``; a live row is left
  alone and nothing is returned (the node is taken). The row lock of ``ON CONFLICT`` makes
  two concurrent grants of one node impossible.
- **Renewal**: ``UPDATE ... WHERE node = $1 AND epoch = $2 AND holder = $3 AND expires >
  now()``. A holder whose lease lapsed cannot renew it back: the ``expires > now()`` test
  fails, and once someone else was granted the node the epoch and holder differ too.
- **Release**: ``expires = now()`` for our (node, epoch, holder); the row and its epoch stay.

Every expiry is the *server's* clock (``now()`` is the start of the statement's
transaction); the client trusts a grant only until its own monotonic clock, read before the
request was sent, passes ``lifetime - margin`` (:mod:`uuidkit.bridge.leased`). psycopg 3 is
imported when the source is made (``pip install 'uuidkit-rfc9562[fleet-postgres]'``).

References: RFC 9562 §6.4, §6.9, §6.10; PostgreSQL documentation "INSERT" (ON CONFLICT).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
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

__all__ = ["DEFAULT_TABLE", "PostgresLeases", "PostgresNodeSource"]

#: The lease table's default name.
DEFAULT_TABLE: Final = "uuidkit_node_leases"
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class PostgresLeases:
    """The PostgreSQL backend of :class:`PostgresNodeSource` (one connection, autocommit).

    References: RFC 9562 §6.4; PostgreSQL documentation "INSERT" (ON CONFLICT).
    """

    def __init__(self, dsn: str, table: str = DEFAULT_TABLE, connect_timeout_s: int = 10) -> None:
        if not _IDENTIFIER.fullmatch(table):
            raise InvalidField(
                f"table: expected a lower-case SQL identifier, found {table!r}", "table"
            )
        import psycopg  # the fleet-postgres extra; imported only by this source

        self._psycopg: Any = psycopg
        self.dsn = dsn
        self.table = table
        self._connect_timeout_s = connect_timeout_s
        self._conn: Any = None
        self._holder = secrets.token_hex(16)

    def _execute(self, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        try:
            if self._conn is None or self._conn.closed:
                self._conn = self._psycopg.connect(
                    self.dsn, autocommit=True, connect_timeout=self._connect_timeout_s
                )
                self._create_table()
            cursor = self._conn.execute(sql.format(table=self.table), params)
            # A statement without RETURNING (the release) has no rows to fetch.
            rows: list[tuple[Any, ...]] = [] if cursor.description is None else cursor.fetchall()
            return rows
        except self._psycopg.OperationalError as error:
            self.close()
            raise ServiceUnreachable(f"PostgreSQL: {str(error).strip()[:300]}") from None
        except self._psycopg.Error as error:
            raise NodeUnavailableError(
                f"PostgreSQL refused the lease request: {str(error).strip()[:300]}",
                "service error",
            ) from None

    def _create_table(self) -> None:
        # Another process may create it at the same moment (pg_type's unique index).
        with contextlib.suppress(self._psycopg.errors.UniqueViolation):
            self._conn.execute(_CREATE.format(table=self.table))

    def acquire(self, node: int, lifetime_s: int) -> Grant | None:
        """Lease ``node``, or ``None`` if a live lease holds it. References: RFC 9562 §6.4."""
        rows = self._execute(_ACQUIRE, (node, self._holder, lifetime_s))
        if not rows:
            return None
        epoch, ttl_s = rows[0]
        return Grant(node, int(ttl_s * NS_PER_S), (int(epoch), self._holder))

    def renew(self, grant: Grant, lifetime_s: int) -> int | None:
        """Extend ``grant`` if it is still ours and live. References: RFC 9562 §6.4."""
        epoch, holder = _token(grant)
        rows = self._execute(_RENEW, (lifetime_s, grant.node, epoch, holder))
        return int(rows[0][0] * NS_PER_S) if rows else None

    def release(self, grant: Grant) -> None:
        """End ``grant`` now (the row and its epoch stay). References: RFC 9562 §6.4."""
        epoch, holder = _token(grant)
        self._execute(_RELEASE, (grant.node, epoch, holder))

    def close(self) -> None:
        """Close the connection. References: RFC 9562 §6.4."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def forget_after_fork(self) -> None:
        """Drop the parent's connection without ending it (RFC 9562 §6.9).

        The child's copy of the socket is pointed at ``/dev/null`` first, so that closing it
        here (or at exit) sends nothing on the parent's connection.

        References: RFC 9562 §6.9.
        """
        conn, self._conn = self._conn, None
        self._holder = secrets.token_hex(16)
        if conn is not None and not conn.closed:
            null = os.open(os.devnull, os.O_RDWR)
            try:
                os.dup2(null, conn.fileno())
            finally:
                os.close(null)
            conn.close()


def _token(grant: Grant) -> tuple[int, str]:
    token = grant.token
    assert isinstance(token, tuple) and len(token) == 2
    return int(token[0]), str(token[1])


_CREATE: Final = """CREATE TABLE IF NOT EXISTS {table} (
    node bigint PRIMARY KEY, epoch bigint NOT NULL, holder text NOT NULL,
    expires timestamptz NOT NULL)"""
_ACQUIRE: Final = """INSERT INTO {table} AS lease (node, epoch, holder, expires)
    VALUES (%s, 1, %s, now() + make_interval(secs => %s))
    ON CONFLICT (node) DO UPDATE
        SET epoch = lease.epoch + 1, holder = EXCLUDED.holder, expires = EXCLUDED.expires
        WHERE lease.expires <= now()
    RETURNING epoch, extract(epoch FROM expires - now())"""
_RENEW: Final = """UPDATE {table} SET expires = now() + make_interval(secs => %s)
    WHERE node = %s AND epoch = %s AND holder = %s AND expires > now()
    RETURNING extract(epoch FROM expires - now())"""
_RELEASE: Final = """UPDATE {table} SET expires = now()
    WHERE node = %s AND epoch = %s AND holder = %s AND expires > now()"""


class PostgresNodeSource(LeasedNodeSource):
    """Node IDs leased from a PostgreSQL table (see :mod:`uuidkit.bridge.postgres_source`).

    ``PostgresNodeSource(dsn, lifetime_s=30)``: a libpq connection string; the table is
    created if missing. Deadline, renewal, loss policy and fork: as
    :class:`~uuidkit.bridge.leased.LeasedNodeSource`.

    References: RFC 9562 §6.4, §6.9, §6.10.
    """

    def __init__(
        self,
        dsn: str,
        *,
        lifetime_s: int = DEFAULT_LIFETIME_S,
        margin_s: float = DEFAULT_MARGIN_S,
        on_loss: OnNodeLoss = OnNodeLoss.RECLAIM,
        table: str = DEFAULT_TABLE,
        max_attempts: int = 8,
        random_bytes: Callable[[int], bytes] = os.urandom,
        spares: int = 1,
    ) -> None:
        super().__init__(
            PostgresLeases(dsn, table),
            lifetime_s=lifetime_s,
            margin_s=margin_s,
            on_loss=on_loss,
            max_attempts=max_attempts,
            random_bytes=random_bytes,
            spares=spares,
        )

    def __enter__(self) -> PostgresNodeSource:
        return self
