"""The cost of calling a function through the package (``uuidkit.parse(s)``) against a name
bound once (``from uuidkit import parse``; ``parse(s)``), as ratios within one run.

Both loops are the same code but for the lookup: ``uuidkit.parse`` is a global and an
attribute load, ``parse`` a global load. CPython 3.11 and later specialise an attribute load
from a module (``LOAD_ATTR_MODULE``: a dict-version check and an index) unless the module's
namespace holds a ``__getattr__`` (PEP 562). uuidkit binds every public name at import and
has none: ``uuid1``/``uuid6``/``uuid7`` create their generators on first call, and
``uuidkit.bulk`` and ``uuidkit.legacy`` are registered at import and run on first use. On
3.12 and later the specialised instruction is printed from ``dis``.

Rounds alternate their order and count process CPU time, so other processes on a loaded
machine slow both sides alike; the median and range of the per-round ratios are printed.

``--startup N`` instead prices start-up: the CPU time of N fresh ``python -S`` processes per
case, in turns, as a ratio to what ``import uuid`` costs above a bare interpreter (medians);
``--before SRC`` adds ``import uuidkit`` from another source tree (its ``src``) to the turns.

Run: ``python3 bench/bench_lookup.py [--startup N [--before SRC]]``
"""

from __future__ import annotations

import argparse
import dis
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import uuidkit

TEXT = "0190b6a4-4a9e-7c7a-8e4e-2f6d3b8d1c55"
LOOPS = 2_000
ROUNDS = 21
NAMES = ["parse", "uuid4", "uuid7", "to_hex"]


def loops(name: str) -> tuple[Callable[[], None], Callable[[], None]]:
    """(through the package, bound name) loops of LOOPS calls of ``name``."""
    argument = "u" if name == "to_hex" else ("s" if name == "parse" else "")
    source = (
        f"def through():\n    for _ in range({LOOPS}):\n        uuidkit.{name}({argument})\n"
        f"def bound():\n    for _ in range({LOOPS}):\n        {name}({argument})\n"
    )
    namespace = {"uuidkit": uuidkit, name: getattr(uuidkit, name), "s": TEXT}
    namespace["u"] = uuidkit.parse(TEXT)
    exec(compile(source, f"<lookup {name}>", "exec"), namespace)
    return namespace["through"], namespace["bound"]


def cpu_ns(function: Callable[[], None]) -> int:
    start = time.process_time_ns()
    function()
    return time.process_time_ns() - start


def attribute_instruction(function: Callable[[], None]) -> str:
    """The attribute load's (specialised) instruction on 3.12+, else "-"."""
    if sys.version_info < (3, 12):
        return "-"
    names = [i.opname for i in dis.get_instructions(function, adaptive=True)]
    return next((n for n in names if n.startswith("LOAD_ATTR")), "?")


#: ``import uuidkit`` and the first uses that load more.
STARTUP_CASES = {
    "bare interpreter": "pass",
    "import uuid": "import uuid",
    "import uuidkit": "import uuidkit",
    "+ first uuid7()": "import uuidkit; uuidkit.uuid7()",
    "+ first uuid1(), uuid6()": "import uuidkit; uuidkit.uuid1(); uuidkit.uuid6()",
    "+ bulk and legacy run": "import uuidkit; uuidkit.bulk.generate; uuidkit.legacy.__doc__",
}


def startup(runs: int, before_source: str | None) -> None:
    """Median CPU ms of fresh ``python -S`` processes per case, taken in turns."""
    source = os.path.join(os.path.dirname(os.path.abspath(uuidkit.__file__)), os.pardir)
    cases = {label: (os.path.abspath(source), code) for label, code in STARTUP_CASES.items()}
    if before_source is not None:
        cases["import uuidkit (--before)"] = (os.path.abspath(before_source), "import uuidkit")
    samples: dict[str, list[float]] = {label: [] for label in cases}
    for _ in range(runs):
        for label, (path, code) in cases.items():
            env = dict(os.environ, PYTHONPATH=path)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-S", "-c", code], env=env, check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            samples[label].append(used * 1000)
    median = {label: statistics.median(values) for label, values in samples.items()}
    bare, stdlib = median["bare interpreter"], median["import uuid"]
    print(f"start-up, median CPU of {runs} fresh processes (python -S), in turns")
    for label, ms in median.items():
        print(f"{label:<26} {ms:6.1f} ms   above bare: {(ms - bare) / (stdlib - bare):.2f}x uuid's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--startup", type=int, metavar="N", help="time start-up instead")
    parser.add_argument("--before", metavar="SRC", help="with --startup: another tree's src")
    args = parser.parse_args()
    if args.startup:
        startup(args.startup, args.before)
        return
    version = ".".join(map(str, sys.version_info[:3]))
    state = "with" if "__getattr__" in vars(uuidkit) else "without"
    print(f"CPython {version}, module __getattr__: {state}; {ROUNDS} rounds x {LOOPS} calls")
    print(f"{'call':<22} {'ratio':>6}  {'[min, max]':<14} attribute load")
    for name in NAMES:
        through, bound = loops(name)
        for _ in range(3):  # warm up: let the interpreter specialise both loops
            through()
            bound()
        ratios = []
        for index in range(ROUNDS):
            if index % 2:
                bound_ns, through_ns = cpu_ns(bound), cpu_ns(through)
            else:
                through_ns, bound_ns = cpu_ns(through), cpu_ns(bound)
            ratios.append(through_ns / bound_ns)
        print(
            f"uuidkit.{name + '()':<14} {statistics.median(ratios):5.2f}x  "
            f"[{min(ratios):.2f}, {max(ratios):.2f}]   {attribute_instruction(through)}"
        )


if __name__ == "__main__":
    main()
