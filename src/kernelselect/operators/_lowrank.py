"""Stand-ins K̃ = VVᵀ given by a tall factor V (n × k, n ≫ k): their eigenpairs, and
the operator built on them (Nyström and random features)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.linalg

from .._threads import SMALL_FLOPS  # noqa: F401  (the threshold's former home)
from .._threads import blas_for_flops as small_blas
from .._typing import SpectralFunction
from ._base import KernelOperator, LazyBasisOperator, RidgeFunction

__all__ = ["LowRankOperator", "factor_spectrum", "shifted_cholesky", "small_blas"]


def shifted_cholesky(K: npt.ArrayLike, alpha: float) -> tuple[np.ndarray, bool]:
    """Lower Cholesky factor ``(c, lower)`` of K + αI for scipy's ``cho_solve``; K is not
    modified. Raises ``LinAlgError`` when K + αI is not numerically positive definite."""
    A = np.array(K, dtype=np.float64, copy=True)
    A.flat[:: A.shape[0] + 1] += alpha
    with small_blas(float(A.shape[0]) ** 3 / 3):
        return scipy.linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)


def _chol(G: np.ndarray) -> np.ndarray:
    with small_blas(float(G.shape[0]) ** 3 / 3):
        R = scipy.linalg.cholesky(G, lower=False, check_finite=False)
    if not np.all(np.isfinite(R)) or np.min(np.abs(np.diag(R))) == 0.0:
        raise np.linalg.LinAlgError("singular")
    return R


def _cholesky_qr2_spectrum(V: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Eigenpairs of VVᵀ by two rounds of Cholesky QR (Yamamoto et al. 2015), or None
    when V is too ill-conditioned for it.

    Round 1: R₁ = chol(VᵀV), Q₁ = V R₁⁻¹ (orthogonal up to ε·κ(V)²). Round 2:
    R₂ = chol(Q₁ᵀQ₁); when Q₁ᵀQ₁ is within 0.5 of I the product Q₁R₂⁻¹ is orthonormal to
    rounding. With R₂R₁ = UΣWᵀ (a k×k SVD) the eigenvectors are Q₁R₂⁻¹U and the
    eigenvalues Σ². Four n×k×k products in all, and no n×k SVD.
    """
    k = V.shape[1]
    try:
        R1 = _chol(V.T @ V)
        Q1 = scipy.linalg.solve_triangular(R1, V.T, trans="T", lower=False,
                                           check_finite=False).T
        G2 = Q1.T @ Q1
        if np.max(np.abs(G2 - np.eye(k))) > 0.5:
            return None
        R2 = _chol(G2)
    except np.linalg.LinAlgError:
        return None
    with small_blas(float(k) ** 3):
        U, s, _ = scipy.linalg.svd(R2 @ R1, lapack_driver="gesdd")
        M = scipy.linalg.solve_triangular(R2, U, lower=False, check_finite=False)
    return s ** 2, Q1 @ M


def factor_spectrum(V: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues s² (descending) and orthonormal eigenvectors (n, k) of VVᵀ.

    Thin SVD of V by Cholesky QR2 followed by the SVD of the small triangular factor
    (BLAS-3 only, ≈ 6nk² flops), falling back to LAPACK gesdd when V is too
    ill-conditioned for Cholesky QR.
    """
    V = np.asarray(V, dtype=np.float64)
    n, k = V.shape
    if k == 0:
        return np.zeros(0), V
    with small_blas(float(n) * k * min(n, k)):
        return _factor_spectrum(V)


def _factor_spectrum(V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, k = V.shape
    if n <= k:
        # wide factor: VVᵀ is the small matrix; its eigh is exact enough (no squaring)
        lam, Q = scipy.linalg.eigh(V @ V.T, driver="evd")
        order = np.argsort(lam)[::-1]
        return np.clip(lam[order], 0.0, None), Q[:, order]
    out = _cholesky_qr2_spectrum(V)
    if out is None:
        Q, s, _ = scipy.linalg.svd(V, full_matrices=False, lapack_driver="gesdd")
        return s ** 2, Q
    return out


class LowRankOperator(LazyBasisOperator):
    """K̃ = VVᵀ for a tall factor V (n, k): the Nyström factor C U_k Σ_k^{−1/2} or the
    random features Z.

    The spectral forms use the eigenpairs of K̃ (:func:`factor_spectrum`, a thin SVD
    of V, ≈ 6nk² flops), computed on first need. Until then, solves with a ridge
    function of power one — what fitting a kernel machine needs — use the k × k Gram
    matrix instead: with VᵀV = PSPᵀ (nk² + k³ flops),

        K̃ K̃_α⁻¹ B = V P diag(1/(s + α)) Pᵀ VᵀB,   K̃_α⁻¹B = (B − K̃ K̃_α⁻¹ B)/α

    (the Woodbury identity as Ding & Liao, PAKDD 2012, eqs. 15–17, use it; O(nkm)
    per α for m columns).

    Parameters
    ----------
    V : ndarray of shape (n, k)
    indices : array of int or None
        Original rows, as for every operator.

    Attributes
    ----------
    factor : ndarray of shape (n, k)
        V itself (a random-feature machine forms its primal weights Vᵀa from it).
    """

    def __init__(self, V: npt.ArrayLike, indices: npt.ArrayLike | None = None) -> None:
        V = np.asarray(V, dtype=np.float64)
        KernelOperator.__init__(self, V.shape[0], indices)
        self.factor = V
        self._spectrum: tuple[np.ndarray, np.ndarray] | None = None
        self._gram: tuple[np.ndarray, np.ndarray] | None = None

    def _eigenpairs(self) -> tuple[np.ndarray, np.ndarray]:
        if self._spectrum is None:
            self._spectrum = factor_spectrum(self.factor)
        return self._spectrum

    def _gram_eigenpairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(s, P) with VᵀV = P diag(s) Pᵀ, s clipped at 0."""
        if self._gram is None:
            V = self.factor
            G = V.T @ V
            with small_blas(float(V.shape[1]) ** 3):
                s, P = scipy.linalg.eigh(0.5 * (G + G.T), driver="evd", check_finite=False)
            self._gram = (np.clip(s, 0.0, None), P)
        return self._gram

    def apply_function(self, g: SpectralFunction, B: npt.ArrayLike) -> np.ndarray:
        if self._spectrum is not None or not isinstance(g, RidgeFunction) or g.power != 1:
            return super().apply_function(g, B)
        B = np.asarray(B, dtype=np.float64).reshape(self.n, -1)
        s, P = self._gram_eigenpairs()
        V, k, m, L = self.factor, self.factor.shape[1], B.shape[1], g.alphas.size
        T0 = P.T @ (V.T @ B)                                          # (k, m)
        w = 1.0 / (s[:, None] + g.alphas[None, :])                    # (k, L)
        T = (T0[:, :, None] * w[:, None, :]).reshape(k, m * L)
        H = (V @ (P @ T)).reshape(self.n, m, L)                       # K̃ K̃_α⁻¹ B
        if g.kind == "smoother":
            return H
        rest = B[:, :, None] - H                                      # α K̃_α⁻¹ B
        if g.kind == "resolvent":
            return rest / g.alphas
        return rest if g.scale is None else rest / g.scale
