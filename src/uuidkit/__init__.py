"""uuidkit: every UUID of RFC 9562, generators that never repeat, and UIAP node-ID allocation.

A superset of the standard library's :mod:`uuid`: every value returned is a
:class:`uuid.UUID`.

References: RFC 9562; RFC 4122 §4.2; draft-peabody-dispatch-new-uuid-format-01;
draft-white-zeroconf-uiap-00.
"""

from __future__ import annotations

# The rest of the standard library's uuid namespace, with its own meanings: ``import uuidkit
# as uuid`` works for code written against the uuid module of Python 3.11 to 3.15 (``main``,
# its command line, is uuidkit._stdlib_main's).
from uuid import (
    RESERVED_FUTURE,
    RESERVED_MICROSOFT,
    RESERVED_NCS,
    RFC_4122,
    UUID,
    SafeUUID,
    getnode,
)

from uuidkit._accel import SPEEDUPS as _SPEEDUPS
from uuidkit._stdlib_main import main
from uuidkit.encodings import decode, encode
from uuidkit.errors import (
    ClockRegressionError,
    CounterOverflowError,
    GeneratorError,
    InvalidField,
    InvalidUUID,
    NodeUnavailableError,
    StateFileError,
    UUIDKitError,
)
from uuidkit.fields import (
    MAX,
    NIL,
    MaxFields,
    NilFields,
    OpaqueFields,
    UUIDFields,
    V1Fields,
    V2Fields,
    V3Fields,
    V4Fields,
    V5Fields,
    V6Fields,
    V7Fields,
    V8Fields,
    Variant,
    fields,
    is_max,
    is_nil,
    timestamp_datetime,
    timestamp_ns,
    variant,
    version,
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
from uuidkit.generators._functions import uuid1, uuid6, uuid7
from uuidkit.layouts import (
    build_v1,
    build_v2,
    build_v3,
    build_v4,
    build_v5,
    build_v6,
    build_v7,
    build_v8,
    v1_to_v6,
    v6_to_v1,
)
from uuidkit.namebased import (
    NAMESPACE_DNS,
    NAMESPACE_OID,
    NAMESPACE_URL,
    NAMESPACE_X500,
    build_v8_name,
    uuid3,
    uuid5,
)
from uuidkit.parse import from_bytes, from_bytes_le, from_fields, from_int, parse
from uuidkit.random_based import uuid4, uuid8
from uuidkit.timeranges import (
    uuid6_max,
    uuid6_min,
    uuid6_range,
    uuid7_for,
    uuid7_max,
    uuid7_min,
    uuid7_range,
)

# Every public name is a plain attribute, bound here: this package has no ``__getattr__``
# (PEP 562), which would stop CPython 3.11-3.13 from specialising ``uuidkit.parse(s)``'s
# attribute load. What stays cheap to import does so by other means: ``uuid1``, ``uuid6``
# and ``uuid7`` create their generators on first call (``generators._functions``), and the
# arrays and the legacy layouts are registered now and run on first use (``_deferred``).
TYPE_CHECKING = False  # typing.TYPE_CHECKING: ``import uuidkit`` does not load typing (3 ms)
#: Submodules that are attributes from ``import uuidkit`` on, their code run on first use.
_DEFERRED_SUBMODULES = ("bulk", "legacy")
if TYPE_CHECKING:
    from uuidkit import bulk as bulk
    from uuidkit import legacy as legacy
else:
    from sys import modules as _modules

    from uuidkit._deferred import defer_submodule as _defer_submodule

    for _name in _DEFERRED_SUBMODULES:
        _defer_submodule(_modules[__name__], _name)
    del _modules, _defer_submodule, _name
del TYPE_CHECKING  # not a public name

__version__ = "0.1.0"

#: Whether the compiled accelerator (``uuidkit._speedups``) is in use in this process: False on
#: the pure-Python path (no C compiler at install time, or ``UUIDKIT_PURE=1``). Both paths give
#: the same values, errors and guarantees; only the speed differs. ``uuidkit --version`` says it.
#: References: RFC 9562 §4.
ACCELERATED: bool = _SPEEDUPS is not None

__all__ = [
    "ACCELERATED",
    "MAX",
    "NAMESPACE_DNS",
    "NAMESPACE_OID",
    "NAMESPACE_URL",
    "NAMESPACE_X500",
    "NIL",
    "RESERVED_FUTURE",
    "RESERVED_MICROSOFT",
    "RESERVED_NCS",
    "RFC_4122",
    "UUID",
    "ClockRegressionError",
    "CounterOverflowError",
    "GeneratorError",
    "InvalidField",
    "InvalidUUID",
    "MaxFields",
    "NilFields",
    "NodeUnavailableError",
    "OpaqueFields",
    "SafeUUID",
    "StateFileError",
    "UUIDFields",
    "UUIDKitError",
    "V1Fields",
    "V2Fields",
    "V3Fields",
    "V4Fields",
    "V5Fields",
    "V6Fields",
    "V7Fields",
    "V8Fields",
    "Variant",
    "build_v1",
    "build_v2",
    "build_v3",
    "build_v4",
    "build_v5",
    "build_v6",
    "build_v7",
    "build_v8",
    "build_v8_name",
    "decode",
    "encode",
    "fields",
    "format_uuid",
    "from_bytes",
    "from_bytes_le",
    "from_fields",
    "from_int",
    "getnode",
    "is_max",
    "is_nil",
    "main",
    "parse",
    "timestamp_datetime",
    "timestamp_ns",
    "to_braced",
    "to_bytes",
    "to_bytes_le",
    "to_hex",
    "to_hyphenated",
    "to_int",
    "to_upper",
    "to_urn",
    "uuid1",
    "uuid3",
    "uuid4",
    "uuid5",
    "uuid6",
    "uuid6_max",
    "uuid6_min",
    "uuid6_range",
    "uuid7",
    "uuid7_for",
    "uuid7_max",
    "uuid7_min",
    "uuid7_range",
    "uuid8",
    "v1_to_v6",
    "v6_to_v1",
    "variant",
    "version",
]
