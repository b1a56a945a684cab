"""Node-bearing layouts (uuidkit.nodelayouts): bit positions, validation, round trips
through ``fields(value, layout=...)``."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uuidkit import layouts
from uuidkit.errors import InvalidField, InvalidUUID
from uuidkit.fields import V1Fields, V6Fields, timestamp_ns, version
from uuidkit.nodelayouts import (
    MULTICAST_BIT,
    NODE_LAYOUTS,
    V7NodeFields,
    V8NodeFields,
    build_v1_node,
    build_v6_node,
    build_v7_node,
    build_v8_node,
    check_claimed_node,
    read_node_layout,
)

claimed_nodes = st.integers(0, (1 << 48) - 1).map(lambda n: n | MULTICAST_BIT)
ms48 = st.integers(0, (1 << 48) - 1)


def test_v7_node_bit_positions() -> None:
    # RFC 9562 §5.7 Figure 11: unix_ts_ms bits 0-47, ver 48-51, rand_a 52-63, var 64-65,
    # rand_b 66-127. The v7-node counter is rand_a then the top 14 bits of rand_b.
    value = build_v7_node(0x0123456789AB, (0xABC << 14) | 0x1234, 0x0100_0000_0001)
    assert str(value) == "01234567-89ab-7abc-9234-010000000001"
    assert value.variant == uuid.RFC_4122
    assert version(value) == 7


def test_v8_node_bit_positions() -> None:
    value = build_v8_node(0x0123456789AB, 0xFED, 0x3FFF, 0xFFFF_FFFF_FFFF)
    # RFC 9562 §5.8: ver 8 at bits 48-51; var 0b10 at 64-65; counter 14 bits then node.
    assert str(value) == "01234567-89ab-8fed-bfff-ffffffffffff"


def test_v1_and_v6_node_are_the_rfc_layouts() -> None:
    node = 0x0300_0000_00FF
    assert build_v1_node(123, 45, node) == layouts.build_v1(123, 45, node)
    assert build_v6_node(123, 45, node) == layouts.build_v6(123, 45, node)


@pytest.mark.parametrize("node", [0, 0x0000_FFFF_FFFF, 0xFEFF_FFFF_FFFF])
def test_claimed_node_must_set_the_multicast_bit(node: int) -> None:
    # RFC 9562 §6.10: "MUST set the least significant bit of the first octet ... to 1".
    for build in (
        lambda: build_v1_node(0, 0, node),
        lambda: build_v6_node(0, 0, node),
        lambda: build_v7_node(0, 0, node),
        lambda: build_v8_node(0, 0, 0, node),
        lambda: check_claimed_node(node),
    ):
        with pytest.raises(InvalidField, match="multicast bit") as error:
            build()
        assert error.value.field == "node"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: build_v7_node(1 << 48, 0, MULTICAST_BIT), "unix_ts_ms"),
        (lambda: build_v7_node(0, 1 << 26, MULTICAST_BIT), "counter"),
        (lambda: build_v7_node(0, -1, MULTICAST_BIT), "counter"),
        (lambda: build_v7_node(0, 0, 1 << 48), "node"),
        (lambda: build_v7_node(0, 0, True), "node"),
        (lambda: build_v8_node(0, 1 << 12, 0, MULTICAST_BIT), "ms_fraction"),
        (lambda: build_v8_node(0, 0, 1 << 14, MULTICAST_BIT), "counter"),
        (lambda: build_v8_node(-1, 0, 0, MULTICAST_BIT), "unix_ts_ms"),
        (lambda: build_v1_node(1 << 60, 0, MULTICAST_BIT), "timestamp"),
        (lambda: build_v6_node(0, 1 << 14, MULTICAST_BIT), "clock_seq"),
    ],
)
def test_builders_name_the_bad_field(call: object, field: str) -> None:
    with pytest.raises(InvalidField) as error:
        call()  # type: ignore[operator]
    assert error.value.field == field


@given(ms48, st.integers(0, (1 << 26) - 1), claimed_nodes)
def test_v7_node_round_trip(unix_ts_ms: int, counter: int, node: int) -> None:
    value = build_v7_node(unix_ts_ms, counter, node)
    assert read_node_layout(value, "v7-node") == V7NodeFields(unix_ts_ms, counter, node)
    # Read as a plain UUIDv7 the same bits are rand_a and rand_b (RFC 9562 §5.7).
    rand_b = ((counter & 0x3FFF) << 48) | node
    assert value == layouts.build_v7(unix_ts_ms, counter >> 14, rand_b)
    assert timestamp_ns(value) == read_node_layout(value, "v7-node").timestamp_ns  # type: ignore[union-attr]


@given(ms48, st.integers(0, (1 << 12) - 1), st.integers(0, (1 << 14) - 1), claimed_nodes)
def test_v8_node_round_trip(unix_ts_ms: int, fraction: int, counter: int, node: int) -> None:
    value = build_v8_node(unix_ts_ms, fraction, counter, node)
    record = read_node_layout(value, "v8-node")
    assert record == V8NodeFields(unix_ts_ms, fraction, counter, node)
    assert isinstance(record, V8NodeFields)
    # The fraction is floor(fraction_of_ms * 4096) (RFC 9562 §6.2 Method 3): its start time
    # maps back to the same fraction.
    assert (record.timestamp_ns % 1_000_000 << 12) // 1_000_000 == fraction


@given(st.integers(0, (1 << 60) - 1), st.integers(0, (1 << 14) - 1), claimed_nodes)
def test_v1_v6_node_round_trip(timestamp: int, clock_seq: int, node: int) -> None:
    v1 = read_node_layout(build_v1_node(timestamp, clock_seq, node), "v1-node")
    v6 = read_node_layout(build_v6_node(timestamp, clock_seq, node), "v6-node")
    assert isinstance(v1, V1Fields) and isinstance(v6, V6Fields)
    assert (v1.timestamp, v1.clock_seq, v1.node) == (timestamp, clock_seq, node)
    assert (v6.timestamp, v6.clock_seq, v6.node) == (timestamp, clock_seq, node)


@given(ms48, st.integers(0, (1 << 26) - 2), claimed_nodes)
def test_v7_node_sorts_by_time_then_counter(unix_ts_ms: int, counter: int, node: int) -> None:
    # RFC 9562 §6.2 Method 1: the counter follows the timestamp, so values sort by both.
    assert build_v7_node(unix_ts_ms, counter, node) < build_v7_node(
        unix_ts_ms, counter + 1, 0x0100_0000_0000
    )


def test_reading_a_layout_checks_the_version() -> None:
    v4 = uuid.UUID("00000000-0000-4000-8000-000000000000")
    for layout in NODE_LAYOUTS:
        with pytest.raises(InvalidUUID, match=f"layout {layout} needs a version"):
            read_node_layout(v4, layout)


@pytest.mark.parametrize("layout", ["v7", "V7-NODE", "", 7])
def test_unknown_layout_is_named(layout: object) -> None:
    value = build_v7_node(0, 0, MULTICAST_BIT)
    with pytest.raises(InvalidField, match="layout: expected one of v1-node") as error:
        read_node_layout(value, layout)  # type: ignore[arg-type]
    assert error.value.field == "layout"
