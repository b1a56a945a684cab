"""The longest gap in generation when the node in use is lost or doubted, with and without
a spare (``spares=1`` / ``spares=0``).

A v7-node generator makes values as fast as one thread can, on a UIAPNodeSource talking to
the stand-in daemon of the tests (``tests/bridge/fake_daemon.py``), in which every new claim
takes ``--claim-s`` (default 2.5 s, the draft's claim time) and a re-verification's verdict
comes ``--verdict-s`` after ``suspect`` (default 2.0 s). Three events for the node in use:

- ``collision``: the node is lost (a renewal denied, UIAP §2.1.2);
- ``suspect`` then ``granted`` (how ``verify``): doubted, then verified (UIAP §4.4);
- ``suspect`` then ``collision`` (how ``verify``): doubted, then lost.

Reported: the longest time between two consecutive values from the event until a second
after the verdict and any claim it causes. A figure of this machine, not a bound the tests
assert (they show the mechanism instead: the values made while every claim is held).

Run: ``PYTHONPATH=src python3 bench/bench_spare_gap.py [--claim-s 2.5] [--verdict-s 2.0]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "bridge"))

from fake_daemon import FakeDaemon

from uuidkit.bridge import UIAPNodeSource, node_bound_generator

SCENARIOS = ("collision", "suspect+verify", "suspect+collision")


def one_run(spares: int, scenario: str, claim_s: float, verdict_s: float) -> float:
    with tempfile.TemporaryDirectory() as directory:
        daemon = FakeDaemon(Path(directory))
        try:
            with UIAPNodeSource(daemon.path, spares=spares) as source:
                generator = node_bound_generator(7, source)
                generator()
                deadline = time.monotonic() + 30
                while len(source.spare_nodes()) < spares and time.monotonic() < deadline:
                    time.sleep(0.01)
                daemon.hold_claims = threading.Event()  # never set: each claim takes claim_s
                daemon.hold_timeout_s = claim_s
                stop = threading.Event()
                gaps: list[float] = []

                def make() -> None:
                    longest, last = 0.0, time.monotonic()
                    while not stop.is_set():
                        generator()
                        now = time.monotonic()
                        longest, last = max(longest, now - last), now
                    gaps.append(longest)

                worker = threading.Thread(target=make)
                worker.start()
                time.sleep(0.2)
                claim = source.claim_id
                if scenario == "collision":
                    daemon.send_event("collision", {"claim": claim, "how": "renewal"})
                else:
                    daemon.send_event("suspect", {"claim": claim, "reason": "interface-up"})
                    time.sleep(verdict_s)
                    if scenario == "suspect+verify":
                        verdict = {"claim": claim, "how": "verify", "expires": None}
                        daemon.send_event("granted", verdict)
                    else:
                        daemon.send_event("collision", {"claim": claim, "how": "verify"})
                time.sleep(claim_s + 1.0)
                stop.set()
                worker.join()
                daemon.hold_claims.set()
                return gaps[0]
        finally:
            daemon.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claim-s", type=float, default=2.5)
    parser.add_argument("--verdict-s", type=float, default=2.0)
    args = parser.parse_args()
    print(f"claim {args.claim_s} s, verdict {args.verdict_s} s after suspect")
    print(f"{'event':<20} {'spares=0':>10} {'spares=1':>10}")
    for scenario in SCENARIOS:
        before = one_run(0, scenario, args.claim_s, args.verdict_s)
        after = one_run(1, scenario, args.claim_s, args.verdict_s)
        print(f"{scenario:<20} {before:>9.3f}s {after:>9.3f}s")


if __name__ == "__main__":
    main()
