"""Every speed goal of the running interpreter, each figure printed next to its goal.

One run measures, against this interpreter's own ``uuid`` module in the same run:

- **per call** (compiled path): ``uuid4()``, ``uuid7()``, parse and format against the
  standard library's ``uuid.uuid4()``, ``uuid.uuid7()`` (CPython 3.14 and later; before 3.14
  the standard library has none and the row compares with its ``uuid4()``, a stated
  stand-in), ``uuid.UUID(s)`` and ``str(u)``; peers (``uuid_utils.compat``, ``fastuuid``)
  where installed, as context. Goals: 0.10x, 0.12x, 0.20x, 0.25x.
- **import**: ``import uuidkit`` against ``import uuid``, each above a bare ``python -S``
  (process CPU time of fresh processes, in turns). Goal: 2.00x.
- **pure path** (a child with ``UUIDKIT_PURE=1``): ``uuid7()`` against CPython 3.14's
  ``uuid7()`` (goal 0.50x) and ``uuid6()`` against CPython 3.14's ``uuid6()`` (goal 1.00x),
  also against the ``uuid6`` package's where installed. On 3.14 and later the reference is
  the running interpreter's own; before, ``--cpython-uuid PATH`` names a 3.14 ``Lib/uuid.py``
  to load (its optional ``_uuid`` helper is not loaded: the older interpreters' ``_uuid``
  lacks what 3.14's module reads from it, and ``uuid6``/``uuid7`` never use it).
- **a new millisecond**: ``uuidkit.uuid7()`` timed alone (``perf_counter_ns``, minus an empty
  timed pair) just after the wall clock entered a new millisecond, taking turns call by call
  with the same call of a floor, ``bench/_floor.c`` (clock, 10 random
  bytes from a buffered ``getrandom``, an untracked ``uuid.UUID`` made as uuidkit makes it;
  built for this interpreter by ``bench/floor.py``). Goal: 1.30x.
- **bulk.format** of 1,000,000 numpy v4 values, process CPU time (user + system) per value:
  the default output ``'<U36'`` (goal 150 ns) and ``'S36'``; a ``list[UUID]`` to
  ``list[str]`` as context.

Per-call rows: ``--rounds`` rounds (7; 3 with ``--quick``) in which every candidate of an
operation runs ``--number`` calls (200,000; 20,000 with ``--quick``), the order rotating;
the clock is the process's CPU time, so time other processes take is not counted; each row
is the median of its rounds with the spread (max - min over the median), ratios are of
medians. The load average is printed before and after.

Run: ``PYTHONPATH=src python3 bench/bench_goals.py [--quick] [--rounds N]
[--cpython-uuid <3.14 Lib/uuid.py>] [--only per-call,import,pure,new-ms,format]``;
CPython 3.14 and 3.15 inside the Debian tree, from a venv made there (docs/performance.md):
``tools/in-forky.sh env PYTHONPATH=src /opt/bench-3.14/bin/python bench/bench_goals.py``.

References: RFC 9562 §5.4, §5.6, §5.7, §6.2, §4.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import floor
from bench_new_millisecond import _timed_calls
from bench_speed import (
    SOURCE,
    _bind,
    _compile_bytecode,
    _optional,
    interleaved,
    load_cpython_uuid,
    median_and_spread,
)

Row = tuple[str, Callable[[], object]]

#: Per-call goals of the compiled path: operation -> max ratio to the standard library's row.
PER_CALL_GOALS = {"uuid4": 0.10, "uuid7": 0.12, "parse": 0.20, "format": 0.25}
IMPORT_GOAL = 2.00
PURE_UUID7_GOAL = 0.50
PURE_UUID6_GOAL = 1.00
NEW_MS_GOAL = 1.30
FORMAT_DEFAULT_GOAL_NS = 150.0


def _version() -> str:
    return ".".join(map(str, sys.version_info[:3])) + ("t" if _free_threaded() else "")


def _free_threaded() -> bool:
    return not getattr(sys, "_is_gil_enabled", lambda: True)()


def _verdict(value: float, goal: float) -> str:
    if value <= goal:
        return "met"
    return f"MISSED by {value / goal - 1:.0%}"


class Report:
    """The figures of one run; printed as they come and again as one table at the end."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, str]] = []

    def goal(self, what: str, value: float, goal: float, unit: str = "x") -> None:
        shown = f"{value:.2f}x" if unit == "x" else f"{value:.1f} {unit}"
        limit = f"<= {goal:.2f}x" if unit == "x" else f"<= {goal:.0f} {unit}"
        self.rows.append((what, shown, limit, _verdict(value, goal)))

    def context(self, what: str, shown: str) -> None:
        self.rows.append((what, shown, "", ""))

    def print(self) -> None:
        width = max(len(what) for what, *_ in self.rows)
        print(f"\ngoals, CPython {_version()} ({sys.executable})")
        print(f"  {'figure':<{width}}  {'measured':>12}  {'goal':>10}  verdict")
        for what, shown, limit, verdict in self.rows:
            print(f"  {what:<{width}}  {shown:>12}  {limit:>10}  {verdict}")


# --- per call -----------------------------------------------------------------------------


def _per_call_rows() -> dict[str, list[Row]]:
    import uuidkit

    text = str(uuid.uuid4())
    value = uuid.UUID(text)
    parse, format_uuid = uuidkit.parse, uuidkit.format_uuid
    own_seven = getattr(uuid, "uuid7", None)
    seven: Row = (
        ("stdlib uuid.uuid7()", own_seven)
        if own_seven is not None
        else ("stdlib uuid.uuid4() (no uuid7 before 3.14)", uuid.uuid4)
    )
    rows: dict[str, list[Row]] = {
        "uuid4": [("stdlib uuid.uuid4()", uuid.uuid4), ("uuidkit.uuid4()", uuidkit.uuid4)],
        "uuid7": [seven, ("uuidkit.uuid7()", uuidkit.uuid7)],
        "parse": [
            ("stdlib uuid.UUID(s)", lambda: uuid.UUID(text)),
            ("uuidkit.parse(s)", lambda: parse(text)),
        ],
        "format": [
            ("stdlib str(u)", lambda: str(value)),
            ("uuidkit.format_uuid(u)", lambda: format_uuid(value)),
        ],
    }
    for name in ("uuid_utils.compat", "fastuuid"):
        peer = _optional(name)
        if peer is None:
            continue
        for operation in ("uuid4", "uuid7"):
            function = getattr(peer, operation, None)
            if function is not None:
                rows[operation].append((f"{name}.{operation}()", function))
        peer_class: Callable[[str], object] = peer.UUID
        peer_value = peer_class(text)
        rows["parse"].append((f"{name}.UUID(s)", _bind(peer_class, text)))
        rows["format"].append((f"str({name}.UUID)", _bind(str, peer_value)))
    return rows


def per_call(report: Report, number: int, rounds: int) -> None:
    print(f"\nper call, compiled, process CPU time ({rounds} interleaved rounds x {number:,})")
    print(f"  {'operation':<8} {'what':<44} {'ns/call':>9} {'spread':>7} {'ratio':>7}")
    for operation, candidates in _per_call_rows().items():
        samples = interleaved(candidates, number, rounds, clock=time.process_time)
        base_label = candidates[0][0]
        base, _ = median_and_spread(samples[base_label])
        for label, _ in candidates:
            ns, spread = median_and_spread(samples[label])
            ratio = ns / base
            print(f"  {operation:<8} {label:<44} {ns:>9.1f} {spread:>6.0%} {ratio:>6.2f}x")
            if label == base_label:
                continue
            if label.startswith("uuidkit"):
                what = f"{operation}: {label} / {base_label.split(' (')[0]} ({base:,.0f} ns)"
                report.goal(what, ratio, PER_CALL_GOALS[operation])
            else:
                report.context(f"  {operation}: {label} / the same", f"{ratio:.2f}x")


# --- import -------------------------------------------------------------------------------


def _cpu_ms(command: list[str], environment: dict[str, str]) -> float:
    process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        raise SystemExit(f"{command} failed")
    return (usage.ru_utime + usage.ru_stime) * 1e3


def import_cost(report: Report, runs: int) -> None:
    python = sys.executable
    _compile_bytecode(python)
    environment = dict(os.environ, PYTHONPATH=str(SOURCE))
    environment.pop("UUIDKIT_PURE", None)
    commands = {
        "bare": [python, "-S", "-c", "pass"],
        "uuid": [python, "-S", "-c", "import uuid"],
        "uuidkit": [python, "-S", "-c", "import uuidkit"],
    }
    samples: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, command in commands.items():
            samples[label].append(_cpu_ms(command, environment))
    bare, stdlib, ours = (statistics.median(samples[key]) for key in commands)
    ratio = (ours - bare) / (stdlib - bare)
    print(f"\nimport, median of {runs} fresh python -S processes in turns, CPU ms")
    print(f"  bare {bare:.2f}, import uuid {stdlib:.2f}, import uuidkit {ours:.2f}")
    report.goal(
        f"import uuidkit / import uuid, above bare (+{ours - bare:.1f} / +{stdlib - bare:.1f} ms)",
        ratio,
        IMPORT_GOAL,
    )


# --- pure path ----------------------------------------------------------------------------


def pure_child(number: int, rounds: int, cpython_uuid: str | None) -> None:
    """In a ``UUIDKIT_PURE=1`` child: print one JSON line of median ns per candidate."""
    import uuidkit
    from uuidkit import _accel

    assert _accel.SPEEDUPS is None, "the pure child runs with UUIDKIT_PURE=1"
    reference: Any = uuid if hasattr(uuid, "uuid7") else None
    origin = "this interpreter's uuid"
    if reference is None and cpython_uuid is not None:
        reference = load_cpython_uuid(cpython_uuid)
        origin = f"{cpython_uuid}, loaded here"
    results: dict[str, Any] = {"origin": origin if reference is not None else None}
    groups: dict[str, list[Row]] = {
        "uuid7": [("uuidkit.uuid7()", uuidkit.uuid7)],
        "uuid6": [("uuidkit.uuid6()", uuidkit.uuid6)],
    }
    if reference is not None:
        name = "stdlib" if reference is uuid else "3.14's"
        groups["uuid7"].insert(0, (f"{name} uuid.uuid7()", reference.uuid7))
        groups["uuid6"].insert(0, (f"{name} uuid.uuid6()", reference.uuid6))
    package = _optional("uuid6")
    if package is not None:
        groups["uuid6"].append(("uuid6 package uuid6()", package.uuid6))
        groups["uuid7"].append(("uuid6 package uuid7()", package.uuid7))
    for operation, candidates in groups.items():
        samples = interleaved(candidates, number, rounds, clock=time.process_time)
        for label, _ in candidates:
            results[f"{operation}|{label}"] = median_and_spread(samples[label])
    print(json.dumps(results))


def pure(report: Report, number: int, rounds: int, cpython_uuid: str | None) -> None:
    child = [sys.executable, __file__, "--pure-child", "--number", str(number)]
    child += ["--rounds", str(rounds)]
    if cpython_uuid:
        child += ["--cpython-uuid", cpython_uuid]
    environment = dict(os.environ, UUIDKIT_PURE="1")
    output = subprocess.run(
        child, env=environment, check=True, capture_output=True, text=True
    ).stdout
    results = json.loads(output.splitlines()[-1])
    origin = results.pop("origin")
    print(f"\npure path (UUIDKIT_PURE=1 child), process CPU time; 3.14 reference: {origin}")
    for key, (ns, spread) in results.items():
        operation, label = key.split("|")
        print(f"  {operation:<6} {label:<32} {ns:>9.1f} ns {spread:>6.0%}")
    for operation, goal in (("uuid7", PURE_UUID7_GOAL), ("uuid6", PURE_UUID6_GOAL)):
        ours = results[f"{operation}|uuidkit.{operation}()"][0]
        stdlib = [f"{name} uuid.{operation}()" for name in ("stdlib", "3.14's")]
        for reference in (*stdlib, f"uuid6 package {operation}()"):
            if f"{operation}|{reference}" in results:
                base = results[f"{operation}|{reference}"][0]
                what = f"pure uuidkit.{operation}() / {reference} ({base:,.0f} ns)"
                if reference in stdlib or operation == "uuid6":
                    report.goal(what, ours / base, goal)
                else:
                    report.context(what, f"{ours / base:.2f}x")
        if not any(f"{operation}|{reference}" in results for reference in stdlib):
            report.context(f"pure uuidkit.{operation}() / 3.14's", "no reference")


# --- a new millisecond --------------------------------------------------------------------


def _alternating_new_ms(calls: list[Callable[[], object]], samples: int) -> list[list[float]]:
    """ns of each call timed alone just after the clock entered a new millisecond, the calls
    taking turns sample by sample (two consecutive milliseconds), minus an empty timed pair."""
    clock, counter = time.time_ns, time.perf_counter_ns
    costs: list[list[float]] = [[] for _ in calls]
    for index in range(samples):
        order = list(enumerate(calls))
        for slot, call in order if index % 2 == 0 else order[::-1]:
            now_ms = clock() // 1_000_000
            while clock() // 1_000_000 == now_ms:
                pass
            start = counter()
            call()
            middle = counter()
            end = counter()
            costs[slot].append((middle - start) - (end - middle))
    return costs


def new_millisecond(report: Report, samples: int) -> None:
    import uuidkit

    module = floor.load()
    if module is None:
        report.context("uuid7 in a new ms / C floor", "no compiler")
        return
    ours, least = _alternating_new_ms([uuidkit.uuid7, module.uuid7], samples)
    mine, base = statistics.median(ours), statistics.median(least)
    quartiles = [statistics.quantiles(values, n=4) for values in (ours, least)]
    burst = _timed_calls(uuidkit.uuid7, samples, spaced=False)
    floor_burst = _timed_calls(module.uuid7, samples, spaced=False)
    print(f"\nuuid7 in a new millisecond: {samples:,} calls each, taking turns, wall ns")
    for label, middle, (low, _, high) in (
        ("uuidkit.uuid7()", mine, quartiles[0]),
        ("floor uuid7()", base, quartiles[1]),
    ):
        print(f"  {label:<16} median {middle:7.1f} (quartiles {low:.0f}-{high:.0f})")
    print(f"  back to back: uuidkit {burst:.1f} ns, floor {floor_burst:.1f} ns")
    report.goal(f"uuid7 in a new ms / C floor ({base:,.0f} ns)", mine / base, NEW_MS_GOAL)
    report.context("  back to back, uuidkit / C floor", f"{burst / floor_burst:.2f}x")


# --- bulk.format --------------------------------------------------------------------------


def _cpu_ns_per_value(call: Callable[[], object], count: int, repeat: int) -> float:
    costs = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_SELF)
        call()
        after = resource.getrusage(resource.RUSAGE_SELF)
        seconds = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        costs.append(seconds / count * 1e9)
    return statistics.median(costs)


def bulk_format(report: Report, repeat: int) -> None:
    from uuidkit import bulk

    if _optional("numpy") is None:
        report.context("bulk.format", "no numpy")
        return
    count = 1_000_000
    records = bulk.generate(4, count, into="numpy")
    listed = bulk.to_list(records)
    rows = {
        "'<U36' (default)": lambda: bulk.format(records),
        "'S36'": lambda: bulk.format(records, dtype="S36"),
        "list[UUID] -> list[str]": lambda: bulk.format(listed),
        "stdlib [str(u) for u in list]": lambda: [str(value) for value in listed],
    }
    print(f"\nbulk.format, {count:,} numpy v4 values, median of {repeat}, CPU ns per value")
    figures = {label: _cpu_ns_per_value(call, count, repeat) for label, call in rows.items()}
    for label, ns in figures.items():
        print(f"  {label:<32} {ns:8.1f}")
    report.goal(
        "bulk.format -> '<U36' (default), per value",
        figures["'<U36' (default)"],
        FORMAT_DEFAULT_GOAL_NS,
        "ns",
    )
    s36 = figures["'S36'"]
    report.context("bulk.format -> 'S36', per value", f"{s36:.1f} ns")
    stdlib = figures["stdlib [str(u) for u in list]"]
    report.context(
        "bulk.format list -> list[str] / stdlib str() loop",
        f"{figures['list[UUID] -> list[str]'] / stdlib:.2f}x",
    )


SECTIONS = ("per-call", "import", "pure", "new-ms", "format")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds of 20,000 calls")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (7; 3 with --quick)")
    parser.add_argument("--number", type=int, help="calls per round (200,000; 20,000 quick)")
    parser.add_argument("--cpython-uuid", help="a CPython 3.14 Lib/uuid.py (before 3.14)")
    parser.add_argument(
        "--only",
        help="comma-separated sections: per-call, import, pure, new-ms, format (all by default)",
    )
    parser.add_argument("--pure-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 7)
    number = args.number or (20_000 if args.quick else 200_000)
    if args.pure_child:
        pure_child(number, rounds, args.cpython_uuid)
        return 0
    from uuidkit import _accel

    if _accel.SPEEDUPS is None:
        raise SystemExit("build the accelerator first (setup.py build_ext --inplace)")
    load = os.getloadavg()
    print(f"CPython {_version()} at {sys.executable}; {os.cpu_count()} CPUs")
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    sections = set(SECTIONS if args.only is None else args.only.split(","))
    if sections - set(SECTIONS):
        parser.error(f"--only: expected some of {', '.join(SECTIONS)}")
    report = Report()
    if "per-call" in sections:
        per_call(report, number, rounds)
    if "import" in sections:
        import_cost(report, 10 if args.quick else 20)
    if "pure" in sections:
        pure(report, number, rounds, args.cpython_uuid)
    if "new-ms" in sections:
        new_millisecond(report, 300 if args.quick else 2000)
    if "format" in sections:
        bulk_format(report, 3 if args.quick else 7)
    report.print()
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
