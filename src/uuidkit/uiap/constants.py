"""UIAP protocol constants, each with its unit and the section of the draft that sets it.

The draft's §10 suggests defaults for the timers; it leaves the multicast address and the
two UDP ports to IANA (§8.1), which never assigned them. uuidkit therefore defaults to the
values IANA reserves for experiments (RFC 4727, "RFC3692-style experiments"):

* IPv6: ``ff02::114``, the link-local scope (``2``) of the variable-scope experiment group
  ``FF0X::114`` (RFC 4727; link-local scope per RFC 4291 §2.7);
* IPv4: ``224.0.0.254``, the experiment group in the Local Network Control Block, which
  routers never forward (RFC 4727; RFC 5771 §4);
* UDP ports ``1021`` (claims) and ``1022`` (replies), the two experiment ports (RFC 4727).

Deployments that want other values pass a :class:`MulticastConfig`.

References: UIAP §2.4.5, §3.1, §4.1, §8.1, §10; RFC 4727; RFC 3692.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_MULTICAST",
    "HEADER_LENGTH_OCTETS",
    "MAX_DATAGRAM_OCTETS",
    "MAX_UID_OCTETS",
    "SEQUENCE_MODULUS",
    "UIAP_CLAIM_PERIOD_S",
    "UIAP_CLAIM_PORT",
    "UIAP_CLAIM_TIMEOUT_S",
    "UIAP_HOP_LIMIT",
    "UIAP_MULTICAST_ADDR_IPV4",
    "UIAP_MULTICAST_ADDR_IPV6",
    "UIAP_NEW_CLAIM_ATTEMPTS",
    "UIAP_RECLAIM_ATTEMPTS",
    "UIAP_REPLY_PORT",
    "UIAP_VERSION",
    "MulticastConfig",
]

#: The protocol version this implementation speaks (UIAP §4.1 Version: "This is version 0x01").
UIAP_VERSION: Final = 0x01

#: Hop limit of a new Claim-Attempt and of every Claim-Deny, in hops (UIAP §4.1 Hop Limit:
#: "originally set to 32"; §2.4.5 and §4.3.1: a Claim-Deny resets it to 32).
UIAP_HOP_LIMIT: Final = 32

#: Time between the Claim-Attempt floods of one claim, in seconds (UIAP §10: 500 ms).
UIAP_CLAIM_PERIOD_S: Final = 0.5

#: Time to wait for a Claim-Deny after a flood is initiated, in seconds (UIAP §10: 1 second).
UIAP_CLAIM_TIMEOUT_S: Final = 1.0

#: Claim-Attempt floods sent for a new claim, in messages (UIAP §2.4.1, §3: "3 attempts").
UIAP_NEW_CLAIM_ATTEMPTS: Final = 3

#: Claim-Attempt floods sent for a reclaim, in messages (UIAP §4.4: "a single Claim-Attempt").
UIAP_RECLAIM_ATTEMPTS: Final = 1

#: Largest UID, in octets (UIAP §1.1 "up to 255 octets"; §4.1 UID Len is one octet).
MAX_UID_OCTETS: Final = 255

#: Length of the fixed part of every message, in octets: nine 32-bit rows of the §4.1 figure.
HEADER_LENGTH_OCTETS: Final = 36

#: Longest valid datagram, in octets: the header and two 255-octet UIDs of a range (UIAP §4.1).
MAX_DATAGRAM_OCTETS: Final = HEADER_LENGTH_OCTETS + 2 * MAX_UID_OCTETS

#: Sequence numbers are 32-bit and wrap: "0 is the sequence number that follows 2^32-1"
#: (UIAP §4.5.1).
SEQUENCE_MODULUS: Final = 1 << 32

#: UIAP_MULTICAST_ADDR over IPv6 (UIAP §3.1, §10; IANA never assigned one): RFC 4727's
#: experiment group FF0X::114 at link-local scope.
UIAP_MULTICAST_ADDR_IPV6: Final = "ff02::114"

#: UIAP_MULTICAST_ADDR over IPv4: RFC 4727's link-local experiment group.
UIAP_MULTICAST_ADDR_IPV4: Final = "224.0.0.254"

#: UIAP_CLAIM_PORT, the UDP port of Claim-Attempt floods (UIAP §10): RFC 4727 experiment port 1.
UIAP_CLAIM_PORT: Final = 1021

#: UIAP_REPLY_PORT, the UDP port of unicast Claim-Deny replies (UIAP §10): RFC 4727 port 2.
UIAP_REPLY_PORT: Final = 1022


@dataclass(frozen=True, slots=True)
class MulticastConfig:
    """Where UIAP messages travel: the group addresses and UDP ports the draft leaves to IANA.

    The defaults are the IANA experiment values described in the module docstring; the
    draft names the address both UIAP_MULTICAST_ADDR (§3.1, §10) and UIAP_MULTI_ADDR (§8.1).

    References: UIAP §3.1, §8.1, §10; RFC 4727.
    """

    #: Link-local IPv6 multicast group (text form), joined on every participating interface.
    ipv6_group: str = UIAP_MULTICAST_ADDR_IPV6
    #: Link-local IPv4 multicast group (text form) for UIAP over IPv4 (UIAP §2.3).
    ipv4_group: str = UIAP_MULTICAST_ADDR_IPV4
    #: UDP port number that Claim-Attempt floods are sent to.
    claim_port: int = UIAP_CLAIM_PORT
    #: UDP port number that unicast Claim-Deny replies are sent to.
    reply_port: int = UIAP_REPLY_PORT


#: The configuration used when none is given.
DEFAULT_MULTICAST: Final = MulticastConfig()
