"""Loss, scale and safety: the figures of whole runs on the real engine.

The loss runs compare the measured rate of wrongly granted conflicting claims with the
prediction of :mod:`uuidkit.testing.analysis` (derivation in docs/simulator.md).
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.testing import (
    LinkConfig,
    Scenario,
    Simulator,
    build_simulator,
    predict_wrong_grants,
    topologies,
)
from uuidkit.uiap import DomainID, UIDSpace

DOMAIN = DomainID.parse("fff:0:1:0")

#: (loss, granted, denied, conflicting, wrongly granted) for seed 11.
LOSS_RUNS = [(0.1, 674, 326, 339, 18), (0.3, 824, 176, 339, 168)]


@pytest.mark.slow
@pytest.mark.parametrize(("loss", "granted", "denied", "conflicting", "wrong"), LOSS_RUNS)
def test_loss_on_a_random_50_device_graph(
    loss: float, granted: int, denied: int, conflicting: int, wrong: int
) -> None:
    scenario = Scenario(
        topology="random", devices=50, degree=3, claims=1000, seed=11, link=LinkConfig(loss=loss)
    )
    sim = build_simulator(scenario)
    report = sim.run()
    # No crash, no stuck claim: every claim returned a result.
    assert (report.pending, report.lost) == (0, 0)
    assert (report.granted, report.denied) == (granted, denied)
    assert (report.conflicting, report.wrongly_granted) == (conflicting, wrong)
    predicted = predict_wrong_grants(sim.topology, loss, random.Random(1), pairs=100, trials=50)
    measured = wrong / conflicting
    assert predicted.lower <= measured <= predicted.upper
    # Within three binomial standard deviations of the sampled model.
    spread = 3 * math.sqrt(predicted.estimate * (1 - predicted.estimate) / conflicting)
    assert abs(measured - predicted.estimate) <= spread


def test_prediction_bounds_on_a_line() -> None:
    # One path: the bounds are (1-(1-p)^h)^3 and (1-(1-p)^(2h))^3 and the flood and the
    # deny share the same h hops, so the estimate sits near the upper bound.
    line = topologies.line(2)
    predicted = predict_wrong_grants(line, 0.5, random.Random(3), pairs=20, trials=400)
    assert (predicted.lower, predicted.upper) == (0.125, 0.421875)
    assert predicted.estimate == pytest.approx(0.421875, abs=0.05)
    assert predict_wrong_grants(line, 0.0, random.Random(3), pairs=5).upper == 0.0


def test_a_smaller_scale_run() -> None:
    # The 1,000-device run is bench/bench_simulator.py; this is its shape at 200 devices.
    scenario = Scenario(topology="segment_tree", devices=200, claims=30, spaces=10, seed=3)
    sim = build_simulator(scenario)
    report = sim.run()
    assert (report.claims, report.granted, report.denied, report.pending) == (30, 9, 21, 0)
    # Claims 3 s apart with no loss: the first claim of each space wins, the rest are denied.
    assert report.granted == len({record.space for record in sim.records})
    assert (report.conflicting, report.wrongly_granted, report.messages) == (21, 0, 3244)
    assert report.messages_per_claim == pytest.approx(report.messages / 30)


topology_params = st.tuples(st.integers(2, 8), st.floats(1.0, 3.0), st.integers(0, 2**16))
claim_schedule = st.lists(
    st.tuples(
        st.integers(0, 7),  # device (modulo the device count)
        st.integers(0, 3),  # first UID
        st.integers(0, 2),  # range width: 0 is a unique value
        st.integers(0, 40),  # start, in quarter seconds
        st.sampled_from([0, 4, 60]),  # lifetime, seconds
        st.booleans(),  # reclaim
        st.booleans(),  # proxy
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=40, deadline=None)
@given(
    shape=topology_params,
    schedule=claim_schedule,
    jitter=st.sampled_from([0.0, 0.004]),
    duplicate=st.sampled_from([0.0, 0.3]),
)
def test_without_loss_no_two_devices_ever_hold_overlapping_spaces(
    shape: tuple[int, float, int],
    schedule: list[tuple[int, int, int, int, int, bool, bool]],
    jitter: float,
    duplicate: float,
) -> None:
    devices, degree, seed = shape
    topology = topologies.random_graph(devices, degree, random.Random(seed))
    sim = Simulator(topology, seed=seed, link=LinkConfig(jitter=jitter, duplicate=duplicate))
    _schedule_claims(sim, devices, schedule)
    report = sim.run(max_events=100_000)
    assert report.wrongly_granted == 0, f"seed {seed}"
    assert report.pending == 0


@settings(max_examples=30, deadline=None)
@given(
    shape=topology_params,
    schedule=claim_schedule,
    loss=st.sampled_from([0.1, 0.3, 0.6]),
    crashes=st.lists(
        st.tuples(st.integers(0, 7), st.integers(0, 40), st.integers(1, 40), st.booleans()),
        max_size=3,
    ),
)
def test_with_loss_and_crashes_every_claim_still_returns_a_result(
    shape: tuple[int, float, int],
    schedule: list[tuple[int, int, int, int, int, bool, bool]],
    loss: float,
    crashes: list[tuple[int, int, int, bool]],
) -> None:
    devices, degree, seed = shape
    topology = topologies.random_graph(devices, degree, random.Random(seed))
    sim = Simulator(topology, seed=seed, link=LinkConfig(loss=loss, jitter=0.004))
    _schedule_claims(sim, devices, schedule)
    for device, quarter_seconds, down_for, keep_state in crashes:
        sim.crash(device % devices, at=quarter_seconds / 4, keep_state=keep_state)
        sim.restart(device % devices, at=(quarter_seconds + down_for) / 4)
    report = sim.run(max_events=100_000)
    assert report.pending == 0, f"seed {seed}"
    assert report.granted + report.denied + report.lost == report.claims


def _schedule_claims(
    sim: Simulator, devices: int, schedule: list[tuple[int, int, int, int, int, bool, bool]]
) -> None:
    """Schedule each drawn claim: a one-octet unique UID, or a range when ``width`` > 0."""
    for device, first, width, quarter_seconds, lifetime, reclaim, proxy in schedule:
        lower, upper = bytes([first]), bytes([first + width])
        space = UIDSpace.range(lower, upper) if width else UIDSpace.unique(lower)
        sim.claim(
            device % devices,
            DOMAIN,
            space,
            at=quarter_seconds / 4,
            lifetime=lifetime,
            reclaim=reclaim,
            proxy=proxy,
        )
