"""The ``uuidkit`` command line: a composition root (it may import anything; nothing imports it).

Each command family lives in its own module with a ``register(subparsers)`` function that
adds its sub-commands and sets ``handler`` (``(args) -> exit status``) on each; a handler
writes through :mod:`uuidkit.cli._io` and rejects a bad flag combination with
``args.parser.error(...)``.

How the process ends, as Unix tools do:

=========================================  ===========  ==========================================
what happened                              exit status  on stderr
=========================================  ===========  ==========================================
success                                    0            nothing
a usage error (unknown flag, bad value)    2            the usage line, ``uuidkit: error: ...``
rejected input (a uuidkit ``ValueError``)  2            ``uuidkit: error: argument 2 '...': ...``
the reader went away (``| head -1``)       141          nothing (128 + SIGPIPE, as the shell
                                                        reports a tool SIGPIPE ended)
Ctrl-C                                     130          nothing (128 + SIGINT)
closed or full stdout, an I/O error        1            ``uuidkit: error: ...``
a bug in uuidkit                           1            Python's traceback: never disguised
=========================================  ===========  ==========================================

A command line that starts with an option of the standard library's ``python -m uuid``
(``-u``/``--uuid``, ``-n``/``--namespace``, ``-N``/``--name``, ``-C``/``--count``) is that
command line: :func:`uuidkit.main`'s, with its output and errors (usage errors exit 2).

Start-up: the UUID commands (``gen``, ``inspect``, ...) are registered first; the other
families (state files, UIAP and its simulator) are imported and registered only when the
command line names one of their commands, or names none (``--help``, the default command).
The plain spellings of ``gen`` (``gen -n 5 -v 4 --format upper``) skip the parser entirely
(:mod:`uuidkit.cli._fastpath`; :mod:`argparse` loads only when a parser is built, in
:mod:`uuidkit.cli._parser`), and each command imports what only it uses when it runs.

References: RFC 9562 §4 (text forms), §5 (versions); UIAP §2.1.1 (the service the ``uiap`` commands
use).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from uuidkit import _stdlib_main
from uuidkit.cli import _fastpath, _io, uuid_commands
from uuidkit.errors import UUIDKitError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    import argparse
    import types

__all__ = ["build_parser", "main"]

EXIT_FAILURE = 1
EXIT_USAGE = 2
#: 128 + the signal number: what a shell reports for a process that signal ended.
EXIT_INTERRUPTED = 128 + 2
EXIT_BROKEN_PIPE = 128 + 13

_PREFIX = "uuidkit: error: "


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line: ``uuidkit [COMMAND] ...``.

    Given the ``command`` about to run, only the families it needs are imported.

    References: RFC 9562 §4, §5; UIAP §2.1.1.
    """
    from uuidkit.cli._parser import build  # argparse loads only when a parser is built

    return build(command)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status (see the module docstring).

    References: RFC 9562 §4, §5; UIAP §2.1.1.
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    command = next((word for word in arguments if not word.startswith("-")), None)
    try:
        if arguments and _stdlib_main.is_uuid_option(arguments[0]):
            # The standard library's `python -m uuid -u uuid5 -n @dns -N x` (uuidkit.main).
            _stdlib_main.run(arguments, prog="uuidkit")
            return 0
        # A plain `gen` skips argparse entirely (see _fastpath); same attributes either way.
        args: argparse.Namespace | types.SimpleNamespace | None
        args = _fastpath.plain_gen(arguments, uuid_commands.gen_command)
        if args is None:
            args = build_parser(command).parse_args(arguments)
        status: int = args.handler(args)
        _io.flush()
        return status
    except BrokenPipeError:
        _io.detach_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except UUIDKitError as error:
        return _fail(str(error), EXIT_USAGE)
    except _io.OutputError as error:
        _io.detach_stdout()
        return _fail(str(error), EXIT_FAILURE)
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        return _fail(f"{where}{error.strerror or error}", EXIT_FAILURE)


def _fail(message: str, status: int) -> int:
    try:
        _io.flush()  # what the good inputs before the bad one produced
    except (BrokenPipeError, _io.OutputError):
        _io.detach_stdout()
    print(f"{_PREFIX}{message}", file=sys.stderr)
    return status
