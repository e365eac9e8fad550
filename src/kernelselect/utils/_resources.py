"""One memory guard for every entry point that allocates from its arguments.

Each such entry point estimates the bytes it is about to allocate (n × c for a
Nyström factor, n × D for random features, the grid of a circulant column, …)
and calls :func:`check_allocation` before it allocates anything. An estimate above
the limit raises ``ValueError`` stating the estimate, the limit and how to proceed,
instead of a multi-gigabyte allocation that swaps, is killed or fails half-way.

The limit is the setting ``max_bytes`` of :mod:`kernelselect._config`
(:func:`~kernelselect._config.max_bytes`: ``set_config``, the environment variable
``KERNELSELECT_MAX_BYTES``, or the default of 4 GiB; the reasons are there).
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from ._config import ENV_MAX_BYTES, max_bytes

__all__ = ["max_bytes", "check_allocation", "format_bytes", "trace_allocations"]


_trace: list[tuple[float, str]] | None = None


@contextlib.contextmanager
def trace_allocations() -> Iterator[list[tuple[float, str]]]:
    """Record every estimate :func:`check_allocation` sees inside the block, as
    (bytes, what); for the tests that hold the estimates against measured memory."""
    global _trace
    saved, _trace = _trace, []
    try:
        yield _trace
    finally:
        _trace = saved


def format_bytes(nbytes: float) -> str:
    """A short human form: 18.6 GiB, 512 MiB, 3 KiB, 12 B."""
    n = float(nbytes)
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def check_allocation(nbytes: float, what: str, hint: str | None = None) -> int:
    """Raise ``ValueError`` when a planned allocation exceeds :func:`max_bytes`.

    Parameters
    ----------
    nbytes : int or float
        Estimated bytes (may be astronomically large; computed in Python ints or
        floats so that it cannot overflow).
    what : str
        What would be allocated, e.g. ``"the Nyström block C = K(X, landmarks), 50000 × 50000"``.
    hint : str, optional
        How to proceed with less memory (a smaller size, a streaming method).

    Returns
    -------
    nbytes : int
        The estimate, when it is within the limit.
    """
    nbytes = float(nbytes)
    if _trace is not None:
        _trace.append((nbytes, what))
    limit = max_bytes()
    if nbytes > limit:
        lead = f"{hint[:1].upper()}{hint[1:].rstrip('.')}, or raise" if hint else "Raise"
        raise ValueError(
            f"{what} needs about {format_bytes(nbytes)}, more than the limit of "
            f"{format_bytes(limit)}. {lead} the limit with "
            f"kernelselect.set_config(max_bytes=...) or the environment variable "
            f"{ENV_MAX_BYTES}."
        )
    return int(nbytes)
