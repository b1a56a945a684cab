"""Fuzz the UIAP decoder: any bytes decode to a message that re-encodes, or raise DecodeError.

The boundary contract: :func:`uuidkit.uiap.decode` raises only
:class:`~uuidkit.errors.DecodeError` for any input; any other exception is a bug. A decoded
message must also survive ``decode(encode(m)) == m`` with the same datagram length (the
bytes may differ only in reserved fields, which are ignored on receipt and sent as 0).

Run by hand, for as long as you like::

    python3 tests/uiap/fuzz_decode.py --examples 200000          # hypothesis engine
    python3 tests/uiap/fuzz_decode.py --atheris -- -max_total_time=600   # if atheris installed

The test suite runs a short pass through :func:`run_hypothesis` (see ``test_codec.py``).

References: UIAP §4.1.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from uuidkit.errors import DecodeError
from uuidkit.uiap import UID, DomainID, Message, MessageType, UIDSpace, decode, encode

__all__ = ["CORPUS", "check_datagram", "main", "run_hypothesis"]


def _corpus() -> list[bytes]:
    left, right = DomainID.parse("0fff:0:2:0"), DomainID.parse("0fff:0:1:80")
    spaces = [
        (left, UIDSpace.unique(b"\xc0\xa8\x01\x14")),
        (left, UIDSpace.prefix(UID(b"\x0a\x01\x10", 4))),
        (left, UIDSpace.unique(b"")),
        (right, UIDSpace.range(UID(b"\x0a\xbc", 4), UID(b"\x1f\xff", 5))),
        (left, UIDSpace.range(b"\x00" * 255, b"\xff" * 255)),
    ]
    seeds = [
        Message(MessageType.CLAIM_ATTEMPT, 0x021122FFFE334455, 7, domain, space, lifetime=60)
        for domain, space in spaces
    ]
    seeds.append(seeds[0].deny())
    seeds.append(seeds[1].replace(proxy=True, reclaim=True, hop_limit=0))
    return [encode(message) for message in seeds]


#: Valid datagrams that mutations start from: each message kind and Fmt, both J values.
CORPUS = _corpus()


def check_datagram(data: bytes) -> None:
    """Decode ``data``; raise AssertionError (or let a stray exception escape) on a bug."""
    try:
        message = decode(data)
    except DecodeError:
        return
    again = encode(message)
    assert len(again) == len(data), (data.hex(), again.hex())
    assert decode(again) == message, data.hex()


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(CORPUS)))
    for _ in range(draw(st.integers(1, 6))):
        action = draw(st.sampled_from(["set", "flip", "cut", "grow"]))
        position = draw(st.integers(0, max(len(data) - 1, 0)))
        if action == "set" and data:
            data[position] = draw(st.integers(0, 255))
        elif action == "flip" and data:
            data[position] ^= 1 << draw(st.integers(0, 7))
        elif action == "cut":
            del data[position:]
        else:
            data.extend(draw(st.binary(min_size=1, max_size=8)))
    return bytes(data)


DATAGRAMS = st.one_of(st.binary(max_size=600), _mutated())


def run_hypothesis(examples: int, seed: int) -> None:
    """Check ``examples`` datagrams (random bytes and mutated valid ones) drawn from ``seed``."""

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(DATAGRAMS)
    def fuzz(data: bytes) -> None:
        check_datagram(data)

    fuzz()


def _run_atheris(argv: list[str]) -> None:
    import atheris

    def one_input(data: bytes) -> None:
        check_datagram(data)

    atheris.Setup([sys.argv[0], *argv], one_input)
    atheris.Fuzz()


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20_000, help="hypothesis examples")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    parser.add_argument("--atheris", action="store_true", help="use atheris (libFuzzer)")
    parser.add_argument("rest", nargs="*", help="arguments passed to libFuzzer after --")
    args = parser.parse_args(argv)
    if args.atheris:
        _run_atheris(args.rest)
        return 0
    seed = random.randrange(1 << 32) if args.seed is None else args.seed
    print(f"fuzzing decode with {args.examples} hypothesis examples, --seed {seed}", flush=True)
    run_hypothesis(args.examples, seed)
    print("no failures")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
