"""The cost of node-bearing UUIDs per call, as ratios to the plain generators of the same run.

Holding a claimed node must not add a round trip per UUID: the node-bound generators ask
their source only when the lease is missing, lost or expired. The source used here is a
ManualNodeSource (the generator's path is the same for every source); with ``--socket PATH``
a real UIAPNodeSource claims a node through the daemon at PATH, and the number of claims it
made for all the values is printed.

Run: ``python3 bench/bench_bridge.py [--socket PATH]``
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import uuidkit
from common import Timer
from uuidkit.generators import (
    ManualNodeSource,
    NodeBoundV1Generator,
    NodeBoundV6Generator,
    NodeBoundV7Generator,
    NodeBoundV8Generator,
    V1Generator,
    V7Generator,
)
from uuidkit.generators.nodesource import NodeLease, NodeSource

NODE = 0x0123_4567_89AB | 1 << 40


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--socket", help="a UIAP daemon's API socket: use a real claim")
    args = parser.parse_args()
    source: Any
    if args.socket:
        from uuidkit.bridge import UIAPNodeSource

        source = UIAPNodeSource(args.socket)
    else:
        source = ManualNodeSource(NODE)
    per_call(source)
    interleaved(source)
    if args.socket:
        print(f"\nclaims made through the daemon for all values above: {source.claims_made}")
        source.close()


def per_call(source: NodeSource) -> None:
    timer = Timer(number=200_000)
    base = timer.measure("stdlib uuid.uuid4()", uuid.uuid4)
    timer.measure("stdlib uuid.uuid1()", uuid.uuid1)
    plain_v1 = timer.measure("uuidkit.uuid1()", uuidkit.uuid1)
    timer.measure("V1Generator()()", V1Generator())
    node_v1 = timer.measure("NodeBoundV1Generator()()", NodeBoundV1Generator(source))
    timer.measure("NodeBoundV6Generator()()", NodeBoundV6Generator(source))
    plain_v7 = timer.measure("uuidkit.uuid7()", uuidkit.uuid7)
    timer.measure("V7Generator()()", V7Generator())
    node_v7 = timer.measure("NodeBoundV7Generator()()  (v7-node)", NodeBoundV7Generator(source))
    leased_v7 = timer.measure(
        "NodeBoundV7Generator()()  (v7-node, leased: + monotonic deadline check)",
        NodeBoundV7Generator(_LeaseWithDeadline()),
    )
    timer.measure("NodeBoundV8Generator()()  (v8-node)", NodeBoundV8Generator(source))
    timer.report(base, "node-bearing UUIDs, one per call")
    results = timer.results
    print(f"\nnode-bound v1 / uuidkit.uuid1: {results[node_v1] / results[plain_v1]:.2f}x")
    print(f"node-bound v7 / uuidkit.uuid7: {results[node_v7] / results[plain_v7]:.2f}x")
    print(f"v7-node leased / v7-node unleased: {results[leased_v7] / results[node_v7]:.2f}x")


def interleaved(source: NodeSource, rounds: int = 21, number: int = 20_000) -> None:
    """Each node-bound generator against its plain compiled twin, timed in alternating
    rounds (the order flips every round) of process CPU time, so a loaded machine slows
    both alike."""
    # The generators of per_call() are bound to the same source (one per version); they are
    # in reference cycles (a generator's clock wait holds its bound methods), so collect them.
    gc.collect()
    pairs: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        ("v1-node / uuidkit.uuid1", NodeBoundV1Generator(source), uuidkit.uuid1),
        ("v6-node / uuidkit.uuid6", NodeBoundV6Generator(source), uuidkit.uuid6),
        ("v7-node / uuidkit.uuid7", NodeBoundV7Generator(source), uuidkit.uuid7),
        (
            "v7-node leased / uuidkit.uuid7",
            NodeBoundV7Generator(_LeaseWithDeadline()),
            uuidkit.uuid7,
        ),
        ("v8-node / uuidkit.uuid7", NodeBoundV8Generator(source), uuidkit.uuid7),
    ]
    print(f"\ninterleaved: {rounds} rounds of {number} calls each; ratio median [min, max]")
    for label, bound, plain in pairs:
        ratios = []
        for index in range(rounds):
            first, second = (bound, plain) if index % 2 else (plain, bound)
            times = {id(f): _time(f, number) for f in (first, second)}
            ratios.append(times[id(bound)] / times[id(plain)])
        print(
            f"{label:<34} {statistics.median(ratios):.2f}x  [{min(ratios):.2f}, {max(ratios):.2f}]"
        )


def _time(function: Callable[[], object], number: int) -> float:
    # CPU time of this process: other processes on a loaded machine do not count.
    start = time.process_time_ns()
    for _ in range(number):
        function()
    return time.process_time_ns() - start


class _LeaseWithDeadline(ManualNodeSource):
    """A lease as the etcd and PostgreSQL sources hand out: with a monotonic deadline (an
    hour away), which the generator checks before every value."""

    def __init__(self) -> None:
        super().__init__(NODE)
        lease = super().current()
        deadline = time.monotonic_ns() + 3600 * 1_000_000_000
        self._lease = NodeLease(lease.node, lease.generation, lease.expires_ns, deadline)


if __name__ == "__main__":
    main()
