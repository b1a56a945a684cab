"""The transport's configuration: where UIAP datagrams travel and how the driver behaves.

References: UIAP §2.3, §3.1, §4.1, §8.1, §10; RFC 4727 (the experiment group and ports).
"""

from __future__ import annotations

import dataclasses
import enum
import ipaddress
from dataclasses import dataclass

from uuidkit.errors import TransportError
from uuidkit.uiap.constants import (
    UIAP_CLAIM_PORT,
    UIAP_MULTICAST_ADDR_IPV4,
    UIAP_MULTICAST_ADDR_IPV6,
    UIAP_REPLY_PORT,
)
from uuidkit.uiap.engine_types import EngineConfig

__all__ = ["IPV6_UNFRAGMENTED_PAYLOAD_OCTETS", "Family", "TransportConfig"]

#: The largest UDP payload IPv6 always carries unfragmented, in octets: the minimum link
#: MTU of 1280 (RFC 8200 §5) less the 40-octet IPv6 and 8-octet UDP headers. The largest
#: UIAP message is 546 octets (UIAP §4.1); the rest leaves room for an authentication
#: trailer.
IPV6_UNFRAGMENTED_PAYLOAD_OCTETS = 1280 - 40 - 8


class Family(enum.Enum):
    """The IP version UIAP runs over (UIAP §2.3: IPv6, "could equally be ... IPv4").

    References: UIAP §2.3 (IPv6, or equally IPv4), §8.1.
    """

    IPV6 = "ipv6"
    IPV4 = "ipv4"


_UDP_PORTS = range(1, 0x1_0000)


@dataclass(frozen=True, slots=True)
class TransportConfig:
    """How one node uses the network. Every field has its unit; the defaults are the draft's.

    References: UIAP §2.3, §3.1, §4.2.2.1, §4.3.2, §8.1, §10; RFC 4727.
    """

    #: Interface names to participate on; ``None`` = every interface that is up, can
    #: multicast, is not loopback and has a link-local address of ``family``. A named
    #: interface that does not exist makes ``start()`` raise :class:`TransportError`; one
    #: that is down is used once it comes up.
    interfaces: tuple[str, ...] | None = None
    #: IP version of this run.
    family: Family = Family.IPV6
    #: UIAP_MULTICAST_ADDR over IPv6 (text form), joined by interface index (§3.1).
    group: str = UIAP_MULTICAST_ADDR_IPV6
    #: UIAP_MULTICAST_ADDR over IPv4 (text form), used when ``family`` is IPv4.
    ipv4_group: str = UIAP_MULTICAST_ADDR_IPV4
    #: UIAP_CLAIM_PORT, the UDP port number of Claim-Attempt floods (§10).
    port: int = UIAP_CLAIM_PORT
    #: UIAP_REPLY_PORT, the UDP port number of unicast Claim-Deny replies (§4.3.2, §10).
    reply_port: int = UIAP_REPLY_PORT
    #: Largest datagram accepted or sent, in octets (larger ones are dropped as oversized).
    max_datagram_octets: int = IPV6_UNFRAGMENTED_PAYLOAD_OCTETS
    #: UIAP_CLAIM_PERIOD in seconds, passed to the engine (§10); ``None`` keeps the
    #: engine configuration's value.
    claim_period: float | None = None
    #: UIAP_CLAIM_TIMEOUT in seconds, passed to the engine (§10); ``None`` keeps the
    #: engine configuration's value.
    claim_timeout: float | None = None
    #: IP hop limit (IPv6) / TTL (IPv4) of every datagram sent, in hops: 1, link-local only.
    ip_hop_limit: int = 1
    #: Seconds between interface rescans; netlink notifications also trigger a rescan at
    #: once where the kernel offers them.
    interface_poll_interval: float = 2.0
    #: Receive buffer asked of the kernel per socket, in octets: room for bursts (and
    #: floods) while the node is busy. Root may exceed net.core.rmem_max.
    receive_buffer_octets: int = 1 << 20
    #: Most datagrams read from one socket per wake-up, so one busy socket cannot starve
    #: the timer or the other sockets, in datagrams.
    receive_batch: int = 64
    #: Seconds between two log lines of the same kind about network trouble.
    log_interval: float = 10.0

    def __post_init__(self) -> None:
        names = self.interfaces
        if names is not None and (
            isinstance(names, str) or not all(isinstance(n, str) and n for n in names)
        ):
            raise TransportError("interfaces must be a tuple of names or None", "interfaces")
        if names is not None:
            object.__setattr__(self, "interfaces", tuple(names))
        for name in ("port", "reply_port"):
            value = getattr(self, name)
            if not isinstance(value, int) or value not in _UDP_PORTS:
                raise TransportError(f"{name} must be a UDP port 1 .. 65535, got {value!r}", name)
        if self.port == self.reply_port:
            raise TransportError("port and reply_port must differ (UIAP §10)", "reply_port")
        self._check_group("group", ipaddress.IPv6Address, "ff02::/16")
        self._check_group("ipv4_group", ipaddress.IPv4Address, "224.0.0.0/24")
        if not 36 <= self.max_datagram_octets <= 0xFFFF - 8:
            raise TransportError(
                f"max_datagram_octets must be 36 .. 65527, got {self.max_datagram_octets}",
                "max_datagram_octets",
            )
        if not 1 <= self.ip_hop_limit <= 255:
            raise TransportError("ip_hop_limit must be 1 .. 255 hops", "ip_hop_limit")
        for name in ("interface_poll_interval", "log_interval"):
            if not getattr(self, name) > 0:
                raise TransportError(f"{name} must be > 0 seconds", name)
        if self.receive_buffer_octets < 4096:
            raise TransportError("receive_buffer_octets must be >= 4096", "receive_buffer_octets")
        if self.receive_batch < 1:
            raise TransportError("receive_batch must be >= 1 datagram", "receive_batch")
        for name in ("claim_period", "claim_timeout"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                raise TransportError(f"{name} must be >= 0 seconds, got {value!r}", name)

    def _check_group(self, name: str, kind: type, network: str) -> None:
        text = getattr(self, name)
        try:
            address = kind(text)
        except (ValueError, TypeError):
            raise TransportError(f"{name} {text!r} is not an address", name) from None
        # UIAP §2.3 and §3.1: link-local multicast only.
        if address not in ipaddress.ip_network(network):
            raise TransportError(f"{name} {text} is not link-local multicast ({network})", name)
        # The canonical text, as the kernel reports destinations (RFC 5952).
        object.__setattr__(self, name, address.compressed)

    @property
    def active_group(self) -> str:
        """The multicast group of ``family``."""
        return self.group if self.family is Family.IPV6 else self.ipv4_group

    def apply_timers(self, engine_config: EngineConfig) -> EngineConfig:
        """``engine_config`` with this configuration's timer overrides (UIAP §10)."""
        period, timeout = self.claim_period, self.claim_timeout
        return dataclasses.replace(
            engine_config,
            claim_period=engine_config.claim_period if period is None else period,
            claim_timeout=engine_config.claim_timeout if timeout is None else timeout,
        )
