"""uuidkit's generator functions as column defaults in Django and SQLAlchemy.

A default is the first thing a framework user writes: ``UUIDField(default=uuidkit.uuid7)``
or ``Column(Uuid, default=uuidkit.uuid7)``. Django's ``makemigrations`` writes the default
into the migration as its import path (``uuidkit.uuid7``) and ``migrate`` imports it back;
both run here on SQLite and on a throwaway PostgreSQL cluster, on whichever path the suite
runs (``UUIDKIT_PURE``), in child processes with a timeout (a default Django took for an
iterable once made ``makemigrations`` spin forever).

References: RFC 9562 §5.1, §5.4, §5.6, §5.7, §5.8, §6.2 Method 3, §6.13 (DBMS keys).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django_project import EXPECTED_DEFAULTS, DjangoProject
from pg_support import require_module, throwaway_cluster

import uuidkit
from uuidkit import _accel
from uuidkit.integrations.pgcluster import Cluster

VERSIONS = {"id": 7, "v1": 1, "v4": 4, "v6": 6, "v8": 8, "pg18": 7}


@pytest.fixture(scope="module")
def pg_cluster() -> Iterator[Cluster]:
    """One throwaway cluster for this module."""
    yield from throwaway_cluster()


def _check_project(project: DjangoProject) -> None:
    require_module("django")
    migration = project.makemigrations()
    for field, default in EXPECTED_DEFAULTS.items():
        assert re.search(rf"default={re.escape(default)}[,)]", migration), (field, migration)
    assert "import uuidkit\n" in migration
    project.migrate()
    report = project.rows()
    # The child ran on the suite's path (UUIDKIT_PURE is inherited).
    assert report["uuid7_type"] == type(uuidkit.uuid7).__name__
    rows = report["rows"]
    assert len(rows) == 3
    for field, version in VERSIONS.items():
        values = [uuid.UUID(row[field]) for row in rows]
        assert all(value.version == version for value in values), (field, values)
        assert len(set(values)) == 3, (field, values)
    # Ordered by the UUIDv7 key, the rows are in insertion order (RFC 9562 §6.2): the
    # PostgreSQL-profile column made in the same order agrees.
    pg18_values = [uuid.UUID(row["pg18"]) for row in rows]
    assert pg18_values == sorted(pg18_values)


def test_django_makemigrations_and_migrate_on_sqlite(tmp_path: Path) -> None:
    database = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(tmp_path / "db.sqlite3")}
    _check_project(DjangoProject(tmp_path / "project", database))


def test_django_makemigrations_and_migrate_on_postgresql(
    tmp_path: Path, pg_cluster: Cluster
) -> None:
    psycopg = require_module("psycopg")
    require_module("django")
    name = "django_" + ("pure" if _accel.SPEEDUPS is None else "compiled")
    with psycopg.connect(pg_cluster.dsn(), autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name}")
        connection.execute(f"CREATE DATABASE {name}")
    database: dict[str, Any] = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": pg_cluster.user,
        "HOST": str(pg_cluster.socket_dir),
        "PORT": str(pg_cluster.port),
    }
    _check_project(DjangoProject(tmp_path / "project", database))


def test_sqlalchemy_column_default_on_sqlite() -> None:
    sqlalchemy = require_module("sqlalchemy")
    metadata = sqlalchemy.MetaData()
    table = sqlalchemy.Table(
        "item",
        metadata,
        sqlalchemy.Column("id", sqlalchemy.Uuid, primary_key=True, default=uuidkit.uuid7),
        sqlalchemy.Column("v4", sqlalchemy.Uuid, default=uuidkit.uuid4),
        sqlalchemy.Column("label", sqlalchemy.String(10)),
    )
    engine = sqlalchemy.create_engine("sqlite://")
    try:
        metadata.create_all(engine)
        with engine.begin() as connection:
            for index in range(5):
                connection.execute(table.insert(), {"label": str(index)})
            rows = connection.execute(sqlalchemy.select(table).order_by(table.c.id)).all()
    finally:
        engine.dispose()
    assert [row.label for row in rows] == [str(index) for index in range(5)]  # RFC 9562 §6.2
    assert all(type(row.id) is uuid.UUID and row.id.version == 7 for row in rows)
    assert all(row.v4.version == 4 for row in rows)
    assert len({row.id for row in rows}) == 5
