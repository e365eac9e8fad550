"""Random Fourier features stand-in ZZᵀ (Rahimi & Recht 2007)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from ..primitives._columns import rff_unchecked
from ..utils._kernel_family import Kernel
from ..utils._resources import check_allocation
from ..utils._threads import team
from ..utils._validation import check_matrix, check_positive_int, check_random_state
from ..kernels import sample_frequencies
from .._typing import Gammas, RandomState
from ._base import Approximation, Capabilities, KernelOperator
from ._feature_maps import FourierFeatures
from ._lowrank import LowRankOperator
from .streaming_lowrank import (StreamingLowRankOperator, Transform, build_operators,
                                check_streaming_memory)

__all__ = ["RFF", "RFFState"]


@dataclass(frozen=True)
class RFFState:
    """The standard draws :meth:`RFF.prepare` makes once and every γ scales: W0 (d, D)
    (standard normal or Cauchy by the kernel) and the phases b (D,) on [0, 2π)."""

    W0: np.ndarray
    b: np.ndarray


class RFF(Approximation):
    """Random Fourier features: K ≈ ZZᵀ, z(x)_k = √(2/D) cos(wₖᵀx + b_k).

    w_k is drawn from the kernel's spectral density (Gaussian: N(0, 2γI); Laplacian:
    Cauchy(0, γ) per coordinate), b_k ~ U[0, 2π). The standard draws are made once per
    selection and scaled per γ, so every γ sees the same random numbers. The thin SVD
    Z = QSRᵀ gives the eigenpairs (s_i², q_i) of ZZᵀ, zero on the complement. (Papers
    write Z as D×n and the stand-in as ZᵀZ; here Z is stored n×D.)

    Parameters
    ----------
    n_features : int, default=200
        D, the number of random features.
    random_state : int, Generator or None
        Seed of the frequency draws (the driver's ``random_state`` when None).

    Notes
    -----
    Cost per γ: O(nDd) for Z, O(nD²) for the SVD; memory O(nD). ``select_kernel``
    streams instead (:meth:`build_all`, docs/streaming.md): D × D statistics per γ, no
    n × D array, and Dask arrays as input.
    """

    name = "rff"

    def __init__(self, n_features: int = 200, random_state: RandomState = None) -> None:
        self.n_features = n_features
        self.random_state = random_state

    @property
    def capabilities(self) -> Capabilities:
        """Every γ of a grid from shared passes (:meth:`build_all`), in memory or on
        Dask input; machines on the random features."""
        return Capabilities(frozenset(self.provides), grid=True, dask=True, fit=True)

    def check_resources(self, n: int, d: int) -> int:
        D = check_positive_int(self.n_features, "n_features")
        # Z (n × D), its thin SVD (n × min(n, D) and min(n, D)²) and the draws (d × D)
        k = min(n, D)
        check_allocation(8.0 * (n * D + n * k + 2.0 * k * k + d * D),
                         f"RFF with n_features={D} at n={n} (features Z {n} × {D} and its "
                         f"thin SVD)", "use fewer random features")
        return D

    def prepare(self, X: np.ndarray, y: np.ndarray | None, *, kernel: str,
                random_state: RandomState, workers: int | None) -> RFFState:
        D = check_positive_int(self.n_features, "n_features")   # Z is checked in build
        rs = self.random_state if self.random_state is not None else random_state
        rng = check_random_state(rs)
        W0, b = sample_frequencies(kernel, X.shape[1], D, rng)
        return RFFState(W0, b)

    def features(self, X: np.ndarray, gamma: float, *, kernel: str | Kernel, state: RFFState,
                 workers: int | None = None) -> np.ndarray:
        """Z (n, D) for kernel parameter γ (X as checked by the caller, or any array,
        checked here)."""
        if not (isinstance(X, np.ndarray) and X.ndim == 2 and X.flags.c_contiguous
                and X.dtype in (np.float32, np.float64)):
            X = check_matrix(X, "X")
        scale = Kernel.of(kernel, per_feature=False).frequency_scale(gamma)
        W = np.ascontiguousarray(scale * state.W0, dtype=X.dtype)
        b = np.ascontiguousarray(state.b, dtype=X.dtype)
        D = W.shape[1]
        check_allocation(float(X.shape[0]) * D * X.dtype.itemsize,
                         f"the random features of {X.shape[0]} points × {D} frequencies "
                         f"({X.dtype})", "use fewer random features (n_features) or fewer "
                         "points")
        return np.asarray(rff_unchecked(X, W, b, float(np.sqrt(2.0 / D)), team(workers)),
                          dtype=np.float64)

    def build_all(self, rows: Any, y: np.ndarray | None, gammas: Gammas, *,
                  kernel: str, state: RFFState) -> list[StreamingLowRankOperator]:
        """Operators for every γ of a grid from one pass over ``rows`` (the projections
        X W₀ are formed once per row block and scaled per γ)."""
        D = state.W0.shape[1]
        check_streaming_memory(rows, y, D, len(gammas), f"RFF with n_features={D}",
                               "use fewer random features")
        fmap = FourierFeatures(state.W0, state.b, gammas, kernel)
        details = [{"n_features": int(fmap.width)} for _ in gammas]
        return build_operators(rows, fmap, y, [Transform() for _ in details], "rff",
                               details)

    def build(self, X: np.ndarray, y: np.ndarray | None, gamma: float, *, kernel: str,
              state: RFFState | None, workers: int | None) -> KernelOperator:
        self.check_resources(*X.shape)
        kernel, gamma, state = self._build_start(X, y, gamma, kernel, state, workers)
        Z = self.features(X, gamma, kernel=kernel, state=state, workers=workers)
        op = LowRankOperator(Z)
        op.name = "rff"
        op.details = {"n_features": int(Z.shape[1])}
        return op
