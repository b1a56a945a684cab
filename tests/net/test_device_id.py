"""Device IDs (UIAP §4.1): random by default, EUI-64 on request, stable in a state directory.

References: UIAP §4.1 ("ID 0 ... MUST NOT appear in a message"), §9; RFC 4291 Appendix A.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from uuidkit._safefile import FileSystem
from uuidkit.errors import TransportError
from uuidkit.net import (
    device_id_from_mac,
    load_or_store_device_id,
    random_device_id,
    resolve_device_id,
)


def test_modified_eui64_of_a_mac() -> None:
    # RFC 4291 Appendix A: 34-56-78-9A-BC-DE gives 36-56-78-FF-FE-9A-BC-DE (u bit inverted).
    assert device_id_from_mac(bytes.fromhex("3456789abcde")) == 0x365678FFFE9ABCDE


@pytest.mark.parametrize("mac", [b"", bytes(6), bytes(8)])
def test_a_mac_that_is_not_one_is_refused(mac: bytes) -> None:
    with pytest.raises(TransportError):
        device_id_from_mac(mac)


def test_random_ids_are_local_individual_and_never_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    values = iter([bytes(8), b"\xff" * 8])  # the first draw is 0 and must be drawn again
    monkeypatch.setattr(os, "urandom", lambda n: next(values))
    value = random_device_id()
    assert value == 0xFC_FFFF_FFFF_FFFF_FF
    # u bit 0: locally assigned; g bit 0: individual (RFC 4291 Appendix A).
    assert value >> 56 & 0x03 == 0


def test_random_ids_differ() -> None:
    assert len({random_device_id() for _ in range(100)}) == 100


def test_a_state_directory_keeps_the_id_across_restarts(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = resolve_device_id(state_directory=state)
    assert resolve_device_id(state_directory=state) == first
    path = state / "device-id"
    assert path.read_text() == f"{first:016x}\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    # Only the file itself is left: the temporary file was ours and is gone.
    assert sorted(p.name for p in state.iterdir()) == ["device-id"]


def test_an_existing_file_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "device-id").write_text("00000000000000aa\n")
    assert load_or_store_device_id(tmp_path, lambda: 0xBB) == 0xAA


def test_a_file_that_appears_meanwhile_wins(tmp_path: Path) -> None:
    # Another starter stores its ID between our read and our link: we use theirs.
    def make() -> int:
        (tmp_path / "device-id").write_text("00000000000000cc\n")
        return 0xDD

    assert load_or_store_device_id(tmp_path, make) == 0xCC
    assert (tmp_path / "device-id").read_text() == "00000000000000cc\n"


@pytest.mark.parametrize("content", ["", "zz\n", "0" * 16 + "\n", "12345", "A" * 16])
def test_a_damaged_file_is_an_error_and_kept(tmp_path: Path, content: str) -> None:
    path = tmp_path / "device-id"
    path.write_text(content)
    with pytest.raises(TransportError, match="does not hold a device ID") as caught:
        load_or_store_device_id(tmp_path, lambda: 1)
    assert caught.value.field == "state_directory"
    assert path.read_text() == content


def test_a_planted_symlink_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("00000000000000ee\n")
    (tmp_path / "device-id").symlink_to(target)
    with pytest.raises(TransportError, match="cannot read"):
        load_or_store_device_id(tmp_path, lambda: 1)


def test_the_file_is_fsynced_before_it_is_linked_into_place(tmp_path: Path) -> None:
    calls: list[str] = []

    class Recording(FileSystem):
        def fsync(self, descriptor: int) -> None:
            is_dir = stat.S_ISDIR(os.fstat(descriptor).st_mode)
            calls.append("fsync-dir" if is_dir else "fsync-file")
            super().fsync(descriptor)

        def link(self, source: str, target: str) -> None:
            calls.append("link")
            super().link(source, target)

    load_or_store_device_id(tmp_path, lambda: 0x42, filesystem=Recording())
    assert calls == ["fsync-file", "link", "fsync-dir"]


def test_an_unknown_mode_or_interface_is_refused() -> None:
    with pytest.raises(TransportError, match="mode"):
        resolve_device_id("mac")  # type: ignore[arg-type]
    with pytest.raises(TransportError, match="no interface named 'nosuch0'"):
        resolve_device_id("eui64", interface="nosuch0")
