"""Threads, forks, processes sharing a state file, and kill -9 crashes.

References: RFC 9562 §6.2, §6.3, §6.9; RFC 4122 §4.2.1.3, §4.2.1.4.
"""

from __future__ import annotations

import itertools
import os
import pickle
import random
import signal
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

import uuidkit
from uuidkit.generators import (
    DEFAULT_V6,
    SharedConfig,
    SharedV6Generator,
    SharedV7Generator,
    StateUnavailableWarning,
)
from uuidkit.timestamps import unix_ns_to_gregorian_ticks

NS_PER_MS = 1_000_000


def test_one_million_uuid7_increasing_and_on_the_wall_clock() -> None:
    uuid7 = uuidkit.uuid7
    previous = uuid7().int
    for _ in range(999_998):
        value = uuid7().int
        assert value > previous
        previous = value
    before_ms = time.time_ns() // NS_PER_MS
    last = uuid7().int
    after_ms = time.time_ns() // NS_PER_MS
    assert last > previous
    # No drift: the millionth timestamp is the wall clock's millisecond at that call (within
    # 5 ms as the issue asks, and in fact never ahead of it).
    assert before_ms - 5 <= last >> 80 <= after_ms


@pytest.mark.parametrize("generate", [uuidkit.uuid7, DEFAULT_V6], ids=["v7", "v6"])
def test_sixteen_threads(generate: Callable[[], uuidkit.UUID]) -> None:
    per_thread = 20_000 if generate is uuidkit.uuid7 else 5_000
    results: list[list[int]] = [[] for _ in range(16)]
    barrier = threading.Barrier(16)

    def work(out: list[int]) -> None:
        barrier.wait()
        append = out.append
        for _ in range(per_thread):
            append(generate().int)

    threads = [threading.Thread(target=work, args=(out,)) for out in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [value for out in results for value in out]
    assert len(set(everything)) == 16 * per_thread
    for out in results:
        assert all(a < b for a, b in itertools.pairwise(out))


def _fork_and_collect(produce: Callable[[], list[int]]) -> tuple[list[int], list[int]]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read_end)
        try:
            with os.fdopen(write_end, "wb") as stream:
                pickle.dump(produce(), stream)
        finally:
            os._exit(0)
    os.close(write_end)
    mine = produce()
    with os.fdopen(read_end, "rb") as stream:
        theirs: list[int] = pickle.load(stream)
    os.waitpid(pid, 0)
    return mine, theirs


def test_fork_child_never_repeats_the_parent() -> None:
    uuid7 = uuidkit.uuid7
    uuid7()  # the parent has a seeded counter and buffered random words before forking
    parent, child = _fork_and_collect(lambda: [uuid7().int for _ in range(100_000)])
    assert len(child) == 100_000
    assert not set(parent) & set(child)


def test_fork_child_v6_and_bulk_never_repeat() -> None:
    uuidkit.uuid6()
    parent, child = _fork_and_collect(
        lambda: (
            [u.int for u in DEFAULT_V6.generate(2_000)]
            + uuidkit.generators.DEFAULT_V7.generate_ints(20_000)
        )
    )
    assert not set(parent) & set(child)


# --- processes sharing one state file -----------------------------------------------------


def _run_children(count: int, body: Callable[[int], object]) -> list[object]:
    """Fork ``count`` children running ``body(index)``; return their pickled results."""
    children = []
    for index in range(count):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            status = 0
            try:
                warnings.simplefilter("ignore", StateUnavailableWarning)
                with os.fdopen(write_end, "wb") as stream:
                    pickle.dump(body(index), stream)
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        os.close(write_end)
        children.append((pid, read_end))
    results = []
    for pid, read_end in children:
        with os.fdopen(read_end, "rb") as stream:
            results.append(pickle.load(stream))
        assert os.waitpid(pid, 0)[1] == 0
    return results


def _timed_values(
    path: Path,
    config: SharedConfig,
    count: int,
    delay_s: float = 0.0,
    kind: type[SharedV7Generator] | type[SharedV6Generator] = SharedV7Generator,
) -> list[tuple[int, int, int]]:
    """(clock before, value, clock after) of ``count`` values of a ``kind`` generator on the
    state file, started after ``delay_s`` (staggered starts: later processes start while
    others generate)."""
    time.sleep(delay_s)
    generator = kind(path, config)
    clock = time.time_ns
    records = []
    for _ in range(count):
        start = clock()
        value = generator().int
        records.append((start, value, clock()))
    return records


def _check_shared_guarantees(
    per_process: list[list[tuple[int, int, int]]], config: SharedConfig, exact: bool
) -> None:
    everything = [record for records in per_process for record in records]
    values = [value for _, value, _ in everything]
    assert len(set(values)) == len(values), "duplicates across processes"
    for records in per_process:
        own = [value for _, value, _ in records]
        assert all(a < b for a, b in itertools.pairwise(own)), "not increasing"
    for start, value, end in everything:
        # Guarantee 3: never stamped before the request. Ahead of the clock only by a start's
        # resume above the stored window: it ends window_ms after its opener's clock, and
        # each process that starts meanwhile resumes at least one ms above the one before.
        ahead_ms = config.window_ms + len(per_process)
        assert start // NS_PER_MS <= value >> 80 <= end // NS_PER_MS + ahead_ms
    # Guarantee 4: u returned before v is requested, in an earlier ms (or any, if exact) => u < v.
    by_end = sorted(everything, key=lambda record: record[2])
    pending: dict[int, int] = {}
    best_below, position = -1, 0
    for start, value, _ in sorted(everything):
        while position < len(by_end) and by_end[position][2] < start:
            _, ended, _ = by_end[position]
            pending[ended >> 80] = max(pending.get(ended >> 80, -1), ended)
            position += 1
        current_ms = start // NS_PER_MS if not exact else 1 << 60
        for ms in [ms for ms in pending if ms < current_ms]:
            best_below = max(best_below, pending.pop(ms))
        assert best_below < value, "a value below one returned before it was requested"


@pytest.mark.slow
def test_eight_processes_share_one_state_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.state"
    config = SharedConfig(window_ms=50)
    results = _run_children(8, lambda _: _timed_values(path, config, 50_000))
    _check_shared_guarantees(results, config, exact=False)  # type: ignore[arg-type]


def test_one_value_per_reservation_is_exactly_ordered(tmp_path: Path) -> None:
    path = tmp_path / "exact.state"
    config = SharedConfig(window_ms=1, counter_block=1, durable=False)
    results = _run_children(4, lambda _: _timed_values(path, config, 400))
    _check_shared_guarantees(results, config, exact=True)  # type: ignore[arg-type]


def _v6_tick(value: int) -> int:
    # RFC 9562 §5.6: time_high (32 bits), time_mid (16), then version and time_low (12).
    return ((value >> 80) << 12) | ((value >> 64) & 0xFFF)


def test_v6_processes_share_one_state_file_and_resume_above(tmp_path: Path) -> None:
    # Six processes on the real clock: each one's first reservation resumes above the file,
    # the later ones join windows at the clock. (1)-(3) and (5) of uuidkit.generators.shared.
    path = tmp_path / "v6.state"
    config = SharedConfig(window_ms=20, durable=False)
    per_process: list[list[tuple[int, int, int]]] = _run_children(  # type: ignore[assignment]
        6, lambda index: _timed_values(path, config, 5_000, 0.01 * index, SharedV6Generator)
    )
    everything = [record for records in per_process for record in records]
    assert len({value for _, value, _ in everything}) == len(everything)
    # Each value is at most one reservation, and a window ends window_ms after its opener's
    # clock or is one tick long: no value runs further ahead of the clock than that.
    bound = config.window_ms * 10_000 + len(everything)
    for start, value, end in everything:
        assert unix_ns_to_gregorian_ticks(start) <= _v6_tick(value)
        assert _v6_tick(value) <= unix_ns_to_gregorian_ticks(end) + bound
    for records in per_process:
        own = [value for _, value, _ in records]
        assert all(a < b for a, b in itertools.pairwise(own)), "not increasing"
        first_request = records[0][0]
        before = [value for _, value, end in everything if end < first_request]
        assert not before or min(own) > max(before), "a start below a value returned before it"


# --- kill -9 ---------------------------------------------------------------------------------

RECORD = 16


def _generate_until_killed(make: Callable[[], Callable[[], uuidkit.UUID]], write_end: int) -> None:
    warnings.simplefilter("ignore", StateUnavailableWarning)
    generate = make()
    while True:
        os.write(write_end, generate().bytes)


# A stalled clock puts each restart in the millisecond (v7) or tick (v6) of the values made
# before the kill, where only the state file keeps them apart and in order (v6: the restart
# opens a window above the stored one, which the killed process may have counted ahead
# into); on the real clock a restart (a fork) comes in a later millisecond, and values above
# the old ones need no state file.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "rounds", "stalled"),
    [
        ("v7", 200, True),
        ("v6", 40, False),
        ("v6", 40, True),
    ],
    ids=["v7-200-stalled", "v6-40-real", "v6-40-stalled"],
)
def test_kill_9_at_random_moments(tmp_path: Path, kind: str, rounds: int, stalled: bool) -> None:
    path = tmp_path / f"crash-{kind}.state"
    # No fsync: a kill -9 loses no written page (power loss: test_gen_statefile_faults.py).
    config = SharedConfig(window_ms=20, durable=False)
    factory = SharedV7Generator if kind == "v7" else SharedV6Generator
    frozen = time.time_ns()
    clock = (lambda: frozen) if stalled else time.time_ns

    def make() -> Callable[[], uuidkit.UUID]:
        return factory(path, config, clock=clock)

    chooser = random.Random(20260101)
    seen: set[bytes] = set()
    last = b""
    for round_number in range(rounds):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            try:
                _generate_until_killed(make, write_end)
            finally:
                os._exit(1)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as stream:
            # The random delay starts once the child has made two values (forking a large
            # test process can take longer than the delay itself), so every round checks at
            # least two, however late the child gets the CPU.
            data = stream.read(2 * RECORD)
            time.sleep(chooser.uniform(0.0, 0.005))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            data += stream.read()
        values = [data[i : i + RECORD] for i in range(0, len(data) - RECORD + 1, RECORD)]
        for value in values:
            assert value > last, f"round {round_number}: {value.hex()} <= {last.hex()}"
            assert value not in seen
            seen.add(value)
            last = value
    assert len(seen) >= 2 * rounds
    # The next write removes the temporary files the killed writers left (uuidkit._safefile).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StateUnavailableWarning)
        make()()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_shared_generator_threads_and_fork(tmp_path: Path) -> None:
    with pytest.warns(StateUnavailableWarning, match="missing"):
        generator = SharedV7Generator(tmp_path / "tf.state", SharedConfig(durable=False))
    generator()  # the parent holds a reservation before forking
    results: list[list[int]] = [[] for _ in range(4)]

    def work(out: list[int]) -> None:
        out.extend(generator().int for _ in range(5_000))

    threads = [threading.Thread(target=work, args=(out,)) for out in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({value for out in results for value in out}) == 20_000
    assert all(out == sorted(out) for out in results)
    parent, child = _fork_and_collect(lambda: [generator().int for _ in range(20_000)])
    assert not set(parent) & set(child)
    assert child[0] > max(max(out) for out in results)  # the child reserved a later range


def test_shared_generator_fork_without_a_writable_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.warns(StateUnavailableWarning):
        generator = SharedV7Generator(blocker / "x.state", SharedConfig(durable=False))
    with pytest.warns(StateUnavailableWarning, match="unwritable"):
        generator()
    warnings.simplefilter("ignore", StateUnavailableWarning)
    parent, child = _fork_and_collect(lambda: [generator().int for _ in range(20_000)])
    assert not set(parent) & set(child)
