"""How soon node-bound generators stop using their node once their daemon dies, under load.

A daemon runs in a child process (the real API server and claim service on the daemon's
in-process site, so no network is needed); ``--threads`` threads make v7-node values as fast
as they can with a node claimed through it. The child is killed with SIGKILL; the kernel
closes its sockets, which is the only signal the watcher gets. Reported per round: the time
from the kill to the last value any thread made with the old node (0 if none was made after
the kill).

Run: ``PYTHONPATH=src python3 bench/bench_bridge_stop.py [--rounds 5] [--threads 4]``
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


def one_round(threads: int) -> float:
    """Seconds from the kill to the last value made with the old node."""
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        child = _start_daemon(directory)
        source = UIAPNodeSource(str(directory / "api.sock"), timeout_s=5.0)
        generator = node_bound_generator(7, source)
        node = read_node_layout(generator(), "v7-node").node
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
        child.send_signal(signal.SIGKILL)
        child.wait()
        time.sleep(1.0)
        stop.set()
        for worker in workers:
            worker.join()
        source.close()
        return max(0.0, max(last_with_node) - killed_at)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    delays = [one_round(args.threads) for _ in range(args.rounds)]
    print(
        f"stop after SIGKILL, {args.threads} threads, {args.rounds} rounds: "
        f"median {statistics.median(delays) * 1000:.1f} ms, "
        f"max {max(delays) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
