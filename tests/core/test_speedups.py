"""The compiled accelerator: in use when built, identical to the pure-Python reference.

Every compiled function is compared with its Python twin (``uuidkit._accel.PURE_TWINS``)
on the same inputs, valid and invalid: same value, or the same error type, message and
position. Under ``UUIDKIT_PURE=1`` the compiled-only tests skip and one test checks that
the public functions are the Python ones.
"""

from __future__ import annotations

import builtins
import gc
import inspect
import os
import pickle
import types
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit
from uuidkit import _accel

SPEEDUPS = _accel.SPEEDUPS
compiled_only = pytest.mark.skipif(
    _accel.PURE_REQUESTED, reason="UUIDKIT_PURE=1 forces the pure-Python path"
)
#: Tests of the compiled module itself: skipped where it is not built or not wanted.
needs_speedups = pytest.mark.skipif(
    SPEEDUPS is None, reason="uuidkit._speedups not in use (not built, or UUIDKIT_PURE=1)"
)

#: Public functions with a compiled twin, by the name they are registered under.
ACCELERATED: dict[str, Callable[..., Any]] = {
    "uuid3": uuidkit.uuid3,
    "uuid4": uuidkit.uuid4,
    "uuid5": uuidkit.uuid5,
    "uuid8": uuidkit.uuid8,
    "parse": uuidkit.parse,
    "format_uuid": uuidkit.format_uuid,
    "to_hyphenated": uuidkit.to_hyphenated,
    "to_upper": uuidkit.to_upper,
    "to_urn": uuidkit.to_urn,
    "to_braced": uuidkit.to_braced,
    "to_hex": uuidkit.to_hex,
    "to_bytes": uuidkit.to_bytes,
    "to_bytes_le": uuidkit.to_bytes_le,
    "fields": uuidkit.fields,
    "timestamp_ns": uuidkit.timestamp_ns,
}
#: Those published as plain builtin functions (frameworks take them as column defaults).
PLAIN_DEFAULTS = frozenset({"uuid4", "uuid8"})


def _built_here() -> bool:
    """Whether a compiled module sits in the package (or CI says one must be in use)."""
    package = Path(uuidkit.__file__).parent
    required = os.environ.get("UUIDKIT_REQUIRE_SPEEDUPS", "") not in ("", "0")
    return required or any(package.glob("_speedups*.so")) or any(package.glob("_speedups*.pyd"))


@compiled_only
def test_compiled_path_is_in_use() -> None:
    """Built and not disabled: the public functions are the C ones, and slots are filled.

    A tree where nobody built the extension skips; CI sets UUIDKIT_REQUIRE_SPEEDUPS=1 so
    there a missing or unloadable module fails instead.
    """
    if SPEEDUPS is None and not _built_here():
        pytest.skip("uuidkit._speedups not built here (python3 setup.py build_ext --inplace)")
    assert SPEEDUPS is not None, "uuidkit._speedups was built but is not in use"
    assert SPEEDUPS.__name__ == "uuidkit._speedups"
    assert SPEEDUPS.__file__.endswith((".so", ".pyd"))
    assert _accel.SLOT_LAYOUT
    for name, function in ACCELERATED.items():
        if name in PLAIN_DEFAULTS:  # the module's own builtin, named as the public function
            assert type(function) is types.BuiltinFunctionType, name
            assert function.__self__ is SPEEDUPS, name
            assert function.__module__ == "uuidkit", name
            continue
        assert type(function).__name__ == "CompiledFunction", name
        assert function.__wrapped__ is _accel.PURE_TWINS[name], name  # type: ignore[attr-defined]
        assert function.__doc__ == _accel.PURE_TWINS[name].__doc__, name


def _unannotated(function: Callable[..., Any]) -> inspect.Signature:
    """The signature without annotations (a builtin's text signature carries none)."""
    signature = inspect.signature(function)
    return signature.replace(
        parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
        return_annotation=signature.empty,
    )


def test_public_functions_keep_their_signatures_and_pickle() -> None:
    for name, function in ACCELERATED.items():
        pure = _accel.PURE_TWINS[name]
        if name in PLAIN_DEFAULTS:
            assert _unannotated(function) == _unannotated(pure), name
            assert (function.__doc__ or "").split("\n")[0] == (pure.__doc__ or "").split("\n")[0]
        else:
            assert inspect.signature(function) == inspect.signature(pure), name
        assert pickle.loads(pickle.dumps(function)) is function, name


@pytest.mark.skipif(not _accel.PURE_REQUESTED, reason="only meaningful under UUIDKIT_PURE=1")
def test_pure_path_when_requested() -> None:
    assert SPEEDUPS is None
    for name, function in ACCELERATED.items():
        assert isinstance(function, types.FunctionType), name


def _outcome(function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        result = function(*args, **kwargs)
    except Exception as error:
        return "error", (type(error), str(error), getattr(error, "position", None))
    if isinstance(result, uuid.UUID):
        assert type(result) is uuid.UUID
        assert result.is_safe is uuid.SafeUUID.unknown
        return "uuid", result.int
    return "value", (type(result), result)


def _same(name: str, *args: Any, **kwargs: Any) -> None:
    pure = _accel.PURE_TWINS[name]
    assert _outcome(ACCELERATED[name], *args, **kwargs) == _outcome(pure, *args, **kwargs)


class _Subclass(uuid.UUID):
    __slots__ = ()

    def __str__(self) -> str:
        return "custom"


_uuids = st.builds(uuid.UUID, int=st.integers(0, (1 << 128) - 1))
_special = st.sampled_from([uuidkit.NIL, uuidkit.MAX, uuidkit.NAMESPACE_DNS])
_odd_arguments = st.sampled_from(
    [None, 5, "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", b"\0" * 16, _Subclass(int=7)]
)


def _versioned(number: int, version: int) -> uuid.UUID:
    """``number`` with RFC 9562 variant bits and ``version`` (any of 0-15)."""
    cleared = number & ~((0xF << 76) | (0b11 << 62))
    return uuid.UUID(int=cleared | (version << 76) | (0b10 << 62))


_values = st.one_of(
    _uuids,
    _special,
    st.builds(_versioned, st.integers(0, (1 << 128) - 1), st.integers(0, 15)),
)


@given(_values | _odd_arguments)
@settings(max_examples=150, deadline=None)
def test_one_argument_functions_match_the_reference(value: Any) -> None:
    for name in (
        "to_hyphenated",
        "to_upper",
        "to_urn",
        "to_braced",
        "to_hex",
        "to_bytes",
        "to_bytes_le",
        "fields",
        "timestamp_ns",
    ):
        _same(name, value)


@given(
    _values | _odd_arguments,
    st.sampled_from(["hyphenated", "upper", "urn", "braced", "hex", "int", "bytes_le", "nope", 3]),
)
@settings(max_examples=200, deadline=None)
def test_format_uuid_matches_the_reference(value: Any, style: Any) -> None:
    _same("format_uuid", value, style)
    _same("format_uuid", value)


def _mutations(text: str) -> st.SearchStrategy[str]:
    index = st.integers(0, len(text) - 1)
    char = st.sampled_from([*"-{}gG:xX0aF \t\u0660\uff10_+", "é"])
    return st.one_of(
        st.builds(lambda i, c: text[:i] + c + text[i + 1 :], index, char),
        st.builds(lambda i: text[:i] + text[i + 1 :], index),
        st.builds(lambda i, c: text[:i] + c + text[i:], index, char),
    )


@st.composite
def _texts(draw: st.DrawFn) -> str:
    value = draw(_uuids)
    form = draw(
        st.sampled_from(
            [
                str(value),
                str(value).upper(),
                value.hex,
                "{" + str(value) + "}",
                value.urn,
                "URN:UUID:" + str(value).upper(),
                "Urn:Uuid:" + str(value),
            ]
        )
    )
    return draw(st.one_of(st.just(form), _mutations(form)))


@given(_texts() | st.text(max_size=50) | _odd_arguments, st.booleans())
@settings(max_examples=300, deadline=None)
def test_parse_matches_the_reference_in_both_modes(text: Any, strict: bool) -> None:
    _same("parse", text, strict=strict)
    if not strict:
        _same("parse", text)


def test_parse_of_a_str_subclass_and_bad_calls_match_the_reference() -> None:
    class Text(str):
        pass

    _same("parse", Text("f81d4fae-7dec-11d0-a765-00a0c91e6bf6"))
    _same("parse", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", strict=1)
    _same("parse", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", True)
    _same("parse", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", lenient=True)
    _same("parse")


#: Calls with the wrong number or kind of arguments. The compiled twins call their C
#: function directly when the arguments fit its convention (one positional for the
#: one-argument functions, none for uuid4); anything else must still give the reference's
#: answer (the same value, or the same TypeError), never reach the C function.
_BAD_ARGUMENTS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((), {}),
    ((uuidkit.NIL, uuidkit.NIL), {}),
    ((uuidkit.NIL,), {"x": 1}),
    ((), {"u": uuidkit.NIL}),
    ((1, 2, 3, 4), {}),
]


@pytest.mark.parametrize("name", sorted(ACCELERATED))
def test_bad_argument_counts_match_the_reference(name: str) -> None:
    for args, kwargs in _BAD_ARGUMENTS:
        compiled = _outcome(ACCELERATED[name], *args, **kwargs)
        pure = _outcome(_accel.PURE_TWINS[name], *args, **kwargs)
        if name in ("uuid4", "uuid8") and compiled[0] == pure[0] == "uuid":
            continue  # a call they take: random values, compared elsewhere
        assert compiled == pure, (args, kwargs)


#: Every character a hex-digit reader can get wrong: all of Latin-1 (both sides of each
#: range '0'-'9', 'A'-'F', 'a'-'f', and the bytes with the case bit or the high bit set)
#: and a few wider ones (Arabic-Indic and full-width digits, a surrogate).
_EVERY_CHARACTER = [chr(code) for code in range(256)] + ["\u0660", "\uff10", "\uff41", "\udc80"]


@pytest.mark.parametrize(
    "form", ["f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "F81D4FAE7DEC11D0A76500A0C91E6BF6"]
)
def test_parse_matches_the_reference_for_every_character_at_every_position(form: str) -> None:
    # The compiled reader checks eight digits per machine word; a single character at any
    # position of the canonical (RFC 9562 §4) or the 32-digit form must be accepted or
    # refused exactly as the reference does, with the same value.
    for position in range(len(form)):
        for character in _EVERY_CHARACTER:
            text = form[:position] + character + form[position + 1 :]
            _same("parse", text)
            _same("parse", text, strict=True)


@given(
    _special | _uuids | _odd_arguments,
    st.one_of(st.text(max_size=20), st.binary(max_size=20), st.just("\udc80"), st.just(3)),
)
@settings(max_examples=200, deadline=None)
def test_name_based_match_the_reference(namespace: Any, name: Any) -> None:
    _same("uuid3", namespace, name)
    _same("uuid5", namespace, name)


_part = st.one_of(
    st.none(), st.integers(-2, (1 << 64) + 1), st.sampled_from([True, 1.0, "1", 1 << 62])
)


@given(_part, _part, _part)
@settings(max_examples=200, deadline=None)
def test_uuid8_given_parts_match_the_reference(a: Any, b: Any, c: Any) -> None:
    """Parts given are kept bit for bit; the random rest is masked out before comparing."""
    expected = _outcome(_accel.PURE_TWINS["uuid8"], a, b, c)
    found = _outcome(uuidkit.uuid8, a, b, c)
    if expected[0] == "error":
        assert found == expected
        return
    kept = (0xF << 76) | (0b11 << 62)
    for part, mask in ((a, (1 << 48) - 1 << 80), (b, 0xFFF << 64), (c, (1 << 62) - 1)):
        kept |= mask if part is not None else 0
    assert found[1] & kept == expected[1] & kept


@needs_speedups
def test_compiled_values_are_not_tracked_by_the_garbage_collector() -> None:
    """A UUID holds an int and an enum member: it cannot be in a cycle, so it is untracked
    (where the accelerator allocates through the layouts it checked; on the public-API path
    an unknown CPython takes, values are allocated, and tracked, as the class says)."""
    if not _accel.SPEEDUPS.USES_INTERNALS:
        pytest.skip("the public-API build allocates through tp_alloc")
    text = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
    made = [uuidkit.uuid4(), uuidkit.uuid8(), uuidkit.parse(text), uuidkit.uuid5(uuidkit.NIL, "x")]
    assert not any(gc.is_tracked(value) for value in made)
    assert not gc.is_tracked(uuidkit.fields(made[0]))
    assert gc.is_tracked(uuid.UUID(text))  # the standard library's own objects are tracked


@needs_speedups
def test_random_buffer_is_discarded_in_a_forked_child() -> None:
    """Parent and child draw right after fork(): without the atfork handler they would read
    the same buffered bytes and make the same UUID (RFC 9562 §6.9)."""
    uuidkit.uuid4()  # the buffer now holds unread bytes
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_end)
        os.write(write_end, uuidkit.uuid4().bytes + SPEEDUPS.random_bytes(16))
        os._exit(0)
    os.close(write_end)
    parent = uuidkit.uuid4().bytes + SPEEDUPS.random_bytes(16)
    with os.fdopen(read_end, "rb") as pipe:
        child = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert len(child) == 32
    assert child[:16] != parent[:16] and child[16:] != parent[16:]


class _StandIn:
    """A class without the standard library's slot layout (like a future C uuid.UUID)."""

    def __init__(self, *, int: int) -> None:
        self.value = int


class _NewOverridden:
    """The right slots, but its own __new__: filling slots would skip it."""

    __slots__ = ("__weakref__", "int", "is_safe")
    int: builtins.int
    is_safe: object

    def __new__(cls, **value: builtins.int) -> _NewOverridden:
        self = super().__new__(cls)
        self.int = value["int"]
        self.is_safe = "made by __new__"
        return self


class _SameLayout:
    __slots__ = ("int", "is_safe")
    int: builtins.int
    is_safe: object


@pytest.fixture
def rebind() -> Iterator[Callable[[type], bool]]:
    """Bind the accelerator to another class for one test, then back to uuid.UUID."""
    if SPEEDUPS is None:
        pytest.skip("uuidkit._speedups not in use (not built, or UUIDKIT_PURE=1)")
    yield lambda cls: bool(SPEEDUPS.bind(cls, uuid.SafeUUID.unknown))
    assert SPEEDUPS.bind(uuid.UUID, uuid.SafeUUID.unknown)


def test_a_class_without_the_slot_layout_is_constructed(rebind: Callable[[type], bool]) -> None:
    assert rebind(_StandIn) is False
    made = SPEEDUPS.uuid4()
    assert type(made) is _StandIn and (made.value >> 76) & 0xF == 4
    parsed = SPEEDUPS.parse("F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6")
    assert type(parsed) is _StandIn and parsed.value == 0xF81D4FAE7DEC11D0A76500A0C91E6BF6
    records = SPEEDUPS.uuids_from_records(bytes(range(32)))
    assert [r.value for r in records] == [
        int.from_bytes(bytes(range(16))),
        int.from_bytes(bytes(range(16, 32))),
    ]


def test_a_class_with_its_own_new_is_constructed(rebind: Callable[[type], bool]) -> None:
    assert rebind(_NewOverridden) is False
    assert SPEEDUPS.uuid8(1, 2, 3).is_safe == "made by __new__"


def test_a_class_with_the_slot_layout_gets_its_slots_filled(
    rebind: Callable[[type], bool],
) -> None:
    assert rebind(_SameLayout) is True
    made = SPEEDUPS.uuid8(1, 2, 3)
    assert type(made) is _SameLayout
    assert made.int == 0x00000000_0001_8002_8000_000000000003
    assert made.is_safe is uuid.SafeUUID.unknown
