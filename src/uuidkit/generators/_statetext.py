"""The text of a generator state file: versioned JSON with a CRC-32 checksum.

::

    {"checksum": "1c291ca3", "format": "uuidkit-generator-state", "kind": "v7",
     "next_range": 1048576, "node": null, "version": 1, "window_end": 1767225600999,
     "window_start": 1767225600000, "written_ns": 1767225600000123456}

``checksum`` is the CRC-32 (hex) of the other fields as canonical JSON (sorted keys, no
spaces). :mod:`uuidkit.generators.statefile` reads and writes it safely.

References: RFC 9562 §6.3.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import asdict, dataclass
from typing import Final

from uuidkit.errors import StateFileError

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "KINDS", "StoredState"]

FORMAT_NAME: Final = "uuidkit-generator-state"
FORMAT_VERSION: Final = 1
#: Generator kinds a state file can hold; their window unit and range meaning differ.
KINDS: Final = ("v1", "v6", "v7")
_INT_FIELDS: Final = ("window_start", "window_end", "next_range", "written_ns")


@dataclass(frozen=True, slots=True)
class StoredState:
    """One reservation as stored on disk.

    References: RFC 9562 §6.3 ("last known timestamp, clock sequence, counters").
    """

    #: "v1", "v6" or "v7".
    kind: str
    #: First time unit of the reservation window (v7: Unix ms; v1/v6: 100 ns Gregorian ticks).
    window_start: int
    #: Last time unit of the window (inclusive); "set ahead of any timestamp yet used".
    window_end: int
    #: First range not yet handed out in the window (v7: counter value; v1/v6: clock_seq).
    next_range: int
    #: The 48-bit node of v1/v6 generators (``None`` for v7).
    node: int | None
    #: When this state was written, in Unix-epoch nanoseconds.
    written_ns: int

    def to_text(self) -> str:
        """The file's text: the fields plus format, version and checksum.

        References: RFC 9562 §6.3.
        """
        body = {"format": FORMAT_NAME, "version": FORMAT_VERSION, **asdict(self)}
        body["checksum"] = _checksum(body)
        return json.dumps(body, sort_keys=True) + "\n"

    @classmethod
    def from_text(cls, text: str) -> StoredState:
        """Parse and check a state file's text; raises :class:`~uuidkit.StateFileError`.

        References: RFC 9562 §6.3.
        """
        try:
            body = json.loads(text)
        except RecursionError:
            # Deeply nested arrays fit in 4096 bytes and exhaust the parser's recursion.
            raise StateFileError("not JSON: nested too deeply") from None
        except ValueError as error:
            raise StateFileError(f"not JSON: {error}") from None
        if not isinstance(body, dict):
            raise StateFileError("expected a JSON object at offset 0")
        checksum = body.pop("checksum", None)
        if checksum != _checksum(body):
            raise StateFileError(f"checksum: expected {_checksum(body)}, found {checksum!r}")
        if body.pop("format", None) != FORMAT_NAME or body.pop("version", None) != FORMAT_VERSION:
            raise StateFileError(f"format: expected {FORMAT_NAME!r} version {FORMAT_VERSION}")
        return cls._from_fields(body)

    @classmethod
    def _from_fields(cls, body: dict[str, object]) -> StoredState:
        expected = {"kind", "node", *_INT_FIELDS}
        if set(body) != expected:
            raise StateFileError(f"fields: expected {sorted(expected)}, found {sorted(body)}")
        kind, node = body["kind"], body["node"]
        if kind not in KINDS:
            raise StateFileError(f"kind: expected one of {KINDS}, found {kind!r}")
        numbers = {name: body[name] for name in _INT_FIELDS}
        for name, value in numbers.items():
            if type(value) is not int or not 0 <= value < 1 << 64:
                raise StateFileError(f"{name}: expected an int in [0, 2**64), found {value!r}")
        if node is not None and (type(node) is not int or not 0 <= node < 1 << 48):
            raise StateFileError(f"node: expected null or a 48-bit int, found {node!r}")
        state = cls(str(kind), node=node, **numbers)  # type: ignore[arg-type]
        if state.window_start > state.window_end:
            raise StateFileError("window_start: after window_end")
        return state


def _checksum(body: dict[str, object]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return f"{zlib.crc32(canonical):08x}"
