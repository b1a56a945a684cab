"""The argparse parser of the whole command line (see :func:`uuidkit.cli.build_parser`).

Kept out of :mod:`uuidkit.cli` so that the plain ``uuidkit gen`` forms, which skip the parser
(:mod:`uuidkit.cli._fastpath`), do not load :mod:`argparse` (and its :mod:`gettext`) at all.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from uuidkit import ACCELERATED, __version__
from uuidkit.cli import _PREFIX, EXIT_USAGE, uuid_commands

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any, NoReturn

__all__ = ["build"]


class _HelpFormatter(argparse.HelpFormatter):
    """Shows an option's default in its help unless the help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        shown = default not in (None, False, argparse.SUPPRESS) and action.option_strings
        if shown and "default" not in text:
            text += " (default: %(default)s)"
        return text


class _Parser(argparse.ArgumentParser):
    """argparse with one error style: the usage line, then ``uuidkit: error: MESSAGE``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{_PREFIX}{message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


#: Command families besides uuid_commands, imported only when their commands may be needed.
_OTHER_FAMILIES = ("state_commands", "uiap_commands")


def version_line() -> str:
    """``uuidkit --version``: the release and which implementation runs (see ``ACCELERATED``)."""
    path = "compiled accelerator" if ACCELERATED else "pure Python"
    python = ".".join(map(str, sys.version_info[:3]))
    return f"uuidkit {__version__} ({path}, Python {python})"


def build(command: str | None) -> argparse.ArgumentParser:
    """The whole command line, importing only the families ``command`` needs."""
    parser = _Parser(
        prog="uuidkit",
        description="Generate, inspect and convert UUIDs (RFC 9562); allocate IDs with UIAP. "
        "With no command: a fresh UUIDv7 and its fields. The options of 'python -m uuid' "
        "work in place of a command: uuidkit -u uuid5 -n @dns -N NAME, -u uuid7 -C NUM.",
    )
    parser.add_argument("--version", action="version", version=version_line())
    parser.set_defaults(handler=uuid_commands.default_command, parser=parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    uuid_commands.register(subparsers)
    if command is None or command not in subparsers.choices:
        for family in _OTHER_FAMILIES:
            importlib.import_module(f"uuidkit.cli.{family}").register(subparsers)
    return parser
