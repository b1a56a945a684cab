"""Threads: each generator's lock is proven by a race forced to happen, not hoped for.

A :class:`Rendezvous` sits inside the generator's critical section, in a function the
generator calls while it holds its lock and has read but not yet written its state (the
WAIT policy's sleep; the state-file generators' random seed of a new reservation). The
first thread to get there waits for a second one:

- with the lock, the second thread blocks on the lock, the first waits out its patience
  and finishes alone, and both values are distinct and increasing;
- without the lock, the second thread gets there too, both carry on from the same state
  with the same (constant) random bytes, and the second value is a duplicate or fails the
  monotonic check: the test fails every time, not by luck.

References: RFC 9562 §6.2 (monotonicity, batches); RFC 4122 §4.2.1.4 (a global lock).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from gen_fakes import NS_PER_MS, FakeClock, constant_bytes

import uuidkit
from uuidkit.generators import (
    CounterOverflow,
    DraftV8Config,
    DraftV8Generator,
    GregorianConfig,
    SharedConfig,
    SharedV1Generator,
    SharedV6Generator,
    SharedV7Generator,
    StateUnavailableWarning,
    V1Generator,
    V6Generator,
    V7Config,
    V7Counter,
    V7Generator,
)

#: How long the first thread waits for a second one inside the critical section (seconds).
PATIENCE_S = 0.3


class Rendezvous:
    """Where the first arriving thread waits (up to :data:`PATIENCE_S`) for a second one."""

    def __init__(self) -> None:
        self.armed = False
        self.first: int | None = None
        self.entered = threading.Event()
        self.second_arrived = threading.Event()
        self.met = False

    def arrive(self) -> None:
        if not self.armed:
            return
        me = threading.get_ident()
        if self.first is None:
            self.first = me
            self.entered.set()
            self.met = self.second_arrived.wait(PATIENCE_S)
        elif me != self.first:
            self.second_arrived.set()


class RacingClock(FakeClock):
    """A frozen clock whose ``sleep`` (the WAIT policy's) holds the rendezvous and then moves
    the clock to the next tick after the one the sleeper saw (the same for two racers)."""

    def __init__(self, tick_ns: int, rendezvous: Rendezvous) -> None:
        super().__init__()
        self.tick_ns = tick_ns
        self.rendezvous = rendezvous

    def sleep(self, duration_ns: int) -> None:
        target = (self.now_ns // self.tick_ns + 1) * self.tick_ns
        self.rendezvous.arrive()
        self.sleeps += 1
        self.monotonic_ns += duration_ns
        self.now_ns = max(self.now_ns, target)


def race(
    generate: Callable[[], uuidkit.UUID],
    rendezvous: Rendezvous,
    second_call: Callable[[], uuidkit.UUID] | None = None,
) -> None:
    """Two threads into ``generate`` (the second into ``second_call`` if given), the second
    only once the first is inside the lock."""
    results: dict[str, object] = {}
    calls = {"first": generate, "second": second_call or generate}

    def run(name: str) -> None:
        try:
            results[name] = calls[name]().int
        except Exception as error:
            results[name] = error

    rendezvous.armed = True
    first = threading.Thread(target=run, args=("first",))
    first.start()
    assert rendezvous.entered.wait(10), "the first thread never reached the critical section"
    second = threading.Thread(target=run, args=("second",))
    second.start()
    first.join()
    second.join()
    assert not rendezvous.met, "a second thread entered the critical section"
    assert all(type(value) is int for value in results.values()), results
    assert results["first"] != results["second"]


def waiting(factory: Callable[..., Callable[[], uuidkit.UUID]], config: object, tick_ns: int):  # type: ignore[no-untyped-def]
    rendezvous = Rendezvous()
    clock = RacingClock(tick_ns, rendezvous)
    generator = factory(
        config,
        clock=clock,
        random_bytes=constant_bytes(0xFF),
        sleep_ns=clock.sleep,
        monotonic_ns=clock.monotonic,
    )
    return generator, rendezvous


def test_v7_lock() -> None:
    # A 12-bit counter seeded all ones: every tick holds one value, the next one WAITs.
    config = V7Config(
        counter=V7Counter.DEDICATED, counter_bits=12, guard_bits=0, overflow=CounterOverflow.WAIT
    )
    generator, rendezvous = waiting(V7Generator, config, NS_PER_MS)
    generator()
    race(generator, rendezvous)


def test_v7_generate_block_holds_the_same_lock() -> None:
    config = V7Config(
        counter=V7Counter.DEDICATED, counter_bits=12, guard_bits=0, overflow=CounterOverflow.WAIT
    )
    generator, rendezvous = waiting(V7Generator, config, NS_PER_MS)
    generator()
    race(lambda: generator.generate(1)[0], rendezvous)


@pytest.mark.parametrize("factory", [V1Generator, V6Generator])
def test_gregorian_lock(factory: Callable[..., Callable[[], uuidkit.UUID]]) -> None:
    # A 100 ns clock interval holds one timestamp: the next value WAITs (fixed node and
    # clock sequence, so two values of one tick would be equal).
    config = GregorianConfig(overflow=CounterOverflow.WAIT)
    generator, rendezvous = waiting(factory, config, 100)
    generator()
    race(generator, rendezvous)


@pytest.mark.parametrize("factory", [V1Generator, V6Generator])
def test_gregorian_slow_path_waits_for_the_hot_path(
    factory: Callable[..., Callable[[], uuidkit.UUID]],
) -> None:
    # The first thread WAITs inside a plain call (on the pure path: holding the gate, not the
    # lock); a call with an explicit field (the slow path) must wait for it, not run beside it.
    config = GregorianConfig(overflow=CounterOverflow.WAIT)
    generator, rendezvous = waiting(factory, config, 100)
    generator()
    race(generator, rendezvous, lambda: generator.next(None, 5))


@pytest.mark.parametrize("factory", [V1Generator, V6Generator])
def test_gregorian_hot_path_waits_for_a_generate_block(
    factory: Callable[..., Callable[[], uuidkit.UUID]],
) -> None:
    # The first thread WAITs inside generate(1), which holds the state for its whole block;
    # a plain call from a second thread must wait for the block to end.
    config = GregorianConfig(overflow=CounterOverflow.WAIT)
    generator, rendezvous = waiting(factory, config, 100)
    generator()
    race(lambda: generator.generate(1)[0], rendezvous, generator)


def test_v8_lock() -> None:
    config = DraftV8Config(timestamp_bits=60, tick_ns=100)
    generator, rendezvous = waiting(DraftV8Generator, config, 100)
    for _ in range(256):  # every clock sequence value of the tick: the next one WAITs
        generator()
    race(generator, rendezvous)


class RacingBytes:
    """Constant random bytes; drawing a reservation's 8-byte seed holds the rendezvous."""

    def __init__(self, rendezvous: Rendezvous) -> None:
        self.rendezvous = rendezvous

    def __call__(self, count: int) -> bytes:
        if count == 8:
            self.rendezvous.arrive()
        return b"\x5a" * count


@pytest.mark.parametrize("factory", [SharedV7Generator, SharedV6Generator, SharedV1Generator])
def test_shared_lock(tmp_path: Path, factory: type) -> None:
    # Both threads share one flock descriptor, so only the generator's own lock keeps them
    # from reserving the same range from the same file contents.
    rendezvous = Rendezvous()
    clock = FakeClock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StateUnavailableWarning)
        generator = factory(
            tmp_path / "gen.state",
            SharedConfig(durable=False),
            clock=clock,
            random_bytes=RacingBytes(rendezvous),
            sleep_ns=clock.sleep,
            monotonic_ns=clock.monotonic,
        )
        race(generator, rendezvous)
