"""Small files written and read safely: the one place uuidkit touches a state file.

Generator state (:mod:`uuidkit.generators.statefile`), the UIAP daemon's state directory
(:mod:`uuidkit.daemon.state`) and a device-ID file (:mod:`uuidkit.net.device_id`) all keep a
small file that must survive a crash, must not be swapped by another local user, and must
never make the process hang. :class:`SafeFile` does it for all of them:

* **Atomic replace** (:meth:`SafeFile.replace`): a temporary file with an unpredictable
  name (``.<name>.<16 hex digits>.tmp``, 64 bits from the system CSPRNG) is created in the
  same directory with ``O_CREAT | O_EXCL | O_NOFOLLOW`` and mode 0600, written whole, fsynced,
  renamed over the target, and the directory is fsynced. A crash at any point leaves the old
  contents or the new ones, never a torn file; once the call returns the new contents survive
  a power loss. :meth:`SafeFile.create` does the same but links the file into place, which
  never replaces an existing one.
* **Reads that never follow a symlink and never block** (:meth:`SafeFile.read`):
  ``O_NOFOLLOW | O_NONBLOCK``; a symlink, a FIFO or any other non-regular file is refused
  before a byte is read.
* **Owner and mode checks**, the way ssh treats its keys (:func:`check_directory`,
  :func:`check_file`): a directory owned by another user, or writable by others without the
  sticky bit (or at all, for a private directory); a file owned by another user or writable
  by others; a read-only file is never silently replaced. Each refusal is an
  :class:`UnsafeStateError` naming the path and the reason.
* **Leftovers of killed writers are removed, and nothing else**
  (:meth:`SafeFile.remove_stale_temporaries`, run after every write): a name of exactly this
  module's pattern for this target, a regular file owned by this user, that no live writer
  holds. A writer holds an exclusive ``flock`` on its temporary file from the moment it
  made it until it renamed or deleted it; the kernel drops that lock when the writer dies,
  however it dies. A name embedding the writer's pid was the other choice, and was rejected:
  a pid is reused, means nothing in another pid namespace sharing the directory, and cannot
  tell a live thread of this process from a dead one.
* **One fault-injection seam**: every system call goes through a :class:`FileSystem`, whose
  methods tests replace to inject a full disk, an I/O error, a short write or a crash
  between two steps, or to model what survives a power loss.
* **POSIX or nothing**: the guarantees above rest on ``flock``, ``O_NOFOLLOW``,
  ``O_NONBLOCK``, ``O_CLOEXEC``, ``O_NOCTTY`` and the effective user ID. A platform without
  them (Windows) gets no weaker file: :class:`SafeFile` refuses at construction with an
  :class:`UnsupportedPlatformError` naming the platform and what it lacks
  (:func:`missing_posix_features`). ``fcntl`` is imported where it is used, never when this
  module is imported, so importing it works everywhere.

This module imports nothing from uuidkit but its errors and :mod:`uuidkit._system` (the
entropy for names), so every layer may use it.

References: RFC 9562 §6.3 (state kept in stable storage); RFC 4122 §4.2.1.3.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Callable
from typing import Final

from uuidkit import _system
from uuidkit.errors import StateFileError

__all__ = [
    "DEFAULT_MAX_OCTETS",
    "FileSystem",
    "OversizedFileError",
    "SafeFile",
    "UnsafeStateError",
    "UnsupportedPlatformError",
    "check_directory",
    "check_file",
    "file_type",
    "lock_operations",
    "make_private_directory",
    "missing_posix_features",
    "posix_flag",
    "require_posix_files",
    "write_all",
]

#: Larger files are refused by :meth:`SafeFile.read` unless a caller allows more.
DEFAULT_MAX_OCTETS: Final = 4096
#: Permission bits a file must not have: writable by group or others.
WRITABLE_BY_OTHERS: Final = 0o022
_SUFFIX: Final = ".tmp"
_TOKEN_OCTETS: Final = 8
_HEX: Final = frozenset("0123456789abcdef")
#: Names tried before giving up when cleaners keep taking the new temporary file.
_CREATE_ATTEMPTS: Final = 8
#: The names of :mod:`os` this module's guarantees rest on (POSIX; Windows has none of them).
_POSIX_OS_NAMES: Final = ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC", "O_NOCTTY", "geteuid")


def posix_flag(name: str) -> int:
    """The :mod:`os` open flag ``name``, or 0 where the platform lacks it.

    Only for flags computed when a module is imported: where one is missing
    :func:`require_posix_files` refuses before any file is opened with it.

    References: RFC 9562 §6.3.
    """
    value: int = getattr(os, name, 0)
    return value


_READ_FLAGS: Final = (
    os.O_RDONLY
    | posix_flag("O_NOFOLLOW")
    | posix_flag("O_NONBLOCK")
    | posix_flag("O_CLOEXEC")
    | posix_flag("O_NOCTTY")
)
_CREATE_FLAGS: Final = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | posix_flag("O_NOFOLLOW") | posix_flag("O_CLOEXEC")
)


class UnsafeStateError(StateFileError):
    """A state file, lock file or directory that another user could tamper with, or that is
    not a regular file, a symlink, or read-only: refused, never followed or replaced.

    References: RFC 9562 §6.3.
    """


class UnsupportedPlatformError(StateFileError, NotImplementedError):
    """A platform without what uuidkit's small files rest on (``fcntl.flock``,
    ``O_NOFOLLOW``, the effective user ID...): Windows. Refused rather than weakened.

    A :class:`NotImplementedError` (the feature is missing on this platform) and a
    :class:`~uuidkit.StateFileError` (so a :class:`ValueError`, as every uuidkit error).

    References: RFC 9562 §6.3.
    """


def missing_posix_features() -> tuple[str, ...]:
    """What this platform lacks of what :class:`SafeFile` and the state files' lock need,
    by name (``"fcntl.flock"``, ``"os.O_NOFOLLOW"``...); empty on Linux and macOS.

    ``fcntl`` is imported here, when a file is about to be used, not when the module is.

    References: RFC 9562 §6.3.
    """
    missing = []
    try:
        import fcntl  # POSIX only: imported where it is used, never at module import
    except ImportError:
        missing.append("fcntl.flock")
    else:
        del fcntl  # present: that is all this asks
    missing.extend(f"os.{name}" for name in _POSIX_OS_NAMES if not hasattr(os, name))
    return tuple(missing)


def require_posix_files(path: str, kind: str = "state file") -> None:
    """Raise :class:`UnsupportedPlatformError` for ``path`` unless this platform has all
    :class:`SafeFile` needs (see :func:`missing_posix_features`).

    References: RFC 9562 §6.3.
    """
    missing = missing_posix_features()
    if missing:
        raise UnsupportedPlatformError(
            f"{path}: a uuidkit {kind} needs POSIX file locking and safe opens, and this "
            f"platform ({sys.platform}) lacks {', '.join(missing)}; not opened"
        )


def lock_operations() -> tuple[int, int]:
    """``flock`` operations: (take the exclusive lock without waiting, release it).

    Imports ``fcntl`` when called (a file is in use, so :func:`require_posix_files` passed).

    References: RFC 9562 §6.3.
    """
    import fcntl  # POSIX only: imported where it is used, never at module import

    return fcntl.LOCK_EX | fcntl.LOCK_NB, fcntl.LOCK_UN


class OversizedFileError(StateFileError):
    """A file larger than its reader allows (something else, or planted, at the path).

    References: RFC 9562 §6.3.
    """


class FileSystem:
    """The system calls a :class:`SafeFile` (and a generator's lock) makes, one method each.

    The one fault-injection seam of uuidkit's files: tests subclass it to fail a call, make a
    write short, crash between two steps or model what a power loss keeps. Each method looks
    its function up when called, so patching :mod:`os` or :mod:`fcntl` reaches it too.

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

    def link(self, source: str, target: str) -> None:
        os.link(source, target, follow_symlinks=False)

    def unlink(self, path: str) -> None:
        os.unlink(path)

    def listdir(self, path: str) -> list[str]:
        return os.listdir(path)

    def mkdir(self, path: str, mode: int) -> None:
        os.mkdir(path, mode)

    def flock(self, descriptor: int, operation: int) -> None:
        import fcntl  # POSIX only: imported where it is used, never at module import

        fcntl.flock(descriptor, operation)

    def token(self) -> str:
        """The unpredictable part of a temporary name: 16 hex digits from the CSPRNG."""
        return _system.random_bytes(_TOKEN_OCTETS).hex()


def file_type(mode: int) -> str:
    """What kind of non-regular file ``mode`` describes, in words.

    References: RFC 9562 §6.3.
    """
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _refuse(path: str, reason: str) -> UnsafeStateError:
    return UnsafeStateError(f"{path}: {reason}; refused")


def check_directory(directory: str, fs: FileSystem, *, private: bool = False) -> None:
    """Refuse a directory others could use to swap or plant files (ssh ``StrictModes``).

    Shared (the default, for generator state that may live in ``/tmp``): owned by this user
    or root, and writable by others only with the sticky bit. ``private`` (a daemon's own
    directory): owned by this user, writable by nobody else, and not a symbolic link. Raises
    :class:`UnsafeStateError`; a missing directory is left to the caller's ``OSError``.

    References: RFC 9562 §6.3.
    """
    info = fs.lstat(directory) if private else fs.stat(directory)
    if stat.S_ISLNK(info.st_mode):
        raise _refuse(directory, "a symbolic link, not a directory (never followed)")
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, "not a directory", directory)
    owners = (os.geteuid(),) if private else (os.geteuid(), 0)
    if info.st_uid not in owners:
        raise _refuse(directory, f"unsafe: directory owned by uid {info.st_uid}")
    mode = stat.S_IMODE(info.st_mode)
    if mode & WRITABLE_BY_OTHERS and (private or not mode & stat.S_ISVTX):
        sticky = "" if private else " without the sticky bit"
        raise _refuse(
            directory, f"unsafe: directory mode {mode:04o} is writable by other users{sticky}"
        )


def check_file(
    path: str,
    info: os.stat_result,
    *,
    writing: bool,
    kind: str = "state file",
    loose: int = WRITABLE_BY_OTHERS,
    root_may_own: bool = False,
) -> None:
    """Refuse a file that is not a regular file of this user, closed to others.

    ``loose`` are the permission bits it must not have; ``writing``: it is about to be
    replaced, so a read-only file (someone made it so on purpose) is refused too;
    ``root_may_own``: a file root owns is accepted too (configuration root installed).

    References: RFC 9562 §6.3.
    """
    if stat.S_ISLNK(info.st_mode):
        raise _refuse(path, f"a symbolic link, not a {kind} (never followed)")
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(path, f"{file_type(info.st_mode)}, not a {kind}")
    if info.st_uid != os.geteuid() and not (root_may_own and info.st_uid == 0):
        raise _refuse(path, f"unsafe: owned by uid {info.st_uid}, not {os.geteuid()}")
    mode = stat.S_IMODE(info.st_mode)
    if mode & loose:
        raise _refuse(path, f"unsafe: mode {mode:04o} is open to other users (chmod 600)")
    if writing and not mode & stat.S_IWUSR:
        raise _refuse(path, f"read-only (mode {mode:04o}): it is not replaced")


def write_all(fs: FileSystem, descriptor: int, data: bytes, path: str) -> None:
    """Write all of ``data`` to ``descriptor``, or raise ``OSError`` naming ``path``.

    ``os.write`` may write less than asked (a full disk): a short write left unchecked would
    leave a torn file (renamed over the target, or a torn record appended to a journal).

    References: RFC 9562 §6.3.
    """
    view = memoryview(data)
    while view:
        written = fs.write(descriptor, view)
        if written <= 0:
            raise OSError(errno.EIO, "write made no progress", path)
        view = view[written:]


def make_private_directory(directory: str, fs: FileSystem | None = None) -> None:
    """Create ``directory`` (mode 0700) unless it exists, then check it is private.

    Raises :class:`UnsafeStateError` for a directory another user could write to or that is
    a symbolic link, ``OSError`` when it cannot be made.

    References: RFC 9562 §6.3.
    """
    fs = fs if fs is not None else FileSystem()
    with contextlib.suppress(FileExistsError):
        fs.mkdir(directory, 0o700)
    check_directory(directory, fs, private=True)


class SafeFile:
    """One small file, replaced atomically and read safely, as the module describes.

    ``kind`` names the file in refusals ("a FIFO, not a state file"); ``private``: its
    directory must be private (see :func:`check_directory`); ``durable``: fsync the file and
    the directory on every write (off only for throw-away files in tests); ``loose``: the
    permission bits the file must not have (a secret: 0o077); ``root_may_own``: a file root
    owns is read too.

    Raises :class:`UnsupportedPlatformError` on a platform without ``flock``, ``O_NOFOLLOW``
    and the rest of what the module's guarantees rest on (Windows).

    References: RFC 9562 §6.3; RFC 4122 §4.2.1.3.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fs: FileSystem | None = None,
        durable: bool = True,
        private: bool = False,
        kind: str = "state file",
        max_octets: int = DEFAULT_MAX_OCTETS,
        loose: int = WRITABLE_BY_OTHERS,
        root_may_own: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        require_posix_files(self.path, kind)
        self.directory, self.name = os.path.split(os.path.abspath(self.path))
        self.fs = fs if fs is not None else FileSystem()
        self.durable = durable
        self.private = private
        self.kind = kind
        self.max_octets = max_octets
        self.loose = loose
        self.root_may_own = root_may_own

    def check_directory(self) -> None:
        """:func:`check_directory` of this file's directory.

        References: RFC 9562 §6.3.
        """
        check_directory(self.directory, self.fs, private=self.private)

    def check(self, info: os.stat_result, *, writing: bool) -> None:
        """:func:`check_file` of this file, as ``info`` describes it.

        References: RFC 9562 §6.3.
        """
        check_file(
            self.path,
            info,
            writing=writing,
            kind=self.kind,
            loose=self.loose,
            root_may_own=self.root_may_own,
        )

    # --- reading ------------------------------------------------------------------------

    def read(self) -> tuple[bytes, os.stat_result]:
        """The file's contents and its ``fstat``, read safely.

        The directory and the file pass the checks before a byte is read; the open never
        blocks (``O_NONBLOCK``: a FIFO opens at once and is refused instead of waiting for a
        writer) and never follows a symlink (``O_NOFOLLOW``). Raises
        :class:`FileNotFoundError` for a missing file or directory,
        :class:`UnsafeStateError` for an unsafe one, :class:`OversizedFileError` for one
        larger than ``max_octets`` and :class:`~uuidkit.StateFileError` when it cannot be
        read.

        References: RFC 9562 §6.3.
        """
        try:
            self.check_directory()
            descriptor = self.fs.open(self.path, _READ_FLAGS)
        except FileNotFoundError:
            raise
        except OSError as error:
            if error.errno == errno.ELOOP:
                reason = f"a symbolic link, not a {self.kind} (never followed)"
                raise _refuse(self.path, reason) from None
            raise StateFileError(f"{self.path}: unreadable: {error.strerror or error}") from None
        try:
            info = self.fs.fstat(descriptor)
            self.check(info, writing=False)
            raw = self._read_all(descriptor)
        except OSError as error:
            raise StateFileError(f"{self.path}: unreadable: {error.strerror or error}") from None
        finally:
            self.fs.close(descriptor)
        if len(raw) > self.max_octets:
            raise OversizedFileError(f"{self.path}: larger than {self.max_octets} bytes")
        return raw, info

    def _read_all(self, descriptor: int) -> bytes:
        chunks = []
        size = 0
        while size <= self.max_octets:
            chunk = self.fs.read(descriptor, self.max_octets + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)

    def exists(self) -> bool:
        """Whether anything (even a dangling symlink) is at the path.

        References: RFC 9562 §6.3.
        """
        try:
            self.fs.lstat(self.path)
        except FileNotFoundError:
            return False
        return True

    # --- writing ------------------------------------------------------------------------

    def replace(self, data: bytes) -> None:
        """Replace the file with ``data`` atomically (temporary file, fsync, rename, fsync
        of the directory), then remove what killed writers left.

        Raises :class:`UnsafeStateError` for an unsafe directory or an existing path that is
        a symlink, not a regular file, someone else's, open to others or read-only;
        ``OSError`` when the disk refuses (the old file is intact and the temporary file is
        removed).

        References: RFC 4122 §4.2.1.3.
        """
        self.check_directory()
        with contextlib.suppress(FileNotFoundError):
            self.check(self.fs.lstat(self.path), writing=True)
        self._publish(data, lambda temporary, target: self.fs.replace(temporary, target))
        self._sweep()

    def create(self, data: bytes) -> bool:
        """Create the file holding ``data`` unless something is at the path already: the
        temporary file is written and fsynced, then hard-linked into place (a link never
        replaces), and the directory fsynced. Returns False when the path was taken first.

        References: RFC 9562 §6.3.
        """
        self.check_directory()

        def link(temporary: str, target: str) -> None:
            self.fs.link(temporary, target)
            self._discard(temporary)  # the file now has its real name

        try:
            self._publish(data, link)
        except FileExistsError:
            return False
        finally:
            self._sweep()
        return True

    def _publish(self, data: bytes, put: Callable[[str, str], None]) -> None:
        """Write ``data`` to a new temporary file and ``put`` it at the path, durably."""
        descriptor, temporary = self._new_temporary()
        placed = False
        try:
            self._write_all(descriptor, data)
            if self.durable:
                # The data must be on disk before the name says it is the file, or a power
                # loss could leave a renamed but empty file.
                self.fs.fsync(descriptor)
            put(temporary, self.path)
            placed = True
        finally:
            if not placed:
                self._discard(temporary)
            self.fs.close(descriptor)  # after put(): the flock guards the name until then
        if self.durable:
            # The rename lives in the directory: without this fsync a power loss can bring the
            # old file back after the call returned (and a reservation would be handed out
            # twice).
            directory = self.fs.open(self.directory, os.O_RDONLY | os.O_CLOEXEC)
            try:
                self.fs.fsync(directory)
            finally:
                self.fs.close(directory)

    def _new_temporary(self) -> tuple[int, str]:
        """A new temporary file, open and ``flock``-ed: ``(descriptor, path)``.

        The lock marks the file as a live writer's. A cleaner may open the file between its
        creation and the lock; it deletes it only while holding the lock, so a writer that
        cannot take the lock, or takes it on a file already unlinked, starts over.
        """
        for _ in range(_CREATE_ATTEMPTS):
            temporary = os.path.join(self.directory, f".{self.name}.{self.fs.token()}{_SUFFIX}")
            descriptor = self.fs.open(temporary, _CREATE_FLAGS, 0o600)
            try:
                self.fs.flock(descriptor, lock_operations()[0])
                if self.fs.fstat(descriptor).st_nlink > 0:
                    return descriptor, temporary
            except BlockingIOError:
                pass  # a cleaner holds it and is about to delete it
            except BaseException:
                self._discard(temporary)
                self.fs.close(descriptor)
                raise
            self.fs.close(descriptor)
        raise OSError(errno.EAGAIN, "temporary files kept being removed", self.path)

    def _write_all(self, descriptor: int, data: bytes) -> None:
        write_all(self.fs, descriptor, data, self.path)

    def _discard(self, temporary: str) -> None:
        with contextlib.suppress(OSError):
            self.fs.unlink(temporary)  # made by this call and still locked by it

    # --- leftovers ----------------------------------------------------------------------

    def is_temporary_name(self, name: str) -> bool:
        """Whether ``name`` is one this module gives a temporary file of this target.

        References: RFC 9562 §6.3.
        """
        prefix = f".{self.name}."
        if not (name.startswith(prefix) and name.endswith(_SUFFIX)):
            return False
        token = name[len(prefix) : -len(_SUFFIX)]
        return len(token) == 2 * _TOKEN_OCTETS and set(token) <= _HEX

    def remove_stale_temporaries(self) -> list[str]:
        """Delete the temporary files that killed writers of this target left; their names.

        Only a name of this module's pattern for this target, a regular file this user owns,
        whose ``flock`` is free (its writer is gone: a live one holds it until its rename),
        and still the same file when unlinked. Anything else is left alone.

        References: RFC 9562 §6.3.
        """
        removed = []
        for name in self.fs.listdir(self.directory):
            if self.is_temporary_name(name) and self._remove_if_stale(
                os.path.join(self.directory, name)
            ):
                removed.append(name)
        return removed

    def _remove_if_stale(self, path: str) -> bool:
        try:
            seen = self.fs.lstat(path)
            # Never opened unless it is a regular file of ours: opening a device has effects.
            if not stat.S_ISREG(seen.st_mode) or seen.st_uid != os.geteuid():
                return False
            descriptor = self.fs.open(path, _READ_FLAGS)
        except OSError:
            return False
        try:
            self.fs.flock(descriptor, lock_operations()[0])
            opened = self.fs.fstat(descriptor)
            now = self.fs.lstat(path)
            same = {(s.st_dev, s.st_ino) for s in (seen, opened, now)}
            if len(same) != 1:
                return False
            self.fs.unlink(path)
            return True
        except OSError:  # BlockingIOError: a live writer holds it
            return False
        finally:
            self.fs.close(descriptor)

    def _sweep(self) -> None:
        with contextlib.suppress(OSError):  # a failed cleanup leaves files, loses no write
            self.remove_stale_temporaries()
