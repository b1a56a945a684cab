"""The process-wide generator functions behave exactly like plain functions, on both paths.

``uuidkit.uuid7`` and its siblings are what users hand to frameworks as a column default
(``UUIDField(default=uuidkit.uuid7)``, ``Column(Uuid, default=uuidkit.uuid7)``). Those
frameworks, pickle and :mod:`copy` decide what to do with a default by its type: a function
or builtin function is written as ``module.qualname``, anything iterable is iterated (an
endless generator would never end). So each public generator function is a function or a
builtin function, named by its public import path, not iterable, and carries no public
method that could touch the shared generator's state.

References: RFC 9562 §5.1, §5.4, §5.6, §5.7, §5.8, §6.2 (monotonicity of the shared
generators).
"""

from __future__ import annotations

import copy
import importlib
import pickle
import types
from collections.abc import Callable
from typing import Any

import pytest

import uuidkit
from uuidkit import _accel
from uuidkit.generators import defaults, pg18

#: Every process-wide generator function: public module, name, version of its values.
PUBLISHED: list[tuple[str, str, int]] = [
    ("uuidkit", "uuid1", 1),
    ("uuidkit", "uuid4", 4),
    ("uuidkit", "uuid6", 6),
    ("uuidkit", "uuid7", 7),
    ("uuidkit", "uuid8", 8),
    ("uuidkit.generators", "uuid1", 1),
    ("uuidkit.generators", "uuid6", 6),
    ("uuidkit.generators", "uuid7", 7),
    ("uuidkit.generators", "uuid7_pg18", 7),
]
IDS = [f"{module}.{name}" for module, name, _ in PUBLISHED]


def _function(module: str, name: str) -> Callable[..., Any]:
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


@pytest.mark.parametrize(("module", "name", "version"), PUBLISHED, ids=IDS)
def test_is_a_function_or_builtin_function(module: str, name: str, version: int) -> None:
    function = _function(module, name)
    # The types Django's migration writer serializes as a reference, and copy treats as atomic.
    assert type(function) in (types.FunctionType, types.BuiltinFunctionType)
    if _accel.PURE_REQUESTED:
        assert type(function) is types.FunctionType
    if type(function) is types.BuiltinFunctionType:  # like len: bound to its module
        assert function.__self__ is _accel.SPEEDUPS
    assert function().version == version


@pytest.mark.parametrize(("module", "name", "version"), PUBLISHED, ids=IDS)
def test_named_by_an_importable_public_path(module: str, name: str, version: int) -> None:
    function = _function(module, name)
    assert function.__name__ == function.__qualname__ == name
    assert not function.__module__.rpartition(".")[2].startswith("_"), function.__module__
    # What pickle and Django do with the name: import the module, look the name up.
    home = importlib.import_module(function.__module__)
    assert getattr(home, function.__qualname__) is function


@pytest.mark.parametrize(("module", "name", "version"), PUBLISHED, ids=IDS)
def test_pickle_and_copy_give_the_same_function(module: str, name: str, version: int) -> None:
    function = _function(module, name)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(function, protocol)) is function
    assert copy.copy(function) is function
    assert copy.deepcopy(function) is function
    assert copy.deepcopy({"default": function})["default"] is function


@pytest.mark.parametrize(("module", "name", "version"), PUBLISHED, ids=IDS)
def test_not_iterable(module: str, name: str, version: int) -> None:
    function = _function(module, name)
    with pytest.raises(TypeError):
        iter(function)  # type: ignore[call-overload]


@pytest.mark.parametrize(("module", "name", "version"), PUBLISHED, ids=IDS)
def test_no_public_attribute_reaches_the_shared_state(module: str, name: str, version: int) -> None:
    # reset(), enter(), draw() and the like live on generators a caller creates; on the
    # shared one they would let any caller move every other caller's values backwards.
    function = _function(module, name)
    assert [attribute for attribute in dir(function) if not attribute.startswith("_")] == []


def test_each_default_generator_answers_next_with_its_published_function() -> None:
    # generator.next is the same function: no second object holds the shared state.
    assert defaults.DEFAULT_V1.next is uuidkit.uuid1
    assert defaults.DEFAULT_V6.next is uuidkit.uuid6
    assert defaults.DEFAULT_V7.next is uuidkit.uuid7


def test_the_published_functions_share_their_generator_state() -> None:
    # RFC 9562 §6.2: values of one generator increase, whichever name produced them.
    values = []
    for _ in range(100):
        values += [uuidkit.uuid7(), defaults.DEFAULT_V7(), defaults.DEFAULT_V7.next()]
    assert values == sorted(values) and len(set(values)) == len(values)
    pg_values = [pg18.uuid7_pg18() if i % 2 else pg18.DEFAULT_PG18_V7() for i in range(200)]
    assert pg_values == sorted(pg_values) and len(set(pg_values)) == len(pg_values)


@pytest.mark.skipif(_accel.SPEEDUPS is None, reason="the compiled module is not in use")
def test_the_compiled_defaults_cannot_be_rebound_to_another_generator() -> None:
    from uuidkit.generators.gregorian import V1Generator
    from uuidkit.generators.v7 import V7Generator

    assert uuidkit.uuid1 is defaults.uuid1 and uuidkit.uuid7 is defaults.uuid7  # published
    with pytest.raises(RuntimeError, match="already published"):
        _accel.SPEEDUPS._publish_default_v7(V7Generator().next)
    core = V1Generator()._engine.core
    with pytest.raises(RuntimeError, match="already published"):
        _accel.SPEEDUPS._publish_default_gregorian(core, print)


def test_a_generators_own_next_is_not_iterable_either() -> None:
    # A generator a caller creates keeps its controls, but its next() is no sequence.
    from uuidkit.generators import V1Generator, V6Generator, V7Generator

    for generator in (V7Generator(), V6Generator(), V1Generator()):
        with pytest.raises(TypeError):
            iter(generator.next)  # type: ignore[call-overload]
        assert generator.next().version == generator().version
