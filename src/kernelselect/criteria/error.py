"""Ridge-path error estimates: the regularised training error, the in-sample
prediction error, the effective-dimension criterion C1, GCV and the closed-form
leave-one-out error of the LSSVM (binary and one-vs-rest). All need the spectral
forms of the operator and depend on the ridge α."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..operators._base import KernelOperator

from ._base import _comp, _hat, _quad, _sigma, _unit_complement, resolve_label_loss


def ree(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """C_ree = (α/n) yᵀ K_α⁻¹ y: the regularised training error (paper 002, eq. 1).

    Evaluated as (1/n) yᵀ(αK_α⁻¹)y, a quadratic form of g(λ) = α/(λ + α) ∈ (0, 1];
    minimise.
    """
    yv = operator.restrict(y)
    return _quad(operator, _comp(alphas), yv) / operator.n


def ipe(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray, sigma: float | None = None
        ) -> float | np.ndarray:
    """C_ipe = (α²/n) yᵀK_α⁻²y + (σ²/n) tr(K² K_α⁻²) (paper 002, eq. 2).

    σ defaults to 0.01·std(y), as in the paper's experiments; a given σ must be a
    finite number ≥ 0 in the units of y. Minimise.
    """
    yv = operator.restrict(y)
    s = _sigma(yv, sigma)
    n = operator.n
    bias = _quad(operator, _comp(alphas, 2), yv) / n          # (α²/n) yᵀK_α⁻²y
    var = operator.trace(_hat(alphas, 2))
    return bias + s ** 2 / n * var


def c1(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray, sigma: float | None = None
       ) -> float | np.ndarray:
    """C1 = (α²/n) yᵀK_α⁻²y + (σ²/n) tr(K K_α⁻¹): effective-dimension criterion
    (paper 000, eq. 4, exact form). σ defaults to 0.01·std(y). Minimise."""
    yv = operator.restrict(y)
    s = _sigma(yv, sigma)
    n = operator.n
    bias = _quad(operator, _comp(alphas, 2), yv) / n          # (α²/n) yᵀK_α⁻²y
    dof = operator.trace(_hat(alphas, 1))
    return bias + s ** 2 / n * dof


def gcv(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """GCV = n‖(I − S)y‖² / tr(I − S)², S = K K_α⁻¹ (Golub, Heath & Wahba 1979).

    With I − S = α K_α⁻¹ this is n yᵀK_α⁻²y / (tr K_α⁻¹)²; it is evaluated with
    I − S itself (eigenvalues α/(λ + α) ∈ (0, 1]), so that no power of α or of
    K_α⁻¹ over- or underflows. Minimise.
    """
    yv = operator.restrict(y)
    tr, s = _unit_complement(operator, alphas)
    num = _quad(operator, _comp(alphas, 2, s), yv)           # yᵀ(I − S)²y / s²
    return operator.n * num / (tr / s) ** 2


def _loo_sums(operator: KernelOperator, Y: np.ndarray, alphas: np.ndarray,
              row_sums: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Σ over points of ``row_sums(Y_rows, e_rows)`` for the LOO residuals e of the
    LSSVM with bias, target columns Y (n, t); e_rows has shape (m, t, L).

    P = [[K_α, 1], [1ᵀ, 0]] is shared by every column: with ρ = K_α⁻¹1 and
    ν_c = K_α⁻¹y_c, b_c = 1ᵀν_c / 1ᵀρ, a_c = ν_c − ρ b_c and
    (P⁻¹)_ii = (K_α⁻¹)_ii − ρ_i² / 1ᵀρ, the residual of point i for column c is
    e_ic = a_ic / (P⁻¹)_ii (Cawley & Talbot 2003; one diagonal for all columns,
    as in Cawley 2006 for one-vs-rest problems). e is unchanged when K_α⁻¹ is replaced
    by αK_α⁻¹/s (a and (P⁻¹)_ii both scale by α/s), which is what is evaluated: its
    eigenvalues stay in range at any α. The sums go through ``operator.reduce_rows``,
    so a streaming operator never holds an n-vector.
    """
    n, t = Y.shape
    g = _comp(alphas, 1, _unit_complement(operator, alphas)[1])   # αK_α⁻¹/s: same e
    B = np.concatenate([Y, np.ones((n, 1))], axis=1)
    S = operator.quadratic(g, B)                         # [Y 1]ᵀ αK_α⁻¹/s [Y 1], (t+1, t+1, L)
    s11 = S[t, t]                                        # ∝ 1ᵀK_α⁻¹1
    b = S[t, :t] / s11[None, :]                          # 1ᵀK_α⁻¹y_c / 1ᵀK_α⁻¹1, (t, L)

    def residuals(Bb: np.ndarray, gB: np.ndarray | None, dg: np.ndarray) -> np.ndarray:
        assert gB is not None                 # g is given, so is g(K)B
        ky, k1 = gB[:, :t, :], gB[:, t, :]
        # may run in a worker thread of a streaming pass (error states are per thread)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            e = (ky - k1[:, None, :] * b[None, :, :]) / (dg - k1 ** 2
                                                         / s11[None, :])[:, None, :]
            return row_sums(Bb[:, :t], e)

    return operator.reduce_rows(g, B, residuals)


LOO_LOSSES = ("squared", "error_rate", "hybrid", "auto")
#: how reports and plots name each loss
LOSS_WORDS = {"squared": "squared loss", "error_rate": "0-1 loss",
              "hybrid": "0-1 loss + squared tie-break", "auto": "loss by label type"}


def _loo_loss(sums: np.ndarray, n: int, loss: str) -> np.ndarray:
    """From (Σ 0-1 errors, Σ squared residuals / columns) (2, L): with ``"squared"``
    the mean squared residual s, with ``"error_rate"`` the error rate, with
    ``"hybrid"`` the error rate plus s / (n(1 + s)). The added term lies in [0, 1/n),
    below the step 1/n of the error rate, so it orders kernels by error rate first
    and breaks ties (and plateaus) by the smooth PRESS."""
    if loss == "squared":
        return sums[1] / n
    rate = sums[0] / n
    if loss == "error_rate":
        return rate
    s = sums[1] / n
    return rate + s / (n * (1.0 + s))


def eloo(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray, loss: str = "squared"
         ) -> float | np.ndarray:
    """Closed-form leave-one-out error of the LSSVM with bias (Cawley & Talbot 2003).

    P = [[K_α, 1], [1ᵀ, 0]], [a; b] = P⁻¹[y; 0]: b = 1ᵀK_α⁻¹y / 1ᵀK_α⁻¹1 and
    a = K_α⁻¹(y − b1). The LOO residual of point i is e_i = a_i / (P⁻¹)_ii with
    (P⁻¹)_ii = (K_α⁻¹)_ii − (K_α⁻¹1)_i² / (1ᵀK_α⁻¹1).

    ``loss="squared"`` (the criterion ``eloo``, for ±1 labels and real targets
    alike): mean e_i², PRESS/n; ``"error_rate"`` (the criterion
    ``eloo_error_rate``): mean of [y_i(y_i − e_i) ≤ 0] (±1 labels; the LOO
    prediction is y_i − e_i); ``"hybrid"``: the error rate with ties broken by PRESS,
    rate + s/(n(1 + s)), s = mean e_i²; ``"auto"`` (deprecated): the error rate when
    y is ±1, squared otherwise. Minimise.

    e_i is unchanged when K_α⁻¹ is replaced by αK_α⁻¹ (a and (P⁻¹)_ii both scale by
    α), which is what is evaluated: its eigenvalues α/(λ + α) lie in (0, 1].
    """
    yv = operator.restrict(y)
    loss = resolve_label_loss("eloo", loss, yv)
    out = _loo_sums(operator, yv[:, None], alphas, _single_output_sums)
    return _loo_loss(out, operator.n, loss)


def _single_output_sums(Yb: np.ndarray, e: np.ndarray) -> np.ndarray:
    """(Σ 0-1 errors, Σ e²) over rows for one target column: the held-out prediction
    of point i is y_i − e_i, wrong when y_i(y_i − e_i) ≤ 0."""
    yb, e = Yb[:, 0], e[:, 0, :]
    wrong = np.sum(yb[:, None] * (yb[:, None] - e) <= 0.0, axis=0)
    return np.stack([wrong.astype(np.float64), np.sum(e ** 2, axis=0)])


def _one_vs_rest_sums(Yb: np.ndarray, E: np.ndarray) -> np.ndarray:
    """(Σ 0-1 errors of the argmax, Σ_c e_c² / C) over rows for one-vs-rest columns."""
    wrong = np.argmax(Yb[:, :, None] - E, axis=1) != np.argmax(Yb, axis=1)[:, None]
    return np.stack([np.sum(wrong, axis=0).astype(np.float64),
                     np.sum(E ** 2, axis=(0, 1)) / Yb.shape[1]])




def eloo_multiclass(operator: KernelOperator, Y: np.ndarray, alphas: np.ndarray,
                    loss: str = "hybrid") -> float | np.ndarray:
    """Closed-form leave-one-out error of the one-vs-rest LSSVM (Cawley 2006).

    Y (n, C) holds ±1 one-vs-rest targets (+1 in the column of the sample's class).
    All C machines share the bordered matrix P, so one diagonal of P⁻¹ gives every
    residual e_ic (see :func:`_loo_residuals`); the LOO decision values are
    y_ic − e_ic and the LOO prediction is their argmax.

    ``loss="hybrid"`` (the default): the error rate mean [argmax_c (y_ic − e_ic) ≠
    class_i] with ties broken by the mean squared residual over all columns (as in
    :func:`eloo`); ``"error_rate"``: that rate alone; ``"squared"``: mean e_ic².
    Minimise.
    """
    Yv = operator.restrict(Y)
    if Yv.ndim != 2 or Yv.shape[1] < 2:
        raise ValueError("eloo_multiclass needs one-vs-rest targets of shape (n, C), C ≥ 2.")
    out = _loo_sums(operator, Yv, alphas, _one_vs_rest_sums)
    return _loo_loss(out, operator.n, "error_rate" if loss == "auto" else loss)


def eloo_error_rate(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray
                    ) -> float | np.ndarray:
    """Closed-form leave-one-out error rate of the LSSVM with bias: :func:`eloo` with
    the 0-1 loss, mean [y_i(y_i − e_i) ≤ 0] over ±1 labels. Minimise."""
    return eloo(operator, y, alphas, loss="error_rate")


def _check_loss(criterion: str, params: dict[str, Any]) -> dict[str, Any]:
    loss = params.get("loss")
    if loss not in LOO_LOSSES:
        raise ValueError(
            f"criterion {criterion!r}: loss must be 'squared', 'error_rate' or 'hybrid', "
            f"got {loss!r}."
        )
    if loss == "auto":
        multi = criterion.endswith("_multiclass")
        own = "hybrid" if multi else "squared"
        instead = ("loss='hybrid' or loss='error_rate'" if multi else
                   f"loss='squared', or the criterion '{criterion}_error_rate' for the 0-1 loss")
        warnings.warn(
            f"criterion {criterion!r}: loss='auto' is deprecated; each criterion name now has "
            f"one loss ({criterion!r}: {LOSS_WORDS[own]}). Pass {instead}.",
            DeprecationWarning, stacklevel=2)
    return params
