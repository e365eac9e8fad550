"""Streamed products with the Nyström block K_nm = K(X, Z) of n rows and m centres.

The conjugate-gradient solver of :mod:`kernelselect.solvers._pcg` needs three
products, each one pass over the rows of X that never holds K_nm (n × m):

- ``normal(V)`` = K_nmᵀ(K_nm V) for V of shape (m, t), one fused pass (each block of
  rows is formed once and used for both products);
- ``cross(Y)`` = K_nmᵀ Y for Y of shape (n, t);
- ``apply(V)`` = K_nm V (predictions k(x, Z)ᵀV of the rows).

:class:`NystromRows` runs them on an in-memory X through the compiled passes of
``kernelselect._nystrom_passes`` (fixed blocks of 64 rows, partial sums added in a
fixed order, so the result does not depend on the number of threads);
:class:`DaskNystromRows` runs the same pass once per chunk of a row-chunked Dask array
and adds the chunks' (m, t) results, and :func:`dask_predict` maps the prediction pass
over the chunks, moved where needed so that each begins at a multiple of the passes'
64-row blocks (:func:`block_chunks`): BLAS's bits for a row can depend on its place in
a product (OpenBLAS 0.3.30 gives the kernel values of the last centres of a 300-centre
block 1 ulp apart for rows at different places), so each row is computed in the
block it has in memory, and Dask predictions have the in-memory bits.

Accuracy: the Gaussian kernel is evaluated from ‖x‖² + ‖z‖² − 2x·z, so every point is
first translated by the centres' mean (K is unchanged by a common translation) and,
when the centres' magnitudes lie outside [2⁻²⁰⁰, 2²⁰⁰], scaled by a power of two with
γ rescaled to match (exact in floating point); the passes do this block by block, so X
itself is never copied.
"""

from __future__ import annotations

import math
from typing import Any
import numpy as np

from .. import _nystrom_passes
from ..primitives._kernel_ops import power_of_two
from ..utils._threads import block_threads, one_blas_thread
from ..kernels import Kernel

__all__ = ["NORMAL", "CROSS", "APPLY", "Conditioning", "NystromRows", "DaskNystromRows",
           "block_chunks", "dask_predict", "pass_bytes", "run_pass"]

NORMAL, CROSS, APPLY = 0, 1, 2
#: rows of a part, the fixed unit of summation of the passes (module notes)
PART_ROWS = 2**16
#: rows of a block of the compiled passes, which begin at multiples of it
BLOCK_ROWS = _nystrom_passes._pass_rows()


class Conditioning:
    """The translation, power-of-two scale and rescaled γ shared by every pass.

    The scale is the library's one conditioning step
    (:func:`~kernelselect.primitives._kernel_ops.power_of_two`, as
    :class:`~kernelselect.primitives._kernel_ops.Points` takes it), over the centres and
    the data's bounds, since the passes meet rows that are not centres; the translation
    is the centres' mean for either kernel.

    Parameters
    ----------
    centres : ndarray of shape (m, d)
    gamma : float
    kernel : {"gaussian", "laplacian"}
    bounds : (ndarray of shape (d,), ndarray of shape (d,)) or None
        The data's column minima and maxima; the scale is chosen so that every
        translated point, not only the centres, lies within [2⁻²⁰⁰, 2²⁰⁰].

    Attributes
    ----------
    shift : ndarray of shape (d,)
        The centres' mean; points are used as (x − shift)·scale.
    scale : float
        A power of two (1.0 unless the magnitudes are extreme).
    centres : ndarray of shape (m, d)
        The centres, shifted and scaled, C-contiguous.
    gamma : float
        γ for the scaled points: γ/scale² (Gaussian) or γ/scale (Laplacian).
    kernel : str
    kernel_code : int
    """

    def __init__(self, centres: np.ndarray, gamma: float, kernel: str,
                 bounds: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        self.shift = np.ascontiguousarray(centres.mean(axis=0), dtype=np.float64)
        moved = centres - self.shift
        spans = [moved] if bounds is None else [
            moved, *(np.asarray(b, dtype=np.float64) - self.shift for b in bounds)]
        exponent, self.gamma = power_of_two(spans, gamma, kernel)
        self.scale = math.ldexp(1.0, -exponent)
        self.centres = np.ascontiguousarray(moved * self.scale)
        family = Kernel.of(kernel, per_feature=False)
        self.kernel = kernel
        self.kernel_code = family.code


def pass_bytes(n: int, m: int, d: int, t: int, threads: int) -> float:
    """Bytes one pass over n rows allocates for t columns: the per-thread blocks of
    kernel rows (64 × m each), the (m, t) partial sums of the fixed row groups and the
    centres transposed (d × m)."""
    groups = _nystrom_passes._pass_groups(n)
    per_thread = _nystrom_passes._pass_buffer_entries(d, m, t)
    return 8.0 * (float(threads) * per_thread + float(groups) * m * t + float(d) * m)


def _compiled(mode: int, X: np.ndarray, cond: Conditioning, V: np.ndarray,
              workers: int | None) -> np.ndarray:
    n, m = X.shape[0], cond.centres.shape[0]
    t = V.shape[1]
    threads = block_threads(float(n) * m, workers)
    if mode == APPLY:
        out = np.empty((n, t))
        partials = np.empty((0, m, t))
    else:
        out = np.empty((m, t))
        partials = np.empty((_nystrom_passes._pass_groups(n), m, t))
    with one_blas_thread():
        _nystrom_passes._nystrom_pass_into(mode, X, cond.shift, cond.scale, cond.centres, V,
                                          cond.gamma, cond.kernel_code, out, partials,
                                          threads)
    return out


def part_results(mode: int, X: np.ndarray, cond: Conditioning, V: np.ndarray,
                 workers: int | None, squares: bool = False) -> list[list[np.ndarray]]:
    """The results of a ``NORMAL`` or ``CROSS`` pass over each part of X's rows (parts of
    :data:`PART_ROWS` rows from X's first row): [K_partᵀ(K_part V)] or, for ``CROSS``,
    [K_partᵀV_part, 1ᵀV_part, and with ``squares`` the column sums of squares]."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    V = np.ascontiguousarray(V, dtype=np.float64)
    out = []
    for a in range(0, X.shape[0], PART_ROWS):
        b = min(X.shape[0], a + PART_ROWS)
        if mode == CROSS:
            Vp = V[a:b]
            item = [_compiled(mode, X[a:b], cond, Vp, workers), Vp.sum(axis=0)]
            if squares:
                item.append(np.einsum("ij,ij->j", Vp, Vp))
            out.append(item)
        else:
            out.append([_compiled(mode, X[a:b], cond, V, workers)])
    return out


def fold(parts: list[list[np.ndarray]]) -> list[np.ndarray]:
    """Σ over parts, added one after the other in order (the fixed association that makes
    every door give the same bits)."""
    total = [np.array(x, dtype=np.float64, copy=True) for x in parts[0]]
    for item in parts[1:]:
        for acc, x in zip(total, item):
            acc += x
    return total


def run_pass(mode: int, X: np.ndarray, cond: Conditioning, V: np.ndarray,
             workers: int | None) -> np.ndarray:
    """One pass over the rows of X (float64, C-contiguous, validated): ``NORMAL``
    K_nmᵀ(K_nm V), ``CROSS`` K_nmᵀ V (V has n rows), both summed over the parts of
    :data:`PART_ROWS` rows in order, or ``APPLY`` K_nm V."""
    V = np.ascontiguousarray(V, dtype=np.float64)
    if mode == APPLY:
        return _compiled(mode, X, cond, V, workers)
    return fold(part_results(mode, X, cond, V, workers))[0]


class NystromRows:
    """The products with K(X, centres) over an in-memory X, one compiled pass each.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64, C-contiguous (validated by the caller)
    Y : ndarray of shape (n, t)
        The targets (used by :meth:`cross_targets`).
    cond : Conditioning
    workers : int or None
        Threads of the passes (None: OpenMP default; one thread for small blocks).
    """

    def __init__(self, X: np.ndarray, Y: np.ndarray, cond: Conditioning,
                 workers: int | None = None) -> None:
        self.X, self.Y = X, Y
        self.cond = cond
        self.workers = workers
        self.n = int(X.shape[0])
        self.passes = 0

    def normal(self, V: np.ndarray) -> np.ndarray:
        """K_nmᵀ(K_nm V), shape (m, t)."""
        self.passes += 1
        return run_pass(NORMAL, self.X, self.cond, V, self.workers)

    def cross_targets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K_nmᵀ[1, Y] of shape (m, t + 1), the column sums 1ᵀY and the sums of squares
        of shape (t,)), in one pass."""
        self.passes += 1
        KtY, sums, squares = fold(part_results(CROSS, self.X, self.cond, _ones_and(self.Y),
                                               self.workers, squares=True))
        return KtY, sums[1:], squares[1:]


def _ones_and(Y: np.ndarray) -> np.ndarray:
    """[1, Y]."""
    Y = Y.reshape(Y.shape[0], -1)
    out = np.empty((Y.shape[0], Y.shape[1] + 1))
    out[:, 0] = 1.0
    out[:, 1:] = Y
    return out


def _normal_chunk(cond: Conditioning, x: np.ndarray, y: np.ndarray, V: np.ndarray
                  ) -> list[list[np.ndarray]]:
    return part_results(NORMAL, x, cond, V, workers=1)


def _cross_chunk(cond: Conditioning, x: np.ndarray, y: np.ndarray) -> list[list[np.ndarray]]:
    return part_results(CROSS, x, cond, _ones_and(y), workers=1, squares=True)


def aligned_chunks(chunks: tuple[int, ...]) -> tuple[int, ...]:
    """Row chunks of about the sizes of ``chunks`` that are multiples of
    :data:`PART_ROWS` (all but the last), so that every chunk holds whole parts."""
    n = int(sum(chunks))
    if all(c % PART_ROWS == 0 for c in chunks[:-1]):
        return tuple(chunks)
    size = PART_ROWS * max(1, round(max(chunks) / PART_ROWS))
    return (size,) * (n // size) + ((n % size,) if n % size else ())


class DaskNystromRows:
    """The same products over row-chunked Dask arrays: each pass is one task per chunk
    of rows (the compiled pass on one thread over each of the chunk's parts), and the
    parts' results, gathered in row order, are added one after the other exactly as in
    memory, so a fit on Dask input gives the bits of the same fit in memory. X and Y are
    rechunked, when needed, so that each chunk holds whole parts of :data:`PART_ROWS`
    rows; X is never gathered.

    Parameters
    ----------
    X : dask array of shape (n, d), one chunk of columns
    Y : dask array of shape (n, t), chunked like the rows of X
    cond : Conditioning
    """

    def __init__(self, X: Any, Y: Any, cond: Conditioning) -> None:
        rows = aligned_chunks(tuple(int(c) for c in X.chunks[0]))
        if rows != tuple(X.chunks[0]):
            X = X.rechunk({0: rows})
        if tuple(Y.chunks[0]) != rows or len(Y.chunks[1]) > 1:
            Y = Y.rechunk({0: rows, 1: -1})
        self.X, self.Y = X, Y
        self.cond = cond
        self.n = int(X.shape[0])
        self.starts = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(int)
        self._passes = 0

    @property
    def passes(self) -> int:
        return self._passes

    def _parts(self, fn: Any, *args: Any) -> list[list[np.ndarray]]:
        import dask

        from ..utils._dask import _chunk_task, compute_pass, shared

        self._passes += 1
        task = dask.delayed(_chunk_task, pure=True)
        xs, ys = self.X.to_delayed().ravel(), self.Y.to_delayed().ravel()

        def build() -> tuple[list[Any]]:
            payload = shared((self.cond, args))
            return ([task(payload, fn, x, y, int(s)) for x, y, s in zip(xs, ys, self.starts)],)

        with one_blas_thread():          # tasks in this process (local schedulers)
            results = compute_pass(build)
        return [part for chunk in results for part in chunk]

    def normal(self, V: np.ndarray) -> np.ndarray:
        return fold(self._parts(_normal_chunk, np.ascontiguousarray(V, dtype=np.float64)))[0]

    def cross_targets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        KtY, sums, squares = fold(self._parts(_cross_chunk))
        return KtY, sums[1:], squares[1:]


def _apply_chunk(x: np.ndarray, cond: Conditioning, coef: np.ndarray, intercept: np.ndarray
                 ) -> np.ndarray:
    out = run_pass(APPLY, np.ascontiguousarray(x, dtype=np.float64), cond, coef, workers=1)
    return out + intercept


def block_chunks(chunks: tuple[int, ...], rows: int = BLOCK_ROWS) -> tuple[int, ...]:
    """Row chunks that begin at multiples of ``rows``: each boundary of ``chunks``
    moved to the nearest multiple (the last chunk ends at n), chunks left empty
    dropped. Chunks that already begin so are returned as they are."""
    n = int(sum(chunks))
    starts = np.cumsum((0,) + tuple(int(c) for c in chunks[:-1]))
    if np.all(starts % rows == 0):
        return tuple(int(c) for c in chunks)
    edges = sorted({int(rows * round(b / rows)) for b in starts[1:]} - {0})
    edges = [0] + [b for b in edges if b < n] + [n]
    return tuple(int(c) for c in np.diff(edges))


def dask_predict(X: Any, cond: Conditioning, coef: np.ndarray, intercept: np.ndarray) -> Any:
    """k(x, Z)β + b for the rows of the Dask array X, as a Dask array of shape (n, t)
    in X's chunks of rows moved to begin at multiples of the passes' blocks
    (:func:`block_chunks`, so that every row gets its in-memory bits; module notes),
    one task per chunk, nothing computed here; the centres and coefficients travel
    once, inside the graph while they are small (``lasting``: a worker lost before the
    caller computes the result costs a task, not the prediction), apart from it beyond."""
    from ..utils._dask import lasting

    t = coef.shape[1]
    chunks = block_chunks(tuple(X.chunks[0]))
    if chunks != tuple(X.chunks[0]):
        X = X.rechunk({0: chunks})
    coef = np.ascontiguousarray(coef, dtype=np.float64)
    return X.map_blocks(_apply_chunk, lasting(cond, cond.centres.nbytes),
                        lasting(coef, coef.nbytes),
                        np.asarray(intercept, dtype=np.float64), dtype=np.float64,
                        chunks=(X.chunks[0], (t,)), meta=np.empty((0, t)))
