"""UIAPNode's receive and send paths with a broken authenticator, without sockets: the
node counts and carries on (nothing from the network, or from a plug-in, stops it)."""

from __future__ import annotations

import asyncio
import random

from uuidkit.net import (
    Arrival,
    Channel,
    InterfaceInfo,
    SendFailure,
    TransportConfig,
    TransportDrop,
    UIAPNode,
)
from uuidkit.uiap import ClaimFailed, DomainID, Event, FailureReason, UIDSpace

DOMAIN = DomainID.parse("0fff:0000:00e0:0000")
E0 = InterfaceInfo("e0", 7, 0x1043, ("fe80::1",), (), None)


class Broken:
    def seal(self, data: bytes, source: str, destination: str, interface: str) -> bytes:
        raise RuntimeError("seal bug")

    def open(self, data: bytes, source: str, destination: str, interface: str) -> bytes | None:
        raise KeyError("open bug")


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[bytes, object]] = []

    def sendto(self, data: bytes, address: object) -> int:
        self.sent.append((data, address))
        return len(data)


class RecordingSockets:
    """Stands in for the node's SocketSet: one recorder sends on every interface."""

    per_interface = True

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def sender(self, channel: Channel, interface: str) -> Recorder:
        return self.recorder

    def close(self) -> None:
        pass


def _node() -> UIAPNode:
    node = UIAPNode(TransportConfig(), authenticator=Broken(), rng=random.Random(1))
    node._by_index = {E0.index: E0.name}
    node._active = {E0.name: E0}
    node.engine.add_interface(E0.name)
    return node


def test_an_authenticator_that_raises_on_open_drops_the_datagram() -> None:
    node = _node()
    arrival = Arrival(bytes(40), "fe80::2", 1021, "ff02::114", E0.index, False)
    node._handle_arrival(Channel.CLAIM, arrival)
    assert node.stats.dropped == {TransportDrop.AUTH: 1}
    assert node.stats.delivered == 0


def test_an_authenticator_that_raises_on_seal_costs_that_datagram_only() -> None:
    node = _node()
    recorder = Recorder()
    node._sockets = RecordingSockets(recorder)  # type: ignore[assignment]
    node.engine.claim(DOMAIN, UIDSpace.unique(b"\x01"), 60, 0.0)
    node._flush()
    assert node.stats.send_failed == {SendFailure.SEAL: 1}
    assert recorder.sent == []
    assert node.engine.get_timer() is not None  # the claim goes on: its timer is armed


def test_the_events_of_a_claim_arrive_after_claim_returns() -> None:
    """A claim that fails at once (a local conflict) is reported from the loop's next turn,
    not from inside claim(): the owner knows the handle before the event naming it."""

    async def main() -> None:
        delivered: list[Event] = []
        node = UIAPNode(TransportConfig(), on_event=delivered.append, rng=random.Random(1))
        node._by_index = {E0.index: E0.name}
        node._active = {E0.name: E0}
        node.engine.add_interface(E0.name)
        recorder = Recorder()
        node._sockets = RecordingSockets(recorder)  # type: ignore[assignment]
        node._loop = asyncio.get_running_loop()
        space = UIDSpace.unique(b"\x01")
        node.claim(DOMAIN, space, 60)
        second = node.claim(DOMAIN, space, 60)
        assert delivered == []
        await asyncio.sleep(0)
        assert delivered == [ClaimFailed(second, FailureReason.LOCAL_CONFLICT, DOMAIN, space)]
        assert recorder.sent  # the first claim's attempt went out at once
        await node.stop()

    asyncio.run(main())
