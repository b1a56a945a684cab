"""A generating process for the bridge's namespace tests: claims a node through the daemon,
makes UUIDs, and writes them (16 octets each) and a JSON summary to a directory.

``bulk``: COUNT values of each node-bearing layout (1, 6, 7, 8), one layout after another.
``switch``: the first node drawn is NODE (forced, to make a conflict); alternate v7-node and
v1 values until the node has changed and 2,000 more values are made, or a file ``stop``
appears in the directory (or 60 s pass).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uuidkit.bridge import UIAPNodeSource, node_bound_generator
from uuidkit.generators import NodeEvent
from uuidkit.uiapd.client import Client

LAYOUT_VERSIONS = (1, 6, 7, 8)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["bulk", "switch"])
    parser.add_argument("--socket", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--lifetime", type=int, default=2)
    parser.add_argument("--node", help="hex: the first node drawn (switch mode)")
    args = parser.parse_args()
    out = Path(args.out)
    events: list[dict[str, Any]] = []

    def record(event: NodeEvent) -> None:
        events.append(
            {"kind": event.kind.value, "node": event.node, "generation": event.generation,
             "reason": event.reason, "wall_ns": time.time_ns()}
        )  # fmt: skip

    random_bytes = os.urandom
    if args.node is not None:
        forced = iter([bytes.fromhex(args.node)])
        random_bytes = lambda n: next(forced, None) or os.urandom(n)  # noqa: E731
    source = UIAPNodeSource(
        args.socket, lifetime_s=args.lifetime, random_bytes=random_bytes, spares=0
    )
    summary: dict[str, Any] = {"name": args.name, "pid": os.getpid()}
    lease = source.current()
    summary |= {"node": lease.node, "claim": source.claim_id, "start_ns": time.time_ns()}
    if args.mode == "bulk":
        source.subscribe(record)
        for version in LAYOUT_VERSIONS:
            generator = node_bound_generator(version, source)
            values = generator.generate(args.count)
            _write(out / f"{args.name}-v{version}.bin", (v.int for v in values))
    else:
        _switch(source, out, args.name, record)
    summary["end_ns"] = time.time_ns()
    with Client(args.socket) as client:  # is the claim still held, by this host's daemon?
        held = {c["uid"]: c["state"] for c in client.list_claims()}
    summary |= {"held_at_end": held, "events": events, "final_node": source.current().node}
    (out / f"{args.name}.json").write_text(json.dumps(summary))
    source.close()


def _switch(
    source: UIAPNodeSource, out: Path, name: str, record: Callable[[NodeEvent], None]
) -> None:
    v7 = node_bound_generator(7, source)
    v1 = node_bound_generator(1, source)
    # After the generators: a loss is recorded once they have dropped the node.
    source.subscribe(record)
    first = source.current().generation
    made: list[int] = []
    print(json.dumps({"ready": True}), flush=True)
    deadline = time.monotonic() + 60
    after_switch = None
    for step in itertools.count():
        made.append((v7() if step % 2 == 0 else v1()).int)
        if after_switch is None and (v7.generation or first) != first:
            after_switch = step
        if after_switch is not None and step - after_switch >= 2000:
            break
        if step % 64 == 0:
            if time.monotonic() > deadline or (out / "stop").exists():
                break
            time.sleep(0.001)  # leave the CPU to the daemons (2 cores)
    _write(out / f"{name}-switch.bin", made)


def _write(path: Path, values: Any) -> None:
    with path.open("wb") as file:
        for value in values:
            file.write(value.to_bytes(16))


if __name__ == "__main__":
    main()
