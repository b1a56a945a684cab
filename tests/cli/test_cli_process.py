"""How ``uuidkit`` ends as a process: pipes, signals, closed and full outputs, memory, bugs.

Pipes and signals are real (a child process); each test waits for a line of output before
acting, so the child is inside :func:`uuidkit.cli.main` and nothing depends on timing.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

import uuidkit
from uuidkit.cli import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, _io, build_parser, main

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
#: More UUIDs than any test waits for: the child is stopped long before it finishes.
ENDLESS = str(10**12)


def uuidkit_process(*argv: str, **options: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "uuidkit", *argv], env=ENV, **options)


def first_line(child: subprocess.Popen[bytes], timeout: float = 30) -> bytes:
    """The child's first line of output; kill it and fail if none comes within ``timeout``
    (a command that builds everything before printing never gets there)."""
    assert child.stdout is not None
    if not select.select([child.stdout], [], [], timeout)[0]:
        child.kill()
        child.communicate()
        pytest.fail(f"no output within {timeout} s: not streaming")
    return child.stdout.readline()


def test_a_reader_that_goes_away_ends_it_quietly_with_141() -> None:
    # `uuidkit gen -n HUGE | head -1`: the reader closes the pipe after one line.
    child = uuidkit_process("gen", "-n", ENDLESS, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    first = first_line(child)
    child.stdout.close()
    assert child.wait(timeout=60) == EXIT_BROKEN_PIPE == 128 + signal.SIGPIPE
    assert uuid.UUID(first.decode().strip()).version == 7
    assert child.stderr.read() == b""  # no "Broken pipe", no "Exception ignored", no traceback
    child.stderr.close()


def test_head_in_a_real_shell_pipeline() -> None:
    script = f'"{sys.executable}" -m uuidkit gen -n {ENDLESS} | head -1; echo "${{PIPESTATUS[0]}}"'
    # (Were the output not streamed, the timeout below would end this test as a failure.)
    result = subprocess.run(
        ["bash", "-c", script], env=ENV, capture_output=True, text=True, timeout=60
    )
    line, status = result.stdout.splitlines()
    assert uuid.UUID(line).version == 7 and status == "141" and result.stderr == ""


def _as_in_a_terminal() -> None:
    # Ctrl-C reaches a foreground process whose SIGINT disposition is the default. A shell
    # that starts a job in the background without job control ignores SIGINT for it, and an
    # ignored signal stays ignored across exec: a test run started that way would hand the
    # child an ignored SIGINT, and Python would then (rightly) not raise KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_exits_130_without_a_traceback() -> None:
    child = uuidkit_process(
        "gen",
        "-n",
        ENDLESS,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_as_in_a_terminal,
    )
    first_line(child)  # main() is running and writing
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == EXIT_INTERRUPTED == 128 + signal.SIGINT
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err and err == b""


def test_a_closed_stdout_is_an_error_not_silence() -> None:
    script = f'exec "{sys.executable}" -m uuidkit gen >&-'
    result = subprocess.run(
        ["bash", "-c", script], env=ENV, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert result.stderr == "uuidkit: error: standard output is closed\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_is_an_error_naming_stdout() -> None:
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "uuidkit", "gen", "-n", "3"],
            env=ENV,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert result.stderr == ("uuidkit: error: writing standard output: No space left on device\n")


def test_empty_stdin_prints_nothing_in_a_real_process() -> None:
    for command in ("inspect", "convert"):
        result = subprocess.run(
            [sys.executable, "-m", "uuidkit", command, "-"],
            env=ENV,
            input="",
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def _peak_rss_kib(count: int) -> int:
    # A fresh interpreter per count, so the peak is this command's alone.
    program = (
        "import os, resource, sys\n"
        "from uuidkit.cli import main\n"
        "sys.stdout = open(os.devnull, 'w')\n"
        f"assert main(['gen', '-n', '{count}']) == 0\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], env=ENV, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return int(result.stderr)


def test_gen_streams_in_constant_memory() -> None:
    # Holding 300,000 UUIDs and their strings at once costs about 300,000 * (100 + 85) bytes
    # = 55 MB; streaming in chunks of _io.CHUNK costs about CHUNK * 185 bytes < 1 MB more
    # than a run of a single chunk. Allow 10 MB of allocator noise between the two.
    small = _peak_rss_kib(_io.CHUNK)
    large = _peak_rss_kib(300_000)
    assert large - small < 10 * 1024, (small, large)


# --- in-process ---------------------------------------------------------------------------------


def test_an_internal_bug_is_not_reported_as_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A bare ValueError (or anything else) from a bug is no input error: it escapes with
    # its traceback instead of becoming "uuidkit: error: ..." and exit status 2.
    def buggy(args: argparse.Namespace) -> int:
        raise ValueError("a bug")

    monkeypatch.setattr("uuidkit.cli.uuid_commands.gen_command", buggy)
    with pytest.raises(ValueError, match="a bug"):
        main(["gen"])


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    path = "compiled accelerator" if uuidkit.ACCELERATED else "pure Python"
    python = ".".join(map(str, sys.version_info[:3]))
    assert capsys.readouterr().out == f"uuidkit {uuidkit.__version__} ({path}, Python {python})\n"


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found.extend(_all_parsers(child))
    return found


#: The commands this test holds to it (the uiap family documents its own options).
CHECKED = {
    "uuidkit",
    "uuidkit gen",
    "uuidkit inspect",
    "uuidkit convert",
    "uuidkit state show",
    "uuidkit state reset",
    "uuidkit uiap simulate",
}


def test_every_option_has_help_that_shows_its_default() -> None:
    parsers = [p for p in _all_parsers(build_parser()) if p.prog in CHECKED]
    assert {p.prog for p in parsers} == CHECKED
    for parser in parsers:
        text = parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) or action.dest == "help":
                continue
            assert action.help, f"{parser.prog} {action.option_strings or action.dest}: no help"
            has_default = action.default not in (None, False, argparse.SUPPRESS)
            if has_default and action.option_strings:
                # The rendered help names the default value.
                entry = text[text.index(action.option_strings[-1]) :]
                assert f"default: {action.default}" in " ".join(entry.split()), (
                    f"{parser.prog} {action.option_strings}: default not in help"
                )
