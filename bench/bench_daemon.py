"""The UIAP daemon's speed: claims per second through the API, API round trips, MAC cost.

Run: ``python3 bench/bench_daemon.py`` (``--quick`` for a smoke run).

1. Claims per second through the API on one host, with timers of 0 (a claim completes as
   soon as the engine runs its deadline), so what is measured is the daemon's own work per
   claim: JSON request and reply, the claim service, the engine, and the atomic state write
   (fsync of file and directory) before the reply. Baseline: the engine alone claiming and
   timing out the same claims in the same run. One host of an in-process site; the network
   is not the subject (the namespace tests cover it).
2. Round-trip latency of ``list`` and ``status`` from the synchronous client, against a bare
   Unix-socket echo (one line out, one line back) in the same run.
3. The site key's cost per datagram: sealing plus opening one Claim-Attempt, against the
   engine's own ``receive_datagram`` of the same datagram and against a bare
   ``hmac.digest`` (the standard library's HMAC-SHA256).

How these costs grow with the claims a daemon holds (100, 1,000, 10,000), against another
version of the code in the same run: ``bench/bench_daemon_scaling.py``.

References: UIAP §2.4.1, §7, §10; RFC 8967 §4.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import random
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import Timer
from uuidkit.daemon.config import DaemonConfig
from uuidkit.daemon.localsite import LocalSite
from uuidkit.daemon.main import Daemon
from uuidkit.uiap import DomainID, Engine, EngineConfig, Message, MessageType, UIDSpace, encode
from uuidkit.uiap.auth import Authenticator, SiteKeys
from uuidkit.uiapd.client import AsyncClient, Client

DOMAIN = DomainID.parse("0fff:0000:00b0:0000")
QUICK = "--quick" in sys.argv
CLAIMS = 300 if QUICK else 3000
CONNECTIONS = 20
ROUND_TRIPS = 100 if QUICK else 500


def engine_claims_per_second(count: int) -> float:
    engine = Engine(
        1,
        random.Random(1),
        EngineConfig(claim_period=0.0, claim_timeout=0.0, flood_record_lifetime=10),
    )
    engine.add_interface("eth0")
    start = time.perf_counter()
    for number in range(count):
        now = float(number)
        engine.claim(DOMAIN, UIDSpace.unique(number.to_bytes(4, "big")), 3600, now)
        engine.handle_timer(now)
        engine.datagrams_to_send()
        while engine.next_event() is not None:
            pass
    return count / (time.perf_counter() - start)


async def api_claims_per_second(socket_path: str, count: int, connections: int, base: int) -> float:
    clients = [AsyncClient(socket_path) for _ in range(connections)]

    async def worker(index: int) -> None:
        for number in range(index, count, connections):
            space = UIDSpace.unique((base + number).to_bytes(4, "big"))
            result = await clients[index].claim(DOMAIN, space, 3600)
            assert result.granted, result

    start = time.perf_counter()
    await asyncio.gather(*(worker(index) for index in range(connections)))
    elapsed = time.perf_counter() - start
    for client in clients:
        await client.close()
    return count / elapsed


def round_trips(socket_path: str) -> dict[str, list[float]]:
    """Synchronous client round trips (run in a thread while the daemon serves)."""
    samples: dict[str, list[float]] = {"list": [], "status": []}
    with Client(socket_path) as client:
        client.status()
        for _ in range(ROUND_TRIPS):
            for name, call in (("list", client.list_claims), ("status", client.status)):
                start = time.perf_counter()
                call()
                samples[name].append(time.perf_counter() - start)
    return samples


def echo_round_trips() -> list[float]:
    """A bare Unix-socket line echo: the floor under any request/reply protocol."""
    left, right = socket.socketpair()

    def echo() -> None:
        with right, right.makefile("rb") as lines:
            for line in lines:
                right.sendall(line)

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    samples = []
    with left, left.makefile("rb") as replies:
        for _ in range(ROUND_TRIPS):
            start = time.perf_counter()
            left.sendall(b'{"v":1,"id":1,"method":"list","params":{}}\n')
            replies.readline()
            samples.append(time.perf_counter() - start)
        left.shutdown(socket.SHUT_WR)
    thread.join()
    return samples


def auth_costs() -> None:
    keys = SiteKeys({1: bytes(range(32))}, 1)
    sender = Authenticator(keys, os.urandom, time.monotonic)
    receiver = Authenticator(keys, os.urandom, time.monotonic)
    message = encode(
        Message(MessageType.CLAIM_ATTEMPT, 7, 1, DOMAIN, UIDSpace.unique(bytes(6)), lifetime=60)
    )
    sealed_list = [sender.seal(message, "fe80::1", "ff02::114", "e0") for _ in range(300_000)]
    sealed = iter(sealed_list)
    engine = Engine(2, random.Random(2))
    engine.add_interface("e0")
    sequence = iter(range(1, 10**9))

    def engine_receive() -> None:
        data = encode(
            Message(MessageType.CLAIM_ATTEMPT, 7, next(sequence), DOMAIN, UIDSpace.unique(bytes(6)))
        )
        engine.receive_datagram(data, "e0", "fe80::1", 0.0)
        engine.datagrams_to_send()
        while engine.next_event() is not None:
            pass

    timer = Timer(number=20_000, repeat=5)
    base = timer.measure("hmac.digest(SHA-256) of the datagram", lambda: hmac.digest(
        bytes(32), message, hashlib.sha256))  # fmt: skip
    timer.measure("seal() one Claim-Attempt", lambda: sender.seal(message, "fe80::1", "ff02::114",
                                                                  "e0"))  # fmt: skip
    timer.measure(
        "open() one sealed Claim-Attempt",
        lambda: receiver.open(next(sealed), "fe80::1", "ff02::114", "e0"),
        number=50_000,
    )
    timer.measure("engine: encode + receive_datagram (new flood)", engine_receive)
    timer.report(base, "3. site key cost per datagram")


async def daemon_benchmarks(root: Path) -> None:
    config = DaemonConfig(
        socket=str(root / "api.sock"),
        state_dir=str(root / "state"),
        claim_period=0.0,
        claim_timeout=0.0,
        max_claims=10_000,  # the run holds CLAIMS // 3 + CLAIMS claims
    )
    daemon = Daemon(config, node_factory=LocalSite().factory, environ={})
    task = asyncio.create_task(daemon.serve())
    await daemon.ready.wait()
    engine_rate = engine_claims_per_second(CLAIMS)
    one = await api_claims_per_second(config.socket, CLAIMS // 3, 1, 1 << 30)
    many = await api_claims_per_second(config.socket, CLAIMS, CONNECTIONS, 1 << 31)
    print("1. claims per second, one host, timers 0, state written (fsync) before each reply")
    print(f"{'engine alone (baseline)':<44} {engine_rate:>10.0f}/s {1.0:>7.2f}x")
    print(f"{'API, 1 connection':<44} {one:>10.0f}/s {one / engine_rate:>7.3f}x")
    print(f"{'API, ' + str(CONNECTIONS) + ' connections':<44} {many:>10.0f}/s "
          f"{many / engine_rate:>7.3f}x")  # fmt: skip
    samples = await asyncio.get_running_loop().run_in_executor(None, round_trips, config.socket)
    echo = echo_round_trips()
    base = statistics.median(echo)
    print(f"\n2. API round trip ({CLAIMS // 3 + CLAIMS} claims held), synchronous client")
    print(f"{'what':<44} {'p50 us':>10} {'p99 us':>8} {'ratio':>7}   (p50 ratio to echo)")
    for label, values in (("Unix-socket line echo (baseline)", echo), *(
            (f"API {name}", value) for name, value in samples.items())):  # fmt: skip
        p50 = statistics.median(values)
        p99 = statistics.quantiles(values, n=100)[98]
        print(f"{label:<44} {p50 * 1e6:>10.1f} {p99 * 1e6:>8.1f} {p50 / base:>6.1f}x")
    daemon.stopped.set()
    await task


def main() -> None:
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; state directory on "
          f"{tempfile.gettempdir()}\n")  # fmt: skip
    with tempfile.TemporaryDirectory() as directory:
        asyncio.run(daemon_benchmarks(Path(directory)))
    auth_costs()


if __name__ == "__main__":
    main()
