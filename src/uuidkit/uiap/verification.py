"""Beyond the draft: held claims re-verified, and one winner when two holders meet.

The draft's defence ends at the grant: "UIAP has no mechanism to detect" a collision after
a merge (§2.1.2), and two reclaims that meet both fail (§4.2.2.2). :class:`HeldClaimChecks`
(a part of :class:`uuidkit.uiap.engine.Engine`) re-verifies every held claim with one
Claim-Attempt with R set, as a reclaim (§4.4), every ``verify_interval`` at most and when an
interface comes up, and settles two crossing reclaims by the larger device ID, as mDNS's
lexicographic rule does (RFC 6762 §9). ``EngineConfig.draft_only()`` turns both off.

References: UIAP §2.1.2, §4.2.2.1, §4.2.2.2, §4.4, §5.1; RFC 6762 §9.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Final

from uuidkit.uiap.claims import ClaimState, OwnClaim, Trigger
from uuidkit.uiap.engine_types import check_time
from uuidkit.uiap.events import ClaimDefended, FailureReason, LossReason

if TYPE_CHECKING:
    import random

    from uuidkit.uiap.engine_types import EngineConfig, EngineStats
    from uuidkit.uiap.events import Event
    from uuidkit.uiap.message import Message
    from uuidkit.uiap.proxy import ProxyKey
    from uuidkit.uiap.records import TimerQueue

__all__ = ["HeldClaimChecks"]

#: Announcement and re-verification runs remembered per claim (a deny for any of them,
#: within a flood record's lifetime, means another device defends the space).
PROBE_RUNS_KEPT: Final = 4


class HeldClaimChecks:
    """Re-verification of held claims and the tie-break (see the module doc).

    References: UIAP §2.1.2, §4.2.2.2, §4.4; RFC 6762 §9.
    """

    if TYPE_CHECKING:
        config: EngineConfig
        device_id: int
        stats: EngineStats
        _claims: dict[int, OwnClaim]
        _timers: TimerQueue[int | ProxyKey]
        _rng: random.Random
        _clock: float

        def _run_due(self, now: float) -> None: ...
        def add_interface(self, interface: Hashable) -> None: ...
        def _send_attempt(self, own: OwnClaim, now: float, *, announce: bool = False) -> None: ...
        def _emit(self, event: Event) -> None: ...
        def _fail(
            self, own: OwnClaim, trigger: Trigger, reason: FailureReason, winner: int | None = None
        ) -> None: ...
        def _lose(self, own: OwnClaim, reason: LossReason, winner: int | None = None) -> None: ...

    def interface_up(self, interface: Hashable, now: float) -> None:
        """``interface`` came up (or appeared): add it, and re-verify every held claim now.

        Beyond the draft: a merge that this device's own link causes is found within a
        round trip, not at the next periodic re-verification (``verify_interval``); with
        ``verify_interval=None`` (the draft) only the interface is added.

        References: UIAP §2.1.2, §2.4.3 ("active interface"), §4.4.
        """
        check_time(now)
        self._run_due(now)
        self.add_interface(interface)
        if self.config.verify_interval is None:
            return
        for own in list(self._claims.values()):
            if own.state is ClaimState.HELD:
                self._verify(own, now)

    def _schedule_verify(self, own: OwnClaim, at: float) -> None:
        interval = self.config.verify_interval
        if interval is None:
            return
        # Beyond the draft: a wait drawn from [0.75, 1] x verify_interval, so holders
        # that merge do not re-verify in step, and a merge is found within the interval
        # whatever the lifetime.
        wait = interval * (0.75 + 0.25 * self._rng.random())
        self._timers.cancel(own.verify_timer)
        own.verify_at = at + wait
        own.verify_timer = self._timers.push(own.verify_at, -own.handle)

    def _verify(self, own: OwnClaim, at: float) -> None:
        """Re-verify a held claim: one Claim-Attempt with R set (X too when proxied), as a
        reclaim (§4.4), that changes nothing unless it is denied (then the claim is lost,
        ``VERIFICATION_DENIED``) or, while it waits for an answer (a reclaim's time),
        meets another device's re-verification or reclaim (then the tie-break decides).
        A late caller's overdue check runs once, and the next counts from now."""
        at = max(at, self._clock)
        if own.state is ClaimState.HELD:
            if float("-inf") < own.probing_until <= at:
                # The previous one's answer window ended and the claim is still held: no
                # Claim-Deny and no stronger reclaim came (a denied one would have ended it).
                self.stats.verifications_confirmed += 1
            self.stats.verifications_started += 1
            config = self.config
            own.probing_until = at + config.reclaim_attempts * config.claim_period
            own.probing_until += config.claim_timeout
            own.run += 1
            own.probe_runs = (*own.probe_runs[1 - PROBE_RUNS_KEPT :], own.run)
            self._send_attempt(own, at, announce=True)
        self._schedule_verify(own, at)

    def _tie_break(self, own: OwnClaim, message: Message) -> bool:
        """Two claimants that both believe they hold the space re-assert it at once (both
        send R, §4.4, and each is still waiting for its own answer): the larger
        Originating Device ID keeps it, as mDNS's lexicographic rule picks one winner
        (RFC 6762 §9). Both compute the same answer from the message alone. The winner
        denies; the loser yields at once and does not deny, so the winner's claim is not
        denied too (the draft's §4.2.2.2 makes both lose). A holder that is not
        re-asserting denies, as the draft says (§4.2.2.1), and the reclaimer loses."""
        winner = message.device_id
        if winner < self.device_id:
            self._emit(ClaimDefended(own.handle, winner, message.sequence, reclaim=True))
            return True
        if own.in_progress:
            self._fail(own, Trigger.LOST_SIMULTANEOUS, FailureReason.SIMULTANEOUS_CLAIM, winner)
        else:
            self._lose(own, LossReason.YIELDED, winner)
        return False
