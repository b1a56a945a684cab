"""Deferred submodules: one module object whichever use comes first, run once, retried after
a failure, and a cycle told rather than rerun.

Each test builds a throwaway package in ``tmp_path`` whose ``__init__`` defers its
submodule ``part``; ``part``'s code records each run in ``builtins`` (shared by every module)
and can be held at a gate, which is how two first uses are made to overlap deterministically.
"""

from __future__ import annotations

import builtins
import importlib
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import uuidkit
from uuidkit._deferred import defer_submodule

PART = """
import builtins
control = builtins._deferred_test_control
control["runs"] += 1
control["entered"].release()
control["gate"].wait()
if control["fail"]:
    control["fail"] = False
    raise RuntimeError("the first run fails")
VALUE = control["runs"]
"""

INIT = """
import sys
from uuidkit._deferred import defer_submodule
defer_submodule(sys.modules[__name__], "part")
"""


@pytest.fixture
def package(tmp_path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    name = f"deferred_probe_{id(tmp_path)}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text(INIT)
    (tmp_path / name / "part.py").write_text(PART)
    gate = threading.Event()
    gate.set()
    control: dict[str, Any] = {
        "runs": 0,
        "entered": threading.Semaphore(0),
        "gate": gate,
        "fail": False,
    }
    builtins._deferred_test_control = control  # type: ignore[attr-defined]
    sys.path.insert(0, str(tmp_path))
    try:
        yield name, control
    finally:
        sys.path.remove(str(tmp_path))
        for module in [module for module in sys.modules if module.startswith(name)]:
            del sys.modules[module]
        del builtins._deferred_test_control  # type: ignore[attr-defined]


def test_every_route_reaches_the_one_module_and_it_runs_on_first_read(
    package: tuple[str, dict[str, Any]],
) -> None:
    name, control = package
    parent = importlib.import_module(name)
    part = parent.part
    assert sys.modules[f"{name}.part"] is part
    assert control["runs"] == 0 and type(part) is not types.ModuleType
    assert importlib.import_module(f"{name}.part") is part  # import finds it registered
    assert part.__file__ is not None and part.__file__.endswith("part.py")
    assert control["runs"] == 0  # the import system's own attributes do not run it
    assert part.VALUE == 1 and control["runs"] == 1
    assert type(part) is types.ModuleType  # now a plain module: loads can specialise
    assert part.VALUE == 1 and control["runs"] == 1
    with pytest.raises(AttributeError, match="has no attribute 'missing'"):
        _ = part.missing


def test_two_first_uses_at_once_run_the_module_once(
    package: tuple[str, dict[str, Any]],
) -> None:
    """The first use is held inside the module's code; a second one meanwhile must wait for
    it, not run the code again (without the lock, ``runs`` would reach 2)."""
    name, control = package
    part = importlib.import_module(name).part
    control["gate"].clear()
    values: list[int] = []
    threads = [threading.Thread(target=lambda: values.append(part.VALUE)) for _ in range(2)]
    threads[0].start()
    assert control["entered"].acquire(timeout=60)  # the first is inside the module's code
    threads[1].start()
    # Without the lock the second thread would enter too; with it, it never does.
    second_entered = control["entered"].acquire(timeout=0.5)
    control["gate"].set()
    for thread in threads:
        thread.join(timeout=60)
    assert not second_entered
    assert values == [1, 1] and control["runs"] == 1


def test_a_failed_run_leaves_the_module_unrun_and_the_next_use_retries(
    package: tuple[str, dict[str, Any]],
) -> None:
    name, control = package
    part = importlib.import_module(name).part
    control["fail"] = True
    with pytest.raises(RuntimeError, match="the first run fails"):
        _ = part.VALUE
    assert type(part) is not types.ModuleType
    assert "VALUE" not in vars(part) and "control" not in vars(part)  # nothing half-made
    assert part.VALUE == 2 and control["runs"] == 2


def test_a_module_that_reads_itself_while_running_is_told_of_the_cycle(
    tmp_path: Path,
) -> None:
    name = f"deferred_cycle_{id(tmp_path)}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text(INIT)
    (tmp_path / name / "part.py").write_text(
        f"import {name}\ntry:\n    {name}.part.LATER\nexcept AttributeError as error:\n"
        "    SEEN = str(error)\nLATER = 1\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        part = importlib.import_module(name).part
        assert "circular import" in part.SEEN and part.LATER == 1
    finally:
        sys.path.remove(str(tmp_path))
        for module in [module for module in sys.modules if module.startswith(name)]:
            del sys.modules[module]


def test_an_imported_submodule_is_returned_as_it_is() -> None:
    import uuidkit.format

    assert defer_submodule(uuidkit, "format") is uuidkit.format


def test_an_absent_submodule_is_named() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"uuidkit\.no_such_part"):
        defer_submodule(uuidkit, "no_such_part")


def test_a_deferred_module_pickles_by_name_before_and_after_its_first_use(
    package: tuple[str, dict[str, Any]],
) -> None:
    """Dask and Spark pickle a function's globals with cloudpickle, which pickles a plain
    module by name; a deferred module must come back as the one module, run or not."""
    cloudpickle = pytest.importorskip("cloudpickle")
    name, control = package
    part = importlib.import_module(name).part
    assert cloudpickle.loads(cloudpickle.dumps(part)) is part
    assert control["runs"] == 0  # pickling does not run it
    assert part.VALUE == 1
    assert cloudpickle.loads(cloudpickle.dumps(part)) is part
