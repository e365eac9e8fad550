"""Thread policy: how many OpenMP and BLAS threads a piece of work gets.

Every compiled kernel, FFT and BLAS/LAPACK call of the package asks this module,
given the amount of work, instead of deciding for itself (the pattern of
scikit-learn's ``utils/_openmp_helpers``):

- OpenMP kernels over a block of the kernel matrix (:func:`block_workers`): the
  caller's ``workers`` when given; otherwise OpenMP's default team, except one thread
  for blocks of fewer than :data:`SMALL_BLOCK` entries, where starting a parallel
  region costs more than it saves (far more on a busy machine, with threads spinning
  for a core).
- FFTs (:func:`fft_threads`): at most one thread per :data:`MIN_POINTS_PER_THREAD`
  points.
- BLAS/LAPACK: one thread below :data:`SMALL_FLOPS` floating-point operations
  (:func:`blas_for_flops`); one thread around compiled kernels that call BLAS from
  inside their own OpenMP loops (:func:`one_blas_thread`); at most the caller's
  ``workers`` around a whole selection (:func:`blas_threads`).

The thread counts never change a result: the compiled kernels split their work
into blocks fixed by the data, not by the number of threads.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, ContextManager

from threadpoolctl import ThreadpoolController

from ._validation import check_workers

__all__ = [
    "SMALL_BLOCK",
    "MIN_POINTS_PER_THREAD",
    "SMALL_FLOPS",
    "block_workers",
    "block_threads",
    "fft_threads",
    "blas_for_flops",
    "blas_threads",
    "one_blas_thread",
]

#: kernel-matrix blocks with fewer entries than this run on one OpenMP thread when
#: ``workers`` is None
SMALL_BLOCK = 2**16

#: FFTs use at most one thread per this many points
MIN_POINTS_PER_THREAD = 2**16

#: BLAS/LAPACK calls below this many floating-point operations run on one thread.
#: OpenBLAS threads wait for work by spinning, so on a machine whose other cores are
#: busy a threaded call waits for its partner thread to be scheduled: on 2 cores
#: with other processes running, eigh of a c×c matrix took 652 ms (c = 200),
#: 5.0 s (400), 0.73 s (800) and 4.2 s (1600) on two threads against 2.9 ms, 33 ms,
#: 0.21 s and 1.2 s on one. The Gram-sized problems of the stand-ins (c ≤ ~2000)
#: stay on one thread; only the large dense factorisations of the exact path use
#: threaded LAPACK.
SMALL_FLOPS = 1e10

_controller = None
_controller_lock = threading.Lock()


def _blas_controller() -> ThreadpoolController:
    """One threadpoolctl controller over the BLAS libraries, created on first use
    (after numpy and scipy have loaded theirs), so that a limit costs microseconds."""
    global _controller
    if _controller is None:
        with _controller_lock:
            if _controller is None:
                _controller = ThreadpoolController()
    return _controller


def block_workers(n_entries: float, workers: int | None) -> int | None:
    """``workers`` for a kernel block of ``n_entries`` entries: 1 for small blocks
    when the caller left ``workers`` at None, else ``workers`` unchanged."""
    if workers is None and n_entries < SMALL_BLOCK:
        return 1
    return workers


def block_threads(n_entries: float, workers: int | None) -> int:
    """The validated OpenMP thread count for a kernel block of ``n_entries`` entries."""
    return check_workers(block_workers(n_entries, workers))


def fft_threads(workers: int | None, n_points: int) -> int:
    """Validated FFT thread count, at most one thread per MIN_POINTS_PER_THREAD points."""
    threads = check_workers(workers)
    return max(1, min(threads, n_points // MIN_POINTS_PER_THREAD))


def blas_for_flops(flops: float) -> ContextManager[Any]:
    """A context running BLAS/LAPACK on one thread when ``flops`` < SMALL_FLOPS (a
    no-op otherwise)."""
    if flops >= SMALL_FLOPS:
        return contextlib.nullcontext()
    return _blas_controller().limit(limits=1, user_api="blas")


def one_blas_thread() -> ContextManager[Any]:
    """A context running BLAS on one thread (around compiled kernels that call BLAS
    from their own OpenMP threads, and around work run in parallel tasks)."""
    return _blas_controller().limit(limits=1, user_api="blas")


def blas_threads(workers: int | None) -> ContextManager[Any]:
    """A context limiting BLAS/LAPACK to ``workers`` threads; no limit for None."""
    if workers is None:
        return contextlib.nullcontext()
    return _blas_controller().limit(limits=workers, user_api="blas")
