"""The compiled UUIDv7 fast path: in use when built, and the same generator as the pure one.

``uuidkit._speedups.V7Core`` makes the common case (same tick, counter not exhausted) in C
and hands every other case to the pure-Python ``uuid7`` closure, on the same state. These
tests prove that the C path is taken, that a generator mixing both paths gives exactly the
values and errors of the pure-Python generator (same clock readings, same random bytes,
every policy), that the busy interlock keeps the fast path away from state the slow path
holds, and that a forked child forgets the core's state and words.

The pure twin is a :class:`V7Generator` built with ``_v7build._compiled_core`` returning ``None``.

References: RFC 9562 §5.7, §6.1, §6.2, §6.9.
"""

from __future__ import annotations

import functools
import gc
import os
import pickle
import threading
import types
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from gen_fakes import FakeClock, constant_bytes, seeded_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit
from uuidkit import _accel
from uuidkit.errors import GeneratorError
from uuidkit.generators import (
    ClockRegression,
    CounterOverflow,
    V7Config,
    V7Counter,
    V7Generator,
    _v7build,
    _v7bulk,
    defaults,
)

NS_PER_MS = 1_000_000
needs_core = pytest.mark.skipif(
    getattr(_accel.SPEEDUPS, "V7Core", None) is None,
    reason="uuidkit._speedups (with V7Core) not in use: not built, or UUIDKIT_PURE=1",
)


def _built_here() -> bool:
    package = Path(uuidkit.__file__).parent
    required = os.environ.get("UUIDKIT_REQUIRE_SPEEDUPS", "") not in ("", "0")
    return required or any(package.glob("_speedups*.so")) or any(package.glob("_speedups*.pyd"))


@contextmanager
def pure_build() -> Iterator[None]:
    """Generators built inside this block are the pure-Python reference."""
    original = _v7build._compiled_core
    _v7build._compiled_core = lambda *args: None
    try:
        yield
    finally:
        _v7build._compiled_core = original


def pure_twin(**kwargs: Any) -> V7Generator:
    with pure_build():
        return V7Generator(**kwargs)


def test_uuid7_is_compiled_when_the_accelerator_is_built() -> None:
    if _accel.PURE_REQUESTED:
        assert type(uuidkit.uuid7).__name__ == "function"  # the pure closure
        return
    if _accel.SPEEDUPS is None and not _built_here():
        pytest.skip("uuidkit._speedups not built here (python3 setup.py build_ext --inplace)")
    assert _accel.SPEEDUPS is not None, "uuidkit._speedups was built but is not in use"
    # The C module's own function (its self is the module), backed by the default
    # generator's V7Core, which stays private to that generator.
    assert type(uuidkit.uuid7) is types.BuiltinFunctionType
    assert uuidkit.uuid7 is _accel.SPEEDUPS.uuid7 is defaults.DEFAULT_V7.next
    assert type(uuidkit.uuid7()) is uuidkit.UUID


@needs_core
def test_the_fast_path_makes_every_value_but_the_first_including_new_ticks() -> None:
    clock = FakeClock()
    generator = V7Generator(clock=clock, random_bytes=seeded_bytes(1))
    core: Any = generator.next
    values = [generator().int for _ in range(1000)]
    assert core.slow_calls == 1  # the first value seeds the tick; the C path made the rest
    clock.advance(NS_PER_MS)
    values += [generator().int for _ in range(1000)]
    before = core.slow_calls
    for _ in range(100):  # one value per new millisecond: Timeline's NEW move, in C
        clock.advance(NS_PER_MS)
        values.append(generator().int)
    # 300 words (a tail word and two seed words each) cross at most one refill of the core's
    # 512-word buffer; a seed that would straddle it is the slow path's (a refill runs Python).
    assert core.slow_calls - before <= 1
    assert values == sorted(set(values))


@needs_core
def test_with_the_system_clock_the_slow_path_runs_once_per_millisecond() -> None:
    generator = V7Generator()
    core: Any = generator.next
    values = [generator() for _ in range(20_000)]
    milliseconds = {value.int >> 80 for value in values}
    # One slow call per new millisecond at most (the first value included).
    assert core.slow_calls <= len(milliseconds)
    assert all(value.version == 7 and value.variant == uuid.RFC_4122 for value in values)
    assert [value.int for value in values] == sorted({value.int for value in values})


# --- compiled and pure: the same values and errors ------------------------------------------

CONFIGS = [
    V7Config(),
    V7Config(increment_bits=64),
    V7Config(fraction_bits=12, increment_bits=61),
    V7Config(guard_bits=73, increment_bits=0),  # a 1-bit seed: +1 increments, rand_a ticks over
    V7Config(counter=V7Counter.DEDICATED, counter_bits=12, guard_bits=0),
    V7Config(counter=V7Counter.DEDICATED, counter_bits=12, overflow=CounterOverflow.RAISE),
    V7Config(counter=V7Counter.DEDICATED, counter_bits=12, overflow=CounterOverflow.WAIT),
    V7Config(counter=V7Counter.DEDICATED, counter_bits=42, fraction_bits=8),
    V7Config(regression=ClockRegression.RAISE, max_ahead_ms=3),
    V7Config(regression=ClockRegression.RESEED, regression_window_ms=2),
    V7Config(counter=V7Counter.NONE, fraction_bits=12),
    V7Config(
        counter=V7Counter.DEDICATED, counter_bits=12, guard_bits=0, max_ahead_ms=1
    ),  # ADVANCE beyond the run-ahead bound raises
]

STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("advance"), st.integers(-5 * NS_PER_MS, 5 * NS_PER_MS)),
        st.tuples(st.just("advance"), st.sampled_from([-20 * NS_PER_MS, 1, NS_PER_MS])),
        st.tuples(st.just("values"), st.integers(1, 300)),
        st.tuples(st.just("block"), st.integers(0, 40)),
        st.tuples(st.just("set"), st.sampled_from([-1, 0, 1 << 63, (1 << 64) + 5])),
    ),
    max_size=25,
)


def run(generator: V7Generator, clock: FakeClock, steps: list[tuple[str, int]]) -> list[object]:
    outcomes: list[object] = []

    def record(action: Callable[[], object]) -> None:
        try:
            outcomes.append(action())
        except (GeneratorError, ValueError, TypeError) as error:
            outcomes.append((type(error).__name__, str(error)))

    saved = clock.now_ns
    for kind, amount in steps:
        if kind == "advance":
            clock.advance(amount)
        elif kind == "set":
            saved, clock.now_ns = clock.now_ns, amount
            record(lambda: generator().int)
            clock.now_ns = saved
        elif kind == "values":
            for _ in range(amount):
                record(lambda: generator().int)
        else:
            record(functools.partial(generator.generate_ints, amount))
    return outcomes


@needs_core
@settings(max_examples=60, deadline=None)
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 2**32),
    constant=st.sampled_from([None, 0x00, 0xFF]),
    steps=STEPS,
)
def test_compiled_and_pure_give_the_same_values_and_errors(
    config: V7Config, seed: int, constant: int | None, steps: list[tuple[str, int]]
) -> None:
    def build(factory: Callable[..., V7Generator]) -> tuple[V7Generator, FakeClock]:
        clock = FakeClock()
        source = seeded_bytes(seed) if constant is None else constant_bytes(constant)
        generator = factory(
            config=config,
            clock=clock,
            random_bytes=source,
            sleep_ns=clock.sleep,
            monotonic_ns=clock.monotonic,
        )
        return generator, clock

    compiled, compiled_clock = build(V7Generator)
    pure, pure_clock = build(pure_twin)
    assert run(compiled, compiled_clock, steps) == run(pure, pure_clock, steps)


class SteppingClock(FakeClock):
    """A clock that moves ``step_ns`` forward before every reading: one value per tick."""

    def __init__(self, step_ns: int) -> None:
        super().__init__()
        self.step_ns = step_ns

    def __call__(self) -> int:
        self.now_ns += self.step_ns
        return self.now_ns


@needs_core
@settings(max_examples=40, deadline=None)
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 2**32),
    step_ns=st.sampled_from([NS_PER_MS, 2 * NS_PER_MS, NS_PER_MS + 1, NS_PER_MS // 3]),
    count=st.integers(1, 1200),
    regression_at=st.none() | st.integers(0, 1200),
)
def test_one_value_per_new_tick_matches_the_pure_generator(
    config: V7Config, seed: int, step_ns: int, count: int, regression_at: int | None
) -> None:
    # RFC 9562 §6.2: every new tick reseeds the counter. The compiled core makes the NEW move
    # itself (2 seed words, 1 tail word); the values, and every later decision of the
    # timeline (a 20 ms step back below), are the pure generator's.
    outcomes = []
    for factory in (V7Generator, pure_twin):
        clock = SteppingClock(step_ns)
        generator = factory(config=config, clock=clock, random_bytes=seeded_bytes(seed))
        steps: list[tuple[str, int]] = [("values", count)]
        if regression_at is not None:
            steps = [("values", regression_at), ("advance", -20 * NS_PER_MS), ("values", 5)]
        outcomes.append(run(generator, clock, steps))
    assert outcomes[0] == outcomes[1]


@needs_core
def test_values_made_at_a_new_tick_are_not_tracked_by_the_collector() -> None:
    # A uuid.UUID holds only an int: the garbage collector has nothing to find in it.
    generator = V7Generator(clock=SteppingClock(NS_PER_MS), random_bytes=seeded_bytes(7))
    core: Any = generator.next
    values = [generator() for _ in range(600)]  # the first value is the slow path's
    # A seed that would straddle a refill of the core's 512 random words (three words a new
    # tick) takes the Python path: 600 new ticks include several, and its values too must
    # come out untracked.
    assert core.slow_calls >= 2
    assert not any(gc.is_tracked(value) for value in values)


@needs_core
def test_a_regression_and_an_overflow_through_the_mixed_path_match_the_pure_one() -> None:
    # Spelled out: RFC 9562 §6.2 KEEP across a 3 ms step back, then ADVANCE past an
    # exhausted 12-bit counter; the compiled generator makes most values in C.
    config = V7Config(counter=V7Counter.DEDICATED, counter_bits=12, guard_bits=0)
    steps = [("values", 3000), ("advance", -3 * NS_PER_MS), ("values", 5000)]
    steps += [("advance", 10 * NS_PER_MS), ("values", 10)]
    results = []
    for factory in (V7Generator, pure_twin):
        clock = FakeClock()
        generator = factory(config=config, clock=clock, random_bytes=seeded_bytes(3))
        results.append(run(generator, clock, steps))
        core = generator.next
    compiled, pure = results
    assert compiled == pure
    assert all(isinstance(value, int) for value in compiled)
    assert compiled == sorted(set(compiled))  # type: ignore[type-var]
    milliseconds = [value >> 80 for value in compiled]  # type: ignore[operator]
    assert max(milliseconds) > FakeClock().ms + 1  # ADVANCE ran ahead of the frozen clock
    del core


# --- the busy interlock --------------------------------------------------------------------


class BlockingClock(FakeClock):
    """Frozen; a read from the thread named ``holder`` blocks until ``go`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.blocked = threading.Event()
        self.go = threading.Event()

    def __call__(self) -> int:
        if threading.current_thread().name == "holder" and not self.go.is_set():
            self.blocked.set()
            assert self.go.wait(10)
        return self.now_ns


@needs_core
def test_the_fast_path_stays_out_while_the_slow_path_holds_the_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Thread "holder" is inside the slow path (the state taken) when "caller" calls.

    The core is attached without the lock (as it is for the system clock), so only the busy
    flag keeps the caller's fast path from the state: zero random bytes make every increment
    1, so a fast-path value made from the state the holder took would equal the holder's.
    """
    monkeypatch.setattr(_v7build, "_core_takes_the_lock", lambda clock: False)
    clock = BlockingClock()
    generator = V7Generator(clock=clock, random_bytes=constant_bytes(0x00))
    first = generator().int
    results: dict[str, int] = {}
    holder = threading.Thread(
        target=lambda: results.update(holder=generator.generate_ints(1)[0]), name="holder"
    )
    caller = threading.Thread(target=lambda: results.update(caller=generator().int))
    holder.start()
    assert clock.blocked.wait(10), "the holder never reached the clock"
    assert generator.next.busy  # type: ignore[attr-defined]
    caller.start()
    caller.join(0.5)  # with the interlock, the caller now waits for the generator's lock
    clock.go.set()
    holder.join(10)
    caller.join(10)
    assert first < results["holder"] < results["caller"], results
    assert generator().int > results["caller"]


# --- fork ------------------------------------------------------------------------------------


@needs_core
def test_a_forked_child_forgets_the_core_state_and_words() -> None:
    # A generator of the caller's own (the process-wide one exposes no core): registered
    # for fork as every generator is, the default included.
    generator = V7Generator()
    generator()
    core: Any = generator.next
    assert core.ready
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(read_end)
            ready_after_fork = core.ready
            before = core.slow_calls
            value = generator().int
            with os.fdopen(write_end, "wb") as stream:
                pickle.dump((ready_after_fork, core.slow_calls - before, value), stream)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stream:
        ready_after_fork, slow_calls, value = pickle.loads(stream.read())
    _, status = os.waitpid(pid, 0)
    assert status == 0
    # RFC 9562 §6.9: the child starts afresh: its first value is the slow path's, seeded
    # from its own randomness.
    assert not ready_after_fork and slow_calls == 1
    assert value != generator().int


# --- blocks ------------------------------------------------------------------------------


@needs_core
@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    count=st.integers(-1, 600),
    counter=st.integers(0, (1 << 74) - 1),
    increment_bits=st.sampled_from([0, 32, 33, 48, 61]),
    counter_bits=st.sampled_from([62, 66, 74]),
    kind=st.sampled_from([_v7bulk.KIND_INTS, _v7bulk.KIND_UUIDS, _v7bulk.KIND_RECORDS]),
)
def test_the_compiled_block_is_the_pure_block(
    seed: int, count: int, counter: int, increment_bits: int, counter_bits: int, kind: int
) -> None:
    prefix = (0x0192_3456_789A << 80) | (7 << 76) | (0b10 << 62)
    counter &= (1 << counter_bits) - 1
    arguments = (prefix, counter, counter_bits, increment_bits, count)
    compiled = _v7bulk.bulk_block(*arguments, seeded_bytes(seed), kind)
    pure = _v7bulk._bulk_block(*arguments, seeded_bytes(seed), kind)
    assert compiled == pure
    if compiled is not None:
        block, first, last, _ = compiled
        assert len(block) == count * (16 if kind == _v7bulk.KIND_RECORDS else 1)
        assert first < last or count == 1


@needs_core
def test_blocks_of_uuids_are_exact_untracked_uuids_continuing_single_values() -> None:
    generator = V7Generator()
    before = generator().int
    block = generator.generate(50_000)
    records = generator.generate_records(50_000)
    after = generator().int
    assert all(type(value) is uuid.UUID and not gc.is_tracked(value) for value in block)
    from_records = [int.from_bytes(records[i : i + 16]) for i in range(0, len(records), 16)]
    sequence = [before, *(value.int for value in block), *from_records, after]
    # RFC 9562 §6.2: "UUIDs generated in batches are also monotonic".
    assert sequence == sorted(set(sequence))
    assert all(value >> 76 & 0xF == 7 and value >> 62 & 0b11 == 0b10 for value in sequence)


def test_a_refill_of_a_bad_size_fails_as_the_pure_path_does() -> None:
    results = []
    for factory in (V7Generator, pure_twin):
        generator = factory(clock=FakeClock(), random_bytes=lambda n: b"\x00" * (n - 1))
        try:
            generator()
        except TypeError as error:
            results.append(str(error))
    assert len(results) == 2 and results[0] == results[1]
