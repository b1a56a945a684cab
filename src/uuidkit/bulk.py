"""Many UUIDs at once: generation, formatting and parsing into lists, numpy and Arrow arrays.

Array layout: one UUID is 16 bytes in network byte order (RFC 9562 §4), so an array of
``n`` UUIDs is ``n * 16`` contiguous bytes:

- numpy: a 1-D array of dtype ``'V16'`` (raw 16-byte values). ``'V16'`` rather than
  ``'S16'`` because numpy strips trailing zero bytes from ``'S'`` items when they are read
  back; ``array.view('S16')`` or ``array.view(np.uint8).reshape(-1, 16)`` are free views.
- Arrow: a ``pyarrow`` ``arrow.uuid`` extension array (``pa.uuid()``, the canonical
  extension type of pyarrow >= 18) over ``fixed_size_binary(16)`` storage.

numpy and pyarrow are optional (``pip install 'uuidkit[bulk]'``) and imported here only,
when an array is asked for.

Time-based values come from the process-wide default generators (``uuidkit.uuid1``,
``uuid6``, ``uuid7``) through their public ``generate``/``generate_ints`` block API, under
one lock acquisition per block: a bulk v7 array is strictly increasing and above every v7
made earlier in this process, one at a time or in bulk, and below every later one.

Lists of :class:`uuid.UUID` are made with the cyclic garbage collector kept out of the
loop (a UUID holds an int and an enum member and cannot be part of a cycle): the compiled
accelerator leaves the objects untracked; the pure-Python path pauses the collector while it
allocates.

References: RFC 9562 §4, §5.1, §5.4, §5.6, §5.7, §5.8, §6.2.
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final, Literal, TypeAlias
from uuid import UUID

from uuidkit import _system
from uuidkit._accel import SPEEDUPS
from uuidkit._bits import GREGORIAN_OFFSET_100NS
from uuidkit._bulkarrow import exports_arrow, records_of_arrow
from uuidkit._construct import from_ints_unchecked
from uuidkit.errors import InvalidField, InvalidUUID
from uuidkit.parse import parse as parse_one
from uuidkit.timestamps import NS_PER_MS

__all__ = [
    "VERSIONS",
    "format",
    "from_list",
    "generate",
    "parse",
    "timestamps",
    "to_list",
    "v7_node_block",
]

Into: TypeAlias = Literal["list", "numpy", "arrow"]
#: The versions :func:`generate` makes.
VERSIONS: Final = (1, 4, 6, 7, 8)
_INTO: Final = ("list", "numpy", "arrow")
_INT64_MAX: Final = (1 << 63) - 1
_CANONICAL_LENGTH: Final = 36
#: Characters an Arrow ``string`` array holds (int32 offsets); past it, ``large_string``.
_ARROW_STRING_LIMIT = (1 << 31) - 1


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Keep the cyclic GC from rescanning a growing list of acyclic objects."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _check_count(n: object) -> int:
    if type(n) is not int or n < 0:
        raise InvalidField(f"n: expected an int >= 0, found {n!r}", "n")
    return n


def _check_into(into: object, allowed: Sequence[str] = _INTO) -> str:
    if not isinstance(into, str) or into not in allowed:
        raise InvalidField(f"into: expected one of {', '.join(allowed)}, found {into!r}", "into")
    return into


# --- records: n * 16 bytes ------------------------------------------------------------------


def _random_records(version: int, n: int) -> bytearray:
    if SPEEDUPS is not None:
        records: bytearray = SPEEDUPS.random_records(version, n)
        return records
    records = bytearray(_system.random_bytes(16 * n))
    # RFC 9562 §5.4/§5.8: version in the high nibble of octet 6, variant 0b10 in octet 8.
    records[6::16] = bytes((b & 0x0F) | (version << 4) for b in records[6::16])
    records[8::16] = bytes((b & 0x3F) | 0x80 for b in records[8::16])
    return records


def _records_of_ints(values: list[int]) -> bytearray:
    if SPEEDUPS is not None:
        records: bytearray | int = SPEEDUPS.records_of_ints(values)
        if isinstance(records, int):
            raise InvalidUUID(f"element {records}: not a 128-bit integer", index=records)
        return records
    return bytearray(b"".join([value.to_bytes(16) for value in values]))


def _records_of_uuids(values: Sequence[object]) -> bytearray:
    if SPEEDUPS is not None:
        records: bytearray | int = SPEEDUPS.records_of_uuids(values)
        if isinstance(records, int):
            found = type(values[records]).__name__
            raise InvalidUUID(
                f"element {records}: expected a uuid.UUID, found {found}", index=records
            )
        return records
    for index, value in enumerate(values):
        if not isinstance(value, UUID):
            raise InvalidUUID(
                f"element {index}: expected a uuid.UUID, found {type(value).__name__}",
                index=index,
            )
    return bytearray(b"".join([value.bytes for value in values if isinstance(value, UUID)]))


def _uuids_of_records(records: Any) -> list[UUID]:
    if SPEEDUPS is not None:
        uuids: list[UUID] = SPEEDUPS.uuids_from_records(records)
        return uuids
    data = bytes(records)
    with _collector_paused():
        return from_ints_unchecked(
            [int.from_bytes(data[i : i + 16]) for i in range(0, len(data), 16)]
        )


def _uuids_of_ints(values: list[int]) -> list[UUID]:
    if SPEEDUPS is not None:
        uuids: list[UUID] = SPEEDUPS.uuids_from_ints(values)
        return uuids
    with _collector_paused():
        return from_ints_unchecked(values)


# --- arrays ---------------------------------------------------------------------------------


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        raise InvalidField(
            "into: numpy is not installed (pip install 'uuidkit[bulk]')", "into"
        ) from None
    return numpy


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise InvalidField(
            "into: pyarrow is not installed (pip install 'uuidkit[bulk]')", "into"
        ) from None
    if not hasattr(pyarrow, "uuid"):
        raise InvalidField("into: the arrow.uuid extension type needs pyarrow >= 18", "into")
    return pyarrow


def _wrap(records: bytearray | memoryview, into: str) -> Any:
    """Records as the container ``into`` names (``records`` is handed over, not copied)."""
    if into == "list":
        return _uuids_of_records(records)
    if into == "numpy":
        return _numpy().frombuffer(records, dtype="V16")
    pa = _pyarrow()
    storage = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(16), len(records) // 16, [None, pa.py_buffer(records)]
    )
    return pa.ExtensionArray.from_storage(pa.uuid(), storage)


def _is_arrow_column(values: object) -> bool:
    """An Arrow array, or a column an engine hands out as Arrow (Polars, pandas, ...): a
    pandas ``object`` column holds Python objects, which are read one by one instead."""
    if _module_of(values) == "pyarrow":
        return True
    return exports_arrow(values) and str(getattr(values, "dtype", "")) != "object"


def _records_of(values: Any) -> Any:
    """The packed 16-byte records of a list of UUIDs, a numpy or an Arrow array of them, or
    of a dataframe engine's column that exports Arrow (:mod:`uuidkit._bulkarrow`)."""
    if isinstance(values, list | tuple):
        return _records_of_uuids(values)
    if _module_of(values) == "numpy":
        np = _numpy()
        array = np.ascontiguousarray(values)
        if array.dtype.itemsize * (array.shape[-1] if array.ndim == 2 else 1) != 16:
            raise InvalidUUID(f"expected 16-byte values, found dtype {array.dtype}")
        return memoryview(array).cast("B")
    if _is_arrow_column(values):
        return records_of_arrow(_pyarrow(), values)
    return _records_of_uuids(list(values))


# --- the public functions -------------------------------------------------------------------


def _time_based(version: int, n: int, into: str) -> Any:
    from uuidkit.generators import defaults

    if version == 7:
        if into == "list":
            return defaults.DEFAULT_V7.generate(n)
        return _wrap(defaults.DEFAULT_V7.generate_records(n), into)
    # v1/v6: one block of the default generator (its compiled core's loop when built).
    generator = defaults.DEFAULT_V1 if version == 1 else defaults.DEFAULT_V6
    if into == "list":
        with _collector_paused():
            return generator.generate(n)
    return _wrap(_records_of_ints(generator.generate_ints(n)), into)


def generate(version: int, n: int, *, into: Into = "list") -> Any:
    """``n`` new UUIDs of ``version`` (1, 4, 6, 7 or 8) as a list, numpy or Arrow array.

    ``into="list"``: a list of :class:`uuid.UUID`; ``"numpy"``: a ``'V16'`` array;
    ``"arrow"``: a pyarrow ``arrow.uuid`` extension array. v1/v6/v7 come from the default
    generators (v7: strictly increasing, sharing ``uuidkit.uuid7``'s state); v4 and v8 are
    122 bits from the CSPRNG (v8: custom_a, custom_b, custom_c all random).

    References: RFC 9562 §5.1, §5.4, §5.6, §5.7, §5.8, §6.2 ("UUIDs generated in batches
    are also monotonic"), §6.9.
    """
    if type(version) is not int or version not in VERSIONS:
        raise InvalidField(f"version: expected one of 1, 4, 6, 7, 8, found {version!r}", "version")
    count, target = _check_count(n), _check_into(into)
    if version in (4, 8):
        return _wrap(_random_records(version, count), target)
    return _time_based(version, count, target)


def to_list(values: Any) -> list[UUID]:
    """A numpy or Arrow array of UUIDs (or any sequence of them) as a list of uuid.UUID.

    Arrow: an ``arrow.uuid`` or ``fixed_size_binary(16)`` array, a ``binary``,
    ``large_binary`` or ``binary_view`` array of 16-byte values, or a table's column of one
    (a ``ChunkedArray``); or a column of an engine that exports Arrow through the Arrow
    PyCapsule interface (a Polars ``Series``, a pandas ``Series`` with an Arrow dtype), read
    as 16-byte values, never as text. The same for :func:`format` and :func:`timestamps`.

    References: RFC 9562 §4.
    """
    return _uuids_of_records(_records_of(values))


def from_list(values: Sequence[UUID], *, into: Into = "numpy") -> Any:
    """A sequence of :class:`uuid.UUID` as a ``'V16'`` numpy array, an Arrow array or a list.

    An element that is not a UUID raises :class:`~uuidkit.InvalidUUID` with its ``index``.

    References: RFC 9562 §4.
    """
    return _wrap(_records_of_uuids(list(values)), _check_into(into))


def v7_node_block(
    node: int, unix_ts_ms: int, count: int, *, counter: int = 0, into: Into = "numpy"
) -> Any:
    """``count`` v7-node values of one node and one millisecond, counters ``counter`` to
    ``counter + count - 1``, in that (ascending) order, as a numpy or Arrow array or a list.

    These are the values of a millisecond handed out by
    ``NodeBoundV7Generator.reserve_milliseconds`` (its node and milliseconds are the
    caller's): the layout is :func:`uuidkit.nodelayouts.v7_node_int`'s, element for element.
    A counter past the 26-bit field raises :class:`~uuidkit.InvalidField`.

    References: RFC 9562 §5.7, §6.2 (Method 1), §6.3, §6.4.
    """
    from uuidkit.nodelayouts import (
        _LOW_COUNTER_BITS,  # the counter's bits in rand_b (the rest are rand_a)
        V7_NODE_COUNTER_BITS,
        check_claimed_node,
        v7_node_int,
    )

    check_claimed_node(node)
    if type(unix_ts_ms) is not int or not 0 <= unix_ts_ms < 1 << 48:
        raise InvalidField(
            f"unix_ts_ms: expected 0 to 2**48 - 1, found {unix_ts_ms!r}", "unix_ts_ms"
        )
    count, target = _check_count(count), _check_into(into)
    if type(counter) is not int or counter < 0 or counter + count > 1 << V7_NODE_COUNTER_BITS:
        raise InvalidField(
            f"counter: {counter!r} + {count} values pass the {V7_NODE_COUNTER_BITS}-bit "
            "counter of the v7-node layout",
            "counter",
        )
    np = _numpy()
    low_bits = _LOW_COUNTER_BITS
    base = v7_node_int(unix_ts_ms, 0, node)
    counters = np.arange(counter, counter + count, dtype=np.uint64)
    words = np.empty((count, 2), dtype=">u8")  # network byte order (RFC 9562 §4)
    words[:, 0] = np.uint64(base >> 64) | (counters >> np.uint64(low_bits))
    low = (counters & np.uint64((1 << low_bits) - 1)) << np.uint64(48)
    words[:, 1] = np.uint64(base & ((1 << 64) - 1)) | low
    return _wrap(memoryview(words.view(np.uint8).reshape(-1)), target)


#: The numpy text types :func:`format` writes: UCS-4 (144 bytes a UUID) or ASCII bytes (36).
_TEXT_DTYPES = {"U36": 4, "S36": 1}


def format(values: Any, *, dtype: str | None = None) -> Any:
    """Canonical 8-4-4-4-12 lower-case strings of many UUIDs.

    A list (or other sequence) of UUIDs gives a list of str; a numpy array a ``'<U36'``
    array; an Arrow array, or an engine's column that exports Arrow (a Polars or pandas
    ``Series`` of 16-byte values), a ``pa.string()`` array (``pa.large_string()`` past
    2**31 - 1 characters). ``dtype="S36"`` gives a numpy array of 36 ASCII bytes per UUID
    whatever the input (a quarter of ``'<U36'``'s memory), ``dtype="U36"`` a ``'<U36'`` array.

    References: RFC 9562 §4 (Figure 1).
    """
    records = _records_of(values)
    if dtype is not None:
        width = _TEXT_DTYPES.get(dtype)
        if width is None:
            raise InvalidField(f"dtype: expected 'U36' or 'S36', found {dtype!r}", "dtype")
        numpy_dtype = "<U36" if width == 4 else "S36"
        return _numpy().frombuffer(_format_records(records, width), dtype=numpy_dtype)
    if _module_of(values) == "numpy":
        return _numpy().frombuffer(_format_records(records, 4), dtype="<U36")
    if _is_arrow_column(values):
        return _arrow_strings(records)
    return _format_records(records, 0)


def _module_of(values: object) -> str:
    return type(values).__module__.split(".")[0]


def _format_records(records: Any, width: int) -> Any:
    """width 0: list[str]; 1: packed ASCII cells; 4: packed UCS-4 cells (numpy '<U36')."""
    if SPEEDUPS is not None:
        return SPEEDUPS.format_records(records, width)
    texts = [str(value) for value in _uuids_of_records(records)]
    if width == 0:
        return texts
    return "".join(texts).encode("ascii" if width == 1 else "utf-32-le")


def _arrow_strings(records: Any) -> Any:
    pa = _pyarrow()
    count = len(memoryview(records)) // 16
    large = _CANONICAL_LENGTH * count > _ARROW_STRING_LIMIT
    width = 8 if large else 4
    if SPEEDUPS is not None:
        offsets = SPEEDUPS.arrow_offsets(count, width)
    else:
        offsets = array("q" if large else "i", range(0, _CANONICAL_LENGTH * count + 1, 36))
    kind = pa.LargeStringArray if large else pa.StringArray
    data = _format_records(records, 1)
    return kind.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))


def parse(strings: Any, *, into: Into = "numpy", strict: bool = False) -> Any:
    """Many UUID strings (a sequence, numpy or Arrow string array) as a numpy/Arrow array or
    a list of :class:`uuid.UUID`, with :func:`uuidkit.parse`'s rules.

    numpy ``'U'`` arrays and ``'S'`` arrays (each byte read as one character) and Arrow
    ``string``/``large_string`` arrays are read in place. The first string that is not a
    UUID raises :class:`~uuidkit.InvalidUUID` whose message starts ``element N:``, with
    ``index`` N and the ``position`` within that string.

    References: RFC 9562 §4.
    """
    target = _check_into(into)
    strict = bool(strict)
    if SPEEDUPS is None:
        values = [_parse_element(text, index, strict) for index, text in _enumerate(strings)]
        if target == "list":
            return _uuids_of_ints(values)
        return _wrap(_records_of_ints(values), target)
    return _wrap(_parse_compiled(strings, strict), target)


def _enumerate(strings: Any) -> Iterator[tuple[int, Any]]:
    """Each element of a sequence, numpy or Arrow array as Python objects, with its index."""
    module = _module_of(strings)
    if module == "pyarrow":
        return enumerate(strings.to_pylist())
    if module == "numpy":
        array = _string_array(strings)
        if array.dtype.kind == "S":
            return enumerate(text.decode("latin-1") for text in array.tolist())
        return enumerate(array.tolist())
    return enumerate(strings)


def _string_array(strings: Any) -> Any:
    if strings.ndim != 1:
        raise InvalidUUID(f"expected a 1-D array of strings, found {strings.ndim} dimensions")
    return strings


def _parse_element(text: object, index: int, strict: bool) -> int:
    try:
        return parse_one(text, strict=strict).int  # type: ignore[arg-type]
    except InvalidUUID as error:
        raise InvalidUUID(f"element {index}: {error}", error.position, index=index) from None


def _parse_compiled(strings: Any, strict: bool) -> bytearray:
    module = _module_of(strings)
    if module == "numpy" and _string_array(strings).dtype.kind in ("U", "S"):
        return _parse_cells(strings, strict)
    if module == "pyarrow" and _is_arrow_text(strings.type):
        return _parse_arrow(strings, strict)
    texts = strings if isinstance(strings, list) else [text for _, text in _enumerate(strings)]
    records: bytearray = SPEEDUPS.new_records(len(texts))

    def fast(start: int) -> int:
        done: int = SPEEDUPS.parse_texts(texts, strict, records, start)
        return done

    _parse_resuming(records, len(texts), fast, texts.__getitem__, strict)
    return records


def _parse_resuming(
    out: Any,
    count: int,
    fast: Callable[[int], int],
    element: Callable[[int], object],
    strict: bool,
    base: int = 0,
) -> None:
    """Run the compiled loop; each element it leaves goes to uuidkit.parse, then it resumes.

    ``base`` is the index of ``out``'s first element in the whole input (Arrow chunks).
    """
    index = fast(0)
    while index < count:
        value = _parse_element(element(index), base + index, strict)
        out[16 * index : 16 * index + 16] = value.to_bytes(16)
        index = fast(index + 1)


def _parse_cells(strings: Any, strict: bool) -> bytearray:
    np = _numpy()
    width = 4 if strings.dtype.kind == "U" else 1
    chars = strings.dtype.itemsize // width
    records: bytearray = SPEEDUPS.new_records(len(strings))
    if chars == 0:  # 'U0': every element is the empty string
        _parse_resuming(records, len(strings), lambda start: start, lambda _: "", strict)
        return records
    # Little-endian UCS-4 in one contiguous block: a copy only for strided or '>U' input.
    cells = np.ascontiguousarray(strings, dtype=f"<U{chars}" if width == 4 else None)
    octets = cells.view(np.uint8)

    def fast(start: int) -> int:
        done: int = SPEEDUPS.parse_cells(octets, width, chars, strict, records, start)
        return done

    def element(index: int) -> object:
        text = strings[index].item()
        return text.decode("latin-1") if isinstance(text, bytes) else text

    _parse_resuming(records, len(strings), fast, element, strict)
    return records


def _is_arrow_text(kind: Any) -> bool:
    types = _pyarrow().types
    return bool(types.is_string(kind) or types.is_large_string(kind))


def _parse_arrow(strings: Any, strict: bool) -> bytearray:
    records: bytearray = SPEEDUPS.new_records(len(strings))
    chunks = getattr(strings, "chunks", [strings])
    base = 0
    with memoryview(records) as whole:
        for chunk in chunks:
            if not len(chunk):
                continue  # an empty array may have no offsets buffer at all
            with whole[16 * base : 16 * (base + len(chunk))] as out:
                _parse_arrow_chunk(chunk, base, out, strict)
            base += len(chunk)
    return records


def _parse_arrow_chunk(chunk: Any, base: int, out: memoryview, strict: bool) -> None:
    validity, offsets, data = chunk.buffers()
    width = 8 if _pyarrow().types.is_large_string(chunk.type) else 4
    validity = validity if chunk.null_count else None
    data = b"" if data is None else data

    def fast(start: int) -> int:
        done: int = SPEEDUPS.parse_arrow(
            validity, offsets, data, chunk.offset, len(chunk), width, strict, out, start
        )
        return done

    def element(index: int) -> object:
        return chunk[index].as_py()

    _parse_resuming(out, len(chunk), fast, element, strict, base)


def timestamps(values: Any) -> Any:
    """The embedded times of many v1, v6 and v7 UUIDs, as a numpy ``int64`` array of
    Unix-epoch nanoseconds (``.astype('datetime64[ns]')`` for datetimes).

    v1/v6 resolve 100 ns, v7 1 ms. Another version, or an instant outside int64
    nanoseconds (before 1677 or after 2262), raises :class:`~uuidkit.InvalidUUID` naming
    the element.

    References: RFC 9562 §5.1, §5.6, §5.7, §6.1.
    """
    np = _numpy()
    records = _records_of(values)
    if SPEEDUPS is not None:
        found: bytearray | int = SPEEDUPS.timestamps_of_records(records)
        if isinstance(found, int):
            raise _no_timestamp(records, found)
        return np.frombuffer(found, dtype=np.int64)
    words = np.frombuffer(records, dtype=">u8").reshape(-1, 2).astype(np.uint64)
    high = words[:, 0]
    version = (high >> 12) & 0xF
    rfc = (words[:, 1] >> 62) == 2
    high48, mid12 = high >> 16, high & 0xFFF
    v1_ticks = (mid12 << 48) | ((high48 & 0xFFFF) << 32) | (high48 >> 16)
    v6_ticks = (high48 << 12) | mid12
    ticks = np.where(version == 1, v1_ticks, v6_ticks)
    ms = high48
    good = rfc & ((version == 1) | (version == 6) | (version == 7))
    # int64 nanoseconds span 1677-09-21 to 2262-04-11 around the Unix epoch.
    low_ticks = GREGORIAN_OFFSET_100NS - _INT64_MAX // 100
    high_ticks = GREGORIAN_OFFSET_100NS + _INT64_MAX // 100
    in_range = (ticks >= low_ticks) & (ticks <= high_ticks)
    fits = np.where(version == 7, ms <= _INT64_MAX // NS_PER_MS, in_range)
    bad = np.flatnonzero(~(good & fits))
    if bad.size:
        raise _no_timestamp(records, int(bad[0]))
    gregorian_ns = (ticks.astype(np.int64) - GREGORIAN_OFFSET_100NS) * 100
    return np.where(version == 7, ms.astype(np.int64) * NS_PER_MS, gregorian_ns)


def _no_timestamp(records: Any, index: int) -> InvalidUUID:
    """The error for the record at ``index``, known to have no time inside int64 ns."""
    record = bytes(memoryview(records)[16 * index : 16 * index + 16])
    good = record[8] >> 6 == 2 and record[6] >> 4 in (1, 6, 7)
    what = "a v1, v6 or v7 UUID" if not good else "a time between 1677 and 2262"
    return InvalidUUID(f"element {index}: expected {what}", index=index)
