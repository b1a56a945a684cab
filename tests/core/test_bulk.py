"""uuidkit.bulk: generation into lists, numpy and Arrow; format, parse, timestamps, conversions."""

from __future__ import annotations

import gc
import itertools
import random
import uuid
from typing import Any

import pytest

import uuidkit
from uuidkit import _accel, bulk
from uuidkit.errors import InvalidField, InvalidUUID
from uuidkit.generators import V7Generator, defaults

np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")

INTO = ("list", "numpy", "arrow")


def _as_list(values: Any) -> list[uuid.UUID]:
    return values if isinstance(values, list) else bulk.to_list(values)


@pytest.mark.parametrize("into", INTO)
@pytest.mark.parametrize("version", bulk.VERSIONS)
def test_generate_makes_n_values_of_the_version(version: int, into: str) -> None:
    made = bulk.generate(version, 300, into=into)  # type: ignore[arg-type]
    values = _as_list(made)
    assert len(values) == 300 == len(set(values))
    for value in values:
        assert type(value) is uuid.UUID
        assert (value.version, value.variant) == (version, uuid.RFC_4122)
    if into == "numpy":
        assert made.dtype == np.dtype("V16")
    if into == "arrow":
        assert made.type == pa.uuid()
        assert made.storage.to_pylist() == [value.bytes for value in values]


@pytest.mark.parametrize("into", INTO)
def test_generate_zero_values(into: str) -> None:
    assert len(bulk.generate(7, 0, into=into)) == 0  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [((2, 5), "version"), ((True, 5), "version"), ((4, -1), "n"), ((4, 2.0), "n")],
)
def test_generate_refuses_bad_arguments(arguments: tuple[Any, Any], field: str) -> None:
    with pytest.raises(InvalidField) as caught:
        bulk.generate(*arguments)
    assert caught.value.field == field


def test_generate_refuses_an_unknown_container() -> None:
    with pytest.raises(InvalidField, match=r"^into: expected one of list, numpy, arrow"):
        bulk.generate(4, 1, into="tuple")  # type: ignore[arg-type]


def _seeded_bytes(seed: int) -> Any:
    source = random.Random(seed)
    return lambda n: source.randbytes(n)


def test_bulk_v7_shares_the_default_generator_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bulk blocks and single values interleave in one strictly increasing sequence.

    The clock never moves, so a bulk path with state of its own would reseed inside the same
    millisecond and fall below the single values (RFC 9562 §6.2 batch monotonicity).
    """
    shared = V7Generator(clock=lambda: 1_700_000_000_000_000_000, random_bytes=_seeded_bytes(7))
    monkeypatch.setattr(defaults, "DEFAULT_V7", shared)
    sequence: list[uuid.UUID] = []
    for into in ("numpy", "list", "arrow", "numpy"):
        sequence.append(shared.next())
        sequence.extend(_as_list(bulk.generate(7, 50, into=into)))
    sequence.append(shared.next())
    assert all(a < b for a, b in itertools.pairwise(sequence))


def test_bulk_v7_follows_and_precedes_uuidkit_uuid7() -> None:
    before = uuidkit.uuid7()
    block = bulk.to_list(bulk.generate(7, 2000, into="numpy"))
    after = uuidkit.uuid7()
    assert [before, *block, after] == sorted({before, *block, after})


@pytest.mark.parametrize("into", INTO)
def test_format_and_parse_round_trip(into: str) -> None:
    values = bulk.generate(4, 200, into=into)  # type: ignore[arg-type]
    expected = [str(value) for value in _as_list(values)]
    texts = bulk.format(values)
    if into == "numpy":
        assert texts.dtype == np.dtype("<U36")
    if into == "arrow":
        assert texts.type == pa.string()
    listed = texts if isinstance(texts, list) else texts.tolist()
    if into == "arrow":
        listed = texts.to_pylist()
    assert listed == expected
    assert _as_list(bulk.parse(texts, into=into)) == _as_list(values)  # type: ignore[arg-type]


def test_values_ending_in_zero_bytes_survive_numpy() -> None:
    """'V16' keeps trailing zero bytes ('S16' would strip them when read back)."""
    values = [uuid.UUID(int=1 << 100), uuidkit.NIL, uuid.UUID(int=255 << 8)]
    assert bulk.to_list(bulk.from_list(values)) == values
    assert bulk.format(bulk.from_list(values)).tolist() == [str(v) for v in values]


def test_parse_accepts_every_form_parse_accepts() -> None:
    value = uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
    forms = [str(value), str(value).upper(), value.hex, "{" + str(value) + "}", value.urn]
    assert bulk.parse(forms, into="list") == [value] * len(forms)
    assert bulk.parse(np.array(forms), into="list") == [value] * len(forms)
    assert bulk.parse(pa.array(forms), into="list") == [value] * len(forms)


@pytest.mark.parametrize("strict", [False, True])
def test_parse_names_the_first_bad_element(strict: bool) -> None:
    good = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
    texts = [good, good, good[:-1] + "g", "nonsense", good]
    with pytest.raises(InvalidUUID) as caught:
        bulk.parse(texts, strict=strict)
    assert str(caught.value) == "element 2: invalid character 'g' at 35"
    assert (caught.value.index, caught.value.position) == (2, 35)


def test_parse_in_strict_mode_refuses_lenient_forms() -> None:
    good = "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
    with pytest.raises(InvalidUUID) as caught:
        bulk.parse([good, "{" + good + "}"], strict=True)
    assert caught.value.index == 1
    assert str(caught.value).startswith("element 1: braces are not accepted in strict mode")


def test_parse_names_a_non_string_element() -> None:
    with pytest.raises(InvalidUUID, match=r"^element 1: expected a str, found int$"):
        bulk.parse(["f81d4fae-7dec-11d0-a765-00a0c91e6bf6", 5])


def test_from_list_names_a_non_uuid_element() -> None:
    with pytest.raises(InvalidUUID, match=r"^element 1: expected a uuid.UUID, found str$") as e:
        bulk.from_list([uuidkit.uuid4(), "x"])  # type: ignore[list-item]
    assert e.value.index == 1


@pytest.mark.parametrize("into", ["numpy", "arrow"])
def test_conversions_between_arrays_and_lists(into: str) -> None:
    values = [uuidkit.uuid4() for _ in range(100)] + [uuidkit.MAX]
    array = bulk.from_list(values, into=into)  # type: ignore[arg-type]
    assert bulk.to_list(array) == values
    assert bulk.to_list(values) == values
    assert bulk.to_list(np.frombuffer(b"".join(v.bytes for v in values), np.uint8).reshape(-1, 16))
    sliced = array[10:20]
    assert bulk.to_list(sliced) == values[10:20]


@pytest.mark.parametrize("version", [1, 6, 7])
def test_timestamps_equal_the_one_at_a_time_reader(version: int) -> None:
    values = bulk.generate(version, 500, into="numpy")
    expected = [uuidkit.timestamp_ns(value) for value in bulk.to_list(values)]
    found = bulk.timestamps(values)
    assert found.dtype == np.int64
    assert found.tolist() == expected


def test_timestamps_of_vectors_and_old_dates() -> None:
    """RFC 9562 Appendix A.1, A.5 and A.6 encode 2022-02-22 19:22:22 UTC."""
    vectors = [
        uuid.UUID("C232AB00-9414-11EC-B3C8-9F6BDECED846"),
        uuid.UUID("1EC9414C-232A-6B00-B3C8-9F6BDECED846"),
        uuid.UUID("017F22E2-79B0-7CC3-98C4-DC0C0C07398F"),
    ]
    found = bulk.timestamps(vectors)
    assert found[0] == found[1] == 1645557742_000_000_000
    assert found[2] == 1645557742_000_000_000
    early = uuidkit.build_v1(timestamp=1 << 56, clock_seq=0, node=0)  # 1810
    assert bulk.timestamps([early]).tolist() == [uuidkit.timestamp_ns(early)]
    assert bulk.timestamps([early])[0] < 0


def test_timestamps_name_the_first_element_without_one() -> None:
    values = [uuidkit.uuid7(), uuidkit.uuid4()]
    with pytest.raises(InvalidUUID, match=r"^element 1: expected a v1, v6 or v7 UUID$") as e:
        bulk.timestamps(values)
    assert e.value.index == 1
    far = uuidkit.build_v7(unix_ts_ms=(1 << 48) - 1, rand_a=0, rand_b=0)
    gregorian_epoch = uuidkit.build_v1(timestamp=0, clock_seq=0, node=0)  # 1582-10-15
    for outside in (far, gregorian_epoch):
        with pytest.raises(InvalidUUID, match=r"^element 1: expected a time between 1677 and"):
            bulk.timestamps([values[0], outside])


@pytest.mark.skipif(_accel.SPEEDUPS is None, reason="uuidkit._speedups not in use")
def test_bulk_lists_are_not_tracked_by_the_garbage_collector() -> None:
    for version in (4, 7, 8):
        values = bulk.generate(version, 10)
        assert not any(gc.is_tracked(value) for value in values), version
    assert not any(gc.is_tracked(value) for value in bulk.parse([str(uuid.uuid4())], into="list"))
