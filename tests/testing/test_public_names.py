"""The public surface of ``uuidkit.testing`` (DESIGN.md example 12)."""

from __future__ import annotations

import uuidkit.testing


def test_all_is_sorted_and_every_name_exists() -> None:
    names = uuidkit.testing.__all__
    assert names == sorted(names, key=lambda name: (not name.isupper(), name))
    for name in names:
        assert getattr(uuidkit.testing, name) is not None


def test_every_public_object_documents_its_references() -> None:
    for name in uuidkit.testing.__all__:
        value = getattr(uuidkit.testing, name)
        if callable(value):
            assert "References:" in (value.__doc__ or ""), name
