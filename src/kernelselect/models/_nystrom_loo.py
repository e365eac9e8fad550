"""The Nyström machine with its ridge chosen by exact leave-one-out on the model itself.

The model is the one of :mod:`kernelselect._nystrom_pcg`: ridge regression on the
Nyström features φ(x) = T⁻ᵀk(Z, x), TᵀT = K_mm + δI, with an unpenalised bias (the
LSSVM) or without one. Where n·m² is affordable, it is solved here for a whole path of
candidate ridges α from one eigendecomposition, which also gives every candidate's exact
leave-one-out error on the final model; the machine keeps the candidate with the
smallest one.

Two streamed passes over the rows, K_nm never held:

1. Φᵀ[Φ, 1, Y], block by block of rows: Φ_bᵀ = T⁻ᵀK_bᵀ by a triangular solve, added by
   a rank-b update (2·n·m² flops). Forming Φ block by block keeps the rounding of the
   Gram matrix at 2⁻⁵²·‖Φ‖² ≤ 2⁻⁵²·n; transforming K_nmᵀK_nm by T⁻¹ afterwards would
   amplify it by cond(K_mm + δI).
2. With the centred Gram Φ_cᵀΦ_c = ΦᵀΦ − nμμᵀ = V diag(g) Vᵀ (μ = Φᵀ1/n; without the
   bias μ = 0, ȳ = 0 and no 1/n below), each row's coordinates p_i = Vᵀ(φ_i − μ) give
   for every α the fitted value and the leverage

       f_i = ȳ + p_iᵀ diag(1/(g + α)) c,   c = VᵀΦ_cᵀy,
       h_i = 1/n + Σ_k p_ik² / (g_k + α),

   (2·n·m² flops for p, 2·n·m·L(t + 1) for L candidates). The hat matrix of ridge
   regression with an unpenalised intercept is 11ᵀ/n + Φ_c(Φ_cᵀΦ_c + αI)⁻¹Φ_cᵀ, and
   for any such linear smoother the leave-one-out residual, the model refitted
   without row i (bias included), is (y_i − f_i)/(1 − h_i) (Golub, Heath & Wahba,
   Technometrics 1979, the PRESS identity their GCV rotates). The criterion is the
   mean squared leave-one-out residual, averaged over the outputs when there are
   several (one α for all of them). Targets that the caller centred beforehand
   (``fit_intercept="mean"``) keep that centring: their ȳ is not refitted.

The chosen α's weights are w = V diag(1/(g + α)) c, the model's β = T⁻¹w and bias
ȳ − μᵀw. The jitter δ is that of the solver at the smallest candidate
(:func:`kernelselect._nystrom_pcg.jitter_for`), so at a single α the model is the one
the conjugate-gradient solver fits. The eigendecomposition is backward stable: the
weights are exact for a Gram matrix perturbed by about 2⁻⁵²·n, relative 2⁻⁵²/λ to the
ridge (2·10⁻⁷ at λ = α/n = 10⁻⁹).

Cost: 4·n·m² + 2·n·m·L(t + 1) + about 10·m³ flops (:func:`loo_flops`), and three m × m
arrays (:func:`loo_bytes`). Determinism: the blocks of rows are fixed by the row index
(powers of two that divide the passes' parts), the Gram matrix is added block after
block in row order (on Dask by a chain of tasks, one per chunk, each adding its rows to
the running sum) and the leave-one-out sums part by part, folded in order, so Dask and
in-memory input give the same bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg
from scipy.linalg import blas

from .. import lowlevel
from ..utils._dask import check_rows_finite
from ..utils._resources import max_bytes
from ..utils._threads import blas_for_flops, one_blas_thread
from ._nystrom_pcg import NystromMachine, factor_upper, jitter_for, streamed_rows
from ._nystrom_rows import PART_ROWS, Conditioning, NystromRows, fold

__all__ = ["LOO_FLOPS", "LooSolution", "loo_flops", "loo_bytes", "loo_affordable",
           "nystrom_loo", "fit_nystrom_loo"]

#: the leave-one-out route is taken up to this many flops (:func:`loo_flops`)
LOO_FLOPS = 2e12
_BLOCK_ENTRIES = 2**20     # entries of a block of Φ formed at a time


def block_rows(m: int) -> int:
    """Rows of a block: a power of two (so that blocks never straddle a part of
    ``PART_ROWS`` rows), about ``_BLOCK_ENTRIES``/m, between 16 and PART_ROWS."""
    return 1 << max(4, min(int(math.log2(PART_ROWS)), int(math.log2(max(1, _BLOCK_ENTRIES // m)))))


def loo_flops(n: int, m: int, t: int, L: int) -> float:
    """Flops of the two passes and the m × m factorisations (module notes)."""
    return 4.0 * n * m * m + 2.0 * n * m * L * (t + 1) + 10.0 * float(m) ** 3


def loo_bytes(m: int, d: int, t: int, L: int) -> float:
    """Bytes the route holds at once: T, the Gram matrix and its eigenvectors (m × m
    each), the eigensolver's work and the blocks of the passes."""
    b = block_rows(m)
    return 8.0 * (4.0 * m * m + 3.0 * b * m + 3.0 * b * L * (t + 1) + m * (d + 2 * L * t + t + 4))


def loo_affordable(n: int, m: int, d: int, t: int, L: int) -> bool:
    """Whether the leave-one-out route is taken: within :data:`LOO_FLOPS` and the memory
    guard's limit."""
    return loo_flops(n, m, t, L) <= LOO_FLOPS and loo_bytes(m, d, t, L) <= max_bytes()


@dataclass
class LooSolution:
    """The machine at the candidate with the smallest leave-one-out error.

    Attributes
    ----------
    coef : ndarray of shape (m, t)
        β at the chosen α.
    intercept : ndarray of shape (t,)
    alphas : ndarray of shape (L,)
        The candidates, ascending.
    index : int
        The chosen one.
    loo_mse : ndarray of shape (L, t)
        Mean squared leave-one-out residual per candidate and output.
    rss : ndarray of shape (L, t)
        Residual sum of squares on the training rows.
    effective_dimension : ndarray of shape (L,)
        tr H = Σ g/(g + α) (+ 1 with the bias).
    jitter : float
    """

    coef: np.ndarray
    intercept: np.ndarray
    alphas: np.ndarray
    index: int
    loo_mse: np.ndarray
    rss: np.ndarray
    effective_dimension: np.ndarray
    jitter: float


def _features_t(x: np.ndarray, cond: Conditioning, F: np.ndarray, workers: int | None
                ) -> np.ndarray:
    """Φ_bᵀ = T⁻ᵀK(x, Z)ᵀ of shape (m, b), Fortran-ordered (T in F's upper triangle)."""
    xb = (x - cond.shift) * cond.scale
    K = lowlevel.kernel_block(xb, cond.centres, cond.gamma, kernel=cond.kernel,
                              workers=workers)
    return blas.dtrsm(1.0, F, K.T, lower=0, trans_a=1, overwrite_b=1)


def _ones_and(Y: np.ndarray) -> np.ndarray:
    return np.column_stack([np.ones(Y.shape[0]), Y])


def _gram_rows(state: list[np.ndarray] | None, cond: Conditioning, F: np.ndarray,
               x: np.ndarray, Y: np.ndarray, workers: int | None) -> list[np.ndarray]:
    """The running [Gram (lower triangle, m × m, Fortran), Φᵀ[1, Y], Σy, Σy²] with the
    rows x, Y added block by block."""
    m, t = F.shape[0], Y.shape[1]
    if state is None:
        state = [np.zeros((m, m), order="F"), np.zeros((m, t + 1)), np.zeros(t), np.zeros(t)]
    G, B, sums, squares = state
    b = block_rows(m)
    for lo in range(0, x.shape[0], b):
        Pt = _features_t(x[lo:lo + b], cond, F, workers)
        out = blas.dsyrk(1.0, Pt, beta=1.0, c=G, trans=0, lower=1, overwrite_c=1)
        if not np.shares_memory(out, G):          # pragma: no cover - G is Fortran-ordered
            G[...] = out
        Yb = Y[lo:lo + b]
        B += Pt @ _ones_and(Yb)
        sums += Yb.sum(axis=0)
        squares += np.einsum("ij,ij->j", Yb, Yb)
    return state


def _loo_rows(cond: Conditioning, x: np.ndarray, Y: np.ndarray, F: np.ndarray,
              plan: tuple[Any, ...], workers: int | None) -> list[list[np.ndarray]]:
    """[leave-one-out sums of squares (L, t), residual sums of squares (L, t)] of each
    part of ``PART_ROWS`` rows of x (parts from x's first row)."""
    V, u, Cmat, D, ybar, bias, n = plan
    m, L, t = F.shape[0], D.shape[1], Y.shape[1]
    b = block_rows(m)
    out = []
    for a in range(0, x.shape[0], PART_ROWS):
        z = min(x.shape[0], a + PART_ROWS)
        press, rss = np.zeros((L, t)), np.zeros((L, t))
        for lo in range(a, z, b):
            hi = min(z, lo + b)
            Qt = V.T @ _features_t(x[lo:hi], cond, F, workers)     # p_i as columns
            if bias:
                Qt -= u[:, None]
            fitted = (Qt.T @ Cmat).reshape(hi - lo, L, t)
            H = (Qt * Qt).T @ D + (1.0 / n if bias else 0.0)
            E = (Y[lo:hi] - ybar)[:, None, :] - fitted
            press += np.sum((E / (1.0 - H)[:, :, None]) ** 2, axis=0)
            rss += np.sum(E * E, axis=0)
        out.append([press, rss])
    return out


def _gram_chunk(state: Any, payload: Any, x: Any, y: Any, start: int) -> list[np.ndarray]:
    cond, F = payload
    x = np.asarray(x, dtype=np.float64)
    check_rows_finite(x, range(start, start + x.shape[0]),
                      f", in the chunk of rows {start}..{start + x.shape[0] - 1}")
    Y = np.asarray(y, dtype=np.float64).reshape(x.shape[0], -1)
    with one_blas_thread():
        return _gram_rows(None if state is None else [s.copy(order="K") for s in state],
                          cond, F, x, Y, workers=1)


def _loo_chunk(cond: Conditioning, x: np.ndarray, y: np.ndarray, F: np.ndarray,
               plan: tuple[Any, ...]) -> list[list[np.ndarray]]:
    with one_blas_thread():
        return _loo_rows(cond, x, y.reshape(x.shape[0], -1), F, plan, workers=1)


def _gram_pass(rows: Any, F: np.ndarray) -> list[np.ndarray]:
    """Pass 1 over in-memory rows (``NystromRows``) or a Dask chain (``DaskNystromRows``)."""
    if isinstance(rows, NystromRows):
        with blas_for_flops(float(rows.n) * F.shape[0] ** 2):
            return _gram_rows(None, rows.cond, F, rows.X, rows.Y.reshape(rows.n, -1),
                              rows.workers)
    import dask

    from ..utils._dask import _compute as compute

    payload = dask.delayed((rows.cond, F), traverse=False)
    task = dask.delayed(_gram_chunk, pure=False)
    state = None
    for x, y, s in zip(rows.X.to_delayed().ravel(), rows.Y.to_delayed().ravel(), rows.starts):
        state = task(state, payload, x, y, int(s))
    with one_blas_thread():
        return list(compute(state))


def _loo_pass(rows: Any, F: np.ndarray, plan: tuple[Any, ...]) -> list[np.ndarray]:
    """Pass 2: the leave-one-out and residual sums, part by part, folded in order."""
    if isinstance(rows, NystromRows):
        with blas_for_flops(float(rows.n) * F.shape[0] ** 2):
            return fold(_loo_rows(rows.cond, rows.X, rows.Y.reshape(rows.n, -1), F, plan,
                                  rows.workers))
    return fold(rows._parts(_loo_chunk, F, plan))


def nystrom_loo(rows: Any, alphas: np.ndarray, *, bias: bool) -> LooSolution:
    """Fit the Nyström machine on ``rows`` for the candidates ``alphas`` and keep the one
    with the smallest leave-one-out error (module notes).

    Parameters
    ----------
    rows : NystromRows or DaskNystromRows
        The data, the targets (n, t) and the conditioned centres.
    alphas : ndarray of shape (L,)
        Candidate ridges α > 0.
    bias : bool
        The LSSVM's unpenalised bias, or none.

    Returns
    -------
    LooSolution
    """
    cond, n = rows.cond, rows.n
    alphas = np.unique(np.asarray(alphas, dtype=np.float64))
    m, L = cond.centres.shape[0], alphas.size
    K = lowlevel.kernel_block(cond.centres, cond.centres, cond.gamma, kernel=cond.kernel)
    F = K.T                                          # Fortran-ordered, symmetric
    jitter = factor_upper(F, F.reshape(-1, order="F")[:: m + 1], jitter_for(m, alphas[0] / n))
    G, B, sums, squares = _gram_pass(rows, F)
    s, rhs = B[:, 0], B[:, 1:]
    t = rhs.shape[1]
    ybar = sums / n if bias else np.zeros(t)
    if bias:
        G -= np.outer(s, s / n)                      # Φ_cᵀΦ_c (its lower triangle is read)
        rhs = rhs - np.outer(s, ybar)                # Φ_cᵀy
    with blas_for_flops(10.0 * float(m) ** 3):
        g, V = linalg.eigh(G, lower=True, overwrite_a=True, check_finite=False)
    del G
    g = np.clip(g, 0.0, None)
    c = V.T @ rhs
    u = V.T @ (s / n) if bias else np.zeros(m)
    D = 1.0 / (g[:, None] + alphas[None, :])
    Cmat = np.ascontiguousarray((c[:, None, :] * D[:, :, None]).reshape(m, L * t))
    press, rss = _loo_pass(rows, F, (V, u, Cmat, D, ybar, bias, n))
    loo = press / n
    score = loo.mean(axis=1)
    k = int(np.nanargmin(score)) if np.any(np.isfinite(score)) else L - 1
    w = np.asfortranarray(V @ (c * D[:, k:k + 1]))
    intercept = ybar - (s / n) @ w if bias else np.zeros(t)
    beta = blas.dtrsm(1.0, F, w, lower=0, trans_a=0, overwrite_b=1)
    d_eff = (g[:, None] * D).sum(axis=0) + (1.0 if bias else 0.0)
    return LooSolution(coef=np.ascontiguousarray(beta), intercept=np.asarray(intercept),
                       alphas=alphas, index=k, loo_mse=loo, rss=rss,
                       effective_dimension=d_eff, jitter=jitter)


def fit_nystrom_loo(X: Any, Y: Any, gamma: float, alphas: np.ndarray, *,
                    centres: np.ndarray, kernel: str = "gaussian", bias: bool = True,
                    workers: int | None = None) -> NystromMachine:
    """The Nyström machine on the given centres at the candidate α with the smallest
    leave-one-out error (:func:`nystrom_loo`), X and Y in memory (validated by the
    caller) or row-chunked Dask arrays, as :func:`~kernelselect._nystrom_pcg.fit_nystrom_pcg`.

    Returns
    -------
    NystromMachine
        One α (the chosen one); ``details`` holds ``solver`` = "eigh", the candidates
        and their leave-one-out errors (``loo``), the chosen α's leave-one-out error
        ``loo_mse`` (per output), its residual sum of squares, GCV score and effective
        dimension, and the jitter.
    """
    rows, Z, _ = streamed_rows(X, Y, gamma, centres, None, kernel, workers)
    sol = nystrom_loo(rows, alphas, bias=bias)
    k, n, m = sol.index, rows.n, int(centres.size)
    d_eff = float(sol.effective_dimension[k])
    rss = sol.rss[k]
    details: dict[str, Any] = {
        "method": "nystrom-pcg", "solver": "eigh", "n_centres": m, "iterations": None,
        "residual": None, "converged": True, "passes": 2, "jitter": sol.jitter,
        "alpha": float(sol.alphas[k]),
        "loo": {"alphas": sol.alphas.copy(), "mse": sol.loo_mse.copy()},
        "loo_mse": sol.loo_mse[k].copy(), "rss": rss.copy(),
        "effective_dimension": d_eff,
        "gcv": (rss / n) / (1.0 - min(d_eff, n - 1.0) / n) ** 2}
    return NystromMachine(
        support=Z, support_indices=centres, coef=sol.coef[:, :, None],
        intercept=sol.intercept[:, None], alphas=sol.alphas[k:k + 1].copy(), gamma=gamma,
        kernel=kernel, method="nystrom-pcg", details=details, conditioning=rows.cond)
