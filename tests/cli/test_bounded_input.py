"""A line of stdin is read with a bound: a line without end is refused by its number, in
constant memory, and Ctrl-C ends a command waiting on a long line.

The in-process tests feed ``sys.stdin`` a byte stream (as the real one is); the process
tests feed a real pipe from a generator in this process, so the child's reading is the one
a shell pipeline gets, and nothing depends on timing: the child is known to be inside the
command (it has answered a first line) before it is interrupted.
"""

from __future__ import annotations

import fcntl
import io
import os
import platform
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

import pytest

from uuidkit.cli import EXIT_INTERRUPTED, EXIT_USAGE, _io, main
from uuidkit.encodings import decode, encode

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
A6_V7 = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"  # RFC 9562 Appendix A.6

#: The child's peak memory may exceed that of the same command on one short line by this
#: much: allocator noise between two runs, plus a few copies of a MAX_LINE_OCTETS line.
NOISE_OCTETS = 8 * 1024 * 1024
#: What the endless stream offers before it gives up: were the line read whole, holding it
#: (and its decoded copy) would cost at least this much, far above NOISE_OCTETS.
OFFERED_OCTETS = 128 * 1024 * 1024


def _binary_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_the_longest_form_and_a_margin_are_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    value = decode("01h455vb4pex5vsknk084sn02q", "base32-crockford")
    longest = encode(value, "typeid", prefix="p" * 63)
    assert len(longest) == _io.LONGEST_FORM_CHARS < _io.MAX_LINE_OCTETS // 4
    _binary_stdin(monkeypatch, longest.encode() + b"\n")
    status, out, _ = _run(capsys, "convert", "--from", "typeid", "-")
    assert (status, out) == (0, f"{value}\n")
    # A line just inside the bound reaches the parser, which names what is wrong with it.
    padded = " " * (_io.MAX_LINE_OCTETS - 1 - len(A6_V7)) + A6_V7
    _binary_stdin(monkeypatch, f"{A6_V7}\n{padded}\n".encode())
    status, out, err = _run(capsys, "convert", "-")
    assert (status, out) == (EXIT_USAGE, f"{A6_V7}\n")
    assert err.startswith("uuidkit: error: stdin line 2 ' ")
    assert err.endswith(f"too long: {_io.MAX_LINE_OCTETS - 1} characters, a UUID has at most 45\n")


@pytest.mark.parametrize("ending", [b"\n", b""])
def test_a_line_past_the_bound_is_refused_by_its_number(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, ending: bytes
) -> None:
    # One octet more than the bound, its line ending (if any) included.
    spaces = b" " * (_io.MAX_LINE_OCTETS + 1 - len(ending) - len(A6_V7))
    too_long = spaces + A6_V7.encode() + ending
    _binary_stdin(monkeypatch, f"{A6_V7}\n\n".encode() + too_long)
    status, out, err = _run(capsys, "convert", "-")
    assert (status, out) == (EXIT_USAGE, f"{A6_V7}\n")
    assert err == (
        f"uuidkit: error: stdin line 3: longer than {_io.MAX_LINE_OCTETS} octets (no UUID "
        f"form is longer than {_io.LONGEST_FORM_CHARS} characters); stopped reading\n"
    )


def test_a_text_stream_without_a_buffer_is_bounded_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("0" * (10 * _io.MAX_LINE_OCTETS)))
    status, _, err = _run(capsys, "inspect", "-")
    assert status == EXIT_USAGE and "stdin line 1: longer than" in err


# --- a real process on a pipe -------------------------------------------------------------------


def _zeros() -> Iterator[bytes]:
    """An endless stream of zero octets, as /dev/zero gives, up to OFFERED_OCTETS."""
    block = bytes(64 * 1024)
    for _ in range(OFFERED_OCTETS // len(block)):
        yield block


def _feed(pipe: IO[bytes], blocks: Iterator[bytes], written: list[int]) -> None:
    try:
        for block in blocks:
            pipe.write(block)
            written[0] += len(block)
        pipe.close()
    except BrokenPipeError:  # the reader stopped: what the test wants
        pass


def _peak_rss_octets(stdin_blocks: Iterator[bytes]) -> tuple[int, str, int]:
    """Run ``uuidkit inspect -`` on the blocks; its exit status, stderr and peak RSS."""
    # VmHWM, the peak RSS of the child's own address space: getrusage's ru_maxrss carries
    # the peak of the address space before exec over, which is this (large) test process's.
    program = (
        "import re, sys\n"
        "from uuidkit.cli import main\n"
        "status = main(['inspect', '-'])\n"
        "status_text = open('/proc/self/status').read()\n"
        "print(re.search(r'VmHWM:\\s*(\\d+) kB', status_text).group(1), file=sys.stderr)\n"
        "sys.exit(status)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", program],
        env=ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stderr is not None
    written = [0]
    feeder = threading.Thread(target=_feed, args=(child.stdin, stdin_blocks, written))
    feeder.start()
    err = child.stderr.read().decode()
    status = child.wait(timeout=120)
    feeder.join(timeout=120)
    *message, peak_kib = err.splitlines()
    return status, "\n".join(message), int(peak_kib) * 1024


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's /proc")
def test_an_endless_line_stops_with_the_error_in_constant_memory() -> None:
    baseline_status, _, baseline = _peak_rss_octets(iter([A6_V7.encode() + b"\n"]))
    assert baseline_status == 0
    status, message, peak = _peak_rss_octets(_zeros())
    assert status == EXIT_USAGE
    assert message.startswith(f"uuidkit: error: stdin line 1: longer than {_io.MAX_LINE_OCTETS}")
    assert OFFERED_OCTETS > 8 * NOISE_OCTETS > 8 * 16 * _io.MAX_LINE_OCTETS
    assert peak - baseline < NOISE_OCTETS, (baseline, peak)


def _as_in_a_terminal() -> None:
    # As in test_cli_process: a foreground process gets SIGINT with the default disposition.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


#: The number of read(2) in /proc/PID/syscall, by machine.
READ_SYSCALL = {"x86_64": "0", "aarch64": "63"}.get(platform.machine(), "")


def _wait_until_blocked_reading(child: subprocess.Popen[bytes], pipe: IO[bytes]) -> None:
    """Return once ``child`` sits in ``read(0, ...)`` with nothing left in its stdin pipe.

    A barrier on the child's state, not a delay: a signal sent while the child is between
    two reads inside the interpreter's C code would be acted on only at the next input (a
    limit of CPython, not of the command), so the test waits for the blocking read itself.
    """
    deadline = time.monotonic() + 60  # a hang guard only; the state comes within milliseconds
    while time.monotonic() < deadline:
        unread = struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"\0" * 4))[0]
        with open(f"/proc/{child.pid}/syscall", encoding="ascii") as status:
            call = status.read().split()
        if unread == 0 and call[:2] == [READ_SYSCALL, "0x0"]:  # read(0, ...)
            return
        time.sleep(0.001)
    child.kill()
    pytest.fail("the child never waited for input")


@pytest.mark.skipif(
    not READ_SYSCALL or not os.path.exists(f"/proc/{os.getpid()}/syscall"),
    reason="needs Linux's /proc/PID/syscall on x86-64 or arm64",
)
def test_ctrl_c_ends_a_command_waiting_on_a_long_line() -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "uuidkit", "inspect", "-"],
        env={**ENV, "PYTHONUNBUFFERED": "1"},  # each answer reaches the pipe as written
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_as_in_a_terminal,
    )
    streams: Any = child
    streams.stdin.write(A6_V7.encode() + b"\n")
    streams.stdin.flush()
    if not select.select([streams.stdout], [], [], 60)[0]:
        child.kill()
        child.communicate()
        pytest.fail("no answer to the first line within 60 s")
    assert streams.stdout.readline().decode().strip() == A6_V7  # inside main(), reading
    # Most of a line, and no end to it: the command waits for the rest.
    streams.stdin.write(b"0" * (_io.MAX_LINE_OCTETS - 1))
    streams.stdin.flush()
    _wait_until_blocked_reading(child, streams.stdin)
    child.send_signal(signal.SIGINT)
    status = child.wait(timeout=60)  # stdin stays open: only the signal can end it
    streams.stdin.close()
    err = streams.stderr.read()
    streams.stdout.close()
    streams.stderr.close()
    assert status == EXIT_INTERRUPTED == 128 + signal.SIGINT
    assert err == b""  # no traceback, no "KeyboardInterrupt"
