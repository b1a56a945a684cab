"""Start-up: ``import uuidkit`` loads the core only, and ``uuidkit gen`` only what it runs.

Each check runs a fresh interpreter with ``-S`` (no site-packages hooks that import things
of their own) on the compiled path and on the pure path (``UUIDKIT_PURE=1``), and reads the
modules it loaded: from ``sys.modules`` after ``import uuidkit``, and from ``-X importtime``
for a whole ``python -m uuidkit gen`` run. Speed itself is measured in bench/, not here.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import uuidkit

#: The directory holding the uuidkit under test (a source tree or site-packages).
LOCATION = str(Path(uuidkit.__file__).resolve().parent.parent)

#: Parts of uuidkit that load when first used, never at ``import uuidkit``.
LAZY_PACKAGES = [
    "uuidkit.bridge",
    "uuidkit.bulk",
    "uuidkit.cli",
    "uuidkit.daemon",
    "uuidkit.generators",
    "uuidkit.integrations",
    "uuidkit.legacy",
    "uuidkit.net",
    "uuidkit.nodelayouts",
    "uuidkit.testing",
    "uuidkit.uiap",
]
#: Bound by ``import uuidkit`` so that every public name is a plain attribute: the functions
#: ``uuid1``, ``uuid6`` and ``uuid7`` (their generators load on first call). The rest of
#: ``uuidkit.generators`` is in LAZY_PACKAGES.
BOUND_AT_IMPORT = {"uuidkit.generators", "uuidkit.generators._functions"}
#: Registered by ``import uuidkit`` (``uuidkit.bulk`` works without an import) but not run.
DEFERRED = ["uuidkit.bulk", "uuidkit.legacy"]
#: Standard-library modules the core does not need at import (each costs a millisecond or
#: more, or pulls in a chain that does). ``import uuid`` itself loads re, enum and platform.
HEAVY_STDLIB = [
    "argparse",
    "ast",
    "asyncio",
    "dataclasses",
    "hashlib",
    "inspect",
    "json",
    "random",
    "secrets",
    "shutil",
    "socket",
    "threading",
    # Each of these is loaded by ``import uuidkit`` only if a module uses it at run time:
    # typing (3 ms with contextlib), datetime (1.5 ms), weakref (1 ms), importlib and the
    # warnings module it loads. ``import uuid`` loads none of them.
    "contextlib",
    "datetime",
    "importlib",
    "typing",
    "warnings",
    "weakref",
]

PATHS = pytest.mark.parametrize("pure", ["0", "1"], ids=["default-path", "pure-path"])


def _environment(pure: str) -> dict[str, str]:
    environment = dict(os.environ, PYTHONPATH=LOCATION, UUIDKIT_PURE=pure)
    environment.pop("PYTHONSTARTUP", None)
    return environment


def _loaded_after(script: str, pure: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-S", "-c", script],
        env=_environment(pure),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.splitlines()[-1]))


def _offenders(loaded: set[str], forbidden: list[str]) -> list[str]:
    return sorted(
        module
        for module in loaded
        if any(module == name or module.startswith(name + ".") for name in forbidden)
    )


#: Prints the modules whose code has run (a registered, deferred submodule has not).
RUN_MODULES = (
    "print(json.dumps([name for name, module in sys.modules.items()"
    " if type(module).__name__ != '_NotYetRun']))"
)


@PATHS
def test_import_loads_only_the_core(pure: str) -> None:
    loaded = _loaded_after(f"import json, sys; import uuidkit; {RUN_MODULES}", pure)
    assert "uuidkit.fields" in loaded and "uuidkit.parse" in loaded
    assert loaded >= BOUND_AT_IMPORT
    loaded -= BOUND_AT_IMPORT
    loaded.discard("json")  # the probe's own
    loaded -= {module for module in loaded if module.startswith("json.")}
    assert _offenders(loaded, LAZY_PACKAGES + HEAVY_STDLIB + DEFERRED) == []


#: The standard-library modules ``import uuidkit`` may load beyond those ``import uuid``
#: loads: built-in and C modules, and the ``__future__`` its modules' future imports name.
#: CPython 3.13 and later's ``uuid`` loads neither ``collections`` nor ``operator`` (nor
#: ``re``), so the core imports ``collections.abc`` for the type checker only.
EXTRA_STDLIB = {"__future__", "_collections", "_queue", "itertools"}


@PATHS
def test_import_adds_few_modules_to_import_uuid(pure: str) -> None:
    script = (
        "import sys, uuid; before = set(sys.modules); import uuidkit; "
        "print(repr(sorted(set(sys.modules) - before)))"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", script],
        env=_environment(pure),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    added = ast.literal_eval(result.stdout.splitlines()[-1])
    assert {m for m in added if m.split(".")[0] != "uuidkit"} <= EXTRA_STDLIB


@PATHS
def test_deferred_submodules_are_one_module_whichever_use_comes_first(pure: str) -> None:
    script = f"""
import json, sys, types
import uuidkit
from uuidkit import bulk
import uuidkit.legacy
assert bulk is uuidkit.bulk is sys.modules["uuidkit.bulk"]
assert uuidkit.legacy is sys.modules["uuidkit.legacy"]
assert type(bulk) is not types.ModuleType  # registered, not run
assert callable(uuidkit.bulk.generate) and type(bulk) is types.ModuleType
assert bulk.__doc__ and bulk.__file__.endswith("bulk.py")
{RUN_MODULES}
"""
    loaded = _loaded_after(script, pure)
    assert "uuidkit.bulk" in loaded
    assert "uuidkit.legacy" not in loaded
    assert "dataclasses" not in loaded  # what uuidkit.legacy would load


@PATHS
def test_generator_functions_are_bound_at_import_and_load_on_first_call(pure: str) -> None:
    script = """
import json, sys
import uuidkit
assert set(uuidkit.__all__) <= set(dir(uuidkit)) <= set(vars(uuidkit))  # all plain attributes
assert "__getattr__" not in vars(uuidkit)  # which would stop attribute-load specialisation
from uuidkit import uuid6, uuid7
assert "uuidkit.generators._default_v7" not in sys.modules  # bound, no generator yet
import uuidkit.generators
assert uuid7 is uuidkit.uuid7 is uuidkit.generators.uuid7
assert uuid6().version == 6 and uuid7().version == 7
assert uuid7 is uuidkit.uuid7 is uuidkit.generators.uuid7  # the same after the first call
print(json.dumps(list(sys.modules)))
"""
    loaded = _loaded_after(script, pure)
    assert {"uuidkit.generators._default_v7", "uuidkit.generators._default_gregorian"} <= loaded
    assert _offenders(loaded, ["uuidkit.generators.statefile", "uuidkit.generators.shared"]) == []


def _imported_by_gen(pure: str, *arguments: str) -> tuple[set[str], list[str]]:
    result = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-m", "uuidkit", "gen", *arguments],
        env=_environment(pure),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    return {line.rsplit("|", 1)[1].strip() for line in lines[1:]}, result.stdout.splitlines()


@PATHS
def test_gen_loads_neither_other_commands_nor_the_parser(pure: str) -> None:
    loaded, output = _imported_by_gen(pure)
    assert len(output) == 1
    assert "uuidkit.generators.defaults" in loaded  # it did make a UUIDv7
    forbidden = [
        "uuidkit.cli.state_commands",
        "uuidkit.cli.uiap_commands",
        "uuidkit.nodelayouts",
        "uuidkit.bridge",
        "uuidkit.uiap",
        "json",
        # argparse builds its help formatter, and the terminal-size probe imports shutil,
        # only when a parser is built: the plain `gen` does not build one.
        "shutil",
    ]
    assert _offenders(loaded, forbidden) == []


#: The v1/v6 machinery (and the generators built on it) that UUIDv7 alone never needs: the
#: default v1/v6 generators, the Gregorian engine and node policy, state files, shared,
#: node-bound, PostgreSQL-profile and draft-v8 generators.
NOT_FOR_V7 = [
    "uuidkit.generators._default_gregorian",
    "uuidkit.generators._gregorian_engine",
    "uuidkit.generators._gregorian_pure",
    "uuidkit.generators.gregorian",
    "uuidkit.generators.node",
    "uuidkit.generators.nodebound",
    "uuidkit.generators.nodesource",
    "uuidkit.generators.pg18",
    "uuidkit.generators.shared",
    "uuidkit.generators.statefile",
    "uuidkit.generators.v8time",
]


@PATHS
def test_default_gen_loads_only_the_v7_generator(pure: str) -> None:
    loaded, output = _imported_by_gen(pure)
    assert [uuidkit.parse(line).version for line in output] == [7]
    assert _offenders(loaded, [*NOT_FOR_V7, "typing"]) == []
    assert "uuidkit.generators._default_v7" in loaded


@PATHS
def test_uuid7_loads_only_the_v7_generator(pure: str) -> None:
    script = """
import json, sys
import uuidkit
assert uuidkit.uuid7().version == 7
from uuidkit.generators import defaults
assert uuidkit.uuid7 is defaults.uuid7 is defaults.DEFAULT_V7.next  # the bound hot path
print(json.dumps(list(sys.modules)))
"""
    loaded = _loaded_after(script, pure)
    assert _offenders(loaded, [*NOT_FOR_V7, "typing"]) == []
    assert "uuidkit.generators._default_v7" in loaded


#: What no plain ``uuidkit gen`` form loads: argparse (and the gettext it imports), as the
#: fast path builds no parser; the configuration dataclasses' modules and dataclasses itself
#: (with inspect, ast and dis), as the default generators are built from plain values; and
#: threading, as their locks come from _thread.
NOT_FOR_PLAIN_GEN = [
    "argparse",
    "gettext",
    "uuidkit.cli._parser",
    "dataclasses",
    "inspect",
    "ast",
    "dis",
    "uuidkit.generators._v7config",
    "uuidkit.generators._gregorian_config",
    "threading",
]


#: Plain forms: (arguments after ``gen``, the version made, how many).
PLAIN_GEN_FORMS = [
    ([], 7, 1),
    (["-v", "1"], 1, 1),
    (["-v", "4"], 4, 1),
    (["-v", "6", "--format", "upper"], 6, 1),
    (["--version", "7", "-n", "3"], 7, 3),
    (["-v", "8", "-C", "2", "--format", "urn"], 8, 2),
    (["--count", "2", "-v", "1", "--format", "hex"], 1, 2),
]


@PATHS
@pytest.mark.parametrize("form", PLAIN_GEN_FORMS, ids=lambda form: " ".join(["gen", *form[0]]))
def test_plain_gen_of_every_version_loads_no_parser_and_no_dataclass(
    pure: str, form: tuple[list[str], int, int]
) -> None:
    arguments, version, count = form
    loaded, output = _imported_by_gen(pure, *arguments)
    assert [uuidkit.parse(line).version for line in output] == [version] * count
    assert _offenders(loaded, NOT_FOR_PLAIN_GEN) == []


def test_gen_with_flags_outside_the_plain_form_still_runs() -> None:
    loaded, output = _imported_by_gen("0", "-u", "uuid4", "-C", "2")
    assert [uuidkit.parse(line).version for line in output] == [4, 4]
    assert "shutil" in loaded  # went through argparse
    assert _offenders(loaded, ["uuidkit.cli.state_commands", "uuidkit.cli.uiap_commands"]) == []


@PATHS
def test_gen_of_a_random_version_loads_no_generator(pure: str) -> None:
    """uuid4 and uuid8 are core functions: the generators (their locks, fork hooks and
    dataclass configurations), typing and datetime stay unloaded."""
    for version in ("4", "8"):
        loaded, output = _imported_by_gen(pure, "-v", version)
        assert [uuidkit.parse(line).version for line in output] == [int(version)]
        forbidden = ["uuidkit.generators", "dataclasses", "inspect", "typing", "datetime"]
        assert _offenders(loaded - BOUND_AT_IMPORT, forbidden) == []
