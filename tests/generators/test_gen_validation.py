"""Every argument a generator or constructor takes is checked: a uuidkit error, never garbage.

References: RFC 9562 §4, §5.1, §6.10; RFC 4122 §4.1.2.
"""

from __future__ import annotations

from typing import Any

import pytest
from gen_fakes import FakeClock, constant_bytes

import uuidkit
from uuidkit import InvalidField, InvalidUUID, StateFileError
from uuidkit.generators import (
    DraftV8Config,
    DraftV8Generator,
    GregorianConfig,
    SharedConfig,
    SharedV6Generator,
    V1Generator,
    V6Generator,
    V7Config,
    V7Generator,
)


class LyingInt(int):
    """An int subclass whose comparisons all say "in range"."""

    def __lt__(self, other: object) -> bool:
        return False

    def __le__(self, other: object) -> bool:
        return True

    def __ge__(self, other: object) -> bool:
        return True

    def __gt__(self, other: object) -> bool:
        return False


@pytest.mark.parametrize("bad", [-1, 1 << 48, True, "1", 1.0])
def test_set_node_refuses_what_is_not_a_48_bit_node(bad: Any) -> None:
    generator = V1Generator(random_bytes=constant_bytes(7))
    before = generator()
    with pytest.raises(InvalidField, match="node") as caught:
        generator.set_node(bad)
    assert caught.value.field == "node"
    after = generator()
    assert after.node == before.node and str(after)[0] != "-"


@pytest.mark.parametrize(
    ("name", "value"), [("node", -1), ("node", 1 << 48), ("clock_seq", 1 << 20)]
)
@pytest.mark.parametrize("cls", [V1Generator, V6Generator])
def test_constructor_fields_are_range_checked(cls: Any, name: str, value: int) -> None:
    with pytest.raises(InvalidField, match=name) as caught:
        cls(**{name: value})
    assert caught.value.field == name


@pytest.mark.parametrize(
    ("factory", "field"),
    [
        (lambda: V7Generator(clock="now"), "clock"),  # type: ignore[arg-type]
        (lambda: V7Generator(random_bytes=None), "random_bytes"),  # type: ignore[arg-type]
        (lambda: V1Generator(sleep_ns=5), "sleep_ns"),  # type: ignore[arg-type]
        (lambda: V6Generator(monotonic_ns=0), "monotonic_ns"),  # type: ignore[arg-type]
        (lambda: DraftV8Generator(clock=1), "clock"),  # type: ignore[arg-type]
        (lambda: V7Generator({"counter": 1}), "config"),  # type: ignore[arg-type]
        (lambda: V1Generator(V7Config()), "config"),  # type: ignore[arg-type]
        (lambda: DraftV8Generator(GregorianConfig()), "config"),  # type: ignore[arg-type]
        (lambda: V7Config(counter="dedicated"), "counter"),  # type: ignore[arg-type]
        (lambda: V7Config(overflow="wait"), "overflow"),  # type: ignore[arg-type]
        (lambda: V7Config(regression=None), "regression"),  # type: ignore[arg-type]
        (lambda: V7Config(max_wait_ms=True), "max_wait_ms"),
        (lambda: GregorianConfig(node="random"), "node"),  # type: ignore[arg-type]
        (lambda: GregorianConfig(random_per_uuid=1), "random_per_uuid"),  # type: ignore[arg-type]
        (lambda: GregorianConfig(max_wait_ms=-1), "max_wait_ms"),
        (lambda: GregorianConfig(clock_resolution_ns=1 << 70), "clock_resolution_ns"),
        (lambda: DraftV8Config(timestamp_bits=48.0), "timestamp_bits"),  # type: ignore[arg-type]
        (lambda: DraftV8Config(tick_ns=0), "tick_ns"),
        (lambda: SharedConfig(durable="yes"), "durable"),  # type: ignore[arg-type]
        (lambda: SharedConfig(window_ms=0), "window_ms"),
        (lambda: SharedConfig(window_ms=5_000, max_future_ms=4_999), "max_future_ms"),
        (lambda: SharedV6Generator("x", node_policy="mac"), "node_policy"),  # type: ignore[arg-type]
    ],
)
def test_generator_arguments_are_checked(factory: Any, field: str) -> None:
    with pytest.raises(InvalidField, match=field) as caught:
        factory()
    assert caught.value.field == field


def test_state_path_must_be_a_path() -> None:
    with pytest.raises(StateFileError, match=r"path: expected a str or os\.PathLike"):
        SharedV6Generator(42)  # type: ignore[arg-type]


def test_huge_ints_give_uuidkit_errors_naming_their_size() -> None:
    huge = 10**5000  # too long for int-to-str conversion (Python's 4300-digit limit)
    with pytest.raises(InvalidUUID, match=r"an int of 16610 bits"):
        uuidkit.from_int(huge)
    with pytest.raises(InvalidField, match=r"time_low.*an int of 16610 bits") as caught:
        uuidkit.from_fields((huge, 0, 0, 0, 0, 0))
    assert caught.value.field == "time_low"
    with pytest.raises(InvalidField, match=r"node.*-an int of 16610 bits"):
        uuidkit.from_fields((0, 0, 0, 0, 0, -huge))
    with pytest.raises(InvalidField, match="node"):
        V1Generator().set_node(huge)


def test_int_subclasses_that_lie_in_comparisons_are_checked_by_value() -> None:
    with pytest.raises(InvalidUUID, match=r"2\*\*128"):
        uuidkit.from_int(LyingInt(2**200))
    assert uuidkit.from_int(LyingInt(5)).int == 5
    with pytest.raises(InvalidField, match="node"):
        uuidkit.from_fields((0, 0, 0, 0, 0, LyingInt(2**200)))
    with pytest.raises(InvalidField, match="node"):
        uuidkit.uuid1(node=LyingInt(2**200))
    value = uuidkit.from_fields((1, 2, 3, 4, 5, LyingInt(6)))
    assert type(value.int) is int and value.int == uuidkit.from_fields((1, 2, 3, 4, 5, 6)).int


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("bad_at", [None, 0, 9_999_999])
def test_a_10_mb_string_is_refused_by_its_length_first(strict: bool, bad_at: int | None) -> None:
    text = "0" * 10_000_000
    if bad_at is not None:
        # A per-character pass run before the length check would name this character.
        text = text[:bad_at] + "x" + text[bad_at + 1 :]
    with pytest.raises(InvalidUUID, match="too long: 10000000 characters, a UUID has at most 45"):
        uuidkit.parse(text, strict=strict)


def test_wait_overrun_is_measured_on_the_monotonic_clock() -> None:
    # Each requested sleep (a 100 ns tick) takes a full second: the 10 ms limit is reached
    # after the first sleep, not after 100,000 of them (a day).
    clock = FakeClock(stalled=True, sleep_overrun=10_000_000)
    generator = V1Generator(
        GregorianConfig(max_wait_ms=10),
        clock=clock,
        random_bytes=constant_bytes(1),
        sleep_ns=clock.sleep,
        monotonic_ns=clock.monotonic,
    )
    generator()
    with pytest.raises(uuidkit.CounterOverflowError, match="did not advance within 10000000 ns"):
        generator()
    assert clock.sleeps == 1


def test_shared_future_limit_defaults_to_ten_seconds_or_the_window() -> None:
    assert SharedConfig().future_limit_ms == 10_000
    assert SharedConfig(window_ms=30_000).future_limit_ms == 30_000
    assert SharedConfig(window_ms=500, max_future_ms=2_000).future_limit_ms == 2_000
