"""The UUID node-ID domain: a stable DID and the UID form of a node (UIAP §6; RFC 9562 §5.1)."""

from __future__ import annotations

from uuidkit.nodelayouts import MULTICAST_BIT
from uuidkit.uiap.domain import AllocatingAuthority
from uuidkit.uiap.numberspaces import UUID_NODE_ID_DOMAIN, UUID_NODE_IDS, node_id_uid


def test_the_did_is_pinned_under_the_experimental_authority() -> None:
    # A changed DID would stop hosts of different versions defending each other's nodes.
    assert str(UUID_NODE_ID_DOMAIN) == "0fff:0000:0006:0000"
    assert UUID_NODE_ID_DOMAIN.authority is AllocatingAuthority.EXPERIMENTAL  # UIAP §6
    assert not UUID_NODE_ID_DOMAIN.right_justified  # J = 0: left-justified (UIAP §4.1)
    assert UUID_NODE_IDS.domain_id == UUID_NODE_ID_DOMAIN


def test_the_multicast_bit_is_the_low_bit_of_octet_0() -> None:
    # RFC 9562 §6.10: "the least significant bit of the first octet of the Node ID".
    uid = node_id_uid(0x0000_0000_0000 | MULTICAST_BIT)
    assert uid.data == bytes([0x01, 0, 0, 0, 0, 0])
