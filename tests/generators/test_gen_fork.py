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
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gen_fakes import FakeClock, ProcessKeyedBytes, constant_bytes

import uuidkit
from uuidkit._system import POOL
from uuidkit.generators import (
    DraftV8Config,
    DraftV8Generator,
    GregorianConfig,
    NodePolicy,
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


# --- every generator: parent and child disjoint under a frozen clock ----------------------


def frozen(
    factory: Callable[..., Any],
    *args: object,
    read: Callable[[], int] | None = None,
    random_bytes: Callable[[int], bytes] | None = None,
    **kwargs: object,
) -> Any:
    clock = FakeClock()
    return factory(
        *args,
        clock=read or clock,
        random_bytes=random_bytes or ProcessKeyedBytes(),
        sleep_ns=clock.sleep,
        monotonic_ns=clock.monotonic,
        **kwargs,
    )


def quiet(factory: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StateUnavailableWarning)
        return factory()


def make_subjects(
    tmp_path: Path, read: Callable[[], int] | None = None
) -> dict[str, Callable[[], Callable[[], int]]]:
    """Each subject, built with a frozen clock (or ``read``) and ProcessKeyedBytes."""
    shared_config = SharedConfig(durable=False)

    def calls(generator: Callable[[], uuidkit.UUID]) -> Callable[[], int]:
        return lambda: generator().int

    return {
        "v7": lambda: calls(frozen(V7Generator, read=read)),
        "v7-bulk": lambda: (lambda g: lambda: g.generate_ints(2)[1])(
            frozen(V7Generator, read=read)
        ),
        "v7-method1": lambda: calls(
            frozen(V7Generator, V7Config(counter=V7Counter.DEDICATED, counter_bits=42), read=read)
        ),
        "v6": lambda: calls(frozen(V6Generator, read=read)),
        "v6-fixed": lambda: calls(
            frozen(
                V6Generator,
                GregorianConfig(
                    random_per_uuid=False, node=NodePolicy.STABLE, clock_resolution_ns=10**6
                ),
                read=read,
            )
        ),
        "v1": lambda: calls(
            frozen(V1Generator, GregorianConfig(clock_resolution_ns=1_000_000), read=read)
        ),
        "v8": lambda: calls(
            frozen(DraftV8Generator, DraftV8Config(timestamp_bits=64, tick_ns=1), read=read)
        ),
        "shared-v7": lambda: calls(
            quiet(
                lambda: frozen(SharedV7Generator, tmp_path / "v7.state", shared_config, read=read)
            )
        ),
        # Constant random bytes: the counter and tail are the same in parent and child, so
        # only the range the child reserves for itself (the fork hook) keeps them apart.
        "shared-v7-constant": lambda: calls(
            quiet(
                lambda: frozen(
                    SharedV7Generator,
                    tmp_path / "v7c.state",
                    shared_config,
                    read=read,
                    random_bytes=constant_bytes(0x5A),
                )
            )
        ),
        "shared-v6": lambda: calls(
            quiet(
                lambda: frozen(SharedV6Generator, tmp_path / "v6.state", shared_config, read=read)
            )
        ),
        "shared-v1": lambda: calls(
            quiet(
                lambda: frozen(SharedV1Generator, tmp_path / "v1.state", shared_config, read=read)
            )
        ),
    }


SUBJECT_NAMES = sorted(make_subjects(Path()))


@pytest.mark.parametrize("name", SUBJECT_NAMES)
def test_parent_and_child_are_disjoint(name: str, tmp_path: Path) -> None:
    generate = make_subjects(tmp_path)[name]()
    before = [generate() for _ in range(3)]  # counters seeded, random words buffered
    [child] = in_children(1, lambda: [generate() for _ in range(300)])
    parent = before + [generate() for _ in range(300)]
    assert isinstance(child, list) and len(child) == 300
    assert not set(parent) & set(child)


class ParentHighBytes:
    """All-ones bytes in the process that made it, all-zero bytes in any forked child."""

    def __init__(self) -> None:
        self.parent = os.getpid()

    def __call__(self, count: int) -> bytes:
        return (b"\xff" if os.getpid() == self.parent else b"\x00") * count


#: rand_a and rand_b of a UUIDv7 (RFC 9562 §5.7): the 12 bits after the version, the 62
#: after the variant.
V7_RANDOM_BITS = (0xFFF << 64) | ((1 << 62) - 1)


@pytest.mark.parametrize(
    "config",
    [V7Config(), V7Config(counter=V7Counter.DEDICATED, counter_bits=42)],
    ids=["method2", "method1"],
)
def test_a_v7_child_starts_afresh_from_its_own_randomness(config: V7Config) -> None:
    # RFC 9562 §6.9: the child must reuse neither the parent's buffered random words nor its
    # counter nor its tick. The parent's bytes are all ones, the child's all zeros: the
    # child's first value is a fresh tick at the clock with a counter seeded from zeros
    # and a zero tail, so every random bit is 0. Kept words, a kept counter or a kept tick
    # (which skips the new prefix) each leave ones there or a wrong timestamp.
    clock = FakeClock()
    generator = V7Generator(config, clock=clock, random_bytes=ParentHighBytes())
    [generator() for _ in range(3)]
    [child] = in_children(1, lambda: generator().int)
    assert isinstance(child, int)
    assert child >> 80 == clock.ms and (child >> 76) & 0xF == 7
    assert child & V7_RANDOM_BITS == 0


def test_uuid4_and_uuid8_discard_the_entropy_buffer_in_the_child(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(POOL, "_random_bytes", ProcessKeyedBytes())
    POOL.reset()
    first = uuidkit.uuid4()  # the parent now holds 255 buffered values

    def draw() -> list[int]:
        return [uuidkit.uuid4().int for _ in range(100)] + [uuidkit.uuid8().int for _ in range(100)]

    [child] = in_children(1, draw)
    parent = [first.int, *draw()]
    assert isinstance(child, list) and not set(parent) & set(child)
    POOL.reset()  # nothing keyed stays behind for later tests


# --- a lock held by another thread at the moment of the fork --------------------------------


class HeldClock:
    """A clock that, called from the holder thread, blocks until released: the generator's
    lock is then held by that thread at the moment the test forks."""

    def __init__(self) -> None:
        self.holder: int | None = None
        self.inside = threading.Event()
        self.release = threading.Event()
        self.base = FakeClock()

    def __call__(self) -> int:
        if threading.get_ident() == self.holder:
            self.inside.set()
            self.release.wait(CHILD_DEADLINE_S)
        self.base.advance(1_000)  # a moving clock: no generator waits on it
        return self.base()


@pytest.mark.parametrize("name", SUBJECT_NAMES)
def test_a_lock_held_at_fork_does_not_deadlock_the_child(name: str, tmp_path: Path) -> None:
    held = HeldClock()
    generate = make_subjects(tmp_path, held)[name]()
    generate()

    def hold() -> None:
        held.holder = threading.get_ident()
        generate()

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert held.inside.wait(CHILD_DEADLINE_S)
        # The child inherits a locked lock whose owner does not exist there: only the fork
        # hook's new lock lets it generate.
        [child] = in_children(1, lambda: [generate() for _ in range(3)])
        assert isinstance(child, list) and len(child) == 3
    finally:
        held.release.set()
        thread.join()
