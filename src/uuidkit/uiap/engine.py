"""The UIAP protocol engine of one device, sans-I/O: bytes and times in, bytes and events out.

The caller owns the sockets and the clock (DESIGN.md example 7)::

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
``random.Random`` passed in. Every call first runs the deadlines that are due at ``now``,
so a caller that is late with ``handle_timer`` still sees every rule applied in order.

Boundary contract (DESIGN.md example 10): ``receive_datagram`` never raises for network
input. A datagram the decoder rejects is counted and dropped with a ``MessageDropped``
event; any other exception escaping is a bug. Misuse of the API (an unknown claim handle,
a lifetime out of range) raises :class:`EngineError`; a space its domain does not allow
raises :class:`~uuidkit.errors.SpaceError`.

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
)
from uuidkit.uiap.events import (
    ClaimDefended,
    ClaimExpired,
    ClaimFailed,
    ClaimSucceeded,
    FailureReason,
    ProxyDefended,
    ProxyDefenseEnded,
    ProxyDefenseStarted,
)
from uuidkit.uiap.flooding import Forwarder
from uuidkit.uiap.message import Message, MessageType
from uuidkit.uiap.proxy import ProxyKey, ProxyRecord, ProxyTable
from uuidkit.uiap.records import TimerQueue
from uuidkit.uiap.space import Interval, NumberSpace, UIDSpace, intervals_overlap

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


class Engine(Forwarder):
    """The UIAP behaviour of one device: claims, flooding, denying, proxy defense.

    Receiving, forwarding and relaying (``receive_datagram``, ``add_interface``,
    ``remove_interface``, ``datagrams_to_send``, ``next_event``, ``stats``) come from
    :class:`~uuidkit.uiap.flooding.Forwarder`; this class adds the device's own claims,
    its deadlines and proxy defense.

    ``device_id`` is the 64-bit Originating Device ID (0 is reserved, UIAP §4.1);
    ``rng`` supplies the random start of the sequence numbers (§4.5.1). ``domains`` maps
    the Domain IDs whose specification this device knows to their number spaces: their
    messages are checked against those rules and compared by them; any other domain uses
    :meth:`NumberSpace.generic` (the rules the DID alone gives, §3.2.1.1).

    References: UIAP §2.4, §3, §4.2, §4.3, §4.4, §4.5, §5.1, §9; DESIGN.md example 7.
    """

    def __init__(
        self,
        device_id: int,
        rng: random.Random,
        config: EngineConfig = DEFAULT_ENGINE_CONFIG,
        *,
        domains: Mapping[DomainID, NumberSpace] | None = None,
    ) -> None:
        super().__init__(device_id, rng, config, domains)
        self._rules_cache = dict(self._known_rules)
        self._claims: dict[int, OwnClaim] = {}
        #: handle -> (space, rules, interval) of claims compared with incoming attempts.
        self._own_intervals: dict[int, tuple[UIDSpace, NumberSpace, Interval]] = {}
        self._proxies = ProxyTable()
        self._timers: TimerQueue[int | ProxyKey] = TimerQueue()
        self._next_handle = 1

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
        this device fails at once. ``lifetime`` is 0 .. 2**32-1 seconds
        (:data:`LIFETIME_INFINITE` is for ever).

        References: UIAP §2.4.1, §4.2, §4.4, §4.5.2, §5.1.
        """
        if not 0 <= lifetime <= LIFETIME_INFINITE:
            raise EngineError(f"lifetime must be 0 .. 2**32-1 seconds, got {lifetime}")
        # Raises SpaceError for a space its domain's rules do not allow (§3.2.2, §3.2.3).
        self._rules(domain).check_space(space)
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
        if self._conflicts_locally(domain, space):
            own.fire(Trigger.LOCAL_CONFLICT)
            self._events.append(ClaimFailed(handle, FailureReason.LOCAL_CONFLICT, domain, space))
            return handle
        self._claims[handle] = own
        self._start_run(own, None, now)
        return handle

    def release(self, claim: int, now: float) -> None:
        """Stop claiming or defending ``claim``; releasing an ended claim does nothing.

        References: UIAP §2.1.1 (the application decides how long a claim is defended).
        """
        if not 0 < claim < self._next_handle:
            raise EngineError(f"unknown claim handle {claim}")
        self._run_due(now)
        own = self._forget_claim(claim)
        if own is not None:
            own.fire(Trigger.RELEASE)
            own.deadline, own.timer = None, 0

    def handle_timer(self, now: float) -> None:
        """Run every deadline due at or before ``now`` (call it when ``get_timer`` passes).

        References: UIAP §2.4.1, §4.5.2, §5.1.
        """
        self._run_due(now)

    def get_timer(self) -> float | None:
        """The earliest deadline (engine seconds), or ``None`` when nothing is scheduled."""
        timers = self._timers
        while (top := timers.peek()) is not None:
            if self._timer_owner(*top) is not None:
                return top[0]
            timers.pop()
        return None

    # ------------------------------------------------------------------ own claims

    def _held_claim(self, domain: DomainID, space: UIDSpace) -> OwnClaim | None:
        for own in self._claims.values():
            if own.state is ClaimState.HELD and own.domain == domain and own.space == space:
                return own
        return None

    def _rules(self, domain: DomainID) -> NumberSpace:
        """The number space of ``domain``: the caller's, else the DID's generic rules.

        Only domains this device claims in, or proxy-defends, are ever looked up.
        """
        rules = self._rules_cache.get(domain)
        if rules is None:
            rules = self._rules_cache[domain] = NumberSpace.generic(domain)
        return rules

    def _overlap(self, domain: DomainID, a: UIDSpace, b: UIDSpace) -> bool:
        # §3.2.4: "UIDs from different number spaces or domains ... MUST NOT perform such
        # a comparison" -- callers compare only spaces of the same DID.
        return self._rules(domain).overlaps(a, b)

    def _conflicts_locally(self, domain: DomainID, space: UIDSpace) -> bool:
        # §2.4.1: "a claim will immediately fail if a conflicting claim already exits on
        # the local device". Choice: claims in progress and proxy-defended claims count
        # too, as this device would deny (or resolve) a Claim-Attempt for either.
        for own in self._claims.values():
            if own.domain == domain and self._overlap(domain, own.space, space):
                return True
        return any(
            self._overlap(domain, record.space, space) for record in self._proxies.in_domain(domain)
        )

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
        own.timer = 0 if deadline is None else self._timers.push(deadline, own.handle)

    def _on_claim_deadline(self, own: OwnClaim, at: float) -> None:
        """A claim's deadline passed; ``at`` is the deadline, so schedules never drift."""
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
            self._events.append(ClaimExpired(own.handle))

    def _succeed(self, own: OwnClaim, at: float) -> None:
        own.fire(Trigger.TIMEOUT)
        # Choice (§4.5.2): the lifetime runs from success; 0 succeeds and expires at once,
        # all one bits is infinite (as for IPv6 address lifetimes).
        infinite = own.lifetime == LIFETIME_INFINITE
        own.expires = None if infinite else at + own.lifetime
        self._events.append(ClaimSucceeded(own.handle, own.domain, own.space, own.expires))
        if own.proxy and not own.reclaim:
            # §5.1: "To enable proxy-defense after a successful Claim-Attempt, the claiming
            # device immediately attempts a reclaim on the successful claim with the proxy
            # enabled flag set." Choice: this reclaim is an announcement of a held claim;
            # the result was already returned, so a Claim-Deny for it is discarded (§4.3.2).
            self._send_attempt(own, at, announce=True)
        self._schedule_claim(own, own.expires)

    def _fail(self, own: OwnClaim, trigger: Trigger, reason: FailureReason) -> None:
        own.fire(trigger)
        own.deadline, own.timer = None, 0
        self._forget_claim(own.handle)
        self._events.append(ClaimFailed(own.handle, reason, own.domain, own.space))

    # ------------------------------------------------------------------ timers

    def _timer_owner(
        self, deadline: float, token: int, key: int | ProxyKey
    ) -> OwnClaim | ProxyRecord | None:
        """What waits for the entry ``token``; ``None`` when the entry is stale."""
        owner: OwnClaim | ProxyRecord | None
        owner = self._claims.get(key) if isinstance(key, int) else self._proxies.get(key)
        return owner if owner is not None and owner.timer == token else None

    def _run_due(self, now: float) -> None:
        timers = self._timers
        while (top := timers.peek()) is not None and top[0] <= now:
            timers.pop()
            owner = self._timer_owner(*top)
            if isinstance(owner, OwnClaim):
                self._on_claim_deadline(owner, top[0])
            elif owner is not None:
                self._end_proxy(owner)

    def _must_deny(self, message: Message) -> bool:
        """Compare with the claims this device defends (§4.2.2.1), resolving simultaneous
        claims by :data:`~uuidkit.uiap.claims.CONFLICT_RULES` (§4.2.2.2)."""
        deny = False
        message_id = (message.device_id, message.sequence)
        domain = message.domain
        # The message's interval is computed once, at the first claim in its domain.
        incoming: Interval | None = None
        # A copy of the claims: a lost simultaneous claim is removed while looping.
        for own in list(self._claims.values()) if self._claims else ():
            if own.domain != domain:
                continue
            rules = self._rules(domain)
            own_interval = self._own_interval(own, rules)
            if incoming is None:
                incoming = rules.interval(message.space)
            if not intervals_overlap(own_interval, incoming):
                continue
            conflict = CONFLICT_RULES[own.in_progress, own.reclaim, message.reclaim]
            deny = deny or conflict.deny
            if conflict.failure is not None:
                self._fail(own, Trigger.LOST_SIMULTANEOUS, conflict.failure)
            elif conflict.deny:
                self._events.append(ClaimDefended(own.handle, *message_id))
        for record in self._proxies.in_domain(domain):
            # §5.1: "A device providing proxy defense MUST NOT defend the claim against
            # the original claimant."
            if record.claimant == message.device_id:
                continue
            rules = self._rules(domain)
            record_interval = rules.interval(record.space)
            if incoming is None:
                incoming = rules.interval(message.space)
            if intervals_overlap(record_interval, incoming):
                deny = True
                self._events.append(ProxyDefended(record.claimant, *message_id))
        return deny

    def _own_interval(self, own: OwnClaim, rules: NumberSpace) -> Interval:
        """``own``'s space as an interval of ``rules``, kept while the claim lasts: it is
        compared with every new Claim-Attempt of its domain (§4.2.2.1)."""
        cached = self._own_intervals.get(own.handle)
        if cached is not None and cached[0] is own.space and cached[1] is rules:
            return cached[2]
        interval = rules.interval(own.space)
        self._own_intervals[own.handle] = (own.space, rules, interval)
        return interval

    def _forget_claim(self, handle: int) -> OwnClaim | None:
        """Remove claim ``handle`` (if present) and what is cached about it."""
        self._own_intervals.pop(handle, None)
        return self._claims.pop(handle, None)

    def _deny_for_own_flood(
        self, claim: int, run: int, interface: Hashable, source: Hashable
    ) -> None:
        own = self._claims.get(claim)
        if own is not None and own.in_progress and own.run == run:
            # §4.3.2: "the claim is still in progress ... MUST return a failure to the
            # application and stop the claim."
            self._fail(own, Trigger.DENY, FailureReason.DENIED)
        else:
            super()._deny_for_own_flood(claim, run, interface, source)

    # ------------------------------------------------------------------ proxy defense

    def _accepted(self, message: Message, now: float) -> None:
        # §5.1: "Claim-Attempt messages without both these flags set MUST NOT be proxied."
        if not (self.config.proxy_defense and message.proxy and message.reclaim):
            return
        if message.device_id == self.device_id:
            return
        record, previous = self._proxies.remember(message, now)
        same_claim = record is not None and previous is not None and previous.space == record.space
        if previous is not None and not same_claim:
            self._events.append(
                ProxyDefenseEnded(previous.claimant, previous.domain, previous.space)
            )
        if record is None:
            return
        if record.expires is not None:
            record.timer = self._timers.push(record.expires, record.key)
        if not same_claim:
            self._events.append(
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
        self._events.append(ProxyDefenseEnded(record.claimant, record.domain, record.space))
