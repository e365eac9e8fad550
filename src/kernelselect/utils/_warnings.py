"""Warnings raised on the user's behalf point at the user's line."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["ApproximationWarning", "ConvergenceWarning", "warn_user", "renamed_attribute"]


class ApproximationWarning(UserWarning):
    """A fitted model is a coarser approximation than its own rule asks for.

    The memory limit held it back, so it may be less accurate than the model that was
    asked for; the message names the ways to a larger one."""


#: the package's folder (this module sits in its utils/)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped before its tolerance was met.

    The model it returns is the last iterate, less accurate than asked (its details say
    how much)."""


def warn_user(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` with the stack level of the first frame outside kernelselect,
    however deep inside the package the warning is raised (a selection called by
    ``select_kernel``, by an estimator's ``fit``, by the command line): the warning
    names the caller's file and line, and filters on the caller's module apply."""
    level = 2                               # 1 is this function, 2 its caller
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def renamed_attribute(module: str, name: str, renamed: Mapping[str, str],
                      namespace: Mapping[str, Any]) -> Any:
    """A module's ``__getattr__`` for names it no longer uses: the value of the new
    name from ``namespace``, with a ``FutureWarning`` naming the replacement, or the
    usual ``AttributeError`` for a name that never existed."""
    new = renamed.get(name)
    if new is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warn_user(f"{module}.{name} is deprecated and will be removed in a future release; "
              f"use {module}.{new} (the same object).", FutureWarning)
    return namespace[new]
