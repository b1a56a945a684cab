"""The operating-system calls of a generator state file, one method each, replaceable in tests.

:class:`FileSystem` is re-exported by :mod:`uuidkit.generators.statefile`, which uses it.

References: RFC 9562 §6.3.
"""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile

__all__ = ["FileSystem", "file_type"]


class FileSystem:
    """The operating-system calls a :class:`StateFile` makes, one method each.

    Tests replace methods to inject faults (a full disk, an I/O error, a short write, a crash
    between two steps) and to model what survives a power loss. Each method looks its
    function up when called, so patching :mod:`os` or :mod:`fcntl` reaches it too.

    References: RFC 9562 §6.3.
    """

    def open(self, path: str, flags: int, mode: int = 0o600) -> int:
        return os.open(path, flags, mode)

    def read(self, descriptor: int, size: int) -> bytes:
        return os.read(descriptor, size)

    def write(self, descriptor: int, data: memoryview) -> int:
        return os.write(descriptor, data)

    def fsync(self, descriptor: int) -> None:
        os.fsync(descriptor)

    def close(self, descriptor: int) -> None:
        os.close(descriptor)

    def fstat(self, descriptor: int) -> os.stat_result:
        return os.fstat(descriptor)

    def stat(self, path: str) -> os.stat_result:
        return os.stat(path)

    def lstat(self, path: str) -> os.stat_result:
        return os.lstat(path)

    def replace(self, source: str, target: str) -> None:
        os.replace(source, target)

    def unlink(self, path: str) -> None:
        os.unlink(path)

    def flock(self, descriptor: int, operation: int) -> None:
        fcntl.flock(descriptor, operation)

    def mkstemp(self, directory: str, prefix: str) -> tuple[int, str]:
        """A new file in ``directory`` with an unpredictable name: ``(descriptor, path)``.

        ``tempfile.mkstemp`` opens with ``O_CREAT | O_EXCL | O_NOFOLLOW`` and mode 0600.
        """
        return tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)


def file_type(mode: int) -> str:
    """What kind of non-regular file ``mode`` describes, in words."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"
