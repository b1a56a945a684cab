"""Warnings that point at the caller's line, however deep inside uuidkit they are raised.

A warning is only useful where the user can act on it: at the line of *their* code that
called into uuidkit. A fixed ``stacklevel`` breaks as soon as the call path changes (the
same warning is raised from a constructor, from the first value, from a subclass), so the
level is found by walking the stack to the first frame outside the package, which is what
Python 3.12's ``skip_file_prefixes`` does (this also runs on 3.11).

References: RFC 9562 §6.3 (the state-file warnings this serves).
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["warn_at_caller"]

#: Every uuidkit source file starts with this (the package directory and a separator).
_PACKAGE_PREFIX = os.path.dirname(os.path.abspath(__file__)) + os.sep


#: CPython's frame access (an implementation detail, feature-tested): without it the
#: warning is attributed to the uuidkit function that raised it.
_getframe = getattr(sys, "_getframe", None)


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)`` attributed to the nearest frame outside uuidkit.

    References: RFC 9562 §6.3.
    """
    if _getframe is None:
        warnings.warn(message, category, stacklevel=2)
        return
    level = 1  # warnings.warn's stacklevel of this function's own frame
    frame = _getframe(0)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_PREFIX):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
