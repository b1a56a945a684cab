"""The plain ``gen`` fast path gives exactly argparse's namespace, or steps aside.

Command lines are drawn from the flags and values of ``gen`` (and some it must leave to
argparse); for each, either the fast path declines, or argparse accepts the same words and
produces the same values. Help and errors always come from argparse.
"""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from uuidkit.cli import _fastpath, build_parser, main, uuid_commands

FLAGS = ["-v", "--version", "-n", "-C", "--count", "--format", "-u", "-N", "--name"]
FLAGS += ["--namespace", "--hash", "--prefix", "-h", "--help", "--form", "-v7", "--count=2", "--"]
VALUES = ["1", "3", "4", "5", "6", "7", "8", "2", "9", "07", "0", "-1", "12", "1000", "1_0"]
VALUES += [" 5", "+5", "abc", "hyphenated", "upper", "urn", "int", "typeid", "base58btc"]
VALUES += ["base64", "uuid4", "dns", "", "18446744073709551616"]
WORDS = st.lists(st.sampled_from(FLAGS + VALUES), max_size=7)


def _argparse_namespace(arguments: list[str]) -> dict[str, object] | None:
    """What argparse makes of ``arguments`` (without the parser object), or None if it exits."""
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            namespace = build_parser("gen").parse_args(arguments)
    except SystemExit:
        return None
    values = vars(namespace)
    del values["parser"]
    return values


@settings(max_examples=300, deadline=None)
@given(WORDS)
@example(["-v", "4", "-n", "3", "--format", "upper"])
@example(["--count", "2", "-C", "5", "-v", "1"])
def test_fast_path_agrees_with_argparse(words: list[str]) -> None:
    arguments = ["gen", *words]
    fast = _fastpath.plain_gen(arguments, uuid_commands.gen_command)
    if fast is None:
        return
    values = vars(fast)
    del values["parser"]
    assert values == _argparse_namespace(arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        ["gen"],
        ["gen", "-n", "3"],
        ["gen", "-v", "4", "--format", "upper"],
        ["gen", "--version", "1", "-C", "10", "--count", "2"],
        ["gen", "--format", "base58btc"],
    ],
)
def test_plain_spellings_take_the_fast_path(arguments: list[str]) -> None:
    assert _fastpath.plain_gen(arguments, uuid_commands.gen_command) is not None


@pytest.mark.parametrize(
    "arguments",
    [
        ["gen", "-h"],
        ["gen", "-v", "3"],  # name-based: argparse and gen_command report what is missing
        ["gen", "-n", "0"],
        ["gen", "--format=upper"],
        ["gen", "-n"],
        ["inspect", "-"],
        [],
    ],
)
def test_everything_else_goes_through_argparse(arguments: list[str]) -> None:
    assert _fastpath.plain_gen(arguments, uuid_commands.gen_command) is None


def test_the_deferred_parser_reports_errors_as_the_gen_parser_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fast = _fastpath.plain_gen(["gen"], uuid_commands.gen_command)
    assert fast is not None
    with pytest.raises(SystemExit) as deferred:
        fast.parser.error("a problem")
    deferred_err = capsys.readouterr().err
    real = build_parser("gen").parse_args(["gen"]).parser
    assert isinstance(real, argparse.ArgumentParser)
    with pytest.raises(SystemExit) as direct:
        real.error("a problem")
    assert (deferred.value.code, deferred_err) == (direct.value.code, capsys.readouterr().err)
    assert deferred.value.code == 2


def test_main_runs_the_fast_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "-v", "6", "-n", "3", "--format", "upper"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert all(line == line.upper() and line[14] == "6" for line in lines)
