"""The UIAP engine's datagram rate: ``receive_datagram`` over a realistic mix, per second.

Run: ``python3 bench/bench_engine.py`` (``--quick`` for a fast smoke run).

The device under test sits in a mesh with three interfaces and defends 20 claims of its
own (then 2, to show what comparing with each claim costs). Every foreign flood reaches
it once per interface, so per 100 datagrams it sees about 30 first copies (recorded,
compared with its claims, forwarded out two interfaces), 60 copies it already knows
(dropped by Message ID, §4.2.2.1), 5 Claim-Denies to forward back (§4.3.2), 3
Claim-Attempts that conflict with its claims (denied) and 2 malformed datagrams. The
baseline is :func:`uuidkit.uiap.decode` of the same batch: the engine's own cost is what
it adds on top of decoding.

References: UIAP §2.4.2, §2.4.3, §2.4.5, §4.2.2.1, §4.3.2.
"""

from __future__ import annotations

import contextlib
import functools
import random
import sys

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
OWN_CLAIMS = 20
BASELINE = "decode() of every datagram"

Datagram = tuple[bytes, str, int, float]


def _space(value: int) -> UIDSpace:
    return UIDSpace.unique(value.to_bytes(4, "big"))


def build_mix(count: int, seed: int) -> list[Datagram]:
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
        space = _space(rng.randrange(OWN_CLAIMS) if conflicting else 1000 + sequence)
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


def fresh_engine(own_claims: int) -> Engine:
    """An engine on three interfaces holding ``own_claims`` claims (succeeded, not expired)."""
    engine = Engine(0xFEED, random.Random(1), EngineConfig(drop_events=False))
    for index in range(own_claims):
        engine.claim(DOMAIN, _space(index), 3600, 0.0)
    engine.handle_timer(5.0)
    for interface in INTERFACES:
        engine.add_interface(interface)
    while engine.next_event() is not None:
        pass
    return engine


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    count, repeat = (2_000, 3) if quick else (20_000, 7)
    mix = build_mix(count, seed=5)
    timer = Timer(number=1, repeat=repeat)

    def decode_all() -> None:
        for data, _, _, _ in mix:
            with contextlib.suppress(DecodeError):
                decode(data)

    def run_engine(engines: list[Engine]) -> None:
        engine = engines.pop()
        receive = engine.receive_datagram
        for data, interface, source, now in mix:
            receive(data, interface, source, now)
            engine.datagrams_to_send()

    timer.measure(BASELINE, decode_all)
    labels = {}
    for own_claims in (OWN_CLAIMS, 2):
        pool = [fresh_engine(own_claims) for _ in range(repeat)]
        label = f"receive_datagram() x {count}, {own_claims} own claims"
        labels[own_claims] = timer.measure(label, functools.partial(run_engine, pool))
    timer.report(BASELINE, f"UIAP engine, a batch of {count} datagrams (ns per batch)")
    print()
    for own_claims, label in labels.items():
        per_second = count / (timer.results[label] * 1e-9)
        print(f"engine with {own_claims:>2} claims: {per_second:,.0f} datagrams/s (one core)")


if __name__ == "__main__":
    main(sys.argv[1:])
