"""Write docs/uuidkit.1, the manual page ``uuidkit(1)``, from the command line's own parser.

Usage: ``PYTHONPATH=src python3 tools/gen_manpage.py`` (rewrites docs/uuidkit.1) or ``--check``
(exit status 1 if the page is stale). ``tests/test_manpage.py`` runs the check, so the page
cannot drift from the parser, and the systemd unit's ``Documentation=man:uuidkit(1)`` names a
page that exists (install it as ``/usr/local/share/man/man1/uuidkit.1``; see
docs/uiap-daemon.md).

Every command and subcommand gets a section: its usage line, its description and each option
with its help text, in the order the parser has them. The page carries no date and no version,
so the same parser always gives the same page.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

# Before argparse formats anything: usage lines wrap at COLUMNS, so fix it for every machine.
os.environ["COLUMNS"] = "80"
os.environ["UUIDKIT_PURE"] = "1"

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "uuidkit.1"

#: The sections after the commands: what the parser does not know.
TAIL = r"""
.SH ENVIRONMENT
.TP
.B UUIDKIT_UIAP_SOCKET
The UIAP daemon's API socket for the client commands (\fBuiap claim\fR, \fBrelease\fR,
\fBlist\fR, \fBstatus\fR, \fBmetrics\fR, \fBwatch\fR) when \fB\-\-socket\fR is not given.
.TP
.B UUIDKIT_PURE
Set to 1: use the pure\-Python implementation even when the compiled accelerator is present.
.SH FILES
.TP
.I /run/uuidkit/uiapd.sock
The UIAP daemon's default API socket.
.TP
.I /etc/uuidkit/uiapd.toml
The daemon's configuration file, as the systemd unit passes it with \fB\-\-config\fR.
.TP
.I /var/lib/uuidkit\-uiapd/state.json
Held claims and the device ID, kept across restarts (the snapshot).
.TP
.I /var/lib/uuidkit\-uiapd/state.journal
The claim changes since that snapshot, appended one record each; see docs/uiap-daemon.md.
.SH EXIT STATUS
0 on success; for \fBuiap claim\fR, 1 when the claim is denied; 2 for bad input, a bad
setting, or a daemon that cannot be reached.
.SH SEE ALSO
The documentation shipped with uuidkit: docs/cli.md (the commands), docs/uiap-daemon.md
(running the daemon, operating a site), docs/uiap-api.md (the daemon's API).
"""


def _roff(text: str) -> str:
    """``text`` safe in a roff line: backslashes and hyphens escaped, no leading control dot."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(
        "\\&" + line if line.startswith((".", "'")) else line for line in text.splitlines()
    )


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def _walk(
    parser: argparse.ArgumentParser,
) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and every parser under it, depth first in the parser's own order."""
    yield parser
    for _, child in _subcommands(parser):
        yield from _walk(child)


def _options(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    lines = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        if action.option_strings:
            takes_value = action.nargs != 0
            metavar = formatter._format_args(action, action.dest.upper()) if takes_value else ""
            names = ", ".join(f"\\fB{_roff(name)}\\fR" for name in action.option_strings)
            label = f"{names} \\fI{_roff(metavar)}\\fR" if metavar else names
        else:
            label = f"\\fI{_roff(formatter._format_args(action, action.dest))}\\fR"
        helptext = formatter._expand_help(action) if action.help else ""
        lines += [".TP", label, _roff(helptext)]
    return lines


def _section(parser: argparse.ArgumentParser) -> list[str]:
    usage = parser.format_usage().removeprefix("usage: ").rstrip()
    lines = [f".SS {_roff(parser.prog)}", ".nf", _roff(usage), ".fi"]
    if parser.description:
        lines += [".PP", _roff(parser.description)]
    commands = [(name, child) for name, child in _subcommands(parser)]
    if commands:
        lines += [".PP", "Commands: " + ", ".join(f"\\fB{_roff(n)}\\fR" for n, _ in commands) + "."]
    return lines + _options(parser)


def render() -> str:
    """The whole page, from :func:`uuidkit.cli._parser.build`."""
    from uuidkit.cli._parser import build

    root = build(None)
    head = [
        '.TH UUIDKIT 1 "" "uuidkit" "User Commands"',
        ".SH NAME",
        "uuidkit \\- generate, inspect and convert UUIDs (RFC 9562); allocate IDs with UIAP",
        ".SH SYNOPSIS",
        ".B uuidkit",
        "[\\fICOMMAND\\fR] [\\fIOPTIONS\\fR]",
        ".SH DESCRIPTION",
        _roff(root.description or ""),
        ".SH COMMANDS",
    ]
    body = [line for parser in _walk(root) for line in _section(parser)]
    text = "\n".join(head + body) + "\n" + TAIL.lstrip("\n")
    return '.\\" Generated by tools/gen_manpage.py from the argument parser; do not edit.\n' + text


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} is stale: run PYTHONPATH=src tools/gen_manpage.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
