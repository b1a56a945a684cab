"""The UIAP engine driven by hand: configuration, claiming, sequence numbers, the state table
(UIAP §2.4.1, §4.2, §4.5, §10).

Each test builds a few engines on named links (``engine_wire.Wire``), passes time
explicitly and moves datagrams itself; a lost datagram is one it does not deliver.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from engine_wire import (
    DOMAIN,
    OTHER_DOMAIN,
    StartAt,
    Wire,
    run_timers,
    span,
    unique,
)

from uuidkit.errors import EngineError, SpaceError
from uuidkit.uiap import (
    LIFETIME_INFINITE,
    MULTICAST,
    ClaimExpired,
    ClaimFailed,
    ClaimSucceeded,
    Engine,
    EngineConfig,
    FailureReason,
    MessageDropped,
    MessageType,
    decode,
    encode,
)
from uuidkit.uiap.claims import (
    CONFLICT_RULES,
    TRANSITIONS,
    ClaimState,
    Trigger,
    transitions_as_dot,
)

#: The draft's behaviour only: these tests pin the draft's mechanics (docs/uiap.md).
DRAFT = EngineConfig.draft_only()

# ---------------------------------------------------------------- configuration


def test_config_defaults_are_the_drafts() -> None:
    # UIAP §10: UIAP_CLAIM_PERIOD 500 ms, UIAP_CLAIM_TIMEOUT 1 s; §2.4.1: 3 attempts;
    # §4.4: a single reclaim attempt; §4.1: hop limit 32.
    config = EngineConfig.draft_only()
    assert (config.claim_period, config.claim_timeout) == (0.5, 1.0)
    assert (config.claim_attempts, config.reclaim_attempts, config.hop_limit) == (3, 1, 32)


@pytest.mark.parametrize(
    "fields",
    [
        {"claim_period": -1.0},
        {"claim_attempts": 0},
        {"reclaim_attempts": 0},
        {"hop_limit": 256},
        {"flood_record_lifetime": 0.0},
    ],
)
def test_config_out_of_range_is_refused(fields: dict[str, float]) -> None:
    with pytest.raises(EngineError):
        EngineConfig.draft_only(**fields)


def test_own_attempts_are_remembered_for_the_whole_claim() -> None:
    # §4.2.2.3: "a device MUST remember Claim-Attempt messages that it originates".
    assert EngineConfig.draft_only().longest_claim_seconds() == 2.5
    with pytest.raises(EngineError, match=r"exceed the longest claim \(5.0 s\)"):
        EngineConfig.draft_only(claim_period=1.0, claim_timeout=2.0, flood_record_lifetime=5.0)
    EngineConfig.draft_only(claim_period=1.0, claim_timeout=2.0, flood_record_lifetime=5.5)


@pytest.mark.parametrize("device_id", [0, 1 << 64, -1])
def test_device_id_must_fit_and_not_be_zero(device_id: int) -> None:
    # UIAP §4.1: "ID 0 (all bits 0) is reserved ... MUST NOT appear in a message".
    with pytest.raises(EngineError, match="device_id"):
        Engine(device_id, random.Random(0), DRAFT)


def test_claim_arguments_are_checked() -> None:
    engine = Engine(1, random.Random(0), DRAFT)
    with pytest.raises(EngineError, match="lifetime"):
        engine.claim(DOMAIN, unique(1), -1, 0.0)
    with pytest.raises(EngineError, match="lifetime"):
        engine.claim(DOMAIN, unique(1), 1 << 32, 0.0)
    with pytest.raises(SpaceError):
        engine.claim(DOMAIN, span(9, 1), 60, 0.0)  # an inverted range
    with pytest.raises(EngineError, match="unknown claim handle 7"):
        engine.release(7, 0.0)
    with pytest.raises(EngineError, match="never added"):
        engine.remove_interface("eth9")


# ---------------------------------------------------------------- making a claim (§2.4.1)


def test_new_claim_sends_three_attempts_then_succeeds_after_the_timeout() -> None:
    wire = Wire.pair()
    handle = wire.engines[1].claim(DOMAIN, unique(5), 60, 0.0)
    wire.run(10.0)
    attempts = [d for d in wire.log if d.sender == 1]
    # §2.4.1: "Repeat 3 times: { Send Claim-Attempt message. Wait UIAP_CLAIM_PERIOD. }
    # Wait UIAP_CLAIM_TIMEOUT. Succeed." -> sent at 0, 0.5, 1.0; success at 2.5.
    assert len(attempts) == 3
    assert all(d.message.type is MessageType.CLAIM_ATTEMPT for d in attempts)
    assert all(not d.message.reclaim and not d.message.proxy for d in attempts)
    assert all(d.message.hop_limit == 32 and d.message.lifetime == 60 for d in attempts)
    assert len({d.message.sequence for d in attempts}) == 3
    assert wire.events(1) == [ClaimSucceeded(handle, DOMAIN, unique(5), 62.5)]
    assert wire.engines[2].stats.attempts_received == 3


def test_claim_timeline_by_hand() -> None:
    engine = Engine(1, random.Random(0), DRAFT)
    engine.add_interface("a")
    engine.add_interface("b")
    engine.claim(DOMAIN, unique(5), 10, 0.0)
    first = engine.datagrams_to_send()
    # §4.2: "multicasts the Claim-Attempt message ... on all participating interfaces".
    assert [(t.interface, t.destination) for t in first] == [("a", MULTICAST), ("b", MULTICAST)]
    timeline = []
    while (deadline := engine.get_timer()) is not None:
        engine.handle_timer(deadline)
        timeline.append((deadline, len(engine.datagrams_to_send())))
    assert timeline == [(0.5, 2), (1.0, 2), (1.5, 0), (2.5, 0), (12.5, 0)]
    kinds = [type(event) for event in iter(engine.next_event, None)]
    assert kinds == [ClaimSucceeded, ClaimExpired]


def test_configured_counts_and_times_are_used() -> None:
    # §4.2.2.3: "A UIAP device MAY choose any appropriate values for the number of claim
    # attempts sent during a claim and the for the various times."
    config = EngineConfig.draft_only(
        claim_period=0.2, claim_timeout=0.3, claim_attempts=2, hop_limit=4
    )
    engine = Engine(1, random.Random(0), config)
    engine.add_interface("a")
    engine.claim(DOMAIN, unique(5), 10, 0.0)
    sent = len(engine.datagrams_to_send())
    while (deadline := engine.get_timer()) is not None and deadline < 5:
        engine.handle_timer(deadline)
        sent += len(engine.datagrams_to_send())
    success = engine.next_event()
    assert sent == 2
    assert isinstance(success, ClaimSucceeded) and success.expires == pytest.approx(10.7)


def test_a_late_caller_sees_each_overdue_step_once_and_the_claim_keeps_its_periods() -> None:
    # A caller late by far more than a claim (a stalled process) must not see the whole
    # claim run out in one call: the overdue attempt is sent, and every later step waits
    # its period from then (§2.4.1 "Send Claim-Attempt message. Wait UIAP_CLAIM_PERIOD.").
    engine = Engine(1, random.Random(0), DRAFT)
    engine.add_interface("a")
    engine.claim(DOMAIN, unique(5), 1, 0.0)
    engine.datagrams_to_send()
    engine.handle_timer(100.0)  # one call, long after everything was due
    assert engine.next_event() is None
    assert len(engine.datagrams_to_send()) == 1  # the second attempt, no more
    period, timeout = DRAFT.claim_period, DRAFT.claim_timeout
    assert engine.get_timer() == 100.0 + period
    run_timers(engine, 1000.0)
    events = list(iter(engine.next_event, None))
    # The last two periods and the timeout follow the stall, then the lifetime (1 s).
    succeeded = 100.0 + 2 * period + timeout
    assert events == [ClaimSucceeded(1, DOMAIN, unique(5), succeeded + 1), ClaimExpired(1)]
    assert engine.get_timer() is None


@pytest.mark.parametrize("timer_first", [True, False], ids=["timer-first", "datagram-first"])
def test_a_deny_queued_while_the_claimant_stalled_fails_the_claim(timer_first: bool) -> None:
    # The claimant sends its first attempt, then stalls past every deadline of the claim
    # while the holder's Claim-Deny for it waits in its socket. Whichever the caller handles
    # first when it wakes (the overdue timer or the datagram), the claim must be denied
    # (§4.3.2), never granted before the deny is read.
    engine = Engine(1, random.Random(0), DRAFT)
    engine.add_interface("a")
    handle = engine.claim(DOMAIN, unique(5), 60, 0.0)
    (first,) = engine.datagrams_to_send()
    deny = encode(decode(first.data).deny())
    # Past every deadline of the claim, before the record of the flood expires (a deny
    # read after that is unmatched; the attempts sent on waking are denied afresh).
    woke = (DRAFT.longest_claim_seconds() + DRAFT.flood_record_lifetime) / 2
    if timer_first:
        engine.handle_timer(woke)
    engine.receive_datagram(deny, "a", 2, woke)
    run_timers(engine, woke + 10 * DRAFT.longest_claim_seconds())
    events = [e for e in iter(engine.next_event, None) if not isinstance(e, MessageDropped)]
    assert events == [ClaimFailed(handle, FailureReason.DENIED, DOMAIN, unique(5))]


def test_lifetime_zero_succeeds_and_expires_at_once_and_infinite_never_expires() -> None:
    engine = Engine(1, random.Random(0), DRAFT)
    zero = engine.claim(DOMAIN, unique(1), 0, 0.0)
    forever = engine.claim(DOMAIN, unique(2), LIFETIME_INFINITE, 0.0)
    run_timers(engine, 1e9)
    # Deadlines due at the same time run in the order they were scheduled.
    assert list(iter(engine.next_event, None)) == [
        ClaimSucceeded(zero, DOMAIN, unique(1), 2.5),
        ClaimSucceeded(forever, DOMAIN, unique(2), None),
        ClaimExpired(zero),
    ]
    assert engine.get_timer() is None


def test_conflict_with_a_claim_on_this_device_fails_at_once() -> None:
    # §2.4.1: "a claim will immediately fail if a conflicting claim already exits on the
    # local device".
    engine = Engine(1, random.Random(0), DRAFT)
    engine.add_interface("a")
    first = engine.claim(DOMAIN, span(1, 9), 60, 0.0)
    engine.datagrams_to_send()
    second = engine.claim(DOMAIN, unique(5), 60, 0.1)
    elsewhere = engine.claim(OTHER_DOMAIN, unique(5), 60, 0.1)
    assert engine.next_event() == ClaimFailed(
        second, FailureReason.LOCAL_CONFLICT, DOMAIN, unique(5)
    )
    assert len(engine.datagrams_to_send()) == 1  # only the other domain's attempt
    assert first != second != elsewhere


def test_release_stops_the_claim_and_its_defense() -> None:
    wire = Wire.pair()
    held = wire.engines[1].claim(DOMAIN, unique(5), 60, 0.0)
    wire.run(3.0)
    wire.engines[1].release(held, 3.0)
    wire.engines[1].release(held, 3.0)  # releasing again does nothing
    wire.engines[2].claim(DOMAIN, unique(5), 60, 3.0)
    wire.run(10.0)
    assert isinstance(wire.events(2)[-1], ClaimSucceeded)
    assert wire.engines[1].stats.denied == 0


# ---------------------------------------------------------------- sequence numbers (§4.5.1)


def test_sequence_numbers_start_random_increment_per_flood_and_wrap() -> None:
    engine = Engine(1, StartAt((1 << 32) - 2), DRAFT)
    engine.add_interface("a")
    engine.claim(DOMAIN, unique(1), 60, 0.0)
    run_timers(engine, 1.0)
    sequences = [decode(t.data).sequence for t in engine.datagrams_to_send()]
    # §4.5.1: "MUST increment"; "0 is the sequence number that follows 2^32-1".
    assert sequences == [(1 << 32) - 2, (1 << 32) - 1, 0]
    starts = {Engine(1, random.Random(seed), DRAFT)._sequences.current for seed in range(20)}
    assert len(starts) == 20


# ---------------------------------------------------------------- the state table


def test_state_table_covers_every_state_and_trigger() -> None:
    states = {state for state, _ in TRANSITIONS} | set(TRANSITIONS.values())
    assert states == set(ClaimState)
    assert {trigger for _, trigger in TRANSITIONS} == set(Trigger)
    finals = {ClaimState.FAILED, ClaimState.EXPIRED, ClaimState.RELEASED}
    assert not {state for state, _ in TRANSITIONS} & finals


def test_conflict_rules_cover_every_r_flag_combination() -> None:
    assert set(CONFLICT_RULES) == {
        (progress, ours, theirs)
        for progress in (False, True)
        for ours in (False, True)
        for theirs in (False, True)
    }
    # §4.2.2.2: in progress, "If one Claim-Attempt is a re-claim and the other is not,
    # then the re-claim takes precedence" -- the only case where we do not deny.
    not_denied = [key for key, rule in CONFLICT_RULES.items() if not rule.deny]
    assert not_denied == [(True, False, True)]


def test_docs_draw_the_same_state_table() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "uiap.md").read_text(encoding="utf-8")
    for (state, trigger), following in TRANSITIONS.items():
        row = f"| `{state.value}` | `{trigger.value}` | `{following.value}` |"
        assert row in docs, f"docs/uiap.md lacks the row {row}"


def test_zero_period_and_timeout_still_send_every_attempt_once() -> None:
    engine = Engine(
        1, random.Random(0), EngineConfig.draft_only(claim_period=0.0, claim_timeout=0.0)
    )
    engine.add_interface("a")
    handle = engine.claim(DOMAIN, unique(5), 10, 4.0)
    engine.handle_timer(4.0)
    assert len(engine.datagrams_to_send()) == 3
    assert list(iter(engine.next_event, None)) == [ClaimSucceeded(handle, DOMAIN, unique(5), 14.0)]
    assert engine.get_timer() == 14.0


def test_the_diagram_is_drawn_from_the_table() -> None:
    dot = transitions_as_dot()
    assert dot.startswith("digraph claim {") and dot.endswith("}")
    assert dot.count("->") == len(TRANSITIONS)
    assert 'waiting -> held [label="timeout"];' in dot
