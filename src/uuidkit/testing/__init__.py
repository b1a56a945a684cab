"""A deterministic network simulator for UIAP: many sans-I/O engines, one seed, virtual time.

Shipped with the library so applications can test their own use of UIAP without a
network (a doctest: ``tests/test_doc_examples.py`` runs it):

>>> from uuidkit.testing import ClaimOutcome, Simulator, topologies
>>> from uuidkit.uiap import DomainID, UIDSpace
>>> simulator = Simulator(topologies.ring(10), seed=1)
>>> record = simulator.claim(0, DomainID.parse("fff:0:1:0"), UIDSpace.unique(b"\\x2a"))
>>> report = simulator.run()
>>> record.outcome is ClaimOutcome.GRANTED
True

References: draft-white-zeroconf-uiap-00 §2.4, §3, §4.2, §4.3, §5.1, §2.1.2;
architecture.md: sans-I/O engine, time by hand, seeded network.
"""

from __future__ import annotations

from uuidkit.testing import topologies
from uuidkit.testing.analysis import LossPrediction, detection_probability, predict_wrong_grants
from uuidkit.testing.engines import EngineLike, claims_conflict, engine_factory
from uuidkit.testing.network import LinkConfig, Network
from uuidkit.testing.report import ClaimOutcome, ClaimRecord, Report, build_report, percentile
from uuidkit.testing.scenario import (
    TOPOLOGIES,
    Scenario,
    add_random_claims,
    build_simulator,
    load_scenario,
    parse_scenario,
    run_scenario,
)
from uuidkit.testing.simulator import Simulator
from uuidkit.testing.topologies import Topology

__all__ = [
    "TOPOLOGIES",
    "ClaimOutcome",
    "ClaimRecord",
    "EngineLike",
    "LinkConfig",
    "LossPrediction",
    "Network",
    "Report",
    "Scenario",
    "Simulator",
    "Topology",
    "add_random_claims",
    "build_report",
    "build_simulator",
    "claims_conflict",
    "detection_probability",
    "engine_factory",
    "load_scenario",
    "parse_scenario",
    "percentile",
    "predict_wrong_grants",
    "run_scenario",
    "topologies",
]
