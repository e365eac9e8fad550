"""The Nyström machine with its ridge, and its intercept form, chosen by exact
leave-one-out on the model itself.

The model is the one of :mod:`kernelselect.solvers._pcg`: ridge regression on the
Nyström features φ(x) = T⁻ᵀk(Z, x), TᵀT = K_mm + δI. Where n·m² is affordable, it is
solved here for a whole path of candidate ridges α from one eigendecomposition, which
also gives every candidate's exact leave-one-out error on the final model; the machine
keeps the candidate with the smallest one. The constant term takes one of three forms:

* ``"none"``: f = φᵀw, no constant (kernel ridge regression);
* ``"mean"``: the caller centred the targets by their mean ȳ, f = ȳ + φᵀw; the
  constant is left to the kernel (penalised with it) beyond ȳ;
* ``"bias"``: an unpenalised b, f = φᵀw + b (the LSSVM), i.e. ridge regression on the
  centred features φ − μ, μ = Φᵀ1/n, and b = ȳ − μᵀw.

Given several forms, every (form, α) pair is scored and the smallest leave-one-out
error decides both (ties go to the first form given).

Two streamed passes over the rows, K_nm never held:

1. Φᵀ[Φ, 1, Y], block by block of rows: Φ_bᵀ = T⁻ᵀK_bᵀ by a triangular solve, added by
   a rank-b update (2·n·m² flops). Forming Φ block by block keeps the rounding of the
   Gram matrix at 2⁻⁵²·‖Φ‖² ≤ 2⁻⁵²·n; transforming K_nmᵀK_nm by T⁻¹ afterwards would
   amplify it by cond(K_mm + δI).
2. With the Gram matrix of the form's features, ΦᵀΦ = V diag(g) Vᵀ ("none", "mean")
   or Φ_cᵀΦ_c = ΦᵀΦ − nμμᵀ = V diag(g) Vᵀ ("bias"), each row's coordinates
   p_i = Vᵀ(φ_i − μ) (μ = 0 without the bias) give for every α the fitted value and
   the leverage

       f_i = ȳ_b + p_iᵀ diag(1/(g + α)) c,   c = VᵀΦ_(c)ᵀy,
       h_i = 1/n_b + Σ_k p_ik² / (g_k + α),

   (ȳ_b = ȳ and 1/n_b = 1/n with the bias, both 0 without; 2·n·m² flops for p per
   eigendecomposition, 2·n·m·L(t + 2) per form for L candidates). For a linear smoother
   whose refit without row i equals its fit with y_i replaced by that refit's
   prediction, the leave-one-out residual is (y_i − f_i)/(1 − h_i) (Golub, Heath &
   Wahba, Technometrics 1979, the PRESS identity their GCV rotates). Ridge regression
   without a constant and with the unpenalised bias are such smoothers (the hat matrix
   with the bias is 11ᵀ/n + Φ_c(Φ_cᵀΦ_c + αI)⁻¹Φ_cᵀ: the bias is refitted without the
   row too). The ``"mean"`` form is not: its ȳ is an average, not part of the
   minimisation. Without row i its mean moves by δ_i = −(y_i − ȳ)/(n − 1), and ridge
   regression is linear in its targets, so its leave-one-out residual is that of the
   centred targets minus δ_i times the ridge's leave-one-out residual for the constant
   target 1:

       r_i = (e_i − δ_i (1 − (H1)_i)) / (1 − h_i),   e_i = (y_i − ȳ) − f_i,

   where (H1)_i = p_iᵀ diag(1/(g + α)) Vᵀs, s = Φᵀ1, is the fitted value of the
   constant (one more column of the same products). The criterion is the mean squared
   leave-one-out residual, averaged over the outputs when there are several (one α and
   one form for all of them).

The chosen candidate's weights are w = V diag(1/(g + α)) c, the model's β = T⁻¹w and
bias ȳ − μᵀw (0 without it). The jitter δ is the solver's, set by the kernel alone
(:func:`kernelselect.solvers._pcg.jitter_for`), so at every α the model is the one the
conjugate-gradient solver fits. The eigendecomposition is backward
stable: the weights are exact for a Gram matrix perturbed by about 2⁻⁵²·n, relative
2⁻⁵²/λ to the ridge (2·10⁻⁷ at λ = α/n = 10⁻⁹).

Cost: 4·n·m² flops for the passes with one eigendecomposition, 2·n·m² more for the
second ("bias" beside "none" or "mean"), 2·n·m·L(t + 2) per form and about 10·m³ per
eigendecomposition (:func:`loo_flops`); T, the Gram matrices and eigenvectors are
m × m arrays (:func:`loo_bytes`). Determinism: the blocks of rows are fixed by the row
index (powers of two that divide the passes' parts), the Gram matrix is added block
after block in row order (on Dask by a chain of tasks, one per chunk, each adding its
rows to the running sum) and the leave-one-out sums part by part, folded in order, so
Dask and in-memory input give the same bits.
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
from ..utils._lapack import syrk_in_place
from ..utils._resources import max_bytes
from ..utils._threads import blas_for_flops, one_blas_thread
from ._pcg import NystromMachine, factor_upper, jitter_for, streamed_rows
from ._rows import PART_ROWS, Conditioning, NystromRows, fold
from .. import _policy as _rules
# the route's limit and the forms a fit scores are rules (kernelselect._policy)
from .._policy import LOO_FLOPS, intercept_forms

__all__ = ["LOO_FLOPS", "FORMS", "LooSolution", "loo_flops", "loo_bytes", "loo_affordable",
           "intercept_forms", "nystrom_loo", "fit_nystrom_loo"]

#: the forms of the constant term (module notes)
FORMS = ("none", "mean", "bias")
_BLOCK_ENTRIES = 2**20     # entries of a block of Φ formed at a time


def block_rows(m: int) -> int:
    """Rows of a block: a power of two (so that blocks never straddle a part of
    ``PART_ROWS`` rows), about ``_BLOCK_ENTRIES``/m, between 16 and PART_ROWS."""
    return 1 << max(4, min(int(math.log2(PART_ROWS)), int(math.log2(max(1, _BLOCK_ENTRIES // m)))))


def _decompositions(forms: tuple[str, ...]) -> int:
    """Eigendecompositions the forms need: one of ΦᵀΦ ("none", "mean"), one of the
    centred Φ_cᵀΦ_c ("bias")."""
    return int(any(f != "bias" for f in forms)) + int("bias" in forms)


def loo_flops(n: int, m: int, t: int, L: int, forms: tuple[str, ...] = ("none",)) -> float:
    """Flops of the two passes and the m × m factorisations (module notes)."""
    e = _decompositions(forms)
    return (2.0 * n * m * m * (1 + e) + 2.0 * n * m * L * (t + 2) * len(forms)
            + 10.0 * e * float(m) ** 3)


def loo_bytes(m: int, d: int, t: int, L: int, forms: tuple[str, ...] = ("none",)) -> float:
    """Bytes the route holds at once: T, the Gram matrices and their eigenvectors, the
    centring's outer product and the eigensolver's work (m × m each), and the blocks of
    the passes."""
    b, e = block_rows(m), _decompositions(forms)
    return 8.0 * ((3 + 2 * e) * m * m + 3.0 * b * m + 3.0 * b * L * (t + 2) * len(forms)
                  + m * (d + 2 * L * (t + 1) * len(forms) + t + 4))


def loo_affordable(n: int, m: int, d: int, t: int, L: int,
                   forms: tuple[str, ...] = ("none",)) -> bool:
    """Whether the leave-one-out route is taken: within :data:`LOO_FLOPS` and the memory
    guard's limit."""
    return (loo_flops(n, m, t, L, forms) <= _rules.LOO_FLOPS
            and loo_bytes(m, d, t, L, forms) <= max_bytes())


@dataclass
class LooSolution:
    """The machine at the (form, candidate) pair with the smallest leave-one-out error.

    Attributes
    ----------
    coef : ndarray of shape (m, t)
        β at the chosen α.
    intercept : ndarray of shape (t,)
    alphas : ndarray of shape (L,)
        The candidates, ascending.
    index : int
        The chosen one.
    form : str
        The chosen form of the constant term (:data:`FORMS`).
    loo_mse : dict of str to ndarray of shape (L, t)
        Mean squared leave-one-out residual per form scored, candidate and output.
    rss : ndarray of shape (L, t)
        Residual sum of squares on the training rows (the chosen form).
    effective_dimension : ndarray of shape (L,)
        tr H = Σ g/(g + α) (+ 1 with the bias; the chosen form).
    jitter : float
    """

    coef: np.ndarray
    intercept: np.ndarray
    alphas: np.ndarray
    index: int
    form: str
    loo_mse: dict[str, np.ndarray]
    rss: np.ndarray
    effective_dimension: np.ndarray
    jitter: float


@dataclass
class _Form:
    """One form's pass-2 plan: eigenvectors V, the centre u = Vᵀμ (zeros without the
    bias), c = VᵀΦ_(c)ᵀ[y, (1)], the weights of every α as columns of ``Cmat`` (m, L·t′; t′ = t + 1 for
    "mean", whose last column is the constant's), 1/(g + α) as ``D`` (m, L) and ȳ."""

    name: str
    V: np.ndarray
    u: np.ndarray
    c: np.ndarray
    Cmat: np.ndarray
    D: np.ndarray
    ybar: np.ndarray


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
        syrk_in_place(G, Pt, 1.0, lower=True)
        Yb = Y[lo:lo + b]
        B += Pt @ _ones_and(Yb)
        sums += Yb.sum(axis=0)
        squares += np.einsum("ij,ij->j", Yb, Yb)
    return state


def _loo_rows(cond: Conditioning, x: np.ndarray, Y: np.ndarray, F: np.ndarray,
              plan: tuple[Any, ...], workers: int | None) -> list[list[np.ndarray]]:
    """[leave-one-out sums of squares (L, t), residual sums of squares (L, t)] of each
    form of the plan, in turn, of each part of ``PART_ROWS`` rows of x (parts from x's
    first row)."""
    forms, n = plan
    m, t = F.shape[0], Y.shape[1]
    b = block_rows(m)
    out = []
    for a in range(0, x.shape[0], PART_ROWS):
        z = min(x.shape[0], a + PART_ROWS)
        sums = [np.zeros((f.D.shape[1], t)) for f in forms for _ in range(2)]
        for lo in range(a, z, b):
            hi = min(z, lo + b)
            Pt = _features_t(x[lo:hi], cond, F, workers)
            Yb = Y[lo:hi]
            for j, f in enumerate(forms):
                L = f.D.shape[1]
                Qt = f.V.T @ Pt                                   # p_i as columns
                if f.name == "bias":
                    Qt -= f.u[:, None]
                fitted = (Qt.T @ f.Cmat).reshape(hi - lo, L, -1)
                H = (Qt * Qt).T @ f.D + (1.0 / n if f.name == "bias" else 0.0)
                E = (Yb - f.ybar)[:, None, :] - fitted[:, :, :t]
                R = E
                if f.name == "mean":          # ȳ refitted without the row (module notes)
                    R = E + (Yb / (n - 1.0))[:, None, :] * (1.0 - fitted[:, :, t:])
                sums[2 * j] += np.sum((R / (1.0 - H)[:, :, None]) ** 2, axis=0)
                sums[2 * j + 1] += np.sum(E * E, axis=0)
        out.append(sums)
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

    from ..utils._dask import compute_pass, shared

    task = dask.delayed(_gram_chunk, pure=False)

    def build() -> tuple[Any]:
        payload = shared((rows.cond, F))
        state = None
        for x, y, s in zip(rows.X.to_delayed().ravel(), rows.Y.to_delayed().ravel(),
                           rows.starts):
            state = task(state, payload, x, y, int(s))
        return (state,)

    with one_blas_thread():
        return list(compute_pass(build))


def _loo_pass(rows: Any, F: np.ndarray, plan: tuple[Any, ...]) -> list[np.ndarray]:
    """Pass 2: the leave-one-out and residual sums, part by part, folded in order."""
    if isinstance(rows, NystromRows):
        with blas_for_flops(float(rows.n) * F.shape[0] ** 2):
            return fold(_loo_rows(rows.cond, rows.X, rows.Y.reshape(rows.n, -1), F, plan,
                                  rows.workers))
    return fold(rows._parts(_loo_chunk, F, plan))


def _eigh(G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (clipped at 0) and eigenvectors of the symmetric G from its lower
    triangle, G overwritten."""
    m = G.shape[0]
    with blas_for_flops(10.0 * float(m) ** 3):
        g, V = linalg.eigh(G, lower=True, overwrite_a=True, check_finite=False)
    return np.clip(g, 0.0, None), V


def nystrom_loo(rows: Any, alphas: np.ndarray, *, bias: bool | None = None,
                forms: tuple[str, ...] | None = None) -> LooSolution:
    """Fit the Nyström machine on ``rows`` for the candidates ``alphas`` (and forms of
    the constant term) and keep the pair with the smallest leave-one-out error (module
    notes).

    Parameters
    ----------
    rows : NystromRows or DaskNystromRows
        The data, the targets (n, t) and the conditioned centres.
    alphas : ndarray of shape (L,)
        Candidate ridges α > 0.
    bias : bool or None
        The LSSVM's unpenalised bias (``forms=("bias",)``) or none (``("none",)``);
        ignored when ``forms`` is given.
    forms : tuple of str or None
        The forms of the constant term scored (:data:`FORMS`, distinct); ``"mean"``
        takes the targets as centred by their mean.

    Returns
    -------
    LooSolution
    """
    if forms is None:
        forms = ("bias",) if bias else ("none",)
    cond, n = rows.cond, rows.n
    alphas = np.unique(np.asarray(alphas, dtype=np.float64))
    m, L = cond.centres.shape[0], alphas.size
    K = lowlevel.kernel_block(cond.centres, cond.centres, cond.gamma, kernel=cond.kernel)
    F = K.T                                          # Fortran-ordered, symmetric
    jitter = factor_upper(F, F.reshape(-1, order="F")[:: m + 1], jitter_for(m))
    G, B, sums, squares = _gram_pass(rows, F)
    s, rhs = B[:, 0], B[:, 1:]
    t = rhs.shape[1]
    ybar = sums / n
    plain = any(f != "bias" for f in forms)
    centred: np.ndarray | None = None
    if "bias" in forms:                              # Φ_cᵀΦ_c (its lower triangle is read)
        centred = G.copy(order="F") if plain else G
        centred -= np.outer(s, s / n)
    decomposed: dict[bool, tuple[np.ndarray, np.ndarray]] = {}
    if plain:
        decomposed[False] = _eigh(G)
    del G
    if centred is not None:
        decomposed[True] = _eigh(centred)
    del centred
    plans = []
    for name in forms:
        g, V = decomposed[name == "bias"]
        D = 1.0 / (g[:, None] + alphas[None, :])
        if name == "bias":
            c, u, yb = V.T @ (rhs - np.outer(s, ybar)), V.T @ (s / n), ybar
        elif name == "mean":                     # the constant's fitted values beside
            c, u, yb = V.T @ np.column_stack([rhs, s]), np.zeros(m), np.zeros(t)
        else:
            c, u, yb = V.T @ rhs, np.zeros(m), np.zeros(t)
        Cmat = np.ascontiguousarray((c[:, None, :] * D[:, :, None]).reshape(m, -1))
        plans.append(_Form(name, V, u, c, Cmat, D, yb))
    folded = _loo_pass(rows, F, (plans, n))
    loo = {f.name: folded[2 * j] / n for j, f in enumerate(plans)}
    score = np.stack([loo[f.name].mean(axis=1) for f in plans])     # (forms, L)
    flat = int(np.nanargmin(score)) if np.any(np.isfinite(score)) else L - 1
    j, k = divmod(flat, L)
    chosen = plans[j]
    g, V = decomposed[chosen.name == "bias"]
    w = np.asfortranarray(V @ (chosen.c[:, :t] * chosen.D[:, k:k + 1]))
    intercept = ybar - (s / n) @ w if chosen.name == "bias" else np.zeros(t)
    beta = blas.dtrsm(1.0, F, w, lower=0, trans_a=0, overwrite_b=1)
    d_eff = (g[:, None] * chosen.D).sum(axis=0) + (1.0 if chosen.name == "bias" else 0.0)
    return LooSolution(coef=np.ascontiguousarray(beta), intercept=np.asarray(intercept),
                       alphas=alphas, index=k, form=chosen.name, loo_mse=loo,
                       rss=folded[2 * j + 1], effective_dimension=d_eff, jitter=jitter)


def fit_nystrom_loo(X: Any, Y: Any, gamma: float, alphas: np.ndarray, *,
                    centres: np.ndarray, kernel: str = "gaussian", bias: bool = True,
                    forms: tuple[str, ...] | None = None,
                    workers: int | None = None) -> NystromMachine:
    """The Nyström machine on the given centres at the candidate α (and form of the
    constant term) with the smallest leave-one-out error (:func:`nystrom_loo`), X and Y
    in memory (validated by the caller) or row-chunked Dask arrays, as
    :func:`~kernelselect.solvers._pcg.fit_nystrom_pcg`.

    Returns
    -------
    NystromMachine
        One α (the chosen one); ``details`` holds ``solver`` = "eigh", the candidates
        and their leave-one-out errors (``loo``; with several forms, ``loo_forms``: each
        form's), the chosen ``intercept_form``, the chosen α's leave-one-out error
        ``loo_mse`` (per output), its residual sum of squares, GCV score and effective
        dimension, and the jitter.
    """
    rows, Z, _ = streamed_rows(X, Y, gamma, centres, None, kernel, workers)
    sol = nystrom_loo(rows, alphas, bias=bias, forms=forms)
    k, n, m = sol.index, rows.n, int(centres.size)
    d_eff = float(sol.effective_dimension[k])
    rss = sol.rss[k]
    chosen = sol.loo_mse[sol.form]
    details: dict[str, Any] = {
        "method": "nystrom-pcg", "solver": "eigh", "n_centres": m, "iterations": None,
        "residual": None, "converged": True, "passes": 2, "jitter": sol.jitter,
        "alpha": float(sol.alphas[k]), "intercept_form": sol.form,
        "loo": {"alphas": sol.alphas.copy(), "mse": chosen.copy()},
        "loo_mse": chosen[k].copy(), "rss": rss.copy(),
        "effective_dimension": d_eff,
        "gcv": (rss / n) / (1.0 - min(d_eff, n - 1.0) / n) ** 2}
    if len(sol.loo_mse) > 1:
        details["loo_forms"] = {f: v.copy() for f, v in sol.loo_mse.items()}
    return NystromMachine(
        support=Z, support_indices=centres, coef=sol.coef[:, :, None],
        intercept=sol.intercept[:, None], alphas=sol.alphas[k:k + 1].copy(), gamma=gamma,
        kernel=kernel, method="nystrom-pcg", details=details, conditioning=rows.cond)
