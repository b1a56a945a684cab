"""Reading the site key file: only a file that nobody but its owner can read (like ssh).

References: UIAP §7 (a manually configured shared key); RFC 8967 §1.1 (keys are the only
persistent state).
"""

from __future__ import annotations

import os
import stat
from typing import Final

from uuidkit.uiap.auth import AuthError, SiteKeys, parse_key_file

__all__ = ["read_key_file"]

#: A key file is a few lines; anything larger is not one, in octets.
MAX_KEY_FILE_OCTETS: Final = 64 * 1024


def read_key_file(path: str) -> SiteKeys:
    """The keys in ``path``; :class:`AuthError` if the file is unsafe or malformed.

    Refused: a symlink, anything but a regular file, a file owned by another user than
    the daemon's (root's is accepted), and a file its group or others may read or write.

    References: UIAP §7 (Security Considerations).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as error:
        raise AuthError(f"key file {path}: {error.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise AuthError(f"key file {path} is not a regular file")
    with os.fdopen(fd, "rb") as file:
        if info.st_uid not in (os.geteuid(), 0):
            raise AuthError(f"key file {path} belongs to uid {info.st_uid}, not to the daemon")
        if info.st_mode & 0o077:
            raise AuthError(
                f"key file {path} has mode {stat.S_IMODE(info.st_mode):04o}; "
                "others may read it (chmod 600)"
            )
        data = file.read(MAX_KEY_FILE_OCTETS + 1)
    if len(data) > MAX_KEY_FILE_OCTETS:
        raise AuthError(f"key file {path} is larger than {MAX_KEY_FILE_OCTETS} octets")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise AuthError(f"key file {path} is not ASCII text") from None
    try:
        return parse_key_file(text)
    except AuthError as error:
        raise AuthError(f"key file {path}: {error}", error.line) from None
