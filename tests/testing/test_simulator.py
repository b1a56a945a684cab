"""The simulator core against a fake engine: delivery, timers, impairments, partitions,
crashes and the report (docs/simulator.md)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sim_fakes import DOMAIN, FAKE_TIMEOUT, FakeEngine, uid

from uuidkit.errors import SimulationError
from uuidkit.testing import ClaimOutcome, LinkConfig, Simulator, topologies
from uuidkit.testing.engines import claims_conflict
from uuidkit.testing.network import DROP_LINK_DOWN, DROP_LOSS, DROP_NOT_ON_LINK
from uuidkit.testing.simulator import DROP_DEVICE_DOWN
from uuidkit.testing.topologies import Topology
from uuidkit.uiap import DomainID, UIDSpace


def make(topology: Topology, seed: int = 0, **link: float) -> Simulator:
    return Simulator(topology, seed=seed, link=LinkConfig(**link), engine_factory=FakeEngine)


def engine(sim: Simulator, device: int) -> FakeEngine:
    fake = sim.devices[device].engine
    assert isinstance(fake, FakeEngine)
    return fake


def arrivals(sim: Simulator, device: int) -> list[tuple[float, object, object]]:
    return [(round(t, 9), link, source) for t, link, source, _ in engine(sim, device).received]


def test_a_flood_moves_one_hop_per_link_delay() -> None:
    sim = make(topologies.line(3), delay=0.01)
    record = sim.claim(0, DOMAIN, uid(1))
    report = sim.run()
    # Source addresses are device numbers; interface keys are link names.
    assert arrivals(sim, 1) == [(0.01, "l0", 0)]
    assert arrivals(sim, 2) == [(0.02, "l1", 1)]
    assert record.outcome is ClaimOutcome.GRANTED
    assert (record.issued, record.decided, record.latency) == (0.0, FAKE_TIMEOUT, FAKE_TIMEOUT)
    assert report.messages == 2 and report.messages_per_claim == 2.0


def test_a_shared_segment_is_one_multicast_to_every_other_member() -> None:
    sim = make(topologies.segment_tree(4, segment_size=4))
    sim.claim(2, DOMAIN, uid(1))
    report = sim.run()
    assert report.messages == 1
    assert [len(engine(sim, d).received) for d in range(4)] == [1, 1, 0, 1]


def test_a_deny_is_unicast_back_along_the_path() -> None:
    sim = make(topologies.line(4), delay=0.01)
    sim.claim(3, DOMAIN, uid(7))
    late = sim.claim(0, DOMAIN, uid(7), at=2.0)
    sim.run()
    assert late.outcome is ClaimOutcome.DENIED and late.reason == "denied"
    assert late.latency == pytest.approx(0.06)  # 3 hops out, 3 hops back
    # The unicast deny reaches only the next hop each time, never the far side.
    assert [source for _, _, source in arrivals(sim, 2)] == [3, 1, 3]


def test_unicast_to_an_address_not_on_the_link_is_dropped() -> None:
    sim = make(topologies.line(3))
    link = sim.network.link("l0")
    out: list[tuple[int, float]] = []
    sim.network.fan_out(link, 0, 2, out)
    assert out == [] and sim.network.drops[DROP_NOT_ON_LINK] == 1


def test_total_loss_delivers_nothing_and_counts_each_copy() -> None:
    sim = make(topologies.star(4), loss=1.0)
    record = sim.claim(0, DOMAIN, uid(1))
    report = sim.run()
    assert report.drops == {DROP_LOSS: 3}
    assert record.outcome is ClaimOutcome.GRANTED


def test_duplication_delivers_each_copy_twice() -> None:
    sim = make(topologies.line(2), duplicate=1.0)
    sim.claim(0, DOMAIN, uid(1))
    report = sim.run()
    assert len(engine(sim, 1).received) == 2
    assert report.drops == {"engine: duplicate": 1}


def test_reordering_holds_a_copy_back() -> None:
    sim = make(topologies.line(2), delay=0.001, reorder=1.0, reorder_delay=0.5)
    sim.claim(0, DOMAIN, uid(1))
    sim.run()
    assert arrivals(sim, 1) == [(0.501, "l0", 0)]


def _trace(seed: int) -> list[list[tuple[float, object, object]]]:
    sim = make(topologies.grid(9), seed, jitter=0.01, loss=0.2, duplicate=0.2, reorder=0.2)
    for index in range(6):
        sim.claim(index, DOMAIN, uid(index % 3), at=index * 0.3)
    sim.run()
    return [arrivals(sim, d) for d in range(9)]


def test_one_seed_replays_a_run_exactly_and_another_differs() -> None:
    assert _trace(5) == _trace(5)
    assert _trace(5) != _trace(6)


def test_engines_get_their_own_generators_drawn_from_the_seed() -> None:
    draws = [engine(make(topologies.line(3), seed=1), d).rng_draw for d in range(3)]
    assert len(set(draws)) == 3
    assert draws == [engine(make(topologies.line(3), seed=1), d).rng_draw for d in range(3)]


def test_a_partition_loses_copies_sent_and_in_flight_until_merged() -> None:
    sim = make(topologies.line(2), delay=0.1)
    sim.claim(0, DOMAIN, uid(1), at=0.0)  # in flight when the link goes down at 0.05
    sim.partition("l0", at=0.05)
    sim.claim(0, DOMAIN, uid(2), at=1.0)  # sent while down
    sim.merge("l0", at=2.0)
    sim.claim(0, DOMAIN, uid(3), at=3.0)  # delivered
    report = sim.run()
    assert report.drops == {DROP_LINK_DOWN: 2}
    assert arrivals(sim, 1) == [(3.1, "l0", 0)]


def test_a_multicast_on_a_segment_that_is_down_loses_every_copy() -> None:
    sim = make(topologies.segment_tree(4, segment_size=4))
    sim.partition("s0", at=0.0)
    sim.claim(1, DOMAIN, uid(1), at=1.0)
    assert sim.run().drops == {DROP_LINK_DOWN: 3}


def test_overlapping_holds_on_two_sites_are_wrongly_granted() -> None:
    sim = make(topologies.two_sites(topologies.line(2), topologies.line(2)))
    first = sim.claim(0, DOMAIN, uid(9))
    second = sim.claim(2, DOMAIN, uid(9), at=5.0)
    report = sim.run(until=10.0)
    assert (first.wrongly_granted, second.wrongly_granted) == (False, True)
    assert (second.conflicting, report.wrongly_granted, report.conflicting) == (True, 1, 1)
    assert report.pending == 0 and report.duration == 10.0


def test_a_hold_ends_with_its_lifetime() -> None:
    sim = make(topologies.two_sites(topologies.line(2), topologies.line(2)))
    sim.claim(0, DOMAIN, uid(9), lifetime=3)
    later = sim.claim(2, DOMAIN, uid(9), at=5.0)
    sim.run()
    assert later.outcome is ClaimOutcome.GRANTED and not later.conflicting
    assert not later.wrongly_granted


def test_a_local_conflict_fails_at_once_without_a_message() -> None:
    sim = make(topologies.line(2))
    sim.claim(0, DOMAIN, uid(1))
    again = sim.claim(0, DOMAIN, uid(1), at=0.5)
    report = sim.run()
    assert again.outcome is ClaimOutcome.DENIED and again.latency == 0.0
    assert again.reason == "local-conflict" and report.messages == 1


def test_a_crash_loses_claims_and_datagrams_and_a_restart_is_fresh() -> None:
    sim = make(topologies.line(2), delay=0.1)
    pending = sim.claim(1, DOMAIN, uid(1), at=0.0)
    sim.crash(1, at=0.5)
    sim.claim(0, DOMAIN, uid(2), at=1.0)  # arrives while 1 is down
    sim.restart(1, at=2.0)
    sim.claim(0, DOMAIN, uid(3), at=3.0)
    report = sim.run()
    assert pending.outcome is ClaimOutcome.LOST and pending.reason == "device crashed"
    assert report.drops == {DROP_DEVICE_DOWN: 1}
    assert arrivals(sim, 1) == [(3.1, "l0", 0)]  # a new engine: nothing remembered
    assert (report.lost, report.granted) == (1, 2)


def test_a_crash_keeping_state_resumes_the_same_engine() -> None:
    sim = make(topologies.line(2))
    held = sim.claim(1, DOMAIN, uid(1))
    sim.crash(1, at=2.0, keep_state=True)
    before = engine(sim, 1)
    sim.restart(1, at=3.0)
    denied = sim.claim(0, DOMAIN, uid(1), at=4.0)
    sim.run()
    assert engine(sim, 1) is before and held.outcome is ClaimOutcome.GRANTED
    assert denied.outcome is ClaimOutcome.DENIED


def test_a_claim_on_a_crashed_device_is_lost() -> None:
    sim = make(topologies.line(2))
    sim.crash(0, at=0.0)
    record = sim.claim(0, DOMAIN, uid(1), at=1.0)
    report = sim.run()
    assert record.outcome is ClaimOutcome.LOST and record.latency is None
    assert (report.lost, report.latency_p50) == (1, None)


def test_a_link_can_be_reconfigured_mid_run() -> None:
    sim = make(topologies.line(2))
    sim.configure_link("l0", LinkConfig(loss=1.0), at=1.0)
    sim.claim(0, DOMAIN, uid(1), at=0.0)
    sim.claim(0, DOMAIN, uid(2), at=2.0)
    assert sim.run().drops == {DROP_LOSS: 1}


def test_release_ends_a_hold() -> None:
    sim = make(topologies.two_sites(topologies.line(2), topologies.line(2)))
    first = sim.claim(0, DOMAIN, uid(4))
    sim.release(first, at=2.0)
    second = sim.claim(2, DOMAIN, uid(4), at=3.0)
    sim.run()
    assert second.outcome is ClaimOutcome.GRANTED and not second.wrongly_granted


def test_stale_timers_are_skipped() -> None:
    sim = make(topologies.line(2))
    sim.claim(0, DOMAIN, uid(1), at=0.0, lifetime=100)
    sim.claim(0, DOMAIN, uid(2), at=0.5, lifetime=1)
    report = sim.run()
    # Timers at 1.0, 1.5 (claims), 2.5 (second expires), 101.0 (first expires).
    assert report.granted == 2 and report.duration == 101.0
    assert sim.event_counts == {"ClaimSucceeded": 2, "ClaimExpired": 2}


@pytest.mark.parametrize(
    ("action", "field"),
    [
        (lambda sim: sim.at(-1.0, lambda: None), "at"),
        (lambda sim: sim.claim(5, DOMAIN, uid(1)), "device"),
        (lambda sim: sim.partition("nowhere", at=0.0), "link"),
        (lambda sim: sim.run(max_events=1), "max_events"),
    ],
)
def test_misuse_names_the_field(action: Callable[[Simulator], object], field: str) -> None:
    sim = make(topologies.line(2))
    sim.claim(0, DOMAIN, uid(1))
    with pytest.raises(SimulationError) as caught:
        action(sim)
    assert caught.value.field == field


def test_device_ids_must_match_the_device_count() -> None:
    with pytest.raises(SimulationError, match="expected 2 IDs, found 1"):
        Simulator(topologies.line(2), engine_factory=FakeEngine, device_ids=[7])


@pytest.mark.parametrize(
    ("field", "value"), [("delay", -1.0), ("jitter", float("nan")), ("loss", 1.5)]
)
def test_link_config_is_checked(field: str, value: float) -> None:
    with pytest.raises(SimulationError, match=field) as caught:
        LinkConfig(**{field: value})
    assert caught.value.field == field


# The simulator's own conflict test (what "wrongly granted" and "conflicting" count) caches
# each claim's interval; it must answer as the engine's claims_conflict does, errors too.
one_octet = st.integers(0, 9).map(lambda value: bytes([value]))
drawn_spaces = st.one_of(
    one_octet.map(UIDSpace.unique),
    st.tuples(one_octet, st.integers(0, 3)).map(
        lambda pair: UIDSpace.range(pair[0], bytes([pair[0][0] + pair[1]]))
    ),
    st.binary(min_size=1, max_size=2).map(UIDSpace.prefix),
)
drawn_domains = st.sampled_from(
    [DOMAIN, DomainID.parse("fff:0:2:0"), DomainID.parse("fff:0:3:80")]  # the last: J set
)


def _outcome(test: Callable[[], bool]) -> object:
    try:
        return test()
    except ValueError as error:
        return type(error)


@given(held=st.tuples(drawn_domains, drawn_spaces), new=st.tuples(drawn_domains, drawn_spaces))
def test_the_simulators_conflict_test_is_the_engines(
    held: tuple[DomainID, UIDSpace], new: tuple[DomainID, UIDSpace]
) -> None:
    sim = Simulator(topologies.line(2), seed=0)
    held_record, new_record = sim.claim(0, *held, at=0.0), sim.claim(1, *new, at=0.0)
    expected = _outcome(lambda: claims_conflict(*held, *new))
    assert _outcome(lambda: sim._conflict_with(new_record)(held_record)) == expected
