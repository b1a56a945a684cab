"""Opt-in datagram authentication for UIAP: an HMAC-SHA256 trailer with replay protection.

UIAP §7: "each recipient must be able to authenticate the sender of every UIAP message",
and the draft recommends IPsec with a manually keyed shared SA. Where IPsec is not available
this module offers the same guarantee inside the datagram, modelled on Babel's MAC scheme
(RFC 8967) and leaving the base wire format untouched: the UIAP message goes out as it is,
followed by a fixed trailer that a receiver without a key sees as trailing octets (and the
UIAP decoder rejects), and that a receiver with a key checks and strips before its engine
sees anything.

Trailer (:data:`TRAILER_OCTETS` = 48 octets, big-endian), after the UIAP message::

    octets 0-7    Index: random, chosen at every start and whenever PC would wrap
    octets 8-11   PC, the packet counter: +1 for every datagram sealed under this Index
    octets 12-13  Key ID of the key that made the MAC
    octets 14-45  MAC = HMAC-SHA256(key, pseudo-header | message | octets 0-13)
    octets 46-47  0xA7 0x01: trailer kind and version

Pseudo-header (RFC 8967 §4.1: the MAC covers the addresses the packet travelled between):
the source address and the destination address, 16 octets each (an IPv4 address as its
IPv4-mapped IPv6 form), without a scope ID, which is local to each host. Ports are not
covered: the sans-I/O caller passes addresses only, and the destination already tells a
flood (the group) from a Claim-Deny (unicast to the previous hop).

Replay protection, with no synchronised clocks and no state that survives a reboot
(RFC 8967 §1.1 and §2): a sender never seals two datagrams with the same (Index, PC); a
receiver keeps, per sender (source address, arrival interface), the highest PC seen under
each of the last :attr:`AuthConfig.indices_per_sender` Indexes, separately for multicast and
unicast destinations (RFC 9467's relaxation, so a Claim-Deny overtaking a flood is not
mistaken for a replay), and accepts a datagram only if its PC is higher.

Choice (RFC 8967 §4.3 challenges a new Index before accepting it): no challenge, because a
challenge needs the receiver to originate datagrams of its own, which this trailer over a
one-way transport cannot do. What that means: a sender that restarts forgets its PC, but it
also draws a new random Index (64 bits, so it never meets an Index it used before), and a
receiver accepts a new Index at once, keeping the old ones (with their PCs) to refuse their
replays. A recorded datagram can therefore be replayed with success only under an Index its
receiver has forgotten: after the receiver restarted, after the sender's entry expired
(:attr:`AuthConfig.sender_expiry`) or when more than ``indices_per_sender`` newer Indexes
pushed it out. Such a replay is accepted once per datagram and in PC order; for UIAP it can
re-send an old Claim-Attempt (denied or forwarded as a new one would be) or re-announce an
old X+R claim for proxy defense within its lifetime (UIAP §5.1). A challenge would close
that window; it is the price of a transport that only seals and opens.

The sender table is keyed by (source, arrival interface), because link-local addresses are
unique only per link, and the interface is not under the MAC (a scope ID is local to each
host): a datagram recorded on one link and replayed on another link of the receiver passes
once there if that receiver has not seen the sender's Index on that interface (then it is a
replay), with the same cost as the forgotten-Index window above; docs/uiap.md says more.

Only site members hold the key, so the sender table fills only with authenticated senders;
it still has a cap (:attr:`AuthConfig.max_senders`) and an expiry, and a full table refuses
new senders (counted) rather than forget a known one and reopen its replay window.

This module is sans-I/O: keys come as bytes (the daemon reads the key file), time as a
``clock`` callable and the Index from an ``entropy`` callable, both passed in.

References: UIAP §7; RFC 8967 §1.1, §2, §3, §4.1-§4.3 (Index, PC, pseudo-header, neighbour
table); RFC 9467 (separate multicast and unicast counters); RFC 2104 §3 (key length).
"""

from __future__ import annotations

import enum
import functools
import hashlib
import hmac
import ipaddress
import struct
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from uuidkit.errors import UIAPError

__all__ = [
    "INDEX_OCTETS",
    "MIN_KEY_OCTETS",
    "TRAILER_OCTETS",
    "AuthConfig",
    "AuthDrop",
    "AuthError",
    "AuthStats",
    "Authenticator",
    "SiteKeys",
    "parse_key_file",
]

#: Octets of the trailer's Index: random at every start (RFC 8967 §3).
INDEX_OCTETS: Final = 8
#: Octets of the trailer's MAC: an HMAC-SHA256 output.
MAC_OCTETS: Final = 32
#: RFC 2104 §3: a key shorter than the hash output (32 octets for SHA-256) is "strongly
#: discouraged".
MIN_KEY_OCTETS: Final = 32
MAX_KEY_OCTETS: Final = 64
_MARKER: Final = b"\xa7\x01"
_HEAD: Final = struct.Struct("!8sIH")
#: Octets the trailer adds after the UIAP message (see the module docstring, UIAP §7).
TRAILER_OCTETS: Final = _HEAD.size + MAC_OCTETS + len(_MARKER)
_PC_LIMIT: Final = 1 << 32
_V4_MAPPED: Final = b"\0" * 10 + b"\xff\xff"


class AuthError(UIAPError):
    """A key file or key set that cannot be used (``line`` names the line, 1-based).

    References: UIAP §7.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class AuthDrop(enum.Enum):
    """Why an incoming datagram was refused before the engine saw it.

    References: UIAP §7.
    """

    #: Ends with the trailer marker but is shorter than a trailer.
    TRUNCATED = "auth-truncated"
    #: No trailer marker: an unauthenticated datagram.
    NO_TRAILER = "auth-missing"
    #: A Key ID this site does not accept (another site, or a retired key).
    UNKNOWN_KEY = "auth-unknown-key"
    #: The MAC does not match: a forgery, a damaged datagram or a different key.
    BAD_MAC = "auth-bad-mac"
    #: PC not above the highest seen for this sender and Index: a replay.
    REPLAY = "auth-replay"
    #: An address that is not an IP address.
    BAD_ADDRESS = "auth-bad-address"
    #: A new sender while the sender table is full of live entries.
    TABLE_FULL = "auth-table-full"


@dataclass(frozen=True, slots=True)
class SiteKeys:
    """The keys of a site: every key in ``keys`` is accepted, ``send_key_id`` seals.

    Rollover (RFC 8967 §1.1 "graceful key rotation"): add the new key on every host
    (accepted, not sent), then make it the send key everywhere, then remove the old one.

    References: UIAP §7 (Security Considerations).
    """

    keys: Mapping[int, bytes]
    send_key_id: int

    def __post_init__(self) -> None:
        if self.send_key_id not in self.keys:
            raise AuthError(f"send key {self.send_key_id} is not among the keys")
        for key_id, key in self.keys.items():
            if not 0 <= key_id <= 0xFFFF:
                raise AuthError(f"key id {key_id} is not 0 .. 65535")
            if not MIN_KEY_OCTETS <= len(key) <= MAX_KEY_OCTETS:
                raise AuthError(
                    f"key {key_id} has {len(key)} octets, expected "
                    f"{MIN_KEY_OCTETS} .. {MAX_KEY_OCTETS}"
                )


def looks_sealed(data: bytes) -> bool:
    """True when ``data`` ends with this module's trailer marker and is long enough to hold
    a UIAP header and a trailer: an authenticated datagram, seen by a host without the key.

    References: UIAP §4.1, §7.
    """
    return len(data) >= 36 + TRAILER_OCTETS and data.endswith(_MARKER)


def parse_key_file(text: str) -> SiteKeys:
    """Parse a key file: one ``KEY-ID HEX-KEY [send]`` per line; ``#`` starts a comment.

    Exactly one key is marked ``send`` unless the file holds a single key. Errors name the
    line. (Reading the file, and refusing one that others may read, is the caller's job.)

    References: UIAP §7.
    """
    keys: dict[int, bytes] = {}
    senders: list[int] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) not in (2, 3) or (len(words) == 3 and words[2] != "send"):
            raise AuthError(f"line {number}: expected 'KEY-ID HEX-KEY [send]'", number)
        if not words[0].isdecimal() or not words[0].isascii():
            raise AuthError(f"line {number}: key id {words[0]!r} is not a number", number)
        key_id = int(words[0])
        if key_id in keys:
            raise AuthError(f"line {number}: key id {key_id} appears twice", number)
        try:
            keys[key_id] = bytes.fromhex(words[1])
        except ValueError:
            raise AuthError(f"line {number}: key {key_id} is not hexadecimal", number) from None
        if len(words) == 3:
            senders.append(key_id)
    if not keys:
        raise AuthError("the key file holds no key")
    if len(senders) > 1:
        raise AuthError(f"several keys are marked 'send': {senders}")
    if not senders and len(keys) > 1:
        raise AuthError("several keys and none marked 'send'")
    try:
        return SiteKeys(keys, senders[0] if senders else next(iter(keys)))
    except AuthError as error:
        raise AuthError(f"key file: {error}") from None


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """Limits of the receiver's sender table.

    References: UIAP §7 (Security Considerations), §9.
    """

    #: Senders (source address, interface) remembered at most, in entries.
    max_senders: int = 4096
    #: Seconds after its last accepted datagram that a sender's entry is forgotten.
    sender_expiry: float = 86400.0
    #: Indexes remembered per sender, each with its highest PC, in Indexes.
    indices_per_sender: int = 4

    def __post_init__(self) -> None:
        if self.max_senders < 1 or self.indices_per_sender < 1:
            raise AuthError("max_senders and indices_per_sender must be >= 1")
        if not self.sender_expiry > 0:
            raise AuthError("sender_expiry must be > 0 seconds")


@dataclass(slots=True)
class AuthStats:
    """Counts of sealed, accepted and dropped datagrams (drops by reason).

    References: UIAP §7.
    """

    sealed: int = 0
    accepted: int = 0
    new_indices: int = 0
    dropped: Counter[AuthDrop] = field(default_factory=Counter)


@dataclass(slots=True)
class _Sender:
    #: (Index, multicast destination?) -> highest PC accepted; insertion order = age.
    highest: dict[tuple[bytes, bool], int]
    last_seen: float


def _address_octets(address: object) -> bytes | None:
    if not isinstance(address, str):
        return None
    return _parse_address(address)


# A site has few addresses; the cache is bounded so forged sources cannot grow it.
@functools.lru_cache(maxsize=1024)
def _parse_address(address: str) -> bytes | None:
    try:
        parsed = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv4Address):
        return _V4_MAPPED + parsed.packed
    return parsed.packed


class Authenticator:
    """Seals outgoing and opens incoming UIAP datagrams for one device.

    ``seal(data, source, destination, interface)`` returns the datagram with its trailer;
    ``open(...)`` returns the UIAP message without it, or ``None`` when the datagram must be
    dropped (counted in :attr:`stats` by :class:`AuthDrop`). ``open`` never raises.
    ``entropy(n)`` returns ``n`` random octets (the Index); ``clock()`` returns seconds from
    a monotonic clock (only for expiring the sender table).

    References: RFC 8967 §4.1-§4.3; UIAP §7.
    """

    def __init__(
        self,
        keys: SiteKeys,
        entropy: Callable[[int], bytes],
        clock: Callable[[], float],
        config: AuthConfig | None = None,
    ) -> None:
        self.keys = keys
        self.config = config or AuthConfig()
        self.stats = AuthStats()
        self._entropy = entropy
        self._clock = clock
        self._index = self._new_index()
        self._pc = 0
        self._senders: dict[tuple[str, str], _Sender] = {}

    def _new_index(self) -> bytes:
        index = bytes(self._entropy(INDEX_OCTETS))
        if len(index) != INDEX_OCTETS:
            raise AuthError(f"entropy returned {len(index)} octets, expected {INDEX_OCTETS}")
        return index

    def replace_keys(self, keys: SiteKeys) -> None:
        """Use a new key set (a reloaded key file); the sender table is kept."""
        self.keys = keys

    @property
    def senders(self) -> int:
        """Senders currently in the table."""
        return len(self._senders)

    def seal(self, data: bytes, source: str, destination: str, interface: str) -> bytes:
        """``data`` followed by its trailer (RFC 8967 §4.2). Raises :class:`AuthError`
        for an address that is not an IP address (a caller bug, not network input)."""
        pseudo = self._pseudo_header(source, destination)
        if pseudo is None:
            raise AuthError(f"cannot authenticate between {source!r} and {destination!r}")
        # RFC 8967 §4.2: the (Index, PC) pair is never reused; when PC would wrap, a new
        # Index is drawn.
        self._pc += 1
        if self._pc >= _PC_LIMIT:
            self._index, self._pc = self._new_index(), 1
        key_id = self.keys.send_key_id
        head = _HEAD.pack(self._index, self._pc, key_id)
        mac = hmac.digest(self.keys.keys[key_id], pseudo + data + head, hashlib.sha256)
        self.stats.sealed += 1
        return data + head + mac + _MARKER

    def open(self, data: bytes, source: str, destination: str, interface: str) -> bytes | None:
        """The UIAP message inside ``data``, or ``None`` (dropped, counted)."""
        reason = self._check(data, source, destination, interface)
        if reason is not None:
            self.stats.dropped[reason] += 1
            return None
        self.stats.accepted += 1
        return data[:-TRAILER_OCTETS]

    def _check(self, data: bytes, source: str, destination: str, interface: str) -> AuthDrop | None:
        if data[-2:] != _MARKER:
            return AuthDrop.NO_TRAILER
        if len(data) < TRAILER_OCTETS:
            return AuthDrop.TRUNCATED
        pseudo = self._pseudo_header(source, destination)
        if pseudo is None:
            return AuthDrop.BAD_ADDRESS
        body_end = len(data) - TRAILER_OCTETS
        mac_start = body_end + _HEAD.size
        index, pc, key_id = _HEAD.unpack_from(data, body_end)
        key = self.keys.keys.get(key_id)
        if key is None:
            return AuthDrop.UNKNOWN_KEY
        expected = hmac.digest(key, pseudo + data[:mac_start], hashlib.sha256)
        if not hmac.compare_digest(expected, data[mac_start : mac_start + MAC_OCTETS]):
            return AuthDrop.BAD_MAC
        # ff00::/8, or an IPv4-mapped 224.0.0.0/4.
        multicast = pseudo[16] == 0xFF or (pseudo[16:28] == _V4_MAPPED and pseudo[28] >> 4 == 0xE)
        return self._check_fresh((source, str(interface)), (index, multicast), pc)

    def _check_fresh(
        self, sender_key: tuple[str, str], slot: tuple[bytes, bool], pc: int
    ) -> AuthDrop | None:
        """RFC 8967 §4.3: accept only a PC above the highest seen under this Index."""
        now = self._clock()
        sender = self._senders.get(sender_key)
        if sender is not None and now - sender.last_seen > self.config.sender_expiry:
            del self._senders[sender_key]
            sender = None
        if sender is None:
            if len(self._senders) >= self.config.max_senders and not self._expire(now):
                return AuthDrop.TABLE_FULL
            sender = self._senders[sender_key] = _Sender({}, now)
        highest = sender.highest.get(slot)
        if highest is not None and pc <= highest:
            return AuthDrop.REPLAY
        if highest is None:
            self.stats.new_indices += 1
            indices = {index for index, _ in sender.highest}
            if slot[0] not in indices and len(indices) >= self.config.indices_per_sender:
                oldest = next(iter(sender.highest))[0]
                for stale in [s for s in sender.highest if s[0] == oldest]:
                    del sender.highest[stale]
        sender.highest.pop(slot, None)
        sender.highest[slot] = pc
        sender.last_seen = now
        # Most recently seen senders last, so expiry scans from the front.
        self._senders[sender_key] = self._senders.pop(sender_key)
        return None

    def _expire(self, now: float) -> bool:
        """Forget senders idle longer than the expiry; true if any was forgotten."""
        expired = [
            key
            for key, sender in self._senders.items()
            if now - sender.last_seen > self.config.sender_expiry
        ]
        for key in expired:
            del self._senders[key]
        return bool(expired)

    @staticmethod
    def _pseudo_header(source: object, destination: object) -> bytes | None:
        source_octets = _address_octets(source)
        destination_octets = _address_octets(destination)
        if source_octets is None or destination_octets is None:
            return None
        return source_octets + destination_octets
