"""One uuid7 per new millisecond: the one-ID-per-request case, next to the back-to-back one.

Two measurements, both printed with the back-to-back cost of the same generator:

- **system clock**: each call is made just after the wall clock has entered a new
  millisecond (a busy wait, not timed), and only the call is timed with
  ``time.perf_counter_ns`` (the cost of an empty timed pair is subtracted); median of
  ``samples`` calls. The back-to-back row is timed the same way, so both carry the same
  timer noise.
- **injected clock** (``V7Generator(clock=...)`` whose clock advances 1 ms per reading):
  timed with ``timeit`` like the other per-call rows; the clock is a Python call, and an
  injected clock makes the core hold the generator's lock around the value, so this row
  costs more than the system clock's.

It also counts the values the garbage collector tracks (``gc.is_tracked``), and times the
same new-millisecond call of a C floor (``bench/_floor.c``, built by ``bench/floor.py``).

Run alone: ``PYTHONPATH=src python3 bench/bench_new_millisecond.py``.

References: RFC 9562 §5.7, §6.2.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
import timeit
import uuid
from collections.abc import Callable

import floor
import uuidkit
from uuidkit import _accel
from uuidkit.generators import V7Generator

NS_PER_MS = 1_000_000


def _timed_calls(function: Callable[[], object], samples: int, spaced: bool) -> float:
    """Median ns of one call (minus an empty timed pair), each in a new ms when ``spaced``."""
    clock, counter = time.time_ns, time.perf_counter_ns
    costs, empties = [], []
    for _ in range(samples):
        if spaced:
            now_ms = clock() // NS_PER_MS
            while clock() // NS_PER_MS == now_ms:
                pass
        start = counter()
        function()
        middle = counter()
        end = counter()
        costs.append(middle - start)
        empties.append(end - middle)
    return statistics.median(costs) - statistics.median(empties)


class _SteppingClock:
    def __init__(self) -> None:
        self.now_ns = time.time_ns()

    def __call__(self) -> int:
        self.now_ns += NS_PER_MS
        return self.now_ns


def _tracked(function: Callable[[], uuid.UUID], count: int, spaced: bool) -> int:
    values = []
    for _ in range(count):
        if spaced:
            time.sleep(0.002)
        values.append(function())
    return sum(gc.is_tracked(value) for value in values)


def new_millisecond(samples: int = 2000, number: int = 200_000) -> None:
    path = "compiled" if _accel.SPEEDUPS is not None else "pure Python"
    print(f"\nuuid7, one per new millisecond ({path}; median of {samples:,} system-clock calls)")
    seven = uuidkit.uuid7
    spaced = _timed_calls(seven, samples, spaced=True)
    burst = _timed_calls(seven, samples, spaced=False)
    print(f"  system clock, each call in a new ms  {spaced:8.1f} ns  {spaced / burst:5.2f}x burst")
    print(f"  system clock, back to back           {burst:8.1f} ns")
    reference = _timed_calls(uuid.uuid4, samples, spaced=True)
    ratio = spaced / reference
    print(f"  stdlib uuid4(), each call in a new ms {reference:7.1f} ns  (uuid7 {ratio:.2f}x)")
    module = floor.load() if _accel.SPEEDUPS is not None else None
    if module is not None:
        # bench/_floor.c: clock, buffered random bytes and an untracked uuid.UUID, no more.
        least = _timed_calls(module.uuid7, samples, spaced=True)
        print(
            f"  C floor uuid7(), each call in a new ms {least:6.1f} ns  "
            f"(uuid7 {spaced / least:.2f}x, goal <= 1.30x; bench/bench_goals.py alternates them)"
        )
    stepping = V7Generator(clock=_SteppingClock())
    fixed_ns = time.time_ns()
    steady = V7Generator(clock=lambda: fixed_ns)
    for generator in (stepping, steady):
        generator()
    new_ms = min(timeit.repeat(stepping, number=number, repeat=5)) / number * 1e9
    same_ms = min(timeit.repeat(steady, number=number // 10, repeat=5)) / (number // 10) * 1e9
    print(f"  injected clock, +1 ms per reading    {new_ms:8.1f} ns  {new_ms / same_ms:5.2f}x")
    print(f"  injected clock, the same ms          {same_ms:8.1f} ns")
    tracked = _tracked(seven, 50, spaced=True)
    print(f"  GC-tracked values: {tracked} of 50 at one call per 2 ms")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    new_millisecond(samples=300 if quick else 2000, number=20_000 if quick else 200_000)
