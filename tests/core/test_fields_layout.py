"""``fields(value, layout=...)``: the node-bearing layouts read back by ``fields()``, on the
compiled and the pure-Python path, and the records' behaviour as values (they are tuples
underneath, which must not show where a frozen record would behave otherwise).

References: RFC 9562 §5.1, §5.6, §5.7, §5.8, §6.2, §6.4, §6.10.
"""

from __future__ import annotations

import copy
import operator
import pickle
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uuidkit
from uuidkit import _accel
from uuidkit.cli import main
from uuidkit.errors import InvalidField, InvalidUUID
from uuidkit.fields import NilFields, V1Fields, V4Fields, V5Fields, V6Fields, V7Fields, fields
from uuidkit.nodelayouts import (
    MULTICAST_BIT,
    NODE_LAYOUTS,
    V7NodeFields,
    V8NodeFields,
    build_v1_node,
    build_v6_node,
    build_v7_node,
    build_v8_node,
    read_node_layout,
)

#: The Python reference of ``fields`` (the public one is the compiled twin when it is built).
PURE_FIELDS = _accel.PURE_TWINS["fields"]
BOTH_PATHS = pytest.mark.parametrize(
    "read", [uuidkit.fields, PURE_FIELDS], ids=["public", "pure-reference"]
)

claimed_nodes = st.integers(0, (1 << 48) - 1).map(lambda n: n | MULTICAST_BIT)
ms48 = st.integers(0, (1 << 48) - 1)
ticks60 = st.integers(0, (1 << 60) - 1)
clock_seqs = st.integers(0, (1 << 14) - 1)
LAYOUT_VERSION = {"v1-node": 1, "v6-node": 6, "v7-node": 7, "v8-node": 8}


@BOTH_PATHS
@given(unix_ts_ms=ms48, counter=st.integers(0, (1 << 26) - 1), node=claimed_nodes)
@settings(max_examples=60, deadline=None)
def test_v7_node_round_trip(read: Any, unix_ts_ms: int, counter: int, node: int) -> None:
    value = build_v7_node(unix_ts_ms, counter, node)
    record = read(value, layout="v7-node")
    assert type(record) is V7NodeFields
    assert (record.unix_ts_ms, record.counter, record.node) == (unix_ts_ms, counter, node)
    assert record == read_node_layout(value, "v7-node")
    # Without the layout the same bits are a plain UUIDv7 (RFC 9562 §5.7).
    assert type(read(value)) is V7Fields


@BOTH_PATHS
@given(
    unix_ts_ms=ms48,
    fraction=st.integers(0, (1 << 12) - 1),
    counter=st.integers(0, (1 << 14) - 1),
    node=claimed_nodes,
)
@settings(max_examples=60, deadline=None)
def test_v8_node_round_trip(
    read: Any, unix_ts_ms: int, fraction: int, counter: int, node: int
) -> None:
    value = build_v8_node(unix_ts_ms, fraction, counter, node)
    record = read(value, layout="v8-node")
    assert type(record) is V8NodeFields
    assert tuple(record) == (unix_ts_ms, fraction, counter, node)
    assert record == V8NodeFields(unix_ts_ms, fraction, counter, node)


@BOTH_PATHS
@given(timestamp=ticks60, clock_seq=clock_seqs, node=claimed_nodes)
@settings(max_examples=60, deadline=None)
def test_v1_v6_node_read_as_their_rfc_records(
    read: Any, timestamp: int, clock_seq: int, node: int
) -> None:
    for build, layout, record_type in (
        (build_v1_node, "v1-node", V1Fields),
        (build_v6_node, "v6-node", V6Fields),
    ):
        value = build(timestamp, clock_seq, node)
        record = read(value, layout=layout)
        assert type(record) is record_type
        assert (record.timestamp, record.clock_seq, record.node) == (timestamp, clock_seq, node)
        assert record == read(value)  # the ordinary fields already show the node


def _one_of_each_version() -> dict[int, uuid.UUID]:
    node = 0x0123_4567_89AB | MULTICAST_BIT
    return {
        1: build_v1_node(1, 2, node),
        3: uuidkit.uuid3(uuidkit.NAMESPACE_DNS, "example.org"),
        4: uuid.UUID(int=uuidkit.uuid4().int | node),
        5: uuidkit.uuid5(uuidkit.NAMESPACE_DNS, "example.org"),
        6: build_v6_node(1, 2, node),
        7: build_v7_node(1, 2, node),
        8: build_v8_node(1, 2, 3, node),
    }


@BOTH_PATHS
@pytest.mark.parametrize("layout", NODE_LAYOUTS)
def test_a_layout_of_another_version_names_layout_and_version(read: Any, layout: str) -> None:
    for found, value in _one_of_each_version().items():
        if found == LAYOUT_VERSION[layout]:
            continue
        expected = LAYOUT_VERSION[layout]
        message = f"layout {layout} needs a version {expected} UUID, found version {found}$"
        with pytest.raises(InvalidUUID, match=message):
            read(value, layout=layout)
    for special in (uuidkit.NIL, uuidkit.MAX):
        with pytest.raises(InvalidUUID, match=f"layout {layout} .* found version None$"):
            read(special, layout=layout)


@BOTH_PATHS
@pytest.mark.parametrize("layout", NODE_LAYOUTS)
def test_a_node_without_the_multicast_bit_is_not_a_claimed_node(read: Any, layout: str) -> None:
    # RFC 9562 §6.10: a node ID that is not an IEEE 802 address MUST set the multicast bit;
    # every claimed node does, so the same bits with it clear are not this layout.
    claimed = _one_of_each_version()[LAYOUT_VERSION[layout]]
    cleared = uuid.UUID(int=claimed.int & ~MULTICAST_BIT)
    with pytest.raises(InvalidUUID, match=rf"layout {layout} .*multicast bit.*§6\.10"):
        read(cleared, layout=layout)
    assert read(claimed, layout=layout).node & MULTICAST_BIT


@BOTH_PATHS
@pytest.mark.parametrize("layout", ["v7", "V7-NODE", "", 7])
def test_an_unknown_layout_is_named(read: Any, layout: object) -> None:
    with pytest.raises(InvalidField, match="layout: expected one of v1-node") as error:
        read(build_v7_node(0, 0, MULTICAST_BIT), layout=layout)
    assert error.value.field == "layout"


def test_both_paths_agree_on_every_call_shape() -> None:
    """The compiled twin hands every call with a keyword to the Python reference."""
    value = build_v7_node(5, 6, MULTICAST_BIT | 1)
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((value,), {}),
        ((value,), {"layout": None}),
        ((value,), {"layout": "v7-node"}),
        ((value,), {"value": value}),
        ((value, "v7-node"), {}),  # layout is keyword-only
        ((), {"value": value}),
        ((), {}),
        (("not a uuid",), {"layout": "v7-node"}),
    ]
    for args, kwargs in calls:
        assert _outcome(uuidkit.fields, *args, **kwargs) == _outcome(PURE_FIELDS, *args, **kwargs)
    assert uuidkit.fields(value, layout=None) == uuidkit.fields(value)


def _outcome(function: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        result = function(*args, **kwargs)
    except Exception as error:
        return "error", (type(error), str(error))
    return "value", (type(result), result)


def test_inspect_layout_rejects_an_unclaimed_node(capsys: pytest.CaptureFixture[str]) -> None:
    ieee_v1 = "c232ab00-9414-11ec-b3c8-08002b010203"  # an IEEE 802 node: multicast bit clear
    assert main(["inspect", "--layout", "v1-node", ieee_v1]) == 2
    assert "multicast bit" in capsys.readouterr().err
    node = 0x09002B010203
    claimed = build_v1_node(0x1EC9414C232AB00, 0x33C8, node)
    assert main(["inspect", "--layout", "v1-node", "--json", str(claimed)]) == 0
    assert f'"node": {node}' in capsys.readouterr().out


# --- the records are values: a tuple underneath, a frozen record outside -------------------


def test_records_equal_only_their_own_class() -> None:
    record = V4Fields(1, 2, 3)
    plain = (1, 2, 3)
    assert record == V4Fields(random_a=1, random_b=2, random_c=3)
    assert record != V5Fields(1, 2, 3)
    # Both operand orders, both operators: a plain tuple of the same values is not the record.
    for compare in (operator.eq, operator.ne):
        assert compare(record, plain) is (compare is operator.ne)
        assert compare(plain, record) is (compare is operator.ne)
    assert hash(record) == hash(V4Fields(1, 2, 3)) and hash(record) != hash(plain)
    assert len({record, V5Fields(1, 2, 3), plain}) == 3


def test_records_are_true_frozen_and_unordered() -> None:
    assert bool(NilFields()) and bool(fields(uuidkit.NIL))
    record = fields(uuidkit.uuid7())
    with pytest.raises(AttributeError, match="frozen"):
        record.unix_ts_ms = 0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        record.extra = 0
    orderings: list[Callable[[Any, Any], object]] = [
        operator.lt,
        operator.le,
        operator.gt,
        operator.ge,
    ]
    for order in orderings:
        for left, right in ((record, record), (record, (0, 0, 0)), ((0, 0, 0), record)):
            with pytest.raises(TypeError, match="do not order"):
                order(left, right)


@pytest.mark.parametrize("value", [uuidkit.uuid1(), uuidkit.uuid4(), uuidkit.uuid6(), uuidkit.NIL])
def test_records_repr_match_pickle_and_copy(value: uuid.UUID) -> None:
    record = fields(value)
    assert eval(repr(record), vars(uuidkit)) == record
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(record) == record and copy.copy(record) == record
    assert uuidkit.from_fields(record) == value
    match record:
        case V1Fields(time_low, _, _, clock_seq, node) | V6Fields(time_low, _, _, clock_seq, node):
            assert (clock_seq, node) == (value.clock_seq, value.node)
            assert isinstance(time_low, int)
        case V4Fields(random_a):
            assert random_a == value.int >> 80
        case NilFields():
            assert value == uuidkit.NIL
        case _:
            pytest.fail(f"no case for {record!r}")


def test_layout_records_repr_and_rebuild() -> None:
    value = build_v8_node(1, 2, 3, MULTICAST_BIT)
    record = fields(value, layout="v8-node")
    assert (
        repr(record) == "V8NodeFields(unix_ts_ms=1, ms_fraction=2, counter=3, node=1099511627776)"
    )
    assert build_v8_node(*record) == value
    assert pickle.loads(pickle.dumps(record)) == record
