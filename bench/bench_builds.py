"""Per-call time of the public generators in two source trees, measured in one run.

Compares a change against a baseline build: each tree's functions run in their own fresh
process, alternately, and each row reports the best of the rounds (the least disturbed by
other load; times are the thread's CPU time) and the ratio new/old.

    python3 bench/bench_builds.py OLD_SRC NEW_SRC [--rounds 7] [--pure]

Both trees must be built in place (``python3 setup.py build_ext --inplace``), unless
``--pure`` compares their pure-Python paths (``UUIDKIT_PURE=1``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

NAMES = ("uuid1", "uuid4", "uuid6", "uuid7", "uuid8")

_MEASURE = """
import json, sys, time, timeit
import uuidkit
from uuidkit import _accel
assert (_accel.SPEEDUPS is None) == _accel.PURE_REQUESTED, "not built"
result = {}
for name in sys.argv[1:]:
    function = getattr(uuidkit, name)
    function()
    # CPU time of this thread: a machine shared with other work preempts, which wall time
    # would count.
    timer = timeit.Timer("f()", timer=time.thread_time, globals={"f": function})
    number = 200_000
    result[name] = min(timer.repeat(repeat=5, number=number)) / number * 1e9
print(json.dumps(result))
"""


def _once(src: str, pure: bool) -> dict[str, float]:
    output = subprocess.run(
        [sys.executable, "-c", _MEASURE, *NAMES],
        env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin", "UUIDKIT_PURE": "1" if pure else ""},
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    timings: dict[str, float] = json.loads(output)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--pure", action="store_true", help="compare the pure-Python paths")
    arguments = parser.parse_args()
    best = {"old": dict.fromkeys(NAMES, float("inf")), "new": dict.fromkeys(NAMES, float("inf"))}
    for _ in range(arguments.rounds):
        for label in ("old", "new"):
            for name, ns in _once(getattr(arguments, label), arguments.pure).items():
                best[label][name] = min(best[label][name], ns)
    print(f"{'function':10} {'old ns':>8} {'new ns':>8} {'new/old':>8}")
    for name in NAMES:
        old, new = best["old"][name], best["new"][name]
        print(f"{name:10} {old:8.1f} {new:8.1f} {new / old:8.3f}")


if __name__ == "__main__":
    main()
