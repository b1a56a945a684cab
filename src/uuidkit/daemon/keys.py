"""Reading the site key file: only a file that nobody but its owner can read (like ssh).

References: UIAP §7 (a manually configured shared key); RFC 8967 §1.1 (keys are the only
persistent state).
"""

from __future__ import annotations

from typing import Final

from uuidkit._safefile import SafeFile
from uuidkit.errors import StateFileError
from uuidkit.uiap.auth import AuthError, SiteKeys, parse_key_file

__all__ = ["read_key_file"]

#: A key file is a few lines; anything larger is not one, in octets.
MAX_KEY_FILE_OCTETS: Final = 64 * 1024


def read_key_file(path: str) -> SiteKeys:
    """The keys in ``path``; :class:`AuthError` if the file is unsafe or malformed.

    Read through :mod:`uuidkit._safefile`, never blocking and never through a symlink.
    Refused: anything but a regular file, a file owned by another user than the daemon's
    (root's is accepted), a file its group or others may read or write, and a directory
    another user could swap it in.

    References: UIAP §7 (Security Considerations).
    """
    key_file = SafeFile(
        path, kind="key file", max_octets=MAX_KEY_FILE_OCTETS, loose=0o077, root_may_own=True
    )
    try:
        data = key_file.read()[0]
    except StateFileError as error:  # unsafe, oversized or unreadable
        raise AuthError(f"key file {error}") from None
    except OSError as error:
        raise AuthError(f"key file {path}: {error.strerror}") from None
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise AuthError(f"key file {path} is not ASCII text") from None
    try:
        return parse_key_file(text)
    except AuthError as error:
        raise AuthError(f"key file {path}: {error}", error.line) from None
