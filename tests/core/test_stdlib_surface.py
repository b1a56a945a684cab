"""``import uuidkit as uuid``: the standard library's whole namespace, and strict arguments.

* Every public name of Python 3.14's ``uuid`` exists in uuidkit with the standard library's
  meaning (the list is written out below with its source, and also compared with the
  ``uuid`` module of the Python running the tests, 3.11 to 3.15, ``main`` included).
* The functions named as the standard library's take their arguments as the running
  interpreter's ``uuid`` does (hypothesis, against that module itself): uuid3/uuid5/uuid8
  exactly, uuid1/uuid6 in every field but the time.
* ``from_fields(fields(u)) == u`` for every 128-bit value.
* Every public function rejects a wrong type or an out-of-range value with one of uuidkit's
  own ``ValueError`` subclasses: never a ``TypeError``/``AttributeError``, never a silent
  answer such as ``to_urn(5) == 'urn:uuid:5'``.
"""

from __future__ import annotations

import inspect
import types
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit
from uuidkit._accel import PURE_TWINS
from uuidkit.errors import InvalidField, UIAPError, UUIDKitError

#: The public names of Python 3.14's uuid module: its documented classes, functions and
#: constants. Source: the Python 3.14 documentation, "uuid — UUID objects according to
#: RFC 9562" (docs.python.org/3.14/library/uuid.html), which documents exactly these.
PY314_UUID_NAMES = [
    "UUID",
    "SafeUUID",
    "getnode",
    "uuid1",
    "uuid3",
    "uuid4",
    "uuid5",
    "uuid6",
    "uuid7",
    "uuid8",
    "NAMESPACE_DNS",
    "NAMESPACE_URL",
    "NAMESPACE_OID",
    "NAMESPACE_X500",
    "RESERVED_NCS",
    "RFC_4122",
    "RESERVED_MICROSOFT",
    "RESERVED_FUTURE",
    "NIL",
    "MAX",
]

#: Public-looking names of the stdlib module that are its implementation, not its API:
#: imported helpers (Enum, os, sys, platform, int_, bytes_). Its command line's ``main()``
#: (3.12 and later) is API: tools call it, and ``uuidkit.main`` is checked against it in
#: tests/cli/test_stdlib_cli.py.
_STDLIB_IMPLEMENTATION = {"Enum", "int_", "bytes_"}


@pytest.mark.parametrize("name", PY314_UUID_NAMES)
def test_every_python_314_name_is_exported(name: str) -> None:
    assert name in uuidkit.__all__
    assert hasattr(uuidkit, name)


def test_the_running_pythons_uuid_names_are_all_there() -> None:
    names = {
        name
        for name in dir(uuid)
        if not name.startswith("_") and not isinstance(getattr(uuid, name), types.ModuleType)
    } - _STDLIB_IMPLEMENTATION
    assert names <= set(uuidkit.__all__), sorted(names - set(uuidkit.__all__))
    assert "main" in uuidkit.__all__ and callable(uuidkit.main)  # on 3.11 too
    if hasattr(uuid, "__all__"):  # Python 3.14 and later declare it
        assert set(uuid.__all__) <= set(uuidkit.__all__)


def test_the_standard_librarys_meanings() -> None:
    # Same objects where the standard library has them: values compare and is-checks hold.
    for name in ("UUID", "SafeUUID", "RESERVED_NCS", "RFC_4122", "RESERVED_MICROSOFT"):
        assert getattr(uuidkit, name) is getattr(uuid, name)
    assert uuidkit.RESERVED_FUTURE is uuid.RESERVED_FUTURE
    assert uuidkit.getnode() == uuid.getnode() and 0 <= uuidkit.getnode() < 1 << 48
    for name in ("NAMESPACE_DNS", "NAMESPACE_URL", "NAMESPACE_OID", "NAMESPACE_X500"):
        assert getattr(uuidkit, name) == getattr(uuid, name)
    assert (uuidkit.NIL.int, uuidkit.MAX.int) == (0, (1 << 128) - 1)  # RFC 9562 §5.9, §5.10


def test_code_written_for_the_standard_library_runs_unchanged() -> None:
    import uuidkit as uuid  # the point of the test

    value = uuid.uuid4()
    assert value.variant == uuid.RFC_4122 and value.is_safe is uuid.SafeUUID.unknown
    assert uuid.uuid5(uuid.NAMESPACE_DNS, "python.org") == uuid.UUID(
        "886313e1-3b8a-5372-9b90-0c9aee199e5d"  # the standard library documentation's example
    )
    assert uuid.UUID(int=0).variant == uuid.RESERVED_NCS
    assert uuid.UUID(int=(1 << 128) - 1).variant == uuid.RESERVED_FUTURE
    assert uuid.UUID("00000000-0000-0000-c000-000000000000").variant == uuid.RESERVED_MICROSOFT
    assert uuid.uuid1(node=uuid.getnode()).node == uuid.getnode()
    assert uuid.uuid7().version == 7 and uuid.uuid6().version == 6 and uuid.uuid8().version == 8


# --- from_fields(fields(u)) ---------------------------------------------------------------------


#: Values of every layout: versions 1-8 of the RFC variant, plus any 128 bits at all.
any_value = st.one_of(
    st.integers(0, (1 << 128) - 1),
    st.builds(
        lambda bits, version: (bits & ~(0xF << 76) & ~(0b11 << 62)) | version << 76 | 0b10 << 62,
        st.integers(0, (1 << 128) - 1),
        st.integers(0, 15),
    ),
    st.sampled_from([0, (1 << 128) - 1]),
)


@settings(max_examples=500, deadline=None)
@given(any_value)
def test_from_fields_of_fields_round_trips(number: int) -> None:
    value = uuid.UUID(int=number)
    assert uuidkit.from_fields(uuidkit.fields(value)) == value
    assert uuidkit.from_fields(value.fields) == value  # the standard library's six-tuple


def test_from_fields_checks_a_records_fields() -> None:
    record = uuidkit.V7Fields(unix_ts_ms=1 << 48, rand_a=0, rand_b=0)
    with pytest.raises(InvalidField) as caught:
        uuidkit.from_fields(record)
    assert caught.value.field == "unix_ts_ms"
    with pytest.raises(InvalidField, match="clock_seq"):
        uuidkit.from_fields(uuidkit.V1Fields(0, 0, 0, 1 << 14, 0))


def test_units_are_named() -> None:
    # RFC 9562 §5.1/§5.6: a 60-bit count of 100 ns intervals since 1582-10-15.
    for record in (uuidkit.V1Fields, uuidkit.V6Fields):
        doc = record.timestamp.__doc__ or ""
        assert "100 nanoseconds since 1582-10-15" in " ".join(doc.split())
    # Both the pure-Python reference and the compiled twin (when built) name the unit.
    for function in (uuidkit.timestamp_ns, PURE_TWINS.get("timestamp_ns", uuidkit.timestamp_ns)):
        assert "nanoseconds since the Unix epoch" in " ".join((function.__doc__ or "").split())


# --- strict arguments ---------------------------------------------------------------------------


WRONG = [None, 5, -1, 1.5, "x", b"\x00" * 16, object(), 1 << 200, True, [1, 2], uuid]


def _public_functions() -> list[tuple[str, Callable[..., Any]]]:
    found = []
    for name in uuidkit.__all__:
        value = getattr(uuidkit, name)
        if callable(value) and not isinstance(value, type) and name != "getnode":
            found.append((name, value))
    return found


def _filler(annotation: str) -> object:
    """A valid argument for every other parameter, by its annotation."""
    if "UUID" in annotation:
        return uuid.UUID(int=0x017F22E279B07CC398C4DC0C0C07398F)
    if "Instant" in annotation or "datetime" in annotation:
        return 0
    if "str" in annotation:
        return "x"
    return 1


@pytest.mark.parametrize(("name", "function"), _public_functions())
def test_every_public_function_rejects_wrong_arguments_with_its_own_errors(
    name: str, function: Callable[..., Any]
) -> None:
    # A compiled twin has no annotated signature: its pure-Python reference describes the
    # parameters, and the function under test is still the one uuidkit exports.
    reference = PURE_TWINS.get(name, function)
    parameters = [
        p
        for p in inspect.signature(reference).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    for position, parameter in enumerate(parameters):
        for wrong in WRONG:
            args = [_filler(str(p.annotation)) for p in parameters]
            args[position] = wrong
            try:
                function(*args)
            except UUIDKitError:
                continue
            # Anything else escaping (TypeError, AttributeError, a bare ValueError) fails here.
            assert "UUID" not in str(parameter.annotation), (
                f"{name}({parameter.name}={wrong!r:.30}) accepted a non-UUID"
            )


def test_to_urn_of_an_int_is_an_error() -> None:
    with pytest.raises(uuidkit.InvalidUUID, match=r"expected a uuid\.UUID, found int"):
        uuidkit.to_urn(5)  # type: ignore[arg-type]


def test_a_bad_uiap_message_is_a_uiap_error() -> None:
    from uuidkit.uiap import Message, MessageType, UIDSpace, numberspaces

    arguments: dict[str, Any] = {
        "type": MessageType.CLAIM_ATTEMPT,
        "device_id": 1,
        "sequence": 1,
        "domain": numberspaces.UUID_NODE_IDS.domain_id,
        "space": UIDSpace.unique(numberspaces.node_id_uid(1)),
    }
    for field, bad in (("device_id", 0), ("sequence", 1 << 32), ("lifetime", -1), ("space", 5)):
        with pytest.raises(UIAPError) as caught:
            Message(**{**arguments, field: bad})
        assert isinstance(caught.value, InvalidField) and caught.value.field


# --- the standard library's arguments, against the running interpreter's own uuid ------------

#: Ints around and beyond each field's width, negative ones included: the standard library
#: keeps the low bits of uuid6's node/clock_seq, uuid1's clock_seq and uuid8's parts.
wide_int = st.one_of(
    st.integers(-(1 << 70), 1 << 70),
    st.integers(-(1 << 200), 1 << 200),
    st.sampled_from([0, 1, -1, 1 << 14, 1 << 48, 1 << 62, (1 << 62) - 1, True, False]),
)
maybe_wide_int = st.one_of(st.none(), wide_int)
_LOW_64 = (1 << 64) - 1  # variant, clock_seq and node: every bit of uuid1/uuid6 but the time
_SEED_NAMESPACES = [uuid.NAMESPACE_DNS, uuid.NAMESPACE_URL, uuid.NAMESPACE_OID, uuid.NAMESPACE_X500]


def _stdlib_takes_bytes_names() -> bool:
    """Python 3.12 and later hash a bytes name as given; 3.11's uuid3/uuid5 take str only."""
    try:
        uuid.uuid3(uuid.NAMESPACE_DNS, b"x")  # type: ignore[arg-type]  # str only on 3.11
    except TypeError:
        return False
    return True


any_namespace = st.one_of(
    st.sampled_from(_SEED_NAMESPACES),
    st.integers(0, (1 << 128) - 1).map(lambda i: uuid.UUID(int=i)),
)
any_name = st.one_of(st.text(), st.binary()) if _stdlib_takes_bytes_names() else st.text()


@settings(max_examples=300, deadline=None)
@given(any_namespace, any_name)
def test_uuid3_and_uuid5_equal_the_standard_librarys(
    namespace: uuid.UUID, name: str | bytes
) -> None:
    # RFC 9562 §5.3, §5.5: the name is hashed after the namespace, a str as UTF-8.
    assert uuidkit.uuid3(namespace, name) == uuid.uuid3(namespace, name)  # type: ignore[arg-type]
    assert uuidkit.uuid5(namespace, name) == uuid.uuid5(namespace, name)  # type: ignore[arg-type]


@pytest.mark.skipif(not hasattr(uuid, "uuid8"), reason="this Python's uuid has no uuid8 (3.14+)")
@settings(max_examples=300, deadline=None)
@given(wide_int, wide_int, wide_int)
def test_uuid8_equals_the_standard_librarys(a: int, b: int, c: int) -> None:
    # RFC 9562 §5.8: custom_a, custom_b and custom_c, each the low bits of the given part.
    assert uuidkit.uuid8(a, b, c) == uuid.uuid8(a, b, c)  # type: ignore[attr-defined]


@pytest.mark.skipif(not hasattr(uuid, "uuid6"), reason="this Python's uuid has no uuid6 (3.14+)")
@settings(max_examples=300, deadline=None)
@given(wide_int, maybe_wide_int)
def test_uuid6_equals_the_standard_librarys_but_for_the_time(
    node: int, clock_seq: int | None
) -> None:
    # RFC 9562 §5.6: everything below the 60-bit timestamp is the variant, clock_seq and node.
    ours, theirs = uuidkit.uuid6(node, clock_seq), uuid.uuid6(node, clock_seq)  # type: ignore[attr-defined]
    assert (ours.version, ours.variant) == (theirs.version, theirs.variant) == (6, uuid.RFC_4122)
    assert ours.node == theirs.node
    if clock_seq is not None:
        assert ours.int & _LOW_64 == theirs.int & _LOW_64


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(0, (1 << 48) - 1), wide_int), wide_int)
def test_uuid1_equals_the_standard_librarys_but_for_the_time(node: int, clock_seq: int) -> None:
    # RFC 9562 §5.1: uuid1 keeps the low 14 bits of clock_seq; a node outside 48 bits is a
    # ValueError in both (uuidkit's InvalidField names it).
    try:
        theirs = uuid.uuid1(node, clock_seq)
    except ValueError:
        with pytest.raises(InvalidField, match=r"^node: "):
            uuidkit.uuid1(node, clock_seq)
        return
    ours = uuidkit.uuid1(node, clock_seq)
    assert (ours.version, ours.variant) == (theirs.version, theirs.variant) == (1, uuid.RFC_4122)
    assert ours.int & _LOW_64 == theirs.int & _LOW_64


@pytest.mark.parametrize("name", ["uuid1", "uuid6", "uuid8"])
@pytest.mark.parametrize("wrong", [1.5, "1", b"\x01", [1], object()])
def test_a_part_that_is_not_an_int_is_an_error_in_both(name: str, wrong: object) -> None:
    # The standard library fails with TypeError (or ValueError) wherever it has the function;
    # uuidkit's functions say which argument, with a ValueError subclass.
    stdlib_function = getattr(uuid, name, None)
    if stdlib_function is not None:
        with pytest.raises((TypeError, ValueError)):
            stdlib_function(wrong)
    with pytest.raises(InvalidField, match=r"^(node|a): expected an int, found "):
        getattr(uuidkit, name)(wrong)


def test_uuidkits_own_builders_and_generators_stay_strict() -> None:
    from uuidkit.generators import V1Generator, V6Generator

    for generator in (V1Generator(), V6Generator()):
        with pytest.raises(InvalidField, match="node"):
            generator.next(node=1 << 48)
        with pytest.raises(InvalidField, match="clock_seq"):
            generator.next(clock_seq=-1)
        with pytest.raises(InvalidField, match="node"):
            generator.next(node=True)
    with pytest.raises(InvalidField, match="custom_a"):
        uuidkit.build_v8(1 << 48, 0, 0)
    with pytest.raises(InvalidField, match="clock_seq"):
        uuidkit.build_v6(0, 1 << 14, 0)
