"""Bulk calls over more than 1,000 values let other threads run, and format writes 'S36'.

Every compiled bulk loop that touches only buffers it holds releases the GIL for its whole
loop. The check is deterministic in the direction that matters: the switch interval is set
so high that the calling thread never hands the GIL over on its own, so a second thread can
only advance its counter while the call has released the GIL. A loop that kept the GIL
could never move the counter, whatever the machine's load; one that releases it is retried
until the other thread has been scheduled at least once (bounded).

References: RFC 9562 §4, §5.7, §6.2.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import uuidkit
from uuidkit import _accel, bulk
from uuidkit.errors import InvalidField

#: Without a GIL (a free-threaded build with PYTHON_GIL=0) every thread runs at once: what
#: these tests observe, a thread let in while the call works, holds trivially there.
pytestmark = pytest.mark.skipif(
    not getattr(sys, "_is_gil_enabled", lambda: True)(), reason="no GIL to release"
)

MILLION = 1_000_000
ATTEMPTS = 20

compiled_only = pytest.mark.skipif(
    _accel.SPEEDUPS is None, reason="the pure path has no GIL-free loops"
)


@contextmanager
def counting_thread() -> Iterator[list[int]]:
    """A thread that counts whenever it holds the GIL; the caller keeps it otherwise."""
    counter = [0]
    stop = threading.Event()
    started = threading.Event()

    def count() -> None:
        started.set()
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0.0001)  # a real sleep: the GIL is free for the caller at once

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)  # the caller never yields the GIL by itself
    thread = threading.Thread(target=count)
    thread.start()
    try:
        started.wait()
        yield counter
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)


def other_thread_ran_during(call: Callable[[], object]) -> bool:
    with counting_thread() as counter:
        for _ in range(ATTEMPTS):
            before = counter[0]
            call()
            if counter[0] != before:
                return True
    return False


@pytest.fixture(scope="module")
def records() -> Any:
    return bulk.generate(4, MILLION, into="numpy")


@compiled_only
@pytest.mark.parametrize("dtype", [None, "S36"])
def test_format_of_a_million_lets_another_thread_run(records: Any, dtype: str | None) -> None:
    assert other_thread_ran_during(lambda: bulk.format(records, dtype=dtype))


@compiled_only
@pytest.mark.parametrize("dtype", ["U36", "S36"])
def test_parse_of_a_million_cells_lets_another_thread_run(records: Any, dtype: str) -> None:
    texts = bulk.format(records, dtype=dtype)
    assert other_thread_ran_during(lambda: bulk.parse(texts))


@compiled_only
def test_parse_of_a_million_arrow_strings_lets_another_thread_run(records: Any) -> None:
    pa = pytest.importorskip("pyarrow")  # not installed everywhere (free-threaded builds)
    strings = pa.array(bulk.format(records, dtype="U36"))
    assert strings.type == pa.string()
    assert other_thread_ran_during(lambda: bulk.parse(strings))


@compiled_only
def test_a_million_v7_records_let_another_thread_run() -> None:
    assert other_thread_ran_during(lambda: bulk.generate(7, MILLION, into="numpy"))


@compiled_only
def test_a_call_that_keeps_the_gil_never_moves_the_counter() -> None:
    # The control: the same harness around pure-Python work (which never releases the GIL
    # within the switch interval) sees no progress, so a pass above means a release.
    values = [uuid.UUID(int=i) for i in range(2000)]
    with counting_thread() as counter:
        before = counter[0]
        for value in values:
            str(value)
        assert counter[0] == before


def test_s36_is_the_canonical_text_as_ascii_bytes() -> None:
    values = [uuidkit.uuid4() for _ in range(100)] + [uuidkit.NIL, uuidkit.MAX]
    for source in (values, bulk.from_list(values)):
        texts = bulk.format(source, dtype="S36")
        assert texts.dtype == np.dtype("S36")
        assert [text.decode("ascii") for text in texts.tolist()] == [str(v) for v in values]
        assert bulk.to_list(bulk.parse(texts)) == values


def test_u36_from_a_list_is_the_numpy_text() -> None:
    values = [uuidkit.uuid7() for _ in range(10)]
    texts = bulk.format(values, dtype="U36")
    assert texts.dtype == np.dtype("<U36") and texts.tolist() == [str(v) for v in values]


def test_an_unknown_dtype_is_named() -> None:
    with pytest.raises(InvalidField, match="dtype"):
        bulk.format([uuidkit.uuid4()], dtype="U32")
