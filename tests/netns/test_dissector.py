"""contrib/wireshark/uiap.lua on captures of real daemons: tcpdump records a site's datagrams
while its daemons claim (every format, a denial, a reclaim, a right-justified domain, proxy
defense, with and without a site key), tshark dissects the capture with the plug-in, and every
field it shows must be what ``uuidkit.uiap.decode`` reads from the same datagram (and, for a
sealed datagram, what the trailer layout of ``uuidkit.uiap.auth`` says).

Skipped where tshark or tcpdump is missing (CI installs both).

References: UIAP §3.2.2 (formats), §4.1 (the common format), §4.3 (Claim-Deny), §4.4 (R),
§5.1 (X), §6.1 (Domain ID text); RFC 8967 §4 (Index, PC, Key ID, MAC).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_process import DaemonProcess
from netns_topology import ROOT, WAIT_S, Network

from uuidkit.uiap import decode
from uuidkit.uiap.auth import TRAILER_OCTETS
from uuidkit.uiap.message import Message
from uuidkit.uiap.space import Fmt

PLUGIN = ROOT / "contrib" / "wireshark" / "uiap.lua"
DOMAIN = "0fff:0000:00d7:0000"
#: The J flag is bit 248 of the message, the top bit of the Domain ID's last octet (§4.1).
RIGHT_JUSTIFIED = "0fff:0000:00d7:0080"
#: The dissector's fields, in the order tshark prints them.
FIELDS = (
    "udp.payload", "uiap.version", "uiap.type", "uiap.x", "uiap.r", "uiap.hop_limit",
    "uiap.lifetime", "uiap.device_id", "uiap.sequence", "uiap.claim_ref", "uiap.domain_id",
    "uiap.j", "uiap.fmt", "uiap.ba", "uiap.ba2", "uiap.uid_len", "uiap.uid_len2", "uiap.uid",
    "uiap.uid2", "uiap.space", "uiap.auth.index", "uiap.auth.pc", "uiap.auth.key_id",
    "uiap.auth.mac",
)  # fmt: skip

pytestmark = pytest.mark.skipif(
    shutil.which("tshark") is None or shutil.which("tcpdump") is None,
    reason="tshark and tcpdump are needed (CI installs them)",
)


#: The last datagram of a capture, to a port UIAP does not use: once it is in the file, so is
#: everything the daemons sent before it (tcpdump writes each packet as it reads it, in order).
SENTINEL_PORT = 9


@contextlib.contextmanager
def capture(network: Network, host: str, path: Path) -> Iterator[None]:
    """tcpdump on ``host``'s e0 (UIAP's ports and the sentinel's), ready once it says it
    listens; at the end, a sentinel datagram is sent and awaited in the file before tcpdump
    stops, so no datagram the daemons sent is still in a kernel buffer."""
    command = [
        "ip", "netns", "exec", network.ns(host), "tcpdump", "-i", "e0", "-U", "-n",
        "--immediate-mode", "-w", str(path),
        f"udp port 1021 or udp port 1022 or udp port {SENTINEL_PORT}",
    ]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        line = process.stderr.readline()  # "tcpdump: listening on e0, ..." once it captures
        assert "listening on" in line, line
        yield
        token = os.urandom(16).hex()
        send = (
            "import socket; s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); "
            f"s.sendto(b'{token}', ('ff02::1%e0', {SENTINEL_PORT}))"
        )
        network.exec(host, sys.executable, "-c", send)
        for _ in range(int(WAIT_S / 0.05)):
            if token.encode() in path.read_bytes():
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the sentinel datagram never reached the capture")
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=WAIT_S)
        process.stderr.close()


def dissected(path: Path) -> list[dict[str, str]]:
    command = [
        "tshark",
        "-r",
        str(path),
        "-X",
        f"lua_script:{PLUGIN}",
        "-Y",
        "uiap",
        "-T",
        "fields",
    ]
    for name in FIELDS:
        command += ["-e", name]
    done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT_S, check=True)
    return [dict(zip(FIELDS, line.split("\t"), strict=True)) for line in done.stdout.splitlines()]


def _space_text(message: Message) -> str:
    first = message.space.first.data.hex()
    if message.space.fmt is Fmt.RANGE:
        assert message.space.second is not None
        return f"range {first}..{message.space.second.data.hex()}"
    return f"{'uid' if message.space.fmt is Fmt.UNIQUE else 'prefix'} {first}"


def expected_fields(payload: bytes, sealed: bool) -> dict[str, str]:
    """What the dissector must show for ``payload``, from uuidkit's own decoder."""
    message_octets = payload[:-TRAILER_OCTETS] if sealed else payload
    message = decode(message_octets)
    space = message.space
    second = space.second
    fields = {
        "uiap.version": str(message.version),
        "uiap.type": str(int(message.type)),
        "uiap.x": str(int(message.proxy)),
        "uiap.r": str(int(message.reclaim)),
        "uiap.hop_limit": str(message.hop_limit),
        "uiap.lifetime": str(message.lifetime),
        "uiap.device_id": f"0x{message.device_id:016x}",
        "uiap.sequence": str(message.sequence),
        "uiap.claim_ref": str(message.claim_reference),
        "uiap.domain_id": str(message.domain),  # the §6.1 text form
        "uiap.j": str(int(message.domain.right_justified)),
        "uiap.fmt": str(int(space.fmt)),
        "uiap.ba": str(message.ba),
        "uiap.ba2": str(message.ba2),
        "uiap.uid_len": str(message.uid_len),
        "uiap.uid_len2": str(payload[35]),  # as sent: shown even where it is ignored
        "uiap.uid": space.first.data.hex(),
        "uiap.uid2": second.data.hex() if second is not None else "",
        "uiap.space": _space_text(message),
    }
    trailer = payload[-TRAILER_OCTETS:] if sealed else b""
    if sealed:
        index, pc, key_id = struct.unpack_from("!8sIH", trailer)
        fields |= {
            "uiap.auth.index": f"0x{index.hex()}",
            "uiap.auth.pc": str(pc),
            "uiap.auth.key_id": str(key_id),
            "uiap.auth.mac": trailer[14:46].hex(),
        }
    else:
        fields |= dict.fromkeys(("uiap.auth.index", "uiap.auth.pc", "uiap.auth.key_id"), "")
        fields["uiap.auth.mac"] = ""
    return fields


def _claims(hosts: dict[str, DaemonProcess]) -> None:
    a, b = hosts["a"], hosts["b"]
    for host, args, status in (
        (a, ("--uid", "2a"), 0),
        (b, ("--uid", "2a"), 1),  # denied: a Claim-Deny to the reply port (§4.3)
        (a, ("--prefix", "0a"), 0),
        (b, ("--range", "10", "20"), 0),
        (a, ("--uid", "2b", "--reclaim"), 0),  # R (§4.4)
    ):
        done = host.cli("claim", "--domain", DOMAIN, *args)
        assert done.returncode == status, done.stdout + done.stderr
    assert a.cli("claim", "--domain", RIGHT_JUSTIFIED, "--uid", "2c").returncode == 0


def _run_site(network: Network, tmp_path: Path, *extra: str) -> list[dict[str, str]]:
    for host in ("a", "b"):
        network.add_host(host)
    network.segment(["a", "b"])
    config = tmp_path / "proxy.toml"
    config.write_text("proxy = true\n")  # b asks for proxy defense: X (§5.1)
    hosts = {
        "a": DaemonProcess(network, "a", tmp_path, *extra),
        "b": DaemonProcess(network, "b", tmp_path, "--config", str(config), *extra),
    }
    pcap = tmp_path / "site.pcap"
    try:
        with capture(network, "a", pcap):
            for process in hosts.values():
                process.start()
            _claims(hosts)
    finally:
        for process in hosts.values():
            process.close()
    return dissected(pcap)


def _check(rows: list[dict[str, str]], sealed: bool) -> None:
    assert rows, "nothing captured"
    for number, row in enumerate(rows, 1):
        payload = bytes.fromhex(row["udp.payload"])
        shown = {name: value.replace(":", "") for name, value in row.items()}
        shown["uiap.domain_id"] = row["uiap.domain_id"]
        expected = expected_fields(payload, sealed)
        assert {k: shown[k] for k in expected} == expected, f"frame {number}"
    seen = {(r["uiap.type"], r["uiap.fmt"], r["uiap.r"], r["uiap.j"]) for r in rows}
    assert {t for t, *_ in seen} == {"0", "1"}  # Claim-Attempts and a Claim-Deny
    assert {f for _, f, *_ in seen} == {"0", "1", "2"}  # unique, prefix, range
    assert "1" in {r for *_, r, _ in seen} and "1" in {j for *_, j in seen}


def test_the_dissector_agrees_with_the_decoder_on_a_plain_site(
    network: Network, tmp_path: Path
) -> None:
    _check(_run_site(network, tmp_path), sealed=False)


def test_the_dissector_agrees_with_the_decoder_on_a_sealed_site(
    network: Network, tmp_path: Path
) -> None:
    key = tmp_path / "site.key"
    key.write_text("1 " + "5a" * 32 + "\n7 " + "c3" * 32 + " send\n")
    os.chmod(key, 0o600)
    rows = _run_site(network, tmp_path, "--key-file", str(key))
    _check(rows, sealed=True)
    assert {row["uiap.auth.key_id"] for row in rows} == {"7"}  # the sending key's ID
