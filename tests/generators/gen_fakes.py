"""Deterministic clocks and random sources for the generator tests."""

from __future__ import annotations

import random
from collections.abc import Callable

#: 2026-01-01T00:00:00Z in Unix nanoseconds: a fixed, realistic starting point.
START_NS = 1_767_225_600_000_000_000
NS_PER_MS = 1_000_000


class FakeClock:
    """A clock that only moves when told; ``sleep`` advances it unless ``stalled``."""

    def __init__(self, now_ns: int = START_NS, *, stalled: bool = False) -> None:
        self.now_ns = now_ns
        self.stalled = stalled
        self.slept_ns = 0

    def __call__(self) -> int:
        return self.now_ns

    def advance(self, delta_ns: int) -> None:
        self.now_ns += delta_ns

    def sleep(self, duration_ns: int) -> None:
        self.slept_ns += duration_ns
        if not self.stalled:
            self.now_ns += duration_ns

    @property
    def ms(self) -> int:
        return self.now_ns // NS_PER_MS


def constant_bytes(byte: int) -> Callable[[int], bytes]:
    """A random source that always returns ``byte`` repeated (0x00: seeds 0, increments 1)."""

    def source(count: int) -> bytes:
        return bytes([byte]) * count

    return source


def seeded_bytes(seed: int) -> Callable[[int], bytes]:
    """A reproducible random source."""
    generator = random.Random(seed)
    return generator.randbytes
