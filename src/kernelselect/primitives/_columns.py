"""Column builders: the Song–Xu multilevel circulant column and random Fourier columns.

Validated wrappers over the compiled kernels in ``kernelselect._mcm`` and
``kernelselect._rff``; each checks its arguments and calls an unchecked core
(``song_xu_unchecked``, ``rff_unchecked``), which the operators call directly with
arguments checked once per data set.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _mcm
from .. import _rff
from ..utils._resources import check_allocation
from ..utils._threads import check_workers, one_blas_thread
from ..utils._kernel_family import Kernel
from ..utils._validation import check_finite, check_matrix, check_vector
from ._kernel_ops import checked_kernel

__all__ = ["song_xu_column", "labeled_rff_column", "rff_features", "song_xu_unchecked",
           "rff_unchecked", "rff_column_unchecked"]

_INT32_MAX = 2**31 - 1


# ---------------------------------------------------------------------------
# Song–Xu multilevel circulant column
# ---------------------------------------------------------------------------


def _check_levels(m: Any) -> np.ndarray:
    """The grid sizes m_s of the p levels of a multilevel circulant matrix as an intp
    array (an int is one level)."""
    if isinstance(m, (numbers.Integral, np.integer)) and not isinstance(m, (bool, np.bool_)):
        m = (m,)
    try:
        levels = list(m)
    except TypeError:
        raise TypeError(f"m must be a sequence of positive integers, got {m!r}.") from None
    if not levels:
        raise ValueError("m must have at least one level, got an empty sequence.")
    out = []
    for s, ms in enumerate(levels):
        if isinstance(ms, (bool, np.bool_)) or not isinstance(ms, (numbers.Integral, np.integer)):
            raise TypeError(f"m[{s}] must be an integer, got {ms!r}.")
        if int(ms) < 1:
            raise ValueError(
                f"m[{s}] = {int(ms)}: every grid size in m must be an integer ≥ 1."
            )
        out.append(int(ms))
    return np.asarray(out, dtype=np.intp)


def _check_grid_memory(grid: np.ndarray, what: str) -> int:
    """The column of Π m float64 entries, refused before allocation when too large."""
    total = 1
    for ms in grid.tolist():
        total *= int(ms)
    check_allocation(8.0 * total, f"{what} on the grid m = {tuple(grid.tolist())} "
                     f"({total} points, float64)",
                     "choose a smaller grid")
    return total


def _check_spacing(h: Any, p: int) -> np.ndarray:
    arr = np.asarray(h)
    if arr.dtype.kind not in "iuf":                     # not bool, complex, object, text
        raise TypeError(f"h must be a positive number or a sequence of them, got {h!r}.")
    if arr.ndim == 0:
        arr = np.full(p, arr, dtype=np.float64)
    if arr.ndim != 1 or arr.shape[0] != p:
        raise ValueError(
            f"h must be a scalar or have one spacing per level of m ({p}), got shape {arr.shape}."
        )
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    values = arr.tolist()                               # p is small: no array temporaries
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise ValueError(f"h must hold finite spacings > 0, got {values}.")
    return arr


def song_xu_column(m: int | npt.ArrayLike, h: float | npt.ArrayLike, gamma: float,
                   kernel: str = "gaussian", workers: int | None = None) -> np.ndarray:
    """First column of the Song–Xu multilevel circulant stand-in for a kernel matrix.

    Parameters
    ----------
    m : int or sequence of p ints ≥ 1
        Grid sizes per level; the matrix has order n = Π_s m_s.
    h : float > 0 or sequence of p floats > 0
        Grid spacing per level (a scalar is used for every level).
    gamma : float > 0
        Kernel parameter.
    kernel : {"gaussian", "laplacian"}
        κ(x) = exp(−γ‖x‖²) or exp(−γ‖x‖₁).
    workers : int or None
        OpenMP threads (None: OpenMP's default; -1: all cores).

    Returns
    -------
    u : ndarray of shape tuple(m), float64
        u_i = Σ_{j ∈ D_{i,1} × … × D_{i,p}} κ((j_s h_s)_s), where D_{i,s} = {0} if
        i_s = 0 and the *set* {i_s, m_s − i_s} otherwise (one element when
        i_s = m_s/2). circ_m[u] (entry (i, j) = u[(i − j) mod m]) is symmetric and
        its eigenvalues are the real ``np.fft.fftn(u)``.

    Notes
    -----
    The multilevel circulant approximation of Song & Xu (J. Complexity 2010), as
    Algorithm 1 of Ding et al. (IEEE TNNLS 2020) builds it, sums κ over a Cartesian
    product of up to 2^p points per entry. Both kernels are products over coordinates, so that sum
    factorises level by level and u = f_1 ⊗ … ⊗ f_p with the short columns of
    1-D factors f_s[0] = 1, f_s[i] = Σ_{j ∈ {i, m_s − i}} κ₁(j·h_s) (κ₁(t) = exp(−γt²)
    or ``exp(−γ|t|)``). The compiled kernel builds the p factors (about
    Σ_s m_s kernel evaluations; f_s[i] = f_s[m_s − i]) and then writes the outer
    product in fixed-size chunks of the flattened output, in parallel: O(n) time,
    one multiply per entry plus p − 1 per row of the last level. The result does
    not depend on ``workers``.

    Examples
    --------
    >>> from kernelselect.lowlevel import song_xu_column
    >>> u = song_xu_column([4], 1.0, 0.5)
    >>> u.round(4).tolist()
    [1.0, 0.6176, 0.1353, 0.6176]
    """
    family, gamma = checked_kernel(kernel, gamma, per_feature=False)
    grid = _check_levels(m)
    spacing = _check_spacing(h, grid.shape[0])
    n_threads = check_workers(workers)
    _check_grid_memory(grid, "the Song–Xu column")
    return song_xu_unchecked(grid, spacing, gamma, family, n_threads)


def song_xu_unchecked(grid: np.ndarray, spacing: np.ndarray, gamma: float, kernel: Kernel,
                      threads: int) -> np.ndarray:
    """:func:`song_xu_column` with no check: ``grid`` an intp array of p sizes ≥ 1,
    ``spacing`` p finite spacings > 0 (float64), γ > 0, ``threads`` ≥ 1, and the memory
    for the Π m entries checked by the caller."""
    out = np.empty(tuple(grid.tolist()), dtype=np.float64)
    _mcm._song_xu_column_into(grid, spacing, gamma, kernel.code, out.reshape(-1),
                              min(threads, _INT32_MAX))
    return out


# ---------------------------------------------------------------------------
# random Fourier columns
# ---------------------------------------------------------------------------


def _check_rff_inputs(X: npt.ArrayLike, W: npt.ArrayLike, b: npt.ArrayLike,
                      y: npt.ArrayLike | None = None, labeled: bool = False
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    X = check_matrix(X, "X")
    n, d = X.shape
    dtype = X.dtype
    W_arr = np.asarray(W)
    if W_arr.ndim == 2 and W_arr.shape[1] < 1:
        raise ValueError(
            f"W has shape {W_arr.shape}: it needs D ≥ 1 columns (one per random feature)."
        )
    W = check_matrix(W, "W", dtype=dtype)
    if W.shape[0] != d:
        raise ValueError(
            f"W has shape {W.shape} but X has {d} features; W must have shape ({d}, D)."
        )
    D = W.shape[1]
    if d > _INT32_MAX or D > _INT32_MAX:
        raise ValueError(f"X.shape[1] and W.shape[1] must stay below 2**31, got {d} and {D}.")
    b = check_vector(b, "b", dtype=dtype)
    if b.shape[0] != D:
        raise ValueError(f"b has {b.shape[0]} entries but W has D = {D} columns; they must match.")
    labels = check_vector(y, "y", n=n, dtype=dtype, allow_none=True) if labeled else None
    return X, W, b, labels


def _run_rff(X: np.ndarray, W: np.ndarray, b: np.ndarray, row_scale: np.ndarray | None,
             scale: float, workers: int | None) -> np.ndarray:
    n, D = X.shape[0], W.shape[1]
    check_allocation(float(n) * D * X.dtype.itemsize,
                     f"the random features of {n} points × {D} frequencies ({X.dtype})",
                     "use fewer random features (n_features) or fewer points")
    return rff_unchecked(X, W, b, scale, check_workers(workers), row_scale)


def rff_unchecked(X: np.ndarray, W: np.ndarray, b: np.ndarray, scale: float, threads: int,
                  row_scale: np.ndarray | None = None) -> np.ndarray:
    """scale · (row_scale_i) · cos(XW + b) (n, D) by the compiled kernel, with no check
    of X, W, b or ``threads``: X (n, d), W (d, D) and b (D,) C-contiguous in one float
    dtype, ``threads`` ≥ 1, the memory for the result checked by the caller. Raises
    ``ValueError`` when xᵀw + b overflows (non-finite X or W show up here too)."""
    n, D = X.shape[0], W.shape[1]
    out = np.empty((n, D), dtype=X.dtype)
    if row_scale is None:
        row_scale = np.empty(0, dtype=X.dtype)
    # Each chunk calls gemm from inside the OpenMP loop: BLAS must not spawn threads.
    with one_blas_thread():
        _rff._rff_columns_into(X, W, b, row_scale, scale, out, min(threads, _INT32_MAX))
    if not np.all(np.isfinite(out)):
        check_finite(X, "X")                # the callers' unchecked inputs, named
        check_finite(W, "W")
        raise ValueError(
            f"xᵀw + b overflows {X.dtype} for some row of X and column of W (largest "
            f"|X| = {float(np.max(np.abs(X))):.3g}, largest |W| = {float(np.max(np.abs(W))):.3g}); "
            "the phases are not representable. Rescale X (e.g. standardise it) or use "
            "smaller frequencies W (a smaller gamma)."
        )
    return out


def labeled_rff_column(X: npt.ArrayLike, y: npt.ArrayLike | None, W: npt.ArrayLike,
                       b: npt.ArrayLike, workers: int | None = None) -> np.ndarray:
    """First column of the randomised labelled multilevel circulant matrix.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Data. float32 input gives float32 output; anything else is computed in
        float64.
    y : array-like of shape (n,) or None
        Labels (±1 for classification, targets for regression); None means
        y_i = 1 (the unlabelled column).
    W : array-like of shape (d, D)
        Random frequencies, D ≥ 1 (drawn from the kernel's spectral density).
    b : array-like of shape (D,)
        Random phases (uniform on [0, 2π]).
    workers : int or None
        OpenMP threads (None: OpenMP's default; -1: all cores).

    Returns
    -------
    u : ndarray of shape (n, D), dtype of X (float32 or float64)
        u_ik = (√2 / D) · y_i · cos(x_iᵀ W[:, k] + b_k). circ_(n,D)[u] is the
        2-level circulant matrix whose eigenvalues are FFT₂(u).

    Notes
    -----
    Randomised multilevel circulant approximation of the kernel matrix for
    kernel selection (Ding et al., AAAI 2018).
    Rows are processed in fixed-size chunks in parallel; per chunk,
    X_chunk·W is one BLAS gemm written straight into the output rows, followed
    at once by the vectorised cos and the scaling, while the rows are in cache.
    The result does not depend on ``workers``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelselect.lowlevel import labeled_rff_column
    >>> u = labeled_rff_column(np.zeros((2, 1)), [1, -1], np.ones((1, 2)), [0, np.pi])
    >>> np.allclose(u, np.sqrt(2) / 2 * np.array([[1, -1], [-1, 1]]))
    True
    """
    X, W, b, labels = _check_rff_inputs(X, W, b, y, labeled=True)
    scale = np.sqrt(2.0) / W.shape[1]
    return _run_rff(X, W, b, labels, scale, workers)


def rff_column_unchecked(X: np.ndarray, W: npt.ArrayLike, b: npt.ArrayLike,
                         workers: int | None = None) -> np.ndarray:
    """``labeled_rff_column(X, None, W, b)`` without the checks of X (the SciPy
    ``check_finite=False`` pattern), for callers that checked X once for a whole γ grid:
    X must already be a finite, C-contiguous float64 or float32 array (e.g. from
    ``check_matrix``). W (d, D) and b (D,) are only made contiguous in X's dtype, an
    O(dD) step."""
    W = np.ascontiguousarray(W, dtype=X.dtype)
    b = np.ascontiguousarray(b, dtype=X.dtype)
    return _run_rff(X, W, b, None, np.sqrt(2.0) / W.shape[1], workers)


def rff_features(X: npt.ArrayLike, W: npt.ArrayLike, b: npt.ArrayLike,
                 workers: int | None = None) -> np.ndarray:
    """Random Fourier features z(x) = √(2/D) · cos(xᵀW + b).

    Parameters
    ----------
    X : array-like of shape (n, d)
        Data. float32 input gives float32 output; anything else is computed in
        float64.
    W : array-like of shape (d, D)
        Random frequencies, D ≥ 1: w ~ N(0, 2γI) for the Gaussian kernel
        exp(−γ‖x − x′‖²), Cauchy(0, γ) entries for the Laplacian.
    b : array-like of shape (D,)
        Random phases, uniform on [0, 2π].
    workers : int or None
        OpenMP threads (None: OpenMP's default; -1: all cores).

    Returns
    -------
    Z : ndarray of shape (n, D), dtype of X (float32 or float64)
        Z_ik = √(2/D) cos(x_iᵀ W[:, k] + b_k); Z Zᵀ approximates the kernel
        matrix (Rahimi & Recht).

    Notes
    -----
    Same fused kernel as :func:`labeled_rff_column`: per row chunk, one BLAS
    gemm, then the vectorised cos and the scale in the same cache-hot pass.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelselect.lowlevel import rff_features
    >>> rff_features(np.zeros((1, 3)), np.ones((3, 2)), [0.0, 0.0]).tolist()
    [[1.0, 1.0]]
    """
    X, W, b, _ = _check_rff_inputs(X, W, b)
    scale = np.sqrt(2.0 / W.shape[1])
    return _run_rff(X, W, b, None, scale, workers)
