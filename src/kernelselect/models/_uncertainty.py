"""Uncertainty of the fitted machines without a refit: closed-form leave-one-out
decision values, calibrated class probabilities and prediction intervals.

Leave-one-out of the fitted machine
-----------------------------------
Every machine is a ridge regression: on the kernel matrix itself (exact), or on a
feature map φ of dimension k (the Nyström map T⁻ᵀk(Z, x) of the conjugate-gradient
machine, the landmark map Tᵀk(L, x) of ``approximation="nystrom"``, random features).
Its constant term takes one of three forms (``intercept_form_``): "none", "bias" (an
unpenalised b, the LSSVM) or "mean" (ȳ, the training mean, the rest left to the
kernel). For the first two the refit without row i equals the fit with y_i replaced
by that refit's own prediction, so the leave-one-out residual is

    r_i = y_i − f₋ᵢ(x_i) = (y_i − f_i) / (1 − h_i)

with h_i the leverage, the diagonal of the hat matrix (Golub, Heath & Wahba,
Technometrics 1979). Exact: 1 − h_i = α(K_α⁻¹)_ii without the bias and
α(P⁻¹)_ii with it, (P⁻¹)_ii = (K_α⁻¹)_ii − (K_α⁻¹1)_i² / 1ᵀK_α⁻¹1 (Cawley & Talbot,
Neural Networks 2004), so r_i = a_i/(K_α⁻¹)_ii or a_i/(P⁻¹)_ii with a the dual
coefficients. Feature map: h_i = pᵢᵀ(G + αI)⁻¹pᵢ (+ 1/n with the bias), pᵢ = φ_i
(φ_i − μ with the bias, μ = Φᵀ1/n), G = PᵀP. The "mean" form refits ȳ without the row
too, which moves it by δ_i = −(y_i − ȳ)/(n − 1); by linearity

    r_i = (e_i − δ_i (1 − (H1)_i)) / (1 − h_i),   e_i = y_i − f_i,

where (H1)_i is the fitted value of the constant target 1 (the same derivation as
:mod:`kernelselect.solvers._loo`). The leave-one-out decision value is
y_i − r_i. Cost: exact, one kernel matrix, one Cholesky factorisation and its
inverse, O(n²d + n³); feature maps, two streamed passes over the rows, O(n·k² + n·k·d)
time and O(k²) memory (k × k Gram matrix), the n values kept (exact: K_α = LLᵀ, then
the triangular inverse L⁻¹, n³/3 flops each; L⁻¹ is kept for the jackknife+ below). A conjugate-gradient
model is the minimiser only to its tolerance, and so are its residuals.

Calibrated probabilities
------------------------
The class probabilities are a softmax of the decision values with one slope,
p(c | x) ∝ exp(a·f_c(x)) — for two classes Platt's sigmoid 1/(1 + exp(−a·f))
(Platt, *Probabilistic outputs for support vector machines*, 1999) without its
intercept; temperature scaling (Guo, Pleiss, Sun & Weinberger, ICML 2017) of the
one-vs-rest columns with more — a fitted by maximum likelihood on the n leave-one-out
decision values with Platt's smoothed targets (N₊ + 1)/(N₊ + 2) and 1/(N₋ + 2) (with C
classes the true class's target is (N_c + 1)/(N_c + 2), the rest shared evenly).
Without an intercept the most probable class is always the one ``predict`` names;
the study in the user guide's page "Uncertainty" measured per-class intercepts b_c
(p ∝ exp(a·f_c + b_c), Platt's full form) and isotonic regression beside it.
Out-of-sample values matter: the training values of a kernel machine are
over-confident (the machine nearly interpolates at small α).

Prediction intervals
--------------------
Jackknife+ (Barber, Candès, Ramdas & Tibshirani, Ann. Statist. 2021): with the
leave-one-out models f₋ᵢ and residuals r_i,

    [ q⁻_α{f₋ᵢ(x) − |r_i|},  q⁺_α{f₋ᵢ(x) + |r_i|} ],

q⁻ the ⌊α(n + 1)⌋-th smallest and q⁺ the ⌈(1 − α)(n + 1)⌉-th smallest of the n values,
covers a new exchangeable y with probability at least 1 − 2α (theorem 1), in practice
close to 1 − α. For a linear smoother with the replacement property
f₋ᵢ(x) = f(x) − w_i(x)·r_i, w(x) the smoother weights at x (exact: K_α⁻¹k(x), less
(k(x)ᵀu − 1)u/1ᵀu with the bias, u = K_α⁻¹1); the "mean" form adds δ_i(1 − w(x)ᵀ1).
That needs the Cholesky factor (n × n) at prediction time, O(n²) per new point, so it
is offered for exact machines of at most :data:`JACKKNIFE_PLUS_MAX_N` rows.
Everywhere else (and on request) the jackknife interval f(x) ± q, q the
⌈(1 − α)(n + 1)⌉-th smallest |r_i|, is used: the split-conformal form with the
leave-one-out residuals as its calibration scores. Its finite-sample guarantee holds
only for a stable machine (Barber et al., section 5); the coverage it reaches is
measured in the user guide's page "Uncertainty".
"""

from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np
from scipy import linalg
from scipy.linalg import blas

from .. import lowlevel
# the largest exact machine whose jackknife+ interval is offered: a rule (kernelselect._policy)
from .._policy import JACKKNIFE_PLUS_MAX_N, LOO_EXACT_MAX_N
from ..kernels import Kernel
from ..utils._dask import IN_MEMORY, RowSource
from ..utils._lapack import cholesky_in_place, syrk_in_place, zero_strict_triangle
from ..utils._threads import blas_for_flops, block_workers

__all__ = ["JACKKNIFE_PLUS_MAX_N", "LOO_EXACT_MAX_N", "INTERVAL_METHODS", "is_exact",
           "loo_method", "loo_decision", "Calibration", "fit_calibration", "check_coverage",
           "interval_quantiles", "jackknife_interval", "jackknife_plus_interval",
           "ExactSmoother"]

#: the interval methods ``predict_interval`` takes
INTERVAL_METHODS = ("auto", "jackknife+", "jackknife")
_BLOCK_ENTRIES = 2**20


# --------------------------------------------------------------------------- LOO
def _gaussian_view(X: np.ndarray, model: Any) -> tuple[np.ndarray, Any, str]:
    """X and (γ, kernel) as the compiled family sees them (:meth:`Kernel.points`; the
    per-feature kernel: X·diag(√γ), γ = 1)."""
    family = Kernel.of(model.kernel)
    Xs, g = family.points(X, model.gamma)
    return Xs, g, family.compiled


def _row_blocks(X: Any, Y: Any, rows: int, source: RowSource = IN_MEMORY
                ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(x, y) blocks of ``rows`` rows; a Dask X (and Y; ``source``) one chunk at a time."""
    if source.lazy:
        from ..utils._dask import _compute as compute

        assert source.chunks is not None
        starts = np.cumsum((0,) + source.chunks)
        for a, b in zip(starts[:-1], starts[1:]):
            x, y = compute(X[a:b], Y[a:b])
            yield from _row_blocks(np.asarray(x, dtype=np.float64),
                                   np.asarray(y, dtype=np.float64).reshape(b - a, -1), rows)
        return
    for lo in range(0, X.shape[0], rows):
        yield X[lo:lo + rows], Y[lo:lo + rows]


class _FeatureMap:
    """Φ of a low-rank machine, and its fitted values, for a block of rows."""

    def __init__(self, model: Any) -> None:
        self.model = model
        if model.conditioning is not None:             # the conjugate-gradient machine
            self.kind = "pcg"
            self.k = model.conditioning.centres.shape[0]
        elif model.weights is not None:                # random features
            self.kind = "rff"
            self.k = model.weights.shape[0]
        else:                                          # the landmark map of "nystrom"
            self.kind = "nystrom"
            self.T = model.details["landmark_map"]
            self.k = self.T.shape[1]

    def centres_factor(self) -> np.ndarray:
        """The conjugate-gradient machine's T, TᵀT = K_mm + δI (upper, Fortran order)."""
        cond = self.model.conditioning
        jitter = self.model.details.get("jitter", 0.0)
        jitter = float(jitter[0] if isinstance(jitter, (list, tuple)) else jitter)
        K = lowlevel.kernel_block(cond.centres, cond.centres, cond.gamma, kernel=cond.kernel)
        K[np.diag_indices_from(K)] += jitter
        # in K's memory (K is symmetric: K.T is its Fortran view)
        T = K.T
        with blas_for_flops(float(T.shape[0]) ** 3 / 3.0):
            info = cholesky_in_place(T, lower=False, clean=True)
        if info != 0:                             # pragma: no cover - the fit factored it
            raise np.linalg.LinAlgError(f"dpotrf failed with info={info}")
        return T

    def raw(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the block before the map: K(x, centres) for the conjugate-gradient machine,
        else Φ_b itself; fitted f_b of shape (b, t)) at the first α."""
        m = self.model
        x = np.ascontiguousarray(x, dtype=np.float64)
        if self.kind == "pcg":
            cond = m.conditioning
            x, _ = Kernel.of(m.kernel).points(x, m.gamma)    # the centres' coordinates
            Kb = lowlevel.kernel_block((x - cond.shift) * cond.scale, cond.centres,
                                       cond.gamma, kernel=cond.kernel,
                                       workers=block_workers(float(x.shape[0]) * self.k, None))
            return Kb, Kb @ m.coef[:, :, 0] + m.intercept[:, 0]
        if self.kind == "rff":
            approx, state = m._features
            xs, g, k = _gaussian_view(x, m)
            Z = approx.features(np.ascontiguousarray(xs), g, kernel=k, state=state)
            return Z, Z @ m.weights[:, :, 0] + m.intercept[:, 0]
        Kb = lowlevel.kernel_block(x, m.support, m.gamma, kernel=m.kernel,
                                   workers=block_workers(float(x.shape[0]) * self.k, None))
        return Kb @ self.T, Kb @ m.coef[:, :, 0] + m.intercept[:, 0]

class _Triangles:
    """Two k × k triangular matrices in one Fortran array, as the conjugate-gradient
    preconditioner keeps its two factors: an upper T (the conjugate-gradient machine's
    TᵀT = K_mm + δI; absent for the other feature maps) and a lower one, first the lower
    half of G = ΦᵀΦ as it accumulates, then the factor L of M = G (− nμμᵀ) + αI = LLᵀ.
    Each has its own diagonal, put in place before the array is used as either: one
    k × k array where T, G and the factor would otherwise take three."""

    def __init__(self, T: np.ndarray | None, k: int) -> None:
        self.A = T if T is not None else np.zeros((k, k), order="F")
        self.diags = {"upper": self.A.diagonal().copy(), "lower": np.zeros(k)}
        if T is not None:
            np.fill_diagonal(self.A, 0.0)       # below T: zeros (dpotrf clean=1) to add G to
        self.side = "lower"

    def as_(self, side: str) -> np.ndarray:
        """The array with ``side``'s diagonal in place."""
        if side != self.side:
            self.diags[self.side] = self.A.diagonal().copy()
            np.fill_diagonal(self.A, self.diags[side])
            self.side = side
        return self.A

    def features(self, B: np.ndarray) -> np.ndarray:
        """Φ_bᵀ = T⁻ᵀB_bᵀ (k, b) from the block K(x_b, centres) (b, k)."""
        return blas.dtrsm(1.0, self.as_("upper"), B.T, lower=0, trans_a=1)

    def add(self, PhiT: np.ndarray) -> None:
        """G += Φ_bᵀΦ_b (lower triangle)."""
        syrk_in_place(self.as_("lower"), PhiT, 1.0, lower=True)

    def factor(self, alpha: float, n: int, mu: np.ndarray | None) -> None:
        """G (− nμμᵀ) + αI = LLᵀ in place."""
        A = self.as_("lower")
        if mu is not None:
            blas.dsyr(-float(n), mu, a=A, lower=1, overwrite_a=1)
        A[np.diag_indices_from(A)] += alpha
        with blas_for_flops(float(A.shape[0]) ** 3 / 3.0):
            info = cholesky_in_place(A, lower=True)
        if info != 0:
            raise np.linalg.LinAlgError(f"the leave-one-out's ΦᵀΦ + αI is not positive "
                                        f"definite (dpotrf info={info})")

    def solve(self, b: np.ndarray) -> np.ndarray:
        """M⁻¹b = L⁻ᵀL⁻¹b."""
        A = self.as_("lower")
        z = linalg.solve_triangular(A, b, lower=True, check_finite=False)
        return linalg.solve_triangular(A, z, lower=True, trans="T", check_finite=False)

    def whiten(self, B: np.ndarray) -> np.ndarray:
        """L⁻¹B for B (k, b): Rᵀ = L, so the rows of R⁻ᵀ(φ_i) are its columns."""
        return blas.dtrsm(1.0, self.as_("lower"), B, lower=1, trans_a=0,
                          overwrite_b=int(B.flags.f_contiguous))

    def upper_solve(self, b: np.ndarray) -> np.ndarray:
        """T⁻¹b."""
        return linalg.solve_triangular(self.as_("upper"), b, lower=False, check_finite=False)


def _feature_loo(model: Any, X: Any, Y: Any, alpha: float, form: str,
                 offset: np.ndarray | None, source: RowSource = IN_MEMORY) -> np.ndarray:
    """Leave-one-out residuals (n, t) of a machine on a feature map (module notes).

    Pass 1 adds G = ΦᵀΦ (a rank-b update per block, Φ formed block by block so that its
    rounding stays that of Φ, not of K_nmᵀK_nm transformed by T⁻¹) and s = Φᵀ1; M = G
    (− nμμᵀ with the bias) + αI = LLᵀ. Pass 2 needs the rows of L⁻¹(φ_i − μ): for the
    conjugate-gradient machine, φ_i = T⁻ᵀk_i, two triangular solves. About 3·n·k²
    flops in all (4·n·k² for the conjugate-gradient machine), in one k × k array
    (:class:`_Triangles`) beside blocks of rows."""
    fmap = _FeatureMap(model)
    k = fmap.k
    pcg = fmap.kind == "pcg"
    tri = _Triangles(fmap.centres_factor() if pcg else None, k)
    rows = max(16, _BLOCK_ENTRIES // max(k, 1))
    s = np.zeros(k)
    n = 0

    def features(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        B, f = fmap.raw(x)
        return (tri.features(B) if pcg else np.asfortranarray(B.T)), f

    with blas_for_flops(float(X.shape[0]) * k * k):
        for x, _ in _row_blocks(X, Y, rows, source):        # pass 1: G = ΦᵀΦ, s = Φᵀ1
            PhiT, _ = features(x)
            tri.add(PhiT)
            s += PhiT.sum(axis=1)
            n += x.shape[0]
        mu = s / n if form == "bias" else None
        tri.factor(alpha, n, mu)
        v = tri.solve(s) if form == "mean" else None          # M⁻¹Φᵀ1
        v_raw = v if v is None or not pcg else tri.upper_solve(v)   # T⁻¹v: K_bT⁻¹v = Φ_bv
        shift = None if mu is None else tri.whiten(mu[:, None].copy(order="F"))   # L⁻¹μ
        out = []
        for x, y in _row_blocks(X, Y, rows, source):        # pass 2: leverages
            B, f = fmap.raw(x)
            e = y - f
            if form == "mean":
                assert offset is not None and v_raw is not None
                delta = -(y - offset) / (n - 1.0)
                e = e - delta * (1.0 - B @ v_raw)[:, None]
            W = tri.whiten(tri.features(B) if pcg else np.array(B.T, order="F"))
            if shift is not None:
                W -= shift
            h = np.einsum("ij,ij->j", W, W) + (1.0 / n if form == "bias" else 0.0)
            out.append(e / (1.0 - h)[:, None])
    return np.concatenate(out, axis=0)


def _residuals_from_fit(coef: np.ndarray, parts: dict[str, np.ndarray], Y: np.ndarray,
                        form: str, offset: np.ndarray | None) -> np.ndarray:
    """The exact machine's leave-one-out residuals (n, t) from its dual coefficients a and
    what its fit recorded, d = diag(K_α⁻¹) and u = K_α⁻¹1 (:meth:`ExactSmoother.
    loo_residuals` without a factor: a is K_α⁻¹y, K_α⁻¹(y − ȳ) or ν − ub)."""
    d, u = parts["diag"], parts["u"]
    if form == "bias":
        return coef / (d - u ** 2 / u.sum())[:, None]
    if form == "mean":
        assert offset is not None
        delta = -(Y - offset) / (Y.shape[0] - 1.0)
        return (coef - delta * u[:, None]) / d[:, None]
    return coef / d[:, None]


def loo_method(model: Any, n: int) -> str:
    """How the leave-one-out residuals of a machine fitted on n rows are computed:
    "closed form" (equal to n refits), or beyond :data:`LOO_EXACT_MAX_N` rows on the
    conjugate-gradient machine "gcv", the form of generalised cross-validation."""
    if model.conditioning is None or n <= LOO_EXACT_MAX_N:
        return "closed form"
    d_eff = model.details.get("effective_dimension", [float("nan")])[0]
    return "gcv" if math.isfinite(d_eff) else "closed form"   # a solve that did not report it


def _gcv_loo(model: Any, X: Any, Y: Any, form: str, source: RowSource = IN_MEMORY
             ) -> np.ndarray:
    """r_i = e_i / (1 − d_eff/n): the training residuals e_i = y_i − f(x_i) with every
    leverage h_i = (H)_ii replaced by their mean tr H / n, the form of generalised
    cross-validation (Craven & Wahba, Numer. Math. 31, 1979; Golub, Heath & Wahba,
    Technometrics 21, 1979). d_eff is the effective dimension the solve reports (its
    preconditioner's, plus one for a fitted constant). One pass over the rows, n·k·d
    flops, where the closed form's two passes cost 4·n·k²."""
    fmap = _FeatureMap(model)
    n = X.shape[0]
    d_eff = float(model.details["effective_dimension"][0]) + (1.0 if form == "mean" else 0.0)
    scale = 1.0 / (1.0 - min(d_eff, n - 1.0) / n)
    rows = max(16, _BLOCK_ENTRIES // max(fmap.k, 1))
    with blas_for_flops(float(n) * fmap.k):
        return np.concatenate([(y - fmap.raw(x)[1]) * scale
                               for x, y in _row_blocks(X, Y, rows, source)], axis=0)


class ExactSmoother:
    """The exact machine's K_α = LLᵀ and what its leave-one-out and jackknife+ need:
    L⁻¹ (one Cholesky factorisation and one triangular inverse, n³/3 flops each),
    u = K_α⁻¹1, diag(K_α⁻¹) (the squared column norms of L⁻¹), the weights w(x).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The training rows (the machine's support).
    gamma, kernel : the machine's kernel
    alpha : float
    form : {"none", "bias", "mean"}
    """

    def __init__(self, X: np.ndarray, gamma: Any, kernel: str, alpha: float, form: str
                 ) -> None:
        self.X, self.gamma, self.kernel, self.form = X, gamma, kernel, form
        n = X.shape[0]
        with blas_for_flops(float(n) ** 3):
            K = lowlevel.kernel_block(X, X, gamma, kernel=kernel,
                                      workers=block_workers(float(n) * n, None))
            K[np.diag_indices_from(K)] += alpha
            L = np.asfortranarray(K)
            info = cholesky_in_place(L, lower=True, clean=True)
            if info == 0:
                L, info = linalg.lapack.dtrtri(L, lower=1, overwrite_c=1)
            if info != 0:
                raise ValueError(f"K + alpha*I is not positive definite (alpha={alpha:g}); "
                                 "the leave-one-out values need a larger alpha.")
        self.Linv = L                                # lower triangular, K_α⁻¹ = L⁻ᵀL⁻¹
        self.diag = np.einsum("ij,ij->j", L, L)      # (K_α⁻¹)_ii
        self.u = self.solve(np.ones((n, 1)))[:, 0]   # K_α⁻¹1
        self.S = float(self.u.sum())                 # 1ᵀK_α⁻¹1

    @classmethod
    def from_inverse(cls, X: np.ndarray, gamma: Any, kernel: str, form: str,
                     Linv: np.ndarray, diag: np.ndarray) -> "ExactSmoother":
        """The smoother from the fit's own factor: L⁻¹ (lower triangle read; the upper
        one is zeroed here, in place) and diag(K_α⁻¹), as the fit with
        ``uncertainty=True`` computed them, so that no second factorisation is made."""
        self = cls.__new__(cls)
        self.X, self.gamma, self.kernel, self.form = X, gamma, kernel, form
        zero_strict_triangle(Linv, upper=True)
        self.Linv, self.diag = Linv, np.asarray(diag, dtype=np.float64)
        self.u = self.solve(np.ones((X.shape[0], 1)))[:, 0]
        self.S = float(self.u.sum())
        return self

    def solve(self, B: np.ndarray) -> np.ndarray:
        """K_α⁻¹B = L⁻ᵀ(L⁻¹B) for B (n, t)."""
        B = np.asarray(B, dtype=np.float64)
        with blas_for_flops(2.0 * B.shape[0] ** 2 * B.shape[1]):
            C = blas.dtrmm(1.0, self.Linv, B, lower=1)
            return blas.dtrmm(1.0, self.Linv, C, lower=1, trans_a=1)

    def loo_residuals(self, Y: np.ndarray, offset: np.ndarray | None) -> np.ndarray:
        """r (n, t) for the targets Y (n, t) (as given to the estimator, uncentred)."""
        n = Y.shape[0]
        if self.form == "bias":
            nu = self.solve(Y)
            b = nu.sum(axis=0) / self.S                 # 1ᵀν / 1ᵀK_α⁻¹1
            a = nu - self.u[:, None] * b
            return a / (self.diag - self.u ** 2 / self.S)[:, None]
        if self.form == "mean":
            assert offset is not None
            a = self.solve(Y - offset)
            delta = -(Y - offset) / (n - 1.0)
            return (a - delta * self.u[:, None]) / self.diag[:, None]
        return self.solve(Y) / self.diag[:, None]

    def predictive_std(self, x: np.ndarray, Y: np.ndarray, offset: np.ndarray | None,
                       alpha: float) -> np.ndarray:
        """The Gaussian-process predictive standard deviation of a new target at the
        rows x, (b, t): the model y − ȳ ~ N(0, σ²(K + αI)) whose evidence the per-feature
        selection maximises (Rasmussen & Williams 2006, eqs. 2.25–2.26, §5.4.1), σ²
        profiled out, σ̂² = (y − c)ᵀK_α⁻¹(y − c)/n with c = ȳ ("mean"), the generalised
        least-squares constant ("bias", whose uncertainty (1 − 1ᵀK_α⁻¹k)²/1ᵀK_α⁻¹1 is
        added) or 0 ("none"):

            var y(x) = σ̂² (1 + α − k(x)ᵀK_α⁻¹k(x)).
        """
        n = Y.shape[0]
        if self.form == "mean":
            assert offset is not None
            R = Y - offset
        elif self.form == "bias":
            R = Y - self.solve(Y).sum(axis=0) / self.S
        else:
            R = Y
        sigma2 = np.einsum("ij,ij->j", R, self.solve(R)) / n            # (t,)
        Kx = lowlevel.kernel_block(x, self.X, self.gamma, kernel=self.kernel,
                                   workers=block_workers(float(x.shape[0]) * n, None))
        V = self.solve(Kx.T)                                            # K_α⁻¹k(x), (n, b)
        var = 1.0 + alpha - np.einsum("ij,ji->i", Kx, V)
        if self.form == "bias":
            var += (1.0 - V.sum(axis=0)) ** 2 / self.S
        return np.sqrt(np.maximum(var, 0.0)[:, None] * sigma2[None, :])

    def weights(self, x: np.ndarray) -> np.ndarray:
        """w(x) of shape (b, n): the fitted value at x is w(x)ᵀy (plus ȳ(1 − w(x)ᵀ1) for
        the "mean" form)."""
        Kx = lowlevel.kernel_block(x, self.X, self.gamma, kernel=self.kernel,
                                   workers=block_workers(float(x.shape[0]) * self.X.shape[0],
                                                         None))
        W = self.solve(Kx.T).T                          # (K_α⁻¹k(x))ᵀ
        if self.form == "bias":
            W -= np.outer(Kx @ self.u - 1.0, self.u / self.S)
        return W


def is_exact(model: Any) -> bool:
    """Whether a fitted machine is the exact one (its support is every training row);
    else it is a feature map (Nyström, random features, the conjugate-gradient
    machine)."""
    return model.method in ("cholesky", "eigh", "tridiagonal") and model.conditioning is None


def loo_decision(model: Any, X: Any, Y: Any, alpha: float, form: str,
                 offset: np.ndarray | None = None, source: RowSource = IN_MEMORY
                 ) -> tuple[np.ndarray, ExactSmoother | None]:
    """The leave-one-out decision values (n, t) of a fitted machine, and for an exact
    machine its :class:`ExactSmoother`.

    Parameters
    ----------
    model : KernelMachine
        Fitted at one α on X (the first α of its path is used).
    X : ndarray of shape (n, d) or a row-chunked Dask array
        Its training rows.
    Y : ndarray of shape (n, t) or Dask array
        The targets it was fitted to (±1 columns of a classifier), uncentred.
    alpha : float
    form : {"none", "bias", "mean"}
        The constant term of the fitted model.
    offset : ndarray of shape (t,) or None
        ȳ of the "mean" form.
    source : RowSource
        Where X and Y live (in memory, or the row chunks of Dask arrays).

    Returns
    -------
    F : ndarray of shape (n, t)
        y_i − r_i, the prediction at x_i of the machine refitted without row i.
    smoother : ExactSmoother or None
    """
    parts = model.details.get("leave_one_out")
    if parts is not None and is_exact(model):        # recorded by the fit (uncertainty=True)
        Yl = np.asarray(Y, dtype=np.float64)
        return Yl - _residuals_from_fit(model.coef[:, :, 0], parts, Yl, form, offset), None
    if is_exact(model):
        Xe = np.ascontiguousarray(X, dtype=np.float64)
        smoother = ExactSmoother(Xe, model.gamma, model.kernel, alpha, form)
        return Y - smoother.loo_residuals(Y, offset), smoother
    R = (_gcv_loo(model, X, Y, form, source) if loo_method(model, X.shape[0]) == "gcv"
         else _feature_loo(model, X, Y, alpha, form, offset, source))
    Yl = np.asarray(Y.compute() if source.lazy else Y, dtype=np.float64).reshape(R.shape)
    return Yl - R, None


# --------------------------------------------------------------------- calibration
class Calibration:
    """p(c | f) = softmax(a·z(f) + b): z(f) = (0, f) for a single decision value (two
    classes, Platt's sigmoid), else the one-vs-rest columns; b_0 = 0 (b = 0 unless the
    intercepts were fitted).

    Attributes
    ----------
    slope : float
    intercepts : ndarray of shape (C,)
    """

    def __init__(self, slope: float, intercepts: np.ndarray) -> None:
        self.slope = slope
        self.intercepts = intercepts

    @staticmethod
    def logits_of(F: np.ndarray) -> np.ndarray:
        F = np.asarray(F, dtype=np.float64)
        F = F[:, None] if F.ndim == 1 else F
        return np.column_stack([np.zeros(F.shape[0]), F]) if F.shape[1] == 1 else F

    def log_proba(self, F: np.ndarray) -> np.ndarray:
        Z = self.slope * self.logits_of(F) + self.intercepts
        Z -= Z.max(axis=1, keepdims=True)
        return Z - np.log(np.exp(Z).sum(axis=1, keepdims=True))

    def proba(self, F: np.ndarray) -> np.ndarray:
        return np.exp(self.log_proba(F))


def fit_calibration(F: np.ndarray, codes: np.ndarray, n_classes: int,
                    intercepts: bool = False, max_iter: int = 100) -> Calibration:
    """Maximum-likelihood slope and intercepts on decision values F (n, t) and class
    codes 0..C−1, Platt's smoothed targets (module notes); with ``intercepts`` false
    (the estimators' choice) the slope alone, b = 0, so the most probable class is the
    one ``predict`` names.

    The negative log-likelihood is convex in θ = (a, b_1, …, b_{C−1}) (the logits are
    linear in θ); it is minimised by Newton's method with the exact Hessian
    Σ_i J_iᵀ(diag p_i − p_i p_iᵀ)J_i (C parameters, O(n·C³) per step) and a
    backtracking line search, from a = 1/std(F), b = 0, until the step is below 10⁻¹⁰.
    The slope alone is kept at a ≥ 0 (a = 0 gives equal probabilities: leave-one-out
    values that rank the classes backwards are no evidence for a reversed ranking)."""
    Z = Calibration.logits_of(F)
    n, C = Z.shape
    counts = np.bincount(codes, minlength=n_classes).astype(np.float64)
    own = (counts + 1.0) / (counts + 2.0)
    Q = np.tile(((1.0 - own[codes]) / (C - 1))[:, None], (1, C))
    Q[np.arange(n), codes] = own[codes]
    scale = float(np.std(Z)) or 1.0
    Zs = Z / scale
    k = C if intercepts else 1                    # θ = (a, b_1, …, b_{C−1}) or (a,)
    J = np.zeros((n, C, k))                       # ∂z_ic/∂θ
    J[:, :, 0] = Zs
    J[:, np.arange(1, k), np.arange(1, k)] = 1.0

    def full(theta: np.ndarray) -> np.ndarray:
        return np.concatenate([[0.0], theta[1:], np.zeros(C - k)])

    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        L = theta[0] * Zs + full(theta)
        L -= L.max(axis=1, keepdims=True)
        logp = L - np.log(np.exp(L).sum(axis=1, keepdims=True))
        return float(-(Q * logp).sum()), np.exp(logp)

    theta = np.concatenate([[1.0], np.zeros(k - 1)])
    value, P = nll(theta)
    for _ in range(max_iter):
        grad = np.einsum("ic,icp->p", P - Q, J)
        W = P[:, :, None] * (np.eye(C)[None] - P[:, None, :])          # diag p − ppᵀ
        H = np.einsum("icp,icd,idq->pq", J, W, J) + 1e-12 * np.eye(k)
        step = linalg.solve(H, grad, assume_a="pos", check_finite=False)
        t = 1.0
        while True:
            trial, P_trial = nll(theta - t * step)
            if trial <= value or t < 1e-10:
                break
            t *= 0.5
        theta, value, P = theta - t * step, trial, P_trial
        if np.max(np.abs(t * step)) < 1e-10:
            break
    if not intercepts and theta[0] < 0.0:
        # decision values that order the classes backwards carry no usable evidence: the
        # likelihood is convex in a, so its optimum over a ≥ 0 is a = 0 (the uniform p)
        theta[0] = 0.0
    return Calibration(float(theta[0]) / scale, full(theta))


# ----------------------------------------------------------------------- intervals
def check_coverage(coverage: Any) -> float:
    """``coverage`` as a float in (0, 1), else a ValueError naming it."""
    try:
        c = float(coverage)
    except (TypeError, ValueError):
        raise TypeError(f"coverage must be a number in (0, 1), got {coverage!r}.") from None
    if not 0.0 < c < 1.0 or math.isnan(c):
        raise ValueError(f"coverage must lie strictly between 0 and 1 (0.9 for a 90% "
                         f"interval), got {coverage!r}.")
    return c


def interval_quantiles(n: int, coverage: float) -> tuple[int, int]:
    """(k_lo, k_hi): the ⌊α(n + 1)⌋-th and ⌈(1 − α)(n + 1)⌉-th smallest (1-based) of n
    values, α = 1 − coverage; 0 or n + 1 stands for an infinite end."""
    a = 1.0 - coverage
    eps = 1e-9                        # (n + 1)·α computed in floating point
    return int(math.floor(a * (n + 1) + eps)), int(math.ceil((1.0 - a) * (n + 1) - eps))


def _kth(values: np.ndarray, k: int, axis: int = -1) -> np.ndarray:
    """The k-th smallest (1-based) along ``axis``; ±inf beyond the ends."""
    n = values.shape[axis]
    if k < 1:
        return np.full(np.delete(values.shape, axis), -np.inf)
    if k > n:
        return np.full(np.delete(values.shape, axis), np.inf)
    return np.partition(values, k - 1, axis=axis).take(k - 1, axis=axis)


def jackknife_interval(pred: np.ndarray, residuals: np.ndarray, coverage: float) -> np.ndarray:
    """f(x) ± the ⌈coverage·(n + 1)⌉-th smallest |r_i| per output: pred (b, t),
    residuals (n, t) → (b, t, 2)."""
    _, k = interval_quantiles(residuals.shape[0], coverage)
    q = _kth(np.abs(residuals), k, axis=0)                # (t,)
    return np.stack([pred - q, pred + q], axis=-1)


def jackknife_plus_interval(smoother: ExactSmoother, x: np.ndarray, pred: np.ndarray,
                            residuals: np.ndarray, delta: np.ndarray | None,
                            coverage: float) -> np.ndarray:
    """Jackknife+ at the rows x (module notes): pred (b, t), residuals (n, t) →
    (b, t, 2); ``delta`` (n, t), the moves −(y_i − ȳ)/(n − 1) of the "mean" form's ȳ
    (None for the other forms). Blocks of rows hold at most ~2²⁰ weights at a time."""
    n, t = residuals.shape
    k_lo, k_hi = interval_quantiles(n, coverage)
    out = np.empty(pred.shape + (2,))
    rows = max(1, _BLOCK_ENTRIES // n)
    absr = np.abs(residuals)
    for lo in range(0, x.shape[0], rows):
        W = smoother.weights(x[lo:lo + rows])                        # (b, n)
        rest = None if delta is None else 1.0 - W.sum(axis=1, keepdims=True)
        for j in range(t):
            loo = pred[lo:lo + rows, j:j + 1] - W * residuals[:, j]  # f₋ᵢ(x), (b, n)
            if rest is not None:
                assert delta is not None
                loo += rest * delta[:, j]
            out[lo:lo + rows, j, 0] = _kth(loo - absr[:, j], k_lo)
            out[lo:lo + rows, j, 1] = _kth(loo + absr[:, j], k_hi)
    return out
