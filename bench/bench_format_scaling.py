"""``bulk.format`` per UUID from 1,000 to 10,000,000 values, as numpy ``'<U36'`` and ``'S36'``.

For each size and output type: the process CPU time per UUID (user and system apart, best of
three) and the page faults, over enough calls to format 3,000,000 UUIDs at least. CPU time,
not wall time, so other processes on the machine do not move the figures; the system time is
the kernel's work for the result's fresh pages (mapping and zeroing them), which grows with
the bytes per UUID: 144 for ``'<U36'`` (numpy's UCS-4), 36 for ``'S36'``. The last column is
the total against the same output type at 1,000 values.

Run: ``PYTHONPATH=src python3 bench/bench_format_scaling.py [--largest 10000000]``

References: RFC 9562 §4 (Figure 1).
"""

from __future__ import annotations

import argparse
import resource

from uuidkit import bulk

SIZES = (1_000, 100_000, 1_000_000, 10_000_000)


def per_uuid(records: object, dtype: str, count: int) -> tuple[float, float, float]:
    """Best of three: (user ns, system ns, minor page faults) per UUID."""
    calls = max(1, 3_000_000 // count)
    best: tuple[float, float, float] | None = None
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_SELF)
        for _ in range(calls):
            bulk.format(records, dtype=dtype)
        after = resource.getrusage(resource.RUSAGE_SELF)
        scale = calls * count
        sample = (
            (after.ru_utime - before.ru_utime) / scale * 1e9,
            (after.ru_stime - before.ru_stime) / scale * 1e9,
            (after.ru_minflt - before.ru_minflt) / scale,
        )
        if best is None or sum(sample[:2]) < sum(best[:2]):
            best = sample
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--largest", type=int, default=SIZES[-1])
    args = parser.parse_args()
    print(f"{'values':>12} {'dtype':>6} {'user ns':>8} {'sys ns':>8} {'faults':>8} {'vs 1,000':>9}")
    first: dict[str, float] = {}
    for count in (size for size in SIZES if size <= args.largest):
        records = bulk.generate(4, count, into="numpy")
        for dtype in ("U36", "S36"):
            user, system, faults = per_uuid(records, dtype, count)
            first.setdefault(dtype, user + system)
            ratio = (user + system) / first[dtype]
            print(f"{count:>12,} {dtype:>6} {user:8.1f} {system:8.1f} {faults:8.4f} {ratio:8.2f}x")


if __name__ == "__main__":
    main()
