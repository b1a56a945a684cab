"""``uuidkit`` with no arguments, ``gen``, ``inspect`` and ``convert``."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["default_command", "register"]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add ``gen``, ``inspect`` and ``convert``."""


def default_command(args: argparse.Namespace) -> int:
    """No arguments: print a fresh UUIDv7 and its decoded fields."""
    raise NotImplementedError
