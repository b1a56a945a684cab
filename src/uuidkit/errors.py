"""Every error uuidkit raises on purpose, in one hierarchy.

::

    ValueError
    └── UUIDKitError                 base of all uuidkit errors
        ├── InvalidUUID              text, bytes or int that is not a UUID (``.position``)
        ├── InvalidField             a layout field out of range (``.field``)
        ├── GeneratorError           a generator policy refused to produce a value
        │   ├── ClockRegressionError     the clock went back further than the policy allows
        │   ├── CounterOverflowError     the per-tick counter/budget is exhausted
        │   └── NodeUnavailableError     no claimed node ID to build node-bearing UUIDs with
        ├── StateFileError           a generator state file cannot be used
        └── UIAPError                base of the UIAP errors
            ├── InvalidMessage       a Message field out of range (also an InvalidField)
            ├── DecodeError          a datagram that is not a valid UIAP message
            │   │                    (``.field``, ``.offset``)
            │   └── UnsupportedVersion   a well-formed header with an unknown Version
            ├── DomainIDError        malformed Domain ID text or pattern (``.position``)
            ├── SpaceError           invalid UID / UID space, or incomparable spaces
            ├── EngineError          misuse of the UIAP engine API (a bad handle,
            │                        lifetime, device ID or configuration)
            ├── TransportError       a UIAP network transport that cannot be set up (an
            │                        interface that does not exist, a bad configuration,
            │                        an unusable device-ID state file) (``.field``)
            └── SimulationError      a simulator topology, scenario or run that cannot
                                     proceed (``.field``)

Every class subclasses :class:`ValueError`, so ``except ValueError`` keeps working for
callers that treat uuidkit like the standard library's :mod:`uuid`. Messages say what was
wrong, where, and what was expected: ``invalid character 'g' at 14``.

References: RFC 9562 §4 (ABNF); UIAP §4.1 (the wire format DecodeError reports on).
"""

from __future__ import annotations

__all__ = [
    "ClockRegressionError",
    "CounterOverflowError",
    "DecodeError",
    "DomainIDError",
    "EngineError",
    "GeneratorError",
    "InvalidField",
    "InvalidMessage",
    "InvalidUUID",
    "NodeUnavailableError",
    "SimulationError",
    "SpaceError",
    "StateFileError",
    "TransportError",
    "UIAPError",
    "UUIDKitError",
    "UnsupportedVersion",
]


class UUIDKitError(ValueError):
    """Base of every error uuidkit raises on purpose.

    References: RFC 9562 §4 (the forms a UUID takes), §5 (the fields of each version).
    """


class InvalidUUID(UUIDKitError):
    """Input that is not a UUID in the accepted form.

    ``position`` is the 0-based index of the offending character or byte, or ``None`` when
    the problem is the input as a whole (its length or type).

    References: RFC 9562 §4 (ABNF, Figures 1-4).
    """

    def __init__(
        self, message: str, position: int | None = None, *, index: int | None = None
    ) -> None:
        super().__init__(message)
        self.position = position
        #: In a bulk operation (uuidkit.bulk), the index of the first bad element.
        self.index = index


class InvalidField(UUIDKitError):
    """A field given to a layout builder is out of its range (``field`` names it).

    References: RFC 9562 §5 (the field widths of each layout).
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class GeneratorError(UUIDKitError):
    """A generator's policy refused to produce a value rather than risk a duplicate.

    References: RFC 9562 §6.1, §6.2 (the generator policies that may refuse).
    """


class ClockRegressionError(GeneratorError):
    """The clock went backwards further than the generator's policy accepts.

    References: RFC 9562 §6.1 (clock regression), §6.2.
    """


class CounterOverflowError(GeneratorError):
    """The counter (or the per-tick budget) of the current timestamp is exhausted.

    References: RFC 9562 §6.2 (counter rollover handling).
    """


class NodeUnavailableError(GeneratorError):
    """A node-bearing generator has no node ID it may use: the claim was lost (a collision
    after a site merge, a failed renewal, the daemon gone) and the policy is to raise, or a
    new claim could not be made. ``reason`` says which.

    References: RFC 9562 §6.4 (node IDs in distributed generation); UIAP §2.1.2, §4.4.
    """

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


class StateFileError(UUIDKitError):
    """A generator state file cannot be read, parsed, locked or written.

    References: RFC 9562 §6.3 (stable storage); RFC 4122 §4.2.1.
    """


class UIAPError(UUIDKitError):
    """Base of the UIAP (draft-white-zeroconf-uiap-00) errors.

    References: draft-white-zeroconf-uiap-00.
    """


class InvalidMessage(UIAPError, InvalidField):
    """A UIAP ``Message`` built with a field out of its range or inconsistent with another.

    Both a :class:`UIAPError` (``except UIAPError`` catches every UIAP problem) and an
    :class:`InvalidField` (``.field`` names the field as UIAP §4.1 does).

    References: UIAP §4.1 (field ranges), §4.2.1, §4.3.1.
    """


class DecodeError(UIAPError):
    """A datagram is not a valid UIAP message.

    ``field`` names the message field at fault (as the draft's §4.1 names it) and
    ``offset`` is the byte offset of that field in the datagram.

    References: UIAP §4.1 (the common message format).
    """

    def __init__(self, message: str, field: str | None = None, offset: int | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.offset = offset


class UnsupportedVersion(DecodeError):
    """A UIAP header whose Version this implementation does not speak (UIAP §4.1: MAY discard).

    References: UIAP §4.1 (Version: a device MAY discard other versions).
    """


class DomainIDError(UIAPError):
    """Malformed Domain ID text or pattern (UIAP §6.1); ``position`` is the index at fault.

    References: UIAP §6.1 (writing Domain Identifiers).
    """

    def __init__(
        self, message: str, position: int | None = None, *, index: int | None = None
    ) -> None:
        super().__init__(message)
        self.position = position
        #: In a bulk operation (uuidkit.bulk), the index of the first bad element.
        self.index = index


class SpaceError(UIAPError):
    """An invalid UID or UID space, or two that cannot be compared (UIAP §3.2).

    References: UIAP §3.2.2-§3.2.4 (UID claims, representing and comparing UIDs).
    """


class EngineError(UIAPError):
    """A call into the UIAP engine that it cannot accept: an unknown claim handle or
    interface, a lifetime outside 0 .. 2**32-1 seconds, a device ID outside 1 .. 2**64-1,
    or a configuration value out of range. Never raised for network input.

    References: UIAP §2.4, §3.1 (what a device may claim and how).
    """


class SimulationError(UIAPError):
    """A network simulator topology, scenario file or run that cannot proceed.

    ``field`` names the scenario field, topology parameter or link at fault.

    References: UIAP §2.3 (the link-local multicast network a simulation models).
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class TransportError(UIAPError):
    """A UIAP network transport that cannot be set up as configured.

    ``field`` names the configuration field or setting at fault (``"interfaces"``,
    ``"port"``, ``"state_directory"``...), or is ``None``. Datagrams from the network
    never raise it: they are counted and dropped.

    References: UIAP §2.3 (link-local multicast requirements), §8.1.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field
