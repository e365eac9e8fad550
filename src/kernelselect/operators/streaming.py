"""Exact power moments of K without holding K: blocked matvecs and kernel sums."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..utils._kernel_family import Kernel
from ..primitives._kernel_ops import Points, matvec_unchecked, sums_unchecked
from ..utils._lapack import gram
from ..utils._threads import team
from ._base import KernelOperator, _centred

__all__ = ["StreamingOperator"]


class StreamingOperator(KernelOperator):
    """The exact kernel matrix, accessed only through streaming passes.

    Pᵀ K^r P uses :func:`kernelselect.lowlevel.kernel_matvec` (O(n²d) time and O(nm)
    memory per pass); tr K^0 = n, tr K = Σ K_ii and tr K² = ‖K‖_F² come from one
    :func:`kernelselect.lowlevel.kernel_sums` pass. tr K^r for r ≥ 3 is not available.

    Probes are cached: the operator keeps an orthonormal basis B of every probe seen
    so far with the products K^j B, and a new probe lying in span(B) (e.g. ȳ, y − ȳ1
    or the class indicators once 1 and y were seen) costs no further pass. So the five
    moment criteria together need about two passes over K per γ.

    ``X`` may be given as :class:`~kernelselect.primitives._kernel_ops.Points` (X conditioned
    once for a whole grid, as :class:`~kernelselect.operators.dense.Exact` does);
    an array is conditioned here.
    """

    name = "streaming"
    spectral = False

    def __init__(self, X: npt.ArrayLike | Points, gamma: float,
                 kernel: str | Kernel = "gaussian", workers: int | None = None) -> None:
        self._kernel = Kernel.of(kernel, per_feature=False)
        self._points = X if isinstance(X, Points) else Points(X, self._kernel)
        super().__init__(self._points.n)
        self._gamma = float(gamma)
        self._threads = team(workers)
        self._sums: dict[str, Any] | None = None
        self._basis = np.zeros((self.n, 0))
        self._powers: list[np.ndarray] = []             # _powers[j] = K^(j+1) @ _basis
        self.passes = 0
        self.details = {"method": "streaming"}

    # -- internals -------------------------------------------------------------
    def _matvec(self, V: np.ndarray) -> np.ndarray:
        self.passes += 1
        P = self._points
        V = np.ascontiguousarray(V.reshape(self.n, -1), dtype=P.data.dtype)
        out = matvec_unchecked(P.data, V, P.gamma(self._gamma), self._kernel, self._threads)
        return np.asarray(out, dtype=np.float64)

    def _sums_once(self) -> dict[str, Any]:
        if self._sums is None:
            self.passes += 1
            P = self._points
            self._sums = sums_unchecked(P.data, P.gamma(self._gamma), self._kernel,
                                        self._threads)
        return self._sums

    def _extend(self, P: np.ndarray) -> None:
        """Grow the orthonormal probe basis so that span(basis) ⊇ span(P)."""
        B = self._basis
        new = P - B @ (B.T @ P) if B.shape[1] else P.copy()
        new = new - B @ (B.T @ new) if B.shape[1] else new   # second Gram–Schmidt pass
        norms = np.linalg.norm(new, axis=0)
        scale = np.maximum(np.linalg.norm(P, axis=0), 1e-300)
        keep = norms > 1e-13 * scale
        if not keep.any():
            return
        Qn, R = np.linalg.qr(new[:, keep])
        good = np.abs(np.diag(R)) > 1e-13 * scale[keep].max()
        Qn = Qn[:, good]
        if Qn.shape[1] == 0:
            return
        # orthogonalise once more against the old basis for safety
        if B.shape[1]:
            Qn = Qn - B @ (B.T @ Qn)
            Qn, _ = np.linalg.qr(Qn)
        self._basis = np.hstack([B, Qn])
        prev = Qn
        for j in range(len(self._powers)):
            prev = self._matvec(prev)
            self._powers[j] = np.hstack([self._powers[j], prev])

    def _power_basis(self, j: int) -> np.ndarray:
        """K^j @ basis for j ≥ 0."""
        if j == 0:
            return self._basis
        while len(self._powers) < j:
            src = self._basis if not self._powers else self._powers[-1]
            self._powers.append(self._matvec(src))
        return self._powers[j - 1]

    # -- power moments ---------------------------------------------------------
    def power_quadratic(self, r: int, P: npt.ArrayLike) -> np.ndarray:
        r = int(r)
        if r < 0:
            raise ValueError(f"r must be a non-negative integer, got {r!r}.")
        P = np.asarray(P, dtype=np.float64).reshape(self.n, -1)
        if r == 0:
            return gram(P)
        self._extend(P)
        B = self._basis
        C = B.T @ P                                     # P = B C
        half = r // 2
        if r % 2 == 0:
            H = self._power_basis(half)
            M = gram(H)                                 # Bᵀ K^r B
        else:
            H = self._power_basis(half)
            H1 = self._power_basis(half + 1)
            M = H.T @ H1
            M = 0.5 * (M + M.T)
        return C.T @ M @ C

    def power_trace(self, r: int) -> float:
        r = int(r)
        if r == 0:
            return float(self.n)
        if r == 1:
            return float(np.sum(self.diagonal()))
        if r == 2:
            return float(self._sums_once()["frobenius_sq"])
        raise ValueError(
            f"tr K^{r} is not available from the streaming exact operator (only r ≤ 2); "
            "use Exact(method='dense') or an approximation."
        )

    #: the moment form of ‖HKH‖_F² is used while it exceeds this fraction of ‖K‖_F²
    #: (its rounding error is then below ε/MOMENT_FLOOR ≈ 10⁻⁸ relative)
    MOMENT_FLOOR = 1e-8

    def centred_terms(self, y: npt.ArrayLike) -> tuple[float, float]:
        """(y_cᵀKy_c, ‖HKH‖_F²): the power-moment form while it is accurate; below
        ``MOMENT_FLOOR`` (K close to a constant matrix) the Gaussian kernel's
        expansion K = 11ᵀ − γD + O(γ²D²), D_ij = ‖x_i − x_j‖², whose centred part is
        HKH = 2γ X_cX_cᵀ + O(γ²D²) (X_c the centred data): y_cᵀKy_c ≈ 2γ‖X_cᵀy_c‖² and
        ‖HKH‖_F² ≈ 4γ²‖X_cᵀX_c‖_F², with relative error O(γ·max D) (at most about
        10⁻⁴ where the switch happens). The Laplacian kernel has no such low-rank
        expansion: NaN there, as the moment form would give.
        """
        ycky, kc_sq = super().centred_terms(y)
        fro_sq = self.power_trace(2)
        if np.isfinite(kc_sq) and kc_sq > self.MOMENT_FLOOR * fro_sq:
            return ycky, kc_sq
        if self._kernel.power != 2:           # the expansion below is the Gaussian's
            return ycky, np.nan
        # the conditioned points: γ‖x − x′‖² is the same on them with their γ
        X = np.asarray(self._points.data, dtype=np.float64)
        g = self._points.gamma(self._gamma)
        Xc = X - X.mean(axis=0)
        spread = float(np.max(np.sum(Xc * Xc, axis=1)))
        if not 4.0 * g * spread <= 1e-3:                 # the expansion would be off
            return ycky, np.nan
        v = Xc.T @ _centred(y)
        G = gram(Xc)
        return 2.0 * g * float(v @ v), 4.0 * g * g * float(np.sum(G * G))

    def diagonal(self) -> np.ndarray:
        return np.ones(self.n)                  # κ(x, x) = 1 for both families
