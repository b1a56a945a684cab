"""Test-only hostile host: sends forged and malformed UIAP datagrams as fast as it can.

Run inside a network namespace. Kinds, in round robin, each counted and reported as one
JSON line on stdout at the end (a ``{"started": true}`` line comes after the first round):

* ``garbage``: random octets; ``truncated``: a valid message cut short (the engine's
  ``malformed``);
* ``forged-attempt``: wire-valid Claim-Attempts from random device IDs in another domain;
* ``forged-proxy``: X+R Claim-Attempts with an infinite lifetime (proxy-table filling);
* ``forged-deny``: Claim-Denies for Message IDs nobody sent;
* ``oversized``: longer than the largest datagram the transport accepts;
* ``not-link-local``: a valid Claim-Attempt from a unique-local source address;
* ``wrong-destination``: a Claim-Attempt multicast to the reply port.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable

from uuidkit.uiap import LIFETIME_INFINITE, DomainID, Message, MessageType, UIDSpace, encode

FORGED_DOMAIN = DomainID.parse("0fff:0000:00ee:0000")


def _message(rng: random.Random, kind: MessageType, *, proxy: bool = False) -> bytes:
    """A fresh Message ID (octets 8-19, UIAP §4.1) on a template: cheap enough to flood."""
    template = _TEMPLATES.get((kind, proxy))
    if template is None:
        template = _TEMPLATES[kind, proxy] = _template(rng, kind, proxy=proxy)
    device_id = rng.randrange(1, 1 << 64).to_bytes(8)
    return template[:8] + device_id + rng.randbytes(4) + template[20:-1] + rng.randbytes(1)


_TEMPLATES: dict[tuple[MessageType, bool], bytes] = {}


def _template(rng: random.Random, kind: MessageType, *, proxy: bool) -> bytes:
    return encode(
        Message(
            kind,
            rng.randrange(1, 1 << 64),
            rng.randrange(1 << 32),
            FORGED_DOMAIN,
            UIDSpace.unique(rng.randbytes(rng.randrange(1, 9))),
            lifetime=LIFETIME_INFINITE if proxy else rng.randrange(1 << 32),
            proxy=proxy,
            reclaim=proxy,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--interface", required=True)
    parser.add_argument("--ula-source", required=True, help="a non-link-local address of ours")
    parser.add_argument("--port", type=int, default=1021)
    parser.add_argument("--reply-port", type=int, default=1022)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=4000.0, help="datagrams per second")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    scope = socket.if_nametoindex(options.interface)
    group = ("ff02::114", options.port, 0, scope)
    plain = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    plain.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)
    ula = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    ula.bind((options.ula_source, 0, 0, 0))
    sends: dict[str, Callable[[], object]] = {
        "garbage": lambda: plain.sendto(rng.randbytes(rng.randrange(0, 120)), group),
        "truncated": lambda: plain.sendto(
            _message(rng, MessageType.CLAIM_ATTEMPT)[: rng.randrange(1, 36)], group
        ),
        "forged-attempt": lambda: plain.sendto(_message(rng, MessageType.CLAIM_ATTEMPT), group),
        "forged-proxy": lambda: plain.sendto(
            _message(rng, MessageType.CLAIM_ATTEMPT, proxy=True), group
        ),
        "forged-deny": lambda: plain.sendto(_message(rng, MessageType.CLAIM_DENY), group),
        "oversized": lambda: plain.sendto(bytes(1300), group),
        "not-link-local": lambda: ula.sendto(_message(rng, MessageType.CLAIM_ATTEMPT), group),
        "wrong-destination": lambda: plain.sendto(
            _message(rng, MessageType.CLAIM_ATTEMPT), (group[0], options.reply_port, 0, scope)
        ),
    }
    sent: Counter[str] = Counter()
    start = time.monotonic()
    deadline = start + options.seconds
    first = True
    while (now := time.monotonic()) < deadline:
        # Paced: a round of len(sends) datagrams every len(sends) / rate seconds.
        ahead = start + sum(sent.values()) / options.rate - now
        if ahead > 0:
            time.sleep(ahead)
        for kind, send in sends.items():
            try:
                send()
                sent[kind] += 1
            except BlockingIOError:
                pass
        if first:
            print(json.dumps({"started": True}), flush=True)
            first = False
    print(json.dumps(dict(sent)), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
