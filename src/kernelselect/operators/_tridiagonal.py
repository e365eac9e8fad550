"""One tridiagonal reduction K = Q T Qᵀ of a dense symmetric matrix, solving
(K + αI) X = B for a whole path of ridges α: the ``"tridiagonal"`` strategy of
:class:`~kernelselect.operators.dense.DenseOperator`."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.linalg import lapack

from ..utils._threads import blas_for_flops as small_blas
from ..utils._threads import interruptible

__all__ = ["TridiagonalReduction", "REFLECTOR_BLOCK"]

#: Householder reflectors applied together (compact WY form)
REFLECTOR_BLOCK = 64


class TridiagonalReduction:
    """K_α⁻¹B for every α of a path from one reduction K = QTQᵀ.

    LAPACK ``dsytrd`` reduces K to a symmetric tridiagonal T with n − 1 Householder
    reflectors (Q = H₁H₂⋯H_{n−1}, 4n³/3 flops, no eigenvectors); then
    (K + αI)⁻¹B = Q (T + αI)⁻¹ QᵀB with QᵀB formed once and one O(n) tridiagonal solve
    (``dptsv``, ``dgtsv`` when rounding made T + αI indefinite) per α and column.
    About a third of the work of an eigendecomposition, for the same reuse along the
    α path (measured: 0.19 s vs 0.68 s at n = 1600, one thread). It gives solves
    only: the diagonal or trace of K_α⁻¹ would need T_α⁻¹'s dense entries.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric matrix; only its lower triangle is read.
    """

    def __init__(self, K: np.ndarray) -> None:
        K = np.asarray(K, dtype=np.float64)
        self.n = n = K.shape[0]
        self._blocks: list[tuple[int, np.ndarray, np.ndarray]] = []
        if n == 1:
            self.d, self.e = K[0].copy(), np.zeros(0)
            return
        lwork = int(lapack.dsytrd_lwork(n, lower=1)[0])
        # K is symmetric: its transpose is the Fortran-ordered copy LAPACK wants
        A = np.array(K.T, order="F", copy=True)
        with small_blas(float(n) ** 3):           # Ctrl-C is answered while it runs
            c, d, e, tau, info = interruptible(4.0 * float(n) ** 3 / 3, lapack.dsytrd, A,
                                               lower=1, lwork=lwork, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"tridiagonal reduction failed (dsytrd info={info}).")
        self.d, self.e = d, e
        self._blocks = self._compact_blocks(c, tau)

    @staticmethod
    def _compact_blocks(c: np.ndarray, tau: np.ndarray, width: int = REFLECTOR_BLOCK
                        ) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """Blocks of the reflectors stored below the subdiagonal of ``c`` (dsytrd, lower)
        in compact WY form H_{j0}⋯H_{j1−1} = I − V_b T_b V_bᵀ.

        With H_i = I − τ_i v_i v_iᵀ, T_b⁻¹ = diag(1/τ_i) + striu(V_bᵀV_b) (the UT
        transform of Joffrain, Low, Quintana-Ortí and van de Geijn, ACM TOMS 2006);
        a reflector with τ_i = 0 is the identity and is dropped (v_i := 0).
        """
        blocks = []
        n_refl = c.shape[0] - 1
        for j0 in range(0, n_refl, width):
            j1 = min(n_refl, j0 + width)
            # reflector i: v_i = (0, …, 0, 1, c[i+2:, i]), acting on rows i+1…n−1
            Vb = np.tril(c[j0 + 1:, j0:j1], -1)
            Vb[np.arange(j1 - j0), np.arange(j1 - j0)] = 1.0
            t = tau[j0:j1].copy()
            dead = t == 0.0
            Vb[:, dead] = 0.0
            t[dead] = 1.0
            S = np.triu(Vb.T @ Vb, 1) + np.diag(1.0 / t)
            Tb = scipy.linalg.solve_triangular(S, np.eye(j1 - j0), lower=False,
                                               check_finite=False)
            blocks.append((j0 + 1, Vb, Tb))
        return blocks

    def _apply_qt(self, B: np.ndarray) -> np.ndarray:
        for start, Vb, Tb in self._blocks:          # Qᵀ: first block first, Tᵀ
            B[start:] -= Vb @ (Tb.T @ (Vb.T @ B[start:]))
        return B

    def _apply_q(self, B: np.ndarray) -> np.ndarray:
        for start, Vb, Tb in reversed(self._blocks):  # Q: last block first
            B[start:] -= Vb @ (Tb @ (Vb.T @ B[start:]))
        return B

    def _solve_t(self, W: np.ndarray, a: float) -> np.ndarray:
        """(T + αI)⁻¹W for columns W (n, m)."""
        if self.n == 1:
            return W / (self.d[0] + a)
        _, _, x, info = lapack.dptsv(self.d + a, self.e, W)
        if info != 0:                      # rounding made T + αI indefinite
            _, _, _, x, info = lapack.dgtsv(self.e, self.d + a, self.e, W)
            if info != 0:
                raise np.linalg.LinAlgError(f"K + αI is singular at α={a!r}.")
        return x

    def solve(self, B: np.ndarray, alphas: np.ndarray) -> np.ndarray:
        """K_α⁻¹B for every α: columns B (n, m) → (n, m, L)."""
        B = np.asarray(B, dtype=np.float64).reshape(self.n, -1)
        m = B.shape[1]
        W = self._apply_qt(B.copy())
        out = np.empty((self.n, m, alphas.size))
        for j, a in enumerate(alphas):
            out[:, :, j] = self._solve_t(W, float(a))
        return self._apply_q(out.reshape(self.n, -1)).reshape(self.n, m, alphas.size)

    def solve_each(self, R: np.ndarray, alphas: np.ndarray) -> np.ndarray:
        """K_{α_j}⁻¹R[:, :, j] for every j: (n, m, L) → (n, m, L)."""
        n, m, L = R.shape
        W = self._apply_qt(np.array(R, dtype=np.float64).reshape(n, m * L)).reshape(n, m, L)
        for j, a in enumerate(alphas):
            W[:, :, j] = self._solve_t(np.ascontiguousarray(W[:, :, j]), float(a))
        return self._apply_q(W.reshape(n, m * L)).reshape(n, m, L)
