"""Stand-ins K̃ = VVᵀ given by a tall factor V (n × k, n ≫ k): their thin SVD and
eigenpairs, the ridge regression on V's columns, and the operator built on them
(Nyström and random features)."""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import numpy.typing as npt
import scipy.linalg

from ..utils._threads import SMALL_FLOPS  # noqa: F401  (the threshold's former home)
from ..utils._threads import blas_for_flops as small_blas
from ..utils._lapack import DIRECT_MAX, cholesky_in_place, gram, upper_cholesky
from ..utils._threads import interruptible
from ._base import KernelOperator, LazyBasisOperator

__all__ = ["LowRankOperator", "LandmarkMap", "factor_spectrum", "factor_svd", "ridge_weights",
           "svd_coordinates", "shifted_cholesky", "small_blas"]


def shifted_cholesky(K: npt.ArrayLike, alpha: float) -> tuple[np.ndarray, bool]:
    """Lower Cholesky factor ``(c, lower)`` of K + αI for scipy's ``cho_solve``; K is not
    modified. Raises ``LinAlgError`` when K + αI is not numerically positive definite."""
    n = np.shape(K)[0]
    A = np.array(K, dtype=np.float64, copy=True, order="C" if n <= DIRECT_MAX else "F")
    A.flat[:: n + 1] += alpha
    flops = float(n) ** 3 / 3
    with small_blas(flops):                       # Ctrl-C is answered while it runs
        if n <= DIRECT_MAX:
            return interruptible(flops, scipy.linalg.cho_factor, A, lower=True,
                                 overwrite_a=True, check_finite=False)
        # in blocks: the threaded OpenBLAS ?potrf faults at large n (utils._lapack)
        info = interruptible(flops, cholesky_in_place, A, True)
    if info != 0:
        raise np.linalg.LinAlgError(
            f"{info}-th leading minor of the array is not positive definite")
    return A, True


def _chol(G: np.ndarray) -> np.ndarray:
    with small_blas(float(G.shape[0]) ** 3 / 3):
        R = upper_cholesky(G)
    if not np.all(np.isfinite(R)) or np.min(np.abs(np.diag(R))) == 0.0:
        raise np.linalg.LinAlgError("singular")
    return R


def _cholesky_qr2(V: np.ndarray, overwrite: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(Q₁, R₂, R₁) with V = (Q₁R₂⁻¹)(R₂R₁) and Q₁R₂⁻¹ orthonormal to rounding: two
    rounds of Cholesky QR (Yamamoto et al. 2015), or None when V is too
    ill-conditioned for it.

    Round 1: R₁ = chol(VᵀV), Q₁ = V R₁⁻¹ (orthogonal up to ε·κ(V)²). Round 2:
    R₂ = chol(Q₁ᵀQ₁); when Q₁ᵀQ₁ is within 0.5 of I, Q₁R₂⁻¹ is orthonormal to
    rounding and V − (Q₁R₂⁻¹)(R₂R₁) is of order ε‖V‖: a backward-stable QR
    factorisation, three n×k×k products and no n×k Householder sweep. With
    ``overwrite``, Q₁ takes V's memory (V is then lost, also when None is returned
    after the first round).
    """
    k = V.shape[1]
    try:
        R1 = _chol(gram(V))
        Q1 = scipy.linalg.solve_triangular(R1, V.T, trans="T", lower=False,
                                           overwrite_b=overwrite, check_finite=False).T
        G2 = gram(Q1)
        if np.max(np.abs(G2 - np.eye(k))) > 0.5:
            return None
        R2 = _chol(G2)
    except np.linalg.LinAlgError:
        return None
    return Q1, R2, R1


def _orthogonal_factor(V: np.ndarray, restore: Callable[[], np.ndarray] | None = None
                       ) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray],
                                  Callable[[np.ndarray], np.ndarray]]:
    """(R, Qᵀ·, Q·) of a backward-stable thin QR factorisation V = QR of a tall V:
    Cholesky QR2, or Householder QR (LAPACK) when V is too ill-conditioned for it.
    Q is kept implicitly where it can be (Q = Q₁R₂⁻¹). Given ``restore`` (which makes V
    again), V is the caller's to give away: Q takes its memory, so the factorisation
    holds one n × k array besides V's."""
    out = _cholesky_qr2(V, overwrite=restore is not None)
    if out is not None:
        Q1, R2, R1 = out
        with small_blas(float(R1.shape[0]) ** 3):
            R = R2 @ R1

        def qt(B: np.ndarray) -> np.ndarray:
            return scipy.linalg.solve_triangular(R2, Q1.T @ B, trans="T", lower=False,
                                                 check_finite=False)

        def q(B: np.ndarray) -> np.ndarray:
            return Q1 @ scipy.linalg.solve_triangular(R2, B, lower=False, check_finite=False)

        return R, qt, q
    if restore is not None:
        V = restore()
    Q, R = scipy.linalg.qr(V, mode="economic", overwrite_a=restore is not None,
                           check_finite=False)
    return R, (lambda B: Q.T @ B), (lambda B: Q @ B)


def factor_svd(V: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD V = Q diag(s) Pᵀ: singular values s (descending), Q (n, r), P (k, r),
    r = min(n, k).

    A tall V is reduced by a backward-stable QR (Cholesky QR2, BLAS-3 only, ≈ 6nk²
    flops with Q formed; Householder QR when V is too ill-conditioned for it),
    then the SVD of the k × k triangle; a wide V (n ≤ k) goes to LAPACK gesdd
    directly. Either way the result is the exact SVD of V + E with ‖E‖ of order
    ε‖V‖, so the small singular values carry an absolute error ε‖V‖ (nothing is
    squared).
    """
    V = np.asarray(V, dtype=np.float64)
    n, k = V.shape
    if k == 0 or n == 0:
        r = min(n, k)
        return np.zeros(r), np.zeros((n, r)), np.zeros((k, r))
    with small_blas(float(n) * k * min(n, k)):
        if n <= k:
            Q, s, Pt = scipy.linalg.svd(V, full_matrices=False, lapack_driver="gesdd",
                                        check_finite=False)
            return s, Q, Pt.T
        R, _, q = _orthogonal_factor(V)
        U, s, Pt = scipy.linalg.svd(R, lapack_driver="gesdd", check_finite=False)
        return s, q(U), Pt.T


def factor_spectrum(V: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues s² (descending) and orthonormal eigenvectors (n, r) of VVᵀ, from
    the thin SVD of V (:func:`factor_svd`)."""
    s, Q, _ = factor_svd(V)
    return s ** 2, Q


def _filters(s: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """s/(s² + α) for every singular value and α, (r, L): the ridge's filter factors,
    0 where s = 0."""
    s = s[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        f = s / (s * s + alphas[None, :])
    return np.where(s > 0, f, 0.0)


def ridge_weights(V: npt.ArrayLike, Y: npt.ArrayLike, alphas: npt.ArrayLike, bias: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Ridge regression on the columns of V for a path of α, solved stably.

    Minimises ‖Vw + b1 − y‖² + α‖w‖² per target column y (b unpenalised with
    ``bias``, b = 0 without). On the training points the fit Vw + b equals that of
    the LSSVM (with bias) or kernel ridge regression on K̃ = VVᵀ: w = Vᵀa, with
    [K̃ + αI, 1; 1ᵀ, 0][a; b] = [y; 0] (the bias row is the stationarity condition
    in b), so this is the machine the criteria on K̃ score.

    With the bias, b is eliminated by centring: w solves the ridge problem on
    V_c = V − 1μᵀ and y_c = y − ȳ1 (μ, ȳ the column means), and b = ȳ − μᵀw.
    With the thin SVD V_c = Q diag(s) Pᵀ (:func:`factor_svd`, through a
    backward-stable QR; Q itself is never formed for a tall V),

        w(α) = P diag(s/(s² + α)) Qᵀy_c,

    the filter factors s/(s² + α) evaluated exactly for every α (Hansen,
    *Rank-Deficient and Discrete Ill-Posed Problems*, SIAM 1998, §4.2). Nothing is
    divided by α, and the only subtractions (the centring, b = ȳ − μᵀw) round as
    evaluating the model itself does, so the solution is that of a problem within
    ε‖V‖ of the given one at every α down to 0 (the minimum-norm least-squares
    solution), unlike the Woodbury form (y − V(VᵀV + αI)⁻¹Vᵀy)/α, whose cancellation
    grows as ‖V‖²/α.

    Parameters
    ----------
    V : ndarray of shape (n, k)
    Y : ndarray of shape (n, t)
    alphas : ndarray of shape (L,)
    bias : bool

    Returns
    -------
    weights : ndarray of shape (k, t, L)
    intercept : ndarray of shape (t, L)
        b (zeros without ``bias``).

    Notes
    -----
    O(nk²) for the factorisation (≈ 4nk² flops by Cholesky QR2), O(nkt) for Qᵀy_c and
    O(k²tL) for the path.
    """
    V = np.asarray(V, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    alphas = np.atleast_1d(np.asarray(alphas, dtype=np.float64))
    t, L = Y.shape[1], alphas.size
    if bias:
        mu, ybar = V.mean(axis=0), Y.mean(axis=0)

        def centred() -> np.ndarray:
            return V - mu

        s, P, c = svd_coordinates(centred(), Y - ybar, restore=centred)
    else:
        s, P, c = svd_coordinates(V, Y)
    W = _path_weights(s, P, c, alphas)
    if not bias:
        return W, np.zeros((t, L))
    return W, ybar[:, None] - np.einsum("k,ktl->tl", mu, W)


def svd_coordinates(V: npt.ArrayLike, Y: npt.ArrayLike,
                    restore: Callable[[], np.ndarray] | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(s, P, QᵀY) for the thin SVD V = Q diag(s) Pᵀ (:func:`factor_svd`), without
    forming Q for a tall V: QᵀY = UᵀQ_Rᵀ Y from the QR factorisation V = Q_R R and
    the SVD R = U diag(s) Pᵀ. Everything a ridge or regularised least-squares problem
    on V needs, backward stable (≈ 4nk² flops for a tall V by Cholesky QR2). With
    ``restore`` (a function making V again), V is overwritten (see
    :func:`_orthogonal_factor`)."""
    V = np.asarray(V, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    n, k = V.shape
    r = min(n, k)
    if r == 0:
        return np.zeros(0), np.zeros((k, 0)), np.zeros((0, Y.shape[1]))
    with small_blas(float(n) * k * r):
        if n <= k:
            Q, s, Pt = scipy.linalg.svd(V, full_matrices=False, lapack_driver="gesdd",
                                        check_finite=False)
            return s, Pt.T, Q.T @ Y
        R, qt, _ = _orthogonal_factor(V, restore)
        U, s, Pt = scipy.linalg.svd(R, lapack_driver="gesdd", check_finite=False)
        return s, Pt.T, U.T @ qt(Y)


def _path_weights(s: np.ndarray, P: np.ndarray, c: np.ndarray, alphas: np.ndarray
                  ) -> np.ndarray:
    """P diag(s/(s² + α)) c for every α: (k, t, L) from s (r,), P (k, r), c (r, t)."""
    f = _filters(s, alphas)                                    # (r, L)
    r, t, L = c.shape[0], c.shape[1], alphas.size
    scaled = (c[:, :, None] * f[:, None, :]).reshape(r, t * L)
    return (P @ scaled).reshape(P.shape[0], t, L)


class LandmarkMap(NamedTuple):
    """How a Nyström factor extends to new points: V = K(X, points) · transform, so
    the feature map of a point x is φ(x) = transform ᵀ k(points, x).

    Attributes
    ----------
    points : ndarray of shape (c, d)
        The landmarks (all of X for the optimal rank-k approximation).
    indices : ndarray of int or None
        Their rows in X, or None when they are not rows of X (k-means centres).
    transform : ndarray of shape (c, k)
    """

    points: np.ndarray
    indices: np.ndarray | None
    transform: np.ndarray


class LowRankOperator(LazyBasisOperator):
    """K̃ = VVᵀ for a tall factor V (n, k): the Nyström factor C U_k Σ_k^{−1/2} or the
    random features Z.

    Every spectral form uses the eigenpairs of K̃ (the thin SVD of V,
    :func:`factor_svd`, ≈ 6nk² flops), computed on first need and then shared:
    g(K̃)B = Q g(Λ) QᵀB + g(0)(B − QQᵀB). Ridge machines on K̃ are solved in the
    k-dimensional space of V's columns instead (:meth:`ridge`).

    Parameters
    ----------
    V : ndarray of shape (n, k)
    indices : array of int or None
        Original rows, as for every operator.
    landmarks : LandmarkMap or None
        For a Nyström factor, how V extends to new points (None for random features,
        whose map is the approximation's ``features``).

    Attributes
    ----------
    factor : ndarray of shape (n, k)
        V itself.
    landmarks : LandmarkMap or None
    """

    def __init__(self, V: npt.ArrayLike, indices: npt.ArrayLike | None = None,
                 landmarks: LandmarkMap | None = None) -> None:
        V = np.asarray(V, dtype=np.float64)
        KernelOperator.__init__(self, V.shape[0], indices)
        self.factor = V
        self.landmarks = landmarks
        self._svd: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _eigenpairs(self) -> tuple[np.ndarray, np.ndarray]:
        if self._svd is None:
            self._svd = factor_svd(self.factor)
        s, Q, _ = self._svd
        return s ** 2, Q

    def _complement_products(self, P: np.ndarray, Q: np.ndarray, cp: np.ndarray,
                             cq: np.ndarray) -> np.ndarray:
        # (P − QQᵀP)ᵀ(Q − QQᵀQ): an error of ε‖p‖·‖(I − QQᵀ)q‖, where the difference
        # pᵀq − (Qᵀp)ᵀ(Qᵀq) has ε‖p‖‖q‖ — the probe 1 lies almost in range(V) for wide
        # kernels, and this term is what ELOO's bias row divides by
        basis = self._q
        rp = P - basis @ cp
        rq = rp if Q is P else Q - basis @ cq
        return rp.T @ rq

    def ridge(self, Y: npt.ArrayLike, alphas: npt.ArrayLike, bias: bool
              ) -> tuple[np.ndarray, np.ndarray]:
        """(weights (k, t, L), intercept (t, L)) of the ridge regression on V's
        columns (:func:`ridge_weights`): the LSSVM (``bias``) or kernel ridge
        regression on K̃ in its primal form f = Vw + b. Without the bias an SVD the
        operator already holds is reused."""
        Y = np.asarray(Y, dtype=np.float64).reshape(self.n, -1)
        alphas = np.atleast_1d(np.asarray(alphas, dtype=np.float64))
        if bias or self._svd is None:
            return ridge_weights(self.factor, Y, alphas, bias)
        s, Q, P = self._svd
        return _path_weights(s, P, Q.T @ Y, alphas), np.zeros((Y.shape[1], alphas.size))
