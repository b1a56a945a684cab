"""The ``uuidkit`` command line: a composition root (it may import anything; nothing imports it).

Each command family lives in its own module with a ``register(subparsers)`` function that
adds its sub-commands and sets ``handler`` (``(args) -> exit status``) on each.

Bad input: a one-line reason on stderr and exit status 2, never a traceback.

Start-up: the UUID commands (``gen``, ``inspect``, ...) are registered first; the other
families (state files, UIAP and its simulator) are imported and registered only when the
command line names one of their commands, or names none (``--help``, the default command).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from uuidkit.cli import uuid_commands

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2


class _OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (the usage stays behind ``--help``)."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


#: Command families besides uuid_commands, imported only when their commands may be needed.
_OTHER_FAMILIES = ("state_commands", "uiap_commands")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; given the ``command`` about to run, only the families it needs."""
    parser = _OneLineErrorParser(
        prog="uuidkit",
        description="Generate, inspect and convert UUIDs (RFC 9562); allocate IDs with UIAP.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    uuid_commands.register(subparsers)
    if command is None or command not in subparsers.choices:
        for family in _OTHER_FAMILIES:
            importlib.import_module(f"uuidkit.cli.{family}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    command = next((word for word in arguments if not word.startswith("-")), None)
    parser = build_parser(command)
    args = parser.parse_args(arguments)
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
