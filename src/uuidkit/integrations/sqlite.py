"""UUIDs in SQLite: 16-byte BLOB keys, :class:`uuid.UUID` values in Python, SQL functions.

::

    import sqlite3
    from uuidkit.integrations import sqlite as uuid_sqlite

    db = sqlite3.connect("app.db", detect_types=sqlite3.PARSE_DECLTYPES)
    uuid_sqlite.register(db)
    db.execute("CREATE TABLE item (id uuid PRIMARY KEY DEFAULT (uuid7()), name TEXT)")
    db.execute("INSERT INTO item (name) VALUES ('a')")
    db.execute("INSERT INTO item VALUES (?, 'b')", (uuidkit.uuid7(),))
    db.execute("SELECT id FROM item").fetchone()[0]   # a uuid.UUID

:func:`register` does two things:

* **Process-wide** (this is how :mod:`sqlite3` works): an adapter that stores every
  :class:`uuid.UUID` parameter as its 16 bytes (a BLOB, big-endian, so ``ORDER BY`` on the
  column is the UUIDs' own order: SQLite compares BLOBs with ``memcmp``), and a converter
  for columns declared ``uuid`` that turns a 16-byte BLOB, or TEXT in any form
  :func:`uuidkit.parse` reads, back into a :class:`uuid.UUID`. Converters run only on
  connections opened with ``detect_types=sqlite3.PARSE_DECLTYPES``.
* **On the connection**: the SQL functions

  ====================  ======================================================================
  ``uuid7()``           a new UUIDv7 as a 16-byte BLOB (uuidkit's monotonic generator)
  ``uuid4()``           a new UUIDv4 as a 16-byte BLOB
  ``uuid_str(x)``       the hyphenated lower-case text of a 16-byte BLOB or of UUID text
  ``uuid_blob(x)``      the 16-byte BLOB of UUID text (or of a 16-byte BLOB, unchanged)
  ``uuid_timestamp(x)`` the embedded time of a v1, v6 or v7 UUID in Unix seconds (REAL), for
                        ``datetime(uuid_timestamp(id), 'unixepoch')``; NULL for other versions
  ====================  ======================================================================

  All return NULL for NULL. Input that is not a UUID raises inside the function, which
  SQLite reports as ``sqlite3.OperationalError: user-defined function raised exception``.
  The three readers are declared deterministic, so they can appear in indexes and
  generated columns.

References: RFC 9562 §4 (binary form: "the UUID as a 128-bit unsigned integer ... in network
byte order"), §6.11 (sorting), §6.13 (DBMS and database considerations).
"""

from __future__ import annotations

import sqlite3
from typing import Final
from uuid import UUID

from uuidkit.errors import InvalidUUID
from uuidkit.fields import timestamp_ns
from uuidkit.generators import uuid7
from uuidkit.parse import from_bytes, parse
from uuidkit.random_based import uuid4

__all__ = ["DECLARED_TYPE", "register"]

#: The column type name the converter is registered for (matched case-insensitively).
DECLARED_TYPE: Final = "uuid"
_NS_PER_S: Final = 1_000_000_000


def register(connection: sqlite3.Connection) -> None:
    """Register the UUID adapter and converter (process-wide) and the SQL functions on
    ``connection``. Calling it again, on this or another connection, is harmless.

    References: RFC 9562 §4, §6.13.
    """
    sqlite3.register_adapter(UUID, _adapt)
    sqlite3.register_converter(DECLARED_TYPE, _convert)
    connection.create_function("uuid7", 0, _sql_uuid7, deterministic=False)
    connection.create_function("uuid4", 0, _sql_uuid4, deterministic=False)
    connection.create_function("uuid_str", 1, _sql_uuid_str, deterministic=True)
    connection.create_function("uuid_blob", 1, _sql_uuid_blob, deterministic=True)
    connection.create_function("uuid_timestamp", 1, _sql_uuid_timestamp, deterministic=True)


def _adapt(value: UUID) -> bytes:
    return value.bytes


def _convert(raw: bytes) -> UUID:
    # sqlite3 hands a converter the column's bytes: the BLOB itself, or TEXT as UTF-8.
    if len(raw) == 16:
        return from_bytes(raw)
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise InvalidUUID(
            f"uuid column: expected a 16-byte BLOB or UUID text, found {len(raw)} bytes"
        ) from None
    return parse(text)


def _value(argument: object) -> UUID | None:
    if argument is None:
        return None
    if isinstance(argument, bytes):
        return from_bytes(argument)
    if isinstance(argument, str):
        return parse(argument)
    raise InvalidUUID(f"expected a 16-byte BLOB or UUID text, found {type(argument).__name__}")


def _sql_uuid7() -> bytes:
    return uuid7().bytes


def _sql_uuid4() -> bytes:
    return uuid4().bytes


def _sql_uuid_str(argument: object) -> str | None:
    value = _value(argument)
    return None if value is None else str(value)


def _sql_uuid_blob(argument: object) -> bytes | None:
    value = _value(argument)
    return None if value is None else value.bytes


def _sql_uuid_timestamp(argument: object) -> float | None:
    value = _value(argument)
    unix_ns = None if value is None else timestamp_ns(value)
    return None if unix_ns is None else unix_ns / _NS_PER_S
