"""The SHA-1 paths of the compiled uuid5: a fixture that runs a test module once on each.

The C accelerator computes SHA-1 through the CPU's SHA-1 instructions where the CPU reports
them (the x86 SHA extensions, by CPUID; the 64-bit ARM SHA1 instructions, by the kernel's
AT_HWCAP), else through portable code; ``_speedups._sha1_hardware(False)`` forces the
portable code. A module that sets ``pytestmark = pytest.mark.usefixtures("sha1_path")`` (and
imports the fixture) runs every test once per path; on the pure path, once. The path named
``sha-extensions`` is the instruction path of either architecture.

References: FIPS 180-4 §6.1.2; RFC 9562 §5.5; the Linux kernel's arm64 ELF hwcaps
documentation (HWCAP_SHA1).
"""

from __future__ import annotations

import platform
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from uuidkit import _accel

#: The paths SHA-1 can take here: the compiled ones, or only the Python twin's.
SHA1_PATHS = ["pure"] if _accel.SPEEDUPS is None else ["sha-extensions", "portable"]


@pytest.fixture(scope="module", params=SHA1_PATHS)
def sha1_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The path of this run of the module (module scope: hypothesis tests may not use a
    function-scoped fixture); a CPU without SHA-1 instructions skips that run."""
    path: str = request.param
    if path == "pure":
        yield path
        return
    wanted = path == "sha-extensions"
    try:
        if _accel.SPEEDUPS._sha1_hardware(wanted) is not wanted:
            pytest.skip("this CPU has no SHA-1 instructions")
        yield path
    finally:
        _accel.SPEEDUPS._sha1_hardware(True)


#: AT_HWCAP in the auxiliary vector, and its SHA1 bit on arm64 (the kernel's asm/hwcap.h).
AT_HWCAP = 16
HWCAP_SHA1 = 1 << 5


def cpu_reports_sha1_instructions() -> bool:
    """Whether the CPU has SHA-1 instructions, read independently of the module (Linux only).

    x86: the kernel lists ``sha_ni`` among the CPU's flags in /proc/cpuinfo. 64-bit ARM:
    HWCAP_SHA1 is set in the AT_HWCAP entry of /proc/self/auxv (what an emulator such as
    qemu-user gives its guest too, where its /proc/cpuinfo may show the host's CPU).
    """
    machine = platform.machine().lower()
    if machine in ("aarch64", "arm64"):
        return bool(_auxv().get(AT_HWCAP, 0) & HWCAP_SHA1)
    if machine not in ("x86_64", "amd64", "i386", "i686"):
        return False
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text("ascii", errors="replace")
    except OSError:
        return False
    return any(
        line.startswith("flags") and "sha_ni" in line.split() for line in cpuinfo.splitlines()
    )


def _auxv() -> dict[int, int]:
    """This process's auxiliary vector: (type, value) pairs of native unsigned longs."""
    try:
        raw = Path("/proc/self/auxv").read_bytes()
    except OSError:
        return {}
    pair = struct.Struct(("<" if sys.byteorder == "little" else ">") + "QQ")
    usable = len(raw) - len(raw) % pair.size
    return dict(pair.iter_unpack(raw[:usable]))
