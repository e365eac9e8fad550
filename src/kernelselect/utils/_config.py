"""The package's settings: :func:`get_config`, :func:`set_config`, :func:`reset_config`
and :func:`config_context` (the names and roles of scikit-learn's ``_config``).

One setting so far, ``max_bytes``: the largest allocation a single call may plan,
which the memory guard (:func:`kernelselect.utils._resources.check_allocation`) holds every
estimate against. The limit, in bytes, is the first of:

1. the value set by :func:`set_config` (``max_bytes=...``) or, temporarily, by the
   :func:`config_context` context manager;
2. the environment variable ``KERNELSELECT_MAX_BYTES`` (bytes, or a number with a
   suffix K, M, G, T for KiB … TiB, e.g. ``"16G"``);
3. the default: 4 GiB, or half the physical memory when that is smaller.

Why 4 GiB: the largest working sets the library's own defaults create stay well
below it (the exact dense path at its n = 8000 limit holds about 1.5 GB: K, its
factor and the eigenvectors), so no default workflow is refused, while requests
that would hold tens of gigabytes (a 50 000-landmark Nyström factor at n = 50 000
is 18.6 GiB) are stopped before they start. A fixed default also makes the same
call succeed or fail the same way on different machines of ordinary size.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from typing import Any, Iterator

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ENV_MAX_BYTES",
    "get_config",
    "set_config",
    "reset_config",
    "config_context",
    "max_bytes",
    "max_bytes_is_set",
]

DEFAULT_MAX_BYTES = 4 * 2**30
ENV_MAX_BYTES = "KERNELSELECT_MAX_BYTES"

_lock = threading.Lock()
_config: dict[str, int | None] = {"max_bytes": None}
_SUFFIX = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "KIB": 2**10, "M": 2**20, "MB": 2**20,
           "MIB": 2**20, "G": 2**30, "GB": 2**30, "GIB": 2**30, "T": 2**40, "TB": 2**40,
           "TIB": 2**40}


def _physical_memory() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return None


def _default_limit() -> int:
    phys = _physical_memory()
    return min(DEFAULT_MAX_BYTES, phys // 2) if phys else DEFAULT_MAX_BYTES


def _parse_bytes(value: Any, source: str) -> int:
    """A positive int of bytes from an int/float or a string such as "16G"."""
    if isinstance(value, bool):
        raise TypeError(f"{source} must be a number of bytes, got {value!r}.")
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", value)
        unit = match.group(2).upper() if match else None
        if not match or unit not in _SUFFIX:
            raise ValueError(
                f"{source}={value!r} is not a size; give bytes or a number with a suffix "
                "K, M, G or T (e.g. '16G')."
            )
        number = float(match.group(1)) * _SUFFIX[unit]
    else:
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"{source} must be a number of bytes, got {value!r}.") from None
    if not (number >= 1 and number < float(2**63)):
        raise ValueError(f"{source} must be a positive number of bytes below 2**63, got {value!r}.")
    return int(number)


def max_bytes() -> int:
    """The allocation limit in force, in bytes (see the module notes)."""
    value = _config["max_bytes"]
    if value is not None:
        return value
    env = os.environ.get(ENV_MAX_BYTES)
    if env not in (None, ""):
        return _parse_bytes(env, ENV_MAX_BYTES)
    return _default_limit()


def max_bytes_is_set() -> bool:
    """Whether the limit was chosen (by :func:`set_config`, :func:`config_context` or the
    environment variable) rather than left at its default."""
    return _config["max_bytes"] is not None or os.environ.get(ENV_MAX_BYTES) not in (None, "")


def get_config() -> dict[str, Any]:
    """The current settings: ``{"max_bytes": limit in bytes}``."""
    return {"max_bytes": max_bytes()}


def set_config(max_bytes: int | float | str | None = None) -> dict[str, Any]:
    """Set the largest allocation (bytes) a single call may plan.

    Parameters
    ----------
    max_bytes : int, float, str or None
        Bytes, or a string such as ``"16G"``; None leaves the setting unchanged.
        :func:`config_context` sets it for a ``with`` block only.

    Returns
    -------
    previous : dict
        The settings before the call (as :func:`get_config` returned them, with
        ``max_bytes`` None when it came from the environment or the default).

    Examples
    --------
    >>> import kernelselect
    >>> _ = kernelselect.set_config(max_bytes="8G")
    >>> kernelselect.get_config()["max_bytes"] == 8 * 2**30
    True
    >>> kernelselect.reset_config()
    """
    with _lock:
        previous = dict(_config)
        if max_bytes is not None:
            _config["max_bytes"] = _parse_bytes(max_bytes, "max_bytes")
    return previous


def reset_config() -> None:
    """Back to the environment variable / default limit."""
    with _lock:
        _config["max_bytes"] = None


@contextlib.contextmanager
def config_context(max_bytes: int | float | str | None = None) -> Iterator[dict[str, Any]]:
    """Temporarily change the settings of :func:`set_config` inside a ``with`` block.

    Examples
    --------
    >>> import kernelselect
    >>> with kernelselect.config_context(max_bytes=2**20):
    ...     kernelselect.get_config()["max_bytes"]
    1048576
    """
    with _lock:
        saved = dict(_config)
        if max_bytes is not None:
            _config["max_bytes"] = _parse_bytes(max_bytes, "max_bytes")
    try:
        yield get_config()
    finally:
        with _lock:
            _config.update(saved)
