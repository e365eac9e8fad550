"""Feature maps of the streamed low-rank operators: for a whole γ grid, the feature
blocks F_b = f_γ(S_b) of a row block X_b from one shared block S_b.

Nyström (:class:`LandmarkFeatures`): S_b holds the squared (Gaussian) or L1
(Laplacian) distances to the landmarks and F_b = exp(−γ S_b); random Fourier
features (:class:`FourierFeatures`): S_b = X_b W₀ and F_b = √(2/D) cos(s_γ S_b + b).
:func:`block_rows` sizes the row blocks so a feature block stays in cache.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from scipy.spatial.distance import cdist

from .. import _rff
from ..utils._kernel_family import Kernel

__all__ = ["FeatureMap", "LandmarkFeatures", "FourierFeatures", "block_rows", "exp_block",
           "SQUARINGS", "BLOCK_ENTRIES"]


class FeatureMap(Protocol):
    """Feature blocks for every γ of a grid from one shared block per row block
    (:class:`LandmarkFeatures`, :class:`FourierFeatures`)."""

    width: int
    gammas: np.ndarray

    def shared(self, Xb: npt.ArrayLike) -> np.ndarray: ...

    def block(self, S: np.ndarray, i: int, out: np.ndarray,
              chain: list[Any] | None = None) -> np.ndarray: ...



#: exp(−2γS) is formed as exp(−γS)² at most this many times in a row
SQUARINGS = 3
#: entries of one feature block (b·c); 2¹⁸ doubles = 2 MB keeps a block in L2/L3
BLOCK_ENTRIES = 1 << 18


def block_rows(width: int) -> int:
    """Rows per block for feature blocks of ``width`` columns (at least 64)."""
    return max(64, BLOCK_ENTRIES // max(int(width), 1))


class LandmarkFeatures:
    """Nyström feature blocks C_b = K(X_b, Z) for every γ from one distance block.

    Gaussian: S_b = ‖x − z‖² = ‖x‖² + ‖z‖² − 2x·z (one GEMM, after centring X and Z
    on the landmark mean, which leaves distances unchanged and reduces cancellation;
    clamped at 0); Laplacian: S_b = ‖x − z‖₁. Then C_b = exp(−γ S_b) per γ.
    """

    def __init__(self, Z: npt.ArrayLike, gammas: npt.ArrayLike, kernel: str | Kernel) -> None:
        self.kernel = Kernel.of(kernel, per_feature=False)
        self.gammas = np.asarray(gammas, dtype=np.float64)
        Z = np.ascontiguousarray(Z, dtype=np.float64)
        self.width = Z.shape[0]
        if self.kernel.power == 2:
            self.centre = Z.mean(axis=0)
            self.Z = np.ascontiguousarray(Z - self.centre)
            self.z_sq = np.einsum("ij,ij->i", self.Z, self.Z)
        else:
            self.Z = Z

    def shared(self, Xb: npt.ArrayLike) -> np.ndarray:
        Xb = np.asarray(Xb, dtype=np.float64)
        if self.kernel.power == 2:
            Xc = Xb - self.centre
            S = Xc @ self.Z.T
            S *= -2.0
            S += np.einsum("ij,ij->i", Xc, Xc)[:, None]
            S += self.z_sq[None, :]
            np.maximum(S, 0.0, out=S)
            return S
        return cdist(Xb, self.Z, "cityblock")

    def block(self, S: np.ndarray, i: int, out: np.ndarray,
              chain: list[Any] | None = None) -> np.ndarray:
        """exp(−γ_i S) into ``out`` (:func:`exp_block`)."""
        return exp_block(self.gammas, S, i, out, chain)


def exp_block(gammas: np.ndarray, S: np.ndarray, i: int, out: np.ndarray,
              chain: list[Any] | None = None) -> np.ndarray:
    """exp(−γ_i S) into ``out``, γ = ``gammas``. ``chain`` = [index, squarings] says which
    γ ``out`` holds (updated here; one per caller and buffer). When γ_i = 2γ_index (the
    default grid doubles γ), ``out`` is squared instead: exp(−2γS) = exp(−γS)², one
    multiplication instead of an exponential per entry. Each squaring doubles the
    relative rounding error, so a fresh exponential is taken after SQUARINGS of them
    (error ≤ 2^SQUARINGS·ε)."""
    g = gammas
    if chain is not None and chain[0] == i - 1 and i > 0 and g[i] == 2.0 * g[i - 1] \
            and chain[1] < SQUARINGS:
        np.multiply(out, out, out=out)
        chain[0], chain[1] = i, chain[1] + 1
        return out
    with np.errstate(over="ignore"):          # γS beyond float64: −∞, and exp(−∞) = 0
        np.multiply(S, -g[i], out=out)
    if chain is not None:
        chain[0], chain[1] = i, 0
    return np.exp(out, out=out)


class FourierFeatures:
    """Random Fourier feature blocks z(x) = √(2/D) cos(s_γ W₀ᵀx + b) for every γ
    (s_γ = √(2γ) Gaussian, γ Laplacian; Rahimi & Recht 2007).

    Each block is one call of the compiled fused kernel (gemm with the bias, the
    vectorised cos and the scale per row chunk, as ``lowlevel.rff_features``) with the
    frequencies s_γW₀: the product X_b(s_γW₀) costs d flops per feature, far less than
    its cos, so nothing is shared across γ but the rows themselves.
    """

    def __init__(self, W0: npt.ArrayLike, b: npt.ArrayLike, gammas: npt.ArrayLike,
                 kernel: str | Kernel) -> None:
        self.W0 = np.ascontiguousarray(W0, dtype=np.float64)
        self.b = np.ascontiguousarray(b, dtype=np.float64)
        self.width = self.W0.shape[1]
        family = Kernel.of(kernel, per_feature=False)
        self.gammas = np.atleast_1d(np.asarray(gammas, dtype=np.float64))
        self.scales = np.array([family.frequency_scale(float(g)) for g in self.gammas])
        self.norm = np.sqrt(2.0 / self.width)
        self._W = [np.ascontiguousarray(self.W0 * s) for s in self.scales]
        self._no_row_scale = np.empty(0, dtype=np.float64)

    def shared(self, Xb: npt.ArrayLike) -> np.ndarray:
        return np.ascontiguousarray(Xb, dtype=np.float64)

    def block(self, S: np.ndarray, i: int, out: np.ndarray,
              chain: list[Any] | None = None) -> np.ndarray:
        _rff._rff_columns_into(S, self._W[i], self.b, self._no_row_scale, self.norm, out, 1)
        return out
