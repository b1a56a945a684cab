"""Time-ordered keys for the partitions of a distributed dataframe, the same when a task reruns.

An engine (Dask, Spark) runs one task per partition, and reruns a task whose worker died or
which failed. A key made from a clock and random bits inside the task differs on the rerun,
so a rerun that rewrites its output rewrites the keys too (and anything that already copied
the first ones now points nowhere). Here a task's keys are a function of three things that a
rerun does not change: the job's :class:`KeyBlock` (made once, on the driver), the task's
partition index, and each row's position in its partition.

The layout is the v7-node layout of :mod:`uuidkit.nodelayouts` (UUIDv7: 48-bit ms, 26-bit
counter, 48-bit node): partition ``p`` of a block takes the millisecond ``first_ms + p``,
row ``r`` of it the counter ``r``, and every key carries the block's node. The driver
reserves the block from a node-bound v7 generator
(:meth:`~uuidkit.generators.nodebound.NodeBoundV7Generator.reserve_milliseconds`): one
millisecond per partition, all of them the generator's, inside its node's lease.

Why no two keys are equal:

- within a job: two rows differ in partition (millisecond) or in position (counter);
- across jobs of one generator: the generator hands out each millisecond of its node once
  (to one block, or to its own values);
- across generators: the node, which its source lets one generator hold at a time
  (RFC 9562 §6.4), and a block ends before the node's lease does, so a later holder of the
  node stamps later milliseconds.

What is not promised: two jobs given the *same* block (the same seed) make the same keys,
which is the point of a seed (a rerun of a whole job) and wrong for anything else; and a
rerun task makes the same keys only if it sees its partition's rows in the same order
(a file scan does; a shuffle without a sort does not).

References: RFC 9562 §5.7, §6.2 (Method 1), §6.3 (a block of timestamps), §6.4, §6.9.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from uuidkit.errors import InvalidField
from uuidkit.nodelayouts import V7_NODE_COUNTER_BITS, check_claimed_node

if TYPE_CHECKING:
    from uuidkit.generators.nodebound import NodeBoundV7Generator

__all__ = ["ROWS_PER_PARTITION", "KeyBlock"]

#: The rows one partition can key: every counter of its millisecond (2**26 = 67,108,864).
ROWS_PER_PARTITION: Final = 1 << V7_NODE_COUNTER_BITS
_MS_LIMIT: Final = 1 << 48


@dataclass(frozen=True, slots=True)
class KeyBlock:
    """The keys of one job: milliseconds ``first_ms`` to ``first_ms + partitions - 1`` of
    ``node``, one per partition. Small and picklable: it travels to the workers.

    References: RFC 9562 §5.7, §6.2 (Method 1), §6.3, §6.4.
    """

    node: int
    first_ms: int
    partitions: int

    def __post_init__(self) -> None:
        check_claimed_node(self.node)
        for name, value in (("first_ms", self.first_ms), ("partitions", self.partitions)):
            if type(value) is not int or value < (name == "partitions"):
                raise InvalidField(f"{name}: expected an int >= 0 (partitions >= 1)", name)
        if self.first_ms + self.partitions > _MS_LIMIT:
            raise InvalidField("partitions: the block passes the 48-bit millisecond", "partitions")

    @classmethod
    def reserve(cls, generator: NodeBoundV7Generator, partitions: int) -> KeyBlock:
        """A new block of ``partitions`` milliseconds from ``generator`` (a node-bound v7
        generator, ``node_bound_generator(7, source)``), which never stamps them itself.

        References: RFC 9562 §6.3 ("allocate a block of timestamps"), §6.4.
        """
        node, first_ms = generator.reserve_milliseconds(partitions)
        return cls(node, first_ms, partitions)

    @property
    def seed(self) -> str:
        """The block as text, ``node.first_ms.partitions`` (hex, decimal, decimal): store it
        with the job's output to make the same keys again with :meth:`from_seed`.

        References: RFC 9562 §6.3.
        """
        return f"{self.node:012x}.{self.first_ms}.{self.partitions}"

    @classmethod
    def from_seed(cls, seed: str) -> KeyBlock:
        """The block :attr:`seed` wrote; malformed text raises :class:`~uuidkit.InvalidField`.

        References: RFC 9562 §6.3.
        """
        parts = seed.split(".") if isinstance(seed, str) else []
        try:
            node, first_ms, partitions = parts
            if len(node) != 12:
                raise ValueError(node)
            return cls(int(node, 16), int(first_ms, 10), int(partitions, 10))
        except ValueError as error:  # a wrong count, a bad digit, or a refused field
            if isinstance(error, InvalidField):
                raise
            raise InvalidField(
                f"seed: expected 'node.first_ms.partitions' (12 hex digits, two decimals), "
                f"found {seed!r}",
                "seed",
            ) from None

    def unix_ts_ms(self, partition: int) -> int:
        """The millisecond of ``partition``'s keys.

        References: RFC 9562 §5.7.
        """
        if type(partition) is not int or not 0 <= partition < self.partitions:
            raise InvalidField(
                f"partition: expected 0 to {self.partitions - 1} (the block's partitions), "
                f"found {partition!r}",
                "partition",
            )
        return self.first_ms + partition

    def keys(
        self,
        partition: int,
        count: int,
        *,
        offset: int = 0,
        into: Literal["numpy", "arrow", "list"] = "numpy",
    ) -> Any:
        """The keys of rows ``offset`` to ``offset + count - 1`` of ``partition``, ascending,
        as a numpy ``'V16'`` array, an Arrow ``arrow.uuid`` array or a list of UUIDs.

        A row past :data:`ROWS_PER_PARTITION` raises :class:`~uuidkit.InvalidField` naming the
        partition (split it: more partitions, more milliseconds).

        References: RFC 9562 §5.7, §6.2 (Method 1).
        """
        from uuidkit import bulk

        unix_ts_ms = self.unix_ts_ms(partition)
        if type(offset) is not int or type(count) is not int or offset < 0 or count < 0:
            raise InvalidField(f"offset, count: expected ints >= 0, found {offset!r}, {count!r}")
        if offset + count > ROWS_PER_PARTITION:
            raise InvalidField(
                f"partition {partition}: rows up to {offset + count - 1} pass the "
                f"{ROWS_PER_PARTITION} rows a partition can key (its millisecond's counters); "
                "split it into more partitions",
                "count",
            )
        return bulk.v7_node_block(self.node, unix_ts_ms, count, counter=offset, into=into)
