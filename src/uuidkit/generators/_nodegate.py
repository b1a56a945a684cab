"""The base class of the node-bound generators: the compiled ``NodeGate`` or its pure stand-in.

With the compiled accelerator, :mod:`uuidkit.generators.nodebound`'s generators subclass
``uuidkit._speedups.NodeGate``: calling one runs the gate's check of the lease (its end on the
generator's clock, its monotonic deadline, no event since it was armed) and, in the simple
cases, makes the value in C; every other case is the generator's ``_gate_slow``, the
reference code. Without it they subclass :class:`PureGate`, whose every call is
``_gate_slow``. The generator keeps the gate disarmed while it changes the lease, and arms
it with the lease and its counting state afterwards.

References: RFC 9562 §6.2, §6.4.
"""

from __future__ import annotations

from uuid import UUID

from uuidkit._accel import SPEEDUPS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MODE_DELEGATE", "MODE_SLOW", "GateBase", "PureGate", "gate_in_use"]

#: Gate modes (``_speedups_nodebound.c``): every value by ``_gate_slow``, or the lease check
#: in C before the inner generator's value; 7 and 8 are the v7-node and v8-node layouts.
MODE_SLOW = 0
MODE_DELEGATE = 1


class PureGate:
    """The gate without the accelerator: every value is the reference path.

    References: RFC 9562 §6.2.
    """

    __slots__ = ()

    def __call__(self) -> UUID:
        """The next value (see the generator's class).

        References: RFC 9562 §6.2.
        """
        return self._gate_slow(None)

    def _gate_slow(self, reading: int | None) -> UUID:
        raise NotImplementedError

    def _gate_configure(self, *settings: Any) -> None:
        """Nothing to configure: there is no fast path."""

    def _gate_arm(self, *lease: Any) -> bool:
        return False

    def _gate_disarm(self) -> tuple[int, int] | None:
        return None

    def _gate_draw(self) -> int:
        raise NotImplementedError  # never called: the generator draws its own words

    def _gate_forget_words(self) -> None:
        """No buffered words."""


_COMPILED = getattr(SPEEDUPS, "NodeGate", None)
if TYPE_CHECKING:
    GateBase = PureGate
else:
    GateBase = PureGate if _COMPILED is None else _COMPILED


def gate_in_use() -> bool:
    """Whether a generator made now uses the compiled fast path (the tests' twin switch)."""
    return _COMPILED is not None
