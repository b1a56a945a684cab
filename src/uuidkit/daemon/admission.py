"""Which claim requests the claim service admits, before anything reaches the node.

Three checks, each raising :class:`~uuidkit.uiapd.api.APIError`: a claim that asks to be
renewed must live long enough to renew; a reclaim may continue a held claim only for its
owner (or root); and the caps on claims, overall and per user, hold.

References: UIAP §4.4 (reclaim), §4.5.2 (lifetime), §10 (timers).
"""

from __future__ import annotations

import math

from uuidkit.daemon.record import ClaimTable
from uuidkit.uiap.engine_types import LIFETIME_INFINITE, EngineConfig
from uuidkit.uiapd.api import APIError, ClaimParams, ErrorCode

__all__ = [
    "check_caps",
    "check_renewable",
    "reclaim_seconds",
    "refuse_joining_another_users_claim",
]


def reclaim_seconds(config: EngineConfig) -> float:
    """How long one reclaim runs with these timers: its attempts, then the timeout.

    References: UIAP §4.4, §10 (UIAP_RECLAIM_ATTEMPTS, UIAP_CLAIM_PERIOD, UIAP_CLAIM_TIMEOUT).
    """
    return config.reclaim_attempts * config.claim_period + config.claim_timeout


def check_renewable(params: ClaimParams, config: EngineConfig) -> None:
    """A claim to renew must last at least four reclaims, or its renewals overlap.

    References: UIAP §4.4, §4.5.2.
    """
    if not params.renew or params.lifetime == LIFETIME_INFINITE:
        return
    needed = math.ceil(4 * reclaim_seconds(config))
    if params.lifetime < needed:
        raise APIError(
            ErrorCode.BAD_PARAMS,
            f"lifetime {params.lifetime} s is too short to renew with these timers "
            f"(at least {needed} s)",
            "lifetime",
        )


def refuse_joining_another_users_claim(
    held: ClaimTable, params: ClaimParams, owner_uid: int
) -> None:
    """A reclaim of a space held here continues that claim (UIAP §4.4); only its owner
    (or root) may continue it, or two applications would each believe they hold it.

    References: UIAP §4.4.
    """
    if owner_uid == 0:
        return
    for record in held.holding(params):
        if record.owner_uid != owner_uid:
            raise APIError(
                ErrorCode.PERMISSION_DENIED,
                "another user holds a claim on this space on this host",
            )


def check_caps(
    held: ClaimTable,
    params: ClaimParams,
    owner_uid: int,
    max_claims: int,
    max_claims_per_uid: int,
) -> None:
    """At most ``max_claims`` claims, and ``max_claims_per_uid`` of one user other than
    root: each is a table entry, a line of ``list`` and of every state write. A reclaim
    of a space held here continues that claim and adds nothing.

    References: UIAP §2.1.1 (the service), §4.4.
    """
    if params.reclaim and held.holding(params):
        return
    if len(held) >= max_claims:
        raise APIError(
            ErrorCode.TOO_MANY_CLAIMS,
            f"the daemon holds {len(held)} claims, its most (max_claims); release some first",
        )
    if owner_uid != 0:
        mine = held.owned_by(owner_uid)
        if mine >= max_claims_per_uid:
            raise APIError(
                ErrorCode.TOO_MANY_CLAIMS,
                f"uid {owner_uid} holds {mine} claims, the most per user "
                "(max_claims_per_uid); release some first",
            )
