"""How long two hosts emit UUIDs with one node after two partitioned sides that both hold it
merge, on a real network of namespaces with a daemon on every host, and whether any value
repeats across the merge.

Run (root): ``PYTHONPATH=src python3 bench/bench_uiap_netns_merge.py`` (``--runs N`` per
kind, default 5; ``--kinds own,elsewhere``; ``--before S``, ``--spread S`` and
``--after S``: both sides generate for ``before`` plus a uniform draw from [0, ``spread``]
seconds (seeded by ``--seed``) before the merge, so the merge falls at any phase of the
holders' re-verification schedule (waits of 6-8 s), and for ``after`` seconds once one
holder is left; defaults 2, 8 and 2).

The site and a run are ``tests/netns/merge_site.py``'s: ``a`` and ``d`` (three hops apart)
claim the same node during a partition and make v1 values continuously; the merge is ``a``'s
own link coming back up (``own``) or nftables rules dropping the ``b``-``c`` link deleted
(``elsewhere``). Printed per run: the values made by both holders, repeats among them, the
loser, the seconds from the merge to the loser's last value with the node (its own
timestamp: after it no two hosts emit with the node), to its first node event (SUSPENDED or
LOST, when its generator dropped the node) and to its LOST event; then per kind
the median and the maximum, and the total of values checked. The namespaces are made with a
per-run prefix and always deleted.

References: UIAP §2.1.2, §4.4; RFC 9562 §6.10.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "netns")]

from merge_site import KINDS, MergeResult, MergeSite  # noqa: E402
from netns_topology import Network, cleanup_prefix, namespaces_unavailable  # noqa: E402


def one_kind(kind: str, args: argparse.Namespace) -> list[MergeResult]:
    """``args.runs`` runs on a fresh site (fresh daemons: no state from other runs)."""
    results = []
    phases = random.Random(f"{args.seed}-{kind}")
    for run in range(args.runs):
        before = args.before + phases.uniform(0, args.spread)
        network = Network()
        try:
            with tempfile.TemporaryDirectory(prefix="uiap-netns-merge-") as directory:
                site = MergeSite(network, Path(directory))
                try:
                    site.start()
                    result = site.run(kind, Path(directory) / "out", before, args.after)
                finally:
                    site.close()
        finally:
            network.close()
        results.append(result)
        print(
            f"{kind:<10} {run + 1:>3} {before:>7.2f} {result.values:>10,} {result.repeats:>7} "
            f"{result.loser or '-':>5} {result.last_shared_s:>12.3f} "
            f"{result.first_event_s:>9.3f} {result.lost_s:>8.3f}",
            flush=True,
        )
    return results


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--before", type=float, default=2.0)
    parser.add_argument("--spread", type=float, default=8.0)
    parser.add_argument("--after", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    reason = namespaces_unavailable()
    if reason is not None:
        raise SystemExit(f"cannot run: {reason}")
    print(f"{'merge':<10} {'run':>3} {'before':>7} {'values':>10} {'repeats':>7} {'loser':>5} "
          f"{'last shared':>12} {'1st event':>9} {'lost':>8}")  # fmt: skip
    summary = []
    try:
        for kind in args.kinds.split(","):
            if kind not in KINDS:
                raise SystemExit(f"unknown kind {kind!r}")
            summary.append((kind, one_kind(kind, args)))
    finally:
        cleanup_prefix()
    print()
    print(f"{'merge':<10} {'runs':>4} {'median s':>9} {'max s':>7} {'values':>12} {'repeats':>7}")
    for kind, results in summary:
        times = [r.last_shared_s for r in results]
        print(
            f"{kind:<10} {len(results):>4} {statistics.median(times):>9.3f} {max(times):>7.3f} "
            f"{sum(r.values for r in results):>12,} {sum(r.repeats for r in results):>7}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
