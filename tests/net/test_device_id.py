"""Device IDs (UIAP §4.1): random by default, EUI-64 on request, stable in a state directory.

§4.1: the Originating Device ID "SHOULD be constructed in the same way as the Host ID
portion of an IPv6 address", i.e. a modified EUI-64 (RFC 4291 Appendix A): bit 0x02 of the
first octet is u (1 = universal, 0 = local), bit 0x01 is g (1 = group). The vectors below are
derived from that text by hand, not from the code.

References: UIAP §4.1 ("ID 0 ... MUST NOT appear in a message"), §9; RFC 4291 Appendix A;
RFC 2464 §4.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uuidkit._safefile import FileSystem
from uuidkit.errors import TransportError
from uuidkit.net import (
    InterfaceInfo,
    device_id_from_mac,
    load_or_store_device_id,
    random_device_id,
    resolve_device_id,
)
from uuidkit.net.device_id import make_device_id


@pytest.mark.parametrize(
    ("mac", "host_id"),
    [
        # RFC 2464 §4's own example: 34-56-78-9A-BC-DE -> 36-56-78-FF-FE-9A-BC-DE.
        ("34-56-78-9a-bc-de", 0x3656_78FF_FE9A_BCDE),
        # A universally administered MAC (IEEE U/L 0; RFC 7042's documentation block):
        # ff:fe inserted, the bit inverted to u = 1 (universal), g stays 0.
        ("00-00-5e-00-53-01", 0x0200_5EFF_FE00_5301),
        # A locally administered MAC (IEEE U/L 1, e.g. a VM's): u = 0 (local).
        ("02-00-00-00-00-01", 0x0000_00FF_FE00_0001),
        ("fe-ff-ff-ff-ff-fe", 0xFCFF_FFFF_FEFF_FFFE),
    ],
)
def test_modified_eui64_of_a_mac(mac: str, host_id: int) -> None:
    value = device_id_from_mac(bytes.fromhex(mac.replace("-", "")))
    assert value == host_id
    assert value >> 24 & 0xFFFF == 0xFFFE  # octets 4 and 5 of a MAC-derived EUI-64
    assert value >> 56 & 0x01 == 0  # g: individual


@pytest.mark.parametrize(
    ("mac", "reason"),
    [
        (b"", "not a 48-bit"),
        (bytes(6), "not a 48-bit"),
        (bytes(8), "not a 48-bit"),
        # g = 1: a group address (here IPv4 multicast's 01-00-5E) names no single device.
        (bytes.fromhex("01005e000001"), "group"),
        (b"\xff" * 6, "group"),
    ],
)
def test_a_mac_that_is_not_an_interfaces_is_refused(mac: bytes, reason: str) -> None:
    with pytest.raises(TransportError, match=reason):
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


@given(st.binary(min_size=8, max_size=8))
def test_a_random_id_is_the_draw_with_u_and_g_cleared(draw: bytes) -> None:
    # §4.1 + RFC 4291 Appendix A: a locally assigned (u = 0) individual (g = 0) Host ID,
    # and never 0 (then the next draw is taken).
    expected = int.from_bytes(draw) & ~(0x03 << 56)
    draws = iter([draw, bytes.fromhex("0300000000000007")])
    value = random_device_id(lambda n: next(draws))
    assert value == (expected or 7)


def test_the_one_draw_that_clears_to_zero_is_drawn_again() -> None:
    draws = iter([bytes.fromhex("0300000000000000"), bytes.fromhex("0100000000000001")])
    assert random_device_id(lambda n: next(draws)) == 1


def _interfaces() -> dict[str, InterfaceInfo]:
    def info(name: str, index: int, mac: str | None) -> InterfaceInfo:
        hardware = None if mac is None else bytes.fromhex(mac)
        return InterfaceInfo(name, index, 0, (), (), hardware)

    return {
        "lo": info("lo", 1, None),
        "eth1": info("eth1", 3, "000000000002"),
        "eth0": info("eth0", 2, "00005e005301"),
    }


def test_eui64_mode_uses_the_named_interface_or_the_first_with_a_mac() -> None:
    assert make_device_id("eui64", "eth1", interfaces=_interfaces) == 0x0200_00FF_FE00_0002
    # Unnamed: the lowest index that has a MAC (eth0, index 2; lo has none).
    assert make_device_id("eui64", interfaces=_interfaces) == 0x0200_5EFF_FE00_5301
    with pytest.raises(TransportError, match="'lo' has no EUI-48 address"):
        make_device_id("eui64", "lo", interfaces=_interfaces)
    with pytest.raises(TransportError, match="no interface with a hardware address"):
        make_device_id("eui64", interfaces=dict)


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
