"""The UIAP daemon's application API: message schema, sans-I/O (docs/uiap-api.md).

A Unix stream socket; each request and each reply is one JSON object on one line (UTF-8,
ending ``\\n``, at most :data:`MAX_LINE_OCTETS`)::

    -> {"v": 1, "id": 7, "method": "claim", "params": {"domain": "0fff:0:1:80", "uid": "2a"}}
    <- {"v": 1, "id": 7, "ok": true, "result": {"result": "granted", "claim": "...", ...}}
    <- {"v": 1, "id": 8, "ok": false, "error": {"code": "bad-params", "message": "...",
                                                "field": "params.lifetime"}}
    <- {"v": 1, "event": "expired", "claim": "...", ...}         (after "watch")

Every reply carries ``v``, the protocol version (:data:`PROTOCOL_VERSION`), so the first
reply a client reads says it; ``v`` in a request is optional, and a request naming a
version the daemon does not speak gets ``unsupported-version``. ``id`` (a number, a string
or null) is echoed. A line with ``"event"`` instead of ``"ok"`` is an event.

This module parses requests (raising :class:`APIError` with a :class:`ErrorCode`) and
builds replies; the daemon and :mod:`uuidkit.uiapd.client` share it.

References: UIAP §2.1.1 (the service to applications), §4.4 (reclaim), §4.5.2 (lifetime),
§6.1 (Domain ID text).
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from uuidkit.errors import UIAPError
from uuidkit.uiap.domain import DomainID
from uuidkit.uiap.engine_types import LIFETIME_INFINITE
from uuidkit.uiap.space import Fmt, UIDSpace

__all__ = [
    "DEFAULT_LIFETIME_S",
    "DEFAULT_SOCKET",
    "MAX_LINE_OCTETS",
    "MAX_NESTING_DEPTH",
    "METHODS",
    "PROTOCOL_VERSION",
    "SOCKET_ENV",
    "APIError",
    "ClaimParams",
    "ErrorCode",
    "Request",
    "decode_line",
    "encode_error",
    "encode_event",
    "encode_reply",
    "parse_claim_params",
    "parse_request",
    "space_from_json",
    "space_to_json",
]

#: The version of the API's messages: every reply carries it as ``v`` (UIAP §2.1.1).
PROTOCOL_VERSION: Final = 1
#: Where the daemon serves its API unless configured otherwise, and where clients look for it
#: unless told (an argument, or the environment variable :data:`SOCKET_ENV`).
DEFAULT_SOCKET: Final = "/run/uuidkit/uiapd.sock"
#: The environment variable naming the API socket for clients (``uuidkit uiap claim`` ...,
#: :class:`~uuidkit.uiapd.client.Client`) when no path is given.
SOCKET_ENV: Final = "UUIDKIT_UIAP_SOCKET"
#: Longest request or reply line, in octets including the newline.
MAX_LINE_OCTETS: Final = 64 * 1024
#: Deepest nesting of arrays and objects a request or reply may have. A request needs three
#: levels (the body, ``params``, a space); the limit is the API's own, checked before the line
#: reaches the ``json`` module, whose own limit varies by version (CPython 3.14's decoder no
#: longer runs out of recursion on deep input).
MAX_NESTING_DEPTH: Final = 32
#: Lifetime of a claim when the request names none, in seconds.
DEFAULT_LIFETIME_S: Final = 3600
#: The methods a request may name; docs/uiap-api.md describes each.
METHODS: Final = ("claim", "release", "list", "status", "metrics", "watch")


class ErrorCode(enum.Enum):
    """Every error the daemon replies with (docs/uiap-api.md describes each).

    References: UIAP §2.1.1; docs/uiap-api.md (Errors).
    """

    #: The line is not UTF-8 JSON.
    BAD_JSON = "bad-json"
    #: JSON, but not a request object (no "method", wrong types of "id" or "params").
    BAD_REQUEST = "bad-request"
    #: "v" names a protocol version the daemon does not speak.
    UNSUPPORTED_VERSION = "unsupported-version"
    #: "method" is not one of :data:`METHODS`.
    UNKNOWN_METHOD = "unknown-method"
    #: A parameter is missing, of the wrong type or out of range ("field" names it).
    BAD_PARAMS = "bad-params"
    #: The line is longer than :data:`MAX_LINE_OCTETS`; the connection is closed.
    LINE_TOO_LONG = "line-too-long"
    #: Half a line and then silence for longer than the daemon waits; connection closed.
    TIMEOUT = "timeout"
    #: No request for longer than the daemon's idle timeout; connection closed before
    #: anything more was read (a client may send its next request on a new connection).
    IDLE_TIMEOUT = "idle-timeout"
    #: The daemon serves as many clients as it allows; connection closed.
    TOO_MANY_CLIENTS = "too-many-clients"
    #: The client has as many requests in progress as it may; retry after a reply.
    BUSY = "busy"
    #: The daemon holds as many claims as it allows, in total or for this user.
    TOO_MANY_CLAIMS = "too-many-claims"
    #: No claim with that ID.
    NOT_FOUND = "not-found"
    #: The claim belongs to another user (only its owner or root may release it).
    PERMISSION_DENIED = "permission-denied"
    #: The daemon is stopping; the request was not (or not completely) carried out.
    STOPPING = "stopping"
    #: The state write that would make a grant durable failed; the claim was released.
    STATE_WRITE_FAILED = "state-write-failed"
    #: A bug in the daemon; the message says what. Other clients are not affected.
    INTERNAL = "internal"
    #: Client side only: the daemon's socket cannot be reached or closed the connection.
    UNREACHABLE = "unreachable"
    #: Client side only: a reply that does not follow this schema.
    BAD_REPLY = "bad-reply"


class APIError(UIAPError):
    """An API error: ``code`` (:class:`ErrorCode`), the message, and ``field`` if any.

    References: UIAP §2.1.1; docs/uiap-api.md (Errors).
    """

    def __init__(self, code: ErrorCode, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.field = field
        #: The ``id`` of the request at fault, when it could be read (echoed in the reply).
        self.request_id: int | str | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code.value, "message": str(self)}
        if self.field is not None:
            body["field"] = self.field
        return body


@dataclass(frozen=True, slots=True)
class Request:
    """One parsed request line.

    References: docs/uiap-api.md (Framing and versions); UIAP §2.1.1.
    """

    id: int | str | None
    method: str
    params: Mapping[str, Any]


def decode_line(line: bytes, max_octets: int = MAX_LINE_OCTETS) -> dict[str, Any]:
    """One JSON object from one line; :class:`APIError` ``bad-json`` otherwise.

    The line's size (at most ``max_octets``, by default a request's :data:`MAX_LINE_OCTETS`:
    ``line-too-long``) and its nesting
    (at most :data:`MAX_NESTING_DEPTH`, ``bad-json``) are checked here, by this module, before
    the ``json`` module parses it: the limits are the API's, the same on every version.

    References: docs/uiap-api.md (Framing and versions); RFC 8259 §9 ("An implementation may
    set limits on the size of texts that it accepts ... on the maximum depth of nesting").
    """
    if len(line) > max_octets:
        raise APIError(ErrorCode.LINE_TOO_LONG, f"line longer than {max_octets} octets")
    # Counting the openers runs in C; only a line with more of them than the limit is scanned.
    openers = line.count(b"[") + line.count(b"{")
    if openers > MAX_NESTING_DEPTH and (depth := nesting_depth(line)) > MAX_NESTING_DEPTH:
        raise APIError(
            ErrorCode.BAD_JSON, f"JSON nested {depth} deep; at most {MAX_NESTING_DEPTH} allowed"
        )
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise APIError(ErrorCode.BAD_JSON, f"not UTF-8 JSON: {error}") from None
    except RecursionError:  # not reached with the limit above; kept for a decoder that recurses
        raise APIError(ErrorCode.BAD_JSON, "JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise APIError(ErrorCode.BAD_REQUEST, f"expected a JSON object, found {_kind(value)}")
    return value


#: A JSON string (RFC 8259 §7: any escaped character, or anything but a quote or backslash),
#: or one unterminated to the end of the line; what lies inside never opens a level.
_JSON_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\Z)', re.DOTALL)
_BRACKET: Final = re.compile(rb"[\[\]{}]")


def nesting_depth(line: bytes) -> int:
    """The deepest nesting of arrays and objects in ``line`` (0 for a scalar), outside strings.

    Malformed text gets a depth too (an unmatched closer counts as nothing); json rejects it
    after. Linear in the line.
    """
    deepest = depth = 0
    for match in _BRACKET.finditer(_JSON_STRING.sub(b'""', line)):
        if match[0] in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


def parse_request(line: bytes) -> Request:
    """Parse one request line (without or with its newline).

    Raises :class:`APIError`, whose ``request_id`` is set once the ``id`` could be read.

    References: docs/uiap-api.md (Framing and versions, Methods).
    """
    body = decode_line(line)
    request_id = request_id_of(body)
    try:
        return _parse_body(body, request_id)
    except APIError as error:
        error.request_id = request_id
        raise


def _parse_body(body: Mapping[str, Any], request_id: int | str | None) -> Request:
    version = body.get("v", PROTOCOL_VERSION)
    if version != PROTOCOL_VERSION or isinstance(version, bool):
        raise APIError(
            ErrorCode.UNSUPPORTED_VERSION,
            f"protocol version {version!r} is not spoken here; this daemon speaks "
            f"{PROTOCOL_VERSION}",
            "v",
        )
    method = body.get("method")
    if not isinstance(method, str):
        raise APIError(ErrorCode.BAD_REQUEST, "expected 'method', a string", "method")
    if method not in METHODS:
        raise APIError(
            ErrorCode.UNKNOWN_METHOD,
            f"unknown method {method[:64]!r}; expected one of {', '.join(METHODS)}",
            "method",
        )
    params = body.get("params", {})
    if not isinstance(params, dict):
        raise APIError(ErrorCode.BAD_REQUEST, "expected 'params', an object", "params")
    return Request(request_id, method, params)


def request_id_of(body: Mapping[str, Any]) -> int | str | None:
    """The request's ``id``: a number, a string (at most 256 characters) or null."""
    value = body.get("id")
    if value is None or (isinstance(value, int | str) and not isinstance(value, bool)):
        if isinstance(value, str) and len(value) > 256:
            raise APIError(ErrorCode.BAD_REQUEST, "'id' is longer than 256 characters", "id")
        return value
    raise APIError(ErrorCode.BAD_REQUEST, "expected 'id', a number, a string or null", "id")


@dataclass(frozen=True, slots=True)
class ClaimParams:
    """The parameters of a ``claim`` request, checked.

    ``lifetime`` is in seconds (UIAP §4.5.2; :data:`LIFETIME_INFINITE` is for ever).

    References: UIAP §3.2.2 (describing a UID claim), §4.5.2 (lifetime); docs/uiap-api.md.
    """

    domain: DomainID
    space: UIDSpace
    lifetime: int = DEFAULT_LIFETIME_S
    reclaim: bool = False
    renew: bool = False
    release_on_disconnect: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "domain": str(self.domain),
            **space_to_json(self.space),
            "lifetime": self.lifetime,
            "reclaim": self.reclaim,
            "renew": self.renew,
            "release_on_disconnect": self.release_on_disconnect,
        }


_CLAIM_KEYS: Final = frozenset(
    {"domain", "uid", "prefix", "range", "lifetime", "reclaim", "renew", "release_on_disconnect"}
)


def parse_claim_params(params: Mapping[str, Any]) -> ClaimParams:
    """Check the parameters of ``claim``; :class:`APIError` ``bad-params`` names the field.

    References: UIAP §3.2.2, §6.1; docs/uiap-api.md (claim).
    """
    unknown = sorted(set(params) - _CLAIM_KEYS)
    if unknown:
        raise APIError(ErrorCode.BAD_PARAMS, f"unknown parameter {unknown[0]!r}", unknown[0])
    domain_text = params.get("domain")
    if not isinstance(domain_text, str):
        raise APIError(ErrorCode.BAD_PARAMS, "expected 'domain', Domain ID text", "domain")
    try:
        domain = DomainID.parse(domain_text)
    except ValueError as error:
        raise APIError(ErrorCode.BAD_PARAMS, f"domain: {error}", "domain") from None
    space = space_from_json(params)
    lifetime = params.get("lifetime", DEFAULT_LIFETIME_S)
    if not isinstance(lifetime, int) or isinstance(lifetime, bool):
        raise APIError(ErrorCode.BAD_PARAMS, "expected 'lifetime', whole seconds", "lifetime")
    if not 0 <= lifetime <= LIFETIME_INFINITE:
        raise APIError(
            ErrorCode.BAD_PARAMS,
            f"lifetime must be 0 .. {LIFETIME_INFINITE} seconds, got {lifetime}",
            "lifetime",
        )
    flags = {}
    for name in ("reclaim", "renew", "release_on_disconnect"):
        value = params.get(name, False)
        if not isinstance(value, bool):
            raise APIError(ErrorCode.BAD_PARAMS, f"expected '{name}', true or false", name)
        flags[name] = value
    return ClaimParams(domain, space, lifetime, **flags)


def space_from_json(params: Mapping[str, Any]) -> UIDSpace:
    """The UID space of exactly one of ``uid``, ``prefix`` (hex) or ``range`` ([hex, hex]).

    References: UIAP §3.2.2, §3.2.3 (UIDs, prefixes and ranges).
    """
    forms = [name for name in ("uid", "prefix", "range") if name in params]
    if len(forms) != 1:
        raise APIError(
            ErrorCode.BAD_PARAMS, f"expected exactly one of uid, prefix, range; found {forms}"
        )
    form = forms[0]
    try:
        if form == "range":
            bounds = params["range"]
            if not isinstance(bounds, list) or len(bounds) != 2:
                raise APIError(ErrorCode.BAD_PARAMS, "expected two hex UIDs", "range")
            return UIDSpace.range(_hex(bounds[0], "range"), _hex(bounds[1], "range"))
        data = _hex(params[form], form)
        return UIDSpace.unique(data) if form == "uid" else UIDSpace.prefix(data)
    except APIError:
        raise
    except ValueError as error:
        raise APIError(ErrorCode.BAD_PARAMS, f"{form}: {error}", form) from None


def space_to_json(space: UIDSpace) -> dict[str, Any]:
    """``{"uid": hex}``, ``{"prefix": hex}`` or ``{"range": [hex, hex]}`` (whole octets).

    References: UIAP §3.2.2, §3.2.3.
    """
    if space.fmt is Fmt.RANGE and space.second is not None:
        return {"range": [space.first.data.hex(), space.second.data.hex()]}
    key = "prefix" if space.fmt is Fmt.PREFIX else "uid"
    return {key: space.first.data.hex()}


def _hex(value: object, field: str) -> bytes:
    if not isinstance(value, str):
        raise APIError(ErrorCode.BAD_PARAMS, f"expected hexadecimal octets in {field}", field)
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise APIError(
            ErrorCode.BAD_PARAMS,
            f"{field}: expected hexadecimal octets, found {value[:80]!r}",
            field,
        ) from None


def _kind(value: object) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _dump(body: Mapping[str, Any]) -> bytes:
    # allow_nan=False: JSON has no NaN or infinity; every time here is finite or null.
    return json.dumps(body, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def encode_reply(request_id: int | str | None, result: Mapping[str, Any]) -> bytes:
    """A success reply line.

    References: docs/uiap-api.md (Framing and versions).
    """
    return _dump({"v": PROTOCOL_VERSION, "id": request_id, "ok": True, "result": result})


def encode_error(request_id: int | str | None, error: APIError) -> bytes:
    """An error reply line.

    References: docs/uiap-api.md (Errors).
    """
    return _dump({"v": PROTOCOL_VERSION, "id": request_id, "ok": False, "error": error.to_json()})


def encode_event(name: str, fields: Mapping[str, Any]) -> bytes:
    """An event line (sent to clients that called ``watch``).

    References: docs/uiap-api.md (watch).
    """
    return _dump({"v": PROTOCOL_VERSION, "event": name, **fields})


def finite_or_none(value: float | None) -> float | None:
    """A time for a reply: ``None`` stays null (infinite lifetime), others are rounded."""
    if value is None or not math.isfinite(value):
        return None
    return round(value, 6)
