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

from uuidkit.errors import InvalidField
from uuidkit.generators import PG18V7Generator, build_v7_pg18, uuid7_pg18
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
