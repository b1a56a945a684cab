"""Every generator holds its promises when threads run truly in parallel (PEP 703).

On a free-threaded CPython (``--disable-gil`` with ``PYTHON_GIL=0``) these tests run threads
at once on every core; with a GIL they still check the same properties, interleaved. Each test
starts its threads on a barrier, so they all call the generator in the same moment, and keeps
every value: no value may repeat across the threads, and each thread's values of v1, v6 and v7
must strictly increase (RFC 9562 §6.2: "each subsequent UUID MUST be greater"; for v1 the
timestamp, RFC 4122 §4.2.1). ``UUIDKIT_STRESS_CALLS`` sets the calls per thread (CI's run on
the free-threaded build uses 1,000,000; the default keeps the suite fast).

The mechanisms these tests stand on: the entropy buffers (one per thread in C, a lock in the
pure ``EntropyPool``), the critical sections of the compiled v7 and Gregorian cores, and the
generators' locks. Removing any of them makes a test here fail on a free-threaded build.

References: RFC 9562 §6.2, §6.9; RFC 4122 §4.2.1; PEP 703.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import uuid
from collections.abc import Callable

import pytest

import uuidkit
from uuidkit import _system, bulk

THREADS = 8
CALLS = int(os.environ.get("UUIDKIT_STRESS_CALLS", "20000"))

#: The order each kind must keep within one thread (None: no order, only uniqueness).
ORDER: dict[str, Callable[[uuid.UUID], int] | None] = {
    "uuid1": lambda u: u.time,
    "uuid4": None,
    "uuid6": lambda u: u.int,
    "uuid7": lambda u: u.int,
    "uuid8": None,
}


def _run_threads(work: Callable[[], list[uuid.UUID]]) -> list[list[uuid.UUID]]:
    """``work`` on THREADS threads released together; every thread's values, or its error."""
    barrier = threading.Barrier(THREADS)
    results: list[list[uuid.UUID]] = [[] for _ in range(THREADS)]
    errors: list[BaseException] = []

    def body(index: int) -> None:
        try:
            barrier.wait()
            results[index] = work()
        except BaseException as error:  # reported below, with the thread's traceback
            errors.append(error)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def _check(results: list[list[uuid.UUID]], order: Callable[[uuid.UUID], int] | None) -> None:
    every = [value for values in results for value in values]
    assert all(type(value) is uuid.UUID for value in every)
    assert len(set(every)) == len(every), f"{len(every) - len(set(every))} duplicates"
    if order is not None:
        for values in results:
            keys = [order(value) for value in values]
            assert all(a < b for a, b in itertools.pairwise(keys))


@pytest.mark.parametrize("name", sorted(ORDER))
def test_default_functions_on_parallel_threads(name: str) -> None:
    function = getattr(uuidkit, name)
    results = _run_threads(lambda: [function() for _ in range(CALLS)])
    _check(results, ORDER[name])
    assert sum(map(len, results)) == THREADS * CALLS


@pytest.mark.parametrize("version", [4, 7, 8])
def test_bulk_lists_on_parallel_threads(version: int) -> None:
    block = max(1, CALLS // 100)
    results = _run_threads(lambda: [u for _ in range(100) for u in bulk.generate(version, block)])
    _check(results, (lambda u: u.int) if version == 7 else None)


def test_pure_entropy_pool_on_parallel_threads() -> None:
    """The pure path's pool (a lock on free-threaded builds): no value twice, no error."""
    pool = _system.EntropyPool(locked=True)
    results = _run_threads(lambda: [uuid.UUID(int=pool.next_u128()) for _ in range(CALLS)])
    _check(results, None)


def test_the_pool_is_locked_exactly_where_the_gil_is_missing() -> None:
    assert _system.FREE_THREADED is ("t" in getattr(sys, "abiflags", ""))
    assert (_system.POOL._lock is not None) is _system.FREE_THREADED


@pytest.mark.skipif(not _system.FREE_THREADED, reason="a free-threaded build only")
def test_importing_uuidkit_keeps_the_gil_off() -> None:
    """The accelerator declares Py_MOD_GIL_NOT_USED: loading it leaves the GIL disabled."""
    import subprocess

    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "import uuidkit, uuidkit.generators, uuidkit.bulk\n"
        "uuidkit.uuid7(); uuidkit.uuid1(); uuidkit.uuid4()\n"
        "print(uuidkit.ACCELERATED, sys._is_gil_enabled())\n"
    )
    env = {**os.environ, "PYTHON_GIL": "0"}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert result.stdout.split()[1] == "False", result.stderr
