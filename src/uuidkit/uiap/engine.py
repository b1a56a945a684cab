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
a lifetime out of range) raises :class:`EngineError`.

Where the draft is vague, the choice made is marked "Choice (§x)" next to the code and
listed in docs/uiap.md.

References: UIAP §2.4, §3, §4.2, §4.3, §4.4, §4.5, §5.1, §9, §10.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Final

from uuidkit.errors import DecodeError, EngineError, UnsupportedVersion
from uuidkit.uiap.claims import ClaimState, OwnClaim, Trigger
from uuidkit.uiap.codec import decode, encode
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
    DeviceIDConflictSuspected,
    DropReason,
    Event,
    FailureReason,
    MessageDropped,
    ProxyDefended,
    ProxyDefenseEnded,
    ProxyDefenseStarted,
)
from uuidkit.uiap.message import Message, MessageID, MessageType
from uuidkit.uiap.proxy import ProxyKey, ProxyRecord, ProxyTable
from uuidkit.uiap.records import FloodRecord, FloodTable, SequenceNumbers, TimerQueue
from uuidkit.uiap.space import NumberSpace, UIDSpace

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

#: Largest Originating Device ID: the field is 8 octets (UIAP §4.1).
_DEVICE_ID_LIMIT: Final = 1 << 64
#: Claim Reference Numbers are 32-bit (UIAP §4.1).
_REFERENCE_MODULUS: Final = 1 << 32


class Engine:
    """The UIAP behaviour of one device: claims, flooding, denying, proxy defense.

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
        # §4.1: "ID 0 (all bits 0) is reserved to represent a non-existent device, and
        # MUST NOT appear in a message."
        if not 0 < device_id < _DEVICE_ID_LIMIT:
            raise EngineError(f"device_id must be in 1 .. 2**64-1, got {device_id}")
        self.device_id = device_id
        self.config = config
        self.stats = EngineStats()
        #: The caller's number spaces, which decode() also checks messages against.
        self._known_rules: dict[DomainID, NumberSpace] = dict(domains or {})
        self._rules_cache = dict(self._known_rules)
        self._rng = rng
        self._interfaces: dict[Hashable, None] = {}
        self._sequences = SequenceNumbers(rng)
        self._floods = FloodTable(config.flood_record_lifetime)
        self._claims: dict[int, OwnClaim] = {}
        self._proxies = ProxyTable()
        self._timers: TimerQueue[int | ProxyKey] = TimerQueue()
        self._outbox: list[Transmit] = []
        self._events: deque[Event] = deque()
        self._next_handle = 1

    # ------------------------------------------------------------------ the caller's API

    def add_interface(self, interface: Hashable) -> None:
        """Start participating on ``interface`` (an opaque key); adding twice is harmless.

        References: UIAP §3.1 ("MUST join the UIAP multicast group").
        """
        self._interfaces[interface] = None

    def remove_interface(self, interface: Hashable) -> None:
        """Stop participating on ``interface``; its datagrams are dropped from now on.

        References: UIAP §1.1 (Site), §2.4.3 ("active interface").
        """
        if interface not in self._interfaces:
            raise EngineError(f"interface {interface!r} was never added")
        del self._interfaces[interface]

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
        own = self._claims.pop(claim, None)
        if own is not None:
            own.fire(Trigger.RELEASE)
            own.deadline = None

    def receive_datagram(
        self, data: bytes, interface: Hashable, source: Hashable, now: float
    ) -> None:
        """Process one datagram that arrived on ``interface`` from link-local ``source``.

        Never raises for bad input: it counts and drops it with a ``MessageDropped``.

        References: UIAP §2.4.2, §2.4.4, §4.1, §4.2.2, §4.3.2; DESIGN.md example 10.
        """
        self.stats.received += 1
        self._run_due(now)
        if interface not in self._interfaces:
            self._drop(DropReason.UNKNOWN_INTERFACE, interface, source)
            return
        try:
            message = decode(data, domains=self._known_rules)
        except UnsupportedVersion:
            # §4.1: "UIAP devices MAY silently discard UIAP messages with unknown version".
            self._drop(DropReason.UNSUPPORTED_VERSION, interface, source)
            return
        except DecodeError:
            self._drop(DropReason.MALFORMED, interface, source)
            return
        self._floods.expire(now)
        if message.type is MessageType.CLAIM_ATTEMPT:
            self._on_attempt(message, interface, source, now)
        else:
            self._on_deny(message, interface, source)

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

    def datagrams_to_send(self) -> list[Transmit]:
        """Every datagram queued since the last call, in order (the queue is emptied)."""
        outbox, self._outbox = self._outbox, []
        return outbox

    def next_event(self) -> Event | None:
        """The oldest event not yet returned, or ``None``."""
        return self._events.popleft() if self._events else None

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
            record.domain == domain and self._overlap(domain, record.space, space)
            for record in self._proxies.in_domain(domain)
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
            lifetime=own.lifetime,
            claim_reference=own.handle % _REFERENCE_MODULUS,
        )
        # §4.2.2.3: "a device MUST remember Claim-Attempt messages that it originates, in
        # order to protect against loops" -- recorded before anything is sent.
        record = FloodRecord(MessageID(self.device_id, sequence), None, None, now, now)
        record.own_claim, record.own_run = own.handle, own.run
        self._floods.add(record)
        if not announce:
            own.attempts_sent += 1
        self.stats.attempts_originated += 1
        data = encode(message)
        self._outbox.extend(Transmit(interface, MULTICAST, data) for interface in self._interfaces)

    def _schedule_claim(self, own: OwnClaim, deadline: float | None) -> None:
        own.deadline = deadline
        if deadline is not None:
            self._timers.push(deadline, own.handle)

    def _on_claim_deadline(self, own: OwnClaim, at: float) -> None:
        """A claim's deadline passed; ``at`` is the deadline, so schedules never drift."""
        config = self.config
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
            del self._claims[own.handle]
            self._events.append(ClaimExpired(own.handle))

    def _succeed(self, own: OwnClaim, at: float) -> None:
        own.fire(Trigger.TIMEOUT)
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
        own.deadline = None
        del self._claims[own.handle]
        self._events.append(ClaimFailed(own.handle, reason, own.domain, own.space))

    # ------------------------------------------------------------------ timers

    def _timer_owner(self, deadline: float, key: int | ProxyKey) -> OwnClaim | ProxyRecord | None:
        """What waits for ``deadline`` under ``key``; ``None`` for a stale heap entry."""
        owner: OwnClaim | ProxyRecord | None
        if isinstance(key, int):
            owner = self._claims.get(key)
            return owner if owner is not None and owner.deadline == deadline else None
        owner = self._proxies.get(key)
        return owner if owner is not None and owner.expires == deadline else None

    def _run_due(self, now: float) -> None:
        timers = self._timers
        while (top := timers.peek()) is not None and top[0] <= now:
            timers.pop()
            owner = self._timer_owner(*top)
            if isinstance(owner, OwnClaim):
                self._on_claim_deadline(owner, top[0])
            elif owner is not None:
                self._end_proxy(owner)

    # ------------------------------------------------------------------ receiving

    def _drop(self, reason: DropReason, interface: Hashable, source: Hashable) -> None:
        self.stats.dropped[reason] += 1
        if self.config.drop_events:
            self._events.append(MessageDropped(reason, interface, source))

    def _on_attempt(
        self, message: Message, interface: Hashable, source: Hashable, now: float
    ) -> None:
        message_id = message.message_id
        known = self._floods.get(message_id)
        if known is not None:
            # §2.4.2: "If device has already seen this Claim-Attempt message: Update last
            # received time. Discard message." -- also a copy arriving on a second
            # interface (§4.2.2.1 "MUST be discarded") and our own flood coming back.
            self._floods.touch(known, now)
            self._drop(DropReason.DUPLICATE, interface, source)
            return
        if message.device_id == self.device_id:
            if self._sequences.was_issued(message.sequence):
                self._drop(DropReason.OWN_MESSAGE, interface, source)
                return
            self._suspect_device_id_conflict(message, interface, source)
        # §4.2.2.1: "If the message has not been processed, it MUST be remembered and
        # processed", with the sender of the first copy (§2.4.2 "Store message record").
        record = FloodRecord(message_id, interface, source, now, now)
        self._floods.add(record)
        self.stats.attempts_received += 1
        if self._must_deny(message):
            self._send_deny(message, record)
            return
        self._forward_attempt(message, interface)
        self._maybe_proxy(message, now)

    def _must_deny(self, message: Message) -> bool:
        """Compare with the claims this device defends; fail our losing claims (§4.2.2.2)."""
        deny = False
        for own in list(self._claims.values()):
            if own.domain != message.domain:
                continue
            if not self._overlap(message.domain, own.space, message.space):
                continue
            # §4.2.2.1: "If the device has a conflicting claim (same DID and intersecting
            # UID space), the device MUST send back a Claim-Deny".
            if not own.in_progress:
                deny = True
                self._events.append(ClaimDefended(own.handle, *_message_id(message)))
            elif own.reclaim == message.reclaim:
                # §4.2.2.2: both new or both re-claims: "sends a Claim-Deny message and
                # reports a failure to the application".
                deny = True
                self._fail(own, Trigger.LOST_SIMULTANEOUS, FailureReason.SIMULTANEOUS_CLAIM)
            elif own.reclaim:
                # §4.2.2.2: outgoing R, incoming not: "the incoming claim is denied and the
                # outgoing claim continues".
                deny = True
                self._events.append(ClaimDefended(own.handle, *_message_id(message)))
            else:
                # §4.2.2.2: incoming R, outgoing not: "the outgoing claim fails immediately
                # and the incoming claim is forwarded as normal".
                self._fail(own, Trigger.LOST_SIMULTANEOUS, FailureReason.PREEMPTED_BY_RECLAIM)
        for record in self._proxies.in_domain(message.domain):
            # §5.1: "A device providing proxy defense MUST NOT defend the claim against
            # the original claimant."
            if record.claimant == message.device_id or record.domain != message.domain:
                continue
            if self._overlap(message.domain, record.space, message.space):
                deny = True
                self._events.append(ProxyDefended(record.claimant, *_message_id(message)))
        return deny

    def _send_deny(self, message: Message, record: FloodRecord) -> None:
        # §4.3.1: "a copy of the Claim-Attempt message being denied, except that the Type
        # field is set to 0x1 and the Hop Limit field is reset to 32".
        deny = message.replace(type=MessageType.CLAIM_DENY, hop_limit=self.config.hop_limit)
        # §4.3.2: "MUST send the Claim-Deny message out the same interface that the
        # matching Claim-Attempt was first received", to the recorded sender.
        record.deny_sent = True
        self.stats.denied += 1
        self._outbox.append(Transmit(record.interface, record.sender, encode(deny)))

    def _forward_attempt(self, message: Message, arrival: Hashable) -> None:
        # §4.1: "Messages with a hop limit of 0 SHOULD be processed but MUST NOT be
        # forwarded."
        if message.hop_limit == 0:
            self.stats.hop_limit_reached += 1
            return
        others = [interface for interface in self._interfaces if interface != arrival]
        if not others:
            return
        # §2.4.3: "Decrement Hop Limit. For each active interface: (except the interface
        # the Claim-Attempt was received on) Send copy ... to UIAP multicast group."
        data = encode(message.replace(hop_limit=self._next_hop_limit(message)))
        self.stats.forwarded += len(others)
        self._outbox.extend(Transmit(interface, MULTICAST, data) for interface in others)

    def _next_hop_limit(self, message: Message) -> int:
        # §4.1: the hop limit "is originally set to 32, and is decremented by the sending
        # device each time a UIAP message is forwarded". Choice (§4.1 is silent on larger
        # values): a received hop limit above our own initial one is clamped to it, so a
        # misbehaving sender cannot send a flood further than our configuration allows.
        return min(message.hop_limit - 1, self.config.hop_limit)

    def _on_deny(self, message: Message, interface: Hashable, source: Hashable) -> None:
        self.stats.denies_received += 1
        record = self._floods.get(message.message_id)
        if record is None:
            if message.device_id == self.device_id and not self._sequences.was_issued(
                message.sequence
            ):
                self._suspect_device_id_conflict(message, interface, source)
            # §4.3.2: "If a match is not found, it SHOULD silently discard the Claim-Deny."
            self._drop(DropReason.DENY_UNMATCHED, interface, source)
            return
        if record.own_claim is not None:
            own = self._claims.get(record.own_claim)
            if own is not None and own.in_progress and own.run == record.own_run:
                # §4.3.2: "the claim is still in progress ... MUST return a failure to the
                # application and stop the claim."
                self._fail(own, Trigger.DENY, FailureReason.DENIED)
            else:
                # §4.3.2: "If a result has already been returned to the application, the
                # Claim-Deny message MUST be discarded."
                self._drop(DropReason.DENY_AFTER_RESULT, interface, source)
            return
        self._forward_deny(message, record, interface, source)

    def _forward_deny(
        self, message: Message, record: FloodRecord, interface: Hashable, source: Hashable
    ) -> None:
        if record.deny_sent:
            # §4.3.2: "SHOULD NOT forward more than one Claim-Deny per Claim-Attempt
            # message. After the first, additional Claim-Deny messages SHOULD be silently
            # dropped."
            self._drop(DropReason.DENY_ALREADY_SENT, interface, source)
        elif message.hop_limit == 0:
            self._drop(DropReason.DENY_HOP_LIMIT, interface, source)
        elif record.interface not in self._interfaces:
            self._drop(DropReason.DENY_INTERFACE_GONE, interface, source)
        else:
            # §2.4.5: "Forwarding a Claim-Deny message is similar to sending one, except
            # that the hop limit is decremented rather than being reset."
            record.deny_sent = True
            self.stats.denies_forwarded += 1
            data = encode(message.replace(hop_limit=self._next_hop_limit(message)))
            self._outbox.append(Transmit(record.interface, record.sender, data))

    # ------------------------------------------------------------------ proxy defense

    def _maybe_proxy(self, message: Message, now: float) -> None:
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
            self._timers.push(record.expires, record.key)
        if not same_claim:
            self._events.append(
                ProxyDefenseStarted(record.claimant, record.domain, record.space, record.expires)
            )

    def _end_proxy(self, record: ProxyRecord) -> None:
        self._proxies.forget(record)
        self._events.append(ProxyDefenseEnded(record.claimant, record.domain, record.space))

    # ------------------------------------------------------------------ device-ID conflict

    def _suspect_device_id_conflict(
        self, message: Message, interface: Hashable, source: Hashable
    ) -> None:
        # §9: "If a device receives a message that contains the device's ID as the
        # originator ID but the device has no record of sending that message, there may be
        # a device ID conflict. If the sequence number is "close" to the device's current
        # sequence number, the device MAY choose a new random sequence number".
        close = self._sequences.distance(message.sequence) < self.config.sequence_guard
        if close:
            self._sequences.jump(self._rng)
        self.stats.device_id_conflicts += 1
        self._events.append(
            DeviceIDConflictSuspected(message.sequence, interface, source, resequenced=close)
        )


def _message_id(message: Message) -> tuple[int, int]:
    return message.device_id, message.sequence
