"""The closed-form leave-one-out error of the LSSVM under a per-feature (ARD) Gaussian
kernel, and its analytic gradient in (log γ₁, …, log γ_d, log α).

The kernel is κ(x, x′) = exp(−Σ_k γ_k (x_k − x′_k)²): the Gaussian kernel with γ = 1 on
the scaled features x·diag(√γ) (:func:`kernelselect.kernels.ard_scale`). The criterion is
the one the default selection minimises, the mean squared leave-one-out residual of the
LSSVM with bias (PRESS / n; :func:`kernelselect.criteria.error.eloo` with
``loss="squared"``), for t target columns at once (one-vs-rest: PRESS summed over the
columns, divided by n·t, as ``eloo_multiclass`` with ``loss="squared"``).

Leave-one-out residuals (Cawley & Talbot 2003)
----------------------------------------------
P = [[K_α, 1], [1ᵀ, 0]], [a; b] = P⁻¹[Y; 0]; with M the top-left n × n block of P⁻¹,
M = K_α⁻¹ − ρρᵀ/1ᵀρ (ρ = K_α⁻¹1), the residuals are e_ic = a_ic / M_ii. As in
:mod:`kernelselect.criteria.error`, everything is evaluated with αK_α⁻¹ (eigenvalues
α/(λ + α) ∈ (0, 1]) in place of K_α⁻¹: M̂ = αM, â = αa, and e = â / diag M̂ unchanged.

Gradient (derived here by the adjoint of P⁻¹; Cawley & Talbot, JMLR 8, 2007, optimise
the same criterion for ARD kernels with its gradient)
---------------------------------------------------------------------------------
f = Σ e² / (nt). With dP = [[dK_α, 0], [0, 0]], dP⁻¹ = −P⁻¹ dP P⁻¹, so da = −M dK_α a and
dM_ii = −(M dK_α M)_ii, and

    df = tr(G dK_α) / α,   Ĝ = M̂ diag(ŵ) M̂ − sym(â (M̂û)ᵀ),
    û_ic = 2 e_ic / (nt M̂_ii),   ŵ_i = Σ_c 2 e_ic² / (nt M̂_ii)

(sym(B) = (B + Bᵀ)/2). Hence ∂f/∂log α = tr Ĝ and, since
γ_k ∂K_ij/∂γ_k = −K_ij (x̃_ik − x̃_jk)² on the scaled features x̃ = x·diag(√γ),

    ∂f/∂log γ_k = −(1/α) Σ_ij Ĝ_ij K_ij (x̃_ik − x̃_jk)²
                = −(1/α) [2 Σ_i x̃_ik² (H1)_i − 2 (x̃ᵀ H x̃)_kk],   H = Ĝ ∘ K,

one n × n × d GEMM (H x̃), never an n × n × d tensor (:func:`distance_contraction`).

Nyström stand-in with fixed landmarks Z
---------------------------------------
K̃ = C F Cᵀ, C = K(X, Z) (n × m), W = K(Z, Z) = UΣUᵀ, F = W_k⁺ = Σ_{i kept} u_i u_iᵀ/σ_i
with the kept eigenvalues of :func:`kernelselect.operators.nystrom.nystroem_transform`
(the k largest above ``eigen_floor``·σ_max). With V = C U_k Σ_k^{−1/2}, VᵀV = PSPᵀ and
Ψ = VP (K̃ = ΨΨᵀ, ΨᵀΨ = S): αK̃_α⁻¹ = I − Ψ diag(1/(s + α)) Ψᵀ, so every quantity of
the residuals costs O(nk) after the O(nm² ) factor (the Woodbury form of the library's
low-rank operator). The derivative of K̃ follows from dC and dW:

    tr(Ĝ dK̃) = 2 Σ_ij (Ĝ C F)_ij dC_ij + tr(B dW),   B = U (Φ ∘ (Uᵀ Cᵀ Ĝ C U)) Uᵀ,

where Φ holds the divided differences of f(σ) = 1/σ on the kept eigenvalues and 0 on
the dropped ones (Daleckii–Krein): Φ_ij = −1/(σ_iσ_j) for i, j kept, 1/(σ_i(σ_i − σ_j))
for i kept and j dropped, 0 for both dropped. This is the exact derivative of the
stand-in the library builds (the same floor, the same kept set) wherever the kept set
does not change. Ĝ C F = (ĜΨ)(T P)ᵀ with T = U_kΣ_k^{−1/2}, and ĜΨ takes O(nk²), so a
gradient costs O(nm² + nmd): both contractions are GEMMs (:func:`distance_contraction`).
The Nyström form is evaluated in passes over row blocks (:mod:`kernelselect._ard_stream`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
import numpy as np
import scipy.linalg
import scipy.linalg.lapack

from .. import _kernels
from ..utils._resources import check_allocation
from ..utils._threads import blas_for_flops, block_workers, check_workers, one_blas_thread

__all__ = ["LooState", "loo_residuals", "press_exact", "press_kfold_exact", "nystrom_factor",
           "loo_path_nystrom", "distance_contraction", "gaussian_block", "EvaluationError"]


class EvaluationError(ArithmeticError):
    """The criterion is not finite at this point (a singular system or a non-positive
    leave-one-out denominator); the optimiser treats it as +inf."""


def gaussian_block(A: np.ndarray, B: np.ndarray, workers: int | None = None) -> np.ndarray:
    """exp(−‖a_i − b_j‖²) for rows of already scaled (and centred) float64 arrays.

    The unchecked core of :func:`kernelselect.lowlevel.kernel_block` with γ = 1 (the
    callers validate X once and scale it per γ vector)."""
    K = np.empty((A.shape[0], B.shape[0]), dtype=np.float64)
    threads = check_workers(block_workers(float(K.size), workers))
    with one_blas_thread():
        _kernels._kernel_block_into(np.ascontiguousarray(A), np.ascontiguousarray(B), 1.0, 0,
                                   K, threads)
    return K


def distance_contraction(H: np.ndarray, A: np.ndarray, B: np.ndarray,
                         symmetric: bool = False) -> np.ndarray:
    """c_k = Σ_ij H_ij (a_ik − b_jk)² for every feature k, shape (d,).

    Expanded as Σ_i a_ik² (H1)_i + Σ_j b_jk² (1ᵀH)_j − 2 Σ_i a_ik (HB)_ik: one
    GEMM H·B (2·n_a·n_b·d flops) and two matrix-vector products, never the
    n_a × n_b × d tensor of differences. ``symmetric``: H is symmetric and B is A.
    """
    HB = H @ B
    rows = H.sum(axis=1)
    if symmetric:
        return 2.0 * ((A * A).T @ rows - np.einsum("ik,ik->k", A, HB))
    cols = H.sum(axis=0)
    return (A * A).T @ rows + (B * B).T @ cols - 2.0 * np.einsum("ik,ik->k", A, HB)


@dataclass
class LooState:
    """Leave-one-out quantities at one point, in the scaled form (M̂ = αM, â = αa).

    value : mean squared residual Σe²/(nt); e (n, t) residuals; a (n, t) â;
    rho (n,) ρ̂ = αK_α⁻¹1; s = 1ᵀρ̂; m (n,) diag M̂; u (n, t) û; w (n,) ŵ."""

    value: float
    e: np.ndarray
    a: np.ndarray
    rho: np.ndarray
    s: float
    m: np.ndarray
    u: np.ndarray
    w: np.ndarray


def loo_residuals(M0Y: np.ndarray, rho: np.ndarray, diag_M0: np.ndarray) -> LooState:
    """The LSSVM leave-one-out residuals from M̂₀Y, M̂₀1 and diag M̂₀, M̂₀ = αK_α⁻¹.

    b = 1ᵀM̂₀Y / 1ᵀρ̂, â = M̂₀Y − ρ̂b, diag M̂ = diag M̂₀ − ρ̂²/1ᵀρ̂, e = â / diag M̂
    (the formulas of :func:`kernelselect.criteria.error._loo_sums`). Raises
    :class:`EvaluationError` when a denominator is not positive."""
    n, t = M0Y.shape
    s = float(rho.sum())
    if not (np.isfinite(s) and s > 0):
        raise EvaluationError("1ᵀ(αK_α⁻¹)1 is not positive")
    b = M0Y.sum(axis=0) / s
    a = M0Y - rho[:, None] * b[None, :]
    m = diag_M0 - rho * rho / s
    if not np.all(m > 0):
        raise EvaluationError("a leave-one-out denominator is not positive")
    e = a / m[:, None]
    value = float(np.sum(e * e)) / (n * t)
    if not np.isfinite(value):
        raise EvaluationError("the leave-one-out residuals are not finite")
    u = 2.0 * e / (m[:, None] * (n * t))
    w = 2.0 * np.sum(e * e, axis=1) / (m * (n * t))
    return LooState(value, e, a, rho, s, m, u, w)


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


def _scaled_inverse(K: np.ndarray, alpha: float) -> np.ndarray:
    """αK_α⁻¹ (eigenvalues α/(λ + α) ∈ (0, 1]) from one Cholesky factorisation."""
    n = K.shape[0]
    A = K.copy()
    A.flat[:: n + 1] += alpha
    with blas_for_flops(float(n) ** 3):
        L, info = scipy.linalg.lapack.dpotrf(A, lower=1, overwrite_a=1)
        if info != 0:
            raise EvaluationError(f"K + αI is not numerically positive definite (α={alpha:g})")
        Ainv, info = scipy.linalg.lapack.dpotri(L, lower=1, overwrite_c=1)
        if info != 0:
            raise EvaluationError("the inverse of K + αI failed")
    M0 = np.tril(Ainv)
    M0 += np.tril(Ainv, -1).T
    M0 *= alpha
    return M0


# --------------------------------------------------------------------------- Nyström


@dataclass
class NystromFactor:
    """The pieces of K̃ = ΨΨᵀ at one γ vector: C, W's eigenpairs (descending), the kept
    indices, Ψ (n, k) and s = diag ΨᵀΨ, and TP (m, k) with Ψ = C·TP."""

    C: np.ndarray
    W: np.ndarray
    sigma: np.ndarray
    U: np.ndarray
    keep: np.ndarray
    Psi: np.ndarray
    s: np.ndarray
    TP: np.ndarray
    P: np.ndarray


def nystrom_factor(Xs: np.ndarray, Zs: np.ndarray, landmarks: np.ndarray | None, rank: int,
                   eigen_floor: float, workers: int | None = None) -> NystromFactor:
    """C = K(X̃, Z̃), W = K(Z̃, Z̃) (read from C when the landmarks are rows of X, as the
    library's Nyström does), the kept eigenpairs of W as
    :func:`~kernelselect.operators.nystrom.nystroem_transform` keeps them, and the
    Gram eigenbasis Ψ = V P of V = C U_kΣ_k^{−1/2}."""
    C = gaussian_block(Xs, Zs, workers)
    W = C[landmarks] if landmarks is not None else gaussian_block(Zs, Zs, workers)
    W = 0.5 * (W + W.T)
    m = W.shape[0]
    with blas_for_flops(float(m) ** 3):
        sig, U = scipy.linalg.eigh(W, driver="evd")
    order = np.argsort(sig)[::-1]
    sig, U = sig[order], U[:, order]
    top = sig[0] if sig.size else 0.0
    keep = np.flatnonzero(sig > eigen_floor * max(top, 0.0))[:rank]
    T = U[:, keep] / np.sqrt(sig[keep])
    n, k = C.shape[0], keep.size
    with blas_for_flops(float(n) * m * k):
        V = C @ T
        Gm = V.T @ V
        s, P = scipy.linalg.eigh(0.5 * (Gm + Gm.T), driver="evd")
        s = np.clip(s, 0.0, None)
        Psi = V @ P
    return NystromFactor(C, W, sig, U, keep, Psi, s, T @ P, P)


def _nystrom_loo(F: NystromFactor, Y: np.ndarray, alpha: float) -> LooState:
    Psi, D = F.Psi, 1.0 / (F.s + alpha)
    B = np.column_stack([Y, np.ones(Y.shape[0])])
    R = B - Psi @ (D[:, None] * (Psi.T @ B))          # αK̃_α⁻¹ [Y 1]
    diag = 1.0 - (Psi * Psi) @ D
    return loo_residuals(R[:, :-1], R[:, -1].copy(), diag)


def loo_path_nystrom(F: NystromFactor, Y: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """The mean squared LOO residual for every α of a path from one factor (O(nkt)
    per α): the inner α path of a per-γ search."""
    out = np.full(alphas.size, np.inf)
    for j, a in enumerate(np.asarray(alphas, dtype=np.float64)):
        try:
            out[j] = _nystrom_loo(F, Y, float(a)).value
        except EvaluationError:
            pass
    return out

