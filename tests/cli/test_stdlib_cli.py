"""``uuidkit.main()`` and ``python -m uuidkit`` against the interpreter's own ``python -m uuid``.

Each command line runs three ways: ``python -m uuid`` (the interpreter's own module, whichever
version runs the tests), ``python -m uuidkit`` and ``uuidkit.main()`` in this process. Where
the standard library prints UUIDs, uuidkit prints as many, of the same version and variant,
and for the name-based versions the same values (RFC 9562 §5.3, §5.5); where it rejects the
command line with a usage error (status 2), so does uuidkit. Where it ends in a traceback (a
namespace that is not a UUID on 3.12 and 3.13, a name UTF-8 cannot encode), uuidkit reports a
usage error instead. Python 3.11's uuid has no command line: there the table below, which the
other versions check against their own module, says what 3.14's would do.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

import uuidkit
from uuidkit import _stdlib_main
from uuidkit.cli import EXIT_BROKEN_PIPE
from uuidkit.cli import main as cli_main

SRC = Path(__file__).resolve().parents[2] / "src"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *sys.path])}
#: Whether the running interpreter's uuid has a command line (3.12 and later).
STDLIB_HAS_MAIN = hasattr(uuid, "main")
#: Whether its command line is 3.14's (-C, uuid6-uuid8), or the newest stands in for none.
NEWEST = not STDLIB_HAS_MAIN or hasattr(uuid, "uuid7")
USAGE_ERROR = 2


@dataclass(frozen=True)
class Case:
    """A command line and whether 3.14's and 3.12's ``python -m uuid`` accept it."""

    args: tuple[str | bytes, ...]
    newest: bool
    first: bool

    @property
    def accepted(self) -> bool:
        return self.newest if NEWEST else self.first


CASES = [
    Case(("-u", "uuid4"), newest=True, first=True),
    Case(("--uuid", "uuid1"), newest=True, first=True),
    Case(("-u", "uuid3", "-n", "@dns", "-N", "python.org"), newest=True, first=True),
    Case(("-u", "uuid5", "-n", "@url", "-N", "https://example.com/\u00fc"), True, True),
    Case(("-uuuid5", "--namespace=@oid", "--name=1.3.6.1"), newest=True, first=True),
    Case(("-u", "uuid5", "-n", "@x500", "-N", "cn=x"), newest=True, first=True),
    Case(("-u", "uuid3", "-n", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "-N", "x"), True, True),
    Case(("-u", "uuid5", "-n", "{12345678-1234-5678-1234-567812345678}", "-N", "x"), True, True),
    Case(("-u", "uuid4", "-n", "@dns", "-N", "ignored"), newest=True, first=True),
    Case(("-n", "@dns", "-N", "x", "-u", "uuid5"), newest=True, first=True),
    Case(("-u", "uuid6"), newest=True, first=False),
    Case(("-u", "uuid7", "-C", "3"), newest=True, first=False),
    Case(
        (
            "-u",
            "uuid8",
        ),
        newest=True,
        first=False,
    ),
    Case(("-C", "0"), newest=True, first=False),
    Case(("-C", "-2"), newest=True, first=False),
    Case(("--count=4",), newest=True, first=False),
    Case(("-u", "uuid5", "-n", "@dns", "-N", "x", "-C", "2"), newest=True, first=False),
    # Usage errors everywhere.
    Case(("-u", "uuid2"), newest=False, first=False),
    Case(("-u", "uuid5", "-n", "@dns"), newest=False, first=False),
    Case(("-u", "uuid3", "-N", "x"), newest=False, first=False),
    Case(("-u", "uuid5", "-n", "@dns", "-N", ""), newest=False, first=False),
    Case(("-C", "x"), newest=False, first=False),
    Case(("--nam", "x"), newest=False, first=False),
    Case(("-u", "uuid4", "extra"), newest=False, first=False),
    Case(("-u",), newest=False, first=False),
    # A traceback in some standard libraries, a usage error in uuidkit.
    Case(("-u", "uuid5", "-n", "not-a-uuid", "-N", "x"), newest=False, first=False),
    Case(("-u", "uuid5", "-n", "@dns", "-N", b"\xff"), newest=False, first=False),
]
IDS = [" ".join(map(str, case.args)) for case in CASES]


@dataclass(frozen=True)
class Run:
    status: int
    out: str
    err: str


def run_module(module: str, args: tuple[str | bytes, ...]) -> Run:
    done = subprocess.run(
        [sys.executable, "-m", module, *args], env=ENV, capture_output=True, timeout=120
    )
    return Run(
        done.returncode,
        done.stdout.decode(errors="replace"),
        done.stderr.decode(errors="replace"),
    )


def run_main(
    args: tuple[str | bytes, ...],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> Run:
    # As the interpreter hands undecodable argument bytes to sys.argv (PEP 383).
    argv = [os.fsdecode(arg) for arg in args]
    monkeypatch.setattr(sys, "argv", ["uuid", *argv])
    status = 0
    try:
        uuidkit.main()
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else 1
    captured = capsys.readouterr()
    return Run(status, captured.out, captured.err)


def _is_name_based(args: tuple[str | bytes, ...]) -> bool:
    return any(isinstance(arg, str) and arg.endswith(("uuid3", "uuid5")) for arg in args)


def _expected_lines(args: tuple[str | bytes, ...]) -> int:
    """How many UUIDs 3.14's ``python -m uuid`` prints for an accepted command line."""
    for index, arg in enumerate(args):
        if arg in ("-C", "--count"):
            return max(int(args[index + 1]), 0)
        if isinstance(arg, str) and arg.startswith("--count="):
            return max(int(arg.partition("=")[2]), 0)
    return 1


def _check_values(ours: Run, reference: Run | None, args: tuple[str | bytes, ...]) -> None:
    values = [uuid.UUID(line) for line in ours.out.splitlines()]
    assert ours.status == 0 and ours.err == ""
    if reference is None:  # Python 3.11: the table and 3.14's rules
        assert len(values) == _expected_lines(args)
        return
    expected = [uuid.UUID(line) for line in reference.out.splitlines()]
    assert [(v.version, v.variant) for v in values] == [(v.version, v.variant) for v in expected]
    if _is_name_based(args):
        assert values == expected  # RFC 9562 §5.3, §5.5: one name, one UUID


def _check_error(ours: Run, reference: Run | None) -> None:
    assert ours.status == USAGE_ERROR, ours
    assert "error:" in ours.err and "Traceback" not in ours.err and ours.out == ""
    if reference is not None:
        assert reference.status != 0
        if "Traceback" not in reference.err:
            assert reference.status == USAGE_ERROR


@pytest.fixture(scope="module")
def stdlib_runs() -> dict[str, Run]:
    """The running interpreter's ``python -m uuid`` for every case (none on 3.11)."""
    if not STDLIB_HAS_MAIN:
        return {}
    return {key: run_module("uuid", case.args) for key, case in zip(IDS, CASES, strict=True)}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_table_is_the_running_standard_librarys(
    case: Case, stdlib_runs: dict[str, Run]
) -> None:
    if not STDLIB_HAS_MAIN:
        pytest.skip("Python 3.11's uuid has no command line")
    reference = stdlib_runs[IDS[CASES.index(case)]]
    assert (reference.status == 0) is case.accepted, reference


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_uuidkit_main_is_python_m_uuid(
    case: Case,
    stdlib_runs: dict[str, Run],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reference = stdlib_runs.get(IDS[CASES.index(case)])
    ours = run_main(case.args, capsys, monkeypatch)
    if case.accepted:
        _check_values(ours, reference, case.args)
    else:
        _check_error(ours, reference)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_python_m_uuidkit_takes_python_m_uuids_options(
    case: Case, stdlib_runs: dict[str, Run]
) -> None:
    reference = stdlib_runs.get(IDS[CASES.index(case)])
    ours = run_module("uuidkit", case.args)
    if case.accepted:
        _check_values(ours, reference, case.args)
    else:
        _check_error(ours, reference)
        assert "uuidkit: error:" in ours.err


def test_without_arguments_main_prints_one_uuid4(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = run_main((), capsys, monkeypatch)
    (line,) = ours.out.splitlines()
    assert ours.status == 0 and uuid.UUID(line).version == 4  # RFC 9562 §5.4


def test_which_first_words_are_python_m_uuids_options() -> None:
    for word in ("-u", "-uuuid7", "--uuid", "--uuid=uuid7", "--uu", "-n", "--namespace=@dns"):
        assert _stdlib_main.is_uuid_option(word), word
    for word in ("-N", "--name", "--nam", "-C", "--count", "--count=3", "--c"):
        assert _stdlib_main.is_uuid_option(word), word
    # uuidkit's own: its options and commands, and gen's -n (a count there).
    for word in ("-h", "--help", "--version", "--", "-", "gen", "inspect", "-v", "--v", "--x"):
        assert not _stdlib_main.is_uuid_option(word), word


def test_uuidkits_own_commands_keep_their_meanings(capsys: pytest.CaptureFixture[str]) -> None:
    # `-n` is gen's count: two values, not a namespace.
    assert cli_main(["gen", "-n", "2", "-v", "4"]) == 0
    assert [uuid.UUID(line).version for line in capsys.readouterr().out.splitlines()] == [4, 4]
    assert cli_main(["-u", "uuid4"]) == 0
    assert uuid.UUID(capsys.readouterr().out.strip()).version == 4


@pytest.mark.skipif(not NEWEST, reason="this Python's python -m uuid has no -C")
def test_a_reader_that_goes_away_ends_python_m_uuidkit_quietly() -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "uuidkit", "-u", "uuid7", "-C", str(10**12)],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    assert uuid.UUID(child.stdout.readline().decode().strip()).version == 7
    child.stdout.close()
    assert child.wait(timeout=60) == EXIT_BROKEN_PIPE
    assert child.stderr.read() == b""
    child.stderr.close()
