"""Beyond Linux: the core, the generators and the state files on a platform without POSIX.

A fresh interpreter is given what Windows lacks before ``import uuidkit``: the POSIX-only
modules (``fcntl``, ``termios``, ``pwd``, ``grp``, ``resource``...) cannot be
imported, and the POSIX-only functions and constants (``os.register_at_fork``,
``os.O_NOFOLLOW``, ``os.O_NONBLOCK``, ``os.O_CLOEXEC``, ``os.geteuid``, ``os.fchmod``,
``time.clock_gettime``, ``socket.AF_UNIX``, ``select.epoll``...) are gone. There, every
version is generated (the module functions, every generator class, the bulk API), and the
state-file generators refuse at construction with an ``UnsupportedPlatformError`` (a
``NotImplementedError`` and a ``StateFileError``) naming the platform and what it lacks,
having created no file. A top-level ``import fcntl`` in any module of the core, the
generators or the state files fails the simulated run at import.

A second check on this (POSIX) host: importing the core, every generator name and the
state-file modules loads none of the POSIX-only modules (they are imported where they are
used, when a state file is opened).

Both checks run on the compiled path and on the pure path (``UUIDKIT_PURE=1``). Windows
itself is not tested here (no Windows machine in CI): this is what can be checked of it on
Linux.

References: RFC 9562 §5.1-§5.8 (the versions generated), §6.3 (state kept in stable
storage).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import uuidkit

#: The directory holding the uuidkit under test (a source tree or site-packages).
LOCATION = str(Path(uuidkit.__file__).resolve().parent.parent)

PATHS = pytest.mark.parametrize("pure", ["0", "1"], ids=["default-path", "pure-path"])

#: Modules a Windows CPython does not have, that uuidkit could reach for. Not ``posix``
#: itself: ``os.name`` stays ``"posix"`` here, and the standard library imports ``posix``
#: on that say-so (``shutil``), where on Windows it would take its ``nt`` path instead.
POSIX_ONLY_MODULES = [
    "_curses",
    "crypt",
    "curses",
    "fcntl",
    "grp",
    "nis",
    "pty",
    "pwd",
    "readline",
    "resource",
    "spwd",
    "syslog",
    "termios",
    "tty",
]

#: Names a Windows CPython 3.11 does not have, by module (removed where this host has them).
POSIX_ONLY_NAMES = {
    "os": [
        "EX_OK",
        "O_ASYNC",
        "O_CLOEXEC",
        "O_DIRECTORY",
        "O_DSYNC",
        "O_NDELAY",
        "O_NOATIME",
        "O_NOCTTY",
        "O_NOFOLLOW",
        "O_NONBLOCK",
        "O_PATH",
        "O_SYNC",
        "O_TMPFILE",
        "WNOHANG",
        "chown",
        "chroot",
        "confstr",
        "copy_file_range",
        "eventfd",
        "fchdir",
        "fchmod",
        "fchown",
        "fdatasync",
        "fork",
        "forkpty",
        "fpathconf",
        "fstatvfs",
        "get_blocking",
        "getegid",
        "geteuid",
        "getgid",
        "getgroups",
        "getloadavg",
        "getpgid",
        "getrandom",
        "getsid",
        "getuid",
        "getxattr",
        "killpg",
        "lchmod",
        "lchown",
        "listxattr",
        "lockf",
        "memfd_create",
        "mkfifo",
        "mknod",
        "nice",
        "openpty",
        "pathconf",
        "posix_fadvise",
        "posix_fallocate",
        "pread",
        "pwrite",
        "register_at_fork",
        "removexattr",
        "sched_getaffinity",
        "sched_yield",
        "sendfile",
        "set_blocking",
        "setsid",
        "setxattr",
        "splice",
        "statvfs",
        "sync",
        "sysconf",
        "ttyname",
        "uname",
        "wait3",
        "wait4",
    ],
    "time": [
        "CLOCK_BOOTTIME",
        "CLOCK_MONOTONIC",
        "CLOCK_MONOTONIC_RAW",
        "CLOCK_PROCESS_CPUTIME_ID",
        "CLOCK_REALTIME",
        "CLOCK_TAI",
        "CLOCK_THREAD_CPUTIME_ID",
        "clock_getres",
        "clock_gettime",
        "clock_gettime_ns",
        "clock_settime",
        "clock_settime_ns",
        "pthread_getcpuclockid",
        "tzset",
    ],
    "socket": ["AF_NETLINK", "AF_PACKET", "AF_UNIX", "SCM_RIGHTS", "SO_REUSEPORT"],
    "select": ["EPOLLIN", "epoll", "poll"],
    "signal": [
        "SIGALRM",
        "SIGCHLD",
        "SIGHUP",
        "SIGKILL",
        "SIGPIPE",
        "SIGQUIT",
        "SIGUSR1",
        "SIGUSR2",
        "alarm",
        "pthread_kill",
        "pthread_sigmask",
        "setitimer",
    ],
}

#: Run first in the child: the POSIX-only modules become unimportable (``None`` in
#: ``sys.modules`` makes ``import fcntl`` raise ImportError) and the names go.
_WITHOUT_POSIX = """
import importlib, sys
for module, names in {names!r}.items():
    loaded = importlib.import_module(module)
    for name in names:
        if hasattr(loaded, name):
            delattr(loaded, name)
for name in {modules!r}:
    sys.modules[name] = None
"""

#: Every version, every generator, then the state files, in the child.
_WORKLOAD = """
import json, os, sys, warnings
import uuidkit
import uuidkit.bulk
import uuidkit.generators as generators
from uuidkit import _safefile
from uuidkit.generators import statefile

versions = {}
def made(label, value):
    versions[label] = value.version

made("uuid1", uuidkit.uuid1())
made("uuid3", uuidkit.uuid3(uuidkit.NAMESPACE_DNS, "www.example.com"))
made("uuid4", uuidkit.uuid4())
made("uuid5", uuidkit.uuid5(uuidkit.NAMESPACE_DNS, "www.example.com"))
made("uuid6", uuidkit.uuid6())
made("uuid7", uuidkit.uuid7())
made("uuid8", uuidkit.uuid8())
made("build_v8_name", uuidkit.build_v8_name(uuidkit.NAMESPACE_DNS, "www.example.com", "sha256"))
made("V1Generator", generators.V1Generator()())
made("V6Generator", generators.V6Generator()())
made("V7Generator", generators.V7Generator()())
made("DraftV8Generator", generators.DraftV8Generator()())
made("PG18V7Generator", generators.PG18V7Generator()())
made("DEFAULT_V7.generate", generators.DEFAULT_V7.generate(3)[-1])
source = generators.ManualNodeSource(0x0123456789AB)
for kind in ("V1", "V6", "V7", "V8"):
    name = f"NodeBound{kind}Generator"
    made(name, getattr(generators, name)(source)())
for version in (4, 7):
    made(f"bulk.generate({version})", uuidkit.bulk.generate(version, 3)[-1])

directory = sys.argv[1]
path = os.path.join(directory, "demo.state")
refusals = {}
attempts = {
    "SharedV1Generator": lambda: generators.SharedV1Generator(path),
    "SharedV6Generator": lambda: generators.SharedV6Generator(path),
    "SharedV7Generator": lambda: generators.SharedV7Generator(path),
    "StateFile": lambda: statefile.StateFile(path),
    "read_state_file": lambda: statefile.read_state_file(path),
    "SafeFile": lambda: _safefile.SafeFile(path),
}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, attempt in attempts.items():
        try:
            attempt()
        except NotImplementedError as error:
            refusals[name] = [type(error).__name__, isinstance(error, ValueError), str(error)]
        else:
            refusals[name] = None
print(json.dumps({
    "accelerated": uuidkit.ACCELERATED,
    "platform": sys.platform,
    "versions": versions,
    "refusals": refusals,
    "left_behind": sorted(os.listdir(directory)),
}))
"""

#: What the workload generates, and the version each value must have.
EXPECTED_VERSIONS = {
    "uuid1": 1,
    "uuid3": 3,
    "uuid4": 4,
    "uuid5": 5,
    "uuid6": 6,
    "uuid7": 7,
    "uuid8": 8,
    "build_v8_name": 8,
    "V1Generator": 1,
    "V6Generator": 6,
    "V7Generator": 7,
    "DraftV8Generator": 8,
    "PG18V7Generator": 7,
    "DEFAULT_V7.generate": 7,
    "NodeBoundV1Generator": 1,
    "NodeBoundV6Generator": 6,
    "NodeBoundV7Generator": 7,
    "NodeBoundV8Generator": 8,
    "bulk.generate(4)": 4,
    "bulk.generate(7)": 7,
}

#: Imported by the second check: the core, every public generator name, the state files.
_IMPORT_EVERYTHING = """
import json, sys

# Who imports each POSIX-only module: the module of the nearest frame that is not the import
# machinery. The standard library may import them itself (3.15's pathlib loads fcntl, pwd and
# grp), which says nothing about uuidkit; only an import made by uuidkit's own code counts.
class _Witness:
    def find_spec(self, name, path=None, target=None):
        if name in POSIX_ONLY:
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
                frame = frame.f_back
            importer = frame.f_globals.get("__name__", "?") if frame is not None else "?"
            IMPORTED.append([name, importer])
        return None

POSIX_ONLY = set(sys.argv[1].split(","))
IMPORTED = []
sys.meta_path.insert(0, _Witness())
import uuidkit, uuidkit.bulk
import uuidkit.generators as generators
for name in dir(generators):
    getattr(generators, name)
for name in uuidkit.__all__:
    getattr(uuidkit, name)
import uuidkit._safefile, uuidkit.generators.statefile, uuidkit.generators.shared
print(json.dumps({"loaded": sorted(sys.modules), "imported": IMPORTED}))
"""


def _environment(pure: str) -> dict[str, str]:
    environment = dict(os.environ, PYTHONPATH=LOCATION, UUIDKIT_PURE=pure)
    environment.pop("PYTHONSTARTUP", None)
    return environment


def _child(script: str, pure: str, *arguments: str) -> str:
    result = subprocess.run(
        [sys.executable, "-S", "-c", script, *arguments],
        env=_environment(pure),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1]


def _accelerator_built() -> bool:
    return importlib.util.find_spec("uuidkit._speedups") is not None


@PATHS
def test_without_posix_every_version_is_generated_and_state_files_refuse_clearly(
    pure: str, tmp_path: Path
) -> None:
    """Fails if a module of the core, the generators or the state files imports a POSIX-only
    module or uses a POSIX-only name at import time (the child dies before its report), if
    any version cannot be generated without them, or if a state file is opened (or a file
    made) where its locking and safe opens are missing instead of refused."""
    prelude = _WITHOUT_POSIX.format(modules=POSIX_ONLY_MODULES, names=POSIX_ONLY_NAMES)
    report = json.loads(_child(prelude + _WORKLOAD, pure, str(tmp_path)))

    assert report["accelerated"] is (pure == "0" and _accelerator_built())
    assert report["versions"] == EXPECTED_VERSIONS
    for name, refusal in report["refusals"].items():
        assert refusal is not None, f"{name} ran without POSIX file locking"
        kind, is_value_error, message = refusal
        assert kind == "UnsupportedPlatformError", (name, refusal)
        assert is_value_error, (name, refusal)  # a StateFileError too, as every library error
        assert f"({report['platform']})" in message, (name, message)
        for missing in ("fcntl.flock", "os.O_NOFOLLOW", "os.geteuid"):
            assert missing in message, (name, missing, message)
        assert "demo.state" in message, (name, message)
    assert report["left_behind"] == []  # refused before anything was created


@PATHS
def test_importing_the_core_generators_and_state_files_loads_no_posix_only_module(
    pure: str,
) -> None:
    """Fails if a module of the core, the generators or the state files imports ``fcntl`` (or
    another POSIX-only module) at import time, even guarded: they are imported where used."""
    report = json.loads(_child(_IMPORT_EVERYTHING, pure, ",".join(POSIX_ONLY_MODULES)))
    assert "uuidkit.generators.statefile" in report["loaded"]
    by_uuidkit = [
        (name, importer)
        for name, importer in report["imported"]
        if importer == "uuidkit" or importer.startswith("uuidkit.")
    ]
    assert by_uuidkit == [], by_uuidkit


#: Runs the ``uuidkit`` command (``python -m uuidkit``) after ``_WITHOUT_POSIX``.
_COMMAND = """
import runpy, sys
sys.argv[0] = "uuidkit"
runpy.run_module("uuidkit", run_name="__main__")
"""


def _uuidkit_without_posix(pure: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    prelude = _WITHOUT_POSIX.format(modules=POSIX_ONLY_MODULES, names=POSIX_ONLY_NAMES)
    return subprocess.run(
        [sys.executable, "-S", "-c", prelude + _COMMAND, *arguments],
        env=_environment(pure),
        capture_output=True,
        text=True,
        timeout=120,
    )


@PATHS
def test_without_posix_the_command_generates_and_refuses_state_files_by_name(
    pure: str, tmp_path: Path
) -> None:
    """The ``uuidkit`` command in the same child: ``gen`` and ``inspect`` work, ``state show``
    ends with the refusal (exit status 2, no traceback). Fails if the command's modules
    import a POSIX-only module at import time, or a state file is opened without POSIX."""
    generated = _uuidkit_without_posix(
        pure, "gen", "-v", "5", "--namespace", "dns", "--name", "www.example.com"
    )
    assert generated.returncode == 0, generated.stderr
    assert generated.stdout == "2ed6657d-e927-568b-95e1-2665a8aea6a2\n"

    inspected = _uuidkit_without_posix(pure, "inspect", "017F22E2-79B0-7CC3-98C4-DC0C0C07398F")
    assert inspected.returncode == 0, inspected.stderr
    assert "2022-02-22T19:22:22.000Z" in inspected.stdout

    refused = _uuidkit_without_posix(pure, "state", "show", str(tmp_path / "demo.state"))
    assert refused.returncode == 2, refused.stderr
    assert "Traceback" not in refused.stderr
    assert "needs POSIX file locking" in refused.stderr and "fcntl.flock" in refused.stderr
    assert list(tmp_path.iterdir()) == []
