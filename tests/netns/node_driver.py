"""Test-only driver: one UIAPNode in this process, commanded by JSON lines on stdin.

Run inside a network namespace (``ip netns exec NS python3 node_driver.py --config JSON``).
Writes one JSON object per line to stdout: ``{"ready": ...}`` once started, a reply
``{"id": N, ...}`` per command, and ``{"event": ...}`` for every engine event.

Commands (``op``): ``claim`` (waits for the result and replies with it), ``start-claim``
(replies with the handle at once), ``release``, ``status``, ``quit``. Spaces are
``{"unique": "hex"}`` or ``{"range": ["hex", "hex"]}``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import hmac
import json
import sys
from typing import Any

from uuidkit.net import Family, TransportConfig, UIAPNode
from uuidkit.uiap import ClaimSucceeded, DomainID, EngineConfig, Event, UIDSpace


class _TestMAC:
    """A toy keyed-MAC trailer for the tests (not the daemon's authenticator): 16 octets
    of HMAC-SHA-256 over the addresses and the message, so a datagram only opens at the
    hop it was sealed for."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, data: bytes, source: str, destination: str) -> bytes:
        header = f"{source} {destination} ".encode()
        return hmac.new(self._key, header + data, hashlib.sha256).digest()[:16]

    def seal(self, data: bytes, source: str, destination: str, interface: str) -> bytes:
        return data + self._mac(data, source, destination)

    def open(self, data: bytes, source: str, destination: str, interface: str) -> bytes | None:
        message, trailer = data[:-16], data[-16:]
        expected = self._mac(message, source, destination)
        return message if len(data) > 16 and hmac.compare_digest(trailer, expected) else None


def _space(spec: dict[str, Any]) -> UIDSpace:
    if "unique" in spec:
        return UIDSpace.unique(bytes.fromhex(spec["unique"]))
    lower, upper = spec["range"]
    return UIDSpace.range(bytes.fromhex(lower), bytes.fromhex(upper))


def _event_json(event: Event) -> dict[str, Any]:
    fields: dict[str, Any] = {"event": type(event).__name__}
    for item in dataclasses.fields(event):
        value = getattr(event, item.name)
        fields[item.name] = value if isinstance(value, int | float | str | None) else str(value)
    return fields


def _result_json(result: Event) -> dict[str, Any]:
    claim = getattr(result, "claim", None)
    if isinstance(result, ClaimSucceeded):
        return {"result": "succeeded", "claim": claim}
    reason = getattr(result, "reason", None)
    return {
        "result": "failed",
        "event": type(result).__name__,
        "claim": claim,
        "reason": reason.value if reason is not None else None,
    }


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def _command(node: UIAPNode, command: dict[str, Any]) -> dict[str, Any] | None:
    op = command["op"]
    if op in ("claim", "start-claim"):
        domain = DomainID.parse(command["domain"])
        space = _space(command["space"])
        lifetime = int(command.get("lifetime", 3600))
        reclaim, proxy = bool(command.get("reclaim")), bool(command.get("proxy"))
        if op == "start-claim":
            return {"handle": node.claim(domain, space, lifetime, reclaim=reclaim, proxy=proxy)}
        result = await node.claim_and_wait(domain, space, lifetime, reclaim=reclaim, proxy=proxy)
        return _result_json(result)
    if op == "release":
        node.release(int(command["handle"]))
        return {}
    if op == "status":
        return node.status()
    if op == "quit":
        return None
    raise ValueError(f"unknown op {op!r}")


async def _serve(node: UIAPNode) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    pending: set[asyncio.Task[None]] = set()

    async def run(command: dict[str, Any]) -> None:
        reply = await _command(node, command)
        _emit({"id": command.get("id")} | (reply or {}))

    while line := await reader.readline():
        command = json.loads(line)
        if command["op"] == "quit":
            break
        task = asyncio.create_task(run(command))
        pending.add(task)
        task.add_done_callback(pending.discard)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True, help="JSON: TransportConfig fields")
    parser.add_argument("--device-id", type=lambda text: int(text, 16), default=None)
    options = parser.parse_args()
    fields = json.loads(options.config)
    if "interfaces" in fields and fields["interfaces"] is not None:
        fields["interfaces"] = tuple(fields["interfaces"])
    if "family" in fields:
        fields["family"] = Family(fields["family"])
    engine_fields = fields.pop("engine", {})
    key = fields.pop("auth_key", None)
    node = UIAPNode(
        TransportConfig(**fields),
        EngineConfig(**engine_fields),
        options.device_id,
        lambda event: _emit(_event_json(event)),
        authenticator=_TestMAC(bytes.fromhex(key)) if key is not None else None,
    )
    await node.start()
    _emit({"ready": True, "device_id": f"{node.device_id:016x}", "interfaces": node.interfaces})
    try:
        await _serve(node)
    finally:
        await node.stop()


if __name__ == "__main__":
    asyncio.run(main())
