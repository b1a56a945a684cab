"""UUIDv1 and UUIDv6 generators: 60-bit Gregorian timestamps, clock sequence, node.

The timestamp counts 100 ns ticks since 1582-10-15. A clock coarser than 100 ns is
stretched to full resolution by counting UUIDs within one clock interval (RFC 4122
§4.2.1.2): ``clock_resolution_ns // 100`` timestamps are available per interval; when they
are used up, the overflow policy decides (WAIT stalls, RAISE errs, ADVANCE runs ahead).

References: RFC 9562 §5.1, §5.6, §6.1, §6.2, §6.10; RFC 4122 §4.1.5, §4.2.1, §4.2.2.
"""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID

from uuidkit import _system
from uuidkit._bits import CLOCK_SEQ_BITS, MASK_14, MASK_60, check_field
from uuidkit.errors import InvalidField
from uuidkit.generators._gregorian_engine import GregorianEngine
from uuidkit.generators._gregorian_pure import build_pure_next
from uuidkit.generators._policy import (
    Clock,
    ClockRegression,
    CounterOverflow,
    RandomBytes,
    Sleep,
    check_callable,
    check_count,
    paired_monotonic,
    register_for_fork,
)
from uuidkit.generators._timeline import DEFAULT_MAX_AHEAD_MS, Timeline
from uuidkit.generators.node import NODE_BITS, NodePolicy, resolve_node
from uuidkit.timestamps import NS_PER_MS, NS_PER_TICK

TYPE_CHECKING = False  # typing.TYPE_CHECKING without the cost of importing typing
if TYPE_CHECKING:
    from typing import TypeAlias

    # Loaded on first use, see __getattr__.
    from uuidkit.generators._gregorian_config import V6_DEFAULT as V6_DEFAULT
    from uuidkit.generators._gregorian_config import GregorianConfig

    #: What a generator is built from: a ``GregorianConfig``, or its version's defaults.
    GregorianSettings: TypeAlias = "GregorianConfig | _DefaultSettings"

__all__ = ["GregorianConfig", "V1Generator", "V6Generator"]


class _DefaultSettings:
    """The values of ``GregorianConfig()``, as plain attributes (a test checks they agree).

    A generator made without a configuration is built from these (or, for v6, from
    :class:`_DefaultV6Settings`) rather than from a ``GregorianConfig``, whose dataclass
    machinery would load :mod:`dataclasses` (see :mod:`uuidkit.generators._gregorian_config`);
    its ``config`` is still a real ``GregorianConfig``, made when first read.
    """

    __slots__ = ()
    node: NodePolicy = NodePolicy.RANDOM
    clock_resolution_ns: int = 100
    overflow: CounterOverflow = CounterOverflow.WAIT
    regression: ClockRegression = ClockRegression.RESEED
    regression_window_ms: int = 0
    max_wait_ms: int = 1_000
    max_ahead_ms: int = DEFAULT_MAX_AHEAD_MS
    random_per_uuid: bool = False


class _DefaultV6Settings(_DefaultSettings):
    """The values of ``V6_DEFAULT``, as plain attributes (a test checks they agree)."""

    __slots__ = ()
    overflow = CounterOverflow.ADVANCE
    regression = ClockRegression.KEEP
    random_per_uuid = True


def __getattr__(name: str) -> object:
    """Load :class:`GregorianConfig` and :data:`V6_DEFAULT` on first use (see
    :mod:`uuidkit.generators._gregorian_config`)."""
    if name not in ("GregorianConfig", "V6_DEFAULT"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from uuidkit.generators import _gregorian_config

    value = getattr(_gregorian_config, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"GregorianConfig", "V6_DEFAULT"})


def _make_timeline(config: GregorianSettings, monotonic_ns: Clock | None = None) -> Timeline:
    resolution = config.clock_resolution_ns
    return Timeline(
        monotonic_ns=monotonic_ns,
        tick_rate=(1, resolution),
        overflow=config.overflow,
        regression=config.regression,
        window_ticks=config.regression_window_ms * NS_PER_MS // resolution,
        ahead_ticks=config.max_ahead_ms * NS_PER_MS // resolution,
        # RFC 9562 §5.1: the timestamp is 60 bits; checked per value by the engine.
        max_tick=(MASK_60 + 1) * NS_PER_TICK // resolution,
        unit=f"clock intervals of {resolution} ns",
        exhausted=f"timestamp: the {resolution // NS_PER_TICK} ticks of the clock interval "
        "are used",
    )


class _GregorianGenerator:
    """Shared machinery of :class:`V1Generator` and :class:`V6Generator`.

    The state and every rare case live in a
    :class:`~uuidkit.generators._gregorian_engine.GregorianEngine`; :attr:`next` is the hot
    path: one Python function, or the compiled core's when the accelerator is built.
    """

    __slots__ = ("__weakref__", "_config", "_engine", "next")
    _VERSION: int = 1
    #: What a generator made without a configuration is built from.
    _DEFAULTS: _DefaultSettings = _DefaultSettings()

    def __init__(
        self,
        config: GregorianConfig | None = None,
        *,
        node: int | None = None,
        clock_seq: int | None = None,
        clock: Clock = _system.system_clock_ns,
        random_bytes: RandomBytes = _system.random_bytes,
        sleep_ns: Sleep = _system.sleep_ns,
        monotonic_ns: Clock = _system.monotonic_ns,
    ) -> None:
        settings: GregorianSettings = self._DEFAULTS
        if config is not None:
            from uuidkit.generators._gregorian_config import GregorianConfig

            if not isinstance(config, GregorianConfig):
                raise InvalidField(
                    f"config: expected a GregorianConfig, found {config!r}", "config"
                )
            settings = config
        self._check_config(settings)
        self._config = config
        for name, function in (
            ("clock", clock),
            ("random_bytes", random_bytes),
            ("sleep_ns", sleep_ns),
            ("monotonic_ns", monotonic_ns),
        ):
            check_callable(name, function)
        if node is not None:
            check_field("node", node, NODE_BITS)
        if clock_seq is not None:
            check_field("clock_seq", clock_seq, CLOCK_SEQ_BITS)
        # A node this generator drew at random is replaced in a forked child (see
        # reset_after_fork); a node the caller chose is kept.
        node_is_random = node is None and settings.node is NodePolicy.RANDOM
        chosen_node = resolve_node(settings.node, random_bytes) if node is None else node
        # RFC 9562 §5.1: "The clock sequence MUST be originally ... initialized to a random
        # number"; "The initial value MUST NOT be correlated to the Node ID".
        if clock_seq is None:
            clock_seq = int.from_bytes(random_bytes(2)) & MASK_14
        self._engine = GregorianEngine(
            settings,
            self._VERSION,
            _make_timeline(settings, paired_monotonic(clock, monotonic_ns)),
            (chosen_node, clock_seq, node_is_random),
            (clock, random_bytes, sleep_ns, monotonic_ns),
        )
        core = self._engine.core
        #: The next UUID, as :meth:`__call__` but one call level less; ``next(node,
        #: clock_seq)`` replaces either field for one value (as :meth:`with_fields`).
        self.next: Callable[..., UUID] = (
            core.next if core is not None else build_pure_next(self._engine)
        )
        self._engine.name_next(f"{type(self).__qualname__}.next", self.next)
        register_for_fork(self)

    @property
    def config(self) -> GregorianConfig:
        """The configuration this generator was made with (its version's default if none was).

        References: RFC 9562 §5.1, §5.6, §6.10.
        """
        config = self._config
        if config is None:  # built from _DEFAULTS: the dataclass loads only now
            config = self._config = self._default_config()
        return config

    @property
    def node(self) -> int:
        """The 48-bit node in use (RFC 9562 §5.1); change it with :meth:`set_node`."""
        node: int = self._engine.state.node
        return node

    @property
    def clock_seq(self) -> int:
        """The 14-bit clock sequence in use (RFC 9562 §5.1)."""
        clock_seq: int = self._engine.state.clock_seq
        return clock_seq

    @staticmethod
    def _default_config() -> GregorianConfig:
        from uuidkit.generators._gregorian_config import GregorianConfig

        return GregorianConfig()

    @staticmethod
    def _check_config(config: GregorianSettings) -> None:
        """Refuse a configuration this version's spec forbids (none for the base class)."""

    def __call__(self) -> UUID:
        """The next UUID of this generator's version.

        References: RFC 9562 §5.1, §5.6; RFC 4122 §4.2.1.
        """
        return self.next()

    def generate(self, count: int) -> list[UUID]:
        """``count`` consecutive UUIDs with increasing timestamps, under one lock acquisition.

        References: RFC 9562 §6.2 (batch monotonicity).
        """
        return self._block(check_count(count), True)  # type: ignore[return-value]

    def generate_ints(self, count: int) -> list[int]:
        """Like :meth:`generate`, as 128-bit integers (no ``UUID`` objects to allocate).

        References: RFC 9562 §6.2.
        """
        return self._block(check_count(count), False)  # type: ignore[return-value]

    def _block(self, count: int, as_uuids: bool) -> list[UUID] | list[int]:
        engine = self._engine
        was_busy = engine.enter()
        try:
            if engine.core is not None:
                values: list[UUID] | list[int] = engine.core.block(count, as_uuids)
                return values
            # The hot path's twin that expects the gate held: still one acquisition.
            next_uuid = engine.held_next if engine.held_next is not None else self.next
            if as_uuids:
                return [next_uuid() for _ in range(count)]
            return [next_uuid().int for _ in range(count)]
        finally:
            engine.leave(was_busy)

    def with_fields(self, node: int | None, clock_seq: int | None) -> UUID:
        """The next UUID, with ``node`` and/or ``clock_seq`` replacing the generator's own.

        The timestamp is this generator's next one, so values still never repeat a
        timestamp of this generator; with ``random_per_uuid`` a field not given is fresh
        random bits, as for any other UUID of the generator.

        References: RFC 9562 §5.1, §5.6.
        """
        return self._engine.with_fields(node, clock_seq)

    def set_node(self, node: int) -> None:
        """Use ``node`` from now on; a different node gets a fresh random clock sequence.

        References: RFC 9562 §5.1 ("if the Node ID changes ..., setting the clock sequence to
        a random number minimizes the probability of a duplicate").
        """
        self._engine.set_node(node)

    def reset_after_fork(self) -> None:
        """In a forked child: new lock, new random node (if it was random), new clock sequence.

        A random node is drawn afresh, so sibling children of one parent differ in 47 random
        node bits and cannot emit one another's values; a node the caller fixed is kept, and
        only the clock sequence (14 bits) separates the child from its parent and siblings.
        Buffered random words (the compiled core's too) are discarded.

        References: RFC 9562 §6.9 (reseed upon process forks), §6.10.
        """
        self._engine.reset_after_fork()


class V1Generator(_GregorianGenerator):
    """A thread-safe UUIDv1 generator (RFC 4122 §4.2.1 with RFC 9562 §6.10 nodes).

    - **Monotonic**: timestamps strictly increase within one clock sequence; every clock
      interval of ``clock_resolution_ns`` yields up to ``clock_resolution_ns // 100``
      consecutive ticks (RFC 4122 §4.2.1.2). (v1 values do not sort by time; v6 do.)
    - **Reseeding**: the clock sequence is random once at creation, incremented on an
      accepted clock regression, and random again when :meth:`set_node` changes the node.
    - **Clock regression**: RESEED with a 0 ms window (default: any regression restarts at
      the clock and increments the clock sequence, RFC 9562 §5.1 MUST); KEEP counts on from
      the last timestamp within ``max_ahead_ms``; RAISE raises
      :class:`~uuidkit.ClockRegressionError`.
    - **Counter overflow**: WAIT (default) stalls until the clock reaches a new interval
      (at most ``max_wait_ms`` of monotonic time); RAISE raises
      :class:`~uuidkit.CounterOverflowError`; ADVANCE is refused (RFC 4122 §4.2.1.2: "MUST
      either return an error, or stall").
    - **Thread safety**: one exclusive hold of the state per value or per :meth:`generate`
      block (pure Python: a one-token gate, taken by the slow path under a re-entrant lock;
      the compiled core's fast path runs under the GIL, never beside a holder of the lock).
    - **Fork**: the child takes a new lock and a different clock sequence, and a new random
      node unless the node was fixed by the caller, so children of one parent cannot repeat
      one another's values.
    - **Persistence**: none in memory; :class:`uuidkit.generators.SharedV6Generator` keeps
      timestamp, clock sequence and node in a state file.

    References: RFC 9562 §5.1, §6.1, §6.10; RFC 4122 §4.1.5, §4.2.1, §4.2.2.
    """

    @staticmethod
    def _check_config(config: GregorianSettings) -> None:
        # RFC 4122 §4.2.1.2: when the per-interval budget is used up, "the UUID service MUST
        # either return an error, or stall the UUID generator until the system clock
        # catches up" -- WAIT or RAISE, never timestamps ahead of the clock.
        if config.overflow is CounterOverflow.ADVANCE:
            raise InvalidField(
                "overflow: UUIDv1 allows WAIT or RAISE (RFC 4122 §4.2.1.2), found ADVANCE",
                "overflow",
            )
        if config.random_per_uuid:
            raise InvalidField(
                "random_per_uuid: a UUIDv6-only option (RFC 9562 §5.6); UUIDv1 keeps its "
                "clock sequence and node (§5.1)",
                "random_per_uuid",
            )

    __slots__ = ()


class V6Generator(_GregorianGenerator):
    """A thread-safe UUIDv6 generator (RFC 9562 §5.6).

    - **Monotonic**: the 60-bit timestamp strictly increases from value to value (KEEP and
      ADVANCE by default), so values sort in generation order.
    - **Reseeding**: by default clock_seq and node are fresh random bits for every UUID
      (RFC 9562 §5.6 SHOULD); with ``random_per_uuid=False`` they behave as in v1.
    - **Clock regression**: KEEP (default) counts on from the last timestamp within
      ``max_ahead_ms`` and restarts at the clock beyond it; RESEED restarts beyond its
      window; RAISE raises.
    - **Counter overflow**: ADVANCE (default) runs ahead of the clock (only past 10 million
      UUIDs per second at 100 ns resolution), at most ``max_ahead_ms``; WAIT stalls; RAISE
      raises.
    - **Thread safety**: one exclusive hold of the state per value or per :meth:`generate`
      block (pure Python: a one-token gate, taken by the slow path under a re-entrant lock;
      the compiled core's fast path runs under the GIL, never beside a holder of the lock).
    - **Fork**: the child takes a new lock, a different clock sequence and (if random) node,
      and discards its buffered random words.
    - **Persistence**: none; see :class:`uuidkit.generators.SharedV6Generator`.

    References: RFC 9562 §5.6, §6.1, §6.2, §6.10.
    """

    __slots__ = ()
    _VERSION = 6
    _DEFAULTS = _DefaultV6Settings()

    @staticmethod
    def _default_config() -> GregorianConfig:
        from uuidkit.generators._gregorian_config import V6_DEFAULT

        return V6_DEFAULT
