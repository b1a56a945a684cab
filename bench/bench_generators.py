"""Generator speed, as ratios measured in the same run (never asserted in tests).

Targets: thread-safe monotonic ``uuid7()`` <= 0.50x stdlib ``uuid.uuid4()``; bulk
``generate(1_000_000)`` <= 0.15x the per-UUID time of calling ``uuid7()`` a million times;
a shared state file within 2x of the in-process generator when blocks are large.

Run: ``python3 bench/bench_generators.py``
"""

from __future__ import annotations

import importlib
import tempfile
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path

import uuidkit
from common import Timer
from uuidkit.generators import (
    DEFAULT_V7,
    SharedConfig,
    SharedV6Generator,
    SharedV7Generator,
    StateUnavailableWarning,
    V7Generator,
)

MILLION = 1_000_000


def _peer(module: str, name: str) -> Callable[[], object] | None:
    try:
        function: Callable[[], object] = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    return function


def single_calls() -> None:
    timer = Timer(number=200_000)
    base = timer.measure("stdlib uuid.uuid4()", uuid.uuid4)
    timer.measure("uuidkit.uuid7()  [target <= 0.50x]", uuidkit.uuid7)
    timer.measure("uuidkit.uuid6()", uuidkit.uuid6)
    timer.measure("uuidkit.uuid1()", uuidkit.uuid1)
    timer.measure("stdlib uuid.uuid1()", uuid.uuid1)
    for module, name in (("uuid_utils", "uuid7"), ("uuid6", "uuid7")):
        peer = _peer(module, name)
        if peer is not None:
            timer.measure(f"{module}.{name}()", peer)
    timer.report(base, "single calls")


def bulk() -> None:
    timer = Timer(number=1, repeat=3)
    uuid7 = uuidkit.uuid7
    base = timer.measure("uuid7() x 1M, per UUID", lambda: [uuid7() for _ in range(MILLION)])
    timer.measure(
        "DEFAULT_V7.generate(1M)  [target <= 0.15x]", lambda: DEFAULT_V7.generate(MILLION)
    )
    timer.measure("DEFAULT_V7.generate_ints(1M)", lambda: DEFAULT_V7.generate_ints(MILLION))
    for label in list(timer.results):
        timer.results[label] /= MILLION
    timer.report(base, "bulk, 1,000,000 values (ns per UUID)")


def shared(directory: Path) -> None:
    warnings.simplefilter("ignore", StateUnavailableWarning)
    timer = Timer(number=200_000)
    base = timer.measure("in-process V7Generator()", V7Generator().next)
    large = SharedConfig(window_ms=1_000)
    timer.measure(
        "SharedV7Generator, 1 s windows  [target <= 2x]",
        SharedV7Generator(directory / "v7.state", large),
    )
    timer.measure(
        "SharedV7Generator, 50 ms windows",
        SharedV7Generator(directory / "v7-50.state", SharedConfig(window_ms=50)),
    )
    timer.measure(
        "SharedV6Generator, 1 s windows", SharedV6Generator(directory / "v6.state", large)
    )
    timer.report(base, "state-file generators (durable: fsync on every reservation)")


def _nothing() -> None:
    return None


def pure_path_building_blocks() -> None:
    """What the pure path's building blocks cost on this interpreter: the v1/v6 gate (a
    one-token ``SimpleQueue``) against a lock, and one Python-level call, which the pure
    generators' small methods pay per step."""
    from _queue import SimpleQueue
    from _thread import RLock, allocate_lock

    timer = Timer(number=200_000)
    lock, rlock = allocate_lock(), RLock()
    gate: SimpleQueue[bool] = SimpleQueue()
    gate.put(True)

    def lock_pair() -> None:
        lock.acquire()
        lock.release()

    def rlock_pair() -> None:
        rlock.acquire()
        rlock.release()

    def gate_pair() -> None:
        gate.get()
        gate.put(True)

    def one_call() -> None:
        _nothing()

    base = timer.measure("Lock acquire() + release()", lock_pair)
    timer.measure("RLock acquire() + release()", rlock_pair)
    timer.measure("gate get() + put(True)", gate_pair)
    timer.measure("a function making one Python call", one_call)
    timer.measure("a function making none", _nothing)
    timer.report(base, "pure-path building blocks")


def main() -> None:
    single_calls()
    bulk()
    pure_path_building_blocks()
    with tempfile.TemporaryDirectory() as directory:
        shared(Path(directory))


if __name__ == "__main__":
    main()
