"""Throughput of uuid4() and uuid7() on 1, 2 and 4 threads, per interpreter, in one run.

Usage::

    python3 bench/bench_free_threading.py --python PATH [--python PATH ...] [--seconds S]

Each ``--python`` runs the measurement in a child process of its own (with ``PYTHON_GIL=0``
on a free-threaded build), importing uuidkit from
``src/`` (build the accelerator in place with that interpreter first: ``PATH setup.py
build_ext --inplace``). The table gives aggregate values per second, each thread count's
ratio to one thread of the same interpreter, and each figure's ratio to the first
interpreter's (the baseline, normally the default build). Threads start together on a
barrier and run for a fixed time; the best of three rounds counts. The ``floor`` rows call a
builtin that does no work (``sys.getrecursionlimit``) the same way: the interpreter's own cost
of a call, below which no compiled function can go.

References: PEP 703; RFC 9562 §5.4, §5.7.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, threading, time
import uuidkit

def rate(function, threads, seconds):
    # Each thread notes when it started and stopped counting: the rate is every call over
    # the span from the first start to the last stop, whenever the main thread ran.
    barrier = threading.Barrier(threads + 1)
    counts, starts, ends = [0] * threads, [0.0] * threads, [0.0] * threads
    stop = [False]
    def body(i):
        barrier.wait()
        starts[i] = time.perf_counter()
        n = 0
        while not stop[0]:
            for _ in range(1000):
                function()
            n += 1000
        ends[i] = time.perf_counter()
        counts[i] = n
    workers = [threading.Thread(target=body, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    barrier.wait()
    time.sleep(seconds)
    stop[0] = True
    for w in workers:
        w.join()
    return sum(counts) / (max(ends) - min(starts))

seconds = float(sys.argv[1])
gil = getattr(sys, "_is_gil_enabled", lambda: True)()
result = {"python": sys.version.split()[0] + ("t" if "t" in sys.abiflags else ""),
          "gil": gil, "accelerated": uuidkit.ACCELERATED, "rates": {}}
# floor: a C function that does no work (it returns an int the interpreter keeps), called the
# same way: what calling any builtin costs each interpreter, and how that alone scales.
functions = {"floor": sys.getrecursionlimit, "uuid4": uuidkit.uuid4, "uuid7": uuidkit.uuid7}
for name, function in functions.items():
    for threads in (1, 2, 4):
        best = max(rate(function, threads, seconds) for _ in range(3))
        result["rates"][f"{name}/{threads}"] = best
print(json.dumps(result))
"""


def measure(python: str, seconds: float) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    # PYTHON_GIL=0 only where it means something: a default build refuses to start with it.
    probe = [python, "-c", "import sysconfig; print(sysconfig.get_config_var('Py_GIL_DISABLED'))"]
    if subprocess.run(probe, capture_output=True, text=True).stdout.strip() == "1":
        env["PYTHON_GIL"] = "0"
    output = subprocess.run(
        [python, "-c", CHILD, str(seconds)], env=env, capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, object] = json.loads(output)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append", default=[], help="an interpreter to run")
    parser.add_argument("--seconds", type=float, default=0.5, help="per measurement")
    args = parser.parse_args()
    pythons = args.python or [sys.executable]
    results = [measure(python, args.seconds) for python in pythons]
    base = results[0]["rates"]
    assert isinstance(base, dict)
    print(
        f"{'interpreter':<14} {'GIL':<5} {'what':<10} {'values/s':>12} {'x 1 thread':>11} "
        f"{'x baseline':>11}"
    )
    for result in results:
        rates = result["rates"]
        assert isinstance(rates, dict)
        for key, value in rates.items():
            name = key.split("/")[0]
            single = rates[f"{name}/1"]
            print(
                f"{result['python']!s:<14} {'on' if result['gil'] else 'off':<5} {key:<10} "
                f"{value:>12,.0f} {value / single:>11.2f} {value / base[key]:>11.2f}"
            )
    print(
        f"\nbaseline: {pythons[0]}; cores: {os.cpu_count()}; best of 3 rounds of "
        f"{args.seconds} s each"
    )


if __name__ == "__main__":
    main()
