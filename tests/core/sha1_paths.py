"""The SHA-1 paths of the compiled uuid5: a fixture that runs a test module once on each.

The C accelerator computes SHA-1 through the x86 SHA extensions where CPUID reports them,
else through portable code; ``_speedups._sha1_hardware(False)`` forces the portable code.
A module that sets ``pytestmark = pytest.mark.usefixtures("sha1_path")`` (and imports the
fixture) runs every test once per path; on the pure path, once.

References: FIPS 180-4 §6.1.2; RFC 9562 §5.5.
"""

from __future__ import annotations

import platform
from collections.abc import Iterator
from pathlib import Path

import pytest

from uuidkit import _accel

#: The paths SHA-1 can take here: the compiled ones, or only the Python twin's.
SHA1_PATHS = ["pure"] if _accel.SPEEDUPS is None else ["sha-extensions", "portable"]


@pytest.fixture(scope="module", params=SHA1_PATHS)
def sha1_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The path of this run of the module (module scope: hypothesis tests may not use a
    function-scoped fixture); a CPU without the SHA extensions skips that run."""
    path: str = request.param
    if path == "pure":
        yield path
        return
    wanted = path == "sha-extensions"
    try:
        if _accel.SPEEDUPS._sha1_hardware(wanted) is not wanted:
            pytest.skip("this CPU has no SHA extensions")
        yield path
    finally:
        _accel.SPEEDUPS._sha1_hardware(True)


def cpu_reports_sha_extensions() -> bool:
    """Whether the kernel lists ``sha_ni`` among this x86 CPU's flags (Linux only)."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686"):
        return False
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text("ascii", errors="replace")
    except OSError:
        return False
    return any(
        line.startswith("flags") and "sha_ni" in line.split() for line in cpuinfo.splitlines()
    )
