"""The API schema (uuidkit.uiapd.api): every request error has its code and field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.space import UIDSpace
from uuidkit.uiapd.api import (
    MAX_LINE_OCTETS,
    MAX_NESTING_DEPTH,
    PROTOCOL_VERSION,
    APIError,
    ClaimParams,
    ErrorCode,
    encode_error,
    encode_event,
    encode_reply,
    nesting_depth,
    parse_claim_params,
    parse_request,
    space_from_json,
    space_to_json,
)

DID = "0fff:0000:0001:0080"


@pytest.mark.parametrize(
    ("line", "code", "field"),
    [
        (b"{not json", ErrorCode.BAD_JSON, None),
        (b"\xff\xfe", ErrorCode.BAD_JSON, None),
        # Nesting past the API's own limit, well under a line's cap: refused whatever the json
        # module of this version would make of it (3.13's recursion ran out; 3.14's does not).
        pytest.param(b"[" * 20_000 + b"]" * 20_000, ErrorCode.BAD_JSON, None, id="deep-nesting"),
        pytest.param(
            b"[" * (MAX_NESTING_DEPTH + 1) + b"]" * (MAX_NESTING_DEPTH + 1),
            ErrorCode.BAD_JSON,
            None,
            id="one-level-too-deep",
        ),
        pytest.param(
            b'{"method": "list", "x": "' + b"a" * MAX_LINE_OCTETS + b'"}',
            ErrorCode.LINE_TOO_LONG,
            None,
            id="too-long",
        ),
        (b"[1, 2]", ErrorCode.BAD_REQUEST, None),
        (b'{"id": 1}', ErrorCode.BAD_REQUEST, "method"),
        (b'{"method": 3}', ErrorCode.BAD_REQUEST, "method"),
        (b'{"method": "list", "id": [1]}', ErrorCode.BAD_REQUEST, "id"),
        (b'{"method": "list", "id": true}', ErrorCode.BAD_REQUEST, "id"),
        (b'{"method": "list", "params": []}', ErrorCode.BAD_REQUEST, "params"),
        (b'{"method": "list", "v": 2}', ErrorCode.UNSUPPORTED_VERSION, "v"),
        (b'{"method": "frobnicate"}', ErrorCode.UNKNOWN_METHOD, "method"),
    ],
)
def test_request_errors(line: bytes, code: ErrorCode, field: str | None) -> None:
    with pytest.raises(APIError) as caught:
        parse_request(line)
    assert caught.value.code is code
    assert caught.value.field == field


def test_nesting_at_the_limit_reaches_the_request_checks() -> None:
    # The body is one level; a value MAX_NESTING_DEPTH - 1 arrays deep makes the limit exactly.
    deep = "[" * (MAX_NESTING_DEPTH - 1) + "]" * (MAX_NESTING_DEPTH - 1)
    request = parse_request(f'{{"method": "list", "params": {{"x": 1}}, "y": {deep}}}'.encode())
    assert request.method == "list"


def test_brackets_inside_strings_do_not_nest() -> None:
    tricky = "[" * 200 + '\\"{' * 50  # openers, escaped quotes and backslashes in a string
    line = json.dumps({"method": "list", "params": {"note": tricky}}).encode()
    assert nesting_depth(line) == 2
    assert parse_request(line).params == {"note": tricky}


def _depth_of(value: Any) -> int:
    """The nesting depth of a decoded JSON value, by its definition (RFC 8259 §4, §5)."""
    if isinstance(value, dict):
        return 1 + max((_depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth_of(v) for v in value), default=0)
    return 0


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:'),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(alphabet='[]{}"\\ab', max_size=4), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300)
@given(value=_JSON_VALUES, ensure_ascii=st.booleans())
def test_the_scanned_depth_is_the_depth_of_the_value(value: Any, ensure_ascii: bool) -> None:
    assert nesting_depth(json.dumps(value, ensure_ascii=ensure_ascii).encode()) == _depth_of(value)


def test_the_id_of_a_bad_request_is_kept_for_the_reply() -> None:
    with pytest.raises(APIError) as caught:
        parse_request(b'{"id": "abc", "method": "nope"}')
    assert caught.value.request_id == "abc"


def test_a_good_request() -> None:
    request = parse_request(b'{"v": 1, "id": 5, "method": "claim", "params": {"uid": "01"}}\n')
    assert (request.id, request.method, dict(request.params)) == (5, "claim", {"uid": "01"})


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"uid": "01"}, "domain"),
        ({"domain": 5, "uid": "01"}, "domain"),
        ({"domain": "0fff:zz:0:0", "uid": "01"}, "domain"),
        ({"domain": DID}, None),
        ({"domain": DID, "uid": "01", "prefix": "01"}, None),
        ({"domain": DID, "uid": "0g"}, "uid"),
        ({"domain": DID, "uid": 1}, "uid"),
        ({"domain": DID, "range": ["01"]}, "range"),
        ({"domain": DID, "range": "01-02"}, "range"),
        ({"domain": DID, "uid": "01", "lifetime": 1.5}, "lifetime"),
        ({"domain": DID, "uid": "01", "lifetime": "60"}, "lifetime"),
        ({"domain": DID, "uid": "01", "lifetime": True}, "lifetime"),
        ({"domain": DID, "uid": "01", "lifetime": -1}, "lifetime"),
        ({"domain": DID, "uid": "01", "lifetime": 1 << 32}, "lifetime"),
        ({"domain": DID, "uid": "01", "renew": "yes"}, "renew"),
        ({"domain": DID, "uid": "01", "reclaim": 1}, "reclaim"),
        ({"domain": DID, "uid": "01", "colour": "red"}, "colour"),
        ({"domain": DID, "uid": "00" * 256}, "uid"),
    ],
)
def test_claim_params_errors(params: dict[str, Any], field: str | None) -> None:
    with pytest.raises(APIError) as caught:
        parse_claim_params(params)
    assert caught.value.code is ErrorCode.BAD_PARAMS
    assert caught.value.field == field


def test_claim_params_round_trip() -> None:
    params = ClaimParams(
        DomainID.parse(DID), UIDSpace.range(b"\x01", b"\x09"), 60, True, True, False
    )
    assert parse_claim_params(params.to_json()) == params
    defaults = parse_claim_params({"domain": DID, "prefix": "0a"})
    assert (defaults.lifetime, defaults.reclaim, defaults.renew) == (3600, False, False)
    assert defaults.space == UIDSpace.prefix(b"\x0a")


@pytest.mark.parametrize(
    "space",
    [UIDSpace.unique(b"\x01\x02"), UIDSpace.prefix(b"\xab"), UIDSpace.range(b"", b"\xff")],
)
def test_space_json(space: UIDSpace) -> None:
    assert space_from_json(space_to_json(space)) == space


def test_replies_carry_the_version() -> None:
    for line in (
        encode_reply(1, {"x": 1}),
        encode_error("a", APIError(ErrorCode.NOT_FOUND, "no such claim", "claim")),
        encode_event("expired", {"claim": "c"}),
    ):
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert json.loads(line)["v"] == PROTOCOL_VERSION
    error = json.loads(encode_error(None, APIError(ErrorCode.TIMEOUT, "slow")))
    assert error == {
        "v": 1,
        "id": None,
        "ok": False,
        "error": {"code": "timeout", "message": "slow"},
    }
