"""A generator made without a configuration is the generator of the default configuration.

Such a generator is built from the default values as plain attributes
(``uuidkit.generators.v7.DEFAULT_SETTINGS``, ``gregorian._DefaultSettings`` and
``_DefaultV6Settings``) rather than from the configuration dataclass, so that ``uuid7()``,
``uuid1()``, ``uuid6()`` and ``uuidkit gen`` never load :mod:`dataclasses` (tests/test_startup.py
checks that). These tests check the shortcut changes nothing a user sees: the plain values
equal the dataclass's field by field, ``config`` is the real dataclass, both generators make
the same values from the same clock and random source, and the configuration classes are
still importable, picklable dataclasses from their public modules.

References: RFC 9562 §5.1, §5.6, §6.2.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from gen_fakes import FakeClock, seeded_bytes

import uuidkit.generators
import uuidkit.generators.gregorian as gregorian_module
import uuidkit.generators.v7 as v7_module
from uuidkit.generators import (
    DEFAULT_V7,
    GregorianConfig,
    V1Generator,
    V6Generator,
    V7Config,
    V7Generator,
)
from uuidkit.generators.gregorian import V6_DEFAULT

#: (generator class, the plain values it is built from without a config, the dataclass
#: those values stand for).
CASES: dict[str, tuple[Any, Any, Any]] = {
    "v7": (V7Generator, v7_module.DEFAULT_SETTINGS, V7Config()),
    "v1": (V1Generator, gregorian_module._DefaultSettings(), GregorianConfig()),
    "v6": (V6Generator, gregorian_module._DefaultV6Settings(), V6_DEFAULT),
}
BY_VERSION = pytest.mark.parametrize("case", list(CASES))


@BY_VERSION
def test_the_plain_values_are_the_default_configuration_field_by_field(case: str) -> None:
    _, settings, config = CASES[case]
    for field in dataclasses.fields(config):
        assert getattr(settings, field.name) == getattr(config, field.name), field.name


def test_the_v7_derived_lengths_agree() -> None:
    settings, config = v7_module.DEFAULT_SETTINGS, V7Config()
    assert (settings.counter_length, settings.tail_length) == (
        config.counter_length,
        config.tail_length,
    )


def test_each_gregorian_version_builds_from_its_own_defaults() -> None:
    assert type(V1Generator._DEFAULTS) is gregorian_module._DefaultSettings
    assert type(V6Generator._DEFAULTS) is gregorian_module._DefaultV6Settings


@BY_VERSION
def test_config_is_the_default_dataclass_made_once(case: str) -> None:
    kind, _, config = CASES[case]
    generator = kind()
    assert dataclasses.is_dataclass(generator.config)
    assert generator.config == config
    assert generator.config is generator.config
    given = dataclasses.replace(config, max_wait_ms=7)
    assert kind(given).config is given


def test_the_v6_default_config_is_the_shared_constant() -> None:
    assert V6Generator().config is V6_DEFAULT


def test_the_default_v7_config_supports_what_dataclass_users_call() -> None:
    config = DEFAULT_V7.config
    assert config == V7Config()
    changed = dataclasses.replace(config, fraction_bits=4)
    assert changed.fraction_bits == 4 and V7Generator(changed).config is changed
    assert dataclasses.asdict(config)["increment_bits"] == 48
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.fraction_bits = 1  # type: ignore[misc]


def _values(make: Callable[..., Any], config: object) -> list[int]:
    """Values through same-tick runs, new ticks, a clock regression and a block."""
    clock = FakeClock()
    arguments = () if config is None else (config,)
    generator = make(
        *arguments,
        clock=clock,
        random_bytes=seeded_bytes(13),
        sleep_ns=clock.sleep,
        monotonic_ns=clock.monotonic,
    )
    values = [generator().int for _ in range(5)]
    for step_ns in (1_000_000, 250, 3_000_000, -2_000_000, 5_000_000):
        clock.advance(step_ns)
        values += [generator().int for _ in range(3)]
    values += [value.int for value in generator.generate(20)]
    return values


@BY_VERSION
def test_a_generator_without_config_makes_the_values_of_the_default_config(case: str) -> None:
    kind, _, config = CASES[case]
    assert _values(kind, None) == _values(kind, config)


@pytest.mark.parametrize(
    ("module", "name"),
    [(v7_module, "V7Config"), (gregorian_module, "GregorianConfig")],
)
def test_the_config_classes_stay_in_their_public_modules(module: Any, name: str) -> None:
    assert name in dir(module)
    config_class = getattr(module, name)
    assert config_class is getattr(uuidkit.generators, name)
    value = config_class(max_wait_ms=5)
    assert pickle.loads(pickle.dumps(value)) == value
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        module.missing  # noqa: B018
