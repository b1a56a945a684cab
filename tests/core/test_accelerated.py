"""``uuidkit.ACCELERATED`` and ``uuidkit --version`` say which implementation runs.

The flag must agree with the module that actually serves the calls: the compiled twins when
the accelerator loaded, the pure-Python reference when ``UUIDKIT_PURE=1`` or none was built.
"""

from __future__ import annotations

import os
import subprocess
import sys

import uuidkit
from uuidkit import _accel

PROBE = "import uuidkit; print(uuidkit.ACCELERATED, type(uuidkit.parse).__name__)"


def _run(code: list[str], **environment: str) -> str:
    env = {**os.environ, **environment}
    result = subprocess.run(
        [sys.executable, *code], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    return result.stdout.strip()


def test_flag_matches_the_loaded_implementation() -> None:
    assert uuidkit.ACCELERATED is (_accel.SPEEDUPS is not None)
    # The compiled path publishes compiled twins; the pure path plain Python functions.
    assert (type(uuidkit.parse).__name__ != "function") is uuidkit.ACCELERATED


def test_pure_request_turns_the_flag_off() -> None:
    assert _run(["-c", PROBE], UUIDKIT_PURE="1") == "False function"


def test_version_names_the_path_in_use() -> None:
    line = _run(["-m", "uuidkit", "--version"])
    assert line.startswith(f"uuidkit {uuidkit.__version__} (")
    expected = "compiled accelerator" if uuidkit.ACCELERATED else "pure Python"
    assert expected in line
    assert "pure Python" in _run(["-m", "uuidkit", "--version"], UUIDKIT_PURE="1")
