"""What the core makes on first use, so that ``import uuidkit`` stays small, is what it made
before at import: the same values, the same markers, the same fork guarantee.

tests/test_startup.py checks that these modules (typing, datetime, weakref, the encodings)
are not loaded by ``import uuidkit``; this file checks that nothing changed for callers.
"""

from __future__ import annotations

import gc
import os
import typing
from datetime import UTC, datetime

import uuidkit.timestamps
from uuidkit import _system
from uuidkit._record import Record
from uuidkit.encodings import SCHEMES
from uuidkit.format import FORMAT_STYLES
from uuidkit.namebased import NAME_HASHES


def test_record_carries_the_marker_typing_would_set() -> None:
    @typing.dataclass_transform(frozen_default=True)
    class Marked:
        pass

    assert Record.__dataclass_transform__ == Marked.__dataclass_transform__  # type: ignore[attr-defined]


def test_epochs_are_the_aware_datetimes_of_rfc_9562() -> None:
    # RFC 9562 §5.1: the Gregorian epoch is 00:00:00.00, 15 October 1582 (UTC).
    assert datetime(1582, 10, 15, tzinfo=UTC) == uuidkit.timestamps.GREGORIAN_EPOCH
    assert datetime(1970, 1, 1, tzinfo=UTC) == uuidkit.timestamps.UNIX_EPOCH
    assert {"GREGORIAN_EPOCH", "UNIX_EPOCH"} <= set(dir(uuidkit.timestamps))
    assert set(uuidkit.timestamps.__all__) <= set(dir(uuidkit.timestamps))


def test_name_hash_is_the_literal_of_the_supported_hashes() -> None:
    from uuidkit.namebased import NameHash

    assert typing.get_origin(NameHash) is typing.Literal
    assert typing.get_args(NameHash) == tuple(NAME_HASHES)
    assert "NameHash" in dir(uuidkit.namebased)


def test_format_styles_list_every_encoding_in_its_order() -> None:
    assert list(FORMAT_STYLES)[-len(SCHEMES) :] == list(SCHEMES)


def _counting_source() -> typing.Callable[[int], bytes]:
    """A deterministic CSPRNG stand-in: block n is n repeated, so two reads never match."""
    calls = [0]

    def source(size: int) -> bytes:
        calls[0] += 1
        return bytes([calls[0] % 256]) * size

    return source


def test_a_pool_forgets_its_buffer_in_a_forked_child() -> None:
    """Without the fork hook the child would hand out the parent's next buffered value
    (RFC 9562 §6.9: values must not repeat across processes)."""
    pool = _system.EntropyPool(_counting_source())
    pool.next_u128()  # block 1 is buffered, 255 values unread
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(read_end)
        os.write(write_end, pool.next_u128().to_bytes(16))
        os._exit(0)
    os.close(write_end)
    parent = pool.next_u128().to_bytes(16)
    with os.fdopen(read_end, "rb") as pipe:
        child = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert parent == bytes([1]) * 16  # still block 1 in the parent
    assert child == bytes([2]) * 16  # the child refilled


def test_a_dropped_pool_leaves_the_fork_registry() -> None:
    before = len(_system._pools)
    pool = _system.EntropyPool(_counting_source())
    assert len(_system._pools) == before + 1
    del pool
    gc.collect()
    assert len(_system._pools) == before
