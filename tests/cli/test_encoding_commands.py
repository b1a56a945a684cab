"""The short encodings on the command line: ``--format``/``--to`` write them, ``--from`` reads
them, ``--prefix`` names a TypeID's type.

References: the TypeID specification v0.3.0 (valid.yml "valid-uuidv7"); RFC 4648 §7;
draft-davis-uuidrev-alt-uuid-encoding-methods-01 (Base58).
"""

from __future__ import annotations

import json
import uuid

import pytest

from uuidkit.cli import main
from uuidkit.encodings import SCHEMES, decode

TYPEID_V7 = "01890a5d-ac96-774b-bcce-b302099a8057"  # TypeID valid.yml "valid-uuidv7"
FIGURE_1 = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"  # RFC 9562 §4


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    status = main(list(argv))
    assert status == 2
    return capsys.readouterr().err.strip()


def test_convert_to_typeid_with_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "convert", "--to", "typeid", "--prefix", "user", TYPEID_V7)
    assert out == "user_01h455vb4pex5vsknk084sn02q\n"


@pytest.mark.parametrize("scheme", SCHEMES)
def test_convert_to_and_from_every_scheme(capsys: pytest.CaptureFixture[str], scheme: str) -> None:
    encoded = run(capsys, "convert", "--to", scheme, FIGURE_1).strip()
    assert decode(encoded, scheme) == uuid.UUID(FIGURE_1)
    # "--" because a base64url value may start with "-" (this one does: "-B1P...").
    back = run(capsys, "convert", "--from", scheme, "--", encoded)
    assert back == FIGURE_1 + "\n"


def test_known_spellings(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "convert", "--format", "base58btc", FIGURE_1) == "Xe22UfxT3rxcKJEAfL5373\n"
    assert run(capsys, "convert", "--to", "base32hex", FIGURE_1) == "V0EKVBJTTG8T19R502GCI7JBUO\n"


def test_gen_in_a_scheme(capsys: pytest.CaptureFixture[str]) -> None:
    lines = run(capsys, "gen", "-n", "3", "--format", "typeid", "--prefix", "order").split()
    assert len(lines) == 3 and all(line.startswith("order_") for line in lines)
    assert all(decode(line, "typeid", prefix="order").version == 7 for line in lines)
    assert lines == sorted(lines)  # TypeID keeps UUIDv7's time order


def test_inspect_reads_a_scheme(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "inspect", "--json", "--from", "typeid", "user_01h455vb4pex5vsknk084sn02q")
    description = json.loads(out)
    assert description["uuid"] == TYPEID_V7 and description["version"] == 7


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["convert", "--to", "base62", "--prefix", "x", FIGURE_1], "--prefix: only with"),
        (["gen", "--format", "typeid", "--prefix", "Bad"], "invalid character 'B' in prefix"),
        (["inspect", "--from", "base62", "z" * 22], "base62: value exceeds 128 bits"),
        (["convert", "--from", "typeid", "user_01H455VB4PEX5VSKNK084SN02Q"], "invalid character"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    err = fails(capsys, *argv)
    assert message in err and len(err.splitlines()) == 1
