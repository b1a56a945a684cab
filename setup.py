"""Build the optional C accelerator; a failed build leaves the pure-Python package installable.

``pip install .`` compiles ``uuidkit._speedups`` when a C compiler and the Python headers are
present. When they are not (or the build fails for any other reason), the installation
continues without it and uuidkit runs its pure-Python reference implementation. Set
``UUIDKIT_PURE=1`` at build time to skip the extension entirely.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCES = [
    "src/uuidkit/_speedups.c",
    "src/uuidkit/_speedups_text.c",
    "src/uuidkit/_speedups_bulk.c",
    "src/uuidkit/_speedups_bulk_text.c",
]


class OptionalBuildExt(build_ext):
    """``build_ext`` that reports a failed compilation and carries on without it."""

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
    def _skip(error: BaseException) -> None:
        print(
            f"uuidkit: building the C accelerator failed ({error}); using pure Python",
            file=sys.stderr,
        )


def _extensions() -> list[Extension]:
    if os.environ.get("UUIDKIT_PURE", "") not in ("", "0"):
        return []
    return [
        Extension(
            "uuidkit._speedups",
            sources=SOURCES,
            depends=["src/uuidkit/_speedups.h"],
            extra_compile_args=["-std=c11"] if os.name == "posix" else [],
            optional=True,
        )
    ]


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
