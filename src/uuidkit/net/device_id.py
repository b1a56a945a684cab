"""The Originating Device ID of a node (UIAP §4.1): random, or from an interface's EUI-64.

§4.1: the Device ID "SHOULD be constructed in the same way as the Host ID portion of an
IPv6 address. ... A device SHOULD use its own EUI if it has one; otherwise it MAY use the
EUI of one of its interfaces, or choose any suitable ID. ID 0 ... MUST NOT appear".

* ``random`` (the default): 64 bits from the system CSPRNG with the universal/local bit
  cleared (a locally assigned identifier, RFC 4291 Appendix A), so the MAC does not leak
  into every message.
* ``eui64``: the modified EUI-64 of an interface's Ethernet address (RFC 4291 Appendix A:
  ``ff:fe`` inserted in the middle, the universal/local bit inverted).

With a state directory the ID is kept in ``<state_directory>/device-id`` (16 hex digits)
and reused on every start, so a restarting device keeps its identity (and its claims'
Message IDs stay its own, §9). The file is created safely: a temporary file with an
unpredictable name opened ``O_CREAT | O_EXCL | O_NOFOLLOW`` with mode 0600, written,
fsynced, then linked into place (which never replaces an existing file) and the directory
fsynced. It is read as a generator state file is (``read_private_file``): never blocking on a
FIFO, never through a symlink, and refused if it or its directory belongs to another user or
others may write it. An existing file that does not hold a valid ID is an error, never
overwritten.

References: UIAP §4.1, §9; RFC 4291 Appendix A.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal

from uuidkit.errors import StateFileError, TransportError
from uuidkit.generators.statefile import read_private_file
from uuidkit.net.interfaces import discover_interfaces

__all__ = [
    "DEVICE_ID_FILE",
    "device_id_from_mac",
    "load_or_store_device_id",
    "random_device_id",
    "resolve_device_id",
]

#: The file, inside the state directory, that keeps the device ID.
DEVICE_ID_FILE: Final = "device-id"
#: The universal/local bit of the first octet of a modified EUI-64 (RFC 4291 App. A),
#: shifted to its place in a 64-bit integer.
_UNIVERSAL_BIT: Final = 0x02 << 56
_GROUP_BIT: Final = 0x01 << 56


def random_device_id() -> int:
    """64 random bits, locally assigned (u = 0), individual (g = 0), never 0 (§4.1).

    References: UIAP §4.1 (Originating Device ID).
    """
    while True:
        value = int.from_bytes(os.urandom(8)) & ~(_UNIVERSAL_BIT | _GROUP_BIT)
        if value:
            return value


def device_id_from_mac(mac: bytes) -> int:
    """The modified EUI-64 of a 48-bit MAC (RFC 4291 Appendix A).

    References: UIAP §4.1 (Originating Device ID); RFC 4291 Appendix A.
    """
    if len(mac) != 6 or not any(mac):
        raise TransportError(f"not a 48-bit hardware address: {mac.hex(':')}", "mac")
    eui64 = int.from_bytes(mac[:3] + b"\xff\xfe" + mac[3:])
    return eui64 ^ _UNIVERSAL_BIT


def resolve_device_id(
    mode: Literal["random", "eui64"] = "random",
    *,
    interface: str | None = None,
    state_directory: str | os.PathLike[str] | None = None,
) -> int:
    """The device ID to use: stored in ``state_directory`` if one is kept there, else made
    by ``mode`` (and stored there when a directory is given).

    ``eui64`` uses ``interface``'s hardware address (or, without one named, the first
    interface in index order that has one); no such interface is a :class:`TransportError`.

    References: UIAP §4.1 (Originating Device ID).
    """
    if mode not in ("random", "eui64"):
        raise TransportError(f"device ID mode must be 'random' or 'eui64', got {mode!r}", "mode")

    def make() -> int:
        return random_device_id() if mode == "random" else _interface_eui64(interface)

    if state_directory is None:
        return make()
    return load_or_store_device_id(Path(state_directory), make)


def _interface_eui64(interface: str | None) -> int:
    found = discover_interfaces()
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


def load_or_store_device_id(directory: Path, make: Callable[[], int]) -> int:
    """The ID kept in ``directory``, or ``make()`` stored there atomically and returned.

    References: UIAP §4.1 (Originating Device ID).
    """
    path = directory / DEVICE_ID_FILE
    stored = _read(path)
    if stored is not None:
        return stored
    value = make()
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if _store(directory, path, value):
            return value
    except OSError as error:
        raise TransportError(f"cannot write {path}: {error.strerror}", "state_directory") from error
    # Another process stored one first: use it, so every starter agrees.
    stored = _read(path)
    assert stored is not None
    return stored


def _read(path: Path) -> int | None:
    # Read as a generator state file is: a planted FIFO does not block the daemon, and a
    # symlink, a file or directory another user owns or may write, is refused.
    try:
        raw = read_private_file(path)
    except FileNotFoundError:
        return None
    except StateFileError as error:  # UnsafeStateError included
        reason = str(error).removeprefix(f"{path}: ")
        raise TransportError(f"cannot read {path}: {reason}", "state_directory") from error
    text = raw.decode("ascii", "replace").strip()
    if len(text) != 16 or not all(c in "0123456789abcdef" for c in text) or int(text, 16) == 0:
        raise TransportError(
            f"{path} does not hold a device ID (16 lowercase hex digits, not all 0)",
            "state_directory",
        )
    return int(text, 16)


def _store(directory: Path, path: Path, value: int) -> bool:
    """Create ``path`` holding ``value``; False if it already exists (never replaced)."""
    temporary = directory / f".{DEVICE_ID_FILE}.{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, 0o600)
    try:
        try:
            os.write(fd, f"{value:016x}\n".encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False
        _fsync_directory(directory)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)  # our own temporary name, created above


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)
