"""The pieces every per-feature (ARD) objective shares: the closed-form
leave-one-out residuals of the LSSVM, the adjoint that turns them into a gradient in
(log γ₁, …, log γ_d, log α), the Gaussian block of scaled features and the distance
contraction that applies dK/dlog γ_k without an n × n × d tensor.

The kernel is κ(x, x′) = exp(−Σ_k γ_k (x_k − x′_k)²): the Gaussian kernel with γ = 1 on
the scaled features x·diag(√γ) (:meth:`kernelselect.kernels.Kernel.points`). The criterion is
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

"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..primitives._kernel_ops import block_unchecked
from ..utils._kernel_family import Kernel
from ..utils._threads import block_workers, check_workers

__all__ = ["EvaluationError", "gaussian_block", "distance_contraction", "LooState",
           "loo_residuals"]


class EvaluationError(ArithmeticError):
    """The criterion is not finite at this point (a singular system or a non-positive
    leave-one-out denominator); the optimiser treats it as +inf."""


def gaussian_block(A: np.ndarray, B: np.ndarray, workers: int | None = None) -> np.ndarray:
    """exp(−‖a_i − b_j‖²) for rows of float64 arrays already scaled (and centred):
    the per-feature kernel block on the points of :meth:`Kernel.points
    <kernelselect.kernels.Kernel.points>`, by the library's unchecked kernel block
    (:func:`~kernelselect.primitives._kernel_ops.block_unchecked`) with γ′ = 1. The
    callers validate X once and scale it per γ vector."""
    A, B = np.ascontiguousarray(A), np.ascontiguousarray(B)
    threads = check_workers(block_workers(float(A.shape[0]) * B.shape[0], workers))
    return block_unchecked(A, B, 1.0, Kernel.ARD, threads)


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

