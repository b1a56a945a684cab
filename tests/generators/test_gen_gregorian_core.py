"""UUIDv1/v6 hot paths: the compiled core is in use when built and agrees with pure Python.

- Agreement: the same script of calls, clock moves (forward, back, by any amount), explicit
  fields, blocks and node changes, run against a pure-Python generator and a compiled one
  with identical injected clocks and random sources, gives identical values, errors and
  clock sequences. With an injected clock the compiled core does the common case in C and
  hands every rare case (regression, RESTART, RAISE, WAIT) to the Python slow path: the
  mixed path is the one compared.
- Interlock: while the Python slow path holds a system-clock generator's state, the C fast
  path of another thread stands aside (a deterministic pause inside the slow path).
- Fork: the core's buffered random words are discarded in a forked child, and a fork that
  bypasses Python's hooks is noticed by the core itself.

References: RFC 9562 §5.1, §5.6, §6.1, §6.2, §6.9, §6.10; RFC 4122 §4.2.1.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import pickle
import signal
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import pytest
from gen_fakes import START_NS, FakeClock, seeded_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit
from uuidkit import _accel
from uuidkit.fields import fields
from uuidkit.generators import (
    DEFAULT_V1,
    DEFAULT_V6,
    ClockRegression,
    CounterOverflow,
    GregorianConfig,
    V1Generator,
    V6Generator,
    _functions,
)
from uuidkit.generators import _gregorian_engine as engine_module
from uuidkit.generators.gregorian import V6_DEFAULT
from uuidkit.generators.node import MULTICAST_BIT
from uuidkit.layouts import v1_int, v6_int
from uuidkit.timestamps import gregorian_ticks_to_unix_ns, unix_ns_to_gregorian_ticks

CORE = getattr(_accel.SPEEDUPS, "GregorianCore", None)
needs_core = pytest.mark.skipif(CORE is None, reason="uuidkit._speedups not in use")
#: How long a paused slow path waits for another thread's fast path to finish (seconds).
PATIENCE_S = 0.3
CHILD_DEADLINE_S = 20

#: WAIT stalls in steps of one 100 ns interval of the fake clock: a short max_wait_ms keeps
#: a wait behind a tick that KEEP holds seconds ahead to thousands of steps.
CONFIGS: dict[str, tuple[type, GregorianConfig | None]] = {
    "v1": (V1Generator, GregorianConfig(max_wait_ms=1)),
    "v1-keep": (V1Generator, GregorianConfig(regression=ClockRegression.KEEP, max_wait_ms=1)),
    "v1-raise": (V1Generator, GregorianConfig(regression=ClockRegression.RAISE, max_wait_ms=1)),
    "v1-coarse-raise": (
        V1Generator,
        GregorianConfig(clock_resolution_ns=1_000, overflow=CounterOverflow.RAISE),
    ),
    "v1-coarse-wait": (V1Generator, GregorianConfig(clock_resolution_ns=1_000, max_wait_ms=1)),
    "v6": (V6Generator, None),
    "v6-fixed": (V6Generator, dataclasses.replace(V6_DEFAULT, random_per_uuid=False)),
    "v6-small-ahead": (V6Generator, dataclasses.replace(V6_DEFAULT, max_ahead_ms=0)),
    "v6-reseed": (
        V6Generator,
        dataclasses.replace(V6_DEFAULT, regression=ClockRegression.RESEED, regression_window_ms=1),
    ),
    "v6-raise": (V6Generator, dataclasses.replace(V6_DEFAULT, regression=ClockRegression.RAISE)),
}


def make(name: str, *, pure: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, FakeClock]:
    factory, config = CONFIGS[name]
    clock = FakeClock()
    with monkeypatch.context() as patch:
        if pure:
            patch.setattr(engine_module, "_CORE_TYPE", None)
        generator = factory(
            config,
            clock=clock,
            random_bytes=seeded_bytes(7),
            sleep_ns=clock.sleep,
            monotonic_ns=clock.monotonic,
        )
    return generator, clock


def run(generator: Any, clock: FakeClock, operation: tuple[Any, ...]) -> tuple[Any, ...]:
    kind, argument = operation
    try:
        if kind == "move":
            clock.advance(argument)
            return ("moved",)
        if kind == "call":
            return ("uuid", generator().int)
        if kind == "next":
            return ("uuid", generator.next(*argument).int)
        if kind == "block":
            return ("ints", tuple(generator.generate_ints(argument)))
        generator.set_node(argument)
        return ("node",)
    except Exception as error:
        return ("error", type(error), str(error))


_moves = st.one_of(
    st.integers(-2_000, 2_000),  # within and around one interval
    st.sampled_from([-(10**6), -2 * 10**9, -20 * 10**9, 10**6, 15 * 10**9]),  # big steps
)
_operations = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.none()),
        st.tuples(st.just("call"), st.none()),
        st.tuples(st.just("move"), _moves),
        st.tuples(
            st.just("next"),
            st.tuples(
                st.one_of(st.none(), st.integers(0, (1 << 48) - 1)),
                st.one_of(st.none(), st.integers(0, (1 << 14) - 1)),
            ),
        ),
        st.tuples(st.just("block"), st.integers(0, 30)),
        st.tuples(st.just("node"), st.integers(0, (1 << 48) - 1)),
    ),
    max_size=60,
)


@needs_core
@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(CONFIGS)), operations=_operations)
def test_compiled_and_pure_agree_value_for_value(name: str, operations: list[Any]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        pure, pure_clock = make(name, pure=True, monkeypatch=monkeypatch)
        fast, fast_clock = make(name, pure=False, monkeypatch=monkeypatch)
    assert type(pure._engine.state).__name__ == "GregorianState"
    assert type(fast._engine.state) is CORE
    for operation in [("call", None), *operations, ("call", None)]:
        expected = run(pure, pure_clock, operation)
        assert run(fast, fast_clock, operation) == expected, operation
        assert (fast.clock_seq, fast.node) == (pure.clock_seq, pure.node)


@needs_core
@pytest.mark.parametrize("name", ["v1", "v6-fixed"])
def test_a_regression_on_the_mixed_path_increments_the_clock_sequence(name: str) -> None:
    # RFC 9562 §5.1: "If the clock is set backwards ... the clock sequence MUST be changed";
    # the fast path (C) makes the values around it, the slow path (Python) the restart.
    factory, config = CONFIGS[name]
    if config is not None and name == "v6-fixed":
        config = dataclasses.replace(config, regression=ClockRegression.RESEED)
    clock = FakeClock()
    generator = factory(config, clock=clock, random_bytes=seeded_bytes(3), sleep_ns=clock.sleep)
    assert type(generator._engine.state) is CORE
    values = []
    for _ in range(3):
        clock.advance(100)
        values.append(generator())
    clock.advance(-1_000_000)
    values.append(generator())
    clock.advance(100)
    values.append(generator())
    sequences = [value.clock_seq for value in values]
    assert sequences[:3] == [sequences[0]] * 3
    assert sequences[3:] == [(sequences[0] + 1) & 0x3FFF] * 2
    assert fields(values[3]).timestamp < fields(values[2]).timestamp  # type: ignore[union-attr]


@pytest.mark.parametrize("pure", [True, False])
@pytest.mark.parametrize("reading", [-(10**30), 10**30])
def test_an_absurd_clock_reading_is_an_error_on_both_paths(
    pure: bool, reading: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    generator, clock = make("v1", pure=pure, monkeypatch=monkeypatch)
    first = generator()
    start = clock.now_ns
    clock.now_ns = reading
    with pytest.raises(uuidkit.GeneratorError, match="far outside the 60-bit field"):
        generator()
    clock.now_ns = start + 100
    after = generator()
    assert (after.clock_seq, after.node) == (first.clock_seq, first.node)


@pytest.mark.parametrize("pure", [True, False])
@pytest.mark.parametrize(
    ("name", "boundary"), [("v1", 1 << 32), ("v6-fixed", 1 << 12), ("v6", 1 << 12)]
)
def test_values_across_the_cached_upper_bits(
    pure: bool, name: str, boundary: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pure hot path caches everything above the timestamp's low 32 (v1) or 12 (v6)
    # bits: values on both sides of such a boundary still have the RFC 9562 layout.
    generator, clock = make(name, pure=pure, monkeypatch=monkeypatch)
    pack = v1_int if name == "v1" else v6_int
    first_stamp = (unix_ns_to_gregorian_ticks(START_NS) // boundary + 1) * boundary - 3
    clock.now_ns = gregorian_ticks_to_unix_ns(first_stamp)
    for step in range(6):
        value = generator()
        assert fields(value).timestamp == first_stamp + step  # type: ignore[union-attr]
        assert value.int == pack(first_stamp + step, value.clock_seq, value.node)
        clock.advance(100)


def test_module_functions_are_the_generators_hot_paths() -> None:
    for function, generator, pure_twin in (
        (uuidkit.uuid1, DEFAULT_V1, _functions._pure_uuid1),
        (uuidkit.uuid6, DEFAULT_V6, _functions._pure_uuid6),
    ):
        assert pickle.loads(pickle.dumps(function)) is function
        assert function is generator.next
        if _accel.SPEEDUPS is None:
            # The function bound at import, which calls the generator's own hot path.
            assert function is pure_twin
            assert getattr(_functions, "_next_" + function.__name__) is not function
        else:
            # The C module's own function (its self is the module), backed by the default
            # generator's core, which stays private to that generator.
            assert type(function) is types.BuiltinFunctionType
            assert function.__self__ is _accel.SPEEDUPS
            assert type(generator._engine.state) is CORE
            pure_doc = pure_twin.__doc__ or ""
            assert (function.__doc__ or "").split("\n")[0] == pure_doc.split("\n")[0]


@pytest.mark.parametrize("version", [1, 6])
def test_values_have_the_rfc_layout(version: int) -> None:
    function = uuidkit.uuid1 if version == 1 else uuidkit.uuid6
    values = [function() for _ in range(2_000)]
    pack = v1_int if version == 1 else v6_int
    stamps = []
    for value in values:
        assert type(value) is uuidkit.UUID and value.version == version
        assert value.variant == uuidkit.RFC_4122 and value.node & MULTICAST_BIT
        stamp: int = fields(value).timestamp  # type: ignore[union-attr]
        assert pack(stamp, value.clock_seq, value.node) == value.int
        stamps.append(stamp)
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    if version == 1:
        assert len({(value.node, value.clock_seq) for value in values}) == 1
    else:
        assert values == sorted(values) and len({value.node for value in values}) == len(values)


# --- the interlock ---------------------------------------------------------------------------


@needs_core
@pytest.mark.parametrize("factory", [V1Generator, V6Generator])
def test_the_fast_path_stands_aside_while_the_slow_path_holds_the_state(factory: type) -> None:
    generator = factory()  # the system clock: the C fast path takes no lock
    assert type(generator._engine.state) is CORE
    first_value = generator()
    finished = threading.Event()
    results: dict[str, Any] = {}

    def second() -> None:
        results["second"] = generator()
        finished.set()

    def pause_inside_the_slow_path(frame: types.FrameType, event: str, _: object) -> None:
        # The slow path has taken the lock and set busy; it is about to read the state.
        if event == "call" and frame.f_code.co_name == "advance" and "thread" not in results:
            results["thread"] = threading.Thread(target=second)
            results["thread"].start()
            results["ran_meanwhile"] = finished.wait(PATIENCE_S)

    sys.setprofile(pause_inside_the_slow_path)
    try:
        slow_value = generator.with_fields(None, None)
    finally:
        sys.setprofile(None)
    results["thread"].join()
    assert not results["ran_meanwhile"], "the C fast path ran inside the slow path"

    def stamp(value: uuidkit.UUID) -> int:
        return fields(value).timestamp  # type: ignore[union-attr]

    assert stamp(first_value) < stamp(slow_value) < stamp(results["second"])


# --- fork ------------------------------------------------------------------------------------


def in_child(fork: Callable[[], int], produce: Callable[[], object]) -> object:
    read_end, write_end = os.pipe()
    pid = fork()
    if pid == 0:
        os.close(read_end)
        status = 1
        try:
            signal.alarm(CHILD_DEADLINE_S)
            with os.fdopen(write_end, "wb") as stream:
                pickle.dump(produce(), stream)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stream:
        data = stream.read()
    _, status = os.waitpid(pid, 0)
    assert status == 0, f"child failed (wait status {status})"
    return pickle.loads(data)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_buffered_words_are_not_reused_in_a_forked_child() -> None:
    # System clock and CSPRNG: the core's own word buffer. Without the discard, the child's
    # first clock_seq and node would be the parent's next ones.
    generator = V6Generator()
    generator()  # fills the buffer
    child = in_child(os.fork, lambda: [(v.clock_seq, v.node) for v in generator.generate(4)])
    parent = [(v.clock_seq, v.node) for v in generator.generate(4)]
    assert isinstance(child, list) and not set(child) & set(parent)


@needs_core
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs libc fork via ctypes")
@pytest.mark.parametrize("factory", [V1Generator, V6Generator])
def test_a_fork_that_bypasses_the_python_hooks_is_noticed(factory: type) -> None:
    generator = factory()
    generator()
    libc = ctypes.CDLL(None, use_errno=True)

    def libc_fork() -> int:
        pid: int = libc.fork()
        if pid < 0:
            raise OSError(ctypes.get_errno(), "fork failed")
        return pid

    def produce() -> object:
        value = generator()
        return generator.node, value.node, value.clock_seq

    outcome = in_child(libc_fork, produce)
    assert isinstance(outcome, tuple)
    node, value_node, value_clock_seq = outcome
    parent_value = generator()
    # The child reset itself: a new random node (v1), fresh words (v6).
    assert node != generator.node
    assert (value_node, value_clock_seq) != (parent_value.node, parent_value.clock_seq)
