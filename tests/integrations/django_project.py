"""A throwaway Django project whose model takes every uuidkit generator as a field default.

Written into a temporary directory and driven through ``python -m django`` in child
processes (a hang becomes a timeout, not a stalled suite); the children inherit the
environment, so ``UUIDKIT_PURE`` chooses the same path as the suite's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[2] / "src"
#: Seconds a management command may take: makemigrations and migrate need a few.
COMMAND_TIMEOUT = 120

_SETTINGS = """\
import json, os
SECRET_KEY = "uuidkit-tests"
INSTALLED_APPS = ["plainapp"]
DATABASES = {"default": json.loads(os.environ["UUIDKIT_TEST_DATABASE"])}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
"""

_MODELS = """\
from django.db import models

import uuidkit
from uuidkit.generators import uuid7_pg18


class Item(models.Model):
    id = models.UUIDField(primary_key=True, default=uuidkit.uuid7, editable=False)
    v1 = models.UUIDField(default=uuidkit.uuid1)
    v4 = models.UUIDField(default=uuidkit.uuid4)
    v6 = models.UUIDField(default=uuidkit.uuid6)
    v8 = models.UUIDField(default=uuidkit.uuid8)
    pg18 = models.UUIDField(default=uuid7_pg18)
"""

#: Run after migrate: three rows made by the defaults, read back; and which path made them.
_CHECK = """\
import json
import django
django.setup()
import uuidkit
from plainapp.models import Item
for _ in range(3):
    Item.objects.create()
rows = [
    {name: str(getattr(item, name)) for name in ("id", "v1", "v4", "v6", "v8", "pg18")}
    for item in Item.objects.order_by("id")
]
print(json.dumps({"rows": rows, "uuid7_type": type(uuidkit.uuid7).__name__}))
"""

#: The field defaults as Django's migration writer must write them (import path.name).
EXPECTED_DEFAULTS = {
    "id": "uuidkit.uuid7",
    "v1": "uuidkit.uuid1",
    "v4": "uuidkit.uuid4",
    "v6": "uuidkit.uuid6",
    "v8": "uuidkit.uuid8",
    "pg18": "uuidkit.generators.uuid7_pg18",
}


class DjangoProject:
    """The project in ``root``, using the database described by ``database`` (Django's
    ``DATABASES["default"]`` dictionary)."""

    def __init__(self, root: Path, database: dict[str, Any]) -> None:
        self.root = root
        self.database = database
        (root / "plainapp" / "migrations").mkdir(parents=True)
        (root / "plainapp" / "__init__.py").write_text("")
        (root / "plainapp" / "migrations" / "__init__.py").write_text("")
        (root / "plainapp" / "models.py").write_text(_MODELS)
        (root / "settings.py").write_text(_SETTINGS)

    def _run(self, arguments: list[str]) -> str:
        environment = dict(os.environ)
        environment.update(
            PYTHONPATH=os.pathsep.join([str(self.root), str(SRC)]),
            DJANGO_SETTINGS_MODULE="settings",
            UUIDKIT_TEST_DATABASE=json.dumps(self.database),
        )
        result = subprocess.run(
            [sys.executable, *arguments],
            cwd=self.root,
            env=environment,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
        assert result.returncode == 0, (arguments, result.stdout, result.stderr)
        return result.stdout

    def makemigrations(self) -> str:
        """Run ``makemigrations``; the text of the one migration it wrote."""
        self._run(["-m", "django", "makemigrations", "plainapp", "--no-input"])
        written = sorted((self.root / "plainapp" / "migrations").glob("0001_*.py"))
        assert len(written) == 1, written
        return written[0].read_text(encoding="utf-8")

    def migrate(self) -> None:
        self._run(["-m", "django", "migrate", "--no-input"])

    def rows(self) -> dict[str, Any]:
        """Insert three rows through the defaults; the rows read back and the path in use."""
        report: dict[str, Any] = json.loads(self._run(["-c", _CHECK]))
        return report
