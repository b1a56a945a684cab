"""Database integrations: thin glue between uuidkit and a database driver.

* :mod:`uuidkit.integrations.sqlite`: the standard library's :mod:`sqlite3`: UUIDs stored as
  16-byte BLOBs, read back as :class:`uuid.UUID`, and SQL functions that make and read them.

PostgreSQL drivers (psycopg 3, asyncpg, SQLAlchemy 2's ``Uuid`` type) accept and return
:class:`uuid.UUID` as they are; see ``docs/recipes-databases.md``.

References: RFC 9562 §6.11, §6.13.
"""
