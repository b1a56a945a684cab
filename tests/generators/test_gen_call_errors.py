"""A generator called with a bad keyword or too many positional arguments says so by its
public name, with the same message on the compiled and the pure-Python path.

The expected message is Python's own for a function of that name and signature (a stand-in
built here), so the test holds whatever wording the interpreter uses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import uuidkit
from uuidkit._accel import SPEEDUPS
from uuidkit.generators import V1Generator, V6Generator, V7Generator

SRC = Path(__file__).resolve().parents[2] / "src"
#: The calls that must fail: a keyword the function does not take, one positional too many.
BAD_CALLS: dict[str, tuple[tuple[int, ...], dict[str, int]]] = {
    "keyword": ((), {"bad_keyword": 1}),
    "positionals": ((1, 2, 3, 4, 5), {}),
}


def _error(function: Callable[..., Any], how: str) -> str:
    args, kwargs = BAD_CALLS[how]
    with pytest.raises(TypeError) as caught:
        function(*args, **kwargs)
    return str(caught.value)


def _stand_in(qualname: str) -> Callable[..., None]:
    """A Python function with the gregorian generators' signature, named ``qualname``."""

    def stand_in(node: int | None = None, clock_seq: int | None = None) -> None:
        return None

    stand_in.__name__ = qualname.rpartition(".")[2]
    stand_in.__qualname__ = qualname
    return stand_in


GREGORIAN: dict[str, Callable[[], Callable[..., Any]]] = {
    "uuid1": lambda: uuidkit.uuid1,
    "uuid6": lambda: uuidkit.uuid6,
    "V1Generator.next": lambda: V1Generator().next,
    "V6Generator.next": lambda: V6Generator().next,
}


@pytest.mark.parametrize("how", sorted(BAD_CALLS))
@pytest.mark.parametrize("name", sorted(GREGORIAN))
def test_gregorian_entry_points_name_themselves(name: str, how: str) -> None:
    """uuid1, uuid6 and a generator's ``next``: Python's message for a function of that
    public name and signature (never an internal name such as the engine's fallback)."""
    assert _error(GREGORIAN[name](), how) == _error(_stand_in(name), how)


def _no_parameters(name: str) -> Callable[[], None]:
    """A Python function without parameters, named ``name``."""

    def stand_in() -> None:
        return None

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


@pytest.mark.parametrize("how", sorted(BAD_CALLS))
@pytest.mark.parametrize(
    ("name", "function"),
    [("uuid7", uuidkit.uuid7), ("uuid7", V7Generator().next), ("uuid4", uuidkit.uuid4)],
    ids=["uuid7", "next", "uuid4"],
)
def test_functions_without_parameters_name_themselves(
    name: str, function: Callable[..., Any], how: str
) -> None:
    """uuid7 (and a V7Generator's ``next``) and uuid4: Python's message for a function of
    that name without parameters, on either path."""
    assert _error(function, how) == _error(_no_parameters(name), how)


_PROBE = """
import json, uuidkit
from uuidkit.generators import V1Generator, V6Generator
calls = {"kw": ((), {"bad_keyword": 1}), "pos": ((1, 2, 3, 4, 5), {})}
entry = {"uuid4": uuidkit.uuid4, "uuid7": uuidkit.uuid7,
         "uuid1": uuidkit.uuid1, "uuid6": uuidkit.uuid6, "uuid8": uuidkit.uuid8,
         "uuid3": uuidkit.uuid3, "uuid5": uuidkit.uuid5, "uuid7_for": uuidkit.uuid7_for,
         "V1Generator.next": V1Generator().next, "V6Generator.next": V6Generator().next}
out = {}
for name, function in entry.items():
    for how, (args, kwargs) in calls.items():
        try:
            function(*args, **kwargs)
        except TypeError as error:
            out[name + " " + how] = str(error)
print(json.dumps(out, sort_keys=True))
"""


def _messages(pure: bool) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "UUIDKIT_PURE": "1" if pure else ""}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


@pytest.mark.skipif(SPEEDUPS is None, reason="the compiled accelerator is not built or is off")
def test_the_compiled_and_pure_paths_give_the_same_messages() -> None:
    compiled, pure = _messages(pure=False), _messages(pure=True)
    assert len(compiled) == 20
    assert compiled == pure
