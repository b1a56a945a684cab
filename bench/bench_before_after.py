"""Per-call cost of the calls users make, in this tree and an earlier one, from one run.

Each round runs one child process per tree (``PYTHONPATH`` set to that tree's ``src``, built
in place for the running interpreter), the two in alternating order. A child times every
operation with :mod:`timeit` (``autorange``, best of three) and, in the child of this tree,
the standard library's equivalent in the same process. The table prints the medians over
the rounds: the earlier tree, this tree, their ratio, and this tree against the standard
library. An operation the earlier tree cannot run prints ``-``.

The operations are the ones people call one at a time: ``uuid7()`` back-to-back and with a
new millisecond at every call (a clock advancing 1 ms per reading), node-bound v7 and v1,
name-based, ``timestamp_datetime``, parse and format through the package, and ``bulk.format``
per UUID at 1,000 and 1,000,000 values.

Run: ``python3 bench/bench_before_after.py --before <earlier tree>/src [--rounds 5]``
(build both trees first: ``python3 setup.py build_ext --inplace`` in each).

References: RFC 9562 §5.1, §5.3, §5.5, §5.7, §6.2, §6.4.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import timeit
from pathlib import Path

#: (label, statement, setup, the standard library's statement or None, values per call).
OPERATIONS: list[tuple[str, str, str, str | None, int]] = [
    ("uuid4()", "uuidkit.uuid4()", "", "uuid.uuid4()", 1),
    ("uuid7(), back-to-back", "uuidkit.uuid7()", "", "uuid.uuid4()", 1),
    (
        "uuid7(), a new millisecond each call",
        "generator()",
        "import itertools\nfrom uuidkit.generators import V7Generator\n"
        "generator = V7Generator(clock=itertools.count(1 << 50, 1_000_000).__next__)",
        "uuid.uuid4()",
        1,
    ),
    ("uuid1()", "uuidkit.uuid1()", "", "uuid.uuid1()", 1),
    (
        "v7-node (NodeBoundV7Generator)",
        "generator()",
        "from uuidkit.generators import ManualNodeSource, NodeBoundV7Generator\n"
        "generator = NodeBoundV7Generator(ManualNodeSource(0x0100_0000_002A))",
        "uuid.uuid4()",
        1,
    ),
    (
        "v1-node (NodeBoundV1Generator)",
        "generator()",
        "from uuidkit.generators import ManualNodeSource, NodeBoundV1Generator\n"
        "generator = NodeBoundV1Generator(ManualNodeSource(0x0100_0000_002A))",
        "uuid.uuid1()",
        1,
    ),
    ("uuid3(DNS, name)", "uuidkit.uuid3(namespace, name)", "", "uuid.uuid3(namespace, name)", 1),
    ("uuid5(DNS, name)", "uuidkit.uuid5(namespace, name)", "", "uuid.uuid5(namespace, name)", 1),
    ("timestamp_datetime(v7)", "uuidkit.timestamp_datetime(v7)", "", None, 1),
    ("uuidkit.parse(s)", "uuidkit.parse(text)", "", "uuid.UUID(text)", 1),
    ("uuidkit.to_hyphenated(u)", "uuidkit.to_hyphenated(v7)", "", "str(v7)", 1),
    (
        "bulk.format, per UUID, 1,000",
        "bulk.format(records)",
        "from uuidkit import bulk\nrecords = bulk.generate(4, 1_000, into='numpy')",
        None,
        1_000,
    ),
    (
        "bulk.format, per UUID, 1,000,000",
        "bulk.format(records)",
        "from uuidkit import bulk\nrecords = bulk.generate(4, 1_000_000, into='numpy')",
        None,
        1_000_000,
    ),
]

PRELUDE = (
    "import uuid, uuidkit\n"
    "namespace, name = uuidkit.NAMESPACE_DNS, 'www.example.com'\n"
    "text = '0190b6a4-4a9e-7c7a-8e4e-2f6d3b8d1c55'\n"
    "v7 = uuidkit.uuid7()\n"
)


def _per_call_ns(statement: str, setup: str, per_call: int) -> float:
    timer = timeit.Timer(statement, PRELUDE + setup)
    number, _ = timer.autorange()
    return min(timer.repeat(3, number)) / number / per_call * 1e9


def child(with_stdlib: bool) -> None:
    """Print {label: ns, "stdlib " + label: ns} for every operation this tree can run."""
    results: dict[str, float] = {}
    for label, statement, setup, stdlib, per_call in OPERATIONS:
        try:
            results[label] = _per_call_ns(statement, setup, per_call)
        except Exception:  # an operation the earlier tree lacks: its row prints "-"
            continue
        if with_stdlib and stdlib is not None:
            results["stdlib " + label] = _per_call_ns(stdlib, setup, per_call)
    print(json.dumps(results))


def _run_child(source: Path, with_stdlib: bool) -> dict[str, float]:
    arguments = [sys.executable, __file__, "--child", *(["--stdlib"] if with_stdlib else [])]
    environment = dict(os.environ, PYTHONPATH=str(source))
    output = subprocess.run(
        arguments, env=environment, capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, float] = json.loads(output.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, help="the earlier tree's src directory")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--stdlib", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.stdlib)
        return
    if args.before is None:
        parser.error("--before is required")
    after_source = Path(__file__).resolve().parent.parent / "src"
    samples: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    for round_index in range(args.rounds):
        order = [("before", args.before), ("after", after_source)]
        for side, source in order if round_index % 2 == 0 else order[::-1]:
            for label, ns in _run_child(source, side == "after").items():
                samples[side].setdefault(label, []).append(ns)
    median = {side: {k: statistics.median(v) for k, v in s.items()} for side, s in samples.items()}
    version = ".".join(map(str, sys.version_info[:3]))
    print(f"CPython {version}; median of {args.rounds} rounds; ns per call (per UUID for bulk)")
    print(f"{'operation':<38} {'before':>9} {'after':>9} {'after/before':>13} {'vs stdlib':>10}")
    for label, *_ in OPERATIONS:
        before, after = median["before"].get(label), median["after"].get(label)
        stdlib = median["after"].get("stdlib " + label)
        ratio = f"{after / before:.2f}x" if before and after else "-"
        against = f"{after / stdlib:.2f}x" if after and stdlib else "-"
        print(
            f"{label:<38} {before or 0:9.1f} {after or 0:9.1f} {ratio:>13} {against:>10}"
            if before
            else f"{label:<38} {'-':>9} {after or 0:9.1f} {ratio:>13} {against:>10}"
        )


if __name__ == "__main__":
    main()
