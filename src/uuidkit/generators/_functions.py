"""``uuidkit.uuid1``, ``uuid6`` and ``uuid7``: bound at ``import uuidkit``, their generators
created on first call.

The package binds these three names when it is imported, so ``uuidkit.uuid7`` is a plain
module attribute from the start: CPython 3.11 and later then specialise ``uuidkit.uuid7()``
into a dictionary-version check, which a module ``__getattr__`` (PEP 562) would prevent.
The default generators themselves (their locks, fork hooks and configurations) are made
only by the first call, which imports ``_default_v7`` or ``_default_gregorian``; those
modules publish the generator here and name these same objects as their ``uuid7`` (etc.),
so ``uuidkit.uuid7 is uuidkit.generators.uuid7`` holds before and after.

With the accelerator each name is the C module's builtin, which imports the module on its
first call and then finds the published core itself. On the pure path each is the Python
function below: it calls the published generator's ``next``, importing the module first
when nothing is published yet (the import system runs a module once per process and makes
racing first calls wait).

References: RFC 9562 §5.1, §5.6, §5.7, §6.2, §6.9.
"""

from __future__ import annotations

from uuidkit._accel import SPEEDUPS, public_function
from uuidkit._bits import MASK_14, MASK_48, check_field, stdlib_int

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from uuid import UUID

__all__ = ["publish", "stdlib_arguments", "uuid1", "uuid6", "uuid7"]

#: The published hot paths of the default generators (pure path): each pure function reads
#: its own global, one load per call.
_next_uuid1: Callable[..., UUID] | None = None
_next_uuid6: Callable[..., UUID] | None = None
_next_uuid7: Callable[[], UUID] | None = None


def _load(name: str) -> Callable[..., UUID]:
    """The published ``next`` of ``name``'s default generator, creating the generator."""
    # Imported for its effect: the module creates the generator and publishes its function.
    if name == "uuid7":
        from uuidkit.generators import _default_v7

        del _default_v7
    else:
        from uuidkit.generators import _default_gregorian  # uuid1 and uuid6

        del _default_gregorian
    published: Callable[..., UUID] = globals()["_next_" + name]
    return published


def publish(name: str, function: Callable[..., UUID]) -> None:
    """Make ``function`` (a default generator's ``next``) what the pure ``name`` calls.

    Called once per name, by the module that creates the default generator.
    """
    globals()["_next_" + name] = function


def stdlib_arguments(name: str, node: object, clock_seq: object) -> tuple[int | None, int | None]:
    """``uuid1``'s or ``uuid6``'s ``(node, clock_seq)`` as the standard library takes them.

    The standard library's ``uuid6`` keeps the low 48 bits of a node and the low 14 bits of
    a clock sequence, a negative one in two's complement; its ``uuid1`` keeps the low 14 bits
    of a clock sequence and refuses a node outside ``0 <= node < 2**48``. Either takes
    ``True``/``False`` as 1/0. The result is what the default generator's strict ``next``
    accepts; a value that is not an int raises :class:`~uuidkit.InvalidField`. uuidkit's
    own generators and builders keep refusing out-of-range fields.

    References: RFC 9562 §5.1, §5.6 (the 48-bit node, the 14-bit clock sequence).
    """
    if clock_seq is not None:
        clock_seq = stdlib_int("clock_seq", clock_seq) & MASK_14
    if node is not None:
        node = stdlib_int("node", node)
        node = node & MASK_48 if name == "uuid6" else check_field("node", node, 48)
    return node, clock_seq


def _pure_uuid1(node: int | None = None, clock_seq: int | None = None) -> UUID:
    """A new UUIDv1, as :func:`uuid.uuid1` but with a random multicast node by default.

    ``node`` (48 bits) and ``clock_seq`` (14 bits) replace the default generator's own for
    this value; the timestamp still comes from the shared generator, so it never repeats.
    As the standard library's, a clock_seq keeps its low 14 bits and a node outside
    0 <= node < 2**48 is an error.

    References: RFC 9562 §5.1, §6.10; RFC 4122 §4.2.1.
    """
    next_value = _next_uuid1 or _load("uuid1")
    if node is None and clock_seq is None:
        return next_value()
    return next_value(*stdlib_arguments("uuid1", node, clock_seq))


def _pure_uuid6(node: int | None = None, clock_seq: int | None = None) -> UUID:
    """A new UUIDv6 with a fresh pseudorandom clock_seq and node unless given.

    As the standard library's, a given node keeps its low 48 bits and a clock_seq its low
    14 bits.

    References: RFC 9562 §5.6, §6.10.
    """
    next_value = _next_uuid6 or _load("uuid6")
    if node is None and clock_seq is None:
        return next_value()
    return next_value(*stdlib_arguments("uuid6", node, clock_seq))


def _pure_uuid7() -> UUID:
    """A new UUIDv7 from the process-wide default generator, greater than every earlier
    value of it.

    Thread-safe and fork-safe; in steady state the timestamp is the clock's millisecond.

    References: RFC 9562 §5.7, §6.2.
    """
    return (_next_uuid7 or _load("uuid7"))()


uuid1: Callable[..., UUID]
uuid6: Callable[..., UUID]
uuid7: Callable[[], UUID]
if SPEEDUPS is not None:
    uuid1 = public_function(SPEEDUPS.uuid1, "uuid1")
    uuid6 = public_function(SPEEDUPS.uuid6, "uuid6")
    uuid7 = public_function(SPEEDUPS.uuid7, "uuid7")
else:
    uuid1 = public_function(_pure_uuid1, "uuid1")
    uuid6 = public_function(_pure_uuid6, "uuid6")
    uuid7 = public_function(_pure_uuid7, "uuid7")
