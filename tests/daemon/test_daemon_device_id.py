"""The daemon's device ID: made by the one maker (``uuidkit.net.device_id``) as UIAP §4.1
says, in the mode its configuration names, and kept in the state directory after that.

References: UIAP §4.1, §9; RFC 4291 Appendix A.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from daemon_site import running

from uuidkit.daemon.config import ConfigError, DaemonConfig, load_config
from uuidkit.daemon.main import new_device_id
from uuidkit.daemon.state import read_state
from uuidkit.net import InterfaceInfo
from uuidkit.net import device_id as device_id_module

#: RFC 7042's documentation MAC; its modified EUI-64 (RFC 4291 Appendix A: ff:fe in the
#: middle, U/L bit inverted) is 02-00-5e-ff-fe-00-53-01.
DOC_MAC = bytes.fromhex("00005e005301")
DOC_HOST_ID = 0x0200_5EFF_FE00_5301


def _fake_interfaces() -> dict[str, InterfaceInfo]:
    return {
        "lo": InterfaceInfo("lo", 1, 0, (), (), None),
        "doc0": InterfaceInfo("doc0", 2, 0, (), (), DOC_MAC),
    }


def _stored_id(host_directory: Path) -> int:
    state = read_state(str(host_directory / "state"))
    return int(state["device_id"], 16)


def _start_and_stop(tmp_path: Path, **settings: object) -> int:
    async def main() -> None:
        async with running(tmp_path, ["a"], **settings):
            pass

    asyncio.run(main())
    return _stored_id(tmp_path / "a")


def test_a_first_start_makes_a_local_individual_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every random bit 1, the ID must still have u = 0 and g = 0 (UIAP §4.1 "the
    Host ID portion of an IPv6 address", RFC 4291 Appendix A): a maker that does not clear
    them (the daemon's old one) fails here."""
    monkeypatch.setattr(os, "urandom", lambda n: b"\xff" * n)
    assert _start_and_stop(tmp_path) == 0xFCFF_FFFF_FFFF_FFFF


def test_eui64_mode_uses_the_interfaces_mac(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(device_id_module, "discover_interfaces", _fake_interfaces)
    assert _start_and_stop(tmp_path, device_id_mode="eui64") == DOC_HOST_ID


def test_the_stored_id_is_kept_whatever_the_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§9: a device's Message IDs must stay its own across restarts: the ID made at the first
    start is reused, even if the configured mode changes later."""
    first = _start_and_stop(tmp_path)
    monkeypatch.setattr(device_id_module, "discover_interfaces", _fake_interfaces)
    assert _start_and_stop(tmp_path, device_id_mode="eui64") == first


def test_an_interface_without_a_mac_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(device_id_module, "discover_interfaces", _fake_interfaces)
    config = DaemonConfig(device_id_mode="eui64", device_id_interface="lo")
    with pytest.raises(ConfigError, match=r"config key 'device_id_interface': .*'lo' has no"):
        new_device_id(config)
    assert new_device_id(DaemonConfig(device_id_mode="eui64")) == DOC_HOST_ID


def test_the_mode_and_interface_come_from_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "uiapd.toml"
    path.write_text('device_id_mode = "eui64"\ndevice_id_interface = "eth0"\n')
    config = load_config(str(path), {})
    assert (config.device_id_mode, config.device_id_interface) == ("eui64", "eth0")
    with pytest.raises(ConfigError, match="config key 'device_id_mode': expected random or eui64"):
        DaemonConfig(device_id_mode="mac")
    with pytest.raises(ConfigError, match="config key 'device_id_interface'"):
        DaemonConfig(device_id_interface="a/b")
