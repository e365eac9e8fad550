"""Nyström low-rank stand-in K̃ = C W_k⁺ Cᵀ = VVᵀ (papers 002, 004)."""

import numpy as np
import scipy.linalg

from .._validation import check_positive, check_positive_int, check_random_state
from ._base import Approximation, ExplicitBasisOperator
from ._lowrank import factor_spectrum, small_blas

__all__ = ["Nystroem", "nystroem_factor"]

SAMPLERS = ("uniform",)


def nystroem_factor(C, landmarks, rank, eigen_floor):
    """V (n, k′) with VVᵀ = C W_k⁺ Cᵀ, W = C[landmarks] = K(X_I, X_I).

    W = UΣUᵀ (eigh); the k largest eigenvalues above ``eigen_floor``·σ_max are kept
    (k′ ≤ k of them) and V = C U_k Σ_k^{−1/2}.
    """
    C = np.asarray(C, dtype=np.float64)
    W = C[landmarks]
    W = 0.5 * (W + W.T)
    with small_blas(float(W.shape[0]) ** 3):
        sig, U = scipy.linalg.eigh(W, driver="evd")
    order = np.argsort(sig)[::-1]
    sig, U = sig[order], U[:, order]
    top = sig[0] if sig.size else 0.0
    keep = np.flatnonzero(sig > eigen_floor * max(top, 0.0))[:rank]
    if keep.size == 0:
        return np.zeros((C.shape[0], 0))
    return C @ (U[:, keep] / np.sqrt(sig[keep]))


class Nystroem(Approximation):
    """Nyström approximation with uniformly sampled landmarks.

    C = K(X, X_I) (n×c), W = K(X_I, X_I), K̃ = C W_k⁺ Cᵀ = VVᵀ with
    V = C U_k Σ_k^{−1/2}; the thin SVD V = QSRᵀ gives the eigenpairs (s_i², q_i) of K̃
    and zero on the complement (DESIGN.md, "Nyström family").

    Parameters
    ----------
    n_landmarks : int or None, default=None
        c, the number of landmark points; None → min(n, 200).
    rank : int or None, default=None
        k ≤ c, the number of eigenpairs of W kept; None → c.
    sampler : {"uniform"}, default="uniform"
        Landmark sampler: uniform without replacement.
    eigen_floor : float, default=1e-12
        Eigenvalues of W at or below ``eigen_floor``·σ_max(W) are dropped (they would
        amplify rounding errors by σ^{−1/2}).
    random_state : int, Generator or None
        Landmarks are drawn once per selection and reused for every γ.

    Notes
    -----
    Cost per γ: O(ncd) for C, O(c³) for eigh(W), O(nk²) for the SVD of V; memory
    O(nc). Paper 004 (Nyström approximate model selection for LSSVM) bounds the
    criterion error in terms of ‖K − K̃‖.
    """

    name = "nystrom"
    label = "nystrom"

    def __init__(self, n_landmarks=None, rank=None, sampler="uniform", eigen_floor=1e-12,
                 random_state=None):
        self.n_landmarks = n_landmarks
        self.rank = rank
        self.sampler = sampler
        self.eigen_floor = eigen_floor
        self.random_state = random_state

    def _sizes(self, n):
        c = min(n, 200) if self.n_landmarks is None else check_positive_int(
            self.n_landmarks, "n_landmarks")
        if c > n:
            raise ValueError(f"n_landmarks={c} exceeds the number of samples n={n}.")
        k = c if self.rank is None else check_positive_int(self.rank, "rank")
        if k > c:
            raise ValueError(f"rank={k} exceeds n_landmarks={c}; choose rank ≤ n_landmarks.")
        return c, k

    def prepare(self, X, y, *, kernel, random_state, workers):
        n = X.shape[0]
        c, k = self._sizes(n)
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}, got {self.sampler!r}.")
        check_positive(self.eigen_floor, "eigen_floor", allow_zero=True)
        rs = self.random_state if self.random_state is not None else random_state
        rng = check_random_state(rs)
        landmarks = np.sort(rng.choice(n, size=c, replace=False))
        return {"landmarks": landmarks, "rank": k}

    def build(self, X, y, gamma, *, kernel, state, workers):
        from .. import lowlevel

        landmarks = state["landmarks"]
        C = lowlevel.kernel_block(X, X[landmarks], gamma, kernel=kernel, workers=workers)
        V = nystroem_factor(C, landmarks, state["rank"], float(self.eigen_floor))
        lam, Q = factor_spectrum(V)
        op = ExplicitBasisOperator(lam, Q)
        op.name = "nystrom"
        op.details = {"n_landmarks": int(landmarks.size), "rank": int(state["rank"]),
                      "effective_rank": int(V.shape[1])}
        return op
