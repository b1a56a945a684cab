"""Wrongly granted claims under loss on a real network: the line of six namespaces, a daemon
on every host, nftables dropping a random share of the UIAP datagrams on every link.

Run (root): ``PYTHONPATH=src python3 bench/bench_uiap_netns_loss.py`` (``--trials N`` per
hop distance and cell, default 100; ``--loss 0,0.1,0.3``; ``--engines uuidkit,draft``;
``--parallel K`` trials at once, default 4; ``--draft-timers`` for the draft's 0.5 s / 1.0 s
instead of the test timers).

The setup and the trial are ``tests/netns/lossy_line.py``'s: the holder ``a`` claims a
fresh UID, then a claimant 1 hop (``b``) or 5 hops (``f``) away claims it, then both are
released. ``uuidkit`` is the daemon's default engine; ``draft`` is ``--draft-only``
(``EngineConfig.draft_only()``: one copy per datagram, no re-verification, the draft's
tie rule). Printed per cell and hop distance: conflicting claims, wrongly granted, the
model's expectation (three floods, each claim's flood and its deny crossing ``h`` links
each way, a hop lost with probability p, or p^copies with copies: ``(1 - (1 - q)^(2h))^3``),
the slowest denial (seconds from the claim to its deny; the claim waits 0.45 s with the
test timers), datagrams sent per claim (every daemon, every copy) and the datagrams the
loss rules dropped. The namespaces are made with a per-run prefix and always deleted.

References: UIAP §2.4.1, §4.3.2, §10.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "netns")]

from lossy_line import DRAFT_TIMERS, TIMERS, LossyLine  # noqa: E402
from netns_topology import Network, cleanup_prefix, namespaces_unavailable  # noqa: E402

#: Transmissions per datagram of each engine (EngineConfig.copies).
COPIES = {"uuidkit": 2, "draft": 1}


def expected_wrong(loss: float, hops: int, copies: int) -> float:
    """The model's share of conflicting claims granted: all three floods or their denies
    lost somewhere on the ``2 * hops`` links they cross."""
    per_hop = loss**copies
    return float((1 - (1 - per_hop) ** (2 * hops)) ** 3)


def run_engine(engine: str, args: argparse.Namespace, first_uid: int) -> None:
    network = Network()
    try:
        with tempfile.TemporaryDirectory(prefix="uiap-netns-loss-") as directory:
            extra: tuple[str, ...] = DRAFT_TIMERS if args.draft_timers else TIMERS
            if engine == "draft":
                extra += ("--draft-only",)
            line = LossyLine(network, Path(directory), *extra)
            try:
                line.start()
                for number, loss in enumerate(float(p) for p in args.loss.split(",")):
                    run_cell(line, engine, loss, args, first_uid + number * 4 * args.trials)
            finally:
                line.close()
    finally:
        network.close()


def run_cell(
    line: LossyLine, engine: str, loss: float, args: argparse.Namespace, first: int
) -> None:
    line.set_loss(loss)
    before = line.counters()
    started = time.perf_counter()
    cells = line.run(first, args.trials, args.parallel)
    elapsed = time.perf_counter() - started
    after = line.counters()
    dropped = line.dropped()
    claims = sum(2 * cell.conflicting for cell in cells.values())
    per_claim = (after["sent"] - before["sent"]) / claims if claims else float("nan")
    limited = sum(
        after["drops"][reason] - before["drops"][reason]
        for reason in after["drops"]
        if "rate" in reason
    )
    for hops, cell in cells.items():
        model = 100 * expected_wrong(loss, hops, COPIES[engine])
        share = 100 * cell.wrong / cell.conflicting if cell.conflicting else float("nan")
        slowest = max(cell.denied_latencies, default=float("nan"))
        print(
            f"{engine:<8} {loss:>5.2f} {hops:>4} {cell.conflicting:>11} {cell.wrong:>6} "
            f"{share:>7.1f}% {model:>7.2f}% {slowest:>10.3f} {per_claim:>10.1f} "
            f"{dropped:>8} {limited:>8}   ({elapsed:.0f} s) {dict(cell.reasons)}",
            flush=True,
        )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100, help="per hop distance and cell")
    parser.add_argument("--loss", default="0,0.1,0.3")
    parser.add_argument("--engines", default="uuidkit,draft")
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--draft-timers", action="store_true")
    args = parser.parse_args(argv)
    reason = namespaces_unavailable()
    if reason is not None:
        raise SystemExit(f"cannot run: {reason}")
    print(
        f"{'engine':<8} {'loss':>5} {'hops':>4} {'conflicting':>11} {'wrong':>6} {'wrong %':>8} "
        f"{'model':>8} {'slowest':>10} {'dgrams/cl':>10} {'nft drop':>8} {'limited':>8}"
    )
    try:
        for number, engine in enumerate(args.engines.split(",")):
            if engine not in COPIES:
                raise SystemExit(f"unknown engine {engine!r}")
            run_engine(engine, args, 1 + number * 1_000_000)
    finally:
        cleanup_prefix()


if __name__ == "__main__":
    main(sys.argv[1:])
