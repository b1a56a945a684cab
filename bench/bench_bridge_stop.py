"""How soon node-bound generators stop using their node once their daemon dies, under load.

A daemon runs in a child process (the real API server and claim service on the daemon's
in-process site, so no network is needed); ``--threads`` threads make v7-node values as fast
as they can with a node claimed through it. The child is killed with SIGKILL; the kernel
closes its sockets, which is the only signal the watcher gets. Reported: the time from the
kill to the source's LOST event (the watcher saw the stream end), and to the last value any
thread made with the old node (0 if none was made after the kill).

``--signal TERM`` stops it cleanly instead: the daemon reports the node's claim released
(``by: stopping``) before its node stops defending it.

Run: ``PYTHONPATH=src python3 bench/bench_bridge_stop.py [--rounds 5] [--signal TERM]``
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from uuidkit.bridge import UIAPNodeSource, node_bound_generator
from uuidkit.errors import NodeUnavailableError
from uuidkit.generators import NodeEvent, NodeEventKind
from uuidkit.nodelayouts import read_node_layout

_CHILD = """
import asyncio, sys
from uuidkit.daemon.config import DaemonConfig
from uuidkit.daemon.localsite import LocalSite
from uuidkit.daemon.main import Daemon
config = DaemonConfig(socket=sys.argv[1], state_dir=sys.argv[2], claim_period=0.02,
                      claim_timeout=0.05)
asyncio.run(Daemon(config, node_factory=LocalSite().factory, environ={}).serve())
"""


def _start_daemon(directory: Path) -> subprocess.Popen[bytes]:
    socket_path = directory / "api.sock"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(socket_path), str(directory / "state")], env=env
    )
    while not socket_path.exists():
        time.sleep(0.01)
    return child


def one_round(threads: int, signum: int) -> tuple[float, float]:
    """Seconds from the kill to LOST, and to the last value made with the old node."""
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        child = _start_daemon(directory)
        source = UIAPNodeSource(str(directory / "api.sock"), timeout_s=5.0)
        generator = node_bound_generator(7, source)
        node = read_node_layout(generator(), "v7-node").node
        lost_at = [0.0]

        def on_event(event: NodeEvent) -> None:
            if event.kind is NodeEventKind.LOST and not lost_at[0]:
                lost_at[0] = time.monotonic()

        source.subscribe(on_event)
        last_with_node = [0.0] * threads
        stop = threading.Event()

        def work(slot: int) -> None:
            while not stop.is_set():
                try:
                    value = generator()
                except NodeUnavailableError:
                    continue
                if read_node_layout(value, "v7-node").node == node:
                    last_with_node[slot] = time.monotonic()

        workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        time.sleep(0.5)  # under load
        killed_at = time.monotonic()
        child.send_signal(signum)
        child.wait()
        time.sleep(1.0)
        stop.set()
        for worker in workers:
            worker.join()
        source.close()
        return lost_at[0] - killed_at, max(0.0, max(last_with_node) - killed_at)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--signal", choices=["KILL", "TERM"], default="KILL")
    args = parser.parse_args()
    signum = signal.Signals[f"SIG{args.signal}"]
    rounds = [one_round(args.threads, signum) for _ in range(args.rounds)]
    for what, delays in (("LOST", [r[0] for r in rounds]), ("last value", [r[1] for r in rounds])):
        print(
            f"SIG{args.signal} to {what}, {args.threads} threads, {args.rounds} rounds: "
            f"median {statistics.median(delays) * 1000:.1f} ms, "
            f"max {max(delays) * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()
