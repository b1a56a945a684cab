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

With ``--forged-sources`` it sends only Claim-Attempts, each from a new random ``fe80::``
source address and with a new Message ID, as whole Ethernet frames on a packet socket, as
fast as it can for ``--seconds``, and reports ``{"forged-sources": N, "seconds": S}``.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import struct
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

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


#: Octets of the Ethernet (14) and IPv6 (40) headers, UDP (8): where the fields sit.
_SOURCE_IID = slice(14 + 16, 14 + 24)  # the low 64 bits of the IPv6 source address
_DEVICE_ID = slice(14 + 48 + 8, 14 + 48 + 16)  # Originating Device ID (UIAP §4.1)


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _frame(interface: str, port: int, rng: random.Random) -> bytes:
    """One Claim-Attempt frame to ff02::114 whose UDP checksum stays right when the source
    IID and the device ID change together: the device ID is the IID's complement, and a
    word plus its complement adds 0xFFFF, one's complement zero (RFC 1071)."""
    payload = _template(rng, MessageType.CLAIM_ATTEMPT, proxy=False)
    iid = rng.randbytes(8)
    device_id = bytes(octet ^ 0xFF for octet in iid)
    payload = payload[:8] + device_id + payload[16:]
    source = bytes.fromhex("fe80000000000000") + iid
    group = socket.inet_pton(socket.AF_INET6, "ff02::114")
    udp_length = 8 + len(payload)
    pseudo = source + group + struct.pack("!I3xB", udp_length, socket.IPPROTO_UDP)
    udp = struct.pack("!HHHH", port, port, udp_length, 0) + payload
    udp = udp[:6] + struct.pack("!H", _checksum(pseudo + udp) or 0xFFFF) + udp[8:]
    ipv6 = struct.pack("!IHBB", 6 << 28, udp_length, socket.IPPROTO_UDP, 1) + source + group
    mac = bytes.fromhex(Path(f"/sys/class/net/{interface}/address").read_text().replace(":", ""))
    ethernet = bytes.fromhex("333300000114") + mac + struct.pack("!H", 0x86DD)
    return ethernet + ipv6 + udp


def flood_forged_sources(interface: str, port: int, seconds: float, seed: int) -> None:
    """Send Claim-Attempts from new fe80:: sources as fast as possible (see module doc)."""
    rng = random.Random(seed)
    frame = _frame(interface, port, rng)
    head, middle, tail = (
        frame[: _SOURCE_IID.start],
        frame[_SOURCE_IID.stop : _DEVICE_ID.start],
        frame[_DEVICE_ID.stop :],
    )
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((interface, 0))
    batch = 4096
    sent = 0
    print(json.dumps({"started": True}), flush=True)
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        iids = rng.randbytes(8 * batch)
        complements = (int.from_bytes(iids) ^ ((1 << (64 * batch)) - 1)).to_bytes(8 * batch)
        for offset in range(0, 8 * batch, 8):
            end = offset + 8
            try:
                sock.send(head + iids[offset:end] + middle + complements[offset:end] + tail)
                sent += 1
            except (BlockingIOError, OSError):
                pass
    elapsed = time.monotonic() - start
    print(json.dumps({"forged-sources": sent, "seconds": elapsed}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--interface", required=True)
    parser.add_argument("--ula-source", help="a non-link-local address of ours")
    parser.add_argument("--port", type=int, default=1021)
    parser.add_argument("--reply-port", type=int, default=1022)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=4000.0, help="datagrams per second")
    parser.add_argument("--forged-sources", action="store_true", help="see the module doc")
    options = parser.parse_args()
    if options.forged_sources:
        flood_forged_sources(options.interface, options.port, options.seconds, options.seed)
        return
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
