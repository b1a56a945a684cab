"""Build the optional C accelerator; a failed build leaves the pure-Python package installable.

``pip install .`` compiles ``uuidkit._speedups`` when a C compiler and the Python headers are
present. When they are not (or the build fails for any other reason), the installation
continues without it, says so on stderr, and uuidkit runs its pure-Python reference
implementation: same results, same errors, slower.

Environment, read at build time:

* ``UUIDKIT_PURE=1`` skips the extension entirely.
* ``UUIDKIT_PUBLIC_API=1`` builds the accelerator on CPython's public API only, without the
  internal layouts it uses on the versions the suite checked: the path a future CPython
  takes (a test builds it so and runs the twin tests on it).
* ``UUIDKIT_REQUIRE_SPEEDUPS=1`` makes a failed build fatal (CI sets it together with
  ``CFLAGS=-Werror``, so a C warning fails the build instead of silently dropping to pure
  Python).

A wheel built without the accelerator (``UUIDKIT_PURE=1``, or a failed optional build) is a
pure-Python wheel tagged ``py3-none-any``; one with it is tagged for its interpreter and
platform (CI repairs it to a ``manylinux`` tag with auditwheel).

An extension already built in ``build/`` is reused when its sources are unchanged
(setuptools' up-to-date check), whatever compiler is configured now; ``--force`` rebuilds.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:  # setuptools 70.1 and newer carry bdist_wheel; older ones take it from wheel
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - depends on the build environment
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

SOURCES = [
    "src/uuidkit/_speedups.c",
    "src/uuidkit/_speedups_text.c",
    "src/uuidkit/_speedups_bulk.c",
    "src/uuidkit/_speedups_bulk_text.c",
    "src/uuidkit/_speedups_v7.c",
    "src/uuidkit/_speedups_digest.c",
    "src/uuidkit/_speedups_sha1_x86.c",
    "src/uuidkit/_speedups_sha1_arm.c",
    "src/uuidkit/_speedups_datetime.c",
    "src/uuidkit/_speedups_gregorian.c",
    "src/uuidkit/_speedups_twin.c",
    "src/uuidkit/_speedups_nodebound.c",
    "src/uuidkit/_speedups_uiap.c",
]


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


REQUIRED = _flag("UUIDKIT_REQUIRE_SPEEDUPS")
#: Set when an optional build of the accelerator failed in this run (the wheel is then pure).
_SKIPPED: list[Exception] = []


class OptionalBuildExt(build_ext):
    """``build_ext`` that reports a failed compilation and carries on without it.

    Unless ``UUIDKIT_REQUIRE_SPEEDUPS`` is set: then a failure stops the build.
    """

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:
            self._skip(error)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:
            self._skip(error)

    @staticmethod
    def _skip(error: Exception) -> None:
        _SKIPPED.append(error)
        if REQUIRED:
            print(
                f"uuidkit: building the C accelerator failed ({error}) and "
                "UUIDKIT_REQUIRE_SPEEDUPS is set",
                file=sys.stderr,
            )
            raise error
        print(
            f"uuidkit: building the C accelerator failed ({error}); installing the "
            "pure-Python implementation (same results, slower). Install a C compiler and the "
            "Python headers to build it, or set UUIDKIT_PURE=1 to skip this attempt.",
            file=sys.stderr,
        )


def _extensions() -> list[Extension]:
    if _flag("UUIDKIT_PURE"):
        return []
    return [
        Extension(
            "uuidkit._speedups",
            sources=SOURCES,
            depends=["src/uuidkit/_speedups.h", "src/uuidkit/_speedups_digest.h"],
            define_macros=[("UK_PUBLIC_API_ONLY", "1")] if _flag("UUIDKIT_PUBLIC_API") else [],
            extra_compile_args=["-std=c11"] if os.name == "posix" else [],
            optional=not REQUIRED,
        )
    ]


class TaggedBdistWheel(bdist_wheel):
    """``bdist_wheel`` that tags the wheel ``py3-none-any`` when no accelerator was built.

    Whether the build succeeded is known only after building, so the build runs first (a
    second request for it is a no-op) and the wheel's tag follows what was built.
    """

    def run(self) -> None:
        if not self.skip_build:
            self.run_command("build")
        if _SKIPPED:
            self.root_is_pure = True
        super().run()


setup(
    ext_modules=_extensions(),
    cmdclass={"build_ext": OptionalBuildExt, "bdist_wheel": TaggedBdistWheel},
)
