"""The compiled gate of the node-bound generators: in use when built, and the same generators.

``uuidkit._speedups.NodeGate`` is the base class of the node-bound generators: it checks the
lease (its end on the generator's clock, its monotonic deadline, no event since it was armed)
and makes v7-node and v8-node values in C, and checks the lease before the inner generator's
value for v1-node and v6-node. These tests prove that the C path is taken; that a generator
mixing both paths gives exactly the values and errors of the pure-Python one under every mix
of clock steps, node assignments, renewals, expiries, deadlines and losses (hypothesis); that
a node is never used after its lease ended or after an event; and that a value the inner
generator made while the lease changed is dropped.

The pure twin is a generator built while ``_nodegate.gate_in_use`` answers False: every value
is the reference path (``_gate_slow``), with its own random words.

References: RFC 9562 §5.1, §5.7, §5.8, §6.2, §6.4; UIAP §2.1.2.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from gen_fakes import NS_PER_MS, FakeClock, seeded_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit import _accel, _system
from uuidkit.errors import NodeUnavailableError
from uuidkit.generators import (
    ManualNodeSource,
    NodeBoundV1Generator,
    NodeBoundV6Generator,
    NodeBoundV7Generator,
    NodeBoundV8Generator,
    _nodegate,
)
from uuidkit.generators.nodesource import FOREVER_NS, NodeLease
from uuidkit.nodelayouts import MULTICAST_BIT, read_node_layout

NODES = [0x0200_0000_00AA | MULTICAST_BIT, 0x0200_0000_00BB | MULTICAST_BIT]
HOUR_NS = 3600 * 1_000_000_000
needs_gate = pytest.mark.skipif(
    getattr(_accel.SPEEDUPS, "NodeGate", None) is None,
    reason="uuidkit._speedups (with NodeGate) not in use: not built, or UUIDKIT_PURE=1",
)
pytestmark = needs_gate


@contextmanager
def pure_build() -> Iterator[None]:
    """Generators built inside this block take the reference path for every value."""
    original = _nodegate.gate_in_use
    _nodegate.gate_in_use = lambda: False
    try:
        yield
    finally:
        _nodegate.gate_in_use = original


class DeadlineSource(ManualNodeSource):
    """A ManualNodeSource whose leases may carry a monotonic deadline (as leased sources')."""

    deadline: int | None = None

    def current(self) -> NodeLease:
        lease = super().current()
        return NodeLease(lease.node, lease.generation, lease.expires_ns, self.deadline)


# --- the C path is taken ---------------------------------------------------------------------


@pytest.mark.parametrize("generator_type", [NodeBoundV7Generator, NodeBoundV8Generator])
def test_counting_layouts_make_every_value_but_the_first_in_c(generator_type: Any) -> None:
    clock = FakeClock()
    generator = generator_type(
        ManualNodeSource(NODES[0]), clock=clock, random_bytes=seeded_bytes(1)
    )
    for _ in range(1000):
        generator()
        clock.advance(7_000)  # new ms ticks (and v8 fraction ticks) on the way
    assert generator._gate_slow_calls == 1  # the first value: no lease held yet


@pytest.mark.parametrize("generator_type", [NodeBoundV1Generator, NodeBoundV6Generator])
def test_gregorian_layouts_check_the_lease_in_c_with_the_system_clock(generator_type: Any) -> None:
    generator = generator_type(ManualNodeSource(NODES[0]))
    values = [generator() for _ in range(1000)]
    assert generator._gate_slow_calls == 1
    assert {read_node_layout(value, f"v{value.version}-node").node for value in values} == {
        NODES[0]
    }


# --- compiled and pure: the same values and errors -------------------------------------------

STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.integers(1, 40)),
        st.tuples(
            st.just("advance"),
            st.sampled_from([1, 244, 999_999, NS_PER_MS, 3 * NS_PER_MS, -NS_PER_MS, -HOUR_NS]),
        ),
        st.tuples(st.just("assign"), st.integers(0, 1)),
        st.tuples(st.just("expires"), st.sampled_from([FOREVER_NS, -1, 0, 2 * NS_PER_MS])),
        st.tuples(st.just("deadline"), st.sampled_from(["none", "past", "future"])),
        st.tuples(st.just("revoke"), st.just(0)),
    ),
    max_size=40,
)


def run(generator_type: Any, steps: list[tuple[str, Any]], seed: int) -> list[object]:
    """Play ``steps`` on a new generator; the list of values and errors it gave."""
    clock = FakeClock()
    source = DeadlineSource(NODES[0])
    generator = generator_type(
        source, clock=clock, random_bytes=seeded_bytes(seed), sleep_ns=clock.sleep
    )
    outcomes: list[object] = []
    expires = FOREVER_NS
    for action, argument in steps:
        if action == "call":
            for _ in range(argument):
                outcomes.append(_outcome(generator))
                clock.advance(97)
        elif action == "advance":
            clock.advance(argument)
        elif action == "assign":
            source.assign(NODES[argument], expires_ns=expires)
        elif action == "expires":
            # A lease ending before, at or after the clock (relative ones from now).
            expires = argument if argument in (FOREVER_NS, -1) else clock.now_ns + argument
            outcomes.append(_outcome(functools.partial(source.extend, expires)))
        elif action == "deadline":
            # The real monotonic clock is read (in C on the compiled path): a deadline an
            # hour either way is past or future whatever the machine's speed.
            now = time.monotonic_ns()
            source.deadline = {"none": None, "past": now - HOUR_NS, "future": now + HOUR_NS}[
                argument
            ]
            if _holds(source):
                source.extend(source.current().expires_ns)  # the generator asks again
        else:
            source.revoke("lost in the test")
    return outcomes


def _holds(source: ManualNodeSource) -> bool:
    try:
        source.current()
    except NodeUnavailableError:
        return False
    return True


def _outcome(call: Callable[[], object]) -> object:
    try:
        value = call()
    except Exception as error:  # every error, with its message, is part of the behaviour
        return (type(error).__name__, str(error))
    return value if not isinstance(value, NodeLease) else "extended"


@pytest.mark.parametrize("generator_type", [NodeBoundV7Generator, NodeBoundV8Generator])
@settings(max_examples=150, deadline=None)
@given(steps=STEPS, seed=st.integers(0, 2**32))
def test_compiled_and_pure_give_the_same_values_and_errors(
    generator_type: Any, steps: list[tuple[str, Any]], seed: int
) -> None:
    compiled = run(generator_type, steps, seed)
    with pure_build():
        pure = run(generator_type, steps, seed)
    assert compiled == pure


# --- never after the lease ends or an event ----------------------------------------------------


@pytest.mark.parametrize("generator_type", [NodeBoundV7Generator, NodeBoundV8Generator])
def test_a_lease_that_ends_on_the_clock_stops_the_node_in_c(generator_type: Any) -> None:
    clock = FakeClock()
    source = ManualNodeSource(NODES[0], expires_ns=clock.now_ns + NS_PER_MS)
    generator = generator_type(source, clock=clock)
    generator()
    generator()  # armed: the gate made this one
    clock.advance(NS_PER_MS)  # no event: only the gate's own check sees the end
    with pytest.raises(NodeUnavailableError, match="lease ended"):
        generator()


@pytest.mark.parametrize(
    "generator_type", [NodeBoundV1Generator, NodeBoundV6Generator, NodeBoundV7Generator]
)
@pytest.mark.parametrize("ended", ["expires_ns", "deadline"])
def test_the_gate_sends_an_ended_lease_to_the_reference_path(
    generator_type: Any, ended: str
) -> None:
    """The lease the gate holds ends on the system clock or the monotonic one (read in C):
    the value is the reference path's, which asks the source again."""
    generator = generator_type(ManualNodeSource(NODES[0]))
    generator()
    generator()
    slow_calls = generator._gate_slow_calls
    state = generator._gate_disarm() or (0, 0)
    past_expiry = time.time_ns() - 1 if ended == "expires_ns" else FOREVER_NS
    past_deadline = time.monotonic_ns() - 1 if ended == "deadline" else None
    assert generator._gate_arm(past_expiry, past_deadline, *state, NODES[0], 1 << 40)
    generator()
    assert generator._gate_slow_calls == slow_calls + 1


@pytest.mark.parametrize("generator_type", [NodeBoundV1Generator, NodeBoundV7Generator])
def test_a_lost_node_is_never_used_again_and_a_new_one_at_once(generator_type: Any) -> None:
    source = ManualNodeSource(NODES[0])
    generator = generator_type(source)
    generator()
    source.revoke("collision")
    with pytest.raises(NodeUnavailableError, match="collision"):
        generator()
    source.assign(NODES[1])
    value = generator()
    assert read_node_layout(value, f"v{value.version}-node").node == NODES[1]


def test_a_value_made_while_the_lease_changed_is_dropped() -> None:
    """The inner generator may run Python code (its slow path); a loss reported meanwhile
    must keep that value from leaving: the gate checks its epoch again afterwards."""
    source = ManualNodeSource(NODES[0])
    generator = NodeBoundV1Generator(source)
    generator()
    inner = generator._inner.next

    def inner_that_loses_the_node() -> object:
        value = inner()
        source.revoke("lost while the value was made")
        return value

    generator._gate_configure(
        _nodegate.MODE_DELEGATE,
        0,
        1,
        0,
        None,
        generator._lock,
        None,
        inner_that_loses_the_node,
        vars(_system),
        _system.MONOTONIC_NS,
    )
    generator._gate_slow(None)  # arm the gate with the lease
    with pytest.raises(NodeUnavailableError, match="lost while the value was made"):
        generator()
