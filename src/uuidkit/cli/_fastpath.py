"""``uuidkit gen`` without building the argument parser, for the plain spellings of ``gen``.

Building the whole argparse parser (three sub-commands, a help formatter per option, the
terminal-size probe that loads :mod:`shutil`) costs more than generating a UUID. The plain
forms of ``gen`` are recognised here instead, without importing :mod:`argparse`, and give
exactly the attributes argparse's namespace would (in a :class:`types.SimpleNamespace`):
``gen`` followed by any of ``-v``/``--version`` with a version that needs no name (1, 4, 6,
7, 8), ``-n``/``-C``/``--count`` with a positive decimal count, and ``--format`` with a
style, each as two words. Anything else (help, another spelling, a bad value, any other
flag) returns ``None`` and goes through argparse, so help, errors and every other flag behave
exactly as before; tests/cli checks the two agree.
"""

from __future__ import annotations

import types
from collections.abc import Sequence

from uuidkit.format import FORMAT_STYLES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final, NoReturn

__all__ = ["plain_gen"]

#: ``-v`` values that make a UUID without --name/--namespace (3 and 5 need them).
_UNNAMED_VERSIONS: Final = frozenset({"1", "4", "6", "7", "8"})
_VERSION_FLAGS: Final = frozenset({"-v", "--version"})
_COUNT_FLAGS: Final = frozenset({"-n", "-C", "--count"})
#: Longest count accepted here; a longer one is left to argparse.
_MAX_COUNT_DIGITS: Final = 18


class _DeferredGenParser:
    """Stands in for the ``gen`` sub-parser: the real one is built only to report an error."""

    def error(self, message: str) -> NoReturn:
        import argparse

        from uuidkit.cli import build_parser

        parser = build_parser("gen")
        # argparse keeps the sub-parsers in the one action of its sub-command group.
        (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        gen: argparse.ArgumentParser = action.choices["gen"]
        gen.error(message)

    def __repr__(self) -> str:
        return "<the 'uuidkit gen' parser, built on first use>"


def _positive(text: str) -> int | None:
    if text.isascii() and text.isdigit() and text[0] != "0" and len(text) <= _MAX_COUNT_DIGITS:
        return int(text)
    return None


def plain_gen(arguments: Sequence[str], handler: Any) -> types.SimpleNamespace | None:
    """The attributes argparse gives ``arguments`` if they are a plain ``gen``; else ``None``."""
    if not arguments or arguments[0] != "gen" or len(arguments) % 2 == 0:
        return None
    version, count, style = 7, 1, "hyphenated"
    for index in range(1, len(arguments), 2):
        flag, value = arguments[index], arguments[index + 1]
        if flag in _VERSION_FLAGS and value in _UNNAMED_VERSIONS:
            version = int(value)
        elif flag in _COUNT_FLAGS and (number := _positive(value)) is not None:
            count = number
        elif flag == "--format" and value in FORMAT_STYLES:
            style = value
        else:
            return None
    return types.SimpleNamespace(
        command="gen",
        handler=handler,
        parser=_DeferredGenParser(),
        version=version,
        count=count,
        namespace=None,
        name=None,
        hash=None,
        format=style,
        prefix=None,
        node_from=None,
    )
