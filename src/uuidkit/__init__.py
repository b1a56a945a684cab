"""uuidkit: every UUID of RFC 9562, generators that never repeat, and UIAP node-ID allocation.

A superset of the standard library's :mod:`uuid`: every value returned is a
:class:`uuid.UUID`.

References: RFC 9562; RFC 4122 §4.2; draft-peabody-dispatch-new-uuid-format-01;
draft-white-zeroconf-uiap-00.
"""

from __future__ import annotations

from uuid import UUID

from uuidkit.errors import (
    ClockRegressionError,
    CounterOverflowError,
    GeneratorError,
    InvalidField,
    InvalidUUID,
    StateFileError,
    UUIDKitError,
)
from uuidkit.format import (
    format_uuid,
    to_braced,
    to_bytes,
    to_bytes_le,
    to_hex,
    to_hyphenated,
    to_int,
    to_upper,
    to_urn,
)
from uuidkit.parse import from_bytes, from_bytes_le, from_fields, from_int, parse

__version__ = "0.1.0"

__all__ = [
    "UUID",
    "ClockRegressionError",
    "CounterOverflowError",
    "GeneratorError",
    "InvalidField",
    "InvalidUUID",
    "StateFileError",
    "UUIDKitError",
    "format_uuid",
    "from_bytes",
    "from_bytes_le",
    "from_fields",
    "from_int",
    "parse",
    "to_braced",
    "to_bytes",
    "to_bytes_le",
    "to_hex",
    "to_hyphenated",
    "to_int",
    "to_upper",
    "to_urn",
]
