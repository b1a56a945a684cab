"""Shared timing helpers for the benchmarks: every figure is a ratio to a baseline of the same run.

Usage inside a benchmark script::

    from common import Timer
    timer = Timer()
    base = timer.measure("stdlib uuid4()", uuid.uuid4)
    timer.measure("uuidkit uuid4()", uuidkit.uuid4)
    timer.report(base)
"""

from __future__ import annotations

import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Timer"]


@dataclass
class Timer:
    """Best-of-``repeat`` timings in nanoseconds per call.

    ``clock`` is wall time by default; ``time.process_time`` counts only this process's CPU
    time, which other work on a shared machine disturbs less.
    """

    number: int = 100_000
    repeat: int = 7
    results: dict[str, float] = field(default_factory=dict)
    clock: Callable[[], float] = time.perf_counter

    def measure(self, label: str, func: Callable[[], object], number: int | None = None) -> str:
        count = number or self.number
        best = min(timeit.repeat(func, number=count, repeat=self.repeat, timer=self.clock))
        self.results[label] = best / count * 1e9
        return label

    def report(self, baseline: str, title: str = "") -> None:
        base = self.results[baseline]
        if title:
            print(f"\n{title}")
        print(f"{'what':<44} {'ns/call':>10} {'ratio':>8}   (ratio to {baseline})")
        for label, ns in self.results.items():
            print(f"{label:<44} {ns:>10.1f} {ns / base:>7.2f}x")
