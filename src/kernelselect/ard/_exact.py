"""The per-feature objectives on the exact kernel matrix: the mean squared
leave-one-out and k-fold held-out residuals of the LSSVM (:func:`press_exact`,
:func:`press_kfold_exact`) and the negative log evidence of the Gaussian-process
model (:func:`evidence_exact`), each with its analytic gradient in
(log γ₁, …, log γ_d, log α) (the residuals and the adjoint: :mod:`._base`).

The Gaussian-process evidence
-----------------------------
The second objective, :func:`evidence_exact`, is the negative log marginal likelihood
of the Gaussian-process model of the targets with the signal scale profiled out
(Rasmussen & Williams 2006, ch. 5): n log(yᵀK_α⁻¹y) + log det K_α up to constants,
with the gradient tr(G dK_α), G = ½[K_α⁻¹/n − ββᵀ/q] (β = K_α⁻¹y, q = yᵀβ), from the
same Cholesky factor and the same contraction H = G ∘ K.

"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg
import scipy.linalg.lapack

from ..operators._lowrank import shifted_cholesky
from ..primitives._kernel_ops import cholesky_inverse_unchecked
from ..utils._resources import check_allocation
from ..utils._threads import blas_for_flops
from ._base import EvaluationError, distance_contraction, gaussian_block, loo_residuals

__all__ = ["press_exact", "press_kfold_exact", "evidence_exact"]


# --------------------------------------------------------------------------- exact


def _check_exact_memory(n: int) -> None:
    check_allocation(8.0 * 5 * n * n,
                     f"the exact leave-one-out gradient at n={n} (five n × n arrays: K, "
                     "the Cholesky factor and inverse of K + αI, the adjoint and its "
                     "Hadamard product with K)",
                     "use the Nyström stand-in (approximation='nystrom')")


def press_exact(Xs: np.ndarray, Y: np.ndarray, alpha: float, grad: bool = True,
                workers: int | None = None, out: dict[str, Any] | None = None
                ) -> tuple[float, np.ndarray | None]:
    """Mean squared LOO residual of the LSSVM on the exact kernel matrix of the scaled
    features ``Xs`` = X·diag(√γ) (centred), and its gradient in (log γ, log α).

    Returns (value, gradient of shape (d + 1,) or None). Cost: the kernel matrix
    (O(n²d)), one Cholesky factorisation and inverse of K + αI (n³ flops), and for
    the gradient one symmetric rank-n update M̂ diag(ŵ) M̂ (n³) and the contraction
    H x̃ (2n²d). Raises :class:`EvaluationError` when K + αI is not numerically
    positive definite or a residual is undefined. ``out``: a dict that receives the
    residuals (``"residuals"``, shape (n, t)).
    """
    n, d = Xs.shape
    _check_exact_memory(n)
    K = gaussian_block(Xs, Xs, workers)
    M0 = _scaled_inverse(K, alpha)                    # αK_α⁻¹, eigenvalues in (0, 1]
    with blas_for_flops(float(n) ** 3):
        rho = M0.sum(axis=1)
        loo = loo_residuals(M0 @ Y, rho, np.diag(M0).copy())
        if out is not None:
            out["residuals"] = loo.e
        if not grad:
            return loo.value, None
        M0 -= np.outer(rho, rho / loo.s)              # M̂
        B = M0 * np.sqrt(loo.w)[None, :]
        G = scipy.linalg.blas.dsyrk(1.0, B, lower=1)  # M̂ diag(ŵ) M̂ (lower triangle)
        del B
        G = np.tril(G) + np.tril(G, -1).T
        Pu = M0 @ loo.u                               # M̂û
        G -= 0.5 * (loo.a @ Pu.T + Pu @ loo.a.T)
        trace = float(np.trace(G))
        G *= K                                        # H = Ĝ ∘ K
        c = distance_contraction(G, Xs, Xs, symmetric=True)
    gradient = np.empty(d + 1)
    gradient[:d] = -c / alpha
    gradient[d] = trace
    return loo.value, gradient


def press_kfold_exact(Xs: np.ndarray, Y: np.ndarray, alpha: float, fold_of: np.ndarray,
                      grad: bool = True, workers: int | None = None,
                      out: dict[str, Any] | None = None) -> tuple[float, np.ndarray | None]:
    """Mean squared k-fold held-out residual of the LSSVM on the exact kernel matrix
    (the closed form of :func:`kernelselect.criteria.kfold.ekfold`), and its gradient
    in (log γ, log α).

    With M the top-left block of P⁻¹ and a the dual coefficients on all points, the
    residuals of fold B are E_B = (M_BB)⁻¹ a_B (An, Liu & Venkatesh 2007). Writing
    Û_B = (M̂_BB)⁻¹ E_B and E⁽ᴮ⁾, Û⁽ᴮ⁾ for E_B, Û_B placed in the rows of B (zero
    elsewhere), dE_B = M_BB⁻¹(da_B − dM_BB E_B) gives

        df = tr(Ĝ dK_α)/α,   Ĝ = (2/nt) sym(Σ_B (M̂E⁽ᴮ⁾)(M̂Û⁽ᴮ⁾)ᵀ − â (M̂Û)ᵀ),

    which is the leave-one-out Ĝ when every fold holds one point. The sum over folds
    is one product of n × kt matrices, so beyond the factorisation (n³ flops) the
    gradient costs O(n²(kt + d)). ``out`` receives the held-out residuals as for
    :func:`press_exact`.
    """
    n, d = Xs.shape
    t = Y.shape[1]
    _check_exact_memory(n)
    K = gaussian_block(Xs, Xs, workers)
    M0 = _scaled_inverse(K, alpha)
    rho = M0.sum(axis=1)
    s = float(rho.sum())
    if not (np.isfinite(s) and s > 0):
        raise EvaluationError("1ᵀ(αK_α⁻¹)1 is not positive")
    M0Y = M0 @ Y
    b = M0Y.sum(axis=0) / s
    a = M0Y - rho[:, None] * b[None, :]
    M0 -= np.outer(rho, rho / s)                          # M̂
    folds = np.unique(fold_of)
    E = np.empty_like(a)
    Uh = np.empty_like(a)
    for f in folds:
        rows = np.flatnonzero(fold_of == f)
        try:
            factor = scipy.linalg.cho_factor(M0[np.ix_(rows, rows)], check_finite=False)
        except np.linalg.LinAlgError:
            raise EvaluationError("a fold's block of P⁻¹ is not positive definite") from None
        E[rows] = scipy.linalg.cho_solve(factor, a[rows], check_finite=False)
        Uh[rows] = scipy.linalg.cho_solve(factor, E[rows], check_finite=False)
    value = float(np.sum(E * E)) / (n * t)
    if not np.isfinite(value):
        raise EvaluationError("the held-out residuals are not finite")
    if out is not None:
        out["residuals"] = E
    if not grad:
        return value, None
    with blas_for_flops(float(n) * n * folds.size * t):
        Ecat = np.zeros((n, folds.size * t))
        Ucat = np.zeros((n, folds.size * t))
        for j, f in enumerate(folds):
            rows = fold_of == f
            Ecat[rows, j * t:(j + 1) * t] = E[rows]
            Ucat[rows, j * t:(j + 1) * t] = Uh[rows]
        ME, MU = M0 @ Ecat, M0 @ Ucat
        MUsum = MU.reshape(n, folds.size, t).sum(axis=1)           # M̂Û
        G = ME @ MU.T - a @ MUsum.T
        G = (G + G.T) * (1.0 / (n * t))                           # 2·sym(·)/(nt)
        trace = float(np.trace(G))
        G *= K
        c = distance_contraction(G, Xs, Xs, symmetric=True)
    gradient = np.empty(d + 1)
    gradient[:d] = -c / alpha
    gradient[d] = trace
    return value, gradient


def evidence_exact(Xs: np.ndarray, Y: np.ndarray, alpha: float, grad: bool = True,
                   workers: int | None = None) -> tuple[float, np.ndarray | None]:
    """Negative log evidence per point of the Gaussian-process model of the targets,
    the signal scale profiled out, on the exact kernel matrix of the scaled features
    ``Xs`` = X·diag(√γ), and its gradient in (log γ, log α).

    Each centred target column y_c is modelled as N(0, σ²K_α), K_α = K + αI (α the
    noise-to-signal ratio, the ridge of the machines). Maximising over σ² gives
    σ̂² = q_c/n, q_c = y_cᵀK_α⁻¹y_c, and the negative log evidence per point
    (Rasmussen & Williams 2006, §5.4.1, with σ² profiled out), averaged over the t
    columns:

        f = ½ [ (1/t) Σ_c log(2π q_c / n) + (1/n) log det K_α + 1 ].

    With β_c = K_α⁻¹y_c, dq_c = −β_cᵀ dK_α β_c and d log det K_α = tr(K_α⁻¹dK_α), so

        df = tr(G dK_α),   G = ½ [ K_α⁻¹/n − (1/t) Σ_c β_cβ_cᵀ / q_c ],

    ∂f/∂log α = α tr G and ∂f/∂log γ_k = −Σ_ij G_ij K_ij (x̃_ik − x̃_jk)², one GEMM
    (:func:`distance_contraction`). Cost: the kernel matrix, one Cholesky factorisation
    and inverse of K_α (n³ flops), and 2n²d for the contraction. Raises
    :class:`EvaluationError` when K_α is not numerically positive definite or a target
    column is constant.
    """
    n, d = Xs.shape
    _check_exact_memory(n)
    Yc = Y - Y.mean(axis=0)
    t = Yc.shape[1]
    K = gaussian_block(Xs, Xs, workers)
    with blas_for_flops(float(n) ** 3):
        try:
            L = shifted_cholesky(K, alpha)[0]
        except np.linalg.LinAlgError:
            raise EvaluationError(f"K + αI is not numerically positive definite "
                                  f"(α={alpha:g})") from None
        logdet = 2.0 * float(np.sum(np.log(np.diag(L))))
        beta = scipy.linalg.cho_solve((L, True), Yc, check_finite=False)
        q = np.einsum("ic,ic->c", Yc, beta)
        if not np.all(q > 0):
            raise EvaluationError("a target column is constant (yᵀK_α⁻¹y = 0)")
        value = 0.5 * (float(np.mean(np.log(2.0 * np.pi * q / n))) + logdet / n + 1.0)
        if not np.isfinite(value):
            raise EvaluationError("the log evidence is not finite")
        if not grad:
            return value, None
        G = _inverse_from_cholesky(L)
        G *= 0.5 / n
        Bq = beta / np.sqrt(2.0 * t * q)[None, :]
        G -= Bq @ Bq.T
        trace = float(np.trace(G))
        G *= K
        c = distance_contraction(G, Xs, Xs, symmetric=True)
    gradient = np.empty(d + 1)
    gradient[:d] = -c
    gradient[d] = alpha * trace
    return value, gradient


def _inverse_factor(K: np.ndarray, alpha: float) -> np.ndarray:
    """T = L⁻ᵀ (upper triangular) for the Cholesky factor K + αI = LLᵀ (K untouched),
    by the library's compiled factorisation and triangular inverse
    (:func:`~kernelselect.primitives._kernel_ops.cholesky_inverse_unchecked`, LAPACK's
    ?potrf and ?trtri without the interpreter lock). It reads the upper triangle, so it
    is handed Kᵀ + αI: the entries of K's lower triangle, which LAPACK's lower-triangle
    routines read, and the bits of ``dpotrf(K + αI, lower=1)`` then ``dtrtri``. Raises
    :class:`EvaluationError` when K + αI is not numerically positive definite."""
    n = K.shape[0]
    A = np.ascontiguousarray(K.T)
    A.flat[:: n + 1] += alpha
    with blas_for_flops(float(n) ** 3):
        T = cholesky_inverse_unchecked(A)
    if T is None:
        raise EvaluationError(f"K + αI is not numerically positive definite (α={alpha:g})")
    return T


def _inverse_of_factor(T: np.ndarray) -> np.ndarray:
    """K_α⁻¹ = TTᵀ, both triangles, from T = L⁻ᵀ of :func:`_inverse_factor` (T is
    overwritten): LAPACK's ?lauum on T's column-major view L⁻¹, the product (L⁻¹)ᵀL⁻¹
    that ?potri forms after its triangular inverse (n³/3 flops, a third of a GEMM)."""
    with blas_for_flops(float(T.shape[0]) ** 3):
        Ainv, info = scipy.linalg.lapack.dlauum(T.T, lower=1, overwrite_c=1)
    if info != 0:
        raise EvaluationError("the inverse of K + αI failed")
    return _both_triangles(Ainv)


def _inverse_from_cholesky(L: np.ndarray) -> np.ndarray:
    """K_α⁻¹, both triangles, from the lower factor L of
    :func:`~kernelselect.operators._lowrank.shifted_cholesky` (overwritten): LAPACK's
    ?potri, the triangular inverse and the product of :func:`_inverse_of_factor`.

    The evidence factors K_α this way, not by :func:`_inverse_factor`, because it needs
    L itself (log det K_α = 2 Σ log L_ii and the solve K_α⁻¹y); read from L⁻ᵀ instead,
    both round differently (the evidence by 3e-16, its gradient by 4e-13 relative, the
    searched γ by 3e-9 on 200 rows of diabetes)."""
    Ainv, info = scipy.linalg.lapack.dpotri(L, lower=1, overwrite_c=1)
    if info != 0:
        raise EvaluationError("the inverse of K + αI failed")
    return _both_triangles(Ainv)


def _both_triangles(A: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose lower triangle is A's."""
    M = np.tril(A)
    M += np.tril(A, -1).T
    return M


def _scaled_inverse(K: np.ndarray, alpha: float) -> np.ndarray:
    """αK_α⁻¹ (eigenvalues α/(λ + α) ∈ (0, 1]) from one Cholesky factorisation."""
    M0 = _inverse_of_factor(_inverse_factor(K, alpha))
    M0 *= alpha
    return M0
