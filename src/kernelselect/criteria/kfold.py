"""k-fold cross-validation of the LSSVM in closed form: every fold's held-out
residuals from one factorisation of the kernel matrix (needs principal blocks of
K_α⁻¹, which the dense exact operator provides)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.linalg

from ..utils._labels import column_codes
from ..operators._base import KernelOperator
from ._base import _comp, _unit_complement, resolve_label_loss
from .error import _check_loss, _loo_loss, _one_vs_rest_sums, _single_output_sums


def fold_labels(n: int, folds: int, seed: int = 0, strata: np.ndarray | None = None
                ) -> np.ndarray:
    """Fold (0, …, folds−1) of each of n points: a seeded random permutation dealt
    round-robin, so the folds differ in size by at most one. With ``strata`` (class
    codes), the permutation is ordered by stratum first, so every fold receives each
    class in proportion (stratified k-fold)."""
    order = np.random.default_rng(seed).permutation(n)
    if strata is not None:
        order = order[np.argsort(np.asarray(strata)[order], kind="stable")]
    out = np.empty(n, dtype=np.intp)
    out[order] = np.arange(n) % folds
    return out


def _kfold_residuals(operator: KernelOperator, Y: np.ndarray, alphas: np.ndarray, folds: int,
                     seed: int) -> np.ndarray:
    """Held-out residuals E (n, t, L) of k-fold cross-validation of the LSSVM with
    bias, for target columns Y (n, t) in operator order, from one factorisation.

    With P = [[K_α, 1], [1ᵀ, 0]] and [a; b] = P⁻¹[Y; 0] fitted on all points,
    training without the points of fold B leaves the residuals
    E_B = [(P⁻¹)_BB]⁻¹ a_B on them (the block form of the leave-one-out identity:
    An, Liu & Venkatesh, Pattern Recognition 40, 2007; Cawley & Talbot 2004), with
    (P⁻¹)_BB = (K_α⁻¹)_BB − ρ_Bρ_Bᵀ / 1ᵀρ, ρ = K_α⁻¹1. As for the leave-one-out
    residuals, K_α⁻¹ may be replaced by αK_α⁻¹/s (E is unchanged), which is what is
    evaluated. Folds are stratified by class when every target is ±1.
    """
    n, t = Y.shape
    if folds > n:
        raise ValueError(f"folds={folds} is more than the {n} points; pass folds ≤ {n}.")
    g = _comp(alphas, 1, _unit_complement(operator, alphas)[1])
    GB = operator.apply_function(g, np.concatenate([Y, np.ones((n, 1))], axis=1))
    rho = GB[:, t, :]                                    # ∝ K_α⁻¹1, (n, L)
    s11 = rho.sum(axis=0)                                # ∝ 1ᵀK_α⁻¹1
    b = GB[:, :t, :].sum(axis=0) / s11[None, :]          # bias per column, (t, L)
    a = GB[:, :t, :] - rho[:, None, :] * b[None, :, :]
    classification = bool(np.all(np.abs(Y) == 1.0))
    # the class: the column holding +1 (one-vs-rest), or the sign of a single column
    strata = column_codes(Y) if classification else None
    fold_of = fold_labels(n, folds, seed, strata)
    E = np.full_like(a, np.nan)
    for f in range(folds):
        rows = np.flatnonzero(fold_of == f)
        G = operator.block_function(g, rows)             # (b, b, L)
        for j in range(G.shape[2]):
            M = G[:, :, j] - np.outer(rho[rows, j], rho[rows, j]) / s11[j]
            try:
                factor = scipy.linalg.cho_factor(M, check_finite=False)
                E[rows, :, j] = scipy.linalg.cho_solve(factor, a[rows, :, j],
                                                       check_finite=False)
            except (np.linalg.LinAlgError, ValueError):
                pass                                     # singular block: NaN, skipped
    return E


def _check_kfold(criterion: str, params: dict[str, Any]) -> dict[str, Any]:
    if "loss" in params:
        params = _check_loss(criterion, params)
    folds = params.get("folds")
    if isinstance(folds, (bool, np.bool_)) or not isinstance(folds, numbers.Integral) \
            or int(folds) < 2:
        raise ValueError(f"criterion {criterion!r}: folds must be an integer ≥ 2 (the number "
                         f"of cross-validation folds), got {folds!r}.")
    seed = params.get("seed")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) \
            or int(seed) < 0:
        raise ValueError(f"criterion {criterion!r}: seed must be an integer ≥ 0 (it draws "
                         f"the folds), got {seed!r}.")
    return {**params, "folds": int(folds), "seed": int(seed)}


def ekfold(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray, folds: int = 5,
           seed: int = 0, loss: str = "squared") -> float | np.ndarray:
    """Closed-form k-fold cross-validation error of the LSSVM with bias.

    The held-out residuals of every fold come from one factorisation of K
    (:func:`_kfold_residuals`: E_B = [(P⁻¹)_BB]⁻¹ a_B; An, Liu & Venkatesh 2007):
    exactly what refitting the LSSVM k times would give, at the cost of one
    b × b solve per fold and α (b = n/k) after the eigendecomposition. Folds are a
    seeded permutation (``seed``), stratified by class for ±1 targets. ``loss`` as
    for :func:`eloo`: the mean e_i² (``"squared"``, the criterion ``ekfold``), the 0-1
    error of y_i − e_i (``"error_rate"``, the criterion ``ekfold_error_rate``) or the
    hybrid of the two. Needs principal blocks of K_α⁻¹ (the exact kernel matrix).
    Minimise.
    """
    yv = operator.restrict(y)
    loss = resolve_label_loss("ekfold", loss, yv)
    E = _kfold_residuals(operator, yv[:, None], alphas, folds, seed)
    out = _single_output_sums(yv[:, None], E)
    return _loo_loss(out, operator.n, loss)


def ekfold_error_rate(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray,
                      folds: int = 5, seed: int = 0) -> float | np.ndarray:
    """Closed-form k-fold cross-validation error rate of the LSSVM with bias:
    :func:`ekfold` with the 0-1 loss over ±1 labels. Minimise."""
    return ekfold(operator, y, alphas, folds, seed, loss="error_rate")


def ekfold_multiclass(operator: KernelOperator, Y: np.ndarray, alphas: np.ndarray,
                      folds: int = 5, seed: int = 0, loss: str = "hybrid") -> float | np.ndarray:
    """Closed-form k-fold cross-validation error of the one-vs-rest LSSVM.

    The C machines share P, so each fold's block [(P⁻¹)_BB]⁻¹ serves every column
    (:func:`ekfold`; the leave-one-out version is :func:`eloo_multiclass`). Folds are
    stratified by class. ``loss`` as for :func:`eloo_multiclass`. Minimise.
    """
    Yv = operator.restrict(Y)
    if Yv.ndim != 2 or Yv.shape[1] < 2:
        raise ValueError("ekfold_multiclass needs one-vs-rest targets of shape (n, C), C ≥ 2.")
    E = _kfold_residuals(operator, Yv, alphas, folds, seed)
    out = _one_vs_rest_sums(Yv, E)
    return _loo_loss(out, operator.n, "error_rate" if loss == "auto" else loss)
