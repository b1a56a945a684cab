"""The UIAP protocol engine of one device, sans-I/O: bytes and times in, bytes and events out.

The caller owns the sockets and the clock::

    engine = Engine(device_id, random.Random(seed))
    engine.add_interface("eth0")
    handle = engine.claim(domain, space, lifetime=3600, now=loop.time())
    # then, whenever something happens:
    engine.receive_datagram(data, interface, source, now)   # a datagram arrived
    engine.handle_timer(now)                                # get_timer() passed
    for transmit in engine.datagrams_to_send(): ...         # send these
    while (event := engine.next_event()) is not None: ...   # act on these
    deadline = engine.get_timer()                           # re-arm one timer

Time is a float of seconds passed in (0.0 is a valid time); randomness is the
``random.Random`` passed in. Every call first runs the deadlines that are due at ``now``.
What a deadline schedules next counts from the later of that deadline and ``now``: a
caller that is late with ``handle_timer`` (a stalled process) sees each overdue step once,
in order, and each claim still waits its periods before a result, so the Claim-Denies
queued during the stall are read before the claim can succeed.

Boundary contract: ``receive_datagram`` never raises for network input. A datagram the
decoder rejects is counted and dropped with a ``MessageDropped`` event; any other
exception escaping is a bug. Misuse of the API (an argument of the wrong type, an
unknown claim handle, a lifetime out of range, a time that is not a finite number)
raises :class:`EngineError` and changes nothing; a space its domain does not allow raises
:class:`~uuidkit.errors.SpaceError`. Both are ``UIAPError``, hence ``ValueError``.

Comparison (§3.2.4, §4.2.2.1) uses only what the wire carries: the DID's J flag, and all
data significant (§3.2.1.1 "UIAP treats all data in a UID as significant"), so two
devices comparing one pair of claims agree whatever domains each knows. A domain's own
rules (``domains``) check and canonicalise this device's claims before they are sent
(:meth:`NumberSpace.canonical`); relayed Claim-Attempts are never checked against them.

Where the draft is vague, the choice made is marked "Choice (§x)" next to the code and
listed in docs/uiap.md.

References: UIAP §2.4, §3, §4.2, §4.3, §4.4, §4.5, §5.1, §9, §10.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Final

from uuidkit.errors import EngineError
from uuidkit.uiap.claims import CONFLICT_RULES, ClaimState, OwnClaim, Trigger
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.engine_types import (
    DEFAULT_ENGINE_CONFIG,
    LIFETIME_INFINITE,
    MULTICAST,
    EngineConfig,
    EngineStats,
    Multicast,
    Transmit,
    check_claim_arguments,
    check_time,
)
from uuidkit.uiap.events import (
    ClaimDefended,
    ClaimExpired,
    ClaimFailed,
    ClaimLost,
    ClaimSucceeded,
    DropReason,
    FailureReason,
    LossReason,
    ProxyDefended,
    ProxyDefenseEnded,
    ProxyDefenseStarted,
)
from uuidkit.uiap.flooding import Forwarder
from uuidkit.uiap.index import DomainClaims
from uuidkit.uiap.message import Message, MessageType
from uuidkit.uiap.proxy import ProxyKey, ProxyRecord, ProxyTable
from uuidkit.uiap.records import TimerQueue
from uuidkit.uiap.space import Interval, NumberSpace, UIDSpace
from uuidkit.uiap.verification import HeldClaimChecks

if TYPE_CHECKING:
    import random

__all__ = [
    "LIFETIME_INFINITE",
    "MULTICAST",
    "Engine",
    "EngineConfig",
    "EngineStats",
    "Multicast",
    "Transmit",
]

#: Claim Reference Numbers are 32-bit (UIAP §4.1).
_REFERENCE_MODULUS: Final = 1 << 32


class Engine(HeldClaimChecks, Forwarder):
    """The UIAP behaviour of one device: claims, flooding, denying, proxy defense.

    Receiving, forwarding and relaying (``receive_datagram``, ``add_interface``,
    ``remove_interface``, ``datagrams_to_send``, ``next_event``, ``stats``) come from
    :class:`~uuidkit.uiap.flooding.Forwarder`; this class adds the device's own claims,
    its deadlines and proxy defense.

    ``device_id`` is the 64-bit Originating Device ID (0 is reserved, UIAP §4.1);
    ``rng`` supplies the random start of the sequence numbers (§4.5.1). ``domains`` maps
    the Domain IDs whose specification this device knows to their number spaces: this
    device's own claims in them are checked against those rules and sent in canonical
    form (:meth:`NumberSpace.canonical`). Every comparison, of own claims and of relayed
    ones, uses :meth:`NumberSpace.generic` (the rules the DID alone gives, §3.2.1.1).

    References: UIAP §2.4, §3, §4.2, §4.3, §4.4, §4.5, §5.1, §9.
    """

    def __init__(
        self,
        device_id: int,
        rng: random.Random,
        config: EngineConfig = DEFAULT_ENGINE_CONFIG,
        *,
        domains: Mapping[DomainID, NumberSpace] | None = None,
    ) -> None:
        super().__init__(device_id, rng, config)
        #: The caller's number spaces: checked and canonicalised own claims only.
        self._known_rules: dict[DomainID, NumberSpace] = dict(domains or {})
        self._claims: dict[int, OwnClaim] = {}
        #: Own claims by domain, sorted by interval; and each claim's interval.
        self._own_index: dict[DomainID, DomainClaims] = {}
        self._own_intervals: dict[int, Interval] = {}
        self._proxies = ProxyTable(
            config.max_proxy_records,
            config.max_proxy_lifetime,
            config.max_proxy_records_per_source,
        )
        self._timers: TimerQueue[int | ProxyKey] = TimerQueue()
        self._next_handle = 1
        #: The ``now`` of the call being handled (every call runs ``_run_due`` first).
        self._clock = float("-inf")

    # ------------------------------------------------------------------ the caller's API

    def claim(
        self,
        domain: DomainID,
        space: UIDSpace,
        lifetime: int,
        now: float,
        *,
        reclaim: bool = False,
        proxy: bool = False,
    ) -> int:
        """Start claiming ``space`` in ``domain`` for ``lifetime`` seconds; returns a handle.

        A new claim sends ``claim_attempts`` floods; ``reclaim=True`` sends
        ``reclaim_attempts`` floods with R set. A reclaim of a claim this device holds
        (same domain, equal space) continues that claim and returns its handle. With
        ``proxy=True`` the claim asks for proxy defense: after success it at once sends a
        reclaim with X and R set (a reclaim is sent with X from the start). The result
        comes as a ``ClaimSucceeded`` or ``ClaimFailed`` event; a conflict with a claim on
        this device fails at once. ``lifetime`` is an int of 0 .. 2**32-1 seconds
        (:data:`LIFETIME_INFINITE` is for ever).

        Raises :class:`EngineError` for an argument of the wrong type or range, and
        :class:`~uuidkit.errors.SpaceError` for a space the domain does not allow (its
        known rules, then the wire's); either way no claim is registered. A space in a
        known domain whose zeros are not significant is claimed, sent and reported in its
        canonical form (:meth:`NumberSpace.canonical`).

        References: UIAP §2.4.1, §3.2.1.1, §4.2, §4.4, §4.5.2, §5.1.
        """
        check_claim_arguments(domain, space, lifetime, now, reclaim=reclaim, proxy=proxy)
        space = self._local_form(domain, space)
        self._run_due(now)
        if reclaim:
            # Choice (§4.4 "another Claim-Attempt message for a claim that has already
            # succeeded"): a reclaim of a space held here continues that claim; one of a
            # space not held here (after a restart or a merge) is a claim with R set.
            held = self._held_claim(domain, space)
            if held is not None:
                held.proxy, held.lifetime = proxy, lifetime
                self._start_run(held, Trigger.RECLAIM, now)
                return held.handle
        handle = self._next_handle
        self._next_handle += 1
        own = OwnClaim(handle, domain, space, lifetime, proxy=proxy, reclaim=reclaim)
        conflict = self._local_conflict(domain, space)
        if conflict is not None:
            own.fire(Trigger.LOCAL_CONFLICT)
            self._events.append(ClaimFailed(handle, conflict[0], domain, space, conflict[1]))
            return handle
        self._claims[handle] = own
        self._index_claim(own)
        self._start_run(own, None, now)
        return handle

    def release(self, claim: int, now: float) -> None:
        """Stop claiming or defending ``claim``; releasing an ended claim does nothing.

        References: UIAP §2.1.1 (the application decides how long a claim is defended).
        """
        if isinstance(claim, bool) or not isinstance(claim, int):
            raise EngineError(f"claim handle: expected an int, found {type(claim).__name__}")
        if not 0 < claim < self._next_handle:
            raise EngineError(f"unknown claim handle {claim}")
        check_time(now)
        self._run_due(now)
        own = self._forget_claim(claim)
        if own is not None:
            own.fire(Trigger.RELEASE)
            own.deadline = None

    def handle_timer(self, now: float) -> None:
        """Run every deadline due at or before ``now`` (call it when ``get_timer`` passes);
        what they schedule next counts from ``now`` (see the module doc).

        References: UIAP §2.4.1, §4.5.2, §5.1.
        """
        self._run_due(now)

    def get_timer(self) -> float | None:
        """The earliest deadline (engine seconds), or ``None`` when nothing is scheduled."""
        top = self._timers.peek()
        copies = self._copies  # Forwarder.get_timer(), written out: it runs after every call
        copy = copies[0][0] if copies else None
        if top is None:
            return copy
        return top[0] if copy is None or top[0] < copy else copy

    # ------------------------------------------------------------------ read-only views

    def table_sizes(self) -> dict[str, int]:
        """Entries in each of this device's tables now (for metrics; changes nothing).

        ``own_claims`` (made or held here), ``proxy_records`` (§5.1), ``flood_records``
        (other devices' Claim-Attempts, capped, §4.2.2.3), ``own_flood_records``,
        ``overflow_records`` (attempts over a rate limit, recorded apart),
        ``rate_limit_buckets`` (per source and per interface), ``timers`` (live deadlines).

        References: UIAP §4.2.2.1, §4.2.2.3, §5.1.
        """
        return {
            "own_claims": len(self._claims),
            "proxy_records": len(self._proxies),
            "flood_records": len(self._floods),
            "own_flood_records": len(self._own_floods),
            "overflow_records": len(self._overflow),
            "rate_limit_buckets": len(self._limiter),
            "timers": self._timers.live,
        }

    def verification_schedule(self) -> dict[int, float]:
        """When each held claim is next re-verified (engine seconds), by handle; empty when
        ``verify_interval`` is ``None`` (the draft).

        References: UIAP §2.1.2, §4.4.
        """
        return {
            handle: own.verify_at
            for handle, own in self._claims.items()
            if own.verify_timer and own.state is ClaimState.HELD
        }

    # ------------------------------------------------------------------ own claims

    def _local_form(self, domain: DomainID, space: UIDSpace) -> UIDSpace:
        """``space`` checked against the domain's rules and in the form sent on the wire.

        Raises SpaceError for a space the domain's known rules (§3.2.2, §3.2.3), or the
        rules the wire carries, do not allow.
        """
        known = self._known_rules.get(domain)
        if known is not None:
            known.check_space(space)
            space = known.canonical(space)
        NumberSpace.generic(domain).check_space(space)
        return space

    def _index_claim(self, own: OwnClaim) -> None:
        claims = self._own_index.get(own.domain)
        if claims is None:
            claims = self._own_index[own.domain] = DomainClaims(NumberSpace.generic(own.domain))
        interval = claims.rules.interval(own.space)
        claims.add(own.handle, interval)
        self._own_intervals[own.handle] = interval

    def _claims_meeting(self, domain: DomainID, space: UIDSpace) -> list[OwnClaim]:
        claims = self._own_index.get(domain)
        if claims is None:
            return []
        return [self._claims[h] for h in claims.meeting(claims.rules.interval(space))]

    def _held_claim(self, domain: DomainID, space: UIDSpace) -> OwnClaim | None:
        for own in self._claims_meeting(domain, space):
            if own.state is ClaimState.HELD and own.space == space:
                return own
        return None

    def _local_conflict(
        self, domain: DomainID, space: UIDSpace
    ) -> tuple[FailureReason, int | None] | None:
        """Why a new claim of ``space`` fails at once, and the proxied claimant if any."""
        # §2.4.1: "a claim will immediately fail if a conflicting claim already exits on
        # the local device". Choice: claims in progress and proxy-defended claims count
        # too, as this device would deny (or resolve) a Claim-Attempt for either. This
        # keeps the intervals of one domain's own claims disjoint (see index.py). A
        # proxied one is reported as such, naming its claimant (§5.1).
        if self._claims_meeting(domain, space):
            return FailureReason.LOCAL_CONFLICT, None
        interval = NumberSpace.generic(domain).interval(space)
        for record in self._proxies.meeting(domain, interval):
            return FailureReason.PROXY_DEFENDED, record.claimant
        return None

    def _start_run(self, own: OwnClaim, trigger: Trigger | None, now: float) -> None:
        """Begin a run of Claim-Attempt floods (a new claim, or a reclaim of a held one)."""
        if trigger is not None:
            own.fire(trigger)
            own.reclaim = True
        own.run += 1
        own.attempts_sent = 0
        self._send_attempt(own, now)
        self._schedule_claim(own, now + self.config.claim_period)

    def _send_attempt(self, own: OwnClaim, now: float, *, announce: bool = False) -> None:
        """Originate one Claim-Attempt flood for ``own`` out every interface."""
        reclaim = own.reclaim or announce
        sequence = self._sequences.issue()
        message = Message(
            MessageType.CLAIM_ATTEMPT,
            self.device_id,
            sequence,
            own.domain,
            own.space,
            # §5.1: "Only Claim-Attempt messages with both the X (proxy enabled) and R
            # (reclaim) flags set may be proxied", so X is only ever sent with R.
            proxy=own.proxy and reclaim,
            reclaim=reclaim,
            hop_limit=self.config.hop_limit,
            # Choice (§4.5.2: "MUST NOT be longer than the actual time than the originating
            # device intends to defend the claim"): the lifetime asked for, which this
            # device defends from success, i.e. at least that long after any receipt.
            lifetime=own.lifetime,
            # Choice (§4.1: "any value the originating UIAP service finds useful").
            claim_reference=own.handle % _REFERENCE_MODULUS,
        )
        if not announce:
            own.attempts_sent += 1
        self._originate(message, now, own.handle, own.run)

    def _schedule_claim(self, own: OwnClaim, deadline: float | None) -> None:
        own.deadline = deadline
        self._timers.cancel(own.timer)
        own.timer = 0 if deadline is None else self._timers.push(deadline, own.handle)

    def _on_claim_deadline(self, own: OwnClaim, at: float) -> None:
        """A claim's deadline ``at`` passed; the next one counts from when it ran.

        A device that stalled (the caller ran late) must still wait each period after each
        attempt it sends, or a stall as long as a claim would send the remaining attempts
        and succeed in one call, before reading the Claim-Denies queued meanwhile. So every
        following deadline counts from ``max(at, now)``: a caller on time sees the draft's
        schedule exactly, a late one sees the claim take as long as the timers say from
        the moment the engine ran.
        """
        at = max(at, self._clock)
        config = self.config
        # §2.4.1: "Repeat 3 times: { Send Claim-Attempt message. Wait UIAP_CLAIM_PERIOD. }
        # Wait UIAP_CLAIM_TIMEOUT. Succeed." Choice: read literally, the period after the
        # last attempt is waited too (success 2.5 s after the first attempt).
        if own.state is ClaimState.ATTEMPTING:
            wanted = config.reclaim_attempts if own.reclaim else config.claim_attempts
            if own.attempts_sent < wanted:
                own.fire(Trigger.SEND_NEXT_ATTEMPT)
                self._send_attempt(own, at)
                self._schedule_claim(own, at + config.claim_period)
            else:
                own.fire(Trigger.ATTEMPTS_DONE)
                self._schedule_claim(own, at + config.claim_timeout)
        elif own.state is ClaimState.WAITING:
            self._succeed(own, at)
        else:
            own.fire(Trigger.LIFETIME_END)
            self._forget_claim(own.handle)
            self._emit(ClaimExpired(own.handle))

    def _succeed(self, own: OwnClaim, at: float) -> None:
        own.fire(Trigger.TIMEOUT)
        own.granted = True
        # Choice (§4.5.2): the lifetime runs from success; 0 succeeds and expires at once,
        # all one bits is infinite (as for IPv6 address lifetimes).
        infinite = own.lifetime == LIFETIME_INFINITE
        own.expires = None if infinite else at + own.lifetime
        self._emit(ClaimSucceeded(own.handle, own.domain, own.space, own.expires))
        if own.proxy and not own.reclaim:
            # §5.1: "To enable proxy-defense after a successful Claim-Attempt, the claiming
            # device immediately attempts a reclaim on the successful claim with the proxy
            # enabled flag set." Choice: this reclaim is an announcement of a held claim,
            # a run of its own; the result was already returned (§4.3.2), but a Claim-Deny
            # for it means another device defends the space: the claim is lost
            # (ClaimLost, ANNOUNCEMENT_DENIED), not silently kept.
            own.run += 1
            own.announced_run = own.run
            own.probe_runs = (own.run,)
            self._send_attempt(own, at, announce=True)
        self._schedule_claim(own, own.expires)
        if own.verify_timer == 0:
            self._schedule_verify(own, at)

    def _fail(
        self,
        own: OwnClaim,
        trigger: Trigger,
        reason: FailureReason,
        winner: int | None = None,
    ) -> None:
        """End a claim in progress with ``ClaimFailed``, the result of its run.

        A claim that had succeeded (its reclaim failed) is lost too: ``ClaimLost``
        follows, so a caller waiting for the reclaim's result gets it as for any claim,
        and the collision is reported on its own (§2.1.2). ``winner`` is the device that
        won the tie-break, when that is why.
        """
        if own.granted:
            lost = {
                Trigger.DENY: LossReason.RECLAIM_DENIED,
                Trigger.LOST_SIMULTANEOUS: LossReason.SIMULTANEOUS_RECLAIM,
            }
            self._emit(ClaimFailed(own.handle, reason, own.domain, own.space))
            self._lose(own, LossReason.YIELDED if winner is not None else lost[trigger], winner)
            return
        own.fire(trigger)
        own.deadline = None
        self._forget_claim(own.handle)
        self._emit(ClaimFailed(own.handle, reason, own.domain, own.space))

    def _lose(self, own: OwnClaim, reason: LossReason, winner: int | None = None) -> None:
        # §2.1.2: "The collision will only be detected if one of the UIAP devices ...
        # attempts to re-claim the UID space"; "Recovery after collision is the
        # responsibility of the application", which this event tells.
        own.fire(Trigger.COLLISION)
        own.deadline = None
        self._forget_claim(own.handle)
        self._emit(ClaimLost(own.handle, reason, own.domain, own.space, winner))

    # ------------------------------------------------------------------ timers

    def _timer_owner(
        self, deadline: float, token: int, key: int | ProxyKey
    ) -> OwnClaim | ProxyRecord | None:
        """What waits for the entry ``token``; ``None`` when the entry is stale."""
        owner: OwnClaim | ProxyRecord | None
        owner = self._claims.get(key) if isinstance(key, int) else self._proxies.get(key)
        return owner if owner is not None and owner.timer == token else None

    def _run_due(self, now: float) -> None:
        self._clock = now
        copies = self._copies
        if copies and copies[0][0] <= now:
            super()._run_due(now)  # queue the copies that are due
        timers = self._timers
        while (top := timers.peek()) is not None and top[0] <= now:
            timers.pop()
            key = top[2]
            if isinstance(key, int) and key < 0:
                # A re-verification timer: the key is the claim's handle, negated.
                own = self._claims.get(-key)
                if own is not None and own.verify_timer == top[1]:
                    self._verify(own, top[0])
                continue
            owner = self._timer_owner(*top)
            if isinstance(owner, OwnClaim):
                self._on_claim_deadline(owner, top[0])
            elif owner is not None:
                self._end_proxy(owner)

    def _must_deny(self, message: Message) -> bool:
        """Compare with the claims this device defends (§4.2.2.1), resolving simultaneous
        claims by :data:`~uuidkit.uiap.claims.CONFLICT_RULES` (§4.2.2.2)."""
        domain = message.domain
        claims = self._own_index.get(domain) if self._own_index else None
        has_proxies = self._proxies.has_domain(domain)
        if claims is None and not has_proxies:
            return False
        # §3.2.4: "UIDs from different number spaces or domains ... MUST NOT perform such
        # a comparison": only this DID's claims are looked at, by the wire's rules.
        rules = claims.rules if claims is not None else NumberSpace.generic(domain)
        incoming = rules.interval(message.space)
        deny = False
        if claims is not None:
            for handle in claims.meeting(incoming):
                deny = self._resolve(self._claims[handle], message) or deny
        if has_proxies:
            deny = self._proxy_denies(message, incoming) or deny
        return deny

    def _resolve(self, own: OwnClaim, message: Message) -> bool:
        """What a conflicting Claim-Attempt does to ``own``; True to deny it."""
        if (
            self.config.tie_break
            and message.reclaim
            and message.device_id != self.device_id
            and ((own.in_progress and own.reclaim) or own.probing_until > self._clock)
        ):
            return self._tie_break(own, message)
        conflict = CONFLICT_RULES[own.in_progress, own.reclaim, message.reclaim]
        if conflict.failure is not None:
            self._fail(own, Trigger.LOST_SIMULTANEOUS, conflict.failure)
        elif conflict.deny:
            self._emit(
                ClaimDefended(own.handle, message.device_id, message.sequence, message.reclaim)
            )
        return conflict.deny

    def _proxy_denies(self, message: Message, incoming: Interval) -> bool:
        deny = False
        for record in self._proxies.meeting(message.domain, incoming):
            # §5.1: "A device providing proxy defense MUST NOT defend the claim against
            # the original claimant."
            if record.claimant == message.device_id:
                continue
            deny = True
            self._emit(ProxyDefended(record.claimant, message.device_id, message.sequence))
        return deny

    def _forget_claim(self, handle: int) -> OwnClaim | None:
        """Remove claim ``handle`` (if present), its index entry and its timer."""
        own = self._claims.pop(handle, None)
        if own is None:
            return None
        claims = self._own_index[own.domain]
        claims.remove(handle, self._own_intervals.pop(handle))
        if not claims:
            del self._own_index[own.domain]
        self._timers.cancel(own.timer)
        self._timers.cancel(own.verify_timer)
        own.timer = own.verify_timer = 0
        return own

    def _deny_for_own_flood(
        self, claim: int, run: int, interface: Hashable, source: Hashable
    ) -> None:
        own = self._claims.get(claim)
        if own is not None and own.run == run and own.in_progress:
            # §4.3.2: "the claim is still in progress ... MUST return a failure to the
            # application and stop the claim." A reclaim of a held claim is lost.
            self._fail(own, Trigger.DENY, FailureReason.DENIED)
        elif own is not None and own.granted and run in own.probe_runs:
            # A deny for the proxy-enabling announcement of a held claim (§5.1), or for a
            # re-verification (beyond the draft): another device defends the space.
            reason = (
                LossReason.ANNOUNCEMENT_DENIED
                if run == own.announced_run
                else LossReason.VERIFICATION_DENIED
            )
            if own.in_progress:
                self._emit(ClaimFailed(own.handle, FailureReason.DENIED, own.domain, own.space))
            self._lose(own, reason)
        else:
            super()._deny_for_own_flood(claim, run, interface, source)

    # ------------------------------------------------------------------ proxy defense

    def _accepted(
        self, message: Message, interface: Hashable, source: Hashable, now: float
    ) -> None:
        # §5.1: "Claim-Attempt messages without both these flags set MUST NOT be proxied."
        if not (self.config.proxy_defense and message.proxy and message.reclaim):
            return
        if message.device_id == self.device_id:
            return
        interval = NumberSpace.generic(message.domain).interval(message.space)
        origin = (interface, source)
        if self._proxies.full_for(message, interval, origin):
            self._drop(DropReason.PROXY_TABLE_FULL, interface, source)
            return
        record, previous = self._proxies.remember(message, now, interval, origin)
        same_claim = record is not None and previous is not None and previous.space == record.space
        if previous is not None:
            self._timers.cancel(previous.timer)
            if not same_claim:
                self._emit(ProxyDefenseEnded(previous.claimant, previous.domain, previous.space))
        if record is None:
            return
        if record.expires is not None:
            record.timer = self._timers.push(record.expires, record.key)
        if not same_claim:
            self._emit(
                ProxyDefenseStarted(record.claimant, record.domain, record.space, record.expires)
            )

    def _foreign_attempt_denied(self, message: Message) -> None:
        # §5.1: a proxy "MAY stop defending a claim at any earlier time". Choice: a proxy
        # that relays a Claim-Deny for the very attempt it learnt a claim from stops
        # defending it, since that claim was refused (fewer false denies later).
        key = (message.device_id, message.claim_reference, message.domain)
        record = self._proxies.get(key)
        if record is not None and record.sequence == message.sequence:
            self._end_proxy(record)

    def _end_proxy(self, record: ProxyRecord) -> None:
        self._proxies.forget(record)
        self._timers.cancel(record.timer)
        self._emit(ProxyDefenseEnded(record.claimant, record.domain, record.space))
