"""Legacy layouts of draft-peabody-dispatch-new-uuid-format-01: draft v7 (36-bit seconds and
a binary fraction) and the draft v8 generic 32/48/60/64-bit timestamp layouts."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit.errors import InvalidField, InvalidUUID
from uuidkit.legacy import (
    DRAFT_V7_PRECISIONS,
    DraftV8Value,
    build_draft_v7,
    build_draft_v8,
    draft_v7_fields,
    draft_v7_timestamp_ns,
    draft_v8_fields,
    read_draft_v8,
)

UNITS_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
draft_ns = st.integers(min_value=0, max_value=(1 << 36) * 10**9 - 1)


def test_draft_example_fraction() -> None:
    """§4.4.4.2: 16 fraction bits 0101 0101 0101 0101 are 21845 / 65536 = 0.3333282 s."""
    subsec = 0x5555 << (86 - 16)
    number = (7 << 76) | (0b10 << 62)
    number |= (subsec >> 74) << 80 | ((subsec >> 62) & 0xFFF) << 64 | (subsec & ((1 << 62) - 1))
    value = uuid.UUID(int=number)
    assert draft_v7_fields(value).subsec == subsec
    assert draft_v7_timestamp_ns(value, "ns") == 21845 * 10**9 // 65536 == 333_328_247
    assert draft_v7_timestamp_ns(value, "ms") == 333_000_000


def test_millisecond_layout_is_figure_3() -> None:
    value = build_draft_v7(1_645_557_742_123_000_000, "ms", seq=0xABC, rand=1)
    fields = draft_v7_fields(value)
    assert fields.unixts == 1_645_557_742
    assert fields.subsec_a == -(-123 * 4096 // 1000)  # msec: 123 ms rounded up to 1/4096 s
    assert fields.subsec_b == 0xABC  # seq
    assert fields.subsec_seq_node == 1  # rand
    assert (value.version, value.variant) == (7, uuid.RFC_4122)


@settings(max_examples=100, deadline=None)
@given(unix_ns=draft_ns, precision=st.sampled_from(["ms", "us", "ns"]), data=st.data())
def test_build_then_read_at_every_precision(
    unix_ns: int, precision: str, data: st.DataObject
) -> None:
    layout = DRAFT_V7_PRECISIONS[precision]
    seq = data.draw(st.integers(min_value=0, max_value=(1 << layout.seq_bits) - 1))
    rand = data.draw(st.integers(min_value=1, max_value=(1 << layout.rand_bits) - 1))
    value = build_draft_v7(unix_ns, precision, seq=seq, rand=rand)  # type: ignore[arg-type]
    for reading, unit in UNITS_NS.items():
        if unit >= UNITS_NS[precision]:  # same or coarser: the encoder's value, truncated
            expected = unix_ns - unix_ns % unit
            assert draft_v7_timestamp_ns(value, reading) == expected, reading  # type: ignore[arg-type]
    assert uuid.UUID(str(value)) == value


def test_draft_v7_refusals() -> None:
    with pytest.raises(InvalidField, match=r"^unixts: expected 0 <= unixts < 2\*\*36"):
        build_draft_v7((1 << 36) * 10**9)
    with pytest.raises(InvalidField, match=r"^rand: the draft forbids an all-zero node"):
        build_draft_v7(0, "ns", rand=0)
    with pytest.raises(InvalidField, match=r"^seq: expected 0 <= seq < 2\*\*8"):
        build_draft_v7(0, "ns", seq=256)
    with pytest.raises(InvalidField, match=r"^precision: expected one of s, ms, us, ns"):
        build_draft_v7(0, "ps")  # type: ignore[arg-type]
    with pytest.raises(InvalidUUID, match=r"expected a version 7 UUID"):
        draft_v7_fields(uuid.UUID("919108f7-52d1-4320-9bac-f847db4148a8"))


@pytest.mark.parametrize("wrong", [["ms"], {"ms": 1}, None])
def test_unhashable_or_missing_choices_are_invalid_field(wrong: object) -> None:
    """A bad precision or timestamp width is InvalidField, never TypeError from a dict lookup."""
    with pytest.raises(InvalidField, match=r"^precision: expected one of"):
        build_draft_v7(0, wrong)  # type: ignore[arg-type]
    with pytest.raises(InvalidField, match=r"^precision: expected one of"):
        draft_v7_timestamp_ns(build_draft_v7(0), wrong)  # type: ignore[arg-type]
    with pytest.raises(InvalidField, match=r"^timestamp_bits: expected 32, 48, 60 or 64"):
        build_draft_v8(1, wrong, 0, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("wrong", ["1645557742", None, 1.6e18, True])
def test_draft_v7_needs_int_nanoseconds(wrong: object) -> None:
    with pytest.raises(InvalidField, match=r"^unix_ns: expected an int, found "):
        build_draft_v7(wrong)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("bits", "seq_bits", "node_bits"), [(32, 12, 62), (48, 12, 62), (60, 8, 54), (64, 8, 54)]
)
def test_draft_v8_generic_layouts(bits: int, seq_bits: int, node_bits: int) -> None:
    timestamp = (1 << bits) - 0x123
    seq, node = (1 << seq_bits) - 2, (1 << node_bits) - 3
    value = build_draft_v8(timestamp, bits, seq, node)  # type: ignore[arg-type]
    assert (value.version, value.variant) == (8, uuid.RFC_4122)
    expected_timestamp = timestamp & ~0xF if bits == 64 else timestamp  # §4.5.4: top 60 bits
    assert read_draft_v8(value, bits) == DraftV8Value(bits, expected_timestamp, seq, node)  # type: ignore[arg-type]
    raw = draft_v8_fields(value)
    if bits == 32:
        assert (raw.timestamp_32, raw.timestamp_48, raw.time_or_seq) == (timestamp, 0, seq)
    if bits >= 60:
        assert raw.seq_or_node == seq and raw.node == node


def test_draft_v8_refusals() -> None:
    with pytest.raises(InvalidField, match=r"^node: the draft forbids an all-zero node"):
        build_draft_v8(1, 48, 0, 0)
    with pytest.raises(InvalidField, match=r"^timestamp_bits: expected 32, 48, 60 or 64"):
        build_draft_v8(1, 40, 0, 1)  # type: ignore[arg-type]
    with pytest.raises(InvalidField, match=r"^seq: expected 0 <= seq < 2\*\*8"):
        build_draft_v8(1, 60, 256, 1)
    value = build_draft_v8((1 << 40) | 5, 48, 0, 1)
    with pytest.raises(InvalidUUID, match=r"timestamp_48 is not 0"):
        read_draft_v8(value, 32)
