"""Standard input and output for the commands: streamed, attributed, ending like Unix tools.

* Output is written as it is made (``gen -n 10000000`` holds one chunk at a time), and every
  failure to write is told apart: a reader that went away (:class:`BrokenPipeError`, handled
  by :func:`uuidkit.cli.main` as a quiet exit) from a closed or full standard output
  (:class:`OutputError`, exit status 1 with a message).
* Input comes from the command line and, for a ``-`` argument, lazily from the lines of
  standard input, each tagged with where it came from (``argument 2``, ``stdin line 7``) so
  an error can name it. A line is read with a bound (:data:`MAX_LINE_OCTETS`): a line longer
  than any UUID form plus a margin is rejected by its number once that many octets have
  arrived, so ``inspect - </dev/zero`` stops at once in constant memory, and Ctrl-C is seen
  between bounded reads as it is while waiting for input.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator

from uuidkit.errors import UUIDKitError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Final

__all__ = [
    "CHUNK",
    "LONGEST_FORM_CHARS",
    "MAX_LINE_OCTETS",
    "Input",
    "InputError",
    "OutputError",
    "detach_stdout",
    "flush",
    "inputs",
    "write",
    "write_lines",
]

#: Lines per write: large enough to amortise the call, small enough to keep memory flat.
CHUNK: Final = 4096
#: The longest form any command reads: a TypeID with the longest prefix (63 characters, "_",
#: 26 digits); every other form is shorter (a URN is 45 characters, a decimal 39 digits).
LONGEST_FORM_CHARS: Final = 63 + 1 + 26
#: The longest line of standard input read (its line ending included): the longest form plus
#: a margin, so stray spaces or leading zeros still get the parser's own diagnosis, while
#: a line without end is refused after this many octets rather than held in memory.
MAX_LINE_OCTETS: Final = 1024
#: How much of a bad input an error message quotes.
_QUOTE_CHARS: Final = 48


class OutputError(Exception):
    """Standard output is closed or cannot be written (not a reader going away)."""


class InputError(UUIDKitError):
    """One input (a command-line argument or a line of stdin) was rejected; says which."""


class Input:
    """One input text and where it came from, for error messages.

    A plain slotted class: importing dataclasses would be a large part of the command line's
    start-up.
    """

    __slots__ = ("text", "where")

    def __init__(self, text: str, where: str) -> None:
        self.text = text
        self.where = where

    def __repr__(self) -> str:
        return f"Input(text={self.text!r}, where={self.where!r})"

    def error(self, problem: UUIDKitError) -> InputError:
        """``problem`` prefixed with where this input came from and how it read."""
        quoted = repr(self.text)
        if len(quoted) > _QUOTE_CHARS:
            quoted = quoted[: _QUOTE_CHARS - 4] + "...'"
        return InputError(f"{self.where} {quoted}: {problem}")


def write(text: str) -> None:
    """Write ``text`` to standard output; see the module docstring for failures."""
    stream = sys.stdout
    if stream is None:
        raise OutputError("standard output is closed")
    try:
        stream.write(text)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputError(f"writing standard output: {error.strerror or error}") from None


def flush() -> None:
    """Flush standard output, so a write error is seen here and not at interpreter exit."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputError(f"writing standard output: {error.strerror or error}") from None


def write_lines(lines: Iterable[str]) -> None:
    """Write each of ``lines`` followed by a newline, :data:`CHUNK` lines per write."""
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) == CHUNK:
            write("\n".join(batch) + "\n")
            batch.clear()
    if batch:
        write("\n".join(batch) + "\n")


def detach_stdout() -> None:
    """Point the process's standard output at ``/dev/null``.

    After a broken pipe or a failed write, the interpreter still flushes ``sys.stdout`` on
    exit and would print "Exception ignored ... BrokenPipeError"; writing the leftovers to
    ``/dev/null`` instead ends the process quietly. Only the real process stream is touched
    (not a replacement installed by a caller or a test harness).
    """
    stream = sys.stdout
    if stream is None or stream is not sys.__stdout__:
        return
    assert stream is not None
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)


def _stdin_lines() -> Iterator[str]:
    stdin = sys.stdin
    if stdin is None:
        raise InputError("-: standard input is closed")
    # Bytes, decoded per line: a stray non-UTF-8 byte becomes a character that the parser
    # names with its position, not a UnicodeDecodeError for the whole stream.
    source = getattr(stdin, "buffer", None) or stdin
    number = 0
    while True:
        # Never readline() without a limit: one bounded read per line (a text stream
        # without a buffer counts characters, which only makes the bound tighter).
        line = source.readline(MAX_LINE_OCTETS + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_OCTETS:
            raise InputError(
                f"stdin line {number}: longer than {MAX_LINE_OCTETS} octets (no UUID form "
                f"is longer than {LONGEST_FORM_CHARS} characters); stopped reading"
            )
        yield line.decode("utf-8", "surrogateescape") if isinstance(line, bytes) else line


def inputs(arguments: list[str]) -> Iterator[Input]:
    """The arguments in order, ``-`` replaced by the non-empty lines of stdin (read lazily,
    each at most :data:`MAX_LINE_OCTETS` long)."""
    for index, argument in enumerate(arguments, 1):
        if argument != "-":
            yield Input(argument, f"argument {index}")
            continue
        for number, line in enumerate(_stdin_lines(), 1):
            text = line.rstrip("\r\n")
            if text:
                yield Input(text, f"stdin line {number}")
