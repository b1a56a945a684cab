"""What every UIAP device does with the messages it receives: the flooding layer.

Records Claim-Attempt floods, drops the copies it already knows, forwards the rest out
its other interfaces, sends and relays Claim-Denies hop by hop back to the originator,
originates its own floods (recorded before they are sent), and notices messages that
carry its own device ID without having been sent by it. A device that never claims
anything does exactly this (§2.4.2 - §2.4.5).

Which Claim-Attempts to deny, and what a Claim-Deny for one of its own floods means, are
the claimant's business: :class:`uuidkit.uiap.engine.Engine` extends :class:`Forwarder`
with claims, timers and proxy defense through hooks (``_run_due``, ``_must_deny``,
``_accepted``, ``_foreign_attempt_denied``, ``_deny_for_own_flood``).

References: UIAP §2.4.2, §2.4.3, §2.4.4, §2.4.5, §4.1, §4.2.2.1, §4.2.2.3, §4.3, §9.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Hashable
from typing import TYPE_CHECKING, Final

from uuidkit.errors import DecodeError, EngineError, UnsupportedVersion
from uuidkit.uiap.auth import TRAILER_OCTETS, looks_sealed
from uuidkit.uiap.codec import HEADER_FIELDS, as_encoded, decode, encode, with_hop_limit
from uuidkit.uiap.constants import HEADER_LENGTH_OCTETS, UIAP_HOP_LIMIT, UIAP_VERSION
from uuidkit.uiap.engine_types import MULTICAST, EngineConfig, EngineStats, Transmit
from uuidkit.uiap.events import (
    ClaimExpired,
    ClaimFailed,
    ClaimLost,
    ClaimSucceeded,
    DeviceIDConflictSuspected,
    DropReason,
    Event,
    MessageDropped,
)
from uuidkit.uiap.limits import RateLimiter
from uuidkit.uiap.message import Message, MessageType, message_key
from uuidkit.uiap.records import FloodRecord, FloodTable, SequenceNumbers

if TYPE_CHECKING:
    import random

__all__ = ["Forwarder"]

#: Largest Originating Device ID: the field is 8 octets (UIAP §4.1).
_DEVICE_ID_LIMIT: Final = 1 << 64

_OFFSETS: Final = {name: offset for name, offset, _ in HEADER_FIELDS}
_TYPE_OFFSET: Final = _OFFSETS["Type"]
_ATTEMPT_TYPE: Final = int(MessageType.CLAIM_ATTEMPT)
_ID_OFFSET: Final = _OFFSETS["Originating Device ID"]
#: The Message ID: Originating Device ID (8 octets) then Sequence Number (4), adjacent in
#: the header (§4.1), ending at octet 20.
_ID_END: Final = _OFFSETS["Sequence Number"] + 4
assert _OFFSETS["Sequence Number"] == _ID_OFFSET + 8
#: Results of this device's own claims: always queued, whatever ``max_queued_events``
#: (the caller's claims bound them, not the network).
_RESULT_EVENTS: Final = (ClaimSucceeded, ClaimFailed, ClaimLost, ClaimExpired)


class Forwarder:
    """One device's flooding layer: receive, record, forward, deny, relay (see module doc).

    References: UIAP §2.4.2 - §2.4.5, §4.2.2.1, §4.2.2.3, §4.3, §9.
    """

    def __init__(
        self,
        device_id: int,
        rng: random.Random,
        config: EngineConfig,
    ) -> None:
        # §4.1: "ID 0 (all bits 0) is reserved to represent a non-existent device, and
        # MUST NOT appear in a message."
        if not 0 < device_id < _DEVICE_ID_LIMIT:
            raise EngineError(f"device_id must be in 1 .. 2**64-1, got {device_id}")
        self.device_id = device_id
        self.config = config
        self.stats = EngineStats()
        self._rng = rng
        self._interfaces: dict[Hashable, None] = {}
        #: For each arrival interface, the others a flood goes out of (§2.4.3), in the
        #: order the interfaces were added; rebuilt when an interface comes or goes.
        self._onward: dict[Hashable, list[Hashable]] = {}
        self._sequences = SequenceNumbers(rng, config.max_sequence_runs)
        #: Other devices' floods (capped) and this device's own (never evicted, §4.2.2.3).
        self._floods = FloodTable(config.flood_record_lifetime, config.max_flood_records)
        self._own_floods = FloodTable(config.flood_record_lifetime)
        #: Records of Claim-Attempts over a rate limit (``max_overflow_records``).
        self._overflow = FloodTable(config.flood_record_lifetime, config.max_overflow_records)
        #: The three tables share one lifetime (see _expire_records).
        self._record_lifetime = config.flood_record_lifetime
        self._limiter = RateLimiter(
            config.source_rate,
            config.source_burst,
            config.interface_rate,
            config.interface_burst,
            config.max_tracked_sources,
        )
        self._outbox: list[Transmit] = []
        #: Further copies of sent datagrams, (due, order, transmit), a heap (``copies``).
        self._copies: list[tuple[float, int, Transmit]] = []
        self._copy_order = 0
        self._events: deque[Event] = deque()

    def add_interface(self, interface: Hashable) -> None:
        """Start participating on ``interface`` (an opaque key); adding twice is harmless.

        References: UIAP §3.1 ("MUST join the UIAP multicast group").
        """
        self._interfaces[interface] = None
        self._onward.clear()

    def remove_interface(self, interface: Hashable) -> None:
        """Stop participating on ``interface``; its datagrams are dropped from now on.

        References: UIAP §1.1 (Site), §2.4.3 ("active interface").
        """
        if interface not in self._interfaces:
            raise EngineError(f"interface {interface!r} was never added")
        del self._interfaces[interface]
        self._onward.clear()
        self._limiter.forget_interface(interface)

    def receive_datagram(
        self, data: bytes, interface: Hashable, source: Hashable, now: float
    ) -> None:
        """Process one datagram that arrived on ``interface`` from link-local ``source``.

        Never raises for bad input: it counts and drops it with a ``MessageDropped``.

        References: UIAP §2.4.2, §2.4.4, §4.1, §4.2.2, §4.3.2.
        """
        self.stats.received += 1
        self._run_due(now)
        if interface not in self._interfaces:
            self._drop(DropReason.UNKNOWN_INTERFACE, interface, source)
            return
        self._expire_records(now)
        if type(data) is not bytes and isinstance(data, bytearray | memoryview):
            # The octets as decode() reads them, for the Message ID check too.
            data = bytes(data)
        if (
            # A datagram with our Version, a whole header and Type Claim-Attempt (§4.1:
            # Type is the high 4 bits of octet 1), tested here: this runs per datagram.
            isinstance(data, bytes)
            and len(data) >= HEADER_LENGTH_OCTETS
            and data[0] == UIAP_VERSION
            and data[_TYPE_OFFSET] >> 4 == _ATTEMPT_TYPE
        ):
            if self._is_known_attempt(data, now):
                self._drop(DropReason.DUPLICATE, interface, source)
                return
            # A new Claim-Attempt will be remembered: only so many per source and link.
            refused = self._limiter.admit(interface, source, now)
            if refused is not None:
                self._drop(refused, interface, source)
                self._over_budget(data, interface, source, now)
                return
        try:
            # No domain's own rules here: §4.2.2.1 "MUST forward" every Claim-Attempt that
            # conflicts with no claim, and §3.2.1.1 "there is no mechanism to specify or
            # enforce UID sizes within UIAP". Domain rules check this device's own claims.
            message = decode(data)
        except UnsupportedVersion:
            # §4.1: "UIAP devices MAY silently discard UIAP messages with unknown version".
            self._drop(DropReason.UNSUPPORTED_VERSION, interface, source)
            return
        except DecodeError:
            # A keyed site's datagram is counted as such, so a missing or wrong key does
            # not look like garbage on the wire.
            sealed = looks_sealed(data) and _decodes(data[:-TRAILER_OCTETS])
            self._drop(
                DropReason.AUTH_UNEXPECTED if sealed else DropReason.MALFORMED, interface, source
            )
            return
        if message.type is MessageType.CLAIM_ATTEMPT:
            self._on_attempt(message, data, interface, source, now)
        else:
            self._on_deny(message, data, interface, source, now)

    def get_timer(self) -> float | None:
        """When the next copy of a sent datagram is due (engine seconds), or ``None``."""
        return self._copies[0][0] if self._copies else None

    def handle_timer(self, now: float) -> None:
        """Queue every copy due at or before ``now`` (call it when ``get_timer`` passes)."""
        self._run_due(now)

    def datagrams_to_send(self) -> list[Transmit]:
        """Every datagram queued since the last call, in order (the queue is emptied).

        Datagrams queued for an interface removed since are left out.
        """
        outbox = self._outbox
        if not outbox:
            return []
        self._outbox = []
        interfaces = self._interfaces
        return [transmit for transmit in outbox if transmit.interface in interfaces]

    def next_event(self) -> Event | None:
        """The oldest event not yet returned, or ``None``."""
        return self._events.popleft() if self._events else None

    def _is_known_attempt(self, data: bytes, now: float) -> bool:
        """A Claim-Attempt whose Message ID is recorded: update its last-received time.

        §4.2.2.1: "a UIAP device MUST first check if it has already processed that
        Claim-Attempt (identified by the Message ID). If the message has already been
        processed, it SHOULD NOT be processed again." The ID is read from the header
        without decoding the rest, which is most of the work for the copies every
        multi-homed device receives. Choice: a copy whose other fields are damaged is
        counted as a duplicate, not as malformed; it is dropped either way.
        """
        # The caller checked that data holds a whole Claim-Attempt header. Octets 8-19 are
        # the Message ID as one 96-bit number (MessageID.value, FloodRecord.key).
        key = int.from_bytes(data[_ID_OFFSET:_ID_END])
        table = self._floods
        record = table.find(key)
        if record is None:
            table = self._own_floods
            record = table.find(key)
            if record is None:
                table = self._overflow
                record = table.find(key)
                if record is None:
                    return False
        # §2.4.2: "If device has already seen this Claim-Attempt message: Update last
        # received time. Discard message."
        table.touch(record, now)
        return True

    # ------------------------------------------------------------------ hooks

    def _expire_records(self, now: float) -> None:
        """Forget the flood records whose last copy is ``flood_record_lifetime`` old.

        Each table's :meth:`FloodTable.expire` returns at once unless its front record may
        be due (``front_received <= now - lifetime``); the same comparison is made here
        first, with the one lifetime the three tables share, so a datagram that expires
        nothing (nearly all of them) costs three comparisons and no calls. The result is
        what calling ``expire(now)`` on each table gives.
        """
        horizon = now - self._record_lifetime
        # ``not a > b`` rather than ``a <= b``: the table's own test, NaN included.
        if not self._floods.front_received > horizon:
            self._floods.expire(now)
        if not self._own_floods.front_received > horizon:
            self._own_floods.expire(now)
        if not self._overflow.front_received > horizon:
            self._overflow.expire(now)

    def _run_due(self, now: float) -> None:
        """Bring timed state up to ``now`` before a datagram is handled: queue the copies
        that are due."""
        copies = self._copies
        while copies and copies[0][0] <= now:
            self._outbox.append(heapq.heappop(copies)[2])

    def _send(self, transmits: list[Transmit], now: float) -> None:
        """Queue ``transmits`` now, and their further copies ``copy_gap`` apart.

        Beyond the draft: every copy carries the same Message ID, so a receiver, whoever
        wrote it, drops all but the first as a known flood (§4.2.2.1 "MUST be discarded")
        or a further Claim-Deny (§4.3.2 "SHOULD be silently dropped"). One hop's loss goes
        from p to p**copies for floods and denies alike.
        """
        self._outbox.extend(transmits)
        config = self.config
        for copy in range(1, config.copies):
            due = now + copy * config.copy_gap
            for transmit in transmits:
                if due <= now:
                    self._outbox.append(transmit)
                    continue
                self._copy_order += 1
                heapq.heappush(self._copies, (due, self._copy_order, transmit))

    def _must_deny(self, message: Message) -> bool:
        """Whether a new Claim-Attempt conflicts with a claim this device defends."""
        return False

    def _accepted(
        self, message: Message, interface: Hashable, source: Hashable, now: float
    ) -> None:
        """A new Claim-Attempt was not denied (it has been forwarded if its hop limit
        allowed)."""

    def _foreign_attempt_denied(self, message: Message) -> None:
        """A Claim-Deny matched another device's Claim-Attempt that we recorded."""

    def _deny_for_own_flood(
        self, claim: int, run: int, interface: Hashable, source: Hashable
    ) -> None:
        """A Claim-Deny matched a flood this device originated for ``claim``'s ``run``
        (each run's floods are its attempts; the proxy-enabling announcement is a run)."""
        # §4.3.2: "If a result has already been returned to the application, the
        # Claim-Deny message MUST be discarded."
        self._drop(DropReason.DENY_AFTER_RESULT, interface, source)

    # ------------------------------------------------------------------ originating

    def _originate(self, message: Message, now: float, claim: int, run: int) -> None:
        """Send our own Claim-Attempt flood out every interface (its sequence was issued)."""
        # §4.2.2.3: "a device MUST remember Claim-Attempt messages that it originates, in
        # order to protect against loops" -- recorded before anything is sent.
        self._own_floods.expire(now)
        record = FloodRecord(message_key(message.device_id, message.sequence), None, None, now, now)
        record.own_claim, record.own_run = claim, run
        self._own_floods.add(record)
        self.stats.attempts_originated += 1
        data = encode(message)
        self._send([Transmit(interface, MULTICAST, data) for interface in self._interfaces], now)

    # ------------------------------------------------------------------ receiving

    def _drop(self, reason: DropReason, interface: Hashable, source: Hashable) -> None:
        self.stats.dropped[reason] += 1
        if self.config.drop_events:
            self._emit(MessageDropped(reason, interface, source))

    def _emit(self, event: Event) -> None:
        """Queue ``event``; network-caused ones only while fewer than the cap wait."""
        if len(self._events) >= self.config.max_queued_events and not isinstance(
            event, _RESULT_EVENTS
        ):
            self.stats.events_dropped += 1
            return
        self._events.append(event)

    def _on_attempt(
        self, message: Message, received: bytes, interface: Hashable, source: Hashable, now: float
    ) -> None:
        # A known Message ID was dropped by _is_known_attempt() before decoding (§2.4.2:
        # "If device has already seen this Claim-Attempt message: Update last received
        # time. Discard message."): copies on a second interface (§4.2.2.1 "MUST be
        # discarded") and our own flood coming back never get here.
        if message.device_id == self.device_id:
            if self._sequences.was_issued(message.sequence):
                self._drop(DropReason.OWN_MESSAGE, interface, source)
                return
            # Choice (§9 says only "there may be a device ID conflict"): the message is
            # still another device's claim, so it is processed like any other.
            self._suspect_device_id_conflict(message, interface, source)
        # §4.2.2.1: "If the message has not been processed, it MUST be remembered and
        # processed", with the sender of the first copy (§2.4.2 "Store message record").
        record = FloodRecord(
            message_key(message.device_id, message.sequence), interface, source, now, now
        )
        self._floods.add(record)
        self.stats.flood_records_evicted = self._floods.evicted
        self.stats.attempts_received += 1
        if self._must_deny(message):
            self._send_deny(message, received, record, now)
            return
        self._forward_attempt(message, received, interface, now)
        self._accepted(message, interface, source, now)

    def _send_deny(
        self, message: Message, received: bytes, record: FloodRecord, now: float
    ) -> None:
        # §4.3.2: "MUST send the Claim-Deny message out the same interface that the
        # matching Claim-Attempt was first received", to the recorded sender.
        record.deny_sent = True
        self._deny_to(message, received, record.interface, record.sender, now)

    def _deny_to(
        self,
        message: Message,
        received: bytes,
        interface: Hashable,
        sender: Hashable,
        now: float,
    ) -> None:
        # §4.3.1: "a copy of the Claim-Attempt message being denied, except that the Type
        # field is set to 0x1 and the Hop Limit field is reset to 32" -- 32 whatever hop
        # limit this device gives its own floods (§2.4.5 "Reset hop limit to maximum
        # (currently 32)"). Choice (§4.5.2 allows 0): the lifetime is copied too, keeping
        # the deny a faithful copy. The copy is made from the octets; with_hop_limit()
        # equals re-encoding the message.
        deny = with_hop_limit(as_encoded(message, received), UIAP_HOP_LIMIT, MessageType.CLAIM_DENY)
        self.stats.denied += 1
        self._send([Transmit(interface, sender, deny)], now)

    def _over_budget(self, data: bytes, interface: Hashable, source: Hashable, now: float) -> None:
        """A Claim-Attempt over a rate limit: compared and denied like any (§4.2.2.1 "the
        device MUST send back a Claim-Deny"), recorded apart in a capped table, and
        forwarded (§4.2.2.1 "MUST forward"), so a spent budget never stops a relay. It
        makes no proxy record and no event but its drop count. The limits bound what the
        network can make us remember in the main tables, never whether we deny or forward.
        With ``max_overflow_records=0`` it is neither recorded nor forwarded, and a deny
        goes straight back to the sender."""
        try:
            message = decode(data)
        except DecodeError:
            return  # counted already as rate-limited
        if message.device_id == self.device_id:
            return  # ours, or a device sharing our ID: §9 needs the record we do not keep
        if self.config.max_overflow_records == 0:
            if self._must_deny(message):
                self._deny_to(message, data, interface, source, now)
            return
        record = FloodRecord(
            message_key(message.device_id, message.sequence), interface, source, now, now
        )
        self._overflow.add(record)
        if self._must_deny(message):
            self._send_deny(message, data, record, now)
            return
        # §4.2.2.1: "the device MUST forward the Claim-Attempt": a spent budget bounds what
        # is remembered (this table is capped apart), never what is forwarded.
        self.stats.forwarded_over_budget += 1
        self._forward_attempt(message, data, interface, now)

    def _forward_attempt(
        self, message: Message, received: bytes, arrival: Hashable, now: float
    ) -> None:
        # §4.1: "Messages with a hop limit of 0 SHOULD be processed but MUST NOT be
        # forwarded."
        if message.hop_limit == 0:
            self.stats.hop_limit_reached += 1
            return
        others = self._onward.get(arrival)
        if others is None:
            others = self._onward[arrival] = [i for i in self._interfaces if i != arrival]
        if not others:
            return
        # §2.4.3: "Decrement Hop Limit. For each active interface: (except the interface
        # the Claim-Attempt was received on) Send copy ... to UIAP multicast group."
        data = with_hop_limit(as_encoded(message, received), self._next_hop_limit(message))
        self.stats.forwarded += len(others)
        self._send([Transmit(interface, MULTICAST, data) for interface in others], now)

    def _next_hop_limit(self, message: Message) -> int:
        # §4.1: the hop limit "is originally set to 32, and is decremented by the sending
        # device each time a UIAP message is forwarded". Choice (§4.1 is silent on larger
        # values): a received hop limit above the larger of 32 and our own floods' is
        # clamped to it, so a misbehaving sender cannot send a flood further than a
        # well-behaved one could.
        return min(message.hop_limit - 1, max(self.config.hop_limit, UIAP_HOP_LIMIT))

    def _on_deny(
        self,
        message: Message,
        received: bytes,
        interface: Hashable,
        source: Hashable,
        now: float,
    ) -> None:
        self.stats.denies_received += 1
        key = message_key(message.device_id, message.sequence)
        record = self._floods.find(key) or self._own_floods.find(key) or self._overflow.find(key)
        if record is None:
            if message.device_id == self.device_id and not self._sequences.was_issued(
                message.sequence
            ):
                self._suspect_device_id_conflict(message, interface, source)
            # §4.3.2: "If a match is not found, it SHOULD silently discard the Claim-Deny."
            self._drop(DropReason.DENY_UNMATCHED, interface, source)
            return
        if record.own_claim is not None:
            # §4.3.2: a match "originated by this device" is not forwarded.
            if record.deny_sent:
                # A further copy (``copies``), or a second defender: already acted on.
                self._drop(DropReason.DENY_COPY, interface, source)
                return
            record.deny_sent = True
            self._deny_for_own_flood(record.own_claim, record.own_run, interface, source)
            return
        self._foreign_attempt_denied(message)
        self._forward_deny(message, received, record, interface, source, now)

    def _forward_deny(
        self,
        message: Message,
        received: bytes,
        record: FloodRecord,
        interface: Hashable,
        source: Hashable,
        now: float,
    ) -> None:
        if record.deny_sent:
            # §4.3.2: "SHOULD NOT forward more than one Claim-Deny per Claim-Attempt
            # message. After the first, additional Claim-Deny messages SHOULD be silently
            # dropped."
            self._drop(DropReason.DENY_ALREADY_SENT, interface, source)
        elif message.hop_limit == 0:
            # §4.1: "Messages with a hop limit of 0 SHOULD be processed but MUST NOT be
            # forwarded."
            self._drop(DropReason.DENY_HOP_LIMIT, interface, source)
        elif record.interface not in self._interfaces:
            # Choice (§4.3.2 assumes the interface is still there): the path back is gone.
            self._drop(DropReason.DENY_INTERFACE_GONE, interface, source)
        else:
            # §2.4.5: "Forwarding a Claim-Deny message is similar to sending one, except
            # that the hop limit is decremented rather than being reset."
            record.deny_sent = True
            self.stats.denies_forwarded += 1
            data = with_hop_limit(as_encoded(message, received), self._next_hop_limit(message))
            self._send([Transmit(record.interface, record.sender, data)], now)

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
        self._emit(
            DeviceIDConflictSuspected(message.sequence, interface, source, resequenced=close)
        )


def _decodes(data: bytes) -> bool:
    try:
        decode(data)
    except DecodeError:
        return False
    return True
