"""Placeholder: sub-commands are registered here by their owning issue."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add this module's sub-commands to ``subparsers``."""
