"""A generating process for the partition-and-merge measurement (``merge_site.py``): claims
NODE through this host's daemon (the first node its source draws, forced to make a
conflict), then makes node-bound UUIDs in batches as fast as it can until a file ``stop``
appears in the output directory (or ``--limit`` seconds pass).

Writes ``NAME.bin`` (16 octets per value, in the order made) and ``NAME.json``: the node,
every node event with its wall-clock time (the clock the values' timestamps come from), the
node in use at the end and the count. Prints ``{"ready": ..., "node": ...}`` once the first
value is made, so the caller knows the node is held.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from uuidkit.bridge import UIAPNodeSource, node_bound_generator
from uuidkit.generators import NodeEvent

#: Values per batch: about 10 ms of work, so a stop file is seen at once and a lost node is
#: dropped before the next value of the batch (the generator checks its lease per value).
BATCH = 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--node", required=True, help="hex: the first node drawn")
    parser.add_argument("--version", type=int, default=1, help="the node-bearing layout")
    parser.add_argument("--lifetime", type=int, default=600, help="claim lifetime, seconds")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds at most")
    args = parser.parse_args()
    out = Path(args.out)
    events: list[dict[str, Any]] = []

    def record(event: NodeEvent) -> None:
        events.append(
            {"kind": event.kind.value, "node": event.node, "generation": event.generation,
             "reason": event.reason, "wall_ns": time.time_ns()}
        )  # fmt: skip

    forced = iter([bytes.fromhex(args.node)])
    source = UIAPNodeSource(
        args.socket,
        lifetime_s=args.lifetime,
        spares=0,  # the node's own suspension and verdict (spares: tests/bridge/test_spares.py)
        random_bytes=lambda n: next(forced, None) or os.urandom(n),
    )
    generator = node_bound_generator(args.version, source)
    source.subscribe(record)  # after the generator: an event recorded is one it has acted on
    stop = out / "stop"
    count = 0
    deadline = time.monotonic() + args.limit
    with (out / f"{args.name}.bin").open("wb") as file:
        file.write(generator().bytes)
        count += 1
        node = source.current().node
        print(json.dumps({"ready": True, "node": node}), flush=True)
        while not stop.exists() and time.monotonic() < deadline:
            file.write(b"".join(value.bytes for value in generator.generate(BATCH)))
            count += BATCH
    summary = {
        "name": args.name,
        "node": node,
        "events": events,
        "final_node": source.current().node,
        "count": count,
    }
    (out / f"{args.name}.json").write_text(json.dumps(summary))
    source.close()


if __name__ == "__main__":
    main()
