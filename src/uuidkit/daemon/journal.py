"""The state directory's journal: the claim changes made since the last snapshot.

``state.journal`` is a sequence of records, each framed as

    length (4 octets) | CRC-32 of the payload (4 octets) | payload (length octets)

(big-endian; the CRC is :func:`zlib.crc32`), the payload a JSON object in UTF-8. The first
record is the header ``{"journal": 1, "generation": G}``: the journal extends the snapshot
(``state.json``) of generation G and no other. Every further record is one change,
``{"put": claim}`` (the claim's saved form, which carries its ``id``) or ``{"drop": id}``.

Records are only ever appended, so a crash can tear only the last one. A reader applies
the records up to the first one that is not whole and well-formed (short, a length beyond
:data:`MAX_RECORD_OCTETS`, a CRC that does not match, not a change) and reports how many
octets it left out (:attr:`JournalContents.discarded_octets`); the writer never appends
after such a tail (the state directory starts a new journal instead).

References: UIAP §4.4 (claims reclaimed after a restart need stored state).
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "JOURNAL_FORMAT",
    "MAX_RECORD_OCTETS",
    "Change",
    "JournalContents",
    "encode_changes",
    "encode_header",
    "parse_journal",
]

#: The header's ``journal`` value: the format of this module.
JOURNAL_FORMAT: Final = 1
#: Longest payload read: a claim's saved form is below 2 KB (a range of two 255-octet UIDs,
#: UIAP §3.2.3, in hex); a longer length is a torn or corrupt frame, never an allocation.
MAX_RECORD_OCTETS: Final = 64 * 1024
_FRAME: Final = struct.Struct(">II")

#: One change: a claim ID and its saved form, or None when the claim is gone.
Change = tuple[str, Mapping[str, Any] | None]


def _frame(payload: Mapping[str, Any]) -> bytes:
    data = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return _FRAME.pack(len(data), zlib.crc32(data)) + data


def encode_header(generation: int) -> bytes:
    """The first record of the journal that extends the snapshot of ``generation``.

    References: UIAP §4.4.
    """
    return _frame({"journal": JOURNAL_FORMAT, "generation": generation})


def encode_changes(changes: Iterable[Change]) -> bytes:
    """The records of ``changes``, in order, ready to be appended in one write.

    References: UIAP §4.4.
    """
    return b"".join(
        _frame({"drop": claim_id} if saved is None else {"put": saved})
        for claim_id, saved in changes
    )


@dataclass
class JournalContents:
    """What a journal holds: its header's generation and the changes after it.

    References: UIAP §4.4.
    """

    #: The snapshot generation the journal extends; None if it has no whole header.
    generation: int | None
    changes: list[Change] = field(default_factory=list)
    #: Octets after the last whole, well-formed record (a torn tail): left out.
    discarded_octets: int = 0


def _records(data: bytes) -> Iterable[tuple[int, Any]]:
    """``(end offset, decoded payload)`` of each whole record; stops at the first that
    is not (a payload that is not JSON is yielded as None)."""
    offset = 0
    while offset + _FRAME.size <= len(data):
        length, crc = _FRAME.unpack_from(data, offset)
        start = offset + _FRAME.size
        end = start + length
        if length > MAX_RECORD_OCTETS or end > len(data):
            return
        payload = data[start:end]
        if zlib.crc32(payload) != crc:
            return
        try:
            yield end, json.loads(payload)
        except ValueError:
            yield end, None
        offset = end


def _header_generation(payload: Any) -> int | None:
    if not isinstance(payload, dict) or payload.get("journal") != JOURNAL_FORMAT:
        return None
    generation = payload.get("generation")
    if type(generation) is not int or generation < 0:
        return None
    return generation


def _change(payload: Any) -> Change | None:
    if not isinstance(payload, dict) or len(payload) != 1:
        return None
    if isinstance(payload.get("drop"), str):
        return payload["drop"], None
    saved = payload.get("put")
    if isinstance(saved, dict) and isinstance(saved.get("id"), str):
        return saved["id"], saved
    return None


def parse_journal(data: bytes) -> JournalContents:
    """The header and the changes of a journal's bytes, up to its first record that is not
    whole and well-formed.

    References: UIAP §4.4.
    """
    records = iter(_records(data))
    first = next(records, None)
    generation = None if first is None else _header_generation(first[1])
    if first is None or generation is None:
        return JournalContents(None, discarded_octets=len(data))
    contents = JournalContents(generation)
    used = first[0]
    for end, payload in records:
        change = _change(payload)
        if change is None:
            break
        contents.changes.append(change)
        used = end
    contents.discarded_octets = len(data) - used
    return contents
