"""The UIAP daemon's cost per claim, ``status`` and ``list`` as the claims it holds grow.

Run: ``python3 bench/bench_daemon_scaling.py [--before SRC] [--quick]``. ``--before`` names
the ``src`` directory of another uuidkit (the code before a change): both daemons are
measured in the same run, level by level, interleaved.

Each daemon runs in its own process (``--serve``): one host of an in-process site
(:class:`~uuidkit.daemon.localsite.LocalSite`), timers of 0, so a claim completes as soon as
the engine runs its deadline: what is measured is the daemon's own work, not the 2.5 s a
claim takes on the real protocol, and not the network. Its state directory is on the
temporary directory's file system, written (fsync) before every reply. The engine's periodic
re-verification of held claims (``EngineConfig.verify_interval``, beyond the draft: one
Claim-Attempt per held claim every 6 to 8 s) is switched off in both daemons: it is protocol
work that grows with the claims held whatever the state directory does (about 1,300
re-verifications a second at 10,000 claims), and left on it would be counted in every
figure below; the engine benchmarks are its place.

At each level N (100, 1,000, 10,000 held claims) the daemon is filled to N - 1 claims
through the API (50 connections at once, so their writes share group commits), then:

* **CPU per claim**: one connection makes a claim and releases it, ``PAIRS`` times, one
  after the other: the held claims go N - 1, N, N - 1, ...; every reply waits for its own
  state write. The figure is the daemon process's CPU time (user + system, all threads,
  from ``/proc/<pid>/stat``) over the pairs, per pair (one claim and one release).
* ``status`` and ``list``: the median round trip from the synchronous client.

References: UIAP §2.4.1 (a claim), §4.4 (claims reclaimed after a restart).
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from uuidkit.uiap import DomainID, UIDSpace
from uuidkit.uiapd.client import AsyncClient, Client

DOMAIN = DomainID.parse("0fff:0000:00b0:0000")
QUICK = "--quick" in sys.argv
LEVELS = (100, 1_000) if QUICK else (100, 1_000, 10_000)
PAIRS = 50 if QUICK else 200
FILLERS = 50
ROUND_TRIPS = {"status": 30, "list": 10}
TICKS = os.sysconf("SC_CLK_TCK")
HERE = Path(__file__).resolve().parent


def serve(state_dir: str, socket_path: str) -> None:
    """The child: a daemon on a one-host in-process site, timers 0, until SIGTERM."""
    import dataclasses
    from typing import Any

    from uuidkit.daemon.config import DaemonConfig
    from uuidkit.daemon.localsite import LocalSite
    from uuidkit.daemon.main import Daemon

    site = LocalSite()

    def factory(config: Any, engine_config: Any, *rest: Any) -> Any:
        quiet = dataclasses.replace(engine_config, verify_interval=None)
        return site.factory(config, quiet, *rest)

    config = DaemonConfig(
        socket=socket_path,
        state_dir=state_dir,
        claim_period=0.0,
        claim_timeout=0.0,
        max_claims=10_000,
    )
    asyncio.run(Daemon(config, node_factory=factory, environ={}).serve())


class Child:
    """One daemon process running the code under ``src``."""

    def __init__(self, label: str, src: Path, root: Path) -> None:
        self.label = label
        self.socket = str(root / "api.sock")
        environ = {**os.environ, "PYTHONPATH": str(src)}
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(root / "state"), self.socket],
            env=environ,
        )
        deadline = time.monotonic() + 60
        while not os.path.exists(self.socket):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"{label}: the daemon did not start")
            time.sleep(0.05)
        self.next_uid = 0
        self.held = 0

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime

    def space(self) -> UIDSpace:
        self.next_uid += 1
        return UIDSpace.unique(self.next_uid.to_bytes(4, "big"))

    async def fill(self, target: int) -> None:
        clients = [AsyncClient(self.socket) for _ in range(FILLERS)]
        spaces = [self.space() for _ in range(target - self.held)]

        async def worker(index: int) -> None:
            for space in spaces[index::FILLERS]:
                assert (await clients[index].claim(DOMAIN, space, 3600)).granted

        await asyncio.gather(*(worker(index) for index in range(FILLERS)))
        for client in clients:
            await client.close()
        self.held = target

    async def cpu_per_pair(self) -> float:
        async with AsyncClient(self.socket) as client:
            before = self.cpu_seconds()
            for _ in range(PAIRS):
                result = await client.claim(DOMAIN, self.space(), 3600)
                await client.release(str(result.claim))
            return (self.cpu_seconds() - before) / PAIRS

    def round_trip(self, method: str) -> float:
        samples = []
        with Client(self.socket) as client:
            call = client.status if method == "status" else client.list_claims
            call()
            for _ in range(ROUND_TRIPS[method]):
                start = time.perf_counter()
                call()
                samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=300)


def commit_of(src: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(src), "log", "-1", "--format=%h"], capture_output=True, text=True
    )
    return done.stdout.strip() or "?"


async def measure(children: list[Child]) -> dict[tuple[str, int], dict[str, float]]:
    results: dict[tuple[str, int], dict[str, float]] = {}
    for level in LEVELS:
        for child in children:  # interleaved: both daemons at this level, then the next
            await child.fill(level - 1)
            cpu = await child.cpu_per_pair()
            status = child.round_trip("status")
            listed = child.round_trip("list")
            results[child.label, level] = {"cpu": cpu, "status": status, "list": listed}
            print(
                f"  {child.label:<7} {level:>6} held: {cpu * 1e3:8.2f} ms CPU per claim+release, "
                f"status {status * 1e3:8.2f} ms, list {listed * 1e3:9.2f} ms",
                flush=True,
            )
    return results


def report(results: dict[tuple[str, int], dict[str, float]], labels: list[str]) -> None:
    first = LEVELS[0]
    print(f"\n{'code':<7} {'held':>6} {'CPU ms/pair':>12} {'x at ' + str(first):>9} "
          f"{'status ms':>10} {'x':>6} {'list ms':>9} {'x':>7}")  # fmt: skip
    for label in labels:
        base = results[label, first]
        for level in LEVELS:
            row = results[label, level]
            print(f"{label:<7} {level:>6} {row['cpu'] * 1e3:>12.2f} "
                  f"{row['cpu'] / base['cpu']:>8.2f}x {row['status'] * 1e3:>10.2f} "
                  f"{row['status'] / base['status']:>5.1f}x {row['list'] * 1e3:>9.2f} "
                  f"{row['list'] / base['list']:>6.1f}x")  # fmt: skip


def main() -> None:
    after = HERE.parent / "src"
    sources = [("after", after)]
    if "--before" in sys.argv:
        sources.insert(0, ("before", Path(sys.argv[sys.argv.index("--before") + 1]).resolve()))
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; state directories on "
          f"{tempfile.gettempdir()}; {PAIRS} claim+release pairs per level")  # fmt: skip
    for label, src in sources:
        print(f"  {label}: {src} (commit {commit_of(src)})")
    with tempfile.TemporaryDirectory() as directory:
        children = []
        try:
            for label, src in sources:
                root = Path(directory) / label
                root.mkdir()
                children.append(Child(label, src, root))
            results = asyncio.run(measure(children))
        finally:
            for child in children:
                child.stop()
    report(results, [label for label, _ in sources])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2], sys.argv[3])
    else:
        main()
