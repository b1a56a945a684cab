"""Node-bearing layouts: UUIDs whose bits carry a node ID that a site has agreed on.

RFC 9562 §6.4 ("Node IDs") lets a distributed generator place a node ID in the UUID so that
"the bit space for a given node is unique", and leaves its location, its length and how
nodes agree on it to the implementation. These are uuidkit's layouts for a node ID claimed
through UIAP (see ``docs/distributed.md``); every one keeps the claimed node's 48 bits whole,
because the claim makes all 48 bits unique on the site and no fewer.

``v1-node`` and ``v6-node`` are plain RFC 9562 §5.1 / §5.6 values whose ``node`` field is the
claimed node ID: no new bits, only the rule that the node is a claimed one (multicast bit
set, §6.10).

``v7-node`` (a UUIDv7, RFC 9562 §5.7; §6.4 allows "a pseudorandom Node ID value" in place of
random bits): rand_a and the top 14 bits of rand_b hold a 26-bit Method 1 counter (§6.2:
"MUST be positioned immediately after the embedded timestamp"), the low 48 bits of rand_b
hold the node::

     0                   1                   2                   3
     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    |                           unix_ts_ms                          |
    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    |           unix_ts_ms          |  ver  |      counter_high     |
    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    |var|        counter_low        |              node             |
    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    |                              node                             |
    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

    counter = counter_high (12 bits, rand_a) << 14 | counter_low (14 bits, rand_b 0-13)
    node    = rand_b bits 14-61 (48 bits, multicast bit = bit 40 of the node)

Why 48 + 26: the node must be whole (48 bits) for uniqueness by construction; the 26 bits
left are the counter, randomly seeded each millisecond below one guard bit (§6.2 "Counter
Rollover Guards"), so a node can make at least 2**25 = 33,554,432 values per millisecond
before the overflow policy applies; CPython makes about 3,000. No bits are left for
randomness after the seed: within one millisecond, consecutive values of a node differ by
one, and across milliseconds the 25-bit seed is all that is unguessable (§6.9 trades away;
a node-bearing UUID names its node, which is the point).

``v8-node`` (a UUIDv8, RFC 9562 §5.8) shows the same structure openly and resolves time
finer: ``ms_fraction`` is the fraction of the millisecond in 1/4096 ms steps (§6.2 Method 3,
about 244 ns), ``counter`` starts at 0 at every new fraction and counts up::

     0                   1                   2                   3
     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    |                           unix_ts_ms                          |
    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    |           unix_ts_ms          |  ver  |      ms_fraction      |
    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    |var|          counter          |              node             |
    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
    |                              node                             |
    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+

A 14-bit counter per 1/4096 ms is 16,384 values per 244 ns (67 million per millisecond).

Nothing in a UUIDv7 or UUIDv8 says that it carries a node, so these layouts are read by
naming them: ``uuidkit.fields(value, layout="v7-node")``, or :func:`read_node_layout`
(``read_node_layout(value, "v7-node")``), which is the same reader. The caller names the
layout, it is never guessed; what the bits can say is checked (the version, and the node's
multicast bit, which every claimed node sets). ``v1-node`` and ``v6-node`` read as the plain
``V1Fields``/``V6Fields`` records, whose ``node`` is the claimed node.

References: RFC 9562 §5.1, §5.6, §5.7, §5.8, §6.2, §6.4, §6.10.
"""

from __future__ import annotations

from typing import ClassVar, Final, Literal, TypeAlias, cast
from uuid import UUID

from uuidkit._bits import MASK_12, MASK_48, MASK_62, check_field, pack_frame
from uuidkit._construct import from_int_unchecked
from uuidkit._record import Record
from uuidkit.errors import InvalidField, InvalidUUID
from uuidkit.fields import V1Fields, V6Fields, fields, version
from uuidkit.layouts import v1_int, v6_int
from uuidkit.timestamps import NS_PER_MS

__all__ = [
    "MULTICAST_BIT",
    "NODE_LAYOUTS",
    "V7_NODE_COUNTER_BITS",
    "V8_NODE_COUNTER_BITS",
    "V8_NODE_FRACTION_BITS",
    "NodeFields",
    "NodeLayout",
    "V7NodeFields",
    "V8NodeFields",
    "build_v1_node",
    "build_v6_node",
    "build_v7_node",
    "build_v8_node",
    "check_claimed_node",
    "read_node_layout",
    "v7_node_int",
    "v8_node_int",
]

#: The unicast/multicast bit of a 48-bit node: the least significant bit of its first octet.
MULTICAST_BIT: Final = 1 << 40
#: Width of the v7-node counter: all 12 bits of rand_a and the top 14 bits of rand_b.
V7_NODE_COUNTER_BITS: Final = 26
#: Width of the v8-node sub-millisecond fraction (RFC 9562 §6.2 Method 3: at most 12 bits).
V8_NODE_FRACTION_BITS: Final = 12
#: Width of the v8-node counter: the top 14 bits of custom_c.
V8_NODE_COUNTER_BITS: Final = 14

_NODE_BITS: Final = 48
_LOW_COUNTER_BITS: Final = 14

#: The name of a node-bearing layout (RFC 9562 §6.4: a node ID in a time-based UUID).
NodeLayout: TypeAlias = Literal["v1-node", "v6-node", "v7-node", "v8-node"]
#: The layout names :func:`read_node_layout` and ``uuidkit inspect --layout`` accept.
NODE_LAYOUTS: Final[tuple[NodeLayout, ...]] = ("v1-node", "v6-node", "v7-node", "v8-node")


def check_claimed_node(node: int, field: str = "node") -> int:
    """``node`` if it is a 48-bit node ID with the multicast bit set, else InvalidField.

    A claimed node never equals an IEEE 802 address, whose multicast bit is always clear.

    References: RFC 9562 §6.10 ("MUST set the least significant bit of the first octet of
    the Node ID to 1"); RFC 9562 §6.4 ("The node id SHOULD NOT be an IEEE 802 MAC address").
    """
    check_field(field, node, _NODE_BITS)
    # RFC 9562 §6.10: the multicast bit MUST be 1 on a node that is not an IEEE address.
    if not node & MULTICAST_BIT:
        raise InvalidField(
            f"{field}: {node:012x} has the multicast bit (bit 0 of octet 0) clear; a claimed "
            "node ID must set it (RFC 9562 §6.10)",
            field,
        )
    return node


def v7_node_int(unix_ts_ms: int, counter: int, node: int) -> int:
    """The v7-node layout as an int; the caller guarantees every field is in range.

    References: RFC 9562 §5.7, §6.2 (Method 1), §6.4.
    """
    rand_b = ((counter & ((1 << _LOW_COUNTER_BITS) - 1)) << _NODE_BITS) | node
    return pack_frame(7, unix_ts_ms, counter >> _LOW_COUNTER_BITS, rand_b)


def v8_node_int(unix_ts_ms: int, ms_fraction: int, counter: int, node: int) -> int:
    """The v8-node layout as an int; the caller guarantees every field is in range.

    References: RFC 9562 §5.8, §6.2 (Method 3), §6.4.
    """
    return pack_frame(8, unix_ts_ms, ms_fraction, (counter << _NODE_BITS) | node)


def build_v1_node(timestamp: int, clock_seq: int, node: int) -> UUID:
    """A UUIDv1 whose node is a claimed node ID (multicast bit set).

    References: RFC 9562 §5.1, §6.10.
    """
    check_field("timestamp", timestamp, 60)
    check_field("clock_seq", clock_seq, 14)
    return from_int_unchecked(v1_int(timestamp, clock_seq, check_claimed_node(node)))


def build_v6_node(timestamp: int, clock_seq: int, node: int) -> UUID:
    """A UUIDv6 whose node is a claimed node ID (multicast bit set).

    References: RFC 9562 §5.6, §6.10.
    """
    check_field("timestamp", timestamp, 60)
    check_field("clock_seq", clock_seq, 14)
    return from_int_unchecked(v6_int(timestamp, clock_seq, check_claimed_node(node)))


def build_v7_node(unix_ts_ms: int, counter: int, node: int) -> UUID:
    """A v7-node UUID: 48-bit ``unix_ts_ms``, 26-bit ``counter``, 48-bit claimed ``node``.

    References: RFC 9562 §5.7, §6.2 (Method 1), §6.4, §6.10.
    """
    check_field("unix_ts_ms", unix_ts_ms, 48)
    check_field("counter", counter, V7_NODE_COUNTER_BITS)
    return from_int_unchecked(v7_node_int(unix_ts_ms, counter, check_claimed_node(node)))


def build_v8_node(unix_ts_ms: int, ms_fraction: int, counter: int, node: int) -> UUID:
    """A v8-node UUID: 48-bit ``unix_ts_ms``, 12-bit ``ms_fraction`` (1/4096 ms), 14-bit
    ``counter``, 48-bit claimed ``node``.

    References: RFC 9562 §5.8, §6.2 (Method 3), §6.4, §6.10.
    """
    check_field("unix_ts_ms", unix_ts_ms, 48)
    check_field("ms_fraction", ms_fraction, V8_NODE_FRACTION_BITS)
    check_field("counter", counter, V8_NODE_COUNTER_BITS)
    node = check_claimed_node(node)
    return from_int_unchecked(v8_node_int(unix_ts_ms, ms_fraction, counter, node))


class V7NodeFields(Record):
    """The fields of a v7-node UUID (a UUIDv7 whose rand_a/rand_b hold counter and node).

    References: RFC 9562 §5.7, §6.2, §6.4.
    """

    __slots__ = ()
    __match_args__ = ("unix_ts_ms", "counter", "node")

    version: ClassVar[int] = 7
    layout: ClassVar[str] = "v7-node"
    unix_ts_ms: int
    counter: int
    node: int

    @property
    def timestamp_ns(self) -> int:
        """The embedded time in Unix nanoseconds (millisecond resolution)."""
        return self.unix_ts_ms * NS_PER_MS


class V8NodeFields(Record):
    """The fields of a v8-node UUID: time, sub-millisecond fraction, counter, node.

    References: RFC 9562 §5.8, §6.2 (Method 3), §6.4.
    """

    __slots__ = ()
    __match_args__ = ("unix_ts_ms", "ms_fraction", "counter", "node")

    version: ClassVar[int] = 8
    layout: ClassVar[str] = "v8-node"
    unix_ts_ms: int
    ms_fraction: int
    counter: int
    node: int

    @property
    def timestamp_ns(self) -> int:
        """The embedded time in Unix nanoseconds: the first nanosecond of its 1/4096 ms step."""
        return self.unix_ts_ms * NS_PER_MS - (-self.ms_fraction * NS_PER_MS >> 12)


#: What reading a node-bearing layout returns: v1-node and v6-node are plain UUIDv1/UUIDv6
#: records (their ``node`` is the claimed node), v7-node and v8-node records of their own.
NodeFields: TypeAlias = V1Fields | V6Fields | V7NodeFields | V8NodeFields

_LAYOUT_VERSIONS: Final = {"v1-node": 1, "v6-node": 6, "v7-node": 7, "v8-node": 8}


def read_node_layout(value: UUID, layout: str) -> NodeFields:
    """The fields of ``value`` read as the node-bearing ``layout`` (one of NODE_LAYOUTS);
    the same as ``uuidkit.fields(value, layout=layout)``.

    The version must match the layout (a v4 is not a v7-node), and the node must have the
    multicast bit set, as every claimed node has (a v1 with an IEEE 802 address is not a
    v1-node). Whether a UUIDv7 or UUIDv8 really carries a node cannot be told from its bits
    beyond that, so the caller names the layout.

    References: RFC 9562 §5.1, §5.6, §5.7, §5.8, §6.4, §6.10.
    """
    expected = _LAYOUT_VERSIONS.get(layout) if isinstance(layout, str) else None
    if expected is None:
        raise InvalidField(
            f"layout: expected one of {', '.join(NODE_LAYOUTS)}, found {layout!r}", "layout"
        )
    found = version(value)
    if found != expected:
        raise InvalidUUID(
            f"{value}: layout {layout} needs a version {expected} UUID, found version {found}"
        )
    number = value.int
    node = number & MASK_48  # every layout keeps the node in the low 48 bits
    # RFC 9562 §6.10: a node that is not an IEEE address "MUST set" the multicast bit.
    if not node & MULTICAST_BIT:
        raise InvalidUUID(
            f"{value}: layout {layout} carries a claimed node, whose multicast bit is set; "
            f"node {node:012x} has it clear (RFC 9562 §6.10)"
        )
    if expected == 1 or expected == 6:
        return cast(V1Fields | V6Fields, fields(value))
    low62 = number & MASK_62
    if expected == 7:
        counter = (((number >> 64) & MASK_12) << _LOW_COUNTER_BITS) | (low62 >> _NODE_BITS)
        return V7NodeFields._make(number >> 80, counter, node)
    return V8NodeFields._make(number >> 80, (number >> 64) & MASK_12, low62 >> _NODE_BITS, node)
