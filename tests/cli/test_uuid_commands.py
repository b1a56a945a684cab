"""The ``uuidkit`` command line: no arguments, ``gen``, ``inspect``, ``convert``, bad input.

Run in-process through :func:`uuidkit.cli.main` (plus one real ``python -m uuidkit``).
Vectors are RFC 9562 Appendix A and B.2.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from uuidkit.cli import main

#: RFC 9562 Appendix A.1 (v1), A.5 (v6: the same time, clock_seq and node), A.6 (v7), A.3 (v4).
A1_V1 = "c232ab00-9414-11ec-b3c8-9f6bdeced846"
A5_V6 = "1ec9414c-232a-6b00-b3c8-9f6bdeced846"
A6_V7 = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
A3_V4 = "919108f7-52d1-4320-9bac-f847db4148a8"
#: RFC 9562 Appendix A.4 (v5) and B.2 (name-based v8, SHA-256) of DNS "www.example.com".
A4_V5 = "2ed6657d-e927-568b-95e1-2665a8aea6a2"
B2_V8 = "5c146b14-3c52-8afd-938a-375d0df1fbf6"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def fails(capsys: pytest.CaptureFixture[str], *argv: str, out: str = "") -> str:
    """Run ``argv``, expect exit status 2 and ``out`` on stdout; return the stderr line."""
    status, stdout, err = run(capsys, *argv)
    assert (status, stdout) == (2, out)
    assert err.count("\n") == 1 and err.startswith("uuidkit: error: ")
    return err.removeprefix("uuidkit: error: ").rstrip("\n")


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``argv``, expect a usage error: exit status 2, the usage line, then the message."""
    with pytest.raises(SystemExit) as caught:
        main(list(argv))
    captured = capsys.readouterr()
    assert (caught.value.code, captured.out) == (2, "")
    lines = captured.err.splitlines()
    assert lines[0].startswith("usage: uuidkit") and "Traceback" not in captured.err
    assert lines[-1].startswith("uuidkit: error: ")
    return lines[-1].removeprefix("uuidkit: error: ")


# --- no arguments -------------------------------------------------------------------------------


def test_no_arguments_prints_a_fresh_v7_and_its_fields(capsys: pytest.CaptureFixture[str]) -> None:
    before = datetime.now(UTC)
    status, out, err = run(capsys)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    value = uuid.UUID(lines[0])
    assert value.version == 7 and value.variant == uuid.RFC_4122
    labels = [line.split()[0] for line in lines[1:]]
    assert labels == ["variant", "version", "unix_ts_ms", "rand_a", "rand_b", "time"]
    stamped = datetime.fromisoformat(lines[-1].split()[1])
    assert before - timedelta(seconds=1) <= stamped <= datetime.now(UTC)


def test_python_dash_m_uuidkit_runs_in_a_real_process() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "uuidkit"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert uuid.UUID(result.stdout.splitlines()[0]).version == 7


# --- gen ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [1, 4, 6, 7, 8])
def test_gen_makes_count_distinct_uuids_of_the_version(
    capsys: pytest.CaptureFixture[str], version: int
) -> None:
    status, out, _ = run(capsys, "gen", "-v", str(version), "-n", "5")
    values = [uuid.UUID(line) for line in out.splitlines()]
    assert status == 0 and len(set(values)) == 5
    assert {(v.version, v.variant) for v in values} == {(version, uuid.RFC_4122)}


def test_gen_defaults_to_one_v7(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "gen")
    assert status == 0 and uuid.UUID(out.strip()).version == 7


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["-v", "5", "--namespace", "dns", "--name", "www.example.com"], A4_V5),  # Appendix A.4
        (["-v", "5", "--namespace", "DNS", "--name", "www.example.com"], A4_V5),
        # The standard library CLI's spellings: -u uuid5, @dns, -N NAME.
        (["-u", "uuid5", "--namespace", "@dns", "-N", "www.example.com"], A4_V5),
        (["-v", "8", "--namespace", "dns", "--name", "www.example.com", "--hash", "sha256"], B2_V8),
        (["-v", "8", "--namespace", "@DNS", "--name", "www.example.com"], B2_V8),  # Appendix B.2
        (
            ["-v", "3", "--namespace", "url", "--name", "https://example.org/"],
            str(uuid.uuid3(uuid.NAMESPACE_URL, "https://example.org/")),
        ),
        (
            ["-v", "5", "--namespace", "oid", "--name", "1.3.6.1"],
            str(uuid.uuid5(uuid.NAMESPACE_OID, "1.3.6.1")),
        ),
        (
            ["-v", "5", "--namespace", "x500", "--name", "cn=Zoë"],
            str(uuid.uuid5(uuid.NAMESPACE_X500, "cn=Zoë")),
        ),
        (
            ["-v", "5", "--namespace", "{" + A3_V4 + "}", "--name", "n"],
            str(uuid.uuid5(uuid.UUID(A3_V4), "n")),
        ),
    ],
)
def test_gen_name_based(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    status, out, _ = run(capsys, "gen", *argv)
    assert (status, out) == (0, expected + "\n")


def test_gen_name_based_repeats_the_same_value(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "gen", "-v5", "--namespace=dns", "--name=www.example.com", "-n", "2")
    assert out == f"{A4_V5}\n{A4_V5}\n"


def test_the_standard_library_count_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "gen", "-u", "uuid5", "--namespace", "@url", "-N", "x", "-C", "2")
    expected = str(uuid.uuid5(uuid.NAMESPACE_URL, "x"))
    assert out == f"{expected}\n{expected}\n"
    status, out, _ = run(capsys, "gen", "-u", "uuid7", "-C", "3")
    assert status == 0 and {uuid.UUID(line).version for line in out.splitlines()} == {7}
    assert len(out.splitlines()) == 3


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("upper", A4_V5.upper()),
        ("urn", "urn:uuid:" + A4_V5),
        ("braced", "{" + A4_V5 + "}"),
        ("hex", A4_V5.replace("-", "")),
        ("int", str(uuid.UUID(A4_V5).int)),
        ("bytes_le", uuid.UUID(A4_V5).bytes_le.hex()),
    ],
)
def test_gen_format(capsys: pytest.CaptureFixture[str], style: str, expected: str) -> None:
    argv = ["-v", "5", "--namespace", "dns", "--name", "www.example.com", "--format", style]
    _, out, _ = run(capsys, "gen", *argv)
    assert out == expected + "\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-v", "3"], "version 3 is name-based: give both --namespace and --name"),
        (["-v", "3", "--name", "x"], "version 3 is name-based: give both --namespace and --name"),
        (["-v", "5", "--namespace", "dns"], "version 5 is name-based: give both"),
        (["-v", "4", "--name", "x"], "--name/--namespace/--hash: not used by version 4"),
        (["-v", "7", "--namespace", "dns"], "--name/--namespace/--hash: not used by version 7"),
        (["-v", "5", "--namespace", "dns", "--name", "x", "--hash", "sha512"], "--hash: only"),
        (["-v", "8", "--hash", "sha512"], "version 8 with --name/--hash is name-based: give both"),
        (["-v", "8", "--name", "x"], "version 8 with --name/--hash is name-based: give both"),
        (["-n", "0"], "argument -n/-C/--count: expected a positive integer, found '0'"),
        (["-C", "x"], "argument -n/-C/--count: expected a positive integer, found 'x'"),
        (["-u", "uuid2"], "argument -u/--uuid: expected one of uuid1, uuid3, uuid4, uuid5, "),
        (
            ["-v", "5", "--namespace", "6ba7b810-9dad-11d1-80b4-00c04fd430cz", "--name", "x"],
            "argument --namespace: expected dns, url, oid, x500 (or @dns ...) or a UUID, found "
            "'6ba7b810-9dad-11d1-80b4-00c04fd430cz': invalid character 'z' at 35",
        ),
        (["-v", "5", "--namespace", "@nope", "--name", "x"], "argument --namespace: expected"),
    ],
)
def test_gen_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert usage_error(capsys, "gen", *argv).startswith(message)


# --- inspect ------------------------------------------------------------------------------------


def test_inspect_appendix_a1_v1(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "inspect", A1_V1.upper())
    assert status == 0
    assert out.splitlines() == [
        A1_V1,
        "  variant              RFC 9562 (10xx)",
        "  version              1 (Gregorian time-based)",
        "  time_low             3258100480 (0xc232ab00)",
        "  time_mid             37908 (0x9414)",
        "  time_high            492 (0x1ec)",
        "  clock_seq            13256 (0x33c8)",
        "  node                 175285648414790 (0x9f6bdeced846)",
        "  time                 2022-02-22T19:22:22.0000000Z",
    ]


def test_inspect_json_of_appendix_a_vectors(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "inspect", "--json", A5_V6, A6_V7, A3_V4)
    v6, v7, v4 = (json.loads(line) for line in out.splitlines())
    assert status == 0
    assert v6["fields"] == {
        "time_high": 0x1EC9414C,
        "time_mid": 0x232A,
        "time_low": 0xB00,
        "clock_seq": 0x33C8,
        "node": 0x9F6BDECED846,
    }
    assert (v6["version"], v6["time"]) == (6, "2022-02-22T19:22:22.0000000Z")
    assert v7 == {
        "uuid": A6_V7,
        "variant": "RFC 9562 (10xx)",
        "version": 7,
        "fields": {"unix_ts_ms": 0x017F22E279B0, "rand_a": 0xCC3, "rand_b": 0x18C4DC0C0C07398F},
        "unix_ns": 1645557742000 * 1_000_000,
        "time": "2022-02-22T19:22:22.000Z",
    }
    assert v4["fields"] == {
        "random_a": 0x919108F752D1,
        "random_b": 0x320,
        "random_c": 0x1BACF847DB4148A8,
    }
    assert "time" not in v4


def test_inspect_nil_and_max(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "inspect", "--json", "0" * 32, "F" * 32)
    nil, max_ = (json.loads(line) for line in out.splitlines())
    assert (nil["variant"], nil["version"], nil["special"]) == (
        "NCS (reserved, 0xxx)",
        None,
        "Nil (RFC 9562 §5.9)",
    )
    assert (max_["variant"], max_["version"], max_["special"]) == (
        "future (reserved, 111x)",
        None,
        "Max (RFC 9562 §5.10)",
    )


def test_inspect_v7_beyond_year_9999(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "inspect", "ffffffff-ffff-7fff-bfff-ffffffffffff")
    assert out.splitlines()[-1] == "  time                 outside datetime's years 1-9999"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nope", "argument 2 'nope': invalid character 'n' at 0"),
        (A1_V1 + "0", f"argument 2 '{A1_V1}0': group 4: expected 12 hex digits, found 13"),
        ("{" + A1_V1, "argument 2 '{" + A1_V1 + "': missing closing brace '}' at 37"),
    ],
)
def test_inspect_bad_input_names_the_argument(
    capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    good = run(capsys, "inspect", A1_V1)[1]
    assert fails(capsys, "inspect", A1_V1, text, out=good).startswith(message)


def test_dash_reads_lines_of_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{A1_V1}\r\n\n{A5_V6.upper()}\n"))
    status, out, _ = run(capsys, "inspect", "--json", "-", A6_V7)
    versions = [json.loads(line)["version"] for line in out.splitlines()]
    assert (status, versions) == (0, [1, 6, 7])
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"{A1_V1}\n\n {A1_V1}\n"))
    message = fails(capsys, "convert", "-", out=A1_V1 + "\n")
    assert message == f"stdin line 3 ' {A1_V1}': invalid character ' ' at 0"


@pytest.mark.parametrize("command", ["inspect", "convert"])
def test_empty_stdin_prints_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert run(capsys, command, "-") == (0, "", "")
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n\r\n"))
    assert run(capsys, command, "-") == (0, "", "")


def test_non_utf8_stdin_names_the_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(A1_V1.encode() + b"\n\xff" + A1_V1[1:].encode()))
    monkeypatch.setattr(sys, "stdin", stdin)
    message = fails(capsys, "convert", "-", out=A1_V1 + "\n")
    assert message.startswith("stdin line 2 '\\udcff") and message.endswith(
        "invalid character '\\udcff' at 0"
    )


# --- convert ------------------------------------------------------------------------------------


def test_convert_v1_to_v6_and_back_appendix_a1_a5(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "convert", "--to-version", "6", A1_V1) == (0, A5_V6 + "\n", "")
    assert run(capsys, "convert", "--to-version", "1", A5_V6.upper()) == (0, A1_V1 + "\n", "")


def test_convert_between_formats(capsys: pytest.CaptureFixture[str]) -> None:
    value = uuid.UUID(A6_V7)
    _, out, _ = run(capsys, "convert", "--format", "int", "urn:uuid:" + A6_V7, A6_V7.upper())
    assert out == f"{value.int}\n{value.int}\n"
    _, out, _ = run(capsys, "convert", "--from", "int", str(value.int), "--format", "braced")
    assert out == "{" + A6_V7 + "}\n"
    _, out, _ = run(capsys, "convert", "--from", "bytes_le", value.bytes_le.hex())
    assert out == A6_V7 + "\n"
    _, out, _ = run(capsys, "convert", "--from", "int", "0" * 5000 + str(value.int))
    assert out == A6_V7 + "\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--to-version", "6", A3_V4],
            f"argument 1 '{A3_V4}': expected a version 1 UUID, found {A3_V4} (version 4)",
        ),
        (["--to-version", "1", A1_V1], "argument 1 '"),
        (["--from", "int", "-5"], "argument 1 '-5': --from int: expected a decimal integer"),
        (["--from", "int", str(1 << 128)], "argument 1 '3402823669209384634633746074317682"),
        (["--from", "int", "1" + "0" * 5000], "argument 1 '" + "1" + "0" * 42 + "...': --from int"),
        (["--from", "bytes_le", "zz"], "argument 1 'zz': --from bytes_le: expected 32 hex digits"),
        (["--from", "bytes_le", "00"], "argument 1 '00': bytes_le: expected 16 bytes, found 1"),
    ],
)
def test_convert_bad_input(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert fails(capsys, "convert", *argv).startswith(message)


@pytest.mark.parametrize(
    ("argv", "argument", "value", "choices"),
    [
        (["gen", "-v", "2"], "-v/--version", "2", ["1", "3", "4", "5", "6", "7", "8"]),
        (["gen", "--format", "base64"], "--format", "base64", ["hyphenated", "urn", "base62"]),
        (["convert", "--to-version", "7", A1_V1], "--to-version", "7", ["1", "6"]),
    ],
)
def test_a_bad_choice_names_the_argument_the_value_and_the_choices(
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    argument: str,
    value: str,
    choices: list[str],
) -> None:
    # The meaning, not argparse's punctuation (3.14 quotes the value and each choice).
    error = usage_error(capsys, *argv)
    assert f"argument {argument}:" in error and "invalid choice" in error
    offered = re.search(r"\(choose from (.*)\)", error)
    assert offered, error
    named = [choice.strip(" '\"") for choice in offered[1].split(",")]
    assert value not in named and set(choices) <= set(named), named
    assert re.search(rf"invalid choice: '?{re.escape(value)}'?", error)


def test_a_missing_argument_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    # The usage line, then one "uuidkit: error:" line naming the reason; exit status 2.
    assert "the following arguments are required: UUID" in usage_error(capsys, "inspect")
