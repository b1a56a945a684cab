"""The 16-byte records of a UUID column from Arrow or from a dataframe engine, without text.

:mod:`uuidkit.bulk` reads its input through here when it is an Arrow array or table column,
or a column of an engine that exports Arrow through the Arrow PyCapsule interface
(``__arrow_c_stream__`` / ``__arrow_c_array__``: a Polars ``Series``, a pandas ``Series``
backed by Arrow, ...). A UUID is 16 bytes in network byte order (RFC 9562 §4) whatever the
column's Arrow type:

- ``arrow.uuid`` (the extension type) and its storage ``fixed_size_binary(16)``: read in place;
- ``binary``, ``large_binary``, ``binary_view`` (how Polars keeps and exports a UUID column):
  every value must be 16 bytes long; the first that is not is named by its index;

a null is named by its index too. Any other type (text, numbers) is refused: text goes to
:func:`uuidkit.bulk.parse`.

pyarrow is handed in by :mod:`uuidkit.bulk`, which imports it only when an array is asked for.

References: RFC 9562 §4.
"""

from __future__ import annotations

from typing import Any

from uuidkit.errors import InvalidUUID

__all__ = ["exports_arrow", "records_of_arrow"]

_UUID_BYTES = 16
_EXPECTED = "expected an arrow.uuid, fixed_size_binary(16) or 16-byte binary array"


def exports_arrow(values: object) -> bool:
    """Whether ``values`` hands out Arrow data through the Arrow PyCapsule interface.

    References: RFC 9562 §4.
    """
    kind = type(values)
    return hasattr(kind, "__arrow_c_stream__") or hasattr(kind, "__arrow_c_array__")


def records_of_arrow(pa: Any, values: Any) -> memoryview:
    """The packed records of an Arrow array or column, or of any Arrow exporter's column.

    References: RFC 9562 §4.
    """
    if not isinstance(values, pa.Array | pa.ChunkedArray):
        try:
            stream = hasattr(type(values), "__arrow_c_stream__")
            values = pa.chunked_array(values) if stream else pa.array(values)
        except (pa.ArrowException, TypeError) as error:  # a table, a struct, mixed objects
            raise InvalidUUID(f"{_EXPECTED}: {error}") from None
    if isinstance(values, pa.ChunkedArray):  # a table's column: one copy into one array
        values = values.combine_chunks()
    storage = getattr(values, "storage", values)
    kind = storage.type
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind):
        storage = _fixed_width(pa, storage)
    elif not pa.types.is_fixed_size_binary(kind) or kind.byte_width != _UUID_BYTES:
        text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
        hint = " (text: uuidkit.bulk.parse reads it)" if text or "string" in str(kind) else ""
        raise InvalidUUID(f"{_EXPECTED}, found {kind}{hint}")
    if storage.null_count:
        index = _first(storage.is_null())
        raise InvalidUUID(f"element {index}: null where a UUID is expected", index=index)
    buffer = storage.buffers()[1]
    start = storage.offset * _UUID_BYTES
    return memoryview(buffer)[start : start + _UUID_BYTES * len(storage)]


def _fixed_width(pa: Any, storage: Any) -> Any:
    """A variable-width binary array of 16-byte values as ``fixed_size_binary(16)``."""
    import pyarrow.compute as pc

    # binary_length has no binary_view kernel: large_binary reads every binary type.
    wide = storage.cast(pa.large_binary())
    wrong = pc.not_equal(pc.binary_length(wide), _UUID_BYTES)  # null where the value is
    if pc.any(wrong).as_py():
        index = _first(wrong)
        length = len(wide[index].as_py())
        raise InvalidUUID(f"element {index}: expected 16 bytes, found {length}", index=index)
    return wide.cast(pa.binary(_UUID_BYTES))


def _first(flags: Any) -> int:
    """The index of the first true value of a boolean array."""
    import pyarrow.compute as pc

    index: int = pc.index(flags, True).as_py()
    return index
