"""The compiled decoder (``_speedups_uiap.c``) against the pure ``codec.decode``, differentially.

Every input goes through both: the same Message (same field values and exact types, enum
members, bytes and bools), or the same error (class, message text, ``field``, ``offset``).
Inputs: encodings of random valid messages (hypothesis), every truncation and every single
bit flip of them, seeded random mutations of a corpus with each message kind, arbitrary
bytes, and datagrams sealed with the MAC trailer (and their bodies, as a keyless engine
decodes them). The compiled decoder validates on the octets and hands every datagram it does not
accept to the pure one, so a check it lacked would show here as a message where the pure
decoder raises; a check too many is invisible by design (the pure decoder then answers).

Under ``UUIDKIT_PURE=1``, or where the accelerator is not built, the compiled decoder is not
in use and the tests that compare it skip; ``test_codec.py`` runs on whichever is in use.

References: UIAP §2.2, §3.2.2, §3.2.3, §4.1, §4.1.1, §7.
"""

from __future__ import annotations

import dataclasses
import enum
import pickle
import random
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fuzz_decode import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st
from test_codec import REJECTIONS, VECTORS, messages

from uuidkit import _accel
from uuidkit.uiap import UID, Message, MessageType, UIDSpace, codec, encode, flooding
from uuidkit.uiap.auth import TRAILER_OCTETS, Authenticator, SiteKeys, looks_sealed
from uuidkit.uiap.numberspaces import INTEGERS, IPV4_ADDRESSES, UUID_NODE_IDS
from uuidkit.uiap.space import Fmt

PURE: Callable[..., Message] = _accel.PURE_TWINS.get("uiap_decode", codec.decode)
COMPILED: Callable[..., Message] = codec.decode
compiled_only = pytest.mark.skipif(
    COMPILED is PURE, reason="the compiled decoder is not in use (not built, or UUIDKIT_PURE=1)"
)
pytestmark = compiled_only

#: Mutations drawn per seed in the seeded pass; the seed makes every run check the same inputs.
SEEDED_MUTATIONS = 20_000


def _shape(value: Any) -> Any:
    """``value`` spelled out with the exact type of every part, dataclasses field by field."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value),
            tuple(
                (field.name, _shape(getattr(value, field.name)))
                for field in dataclasses.fields(value)
            ),
        )
    if isinstance(value, enum.Enum):
        return ("member", value)  # an enum member is a singleton: compared by identity below
    return (type(value), value)


def _outcome(decode: Callable[..., Message], *args: Any, **kwargs: Any) -> tuple[Any, ...]:
    try:
        message = decode(*args, **kwargs)
    except Exception as error:
        return (
            "error",
            type(error),
            str(error),
            getattr(error, "field", None),
            getattr(error, "offset", None),
        )
    return ("message", _shape(message), message.type, message.space.fmt)


def assert_same(*args: Any, **kwargs: Any) -> None:
    """The compiled and the pure decoder give the same outcome for these arguments."""
    compiled, pure = _outcome(COMPILED, *args, **kwargs), _outcome(PURE, *args, **kwargs)
    assert compiled == pure, args
    if compiled[0] == "message":  # enum members compare equal to ints: check identity too
        assert compiled[2] is pure[2] and compiled[3] is pure[3]


def _truncations(data: bytes) -> Iterator[bytes]:
    return (data[:end] for end in range(len(data)))


def _bit_flips(data: bytes) -> Iterator[bytes]:
    for position in range(len(data)):
        for bit in range(8):
            flipped = bytearray(data)
            flipped[position] ^= 1 << bit
            yield bytes(flipped)


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """``data`` after 1 to 6 random edits: set or flip an octet, cut, or grow."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        action = rng.choice(("set", "flip", "cut", "grow", "header"))
        position = rng.randrange(len(out)) if out else 0
        if action == "set" and out:
            out[position] = rng.randrange(256)
        elif action == "flip" and out:
            out[position] ^= 1 << rng.randrange(8)
        elif action == "cut":
            del out[position:]
        elif action == "grow":
            out.extend(rng.randbytes(rng.randint(1, 8)))
        elif len(out) > 35:  # the octets the UID checks read: format, lengths, J
            out[rng.choice((31, 33, 34, 35))] = rng.randrange(256)
    return bytes(out)


def test_the_compiled_decoder_is_the_published_one() -> None:
    assert type(COMPILED).__name__ == "CompiledFunction"
    assert COMPILED.__wrapped__ is PURE  # type: ignore[attr-defined]
    assert COMPILED.__name__ == PURE.__name__ == "decode"
    assert COMPILED.__doc__ == PURE.__doc__
    assert vars(flooding)["decode"] is COMPILED  # what the engine calls on every datagram
    assert pickle.loads(pickle.dumps(COMPILED)) is COMPILED


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: v.name)
def test_spec_vectors(vector: Any) -> None:
    # The hand-written vectors of the UIAP §4.1 figure.
    assert COMPILED(vector.octets) == vector.message
    assert_same(vector.octets)


@pytest.mark.parametrize("row", REJECTIONS, ids=[row[0] for row in REJECTIONS])
def test_every_listed_rejection(row: tuple[Any, ...]) -> None:
    assert_same(row[1])


def test_every_truncation_and_bit_flip_of_the_corpus() -> None:
    for data in CORPUS:
        for mutated in (*_truncations(data), *_bit_flips(data[:80])):
            assert_same(mutated)


@settings(max_examples=300, deadline=None)
@given(messages())
def test_random_valid_messages_their_truncations_and_flips(message: Message) -> None:
    data = encode(message)
    assert_same(data)
    rng = random.Random(data)
    for mutated in _truncations(data):
        assert_same(mutated)
    for _ in range(40):
        position, bit = rng.randrange(len(data)), rng.randrange(8)
        flipped = bytearray(data)
        flipped[position] ^= 1 << bit
        assert_same(bytes(flipped))


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=600),
        st.binary(min_size=35, max_size=600).map(lambda tail: b"\x01" + tail),
        # A valid-looking header with a 0x01 version and a short UID area.
        st.binary(min_size=35, max_size=60).map(lambda tail: b"\x01" + tail),
    )
)
def test_arbitrary_bytes(data: bytes) -> None:
    assert_same(data)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_seeded_mutations(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(SEEDED_MUTATIONS):
        assert_same(_mutate(rng.choice(CORPUS), rng))


def test_sealed_datagrams_and_their_bodies() -> None:
    # A keyless engine tells a keyed site's datagram from garbage by decoding it without its
    # trailer (UIAP §7; uuidkit.uiap.auth): the sealed datagram is over-long, its body is the
    # message, and both decoders must say so alike, for a damaged trailer or body too.
    sealer = Authenticator(
        SiteKeys({1: bytes(range(32))}, 1), entropy=random.Random(1).randbytes, clock=lambda: 0.0
    )
    rng = random.Random(7)
    for data in CORPUS:
        sealed = sealer.seal(data, "fe80::1", "ff02::114", "a")
        assert looks_sealed(sealed)
        assert COMPILED(sealed[:-TRAILER_OCTETS]) == PURE(data)
        for variant in (sealed, *(_mutate(sealed, rng) for _ in range(200))):
            assert_same(variant)
            if looks_sealed(variant):
                assert_same(variant[:-TRAILER_OCTETS])


def test_other_argument_types_and_keywords() -> None:
    class Octets(bytes):
        pass

    data = CORPUS[0]
    for argument in (bytearray(data), memoryview(data), Octets(data), "text", None, 7):
        assert_same(argument)
    assert_same(data=data)
    assert_same(data, domains=None)
    assert_same(data, domains={})
    assert_same()
    assert_same(data, data)
    assert_same(data, unknown=1)
    # A domain's own rules (UIAP §3.2.1.1): the pure decoder applies them either way.
    node = Message.claim_attempt(1, 1, UUID_NODE_IDS.domain_id, VECTORS[0].message.space, 0)
    assert_same(encode(node), domains={UUID_NODE_IDS.domain_id: UUID_NODE_IDS})
    rules = {INTEGERS.domain_id: INTEGERS, IPV4_ADDRESSES.domain_id: IPV4_ADDRESSES}
    for vector in VECTORS:
        assert_same(vector.octets, domains=rules)


def test_binding_happens_once() -> None:
    speedups = _accel.SPEEDUPS
    bound = (
        Message,
        UIDSpace,
        UID,
        tuple(MessageType),
        tuple(Fmt),
        codec._domain_from_wire,
    )
    assert speedups.bind_uiap(*bound) is True  # the same objects again: accepted

    @dataclasses.dataclass(frozen=True, slots=True)
    class Other:
        data: bytes
        bits: int

    # Other classes later are refused: what a running decoder reads never changes.
    assert speedups.bind_uiap(Message, UIDSpace, Other, *bound[3:]) is False
    assert_same(CORPUS[0])


def test_threads_decoding_at_once_agree_with_the_pure_decoder() -> None:
    # On a free-threaded build the threads run at once; the decoder keeps no state of its own.
    threads, results = 4, {}
    barrier = threading.Barrier(threads)
    inputs = [_mutate(data, random.Random(index)) for index, data in enumerate(CORPUS * 50)]

    def work(index: int) -> None:
        barrier.wait()
        results[index] = [_outcome(COMPILED, data) for data in inputs]

    workers = [threading.Thread(target=work, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    expected = [_outcome(PURE, data) for data in inputs]
    assert all(results[index] == expected for index in range(threads))
