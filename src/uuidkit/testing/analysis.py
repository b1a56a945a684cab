"""The loss analysis: how often a claim that must be denied is granted anyway.

A conflicting claim is wrongly granted when none of its Claim-Attempt floods gets a
Claim-Deny back in time. For one flood, let the claimant and the defending device be ``h``
hops apart on the shortest path and every copy on every link be lost independently with
probability ``p``. The flood reaches the defender along the first path that survives; the
Claim-Deny retraces that path hop by hop as a unicast (UIAP §4.3.2), with no redundancy.
Each of the ``a`` attempts is a new flood with a new sequence number (UIAP §4.5.1), so
attempts fail independently, and::

    q     = P(one attempt is denied back)   with (1-p)^(2h) <= q <= (1-p)^h
    P(wrongly granted) = (1 - q)^a

The lower bound on ``q`` is the one shortest path surviving both ways; the upper bound is
a flood that always arrives (a dense mesh) so that only the deny's ``h`` hops can lose it.
:func:`detection_probability` estimates ``q`` itself by sampling which copies survive and
following the first arrival, as the simulator does with equal link delays.

References: UIAP §2.4.1 (3 attempts), §3, §4.3.2, §4.5.1.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from uuidkit.errors import SimulationError

if TYPE_CHECKING:
    import random

    from uuidkit.testing.topologies import Topology

__all__ = ["LossPrediction", "detection_probability", "predict_wrong_grants"]


@dataclass(frozen=True, slots=True)
class LossPrediction:
    """The predicted rate of wrongly granted conflicting claims, averaged over device pairs.

    ``lower`` and ``upper`` are the closed-form bounds; ``estimate`` the sampled value.

    References: UIAP §2.4.1, §4.3.2.
    """

    loss: float
    attempts: int
    lower: float
    estimate: float
    upper: float


def _neighbours(topology: Topology) -> list[list[int]]:
    result: list[list[int]] = [[] for _ in range(topology.devices)]
    for link, members in topology.links.items():
        if link in topology.down:
            continue
        for device in members:
            result[device].extend(other for other in members if other != device)
    return result


def _first_arrival_hops(
    neighbours: list[list[int]], claimant: int, defender: int, loss: float, rng: random.Random
) -> int | None:
    """Hops of the first copy of one flood to reach ``defender`` (``None``: none did)."""
    hops = {claimant: 0}
    queue = deque([claimant])
    while queue:
        device = queue.popleft()
        if device == defender:
            return hops[device]
        for neighbour in neighbours[device]:
            if neighbour not in hops and rng.random() >= loss:
                hops[neighbour] = hops[device] + 1
                queue.append(neighbour)
    return None


def detection_probability(
    topology: Topology,
    claimant: int,
    defender: int,
    loss: float,
    rng: random.Random,
    trials: int = 200,
) -> float:
    """Estimated probability that one Claim-Attempt flood from ``claimant`` is denied back
    by ``defender`` under independent per-copy loss ``loss``.

    References: UIAP §4.2.2.1 (flooding), §4.3.2 (deny retraces the first arrival).
    """
    if claimant == defender:
        raise SimulationError("claimant and defender must be different devices", "defender")
    neighbours = _neighbours(topology)
    survived = 0.0
    for _ in range(trials):
        hops = _first_arrival_hops(neighbours, claimant, defender, loss, rng)
        if hops is not None:
            survived += (1.0 - loss) ** hops
    return survived / trials


def predict_wrong_grants(
    topology: Topology,
    loss: float,
    rng: random.Random,
    *,
    attempts: int = 3,
    pairs: int = 200,
    trials: int = 100,
) -> LossPrediction:
    """The rate of wrongly granted conflicting claims between uniformly random device pairs.

    References: UIAP §2.4.1 (3 attempts), §4.3.2, §4.5.1.
    """
    if topology.devices < 2:
        raise SimulationError("loss analysis needs at least 2 devices", "devices")
    lower = upper = estimate = 0.0
    for _ in range(pairs):
        claimant, defender = rng.sample(range(topology.devices), 2)
        hops = topology.hops_from(claimant)[defender]
        if hops is None:
            raise SimulationError(f"device {defender} is unreachable from {claimant}", "topology")
        lower += (1.0 - (1.0 - loss) ** hops) ** attempts
        upper += (1.0 - (1.0 - loss) ** (2 * hops)) ** attempts
        q = detection_probability(topology, claimant, defender, loss, rng, trials)
        estimate += (1.0 - q) ** attempts
    return LossPrediction(loss, attempts, lower / pairs, estimate / pairs, upper / pairs)
