"""The authentication hook: how a keyed-MAC layer plugs into the transport.

UIAP §7 asks that every recipient "be able to authenticate the sender of every UIAP
message", hop by hop, and recommends IPsec with a manually keyed shared SA. Where IPsec
is not available, the datagram itself can carry a keyed MAC (as RFC 8967 does for Babel).
The transport knows nothing about keys: it calls an :class:`Authenticator` on every
datagram it sends and receives, with the addresses and interface of that hop.

References: UIAP §7; RFC 8967 (MAC authentication for Babel, the trailer model).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Authenticator"]


@runtime_checkable
class Authenticator(Protocol):
    """Seals outgoing and opens incoming datagrams; addresses are text without scope.

    * ``seal`` is applied to every datagram the node sends; it returns the bytes to put on
      the wire (typically the message followed by a MAC trailer). ``source`` is this node's
      link-local address on ``interface``; ``destination`` the group or the unicast next
      hop.
    * ``open`` is applied to every received datagram before the engine sees it; it
      returns the UIAP message to process, or ``None`` to drop the datagram (counted as
      ``auth``). ``source`` is the sender's link-local address, ``destination`` the
      address the datagram was sent to, ``interface`` the arrival interface's name.

    ``open`` must not raise for any input; if it raises anyway, the datagram is dropped
    as ``auth`` and the error logged. If ``seal`` raises, that datagram is not sent
    (``send_failed["seal-error"]``); the node keeps running either way.

    References: UIAP §7; RFC 8967 §4.
    """

    def seal(self, data: bytes, source: str, destination: str, interface: str) -> bytes:
        """The datagram to send for the UIAP message ``data``."""
        ...

    def open(self, data: bytes, source: str, destination: str, interface: str) -> bytes | None:
        """The UIAP message inside the received ``data``, or ``None`` to drop it."""
        ...
