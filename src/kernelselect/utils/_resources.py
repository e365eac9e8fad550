"""One memory guard for every entry point that allocates from its arguments.

Each such entry point estimates the bytes it is about to allocate (n × c for a
Nyström factor, n × D for random features, the grid of a circulant column, …)
and calls :func:`check_allocation` before it allocates anything. An estimate above
the limit raises ``ValueError`` stating the estimate, the limit and how to proceed,
instead of a multi-gigabyte allocation that swaps, is killed or fails half-way.

The limit is the setting ``max_bytes`` of :mod:`kernelselect._config`
(:func:`~kernelselect._config.max_bytes`: ``set_config``, the environment variable
``KERNELSELECT_MAX_BYTES``, or the default of 4 GiB; the reasons are there).

The client of a fit on Dask input
---------------------------------
Dask input is the route for data that do not fit the client's memory, and the client of
such a fit holds only the solver's m × m factors (8m² bytes) and small vectors; the
passes run in the workers. When the number of centres is chosen automatically, the
client's part is therefore held to :func:`dask_client_limit`: the limit when it was
set (``set_config(max_bytes=...)``, ``KERNELSELECT_MAX_BYTES``), else
:data:`DASK_CLIENT_BYTES`, 512 MiB: half of a 1 GB client, the other half left to
the interpreter and its libraries (0.17 GB measured with numpy, scikit-learn,
dask.distributed and the package loaded and a client started), the selection and the
gathered target (8 bytes a row: 80 MB at 10⁷ rows). It caps m near 8000 (7885 at 10⁷
rows of 10 features in chunks of 2²⁰ rows). A number of centres given explicitly is
held to the limit itself, as every other allocation.

An in-memory fit
----------------
Likewise, when the number of centres of an in-memory fit is chosen automatically, the
solve (:func:`kernelselect.solvers._pcg.nystrom_pcg_bytes`: the m × m factors, the
passes' buffers, the sample rows) is held to :func:`memory_fit_limit`: the limit when
it was set, else :data:`MEMORY_FIT_BYTES`, 1.5 GiB, so that a fit the user did not
size stays within 2 GB. The rest of the process measured 0.28 GiB at 2·10⁵ rows of 10
features (the interpreter, numpy, scipy, scikit-learn, the data and the selection:
1.26 GiB peak with a 0.98 GiB factor, ``studies/results/fit_scale.md``). It caps m
near 1.4·10⁴ (8m² bytes of float64 factors), below the centres rule's 2·10⁴ where the
effective dimension exceeds about 1900; without it the default held 3.3 GiB at
2·10⁵ rows.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from ._config import ENV_MAX_BYTES, max_bytes, max_bytes_is_set

__all__ = ["max_bytes", "check_allocation", "format_bytes", "trace_allocations",
           "DASK_CLIENT_BYTES", "dask_client_limit", "MEMORY_FIT_BYTES", "memory_fit_limit"]

#: the client's part of a Dask fit whose centres are chosen automatically, unless the
#: limit was set (module notes)
DASK_CLIENT_BYTES = 512 * 2**20


def _automatic_limit(budget: int) -> int:
    """The limit when it was set, else the smaller of ``budget`` and the limit: what a
    part whose size the library chooses itself may hold."""
    limit = max_bytes()
    return limit if max_bytes_is_set() else min(limit, budget)


def dask_client_limit() -> int:
    """Bytes the client of a Dask fit may hold when m is chosen automatically: the limit
    when it was set, else the smaller of :data:`DASK_CLIENT_BYTES` and the limit."""
    return _automatic_limit(DASK_CLIENT_BYTES)


#: an in-memory solve whose centres are chosen automatically, unless the limit was set
#: (module notes)
MEMORY_FIT_BYTES = 3 * 2**29


def memory_fit_limit() -> int:
    """Bytes an in-memory solve may hold when m is chosen automatically: the limit when
    it was set, else the smaller of :data:`MEMORY_FIT_BYTES` and the limit."""
    return _automatic_limit(MEMORY_FIT_BYTES)


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
