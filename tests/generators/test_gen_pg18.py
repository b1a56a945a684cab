"""The PostgreSQL 18 uuidv7() profile against hand-computed vectors.

Every expected value below is worked out by hand in the comment next to it from
PostgreSQL 18's definitions (uuid.c): unix_ts_ms = ns / 10**6,
rand_a = (ns % 10**6) * 4096 / 10**6 (integer division), SUBMS_MINIMAL_STEP_NS = 10**6 / 4096
+ 1 = 245, "if (previous_ns + SUBMS_MINIMAL_STEP_NS >= ns) ns = previous_ns + ...".

References: RFC 9562 §5.7, §6.2 (Method 3), §6.9, Appendix A.6.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uuidkit.errors import CounterOverflowError, GeneratorError, InvalidField
from uuidkit.generators import PG18V7Generator, build_v7_pg18, pg18_time_ns, uuid7_pg18
from uuidkit.generators._timeline import DEFAULT_MAX_AHEAD_MS
from uuidkit.generators.pg18 import PG18_MINIMAL_STEP_NS, pg18_fields

#: RFC 9562 Appendix A.6: unix_ts_ms 0x017F22E279B0 = 1645557742000 ms.
A6_MS = 0x017F22E279B0
A6_NS = A6_MS * 1_000_000
#: RFC 9562 Appendix A.6: the last 8 octets 98C4DC0C0C07398F without the variant bits.
A6_RAND_B = 0x18C4DC0C0C07398F


def _clock(readings: list[int]) -> Iterator[int]:
    yield from readings


def _generator(readings: list[int]) -> PG18V7Generator:
    ticks = _clock(readings)
    return PG18V7Generator(clock=lambda: next(ticks), random_bytes=lambda n: bytes(n))


def test_minimal_step_is_245_ns() -> None:
    # 10**6 // 2**12 = 244 (244.14...), plus 1.
    assert PG18_MINIMAL_STEP_NS == 245


@pytest.mark.parametrize(
    ("sub_ms_ns", "rand_a"),
    [
        (0, 0x000),
        (244, 0x000),  # 244 * 4096 = 999_424 < 10**6
        (245, 0x001),  # 245 * 4096 = 1_003_520 -> 1
        (500_000, 0x800),  # exactly half a millisecond -> 2048
        (999_999, 0xFFF),  # 4_095_995_904 / 10**6 -> 4095
    ],
)
def test_fraction_scaling(sub_ms_ns: int, rand_a: int) -> None:
    assert pg18_fields(A6_NS + sub_ms_ns) == (A6_MS, rand_a)


def test_layout_on_the_rfc_example() -> None:
    # RFC 9562 A.6's time and rand_b, half a millisecond later: rand_a 0x800, so the octets
    # are 017F22E2 79B0 7800 98C4 DC0C0C07398F (version 7 in the top nibble of octet 6).
    value = build_v7_pg18(A6_NS + 500_000, A6_RAND_B)
    assert value == uuid.UUID("017f22e2-79b0-7800-98c4-dc0c0c07398f")
    assert value.version == 7 and value.variant == uuid.RFC_4122


def test_stalled_clock_steps_245_ns_per_value() -> None:
    # previous_ns starts at 0 (a new backend): the first value takes the clock's A6_NS; each
    # later one previous + 245. The fraction is floor(k * 245 * 4096 / 10**6) = floor(k *
    # 1.00352): k = 1 -> 1; k = 284 -> 69_580 ns * 4096 = 284_999_680 -> 284; k = 285 ->
    # 69_825 ns * 4096 = 286_003_200 -> 286 (285 is skipped).
    count = 300
    generator = _generator([A6_NS] * count)
    values = [generator() for _ in range(count)]
    fractions = [(value.int >> 64) & 0xFFF for value in values]
    assert fractions[:2] == [0, 1]
    assert fractions[284] == 284 and fractions[285] == 286
    assert values == sorted(values) and len(set(values)) == count


def test_backward_clock_keeps_order_and_forward_clock_is_followed() -> None:
    # 1: clock A6+1000 -> 1000 ns: rand_a floor(1000*4096/1e6) = 4.
    # 2: clock goes back to A6 -> previous + 245 = 1245 ns: rand_a 5 (5.099).
    # 3: clock jumps to A6 + 2 ms + 500 us -> followed: unix_ts_ms + 2, rand_a 0x800.
    generator = _generator([A6_NS + 1000, A6_NS, A6_NS + 2_500_000])
    first, second, third = generator(), generator(), generator()
    assert (first.int >> 64) & 0xFFF == 4
    assert (second.int >> 64) & 0xFFF == 5
    assert third.int >> 80 == A6_MS + 2 and (third.int >> 64) & 0xFFF == 0x800


def test_step_carries_into_the_next_millisecond() -> None:
    # previous = A6 + 999_900 ns; a stalled clock gives A6 + 1_000_145 ns: the next
    # millisecond, rand_a floor(145 * 4096 / 10**6) = 0.
    generator = _generator([A6_NS + 999_900, A6_NS])
    generator()
    nxt = generator()
    assert nxt.int >> 80 == A6_MS + 1 and (nxt.int >> 64) & 0xFFF == 0


def test_random_bits_fill_rand_b_only() -> None:
    generator = PG18V7Generator(clock=lambda: A6_NS, random_bytes=lambda n: b"\xff" * n)
    value = generator()
    # rand_b all ones under the variant bits 10: octets 8-15 = BFFFFFFFFFFFFFFF.
    assert value.bytes[8:] == bytes.fromhex("bfffffffffffffff")


def test_bad_arguments() -> None:
    with pytest.raises(InvalidField):
        build_v7_pg18(-1, 0)
    with pytest.raises(InvalidField):
        build_v7_pg18(A6_NS, 1 << 62)


def test_time_of_a_vector() -> None:
    # rand_a 0x74F = 1871 stands for sub_ms_ns in [ceil(1871e6/4096), ceil(1872e6/4096)) =
    # [456788, 457032): the vector below was stamped at sub_ms_ns 456789.
    value = build_v7_pg18(1_700_000_000_123_456_789, 0)
    assert str(value).startswith("018bcfe5-687b-774f")
    assert pg18_time_ns(value) == 1_700_000_000_123_456_788


@given(st.integers(0, (1 << 48) * 1_000_000 - 1), st.integers(0, (1 << 62) - 1))
def test_time_is_the_first_nanosecond_of_the_step(unix_ns: int, rand_b: int) -> None:
    # RFC 9562 §6.2 Method 3 with 12 bits: each rand_a covers at most 245 ns (10**6/4096
    # rounded up), and the time read back is the first nanosecond that encodes as the value.
    found = pg18_time_ns(build_v7_pg18(unix_ns, rand_b))
    assert found <= unix_ns < found + PG18_MINIMAL_STEP_NS
    assert pg18_fields(found) == pg18_fields(unix_ns)
    assert found == 0 or found % 1_000_000 == 0 or pg18_fields(found - 1) != pg18_fields(found)


@pytest.mark.parametrize(
    "bad", [uuid.UUID(int=0), uuid.uuid4(), uuid.UUID("017f22e2-79b0-7cc3-18c4-dc0c0c07398f"), "x"]
)
def test_time_refuses_what_is_not_a_v7(bad: object) -> None:
    with pytest.raises(InvalidField, match="expected a UUIDv7"):
        pg18_time_ns(bad)  # type: ignore[arg-type]


def test_default_function_is_increasing() -> None:
    values = [uuid7_pg18() for _ in range(2000)]
    assert values == sorted(values) and len(set(values)) == len(values)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_starts_as_a_new_backend() -> None:
    # Parent: a stalled clock at A6 gives A6, A6+245, A6+490. Had the child inherited
    # previous_ns it would continue at A6+735; a fresh backend starts at the clock, A6.
    generator = PG18V7Generator(clock=lambda: A6_NS, random_bytes=lambda n: bytes(n))
    for _ in range(3):
        generator.next_ns()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read)
        os.write(write, str(generator.next_ns()).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child_ns = int(pipe.read())
    os.waitpid(pid, 0)
    assert child_ns == A6_NS
    assert generator.next_ns() == A6_NS + 3 * 245


# --- the run-ahead bound (max_ahead_ms, the shared policy engine) ---------------------------


def test_default_bound_is_the_library_default() -> None:
    assert PG18V7Generator().max_ahead_ms == DEFAULT_MAX_AHEAD_MS
    for bad in (-1, 1.5, True, None):
        with pytest.raises(InvalidField, match="max_ahead_ms"):
            PG18V7Generator(max_ahead_ms=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("max_ahead_ms", [0, 1, 3])
def test_a_burst_on_a_frozen_clock_stops_at_the_bound(max_ahead_ms: int) -> None:
    # Frozen at A6: value k is stamped A6 + 245 k ns, k * 245 ns ahead of the clock. Those
    # with 245 k <= max_ahead_ms * 10**6 are allowed; the next raises (the ADVANCE policy's
    # bound), and keeps raising while the clock stays, without moving the state.
    clock = FrozenClock(A6_NS)
    generator = PG18V7Generator(clock=clock, random_bytes=bytes, max_ahead_ms=max_ahead_ms)
    allowed = max_ahead_ms * 1_000_000 // PG18_MINIMAL_STEP_NS + 1
    stamps = [generator.next_ns() for _ in range(allowed)]
    assert stamps == [A6_NS + k * PG18_MINIMAL_STEP_NS for k in range(allowed)]
    for _ in range(2):
        with pytest.raises(CounterOverflowError, match="run-ahead bound"):
            generator.next_ns()
    # The clock moves past the last stamp: PostgreSQL's rule resumes, strictly increasing
    # (with a bound of 0 no value may be ahead of the clock, not even by one step).
    clock.now = stamps[-1] + 1_000
    assert generator.next_ns() == stamps[-1] + 1_000
    if max_ahead_ms:
        assert generator.next_ns() == stamps[-1] + 1_000 + PG18_MINIMAL_STEP_NS
    else:
        with pytest.raises(CounterOverflowError):
            generator.next_ns()


def test_a_slow_clock_is_bounded_by_its_current_reading() -> None:
    # The clock advances 100 ns per call while values advance 245 ns: the run-ahead grows by
    # 145 ns per value and reaches 1 ms after about 6,900 values, not before.
    clock = FrozenClock(A6_NS)
    generator = PG18V7Generator(clock=clock, random_bytes=bytes, max_ahead_ms=1)
    made = 0
    with pytest.raises(CounterOverflowError):
        while made < 20_000:
            generator.next_ns()
            clock.now += 100
            made += 1
    # Value k (k >= 1) is stamped A6 + 245 k while the clock reads A6 + 100 k: allowed
    # while 145 k <= 10**6.
    assert made == 1_000_000 // 145 + 1


def test_a_clock_set_back_within_the_bound_keeps_increasing() -> None:
    clock = FrozenClock(A6_NS + 5_000_000)
    generator = PG18V7Generator(clock=clock, random_bytes=bytes, max_ahead_ms=10)
    first = generator()
    clock.now = A6_NS  # 5 ms back: within 10 ms, PostgreSQL's rule continues
    second = generator()
    assert second > first and generator.next_ns() == A6_NS + 5_000_000 + 2 * 245


def test_a_clock_set_back_beyond_the_bound_restarts_at_the_clock() -> None:
    # KEEP's documented behaviour: beyond max_ahead_ms the generator restarts at the clock,
    # as a new backend would, instead of stamping values an hour ahead until it catches up.
    hour_ns = 3_600 * 10**9
    clock = FrozenClock(A6_NS + hour_ns)
    generator = PG18V7Generator(clock=clock, random_bytes=bytes)
    generator.next_ns()
    clock.now = A6_NS
    assert generator.next_ns() == A6_NS
    assert generator.next_ns() == A6_NS + PG18_MINIMAL_STEP_NS


def test_a_timestamp_past_48_bits_is_refused() -> None:
    last_ms = (1 << 48) - 1
    generator = PG18V7Generator(clock=lambda: last_ms * 1_000_000 + 999_900, random_bytes=bytes)
    generator()
    with pytest.raises(GeneratorError, match="does not fit"):
        generator()  # + 245 ns carries into a 49th bit of unix_ts_ms


class FrozenClock:
    """A clock that reads ``now`` until a test moves it."""

    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now
