"""The ``uuidkit`` command line: a composition root (it may import anything; nothing imports it).

Each command family lives in its own module with a ``register(subparsers)`` function that
adds its sub-commands and sets ``handler`` (``(args) -> exit status``) on each.

Bad input: a one-line reason on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from uuidkit.cli import state_commands, uiap_commands, uuid_commands

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2


class _OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (the usage stays behind ``--help``)."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineErrorParser(
        prog="uuidkit",
        description="Generate, inspect and convert UUIDs (RFC 9562); allocate IDs with UIAP.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    uuid_commands.register(subparsers)
    state_commands.register(subparsers)
    uiap_commands.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        handler = uuid_commands.default_command
    try:
        status: int = handler(args)
    except ValueError as error:
        print(f"uuidkit: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as error:
        print(f"uuidkit: error: {error}", file=sys.stderr)
        return 1
    return status
