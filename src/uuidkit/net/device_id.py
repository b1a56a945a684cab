"""The Originating Device ID of a node (UIAP §4.1): the one place a device ID is made.

§4.1: the Device ID "SHOULD be constructed in the same way as the Host ID portion of an
IPv6 address. ... A device SHOULD use its own EUI if it has one; otherwise it MAY use the
EUI of one of its interfaces, or choose any suitable ID. ID 0 ... MUST NOT appear". The Host
ID (interface identifier) of an IPv6 address is a modified EUI-64 (the draft cites RFC 2373,
now RFC 4291 Appendix A), whose first octet carries two flag bits:

* ``u`` (0x02, universal/local): 1 when the identifier is universally administered, taken
  from an IEEE EUI; 0 when it is locally assigned (the modified EUI-64 inverts the IEEE
  U/L bit so that a hand-made identifier such as ``::1`` reads as local);
* ``g`` (0x01, individual/group): 0 for an individual identifier, 1 for a group.

Two modes, both made by :func:`make_device_id`:

* ``random`` (the default): 64 bits from the system CSPRNG with ``u = 0`` (locally
  assigned: it claims no IEEE EUI) and ``g = 0`` (one device, not a group), drawn again in
  the 2**-62 case of all zeros; the MAC does not leak into every message. Clearing the two
  bits also keeps clear of every interface identifier RFC 5453 reserves (those have
  ``u = 1`` or ``g = 1``).
* ``eui64``: the modified EUI-64 of an interface's 48-bit MAC (RFC 4291 Appendix A, RFC
  2464 §4): ``ff:fe`` inserted between its third and fourth octets and the U/L bit
  inverted, so a burned-in (universal) MAC gives ``u = 1``. A group (multicast) MAC is not
  an interface's address and is refused.

With a state directory the ID is kept in ``<state_directory>/device-id`` (16 hex digits) and
reused on every start, so a restarting device keeps its identity (and its claims' Message
IDs stay its own, §9). The file is created and read through :mod:`uuidkit._safefile`: a
temporary file with an unpredictable name (``O_CREAT | O_EXCL | O_NOFOLLOW``, mode 0600),
written, fsynced, then linked into place (which never replaces an existing file) and the
directory fsynced; read never blocking on a FIFO, never through a symlink, and refused if it
or its directory belongs to another user or others may write it. An existing file that does
not hold a valid ID is an error, never overwritten.

References: UIAP §4.1, §9; RFC 4291 Appendix A; RFC 2464 §4.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final, Literal, get_args

from uuidkit._safefile import FileSystem, SafeFile
from uuidkit.errors import StateFileError, TransportError
from uuidkit.net.interfaces import InterfaceInfo, discover_interfaces

__all__ = [
    "DEVICE_ID_FILE",
    "DEVICE_ID_MODES",
    "DeviceIDMode",
    "device_id_from_mac",
    "load_or_store_device_id",
    "make_device_id",
    "random_device_id",
    "resolve_device_id",
]

#: The file, inside the state directory, that keeps the device ID.
DEVICE_ID_FILE: Final = "device-id"
#: How a new device ID is made.
DeviceIDMode = Literal["random", "eui64"]
DEVICE_ID_MODES: Final[tuple[str, ...]] = get_args(DeviceIDMode)
#: The universal/local ("u") bit of a modified EUI-64 (RFC 4291 Appendix A), in place in a
#: 64-bit integer (the IEEE U/L bit of a MAC's first octet, the same position).
UNIVERSAL_BIT: Final = 0x02 << 56
#: The individual/group ("g") bit, in place in a 64-bit integer.
GROUP_BIT: Final = 0x01 << 56
_MAC_GROUP_BIT: Final = 0x01
_HEX_DIGITS: Final = frozenset("0123456789abcdef")


def random_device_id(random_bytes: Callable[[int], bytes] | None = None) -> int:
    """64 random bits as a locally assigned (u = 0), individual (g = 0) Host ID, never 0.

    ``random_bytes`` (default :func:`os.urandom`) is the CSPRNG.

    References: UIAP §4.1; RFC 4291 Appendix A.
    """
    draw = random_bytes if random_bytes is not None else os.urandom
    while True:
        value = int.from_bytes(draw(8)) & ~(UNIVERSAL_BIT | GROUP_BIT)
        if value:  # §4.1: "ID 0 (all bits 0) ... MUST NOT appear in a message"
            return value


def device_id_from_mac(mac: bytes) -> int:
    """The modified EUI-64 of a 48-bit MAC: ``ff:fe`` in the middle, U/L bit inverted.

    Refuses (:class:`TransportError`) anything but 6 octets, the all-zero address, and a
    group (multicast) address, which names no single interface.

    References: UIAP §4.1; RFC 4291 Appendix A; RFC 2464 §4.
    """
    if len(mac) != 6 or not any(mac):
        raise TransportError(f"not a 48-bit hardware address: {mac.hex(':')!r}", "mac")
    if mac[0] & _MAC_GROUP_BIT:
        raise TransportError(
            f"{mac.hex(':')} is a group (multicast) address, not an interface's", "mac"
        )
    eui64 = int.from_bytes(mac[:3] + b"\xff\xfe" + mac[3:])
    return eui64 ^ UNIVERSAL_BIT


def make_device_id(
    mode: DeviceIDMode = "random",
    interface: str | None = None,
    *,
    interfaces: Callable[[], Mapping[str, InterfaceInfo]] | None = None,
) -> int:
    """A new device ID made by ``mode``: the one maker every user of UIAP calls.

    ``eui64`` uses ``interface``'s hardware address or, without one named, that of the first
    interface in index order that has one (``interfaces`` lists them, by default
    :func:`~uuidkit.net.interfaces.discover_interfaces`); none is a :class:`TransportError`
    naming the problem.

    References: UIAP §4.1; RFC 4291 Appendix A.
    """
    if mode not in DEVICE_ID_MODES:
        raise TransportError(f"device ID mode must be 'random' or 'eui64', got {mode!r}", "mode")
    if mode == "random":
        return random_device_id()
    found = (interfaces or discover_interfaces)()
    if interface is not None:
        info = found.get(interface)
        if info is None:
            raise TransportError(f"no interface named {interface!r}", "interface")
        if info.mac is None:
            raise TransportError(f"interface {interface!r} has no EUI-48 address", "interface")
        return device_id_from_mac(info.mac)
    for info in sorted(found.values(), key=lambda i: i.index):
        if info.mac is not None:
            return device_id_from_mac(info.mac)
    raise TransportError("no interface with a hardware address for an EUI-64", "interface")


def resolve_device_id(
    mode: DeviceIDMode = "random",
    *,
    interface: str | None = None,
    state_directory: str | os.PathLike[str] | None = None,
) -> int:
    """The device ID to use: stored in ``state_directory`` if one is kept there, else made
    by :func:`make_device_id` (and stored there when a directory is given).

    References: UIAP §4.1, §9.
    """
    if mode not in DEVICE_ID_MODES:
        raise TransportError(f"device ID mode must be 'random' or 'eui64', got {mode!r}", "mode")

    def make() -> int:
        return make_device_id(mode, interface)

    if state_directory is None:
        return make()
    return load_or_store_device_id(Path(state_directory), make)


def load_or_store_device_id(
    directory: Path, make: Callable[[], int], *, filesystem: FileSystem | None = None
) -> int:
    """The ID kept in ``directory``, or ``make()`` stored there atomically and returned.

    ``filesystem`` is the fault-injection seam of :mod:`uuidkit._safefile`.

    References: UIAP §4.1, §9.
    """
    path = directory / DEVICE_ID_FILE
    device_file = SafeFile(path, fs=filesystem, kind="device-ID file")
    stored = _read(device_file)
    if stored is not None:
        return stored
    value = make()
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if device_file.create(f"{value:016x}\n".encode("ascii")):
            return value
    except StateFileError as error:  # UnsafeStateError: the directory is unsafe
        raise _unusable(path, error) from error
    except OSError as error:
        raise TransportError(f"cannot write {path}: {error.strerror}", "state_directory") from error
    # Another process stored one first: use it, so every starter agrees.
    stored = _read(device_file)
    assert stored is not None
    return stored


def _unusable(path: Path, error: StateFileError) -> TransportError:
    reason = str(error).removeprefix(f"{path}: ")
    return TransportError(f"cannot read {path}: {reason}", "state_directory")


def _read(device_file: SafeFile) -> int | None:
    # A planted FIFO does not block the daemon, and a symlink, a file or directory another
    # user owns or may write, is refused.
    try:
        raw = device_file.read()[0]
    except FileNotFoundError:
        return None
    except StateFileError as error:  # UnsafeStateError included
        raise _unusable(Path(device_file.path), error) from error
    text = raw.decode("ascii", "replace").strip()
    if len(text) != 16 or not set(text) <= _HEX_DIGITS or int(text, 16) == 0:
        raise TransportError(
            f"{device_file.path} does not hold a device ID (16 lowercase hex digits, not all 0)",
            "state_directory",
        )
    return int(text, 16)
