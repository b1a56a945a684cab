"""``import uuidkit as uuid``: the standard library's whole namespace, and strict arguments.

* Every public name of Python 3.14's ``uuid`` exists in uuidkit with the standard library's
  meaning (the list is written out below with its source, and also compared with the
  ``uuid`` module of the Python running the tests).
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
#: imported helpers (Enum, os, sys, platform, int_, bytes_) and the command line's main().
_STDLIB_IMPLEMENTATION = {"Enum", "int_", "bytes_", "main"}


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
