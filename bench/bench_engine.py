"""The UIAP engine's datagram rate: ``receive_datagram`` over a realistic mix, per second.

Run: ``python3 bench/bench_engine.py`` (``--quick`` for a fast smoke run). Add
``--compare REV`` to measure another revision of the engine in the same run (its tree is
exported with ``git archive`` into a temporary directory and run in a subprocess with the
same mix), and print both rates and their ratio::

    python3 bench/bench_engine.py --compare 2b8b68d --rounds 3

The exported tree has no compiled accelerator, so it runs the pure-Python decoder; this tree
runs the compiled one when it was built in place. ``--cpu`` times by process CPU time
instead of wall time, which other work on a shared machine disturbs less.

The device under test sits in a mesh with three interfaces and defends 20 claims of its
own (then 2, then 1,000, to show what comparing with each claim costs). Every foreign
flood reaches it once per interface, so per 100 datagrams it sees about 30 first copies
(recorded, compared with its claims, forwarded out two interfaces), 60 copies it already
knows (dropped by Message ID, §4.2.2.1), 5 Claim-Denies to forward back (§4.3.2), 3
Claim-Attempts that conflict with its claims (denied) and 2 malformed datagrams. The
baseline is :func:`uuidkit.uiap.decode` of the same batch: the engine's own cost is what
it adds on top of decoding. Each count of own claims is measured twice: with the engine's
default configuration (rate limits on, as a daemon runs it) and with the rate limits
switched off (the engine's work without its admission policy).

References: UIAP §2.4.2, §2.4.3, §2.4.5, §4.2.2.1, §4.3.2.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import Timer
from uuidkit.uiap import (
    DecodeError,
    DomainID,
    Engine,
    EngineConfig,
    Message,
    MessageType,
    UIDSpace,
    decode,
    encode,
)

DOMAIN = DomainID.parse("0fff:0000:00e0:0000")
INTERFACES = ("eth0", "eth1", "wlan0")
OWN_CLAIMS = (20, 2, 1000)
BASELINE = "decode() of every datagram"
BENCH_DIR = Path(__file__).resolve().parent

Datagram = tuple[bytes, str, int, float]


def _space(value: int) -> UIDSpace:
    return UIDSpace.unique(value.to_bytes(4, "big"))


def build_mix(count: int, seed: int, own_claims: int) -> list[Datagram]:
    """``count`` datagrams (data, interface, source, time) in the proportions above."""
    rng = random.Random(seed)
    mix: list[Datagram] = []
    sequence = 0
    now = 10.0
    while len(mix) < count:
        sequence += 1
        now += 0.001
        roll = rng.random()
        device = rng.randrange(1, 200)
        if roll < 0.02:
            mix.append((b"\x01" + rng.randbytes(rng.randrange(60)), "eth0", device, now))
            continue
        conflicting = roll < 0.05
        space = _space(rng.randrange(own_claims) if conflicting else 100_000 + sequence)
        message = Message(MessageType.CLAIM_ATTEMPT, device, sequence, DOMAIN, space, lifetime=60)
        data = encode(message)
        arrival, *others = rng.sample(INTERFACES, 3)
        mix.append((data, arrival, device, now))
        if conflicting:
            continue
        mix.extend((data, interface, device + 1, now) for interface in others)
        if rng.random() < 0.15:  # a device further out denies it: the deny comes back
            mix.append((encode(message.deny()), others[0], device + 2, now))
    return mix[:count]


def _config(limits: bool) -> EngineConfig:
    """No drop events; the default rate limits, or none (on engines that have them)."""
    config = EngineConfig(drop_events=False)
    if limits:
        return config
    names = {f.name for f in dataclasses.fields(EngineConfig)}
    unlimited: dict[str, Any] = {
        name: None for name in ("source_rate", "interface_rate") if name in names
    }
    return dataclasses.replace(config, **unlimited)


def fresh_engine(own_claims: int, limits: bool = True) -> Engine:
    """An engine on three interfaces holding ``own_claims`` claims (succeeded, not expired)."""
    engine = Engine(0xFEED, random.Random(1), _config(limits))
    for index in range(own_claims):
        engine.claim(DOMAIN, _space(index), 3600, 0.0)
    engine.handle_timer(5.0)
    for interface in INTERFACES:
        engine.add_interface(interface)
    while engine.next_event() is not None:
        pass
    return engine


def measure(quick: bool, cpu: bool = False) -> dict[str, float]:
    """Datagrams per second for each number of own claims, and for decode() alone; by
    process CPU time when ``cpu``, else by wall time."""
    count, repeat = (2_000, 3) if quick else (20_000, 5)
    timer = Timer(number=1, repeat=repeat, clock=time.process_time if cpu else time.perf_counter)
    rates: dict[str, float] = {}
    for own_claims, limits in itertools.product(OWN_CLAIMS, (True, False)):
        mix = build_mix(count, seed=5, own_claims=own_claims)

        def run_engine(engines: list[Engine], mix: list[Datagram] = mix) -> None:
            engine = engines.pop()
            receive = engine.receive_datagram
            for data, interface, source, now in mix:
                receive(data, interface, source, now)
                engine.datagrams_to_send()

        pool = [fresh_engine(own_claims, limits) for _ in range(repeat)]
        kind = "defaults" if limits else "no limits"
        label = f"receive_datagram() x {count}, {own_claims} own claims, {kind}"
        timer.measure(label, functools.partial(run_engine, pool))
        rates[f"{own_claims} own claims, {kind}"] = count / (timer.results[label] * 1e-9)
    mix = build_mix(count, seed=5, own_claims=OWN_CLAIMS[0])

    def decode_all() -> None:
        for data, _, _, _ in mix:
            with contextlib.suppress(DecodeError):
                decode(data)

    timer.measure(BASELINE, decode_all)
    rates[BASELINE] = count / (timer.results[BASELINE] * 1e-9)
    return rates


def measure_revision(revision: str, quick: bool, cpu: bool = False) -> dict[str, float]:
    """The rates of the engine at git ``revision``, measured by this script in a child."""
    root = BENCH_DIR.parent
    with tempfile.TemporaryDirectory(prefix="uuidkit-bench-") as tree:
        archive = subprocess.run(
            ["git", "-C", str(root), "archive", revision, "src"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join([str(Path(tree) / "src"), str(BENCH_DIR)])
        )
        command = [sys.executable, str(Path(__file__).resolve()), "--json"]
        result = subprocess.run(
            [*command, *(["--quick"] if quick else []), *(["--cpu"] if cpu else [])],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        )
    rates: dict[str, float] = json.loads(result.stdout)
    return rates


def _best(kept: dict[str, float], fresh: dict[str, float]) -> dict[str, float]:
    return {label: max(rate, kept.get(label, 0.0)) for label, rate in fresh.items()}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    parser.add_argument("--json", action="store_true", help="print the rates as JSON")
    parser.add_argument(
        "--cpu", action="store_true", help="time by process CPU time (for a shared machine)"
    )
    parser.add_argument("--compare", metavar="REV", help="also measure this git revision")
    parser.add_argument(
        "--rounds", type=int, default=2, help="alternate the two trees this often (best kept)"
    )
    options = parser.parse_args(argv)
    if options.json:
        print(json.dumps(measure(options.quick, options.cpu)))
        return
    # On a shared machine the load changes from second to second: the two trees are
    # measured in alternation and each keeps its best round.
    before: dict[str, float] | None = None
    now: dict[str, float] = {}
    for _ in range(max(1, options.rounds)):
        if options.compare:
            before = _best(
                before or {}, measure_revision(options.compare, options.quick, options.cpu)
            )
        now = _best(now, measure(options.quick, options.cpu))
    clock = "process CPU time" if options.cpu else "wall time"
    print(
        f"UIAP engine: datagrams/s through receive_datagram() (one core, best of the runs, {clock})"
    )
    header = f"{'what':<32} {'this tree':>12}"
    if before is not None:
        header += f" {options.compare:>12} {'ratio':>7}"
    print(header)
    for label, rate in now.items():
        line = f"{label:<32} {rate:>12,.0f}"
        if before is not None and label in before:
            line += f" {before[label]:>12,.0f} {rate / before[label]:>6.2f}x"
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
