"""The MAC trailer (uuidkit.uiap.auth): RFC 8967's Index + PC scheme over UIAP datagrams."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uuidkit.uiap.auth import (
    TRAILER_OCTETS,
    AuthConfig,
    AuthDrop,
    Authenticator,
    AuthError,
    SiteKeys,
    parse_key_file,
)

KEY_A = bytes(range(32))
KEY_B = bytes(range(100, 132))
SRC = "fe80::1%veth0"
GROUP = "ff02::114%veth0"
PEER = "fe80::2"
MESSAGE = bytes(36) + bytes(range(20))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make(keys: SiteKeys | None = None, seed: int = 1, **config: float) -> Authenticator:
    rng = random.Random(seed)
    return Authenticator(
        keys or SiteKeys({1: KEY_A}, 1),
        entropy=rng.randbytes,
        clock=Clock(),
        config=AuthConfig(**config),  # type: ignore[arg-type]
    )


def test_round_trip_strips_the_trailer() -> None:
    sender, receiver = make(seed=1), make(seed=2)
    sealed = sender.seal(MESSAGE, SRC, GROUP, "veth0")
    assert len(sealed) == len(MESSAGE) + TRAILER_OCTETS
    assert sealed.startswith(MESSAGE)
    # The scope id is local to each host: the receiver sees other interface names.
    assert receiver.open(sealed, "fe80::1%eth7", "ff02::114%eth7", "eth7") == MESSAGE
    assert receiver.stats.accepted == 1


def test_replay_is_dropped_and_counted() -> None:
    sender, receiver = make(seed=1), make(seed=2)
    first = sender.seal(MESSAGE, SRC, GROUP, "veth0")
    second = sender.seal(MESSAGE, SRC, GROUP, "veth0")
    assert receiver.open(second, SRC, GROUP, "veth0") == MESSAGE
    assert receiver.open(second, SRC, GROUP, "veth0") is None
    # RFC 8967 §4.3: a PC not above the highest seen is refused, so an older datagram
    # delivered after a newer one is a replay too.
    assert receiver.open(first, SRC, GROUP, "veth0") is None
    assert receiver.stats.dropped[AuthDrop.REPLAY] == 2


def test_unicast_and_multicast_counters_are_separate() -> None:
    """RFC 9467: a Claim-Deny (unicast) sealed before a flood may arrive after it."""
    sender, receiver = make(seed=1), make(seed=2)
    deny = sender.seal(MESSAGE, SRC, PEER, "veth0")
    flood = sender.seal(MESSAGE, SRC, GROUP, "veth0")
    assert receiver.open(flood, SRC, GROUP, "veth0") == MESSAGE
    assert receiver.open(deny, SRC, PEER, "veth0") == MESSAGE
    assert receiver.open(deny, SRC, PEER, "veth0") is None


def test_wrong_key_and_unknown_key_id() -> None:
    sender = make(SiteKeys({1: KEY_B}, 1))
    other_id = make(SiteKeys({2: KEY_A}, 2))
    receiver = make(seed=3)
    assert receiver.open(sender.seal(MESSAGE, SRC, GROUP, "e"), SRC, GROUP, "e") is None
    assert receiver.open(other_id.seal(MESSAGE, SRC, GROUP, "e"), SRC, GROUP, "e") is None
    assert receiver.stats.dropped == {AuthDrop.BAD_MAC: 1, AuthDrop.UNKNOWN_KEY: 1}


def test_the_mac_covers_the_addresses() -> None:
    sender, receiver = make(seed=1), make(seed=2)
    sealed = sender.seal(MESSAGE, SRC, GROUP, "veth0")
    assert receiver.open(sealed, "fe80::9", GROUP, "veth0") is None
    assert receiver.open(sealed, SRC, "ff02::115", "veth0") is None
    assert receiver.stats.dropped[AuthDrop.BAD_MAC] == 2


def test_unauthenticated_truncated_and_bad_addresses() -> None:
    sender, receiver = make(seed=1), make(seed=2)
    sealed = sender.seal(MESSAGE, SRC, GROUP, "veth0")
    assert receiver.open(MESSAGE, SRC, GROUP, "veth0") is None
    assert receiver.open(sealed[-(TRAILER_OCTETS - 1) :], SRC, GROUP, "veth0") is None
    assert receiver.open(sealed[:-1], SRC, GROUP, "veth0") is None  # marker cut
    assert receiver.open(sealed, "not-an-address", GROUP, "veth0") is None
    assert receiver.stats.dropped == {
        AuthDrop.NO_TRAILER: 2,
        AuthDrop.TRUNCATED: 1,
        AuthDrop.BAD_ADDRESS: 1,
    }
    with pytest.raises(AuthError):
        sender.seal(MESSAGE, "nowhere", GROUP, "veth0")


@given(st.binary(max_size=200), st.integers(0, 10_000))
def test_mangled_datagrams_never_raise_and_never_pass(noise: bytes, position: int) -> None:
    sender, receiver = make(seed=1), make(seed=2)
    sealed = bytearray(sender.seal(MESSAGE, SRC, GROUP, "veth0"))
    sealed[position % len(sealed)] ^= 0x01
    assert receiver.open(bytes(sealed), SRC, GROUP, "veth0") is None
    assert receiver.open(noise, SRC, GROUP, "veth0") is None


def test_key_rollover() -> None:
    """RFC 8967 §1.1 graceful rotation: accept old and new, send with one."""
    old_only = make(SiteKeys({1: KEY_A}, 1), seed=1)
    both_old = make(SiteKeys({1: KEY_A, 2: KEY_B}, 1), seed=2)
    both_new = make(SiteKeys({1: KEY_A, 2: KEY_B}, 2), seed=3)
    new_only = make(SiteKeys({2: KEY_B}, 2), seed=4)
    from_new = both_new.seal(MESSAGE, SRC, GROUP, "e")
    assert both_old.open(from_new, SRC, GROUP, "e") == MESSAGE
    assert old_only.open(from_new, SRC, GROUP, "e") is None
    assert (
        new_only.open(both_old.seal(MESSAGE, "fe80::3", GROUP, "e"), "fe80::3", GROUP, "e") is None
    )
    both_old.replace_keys(SiteKeys({2: KEY_B}, 2))
    assert new_only.open(both_old.seal(MESSAGE, "fe80::3", GROUP, "e"), "fe80::3", GROUP, "e")


def test_a_restarted_sender_is_accepted_and_its_old_index_stays_refused() -> None:
    receiver = make(seed=9)
    before = make(seed=1)
    old = [before.seal(MESSAGE, SRC, GROUP, "e") for _ in range(3)]
    assert receiver.open(old[2], SRC, GROUP, "e") == MESSAGE
    after = make(seed=2)  # a restart: PC from 1 again, a new random Index
    assert receiver.open(after.seal(MESSAGE, SRC, GROUP, "e"), SRC, GROUP, "e") == MESSAGE
    assert receiver.open(old[2], SRC, GROUP, "e") is None
    assert receiver.open(old[1], SRC, GROUP, "e") is None
    assert receiver.stats.new_indices == 2


def test_an_index_pushed_out_can_be_replayed_once() -> None:
    """The documented window of skipping the challenge: a forgotten Index."""
    receiver = make(seed=9, indices_per_sender=2)
    first = make(seed=1).seal(MESSAGE, SRC, GROUP, "e")
    assert receiver.open(first, SRC, GROUP, "e") == MESSAGE
    for seed in (2, 3):
        assert receiver.open(make(seed=seed).seal(MESSAGE, SRC, GROUP, "e"), SRC, GROUP, "e")
    assert receiver.open(first, SRC, GROUP, "e") == MESSAGE
    assert receiver.open(first, SRC, GROUP, "e") is None


def test_pc_wrap_draws_a_new_index() -> None:
    sender, receiver = make(seed=1), make(seed=2)
    sender._pc = (1 << 32) - 1
    sealed = sender.seal(MESSAGE, SRC, GROUP, "e")
    assert sealed[-TRAILER_OCTETS + 8 : -TRAILER_OCTETS + 12] == b"\0\0\0\1"
    assert receiver.open(sealed, SRC, GROUP, "e") == MESSAGE


def test_sender_table_cap_and_expiry() -> None:
    sender = make(seed=1)
    receiver = make(seed=2, max_senders=3, sender_expiry=10.0)
    clock = receiver._clock
    assert isinstance(clock, Clock)
    for host in range(1, 4):
        source = f"fe80::{host}"
        assert receiver.open(sender.seal(MESSAGE, source, GROUP, "e"), source, GROUP, "e")
    fourth = sender.seal(MESSAGE, "fe80::4", GROUP, "e")
    assert receiver.open(fourth, "fe80::4", GROUP, "e") is None
    assert receiver.stats.dropped[AuthDrop.TABLE_FULL] == 1
    assert receiver.senders == 3
    clock.now = 10.5
    assert receiver.open(fourth, "fe80::4", GROUP, "e") == MESSAGE
    assert receiver.senders == 1


def test_senders_are_keyed_by_interface_too() -> None:
    sender, receiver = make(seed=1), make(seed=2)
    sealed = sender.seal(MESSAGE, SRC, GROUP, "e")
    assert receiver.open(sealed, SRC, GROUP, "a") == MESSAGE
    assert receiver.open(sealed, SRC, GROUP, "b") == MESSAGE
    assert receiver.senders == 2


def test_a_datagram_replayed_on_another_link_is_accepted_once_there() -> None:
    """The replay table is keyed by (source, arrival interface), and the MAC cannot cover
    the interface (a scope ID is local to each host): a datagram recorded on one link and
    replayed on another of the receiver's links passes once there, then is a replay like
    any other; one older than the sender's latest datagram on that link never passes."""
    sender, receiver = make(seed=1), make(seed=2)
    recorded = sender.seal(MESSAGE, SRC, GROUP, "e")
    assert receiver.open(recorded, SRC, GROUP, "a") == MESSAGE
    assert receiver.open(recorded, SRC, GROUP, "b") == MESSAGE  # another link: new entry
    assert receiver.open(recorded, SRC, GROUP, "b") is None
    later = sender.seal(MESSAGE, SRC, GROUP, "e")
    assert receiver.open(later, SRC, GROUP, "c") == MESSAGE
    assert receiver.open(recorded, SRC, GROUP, "c") is None  # PC below the latest seen on c
    assert receiver.stats.dropped[AuthDrop.REPLAY] == 2


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "no key"),
        ("1 zz" + "0" * 62, "not hexadecimal"),
        ("x " + "00" * 32, "not a number"),
        ("1 " + "00" * 31, "31 octets"),
        ("1 " + "00" * 32 + " sent", "expected"),
        ("1 " + "00" * 32 + "\n1 " + "11" * 32, "twice"),
        ("1 " + "00" * 32 + "\n2 " + "11" * 32, "none marked"),
        ("1 " + "00" * 32 + " send\n2 " + "11" * 32 + " send", "several keys are marked"),
        ("70000 " + "00" * 32, "0 .. 65535"),
    ],
)
def test_key_file_errors(text: str, problem: str) -> None:
    with pytest.raises(AuthError, match=problem):
        parse_key_file(text)


def test_key_file_forms() -> None:
    keys = parse_key_file("# site\n7 " + KEY_A.hex() + "\n\n9 " + KEY_B.hex() + " send # new\n")
    assert keys == SiteKeys({7: KEY_A, 9: KEY_B}, 9)
    assert parse_key_file("3 " + KEY_A.hex()).send_key_id == 3


def test_forged_datagrams_are_dropped_by_their_mac_before_any_per_sender_state() -> None:
    # A flood of forgeries from ever-changing sources must cost no per-sender budget or
    # table entry (the replay table, and behind it the engine's rate buckets): the MAC
    # is checked first, so only datagrams of the site reach any per-source state.
    receiver, forger = make(seed=2), make(SiteKeys({1: KEY_B}, 1), seed=3)
    for host in range(10_000):
        source = f"fe80::{host + 1:x}%veth0"
        assert (
            receiver.open(forger.seal(MESSAGE, source, GROUP, "veth0"), source, GROUP, "veth0")
            is None
        )
    assert receiver.stats.dropped[AuthDrop.BAD_MAC] == 10_000
    assert len(receiver._senders) == 0
    honest = make(seed=1)
    assert receiver.open(honest.seal(MESSAGE, SRC, GROUP, "veth0"), SRC, GROUP, "veth0") == MESSAGE
