"""Fork: a child never repeats its parent or its siblings, proven with a frozen clock.

Every test freezes the clock (parent and child read the same instant) and uses
:class:`ProcessKeyedBytes`, a reproducible stand-in for the kernel's CSPRNG that, like the
kernel's, gives a forked child different bytes. What the parent drew before the fork
(buffered random words, a counter, a node, a state-file range) is the same in the child
unless the generator's fork hook discards it, so each test fails when that hook is removed.

References: RFC 9562 §6.9 ("reseed ... upon process forks"), §6.10; RFC 4122 §4.2.1.
"""

from __future__ import annotations

import os
import pickle
import signal
import warnings
from collections.abc import Callable

import pytest
from gen_fakes import FakeClock, ProcessKeyedBytes

from uuidkit.generators import (
    GregorianConfig,
    NodePolicy,
    V1Generator,
)
from uuidkit.generators.node import MULTICAST_BIT

#: A child that has not reported within this many seconds is killed (a deadlock).
CHILD_DEADLINE_S = 20


def in_children(count: int, produce: Callable[[], object]) -> list[object]:
    """Fork ``count`` children (from this process) running ``produce``; their results."""
    children = []
    for _ in range(count):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            status = 1
            try:
                signal.alarm(CHILD_DEADLINE_S)
                warnings.simplefilter("ignore")
                with os.fdopen(write_end, "wb") as stream:
                    pickle.dump(produce(), stream)
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        children.append((pid, read_end))
    results = []
    for pid, read_end in children:
        with os.fdopen(read_end, "rb") as stream:
            data = stream.read()
        _, status = os.waitpid(pid, 0)
        assert status == 0, f"child failed or hung (wait status {status})"
        results.append(pickle.loads(data))
    return results


def frozen_v1(node: int | None = None) -> V1Generator:
    # A 1 ms clock interval holds 10,000 timestamps: a frozen clock still yields values.
    return V1Generator(
        GregorianConfig(clock_resolution_ns=1_000_000),
        node=node,
        clock=FakeClock(),
        random_bytes=ProcessKeyedBytes(),
    )


def test_v1_sibling_children_of_a_random_node_generator_cannot_meet() -> None:
    generator = frozen_v1()
    parent_values = [generator().int for _ in range(10)]

    def child() -> tuple[int, int, list[int]]:
        return generator.node, generator.clock_seq, [generator().int for _ in range(500)]

    children: list[tuple[int, int, list[int]]] = in_children(3, child)  # type: ignore[assignment]
    nodes = {node for node, _, _ in children}
    # Each child drew its own random multicast node: siblings differ in 47 random bits, so
    # they cannot emit one another's values whatever their clock sequences.
    assert len(nodes | {generator.node}) == 4
    assert all(node & MULTICAST_BIT for node in nodes)
    everything = parent_values + [generator().int for _ in range(500)]
    for _, _, values in children:
        everything += values
    assert len(set(everything)) == len(everything)


@pytest.mark.parametrize("how", ["constructor", "set_node", "policy"])
def test_v1_child_keeps_a_node_the_user_fixed_and_changes_the_clock_sequence(how: str) -> None:
    fixed = 0x0123456789AB
    if how == "policy":
        generator = V1Generator(
            GregorianConfig(node=NodePolicy.STABLE, clock_resolution_ns=1_000_000),
            clock=FakeClock(),
            random_bytes=ProcessKeyedBytes(),
        )
        fixed = generator.node
    else:
        generator = frozen_v1(fixed if how == "constructor" else None)
        if how == "set_node":
            generator.set_node(fixed)
    generator()
    [result] = in_children(1, lambda: (generator.node, generator.clock_seq))
    assert isinstance(result, tuple)
    node, clock_seq = result
    # What remains with a fixed node: only the 14-bit clock sequence separates parent and
    # child (two siblings may draw the same one); SharedV1Generator hands out clock
    # sequences under a file lock instead.
    assert node == fixed and clock_seq != generator.clock_seq
