"""Build and load ``bench/_floor.c`` (a minimal compiled ``uuid7()``) for the running interpreter.

The extension is compiled into a fresh temporary directory with the interpreter's own
compiler and flags (``sysconfig``: ``CC``, ``CFLAGS``, ``CCSHARED``, ``LDSHARED``,
``INCLUDEPY``, ``EXT_SUFFIX``), with ``-Wall -Wextra -Werror`` added, and imported from there;
nothing is installed or left in the tree. :func:`load` returns the module bound to
``uuid.UUID``, or ``None`` (with the reason on stderr) where no compiler is found.

On CPython 3.14 and later the module also has ``long_bytes()`` and ``long_writer()``: the
same 128-bit int made by the public byte function (uuidkit's way there) and by PEP 757's
``PyLongWriter`` (30-bit digits filled directly, as uuidkit does on 3.11 to 3.13), to time
what the digit path would save there.

References: RFC 9562 §5.7.
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from pathlib import Path
from types import ModuleType

SOURCE = Path(__file__).resolve().parent / "_floor.c"
WARNINGS = ["-Wall", "-Wextra", "-Werror"]

_loaded: list[ModuleType] = []


def _config(name: str) -> str:
    value = sysconfig.get_config_var(name)
    return value if isinstance(value, str) else ""


def build(directory: Path) -> Path:
    """Compile and link the extension into ``directory``; the path of the shared object."""
    compiler = shlex.split(_config("CC") or "cc")
    linker = shlex.split(_config("LDSHARED") or f"{compiler[0]} -shared")
    # CFLAGS without the interpreter's own warnings settings (they may include -Werror=...
    # variants a new compiler rejects for this file); optimisation and ABI flags stay.
    flags = [flag for flag in shlex.split(_config("CFLAGS")) if not flag.startswith("-W")]
    flags += shlex.split(_config("CCSHARED"))
    include = ["-I", _config("INCLUDEPY")]
    target = directory / ("_floor" + _config("EXT_SUFFIX"))
    objects = directory / "_floor.o"
    subprocess.run(
        [*compiler, *flags, *WARNINGS, *include, "-c", str(SOURCE), "-o", str(objects)],
        check=True,
    )
    subprocess.run([*linker, str(objects), "-o", str(target)], check=True)
    return target


def load() -> ModuleType | None:
    """The floor module for this interpreter, built on first use; ``None`` without a compiler."""
    if _loaded:
        return _loaded[0]
    if shutil.which(shlex.split(_config("CC") or "cc")[0]) is None:
        print("floor: no C compiler found; the floor rows are skipped", file=sys.stderr)
        return None
    directory = Path(tempfile.mkdtemp(prefix="uuidkit-floor-"))
    try:
        path = build(directory)
        spec = importlib.util.spec_from_file_location("_floor", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (OSError, subprocess.CalledProcessError, ImportError) as error:
        print(f"floor: build failed ({error}); the floor rows are skipped", file=sys.stderr)
        return None
    finally:
        # The module stays mapped once loaded; its file is no longer needed.
        shutil.rmtree(directory, ignore_errors=True)
    module.bind(uuid.UUID, uuid.SafeUUID.unknown)
    _loaded.append(module)
    return module


if __name__ == "__main__":
    floor = load()
    if floor is None:
        raise SystemExit(1)
    value = floor.uuid7()
    print(value, value.version, type(value))
