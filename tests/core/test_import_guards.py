"""Every standard-library internal uuidkit relies on is feature-tested, with a working fallback.

Each fallback is forced here, and the values are then checked against the specification:
RFC 9562 Appendix A vectors for the name-based versions, version and variant bits, strict
increase for the time-based generators, parse and from_int round trips.

- ``uuid.UUID``'s slot layout (``vars(UUID)["int"].__set__``, used by the pure path to fill
  new objects): a class that keeps its value elsewhere is filled with ``object.__setattr__``
  by name, or, when that fails too (a C type, a read-only ``int``), made by its constructor.
  The interpreter is started afresh with a stand-in class as ``uuid.UUID``.
- CPython's private modules (``_thread.RLock``, ``_thread.allocate_lock``,
  ``_queue.SimpleQueue``, ``_weakref.ref``): without them, their public modules.
- ``sys._getframe`` (the warnings' caller lookup): without it, a fixed level.
- The compiled path's slot layout check (``_speedups.bind``, tested in test_speedups.py)
  and its use of CPython's digit layout for 128-bit ints: self-tested at import; forced off
  here, every conversion still equals the reference.

Each child inherits ``UUIDKIT_PURE``, so both paths are covered as the suite runs on both.

References: RFC 9562 §4, §5.1-§5.8, Appendix A.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit
from uuidkit import _accel, _caller, _stdlib
from uuidkit.generators import SharedV7Generator, StateUnavailableWarning

SRC = Path(__file__).resolve().parents[2] / "src"

#: A uuid.UUID whose own dict has no slot descriptors (they are inherited): filled by name.
_INHERITED_SLOTS = """
import uuid
class UUID(uuid.UUID):
    __slots__ = ()
uuid.UUID = UUID
"""

#: A uuid.UUID that cannot be filled at all (its ``int`` is a read-only property over storage
#: of its own, as a C implementation's would be): made by its constructor.
_READ_ONLY_INT = """
import uuid
_Real = uuid.UUID
class UUID(_Real):
    __slots__ = ("_value",)
    def __init__(self, *args, **kwargs):
        made = _Real(*args, **kwargs)
        object.__setattr__(self, "_value", made.int)
        object.__setattr__(self, "is_safe", made.is_safe)
    @property
    def int(self):
        return self._value
uuid.UUID = UUID
"""

#: The private modules, as later imports see them, without the names uuidkit takes from
#: them (the public modules, imported first, and the import system keep theirs).
_NO_PRIVATE_NAMES = """
import json, queue, sys, threading, types, weakref  # json: on 3.13 its re needs _thread.RLock
for name in ("_queue", "_thread", "_weakref"):
    sys.modules[name] = types.ModuleType(name)
"""

#: Run after the prelude: values checked against the specification, and what was chosen.
_CHECK = """
import json, uuid
import uuidkit
from uuidkit import _construct, _stdlib
from uuidkit.generators import V1Generator, V6Generator, V7Generator

UUID = uuid.UUID
def check(u, version):
    assert type(u) is UUID, type(u)
    assert u.version == version and u.variant == uuid.RFC_4122, u
    assert UUID(str(u)) == u and UUID(int=u.int) == u and hash(UUID(int=u.int)) == hash(u)

for maker, version in ((uuidkit.uuid4, 4), (uuidkit.uuid8, 8), (uuidkit.uuid1, 1)):
    check(maker(), version)
for maker, version in ((uuidkit.uuid7, 7), (uuidkit.uuid6, 6), (V7Generator(), 7),
                       (V6Generator(), 6)):
    values = [maker() for _ in range(2000)]
    for value in values:
        check(value, version)
    assert values == sorted(set(values)), version  # RFC 9562 §6.2
block = V7Generator().generate(1000)
assert block == sorted(set(block)) and all(type(u) is UUID for u in block)
check(V1Generator()(), 1)
# RFC 9562 Appendix A.2 and A.4 (DNS namespace, www.example.com).
name = "www.example.com"
assert str(uuidkit.uuid3(uuidkit.NAMESPACE_DNS, name)) == "5df41881-3aed-3515-88a7-2f4a814cf09e"
assert str(uuidkit.uuid5(uuidkit.NAMESPACE_DNS, name)) == "2ed6657d-e927-568b-95e1-2665a8aea6a2"
assert uuidkit.uuid8(1, 2, 3).int == 0x00000000_0001_8002_8000_000000000003  # RFC 9562 §5.8
text = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
parsed = uuidkit.parse(text)
assert type(parsed) is UUID and parsed.int == 0xF81D4FAE7DEC11D0A76500A0C91E6BF6
assert type(uuidkit.parse(text.replace("-", ""))) is UUID
assert uuidkit.from_int(5) == UUID(int=5) and type(uuidkit.from_int(5)) is UUID
print(json.dumps({
    "slot_protocol": _construct.SLOT_PROTOCOL,
    "set_int": _construct.set_int.__name__,
    "fallbacks": sorted(_stdlib.FALLBACKS),
}))
"""


def _run(prelude: str) -> dict[str, Any]:
    environment = dict(os.environ, PYTHONPATH=str(SRC))
    result = subprocess.run(
        [sys.executable, "-c", prelude + _CHECK],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_the_standard_library_class_is_filled_slot_by_slot() -> None:
    report = _run("")
    assert report["slot_protocol"] is True
    assert report["set_int"] == "__set__"  # vars(UUID)["int"].__set__
    assert report["fallbacks"] == []


def test_a_class_without_its_own_slot_descriptors_is_filled_by_name() -> None:
    report = _run(_INHERITED_SLOTS)
    assert report["slot_protocol"] is True
    assert report["set_int"] == "_set_int_by_name"


def test_a_class_that_cannot_be_filled_is_constructed() -> None:
    report = _run(_READ_ONLY_INT)
    assert report["slot_protocol"] is False


def test_without_the_private_modules_the_public_ones_serve() -> None:
    report = _run(_NO_PRIVATE_NAMES)
    assert report["fallbacks"] == ["Lock", "RLock", "SimpleQueue", "weak_ref"]


def test_the_guarded_names_are_the_standard_librarys_objects() -> None:
    import queue
    import threading
    import weakref

    assert _stdlib.SimpleQueue is queue.SimpleQueue
    assert _stdlib.weak_ref is weakref.ref
    assert type(_stdlib.RLock()) is type(threading.RLock())


def test_without_frame_access_the_warning_is_still_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_caller, "_getframe", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SharedV7Generator(tmp_path / "missing.state")
    assert [w.category for w in caught] == [StateUnavailableWarning]
    assert "missing" in str(caught[0].message)


_values = st.integers(0, (1 << 128) - 1)


@pytest.mark.skipif(_accel.SPEEDUPS is None, reason="the compiled module is not in use")
@settings(max_examples=300, deadline=None)
@given(values=st.lists(_values, min_size=1, max_size=20))
def test_compiled_ints_without_the_digit_layout(values: list[int]) -> None:
    speedups: Any = _accel.SPEEDUPS
    assert speedups._digit_layout(False) is False
    try:
        for value in values:
            reference = uuid.UUID(int=value)
            assert uuidkit.parse(str(reference)).int == value  # int written by the C module
            assert uuidkit.to_int(reference) == value  # int read and written again
            assert uuidkit.to_bytes(reference) == reference.bytes  # int read
        later = [uuidkit.uuid7() for _ in range(50)]
        assert later == sorted(set(later)) and all(u.version == 7 for u in later)
    finally:
        speedups._digit_layout(True)
