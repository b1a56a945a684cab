"""Interface discovery from the kernel's own tables (no subprocess, nothing sent).

References: UIAP §3.1, §4.1; RFC 4291 §2.5.6; RFC 3927.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from uuidkit.net import (
    Family,
    device_id_from_mac,
    discover_interfaces,
    is_link_local,
    resolve_device_id,
)
from uuidkit.net import interfaces as interfaces_module

# /proc/net/if_inet6: address, index, prefix length, scope, flags, name (hex but the name).
IF_INET6 = """\
fe800000000000000000000000000001 07 40 20 80       e0
fe800000000000000000000000000002 07 40 20 c0       e0
fe800000000000000000000000000003 07 40 20 88       e0
fd000000000000000000000000000001 07 40 00 80       e0
00000000000000000000000000000001 01 80 10 80       lo
fe80000000000000000000000000000a 09 40 20 80       e1
this line is damaged
"""


def test_link_local_addresses_leave_out_tentative_failed_and_global(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "if_inet6"
    table.write_text(IF_INET6)
    monkeypatch.setattr(interfaces_module, "_IF_INET6", table)
    # 0x40 = tentative (DAD running: cannot be sent from), 0x08 = DAD failed.
    assert interfaces_module._ipv6_link_local_by_index() == {7: ["fe80::1"], 9: ["fe80::a"]}


@pytest.mark.parametrize(
    ("address", "family", "expected"),
    [
        ("fe80::1", Family.IPV6, True),
        ("febf:ffff::1", Family.IPV6, True),
        ("fec0::1", Family.IPV6, False),
        ("fe8::1", Family.IPV6, False),
        ("ff02::114", Family.IPV6, False),
        ("169.254.1.2", Family.IPV4, True),
        ("169.255.1.2", Family.IPV4, False),
        ("fe80::1", Family.IPV4, False),
        ("", Family.IPV6, False),
    ],
)
def test_is_link_local(address: str, family: Family, expected: bool) -> None:
    assert is_link_local(address, family) is expected


def test_discovery_reads_this_host() -> None:
    found = discover_interfaces()
    assert found, "every host has at least lo"
    for name, info in found.items():
        assert info.name == name and info.index > 0
        assert all(is_link_local(a, Family.IPV6) for a in info.ipv6_link_local)
    loopback = [info for info in found.values() if info.flags & 0x8]
    assert loopback and not any(info.usable(Family.IPV6) for info in loopback)


def test_eui64_device_id_of_a_real_interface() -> None:
    with_mac = [info for info in discover_interfaces().values() if info.mac is not None]
    if not with_mac:
        pytest.skip("no interface with a hardware address here")
    info = with_mac[0]
    assert info.mac is not None
    assert resolve_device_id("eui64", interface=info.name) == device_id_from_mac(info.mac)
