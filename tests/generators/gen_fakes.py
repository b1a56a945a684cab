"""Deterministic clocks and random sources for the generator tests."""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Callable

#: 2026-01-01T00:00:00Z in Unix nanoseconds: a fixed, realistic starting point.
START_NS = 1_767_225_600_000_000_000
NS_PER_MS = 1_000_000


class FakeClock:
    """A clock that only moves when told; ``sleep`` advances it unless ``stalled``.

    ``monotonic`` is the matching monotonic clock: it advances by every sleep, stalled or
    not, times ``sleep_overrun`` (a loaded host sleeps longer than asked).
    """

    def __init__(
        self, now_ns: int = START_NS, *, stalled: bool = False, sleep_overrun: int = 1
    ) -> None:
        self.now_ns = now_ns
        self.stalled = stalled
        self.slept_ns = 0
        self.sleeps = 0
        self.monotonic_ns = 0
        self.sleep_overrun = sleep_overrun

    def __call__(self) -> int:
        return self.now_ns

    def monotonic(self) -> int:
        return self.monotonic_ns

    def advance(self, delta_ns: int) -> None:
        """Step the wall clock alone (the monotonic clock stays): a jump of the wall clock."""
        self.now_ns += delta_ns

    def elapse(self, delta_ns: int) -> None:
        """Let ``delta_ns`` of time pass: the wall and the monotonic clock move together."""
        self.now_ns += delta_ns
        self.monotonic_ns += delta_ns

    def sleep(self, duration_ns: int) -> None:
        self.sleeps += 1
        self.slept_ns += duration_ns
        self.monotonic_ns += duration_ns * self.sleep_overrun
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


class ProcessKeyedBytes:
    """A deterministic stand-in for the operating system's CSPRNG.

    Bytes are SHA-256 of (seed, process id, draw number): reproducible within a process,
    and different in a forked child exactly as the kernel's are, so a fork test fails only
    when a generator reuses randomness it drew (or buffered) before the fork.
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.draws = 0

    def __call__(self, count: int) -> bytes:
        out = bytearray()
        while len(out) < count:
            self.draws += 1
            key = f"{self.seed}:{os.getpid()}:{self.draws}".encode()
            out += hashlib.sha256(key).digest()
        return bytes(out[:count])
