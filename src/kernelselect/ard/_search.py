"""Gradient search of the per-feature bandwidths: L-BFGS-B on the closed-form held-out
error in (log γ₁, …, log γ_d, log α), and the nested check that guards its choice.

The problem (:class:`ArdProblem`) fixes the data, the targets and the stand-in — the
exact kernel matrix or a Nyström stand-in with fixed landmarks — and the objective,
the logarithm of the mean squared held-out residual of the LSSVM (k-fold in closed
form, or leave-one-out; :mod:`kernelselect.ard`). The rules that choose among these
live in :mod:`kernelselect.selection._ard_select`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.linalg

from . import _exact
from ._base import EvaluationError, gaussian_block
from ._nystrom import nystrom_factor, press_nystrom_rows
from ..utils._labels import column_codes
from ..operators._row_passes import ArrayRows
from ..utils._kernel_family import Kernel
from ..criteria.kfold import fold_labels

__all__ = ["ArdProblem", "Optimum", "optimise", "nested_check", "heldout_errors"]

#: the optimiser's γ_k may move this many factors of 2 below the start …
GAMMA_DOWN = 20
#: … and up to d·2^GAMMA_UP above it (one feature carrying the whole distance)
GAMMA_UP = 10
#: α/n stays within [10^lo, 10^hi] (the automatic α path's reach after its extensions)
ALPHA_RANGE = (-10.0, 4.0)
#: L-BFGS-B budget and tolerances (on log f)
MAX_ITER = 100
MAX_EVALUATIONS = 150
FTOL = 1e-9
GTOL = 1e-5
#: stop once the best error has fallen by less than this fraction over the last
#: STALL_EVALUATIONS evaluations: far below the sampling error of a held-out estimate
#: (≥ 1 % up to n = 10⁴), and on a Nyström stand-in below the jumps of the criterion
#: where an eigenvalue of W crosses the floor, which otherwise keep the line search busy
#: (n = 5000, 200 landmarks: 126 evaluations, 109 of them after the error was within
#: 2.5 % of the final one). On the negative log evidence per point (no logarithm taken)
#: the same number is an absolute fall: 1 nat of log evidence at n = 1000
STALL_FRACTION = 1e-3
STALL_EVALUATIONS = 10
#: line-search steps per iteration (scipy's default is 20)
MAX_LINE_SEARCH = 10


@dataclass
class ArdProblem:
    """What one ARD search optimises.

    X : (n, d) centred features (standardised or not, as the selection decided);
    Y : (n, t) targets (±1 columns for classes); objective : "kfold", "loo" or
    "evidence" (the Gaussian-process evidence, :func:`kernelselect.ard._exact.evidence_exact`);
    folds : (n,) fold of each point (k-fold); landmarks : row indices (c,) of the
    Nyström landmarks, or their points (c, d) when they are not rows of X (then ``Z``
    holds them centred like X), or None for the exact kernel matrix."""

    X: np.ndarray
    Y: np.ndarray
    objective: str = "loo"
    folds: np.ndarray | None = None
    landmarks: np.ndarray | None = None
    eigen_floor: float = 1e-8
    workers: int | None = None
    #: the row source of the Nyström passes (None: X and Y in memory); ``Z`` the
    #: landmark points and ``n_classes`` the layout of its targets (class codes)
    rows: Any = None
    Z: np.ndarray | None = None
    n_classes: int | None = None

    @property
    def n(self) -> int:
        return int(self.rows.n if self.rows is not None else self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.Z.shape[1] if self.Z is not None else self.X.shape[1])

    @property
    def engine(self) -> str:
        return "exact" if self.landmarks is None else "nystrom"

    def evaluate(self, theta: np.ndarray, grad: bool = True,
                 out: dict[str, Any] | None = None) -> tuple[float, np.ndarray | None]:
        """(f, ∇f) at θ = (log γ, log α): the mean squared held-out residual (not its
        logarithm), or the negative log evidence per point (``objective="evidence"``,
        exact matrix only). Raises :class:`kernelselect.ard._base.EvaluationError`."""
        gamma, alpha = np.exp(theta[:-1]), float(np.exp(theta[-1]))
        if self.objective == "evidence" and (self.landmarks is not None
                                             or self.rows is not None):
            raise ValueError("objective='evidence' runs on the exact kernel matrix only "
                             "(engine='exact'); use objective='loo' on a Nyström stand-in.")
        if self.landmarks is not None or self.rows is not None:
            rows = self.rows if self.rows is not None else ArrayRows(self.X, self.Y,
                                                                     threads=self.workers)
            Z = self.Z if self.Z is not None else self.X[self.landmarks]
            return press_nystrom_rows(rows, Z, gamma, alpha, np.zeros(self.d),
                                      n_classes=self.n_classes, eigen_floor=self.eigen_floor,
                                      grad=grad, out=out)
        Xs = Kernel.ARD.points(self.X, gamma)[0]
        if self.objective == "evidence":
            return _exact.evidence_exact(Xs, self.Y, alpha, grad=grad, workers=self.workers)
        if self.objective == "kfold":
            assert self.folds is not None
            return _exact.press_kfold_exact(Xs, self.Y, alpha, self.folds, grad=grad,
                                          workers=self.workers, out=out)
        return _exact.press_exact(Xs, self.Y, alpha, grad=grad, workers=self.workers, out=out)

    def subset(self, rows: np.ndarray, folds: int = 5) -> ArdProblem:
        """The same problem on some rows (fresh folds, the landmarks among them)."""
        X = self.X[rows]
        Y = self.Y[rows]
        fold_of = (None if self.objective != "kfold"
                   else fold_labels(rows.size, folds, 0, _strata(Y)))
        marks = None
        shift = X.mean(axis=0)
        if self.landmarks is not None and np.ndim(self.landmarks) == 2:     # points
            assert self.Z is not None
            Z = self.Z - shift
            return replace(self, X=X - shift, Y=Y, folds=fold_of, landmarks=Z, Z=Z)
        if self.landmarks is not None:
            where = np.flatnonzero(np.isin(rows, self.landmarks))
            marks = where
        return replace(self, X=X - shift, Y=Y, folds=fold_of, landmarks=marks)


def _strata(Y: np.ndarray) -> np.ndarray | None:
    """Class codes of ±1 target columns (stratified folds), None for a real target."""
    return column_codes(Y) if np.all(np.abs(Y) == 1.0) else None


def make_problem(X: np.ndarray, Y: np.ndarray, objective: str, landmarks: np.ndarray | None,
                 folds: int = 5, eigen_floor: float = 1e-8, workers: int | None = None
                 ) -> ArdProblem:
    """An :class:`ArdProblem` with the features centred (the kernel is unchanged, the
    distance contractions lose less to cancellation) and the k-fold criterion's folds
    (seed 0 and class strata, as the ``ekfold`` criterion draws them)."""
    centre = X.mean(axis=0)
    Xc = np.ascontiguousarray(X - centre, dtype=np.float64)
    fold_of = fold_labels(Xc.shape[0], folds, 0, _strata(Y)) if objective == "kfold" else None
    Z = None
    if landmarks is not None and np.ndim(landmarks) == 2:        # points, centred like X
        Z = landmarks = np.ascontiguousarray(landmarks - centre, dtype=np.float64)
    return ArdProblem(Xc, np.asarray(Y, dtype=np.float64), objective, fold_of, landmarks,
                      eigen_floor, workers, Z=Z)


@dataclass
class Optimum:
    """The result of one search: γ (d,), α, the criterion there and at the start, the
    iterates (θ after each iteration), counts and seconds."""

    gamma: np.ndarray
    alpha: float
    value: float
    start_value: float
    iterations: int
    evaluations: int
    seconds: float
    message: str
    path: list[np.ndarray] = field(default_factory=list)

    def theta(self) -> np.ndarray:
        return np.r_[np.log(self.gamma), np.log(self.alpha)]

    def info(self) -> dict[str, Any]:
        return {"gamma": self.gamma.tolist(), "alpha": self.alpha, "value": self.value,
                "start_value": self.start_value, "iterations": self.iterations,
                "evaluations": self.evaluations, "seconds": self.seconds,
                "message": self.message}


def bounds(problem: ArdProblem, gamma0: float) -> list[tuple[float, float]]:
    """Box of the search in (log γ, log α): γ_k within [γ₀·2^−GAMMA_DOWN,
    γ₀·d·2^GAMMA_UP] around the isotropic start γ₀, α/n within 10^ALPHA_RANGE."""
    lg = float(np.log(gamma0))
    lo_g, hi_g = lg - GAMMA_DOWN * np.log(2.0), lg + np.log(problem.d) + GAMMA_UP * np.log(2.0)
    n = problem.n
    lo_a, hi_a = (np.log(n) + k * np.log(10.0) for k in ALPHA_RANGE)
    return [(lo_g, hi_g)] * problem.d + [(float(lo_a), float(hi_a))]


def optimise(problem: ArdProblem, gamma0: float | np.ndarray, alpha0: float,
             max_iter: int = MAX_ITER, max_evaluations: int = MAX_EVALUATIONS,
             shared: bool = False) -> Optimum:
    """L-BFGS-B on log f(log γ, log α) (a held-out error) or on f (the negative log
    evidence) from the point (γ₀, α₀), γ₀ a scalar (γ₀·1) or a vector.

    ``shared``: one γ for every feature (the search over (log γ, log α) of the
    isotropic kernel, the gradient in log γ the sum of the per-feature ones). The box
    of :func:`bounds` is centred on γ₀ (its geometric mean for a vector γ₀). An
    evaluation where the criterion is undefined
    (K + αI numerically singular) counts as a large value with zero gradient, so that
    the line search backs off; the best point evaluated is returned (it is the last
    accepted iterate unless the search ended on such a failure)."""
    # scipy.optimize (~20 MB resident) is imported by the searches that use it, not by
    # every import of select_kernel
    import scipy.optimize

    t0 = time.perf_counter()
    d = problem.d
    log_g0 = np.broadcast_to(np.log(np.asarray(gamma0, dtype=np.float64)), (d,))
    full_box = bounds(problem, float(np.exp(log_g0.mean())))
    if shared:
        box = [full_box[0], full_box[-1]]
        theta0 = np.r_[log_g0.mean(), np.log(alpha0)]
    else:
        box = full_box
        theta0 = np.r_[log_g0, np.log(alpha0)]
    theta0 = np.clip(theta0, [b[0] for b in box], [b[1] for b in box])
    logs = problem.objective != "evidence"          # held-out errors on the log scale
    best: dict[str, Any] = {"value": np.inf, "theta": theta0, "mark": np.inf, "since": 0}
    count = [0]

    def expand(theta: np.ndarray) -> np.ndarray:
        return np.r_[np.full(d, theta[0]), theta[1]] if shared else theta

    def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
        count[0] += 1
        best["since"] += 1
        try:
            value, grad = problem.evaluate(expand(theta))
        except EvaluationError:
            return 1e300, np.zeros(theta.size)
        assert grad is not None
        if shared:
            grad = np.r_[grad[:d].sum(), grad[d]]
        if logs and value <= 0.0:              # a perfect held-out fit: nothing to improve
            return -745.0, np.zeros(theta.size)
        if value < best["value"]:
            best.update(value=value, theta=theta.copy())
        stalled = (value >= (1.0 - STALL_FRACTION) * best["mark"] if logs
                   else value >= best["mark"] - STALL_FRACTION)
        if not stalled:
            best.update(mark=value, since=0)
        if logs:
            return float(np.log(value)), grad / value
        return float(value), grad

    start = fun(theta0)[0]
    start_value = (np.inf if start >= 1e299 else float(np.exp(start)) if logs
                   else float(start))
    path: list[np.ndarray] = []

    def callback(intermediate_result: Any) -> None:
        path.append(np.array(intermediate_result.x))
        if best["since"] >= STALL_EVALUATIONS:
            raise StopIteration

    with np.errstate(over="ignore", under="ignore"):
        res = scipy.optimize.minimize(
            fun, theta0, jac=True, method="L-BFGS-B", bounds=box, callback=callback,
            options={"maxiter": max_iter, "maxfun": max_evaluations, "ftol": FTOL,
                     "gtol": GTOL, "maxls": MAX_LINE_SEARCH})
    theta = expand(best["theta"])
    message = str(res.message) if res.status != 99 else (
        f"STALLED: the criterion fell by less than {STALL_FRACTION:g} "
        f"{'of itself ' if logs else ''}in the last {STALL_EVALUATIONS} evaluations")
    return Optimum(np.exp(theta[:d]), float(np.exp(theta[d])), float(best["value"]),
                   start_value, len(path), count[0], time.perf_counter() - t0, message, path)


# --------------------------------------------------------------------------- held-out check


def fit_predict(problem: ArdProblem, gamma: np.ndarray, alpha: float, X_new: np.ndarray
                ) -> np.ndarray:
    """Decision values (m, t) at X_new (centred like ``problem.X``) of the LSSVM with
    bias trained on the problem's rows with kernel γ and ridge α, on the problem's
    stand-in (exact kernel matrix, or the Nyström kernel K̃(x, X) = K(x, Z) W_k⁺ Cᵀ)."""
    Xs, Xn = Kernel.ARD.points(problem.X, gamma)[0], Kernel.ARD.points(X_new, gamma)[0]
    n = Xs.shape[0]
    B = np.column_stack([np.ones(n), problem.Y])
    if problem.landmarks is None:
        K = gaussian_block(Xs, Xs, problem.workers)
        K.flat[:: n + 1] += alpha
        factor = scipy.linalg.cho_factor(K, overwrite_a=True, check_finite=False)
        R = scipy.linalg.cho_solve(factor, B, check_finite=False)
        rho, nu = R[:, 0], R[:, 1:]
        b = nu.sum(axis=0) / rho.sum()
        a = nu - rho[:, None] * b[None, :]
        return gaussian_block(Xn, Xs, problem.workers) @ a + b[None, :]
    rows = problem.landmarks if np.ndim(problem.landmarks) == 1 else None
    if rows is not None:
        Zs = Xs[rows]
    else:                                     # landmark points that are not rows of X
        assert problem.Z is not None
        Zs = Kernel.ARD.points(problem.Z, gamma)[0]
    F = nystrom_factor(Xs, Zs, rows, Zs.shape[0], problem.eigen_floor, problem.workers)
    D = 1.0 / (F.s + alpha)
    R = (B - F.Psi @ (D[:, None] * (F.Psi.T @ B))) / alpha          # K̃_α⁻¹[1 Y]
    rho, nu = R[:, 0], R[:, 1:]
    b = nu.sum(axis=0) / rho.sum()
    a = nu - rho[:, None] * b[None, :]
    W_pinv_Ct_a = F.TP @ (F.Psi.T @ a)                               # W_k⁺ Cᵀ a
    return gaussian_block(Xn, Zs, problem.workers) @ W_pinv_Ct_a + b[None, :]


def heldout_errors(problem: ArdProblem, rows: np.ndarray, rest: np.ndarray,
                   points: dict[str, tuple[np.ndarray, float]]) -> dict[str, float]:
    """Σ of squared residuals on ``rest`` of the LSSVM trained on ``rows`` at each
    named (γ, α)."""
    train = problem.subset(rows)
    X_rest = problem.X[rest] - problem.X[rows].mean(axis=0)
    out = {}
    for name, (gamma, alpha) in points.items():
        try:
            f = fit_predict(train, gamma, alpha, X_rest)
            out[name] = float(np.sum((problem.Y[rest] - f) ** 2))
        except (np.linalg.LinAlgError, ValueError):
            out[name] = float("inf")
    return out


def nested_check(problem: ArdProblem, gamma0: float, alpha0: float, folds: int = 5,
                 seed: int = 0) -> dict[str, Any]:
    """The whole ARD search rerun on each training part of a k-fold split, scored on
    its held-out part against the isotropic start (γ₀, α₀·n_part/n, the same ridge per
    point) trained on the same part: the held-out estimate that guards the choice.

    Returns the summed squared held-out residuals of both (``"ard"``, ``"isotropic"``,
    per point and column), the same per fold (``"fold_ard"``, ``"fold_isotropic"``),
    the fold optima (θ per fold) and the seconds."""
    t0 = time.perf_counter()
    n, d = problem.n, problem.d
    fold_of = fold_labels(n, folds, seed, _strata(problem.Y))
    per_fold: dict[str, list[float]] = {"ard": [], "isotropic": []}
    thetas = []
    evaluations = 0
    for f in range(folds):
        rows, rest = np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)
        a0 = alpha0 * rows.size / n
        opt = optimise(problem.subset(rows), gamma0, a0)
        thetas.append(opt.theta())
        evaluations += opt.evaluations
        err = heldout_errors(problem, rows, rest, {"ard": (opt.gamma, opt.alpha),
                                                   "isotropic": (np.full(d, gamma0), a0)})
        for k in per_fold:
            per_fold[k].append(err[k] / (rest.size * problem.Y.shape[1]))
    scale = 1.0 / (n * problem.Y.shape[1])
    sizes = np.bincount(fold_of, minlength=folds) * problem.Y.shape[1]
    return {"folds": folds,
            "ard": float(np.dot(per_fold["ard"], sizes)) * scale,
            "isotropic": float(np.dot(per_fold["isotropic"], sizes)) * scale,
            "fold_ard": per_fold["ard"], "fold_isotropic": per_fold["isotropic"],
            "fold_thetas": [t.tolist() for t in thetas], "evaluations": evaluations,
            "seconds": time.perf_counter() - t0}
