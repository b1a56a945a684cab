"""A clock reading just before the epoch (tick -1) is refused like any other negative one.

The generators' "no tick yet" state must not be mistaken for a reading: a first reading of
exactly tick -1 once counted as "the current tick again" (a v1 generator then waited for
the clock and reported an exhausted counter, a v6 one stamped 1970-01-01, a v8 one failed
in the layout). Every tick before the epoch is refused by the Timeline ("does not fit the
field"), with the clock read once and never waited on. Clocks are injected, so any int is a
possible reading.

References: RFC 9562 §5.1, §5.6, §6.1 (the timestamp), §6.2; draft-peabody-dispatch-new-
uuid-format-01 §4.5.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import pytest
from gen_fakes import FakeClock, constant_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

from uuidkit import GeneratorError
from uuidkit.generators import DraftV8Config, DraftV8Generator, V1Generator, V6Generator

#: 100 ns: the Gregorian generators' default clock interval (RFC 9562 §5.1).
GREGORIAN_TICK_NS = 100


def _make(factory: Callable[..., Any], clock: FakeClock, *args: Any) -> Any:
    return factory(
        *args,
        clock=clock,
        random_bytes=constant_bytes(0),
        sleep_ns=clock.sleep,
        monotonic_ns=clock.monotonic,
    )


def _refused(generator: Any, clock: FakeClock, tick: int) -> None:
    with pytest.raises(GeneratorError) as caught:
        generator()
    assert type(caught.value) is GeneratorError  # not a counter overflow after a wait
    assert f"tick {tick} does not fit the field" in str(caught.value)
    assert clock.sleeps == 0


@pytest.mark.parametrize("factory", [V1Generator, V6Generator])
@pytest.mark.parametrize("reading_ns", [-1, -GREGORIAN_TICK_NS, -GREGORIAN_TICK_NS - 1])
def test_gregorian_first_reading_before_the_epoch(
    factory: Callable[..., Any], reading_ns: int
) -> None:
    """Tick -1 (a reading of -1 to -100 ns) as tick -2: refused, on a new generator and on
    one reset by a fork."""
    tick = reading_ns // GREGORIAN_TICK_NS
    clock = FakeClock(reading_ns)
    generator = _make(factory, clock)
    _refused(generator, clock, tick)
    generator.reset_after_fork()
    _refused(generator, clock, tick)


@settings(max_examples=60, deadline=None)
@given(
    factory=st.sampled_from([V1Generator, V6Generator]),
    reading_ns=st.integers(-(10**12), -1),
)
def test_gregorian_never_stamps_a_reading_before_the_epoch(
    factory: Callable[..., Any], reading_ns: int
) -> None:
    clock = FakeClock(reading_ns)
    _refused(_make(factory, clock), clock, reading_ns // GREGORIAN_TICK_NS)


@pytest.mark.parametrize("bits", [32, 48, 60])
@pytest.mark.parametrize("reading_ns", [-1, -2])
def test_v8_first_reading_before_the_epoch(bits: Literal[32, 48, 60], reading_ns: int) -> None:
    """Tick -1 of the draft v8 layouts whose tick is the clock's (the 64-bit one rounds
    to multiples of 16, so its first tick before the epoch is -16)."""
    config = DraftV8Config(timestamp_bits=bits)
    clock = FakeClock(reading_ns)
    generator = _make(DraftV8Generator, clock, config)
    _refused(generator, clock, reading_ns // config.tick_ns)
    generator.reset_after_fork()
    _refused(generator, clock, reading_ns // config.tick_ns)
