"""The public surface of ``uuidkit.testing`` (architecture.md: public surface)."""

from __future__ import annotations

import types

import uuidkit.testing


def test_all_is_sorted_and_every_name_exists() -> None:
    names = uuidkit.testing.__all__
    assert names == sorted(names, key=lambda name: (not name.isupper(), name))
    for name in names:
        # Defined by uuidkit itself (getattr raises for a missing name; a stray None or a
        # foreign object re-exported by mistake fails here).
        value = getattr(uuidkit.testing, name)
        if isinstance(value, types.ModuleType):
            assert value.__name__ == f"uuidkit.testing.{name}"
        elif callable(value):
            assert value.__module__.startswith("uuidkit."), (name, value.__module__)
        else:
            assert name.isupper() and value, name  # a non-empty constant


def test_every_public_object_documents_its_references() -> None:
    for name in uuidkit.testing.__all__:
        value = getattr(uuidkit.testing, name)
        if callable(value):
            assert "References:" in (value.__doc__ or ""), name
