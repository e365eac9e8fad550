"""Nyström low-rank stand-ins K̃ = VVᵀ (papers 002, 004) and their landmark samplers."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence, overload

import numpy as np
import numpy.typing as npt
import scipy.linalg

from ..utils._kernel_family import Kernel
from ..primitives._kernel_ops import (Points, block_unchecked, cholesky_inverse_unchecked,
                                      matvec_unchecked, symmetric_eigh_unchecked)
from ..utils._lapack import gram
from ..utils._resources import check_allocation
from ..utils._threads import map_in_threads, team
from ..utils._validation import check_positive, check_positive_int, check_random_state
from .._typing import Gammas, RandomState
from ._base import Approximation, Capabilities, KernelOperator, PointsCache
from ._feature_maps import LandmarkFeatures
from ._lowrank import LandmarkMap, LowRankOperator, small_blas
from ._samplers import (column_norm_probabilities, gumbel_top_c, kmeans_centres,
                        ridge_leverage_scores)
from .streaming_lowrank import (StreamingLowRankOperator, Transform, build_operators,
                                check_streaming_memory)

__all__ = ["Nystroem", "ProportionalNystroem", "NystroemState", "nystroem_factor", "landmark_eigenpairs",
           "SAMPLERS"]

SAMPLERS = ("uniform", "column_norm", "leverage", "kmeans", "modified", "optimal")
#: the "optimal" rank-k approximation holds K and its full eigendecomposition
OPTIMAL_MAX_N = 5000
#: the streaming operator accumulates the rotated block C U_k when the kept
#: eigenvalues of W span more than this ratio in Σ^{−1/2} (10⁴ in σ); see
#: streaming_lowrank.Transform
ROTATE_ABOVE = 1e2
#: the streamed grid factors W = LLᵀ by Cholesky instead of eigh when its condition
#: number, bounded from L (:func:`_cholesky_transform`), is at most this: the
#: threshold of ROTATE_ABOVE in σ_max/σ_min, below which the first pass accumulates
#: the unrotated Gram matrix FᵀF either way
CHOLESKY_MAX_COND = ROTATE_ABOVE ** 2
#: samplers whose landmarks do not depend on γ: select_kernel streams them
#: (build_all), holding no n × c array
STREAMING_SAMPLERS = ("uniform", "kmeans")


def check_eigen_floor(value: Any) -> float:
    """eigen_floor ∈ [0, 1): the relative eigenvalue cut of W (1 or more drops them all)."""
    v = check_positive(value, "eigen_floor", allow_zero=True)
    if v >= 1.0:
        raise ValueError(
            f"eigen_floor={value!r} would drop every eigenvalue of W (it is relative to the "
            "largest one); use a value in [0, 1), typically 1e-12 … 1e-6."
        )
    return v


def _check_memory(n: int, c: int, k: int) -> None:
    """C (n × c), its factor V (n × k) and W, its eigenvectors (c × c), float64."""
    check_allocation(8.0 * (2.0 * n * c + n * k + 2.0 * c * c),
                     f"the Nyström factors with n_landmarks={c} at n={n} (C = K(X, landmarks) "
                     f"{n} × {c}, V {n} × {k}, W and its eigenvectors {c} × {c})",
                     "use fewer landmarks (a few hundred to a few thousand usually suffice)")


def nystroem_factor(C: npt.ArrayLike, landmarks: np.ndarray | None, rank: int,
                    eigen_floor: float, W: npt.ArrayLike | None = None) -> np.ndarray:
    """V (n, k′) with VVᵀ = C W_k⁺ Cᵀ, W = C[landmarks] = K(X_I, X_I).

    W = UΣUᵀ (eigh); the k largest eigenvalues above ``eigen_floor``·σ_max are kept
    (k′ ≤ k of them) and V = C U_k Σ_k^{−1/2}. ``W`` may be given instead of
    ``landmarks`` (landmarks that are not rows of X, e.g. k-means centres).
    """
    C = np.asarray(C, dtype=np.float64)
    W = C[landmarks] if W is None else np.asarray(W, dtype=np.float64)
    T = nystroem_transform(W, rank, eigen_floor)
    return C @ T if T.shape[1] else np.zeros((C.shape[0], 0))


def _landmark_gram(Z: Points, gamma: float) -> np.ndarray:
    """W = K(Z, Z) for landmarks conditioned once for the grid."""
    return np.asarray(block_unchecked(Z.data, Z.data, Z.gamma(gamma), Z.kernel, 1),
                      dtype=np.float64)


@dataclass(frozen=True)
class NystroemState:
    """What :meth:`Nystroem.prepare` draws once per data set and every γ shares.

    Attributes
    ----------
    sampler : str
    rank : int
        k, the eigenpairs kept.
    landmarks : ndarray of int or None
        Rows of X (uniform, modified and user indices); None otherwise.
    points : ndarray of shape (c, d) or None
        Landmark points that are not rows of X (k-means centres, user points), in X's
        units.
    n_landmarks : int or None
        c of the γ-dependent samplers (column_norm, leverage), which draw their rows
        per γ from ``gumbel``.
    gumbel : ndarray of shape (n,) or None
        The fixed Gumbel noise of those samplers (common random numbers).
    pilot : ndarray of int or None
        The uniform pilot landmarks of the leverage sampler, with its ``ridge``.
    ridge : float or None
    conditioned : PointsCache
        X conditioned for the compiled kernel on the first build, reused for every γ.
    """

    sampler: str
    rank: int
    landmarks: np.ndarray | None = None
    points: np.ndarray | None = None
    n_landmarks: int | None = None
    gumbel: np.ndarray | None = None
    pilot: np.ndarray | None = None
    ridge: float | None = None
    conditioned: PointsCache = field(default_factory=PointsCache, compare=False,
                                     repr=False)


def landmark_eigenpairs(W: np.ndarray, rank: int, eigen_floor: float
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(σ, U, kept) of the landmark Gram matrix W (symmetrised): its eigenvalues σ
    largest first, their eigenvectors U (c, c) and the indices of the eigenpairs a
    Nyström stand-in keeps, the k = ``rank`` largest above ``eigen_floor``·σ_max. The
    dropped ones are returned too, for derivatives of the stand-in in W."""
    W = np.asarray(W, dtype=np.float64)
    W = 0.5 * (W + W.T)
    with small_blas(float(W.shape[0]) ** 3):
        sig, U = symmetric_eigh_unchecked(W)
    order = np.argsort(sig)[::-1]
    sig, U = sig[order], U[:, order]
    top = sig[0] if sig.size else 0.0
    return sig, U, np.flatnonzero(sig > eigen_floor * max(top, 0.0))[:rank]


@overload
def nystroem_transform(W: np.ndarray, rank: int, eigen_floor: float,
                       split: Literal[False] = ...) -> np.ndarray: ...
@overload
def nystroem_transform(W: np.ndarray, rank: int, eigen_floor: float,
                       split: Literal[True]) -> tuple[np.ndarray, np.ndarray]: ...
def nystroem_transform(W: np.ndarray, rank: int, eigen_floor: float, split: bool = False
                       ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """T = U_k Σ_k^{−1/2} (c, k′) with W_k⁺ = TTᵀ: the k largest eigenpairs of the
    landmark Gram matrix W above ``eigen_floor``·σ_max (:func:`landmark_eigenpairs`), so
    that the Nyström factor is V = C T. ``split=True`` returns (U_k, Σ_k^{−1/2} as a
    vector) instead."""
    sig, U, keep = landmark_eigenpairs(W, rank, eigen_floor)
    if split:
        return U[:, keep], 1.0 / np.sqrt(sig[keep])
    return U[:, keep] / np.sqrt(sig[keep])


def _cholesky_transform(W: np.ndarray, rank: int, eigen_floor: float) -> np.ndarray | None:
    """T = L⁻ᵀ (c, c, upper triangular) with TTᵀ = W⁻¹ for the Cholesky factor
    W = LLᵀ, where it gives the Nyström stand-in of :func:`nystroem_transform`: VVᵀ =
    C W⁻¹ Cᵀ = C W_k⁺ Cᵀ when every eigenvalue of W is kept. None (take the
    eigendecomposition) when that is not certain or not accurate enough: a rank below
    c; W not numerically positive definite (wide kernels: dpotrf or dtrtri fails); or
    the bound κ₂(W) ≤ ‖W‖₁·min(‖T‖_F², ‖T‖₁‖T‖_∞) (‖W‖₂ ≤ ‖W‖₁ for a symmetric W,
    ‖W⁻¹‖₂ = ‖T‖₂²) above :data:`CHOLESKY_MAX_COND` (today's limit for the unrotated
    Gram matrix, whose rounding error TᵀGT amplifies by κ) or at least 1/eigen_floor
    (an eigenvalue might be at or below the floor, which the eigendecomposition
    drops). Either way VᵀV = TᵀGT has the same eigenvalues to rounding: the transforms
    differ by an orthogonal c × c factor. About c³ flops (c³/3 each for dpotrf and
    dtrtri, O(c²) for the bound) against about 9c³ for the eigendecomposition.
    """
    c = W.shape[0]
    if c == 0 or rank < c:
        return None
    T = cholesky_inverse_unchecked(W)
    if T is None or not np.all(np.isfinite(T)):
        return None
    A = np.abs(T)
    inverse = min(float(np.sum(T * T)), float(A.sum(axis=0).max() * A.sum(axis=1).max()))
    bound = float(np.abs(W).sum(axis=0).max()) * inverse
    if not bound <= CHOLESKY_MAX_COND or bound * eigen_floor >= 1.0:
        return None
    return T


class Nystroem(Approximation):
    """Nyström approximation K̃ = C W_k⁺ Cᵀ = VVᵀ with a choice of landmark sampler.

    C = K(X, Z) (n×c) for c landmarks Z, W = K(Z, Z), V = C U_k Σ_k^{−1/2} (W = UΣUᵀ);
    the thin SVD V = QSRᵀ gives the eigenpairs (s_i², q_i) of K̃ and zero on the
    complement (Ding et al., TNNLS 2020, Sec. V; docs/references.md).

    Parameters
    ----------
    n_landmarks : int or None, default=None
        c, the number of landmark points; None → min(n, 200) (the number of rows of
        ``landmarks`` when those are given).
    rank : int or None, default=None
        k ≤ c, the number of eigenpairs kept; None → c.
    sampler : str, default="uniform"
        - "uniform": c rows of X uniformly without replacement.
        - "column_norm": without replacement with p_i ∝ ‖K_{:,i}‖² (Drineas & Mahoney
          2005). The squared column norms are the row sums of the kernel at 2γ
          (κ_γ² = κ_{2γ} for the Gaussian and the Laplacian), streamed: O(n²d) time,
          O(n) memory per γ.
        - "leverage": without replacement with p_i ∝ ℓ̃_i(λ), the Nyström estimate of
          the λ-ridge leverage scores from a uniform pilot of ``pilot_size`` landmarks
          (Musco & Musco 2017; Alaoui & Mahoney 2015): an upper bound on the exact
          scores, see :func:`~kernelselect.operators._samplers.ridge_leverage_scores`.
          O(nc′d + nc′²) per γ.
        - "kmeans": landmarks at the c k-means centres of X (Zhang, Tsang & Kwok 2008;
          scikit-learn's KMeans, needed). The centres are new points: C = K(X, Z),
          W = K(Z, Z). Drawn once, independent of γ.
        - "modified": uniform landmarks, then the modified Nyström approximation
          K̃ = C (C⁺ K (C⁺)ᵀ) Cᵀ (Wang & Zhang 2013), the best approximation of K in the
          column space of C. With Q an orthonormal basis of range(C) (directions with
          singular values below √eigen_floor·s_max dropped) it is Q (QᵀKQ) Qᵀ; KQ is
          one streamed ``kernel_matvec``: O(n²c) time, O(nc) memory. The c×c core is
          truncated to its top k eigenpairs.
        - "optimal": the best rank-k approximation of K (dense eigh; Ding et al. (TNNLS 2020)'s
          OptApp reference). O(n³) time, O(n²) memory; refused above 5000 points.
    landmarks : array or None, default=None
        User landmarks, overriding the sampler's choice: an integer array (c,) of row
        indices of X, or a float array (c, d) of points. Allowed with
        sampler="uniform" (plain Nyström) or "modified" (indices only).
    pilot_size : int or None, default=None
        c′, the uniform pilot of the "leverage" sampler; None → c.
    ridge : float or None, default=None
        λ of the ridge leverage scores; None → 0.005·n (Ding et al. (TNNLS 2020): α = μn, μ = 0.005).
    eigen_floor : float, default=1e-8
        Eigenvalues of W at or below ``eigen_floor``·σ_max(W) are dropped: through
        W_k⁺ they amplify the rounding error of K̃ by about σ_max/σ, so keeping
        σ/σ_max > 1e-8 holds K̃ to ~1e-8 relative accuracy (with a floor of 1e-12
        entries of K̃ were off by 1e-5 relative on smooth Gaussian kernels).
    random_state : int, Generator or None
        All randomness is drawn once per selection (``prepare``) and reused for every γ.
        The γ-dependent samplers ("column_norm", "leverage") draw their c landmarks per
        γ from fixed Gumbel noise G (Gumbel-top-c: the c largest log p_γ,i + G_i), a
        without-replacement draw from p_γ; as γ moves only the ranking changes, so the
        criterion curve is reproducible and smooth in the sense of common random
        numbers.

    Notes
    -----
    Cost per γ: O(ncd) for C, O(c³) for eigh(W), O(nk²) for the SVD of V, plus the
    sampler's cost above; memory O(nc). ``select_kernel`` streams the γ-independent
    samplers instead (:meth:`build_all`, docs/streaming.md): per γ n·c² flops and
    c × c statistics, no n × c array, and Dask arrays as input. Ding & Liao (PAKDD 2012) (Nyström approximate model selection
    for LSSVM) bounds the criterion error in terms of ‖K − K̃‖.
    """

    name = "nystrom"

    def __init__(self, n_landmarks: int | None = None, rank: int | None = None,
                 sampler: str = "uniform", eigen_floor: float = 1e-8,
                 random_state: RandomState = None, landmarks: npt.ArrayLike | None = None,
                 pilot_size: int | None = None, ridge: float | None = None) -> None:
        self.n_landmarks = n_landmarks
        self.rank = rank
        self.sampler = sampler
        self.eigen_floor = eigen_floor
        self.random_state = random_state
        self.landmarks = landmarks
        self.pilot_size = pilot_size
        self.ridge = ridge

    def _sizes(self, n: int) -> tuple[int, int]:
        c = min(n, 200) if self.n_landmarks is None else check_positive_int(
            self.n_landmarks, "n_landmarks")
        if c > n:
            raise ValueError(f"n_landmarks={c} exceeds the number of samples n={n}.")
        k = c if self.rank is None else check_positive_int(self.rank, "rank")
        if k > c:
            raise ValueError(f"rank={k} exceeds n_landmarks={c}; choose rank ≤ n_landmarks.")
        return c, k

    def _user_landmarks(self, X: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        L = np.asarray(self.landmarks)
        n, d = X.shape
        if L.ndim == 1 and L.size and np.issubdtype(L.dtype, np.integer):
            if L.min() < 0 or L.max() >= n:
                raise ValueError(f"landmarks indices must lie in [0, {n}); got the range "
                                 f"[{int(L.min())}, {int(L.max())}].")
            if np.unique(L).size != L.size:
                raise ValueError("landmarks indices must be distinct (W would be singular).")
            return np.sort(L.astype(np.intp)), None
        if L.ndim == 2 and L.shape[0] >= 1 and L.shape[1] == d and np.issubdtype(
                L.dtype, np.number):
            if not np.all(np.isfinite(L)):
                raise ValueError("landmarks points must be finite.")
            return None, np.ascontiguousarray(L, dtype=np.float64)
        raise ValueError(
            f"landmarks must be a non-empty integer index array of shape (c,) or a float "
            f"array of points of shape (c, {d}); got dtype {L.dtype} and shape {L.shape}."
        )

    def rescaled(self, transform: Callable[[np.ndarray], np.ndarray]) -> Nystroem:
        """A copy whose landmark points (a 2-D ``landmarks``) are mapped through
        ``transform``, as X is; row indices need no map."""
        if self.landmarks is None or np.ndim(self.landmarks) != 2:
            return self
        L = np.asarray(self.landmarks)
        if not np.issubdtype(L.dtype, np.number) or np.iscomplexobj(L):
            return self                   # refused with its message by prepare
        try:
            points = transform(L)
        except ValueError:                # wrong width: refused with its message by prepare
            return self
        other = copy.copy(self)
        other.landmarks = points
        return other

    @property
    def capabilities(self) -> Capabilities:
        """The γ-independent samplers ("uniform", "kmeans") build a whole grid from
        shared passes (:meth:`build_all`); "uniform" does so on Dask input too (its
        landmarks are gathered by index). Machines train on every sampler."""
        return Capabilities(frozenset(self.provides),
                            grid=self.sampler in STREAMING_SAMPLERS,
                            dask=self.sampler == "uniform", fit=True)

    def check_resources(self, n: int, d: int) -> None:
        if self.landmarks is not None:
            c = int(np.shape(self.landmarks)[0]) if np.ndim(self.landmarks) else 1
            k = c if self.rank is None else check_positive_int(self.rank, "rank")
        else:
            c, k = self._sizes(n)
            if self.sampler == "optimal":
                c = n
        _check_memory(n, c, k)

    def prepare(self, X: np.ndarray, y: np.ndarray | None, *, kernel: str,
                random_state: RandomState, workers: int | None) -> NystroemState:
        n = X.shape[0]
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}, got {self.sampler!r}.")
        check_eigen_floor(self.eigen_floor)
        rs = self.random_state if self.random_state is not None else random_state
        rng = check_random_state(rs)
        if self.landmarks is not None:
            return self._prepare_given(X)
        if self.sampler not in STREAMING_SAMPLERS:   # the others check per γ (_factor)
            self.check_resources(n, X.shape[1])
        c, k = self._sizes(n)
        if self.sampler in ("uniform", "modified"):
            return NystroemState(self.sampler, k,
                                 landmarks=np.sort(rng.choice(n, size=c, replace=False)))
        if self.sampler == "column_norm":
            return NystroemState(self.sampler, k, n_landmarks=c,
                                 gumbel=np.asarray(rng.gumbel(size=n)))
        if self.sampler == "leverage":
            gumbel = np.asarray(rng.gumbel(size=n))
            cp = c if self.pilot_size is None else check_positive_int(self.pilot_size,
                                                                      "pilot_size")
            if cp > n:
                raise ValueError(f"pilot_size={cp} exceeds the number of samples n={n}.")
            return NystroemState(
                self.sampler, k, n_landmarks=c, gumbel=gumbel,
                pilot=np.sort(rng.choice(n, size=cp, replace=False)),
                ridge=0.005 * n if self.ridge is None else check_positive(self.ridge, "ridge"))
        if self.sampler == "kmeans":
            return NystroemState(self.sampler, k,
                                 points=kmeans_centres(X, c, rng.integers(2 ** 31 - 1)))
        if n > OPTIMAL_MAX_N:
            raise ValueError(
                f"sampler='optimal' computes the dense eigendecomposition of K and is "
                f"limited to n ≤ {OPTIMAL_MAX_N}; got n={n}. Use a Nyström sampler.")
        return NystroemState(self.sampler, k)

    def _prepare_given(self, X: np.ndarray) -> NystroemState:
        """The state for user landmarks (``landmarks=``), checked against X."""
        n = X.shape[0]
        if self.sampler not in ("uniform", "modified"):
            raise ValueError(f"landmarks= replaces the sampler's choice; use it with "
                             f"sampler='uniform' or 'modified', not {self.sampler!r}.")
        idx, pts = self._user_landmarks(X)
        if pts is not None and self.sampler == "modified":
            raise ValueError("sampler='modified' needs landmarks that are rows of X: "
                             "pass indices, not points.")
        c_user = idx.size if idx is not None else pts.shape[0] if pts is not None else 0
        if c_user > n:
            raise ValueError(f"landmarks has {c_user} rows, more than n={n} samples.")
        if self.n_landmarks is not None and int(self.n_landmarks) != c_user:
            raise ValueError(f"n_landmarks={self.n_landmarks} disagrees with the "
                             f"{c_user} landmarks given; leave n_landmarks=None.")
        k = c_user if self.rank is None else check_positive_int(self.rank, "rank")
        if k > c_user:
            raise ValueError(f"rank={k} exceeds the {c_user} landmarks given.")
        if self.sampler not in STREAMING_SAMPLERS:
            _check_memory(n, c_user, k)
        return NystroemState(self.sampler, k, landmarks=idx, points=pts)

    def landmarks_for(self, X: np.ndarray | Points, gamma: float, *, kernel: str | Kernel,
                      state: NystroemState, workers: int | None = None
                      ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(indices or None, points or None) of the landmarks used at ``gamma``."""
        if state.sampler == "column_norm" and state.gumbel is not None:
            assert state.n_landmarks is not None
            p = column_norm_probabilities(X, gamma, kernel=kernel, workers=workers)
            return gumbel_top_c(p, state.gumbel, state.n_landmarks), None
        if state.sampler == "leverage" and state.gumbel is not None:
            assert state.n_landmarks is not None and state.pilot is not None
            assert state.ridge is not None
            p = ridge_leverage_scores(X, gamma, state.pilot, state.ridge, kernel=kernel,
                                      workers=workers)
            return gumbel_top_c(p, state.gumbel, state.n_landmarks), None
        return state.landmarks, state.points

    def factor(self, X: np.ndarray, gamma: float, *, kernel: str, state: NystroemState,
               workers: int | None = None) -> np.ndarray:
        """V (n, k′) with K̃ = VVᵀ at ``gamma`` (the ``factor`` of the built operator)."""
        return self._factor(X, gamma, Kernel.of(kernel, per_feature=False), state, workers)[0]

    def _factor(self, X: np.ndarray, gamma: float, kernel: Kernel, state: NystroemState,
                workers: int | None) -> tuple[np.ndarray, int, LandmarkMap]:
        """(V, c, the map V = K(X, points)·T that extends V to new points)."""
        floor = float(self.eigen_floor)
        k = state.rank
        P = state.conditioned(X, kernel)
        threads = team(workers)
        if state.sampler == "optimal":
            V, T = _optimal_factor(P, gamma, k, floor, threads)
            return V, X.shape[0], LandmarkMap(X, np.arange(X.shape[0]), T)
        idx, pts = self.landmarks_for(P, gamma, kernel=kernel, state=state, workers=threads)
        if pts is None:
            assert idx is not None                   # rows of X, or points: one is given
            Z, Zc = X[idx], P.take(idx)              # Z in X's units, for predictions
        else:
            Z, Zc = pts, P.place(pts)
        _check_memory(X.shape[0], Z.shape[0], k)
        if state.sampler == "modified":
            V, T = _modified_factor(P, Zc, gamma, k, floor, threads)
            return V, Z.shape[0], LandmarkMap(Z, idx, T)
        g = P.gamma(gamma)
        C = np.asarray(block_unchecked(P.data, Zc, g, kernel, threads), dtype=np.float64)
        W = C[idx] if pts is None else np.asarray(block_unchecked(Zc, Zc, g, kernel, threads),
                                                  dtype=np.float64)
        T = nystroem_transform(W, k, floor)
        V = C @ T if T.shape[1] else np.zeros((C.shape[0], 0))
        return V, Z.shape[0], LandmarkMap(Z, idx, T)

    def build_all(self, rows: Any, y: np.ndarray | None, gammas: Gammas, *,
                  kernel: str, state: NystroemState
                  ) -> list[StreamingLowRankOperator] | None:
        """Operators for every γ of a grid from one pass over ``rows`` (an
        :class:`~kernelselect.operators.streaming_lowrank.ArrayRows` or a Dask row
        source), or None when the landmarks depend on γ or the sampler needs K itself
        ("column_norm", "leverage", "modified", "optimal")."""
        if state.sampler not in STREAMING_SAMPLERS:
            return None
        family = Kernel.of(kernel, per_feature=False)
        idx, pts = state.landmarks, state.points
        c = pts.shape[0] if pts is not None else len(idx) if idx is not None else 0
        check_streaming_memory(rows, y, c, len(gammas), f"Nyström with n_landmarks={c}",
                               "use fewer landmarks (a few hundred to a few thousand "
                               "usually suffice)")
        Z = rows.gather(idx) if pts is None else pts
        Zc = Points(Z, family, name="the landmarks")       # checked once for the grid
        floor, k = float(self.eigen_floor), state.rank

        def transform(gamma: float) -> Transform:
            W = _landmark_gram(Zc, float(gamma))
            T = _cholesky_transform(0.5 * (W + W.T), k, floor)
            if T is not None:
                return Transform(post=T, T=T)
            U, scale = nystroem_transform(W, k, floor, split=True)
            T = U * scale
            if scale.size and scale.max() > ROTATE_ABOVE * scale.min():
                return Transform(rotation=np.ascontiguousarray(U), post=scale, T=T)
            return Transform(post=T, T=T)

        # the γ are independent: on the row source's threads (the landmark Gram block
        # and its eigendecomposition release the interpreter lock)
        transforms = map_in_threads(transform, list(gammas),
                                    getattr(rows, "threads", None) or 1)
        details = [{"n_landmarks": int(Z.shape[0]), "rank": int(k), "sampler": state.sampler}
                   for _ in transforms]
        return build_operators(rows, LandmarkFeatures(Z, gammas, family), y, transforms,
                               "nystrom", details)

    def build(self, X: np.ndarray, y: np.ndarray | None, gamma: float, *, kernel: str,
              state: NystroemState | None, workers: int | None) -> KernelOperator:
        family, gamma, state = self._build_start(X, y, gamma, kernel, state, workers)
        V, c, landmarks = self._factor(X, gamma, family, state, workers)
        op = LowRankOperator(V, landmarks=landmarks)
        op.name = "nystrom"
        op.details = {"n_landmarks": int(c), "rank": int(state.rank),
                      "effective_rank": int(V.shape[1]), "sampler": state.sampler}
        return op


def _modified_factor(P: Points, Z: np.ndarray, gamma: float, rank: int, eigen_floor: float,
                     threads: int) -> tuple[np.ndarray, np.ndarray]:
    """(V, T) with VVᵀ = C (C⁺ K (C⁺)ᵀ)_k Cᵀ = Q (QᵀKQ)_k Qᵀ for C = K(X, Z) = QSRᵀ, and
    V = C T (Q = C M below, so T = M U_k Σ_k^{1/2}); X conditioned in ``P``, the
    landmarks ``Z`` under the same conditioning.

    Q comes from the c×c Gram matrix CᵀC = RS²Rᵀ (Q = CRS⁻¹, directions with
    s < √eigen_floor·s_max dropped) and one re-orthonormalisation Q ← Q(QᵀQ)^{−1/2},
    which restores orthonormality to rounding (Cholesky-QR2 style). At most two n×c
    arrays are alive at a time besides X and the kernel_matvec buffers (measured at
    n = 2·10⁴, d = 8, c = 200: the peak traced memory of one build fell from 131 MB
    with a thin SVD of C to 98 MB).
    """
    g = P.gamma(gamma)
    C = np.asarray(block_unchecked(P.data, Z, g, P.kernel, threads), dtype=np.float64)
    c = C.shape[1]
    with small_blas(float(C.shape[0]) * c * c):
        s2, R = symmetric_eigh_unchecked(gram(C))
    keep = np.flatnonzero(s2 > eigen_floor * max(s2.max(initial=0.0), 0.0))
    if keep.size == 0:
        return np.zeros((C.shape[0], 0)), np.zeros((c, 0))
    M = R[:, keep] / np.sqrt(s2[keep])
    with small_blas(float(C.shape[0]) * c * keep.size):
        Q = C @ M
    del C
    with small_blas(float(Q.shape[0]) * keep.size ** 2):
        d, Pq = symmetric_eigh_unchecked(gram(Q))
        again = (Pq / np.sqrt(d)) @ Pq.T
        Q = Q @ again
    M = M @ again
    Qd = np.ascontiguousarray(Q, dtype=P.data.dtype)
    KQ = np.asarray(matvec_unchecked(P.data, Qd, g, P.kernel, threads), dtype=np.float64)
    core = Q.T @ KQ
    del KQ
    core = 0.5 * (core + core.T)
    with small_blas(float(core.shape[0]) ** 3):
        sig, U = symmetric_eigh_unchecked(core)
    order = np.argsort(sig)[::-1]
    sig, U = sig[order], U[:, order]
    keep = np.flatnonzero(sig > eigen_floor * max(sig[0], 0.0))[:rank]
    core_map = U[:, keep] * np.sqrt(sig[keep])
    return Q @ core_map, M @ core_map


def _optimal_factor(P: Points, gamma: float, rank: int, eigen_floor: float, threads: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(V, T): V = U_k Λ_k^{1/2}, the best rank-k approximation of K (dense eigh), and
    T = U_k Λ_k^{−1/2}, with V = K T (the Nyström extension of the eigenvectors)."""
    K = np.asarray(block_unchecked(P.data, P.data, P.gamma(gamma), P.kernel, threads),
                   dtype=np.float64)
    n = K.shape[0]
    lam, U = scipy.linalg.eigh(0.5 * (K + K.T), subset_by_index=[max(n - rank, 0), n - 1],
                               driver="evr")
    order = np.argsort(lam)[::-1]
    lam, U = lam[order], U[:, order]
    keep = np.flatnonzero(lam > eigen_floor * max(lam[0], 0.0))
    return U[:, keep] * np.sqrt(lam[keep]), U[:, keep] / np.sqrt(lam[keep])


class ProportionalNystroem(Nystroem):
    """Nyström approximation whose sizes scale with the number of points it sees.

    c = round(landmark_fraction · n) landmarks and rank k = round(rank_fraction · c)
    (both at least 1): Ding & Liao (PAKDD 2012) uses c = 0.1n, k = 0.5c, with n the size of each
    cross-validation training fold.
    """

    name = "nystrom"
    label = "nystrom(c=fn, k=gc)"

    def __init__(self, landmark_fraction: float = 0.1, rank_fraction: float = 0.5,
                 sampler: str = "uniform", eigen_floor: float = 1e-12,
                 random_state: RandomState = None) -> None:
        self.landmark_fraction = landmark_fraction
        self.rank_fraction = rank_fraction
        super().__init__(n_landmarks=None, rank=None, sampler=sampler, eigen_floor=eigen_floor,
                         random_state=random_state)

    def _sizes(self, n: int) -> tuple[int, int]:
        f = check_positive(self.landmark_fraction, "landmark_fraction")
        g = check_positive(self.rank_fraction, "rank_fraction")
        if f > 1 or g > 1:
            raise ValueError(
                f"landmark_fraction and rank_fraction must be in (0, 1] (c ≤ n, k ≤ c); got "
                f"{self.landmark_fraction!r} and {self.rank_fraction!r}."
            )
        c = max(1, int(round(f * n)))
        k = max(1, int(round(g * c)))
        return c, k
