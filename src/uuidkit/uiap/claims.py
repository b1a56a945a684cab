"""The life of one of this device's own claims, as a table of data.

Rules (UIAP §2.4.1, §2.4.6, §4.2.2.2, §4.3.2, §4.4, §4.5.2):

* A claim whose space conflicts with a claim already on this device fails before it
  sends anything (§2.4.1).
* A claim starts ``ATTEMPTING``: it sends a Claim-Attempt flood, waits UIAP_CLAIM_PERIOD,
  and repeats until it has sent ``claim_attempts`` floods (``reclaim_attempts`` for a
  reclaim); then it is ``WAITING`` for UIAP_CLAIM_TIMEOUT. ``ATTEMPTING`` and ``WAITING``
  are "in progress": a conflicting Claim-Attempt is resolved by the R-flag rules.
* If the timeout passes with no Claim-Deny the claim is ``HELD`` (success): the device
  denies every conflicting Claim-Attempt until the lifetime ends (``EXPIRED``).
* A Claim-Deny for one of the claim's attempts, or losing a simultaneous claim, while in
  progress makes it ``FAILED``. Once a result is returned, Claim-Denies are discarded.
* A reclaim of a ``HELD`` claim takes it back to ``ATTEMPTING`` (with R set); it stays
  defended meanwhile, by the simultaneous-claim rules, which favour a reclaim.
* A Claim-Attempt that conflicts with a defended claim is resolved by
  :data:`CONFLICT_RULES`: a held claim denies it; a claim in progress applies the R-flag
  rules of §4.2.2.2 (same kind: deny and fail; a reclaim beats a new claim, both ways).
* A claim that has succeeded and then meets a collision (a Claim-Deny for its reclaim or
  for its proxy-enabling announcement, or a lost simultaneous reclaim) is ``LOST``:
  another device claims the space too (§2.1.2, §4.4, §5.1).
* ``release`` ends any claim that has not ended (``RELEASED``); no event is reported.
* ``FAILED``, ``LOST``, ``EXPIRED`` and ``RELEASED`` are final.

A pair (state, trigger) missing from :data:`TRANSITIONS` cannot happen: the engine only
fires triggers that the current state lists, and raises ``AssertionError`` otherwise (a bug).

References: UIAP §2.4.1, §2.4.6, §4.2.2.2, §4.3.2, §4.4, §4.5.2.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.events import FailureReason
from uuidkit.uiap.space import UIDSpace

__all__ = [
    "CONFLICT_RULES",
    "DEFENDED",
    "IN_PROGRESS",
    "TRANSITIONS",
    "ClaimState",
    "Conflict",
    "OwnClaim",
    "Trigger",
    "next_state",
    "transitions_as_dot",
]


class ClaimState(enum.Enum):
    """Where one of this device's claims stands.

    References: UIAP §2.4.1, §2.4.6, §4.2.2, §4.4.
    """

    ATTEMPTING = "attempting"
    WAITING = "waiting"
    HELD = "held"
    FAILED = "failed"
    LOST = "lost"
    EXPIRED = "expired"
    RELEASED = "released"


class Trigger(enum.Enum):
    """What moves a claim from one state to the next.

    References: UIAP §2.4.1, §4.2.2, §4.3.2, §4.4.
    """

    #: UIAP_CLAIM_PERIOD elapsed and another Claim-Attempt flood is due.
    SEND_NEXT_ATTEMPT = "send-next-attempt"
    #: UIAP_CLAIM_PERIOD elapsed after the last flood: start UIAP_CLAIM_TIMEOUT.
    ATTEMPTS_DONE = "attempts-done"
    #: UIAP_CLAIM_TIMEOUT elapsed with no Claim-Deny (§2.4.1 "Succeed").
    TIMEOUT = "timeout"
    #: A Claim-Deny matched one of this claim's Claim-Attempts (§4.3.2).
    DENY = "deny"
    #: A conflicting Claim-Attempt won the R-flag resolution (§4.2.2.2).
    LOST_SIMULTANEOUS = "lost-simultaneous"
    #: The application re-verifies a held claim with a reclaim (§4.4).
    RECLAIM = "reclaim"
    #: The lifetime of a held claim ended (§4.5.2).
    LIFETIME_END = "lifetime-end"
    #: The application released the claim.
    RELEASE = "release"
    #: The space conflicts with a claim already on this device (§2.4.1): fail at once.
    LOCAL_CONFLICT = "local-conflict"
    #: A claim that had succeeded collided with another device's (§2.1.2, §4.4, §5.1).
    COLLISION = "collision"


_S = ClaimState
_T = Trigger

#: (state, trigger) -> next state. The whole state machine; docs/uiap.md draws it.
TRANSITIONS: Final[dict[tuple[ClaimState, Trigger], ClaimState]] = {
    (_S.ATTEMPTING, _T.LOCAL_CONFLICT): _S.FAILED,
    (_S.ATTEMPTING, _T.SEND_NEXT_ATTEMPT): _S.ATTEMPTING,
    (_S.ATTEMPTING, _T.ATTEMPTS_DONE): _S.WAITING,
    (_S.ATTEMPTING, _T.DENY): _S.FAILED,
    (_S.ATTEMPTING, _T.LOST_SIMULTANEOUS): _S.FAILED,
    (_S.ATTEMPTING, _T.RELEASE): _S.RELEASED,
    (_S.ATTEMPTING, _T.COLLISION): _S.LOST,
    (_S.WAITING, _T.TIMEOUT): _S.HELD,
    (_S.WAITING, _T.DENY): _S.FAILED,
    (_S.WAITING, _T.LOST_SIMULTANEOUS): _S.FAILED,
    (_S.WAITING, _T.RELEASE): _S.RELEASED,
    (_S.WAITING, _T.COLLISION): _S.LOST,
    (_S.HELD, _T.RECLAIM): _S.ATTEMPTING,
    (_S.HELD, _T.LIFETIME_END): _S.EXPIRED,
    (_S.HELD, _T.RELEASE): _S.RELEASED,
    (_S.HELD, _T.COLLISION): _S.LOST,
}

#: States in which the claim is "in progress" (no result returned yet): §4.2.2.2 applies.
IN_PROGRESS: Final[frozenset[ClaimState]] = frozenset({_S.ATTEMPTING, _S.WAITING})

#: States in which the claim is defended against other devices' Claim-Attempts.
DEFENDED: Final[frozenset[ClaimState]] = frozenset({_S.ATTEMPTING, _S.WAITING, _S.HELD})


@dataclass(frozen=True, slots=True)
class Conflict:
    """What a conflicting Claim-Attempt does to one of our claims.

    ``deny``: send a Claim-Deny for the incoming attempt. ``failure``: our claim fails
    with this reason (``None``: it continues, and is reported as defended when ``deny``).

    References: UIAP §2.4.6, §4.2.2.2 (simultaneous Claim-Attempts).
    """

    deny: bool
    failure: FailureReason | None


#: (our claim is in progress, our R flag, the incoming R flag) -> what happens. A held
#: claim is simply defended (§4.2.2.1: "the device MUST send back a Claim-Deny"); a claim
#: in progress follows §4.2.2.2 ("If both ... are new claims (R not set) or re-claims (R
#: set), then the receiving UIAP device sends a Claim-Deny message and reports a failure";
#: "If the outgoing Claim-Attempt has the R flag set but the incoming Claim-Attempt does
#: not, then the incoming claim is denied and the outgoing claim continues. If the
#: incoming Claim-Attempt has the R flag set but the outgoing claim does not, then the
#: outgoing claim fails immediately and the incoming claim is forwarded as normal.")
CONFLICT_RULES: Final[dict[tuple[bool, bool, bool], Conflict]] = {
    (False, False, False): Conflict(deny=True, failure=None),
    (False, False, True): Conflict(deny=True, failure=None),
    (False, True, False): Conflict(deny=True, failure=None),
    (False, True, True): Conflict(deny=True, failure=None),
    (True, False, False): Conflict(deny=True, failure=FailureReason.SIMULTANEOUS_CLAIM),
    (True, True, True): Conflict(deny=True, failure=FailureReason.SIMULTANEOUS_CLAIM),
    (True, True, False): Conflict(deny=True, failure=None),
    (True, False, True): Conflict(deny=False, failure=FailureReason.PREEMPTED_BY_RECLAIM),
}


def next_state(state: ClaimState, trigger: Trigger) -> ClaimState:
    """The state after ``trigger`` fires in ``state`` (a missing pair is an engine bug).

    References: UIAP §2.4.1, §4.2.2.2, §4.3.2, §4.4.
    """
    following = TRANSITIONS.get((state, trigger))
    assert following is not None, f"no transition for {trigger.name} in {state.name}"
    return following


def transitions_as_dot() -> str:
    """:data:`TRANSITIONS` as a Graphviz digraph (``dot -Tsvg``), one edge per row.

    The diagram is drawn from the same table the engine runs on, so the two cannot differ.

    References: UIAP §2.4.1, §4.2.2, §4.3.2, §4.4.
    """
    edges = [
        f'    {state.value} -> {following.value} [label="{trigger.value}"];'
        for (state, trigger), following in TRANSITIONS.items()
    ]
    return "\n".join(["digraph claim {", *edges, "}"])


@dataclass(slots=True)
class OwnClaim:
    """One claim this device makes or holds, with its progress.

    ``lifetime`` is in seconds (``LIFETIME_INFINITE`` for ever); ``expires`` and
    ``deadline`` are engine times in seconds. ``run`` counts attempt runs (the first
    claim, then each reclaim), so a late Claim-Deny for an earlier run cannot fail a
    later one. ``granted`` is true once the claim has succeeded (it stays true while a
    reclaim of it runs), which makes a later failure a loss (``ClaimLost``).

    References: UIAP §2.4.1, §4.1 (Claim Reference Number), §4.4, §4.5.2.
    """

    handle: int
    domain: DomainID
    space: UIDSpace
    lifetime: int
    proxy: bool
    reclaim: bool
    state: ClaimState = ClaimState.ATTEMPTING
    attempts_sent: int = 0
    run: int = 0
    deadline: float | None = None
    #: Token of the live timer entry for ``deadline`` (``TimerQueue.push``); 0 for none.
    timer: int = 0
    expires: float | None = None
    granted: bool = False
    #: The run of the X+R announcement sent at success to enable proxy defense (§5.1);
    #: 0 when none was sent.
    announced_run: int = 0
    #: The latest runs that were announcements or re-verifications of the held claim (a
    #: Claim-Deny for one means another device defends the space), newest last.
    probe_runs: tuple[int, ...] = ()
    #: Token of the live re-verification timer entry; 0 for none.
    verify_timer: int = 0
    #: Engine time of that entry: when the next re-verification is due (``inf``: none).
    verify_at: float = float("inf")
    #: Engine time until which the latest re-verification waits for an answer: a
    #: conflicting reclaim arriving before then is settled by the tie-break.
    probing_until: float = float("-inf")

    @property
    def in_progress(self) -> bool:
        """True until a result has been returned for the current run."""
        return self.state in IN_PROGRESS

    @property
    def defended(self) -> bool:
        """True while this device denies conflicting Claim-Attempts for this claim."""
        return self.state in DEFENDED

    def fire(self, trigger: Trigger) -> ClaimState:
        """Apply ``trigger`` from :data:`TRANSITIONS` and return the new state."""
        self.state = next_state(self.state, trigger)
        return self.state
