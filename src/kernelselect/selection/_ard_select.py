"""``select_kernel(X, y, kernel="ard")``: one Gaussian bandwidth per feature.

The rules, each with its reason (numbers from the quality study of docs/user_guide/per_feature.rst: every
regression and binary set of the shared data, training halves of at most 1000 rows,
against isotropic 5-fold cross-validation):

* **Start**: the isotropic selection with the same settings (``kernel="gaussian"``,
  every other argument as given); its (γ, α) is the starting point, γ_k = γ for every
  feature, and its grid, curves and details stay in the result. When the evidence
  search follows beyond the defaults' exact range (400 < n ≤ 1000), the start is their
  first Nyström level alone (:data:`EVIDENCE_START`): on the 10 regression sets there
  it left the test NMSE where the full levels had it (geometric mean of the ratio
  ≤ 1, the headline 0.496 of CV's against 0.504) at a median 0.95 of the time.
* **Stand-in**: the exact kernel matrix up to :data:`EXACT_MAX_N` points, as the
  isotropic defaults; beyond, a Nyström stand-in with fixed landmarks — those the
  isotropic search ended on, at most :data:`MAX_LANDMARKS` of them (a uniform subset
  when it used more). One gradient at n = 1000 cost 1.43 s on the exact matrix and
  0.48 s with 200 landmarks (one thread, a busy machine).
* **Objective**: for a real target up to :data:`EVIDENCE_MAX_N` points, the negative
  log evidence of the Gaussian-process model of the target with the signal scale
  profiled out, on the exact kernel matrix (:func:`kernelselect.ard._exact.evidence_exact`;
  α is the noise-to-signal ratio, the ridge of the machines). Otherwise the logarithm
  of the mean squared held-out residual of the LSSVM, the quantity of the default
  criteria: 5-fold cross-validation in closed form on the exact matrix (``ekfold``'s
  folds), leave-one-out on the Nyström stand-in (``eloo``, PRESS). Class labels: ±1
  columns (one-vs-rest for C ≥ 3 classes), the squared residual summed over the
  columns — the error rate is a step function with no gradient; the result reports
  both. On the 16 regression sets the evidence search had a test NMSE 0.50 times
  isotropic CV's (geometric mean; the held-out-error search with its nested guard:
  0.64), no set above 1.05 times, and it was within 1 % of a Gaussian process with the
  same kernel; on class labels it lost accuracy on small sets (heart −5.8, liver
  disorders −6.4 points), so classes keep the held-out error.
* **Beyond EVIDENCE_MAX_N rows** (a real target, X in memory, ``objective="auto"``):
  the evidence searches on :data:`EVIDENCE_SUBSAMPLE` random rows (exact matrix) with
  their second opinion there, then a confirmation on all rows: the optimum is kept only
  where the leave-one-out error (PRESS) of the LSSVM on the Nyström stand-in of the
  isotropic selection's landmarks is below the isotropic choice's
  (:func:`_subsample_evidence`). At n_train = 10⁴ (cadata, pol, protein; cpu_act 6192,
  ``studies/ard_scale.py --fitted``) the rule's test NMSE was 0.581 times the isotropic
  default's (geometric mean, worst set 1.000; prototyped in the study, 0.573 in 2.1
  times its time, median); the
  leave-one-out search on 200 landmarks that ran there before: 1.051, worst 4.30 —
  a few very narrow bandwidths fitted to the landmarks.
* **Search**: L-BFGS-B in (log γ₁, …, log γ_d, log α) with the analytic gradient,
  jointly in α, inside a box (:func:`kernelselect.ard._search.bounds`). The held-out
  error is searched from the isotropic point; the evidence from the isotropic evidence
  optimum, itself found by a search over one γ and α from the isotropic point
  (:data:`EVIDENCE_STARTS`) — the isotropic defaults' point can be far from where the
  evidence is high (cpusmall: γ = 5.7·10⁻⁴, α/n = 10⁻⁸ against the evidence's
  γ = 0.023, α/n = 4.5·10⁻⁶). An inner α path (α chosen per γ
  vector from one factorisation) reached the same held-out error in 6–14 times the time
  on the exact matrix and 1.3 times on Nyström.
* **Guard**: d + 1 parameters fitted to one held-out estimate overfit it on small n
  (unguarded, binary accuracy fell 0.73 points behind CV on average and 5.6 on heart).
  The evidence optimum gets a second opinion (:func:`second_opinion`): the closed-form
  5-fold error of the LSSVM there, kept only when it is below the start's by one
  standard error of the per-point difference (:data:`SECOND_OPINION_SE`). The
  held-out-error search is guarded (:data:`GUARD`) up to :data:`GUARD_MAX_N` points by
  rerunning it on the training part of each of 5 folds (3 on the Nyström stand-in),
  scored on the held-out part against the isotropic kernel trained on the same part;
  if the per-feature kernels predict better (by :data:`GUARD_MARGIN`), the result is
  the mean of the fold optima in (log γ, log α), otherwise the isotropic kernel
  (γ_k = γ for every k), and ``details["ard"]`` says why. An isotropic kernel kept
  after a start from the first Nyström level alone (:data:`EVIDENCE_START`) is the
  whole isotropic selection's (γ, α), as ``kernel="gaussian"`` chooses it
  (:func:`keep_isotropic`). On class labels
  (:data:`LABEL_GUARD`) the mean of the fold optima is instead kept when its
  closed-form 5-fold error *rate* on all rows is below the start's by one standard
  error of the per-point difference — the quantity a classifier is judged by, with
  the margin of the evidence's second opinion. The rule for a real target — the
  evidence with the one-standard-error second opinion — was chosen among 22
  candidates on half A of the sets (named by crc32 parity) and confirmed on half B
  (regression NMSE ratio to CV 0.34 against the isotropic start's 0.97); of its
  variants the one with a single per-feature search ships, equal on both halves to
  0.002 at half the time. The rule for class labels was chosen among six on half A
  of the binary sets, scored by the test accuracy of the LSSVM the library fits
  (+0.68 points against 5-fold CV, worst set −0.60) and confirmed on half B (+0.13
  against the isotropic start's +0.16, worst −0.52).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..ard import _search as _ard_search
from ..ard._base import EvaluationError
from ..ard._search import ArdProblem, make_problem, nested_check, optimise
from ..utils import _dask
from ._result import SelectionResult
from ..operators.nystrom import Nystroem
from ..utils._kernel_family import Kernel
from ..utils._scaling import ColumnScaling
from ..utils._targets import Targets, prepare_targets, rescale_target
from ..utils._validation import check_matrix, check_random_state
from .._policy import (ARD_EVIDENCE_MAX_N, ARD_EVIDENCE_SUBSAMPLE, ARD_EXACT_MAX_N,
                       ARD_GUARD_MAX_N, ARD_KFOLD_MAX_N, ARD_MAX_LANDMARKS, kernel_for_task)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["select_ard", "keep_isotropic", "ArdSelectionResult", "EXACT_MAX_N", "MAX_LANDMARKS", "GUARD",
           "GUARD_MAX_N", "GUARD_MARGIN"]

#: the exact kernel matrix up to this n (as the isotropic defaults; a gradient costs
#: ~2n³ flops); beyond, the Nyström stand-in (at n = 1000 one gradient took 1.43 s exact,
#: 0.48 s with 200 landmarks, on one thread of a busy machine)
EXACT_MAX_N = ARD_EXACT_MAX_N
#: landmarks of the Nyström stand-in beyond EXACT_MAX_N
MAX_LANDMARKS = ARD_MAX_LANDMARKS
#: the guard: "nested" (see the module docstring) or "none"
GUARD = "nested"
#: the guard of class labels: "rate" — the mean of the nested fold optima (as "nested"),
#: kept when its closed-form 5-fold error rate on all rows is below the start's by one
#: standard error of the per-point difference (SECOND_OPINION_SE). Chosen on half A of
#: the binary sets among six rules (the study of docs/user_guide/per_feature.rst; LSSVM
#: test accuracy against 5-fold CV +0.68 points, worst set −0.60; "nested" +0.70, worst
#: −0.74) and confirmed on half B (+0.13 against the isotropic start's +0.16, worst
#: −0.52)
LABEL_GUARD = "rate"
#: the guard runs up to this n
GUARD_MAX_N = ARD_GUARD_MAX_N
#: folds of the guard up to EXACT_MAX_N, and beyond (each fold reruns the search)
GUARD_FOLDS = 5
GUARD_FOLDS_NYSTROM = 3
#: ARD is kept when its nested held-out error is below (1 − margin)·the isotropic one
GUARD_MARGIN = 0.0
#: the k-fold objective up to this n (the isotropic defaults' ekfold range)
KFOLD_MAX_N = ARD_KFOLD_MAX_N
#: the Gaussian-process evidence on the exact matrix up to this n (objective="auto")
EVIDENCE_MAX_N = ARD_EVIDENCE_MAX_N
#: the evidence searches, the lowest evidence the optimum: per feature from the isotropic
#: selection's point ("start") and/or from the isotropic evidence optimum
#: ("isotropic_evidence", a search over one γ and α first). The second alone did as well
#: as both in the study (regression NMSE ratio to CV 0.853 / 0.335 on halves A / B
#: against 0.851 / 0.335) with about half the evaluations
EVIDENCE_STARTS = ("isotropic_evidence",)
#: the second opinion on the evidence optimum: the closed-form 5-fold held-out error of
#: the LSSVM there against the start's, the optimum kept when it is at most the start's
#: plus SECOND_OPINION_SE standard errors of the per-point difference
SECOND_OPINION_SE = -1.0
#: the isotropic start when the evidence search follows (a real target, more than the
#: policy's exact range and at most EVIDENCE_MAX_N points, criterion and approximation
#: left to "auto"): "levels", the isotropic defaults' nested Nyström levels, or "first",
#: their first level alone (the policy's START_LANDMARKS landmarks on the whole grid)
EVIDENCE_START = "first"
#: beyond EVIDENCE_MAX_N rows of a real target (``objective="auto"``, X in memory): the
#: evidence searches on this many random rows, their optimum confirmed on all rows
#: (:func:`_subsample_evidence`)
EVIDENCE_SUBSAMPLE = ARD_EVIDENCE_SUBSAMPLE
OBJECTIVES = ("auto", "loo", "kfold", "evidence", "evidence_subsample")
GUARDS = ("auto", "nested", "rate", "kfold", "confirm", "none")


class ArdSelectionResult(SelectionResult):
    """A :class:`SelectionResult` whose ``best_gamma`` holds one γ per feature.

    The grid, curves and ``best`` are those of the isotropic search the per-feature
    search started from; ``best_gamma`` (shape (d,)) and ``best_alpha`` are the
    per-feature choice, and ``details["ard"]`` records the search: the start, the
    optimum, the guard's held-out estimates and its decision.
    """

    def relevances(self) -> np.ndarray:
        """γ_k·s_k², shape (d,): the inverse squared length scale of feature k in units
        of its standard deviation s_k (s_k = 1 when the selection standardised X). A
        feature with twice the relevance changes the kernel as much over half as many
        standard deviations; a relevance near 0 means the kernel ignores the feature."""
        scale = np.asarray(self.details["ard"].get("feature_variance", 1.0))
        return np.asarray(self.best_gamma, dtype=np.float64) * scale

    def summary(self, feature_names: Any = None, top: int = 8) -> str:
        """One line: α, the guard's decision and the ``top`` most relevant features
        with their γ_k (standardised units when the selection standardised).
        ``feature_names``: one name per feature; ``top``: a positive integer."""
        rel = self.relevances()
        names = _feature_names(feature_names, rel.size, "summary")
        order = np.argsort(rel)[::-1][:_check_top(top, rel.size, "summary")]
        g = np.asarray(self.best_gamma)
        shown = ", ".join(f"{names[k]}={g[k]:.3g}" for k in order)
        more = f", … ({rel.size - order.size} more)" if rel.size > order.size else ""
        kept = self.details["ard"].get("kept", True)
        how = "per-feature" if kept else "isotropic (kept by the guard)"
        return f"alpha={self.best_alpha:.6g}, {how} gamma: {shown}{more}"

    def plot_relevances(self, ax: Any = None, feature_names: Any = None,
                        top: int | None = None) -> Figure:
        """Bar chart of :meth:`relevances` relative to the largest, most relevant first;
        ``top`` keeps that many features. Returns the matplotlib Figure."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("plot_relevances needs matplotlib; install it with "
                              "`pip install matplotlib`.") from None
        rel = self.relevances()
        names = _feature_names(feature_names, rel.size, "plot_relevances")
        order = np.argsort(rel)[::-1][:_check_top(top, rel.size, "plot_relevances")]
        if ax is None:
            fig, ax = plt.subplots(figsize=(6, 0.3 * order.size + 1.2))
        else:
            fig = ax.figure
        ax.barh(np.arange(order.size), rel[order] / rel.max(), color="tab:blue")
        ax.set_yticks(np.arange(order.size), [names[k] for k in order])
        ax.invert_yaxis()
        ax.set_xlabel("relevance γ_k·s_k² (relative to the largest)")
        kept = self.details["ard"].get("kept", True)
        ax.set_title("per-feature bandwidths" + ("" if kept else
                                                 " (guard kept the isotropic kernel)"))
        fig.tight_layout()
        return fig


def _feature_names(feature_names: Any, d: int, method: str) -> list[str]:
    """One name per feature (``x0``, ``x1``, … when None), or a ValueError naming
    ``feature_names`` and the length wanted."""
    if feature_names is None:
        return [f"x{k}" for k in range(d)]
    if isinstance(feature_names, str):
        raise TypeError(f"{method}: feature_names must be a sequence of {d} names, got the "
                        f"string {feature_names!r}.")
    try:
        names = [str(name) for name in feature_names]
    except TypeError:
        raise TypeError(f"{method}: feature_names must be a sequence of {d} names, got "
                        f"{type(feature_names).__name__}.") from None
    if len(names) != d:
        raise ValueError(f"{method}: feature_names has {len(names)} names but the kernel has "
                         f"{d} features; pass one name per feature (length {d}).")
    return names


def _check_top(top: Any, d: int, method: str) -> int:
    """How many features to show: ``top`` (None: all d), a positive whole number."""
    if top is None:
        return d
    if isinstance(top, (bool, np.bool_)) or not isinstance(top, (int, np.integer)):
        raise TypeError(f"{method}: top must be a positive integer (how many features to "
                        f"show) or None for all, got {top!r}.")
    if top < 1:
        raise ValueError(f"{method}: top must be a positive integer (how many features to "
                         f"show) or None for all {d}, got {top}.")
    return int(top)


def _targets_matrix(y: Any, task: Any, targets: Targets | None = None
                    ) -> tuple[np.ndarray, str]:
    """(Y (n, t), task): ±1 column (binary), one-vs-rest ±1 columns (multi-class), or
    the real target as one column (rescaled when its magnitude is extreme); ``targets``:
    y as an estimator's door prepared it (None: prepared here)."""
    if targets is None:
        targets = prepare_targets(np.asarray(y).ravel()
                                  if np.ndim(y) == 2 and np.shape(y)[1] == 1 else y, task)
    if targets.task == "multiclass":
        assert targets.Y is not None
        return targets.Y.astype(np.float64), targets.task
    yv = targets.y
    if targets.task == "regression":
        yv = rescale_target(yv, {})[0]
    return yv.astype(np.float64)[:, None], targets.task


def _landmarks(iso: SelectionResult, n: int, rng: np.random.Generator) -> np.ndarray:
    """The Nyström landmarks of the per-feature search: the user's own (``Nystroem(
    landmarks=...)``: row indices (c,), or points (c, d) in the isotropic search's
    coordinates), all of them; else those of the isotropic search's last level (at most
    MAX_LANDMARKS, a uniform subset), else a uniform draw."""
    params = iso.details.get("approximation_params") or {}
    marks = params.get("landmarks")
    user = marks is not None and "auto" not in iso.details
    if marks is not None and user and np.ndim(marks) == 2:
        return np.asarray(marks, dtype=np.float64)
    if marks is None or np.ndim(marks) != 1 or not np.issubdtype(np.asarray(marks).dtype,
                                                                  np.integer):
        marks = rng.choice(n, size=min(MAX_LANDMARKS, n // 2), replace=False)
    marks = np.asarray(marks, dtype=np.intp)
    if marks.size > MAX_LANDMARKS and not user:
        marks = rng.choice(marks, size=MAX_LANDMARKS, replace=False)
    return np.sort(marks)


def _dask_problem(X: Any, y: Any, isotropic: SelectionResult, task: Any, standardize: bool,
                  rng: np.random.Generator, engine: str, objective: str
                  ) -> tuple[ArdProblem, np.ndarray, str]:
    """The Nyström problem over a Dask row source: (problem, feature variances, task)."""
    if engine == "exact" or objective in ("kfold", "evidence"):
        raise ValueError("Dask input runs the Nyström stand-in with leave-one-out; "
                         "engine='exact' and objective='kfold' or 'evidence' need X in "
                         "memory.")
    X, y_local, y_dask = _dask.check_dask_data(X, y)
    targets = prepare_targets(y_local, task)
    variances = np.ones(X.shape[1]) if standardize else np.asarray(_dask.compute(X.var(axis=0)))
    scaling = ColumnScaling.fit(X, _dask.compute) if standardize else None
    Xw = X if scaling is None else scaling.transform(X)
    rows = _dask.DaskRows(Xw, _dask.encoded_target(y_dask, targets.classes, targets.task))
    marks = _landmarks(isotropic, rows.n, rng)
    Z = marks if marks.ndim == 2 else rows.gather(marks)
    Y, task_name = _targets_matrix(y_local, task)
    n_classes = None if targets.classes is None else int(np.size(targets.classes))
    problem = ArdProblem(np.empty((0, Z.shape[1])), Y, "loo", None, marks, rows=rows, Z=Z,
                         n_classes=n_classes)
    return problem, variances, task_name


def _error_rate(Y: np.ndarray, E: np.ndarray) -> float:
    """Held-out error rate of ±1 columns from their residuals (sign, or argmax)."""
    return float(np.mean(_wrong(Y, E)))


def select_ard(X: npt.ArrayLike, y: npt.ArrayLike, *, isotropic: SelectionResult,
               feature_variance: npt.ArrayLike | None = None, task: Any = "auto",
               random_state: Any = None, workers: int | None = None, objective: str = "auto",
               guard: str = "auto", engine: str = "auto", standardize: bool = True,
               targets: Targets | None = None) -> ArdSelectionResult:
    """The per-feature search from the isotropic selection ``isotropic``.

    ``X`` holds the features the isotropic selection worked on (standardised when it
    standardised; ``feature_variance`` the variances of the caller's features, for
    :meth:`ArdSelectionResult.relevances`); the rules are in the module docstring.
    ``objective`` ("auto", "loo", "kfold", "evidence"), ``guard`` ("auto", "nested",
    "rate" — class labels only —, "kfold" — the evidence only —, "none") and
    ``engine`` ("auto", "exact", "nystrom") override them.

    Dask input (``X`` the caller's array; ``standardize`` says whether to standardise
    it, lazily, as the isotropic selection did) runs the Nyström passes chunk by chunk
    as Dask graphs (:mod:`kernelselect.ard._nystrom`) on the landmarks of the isotropic
    selection; X is never gathered, and the guard (which refits in memory) does not run.
    ``targets``: y in memory as an estimator's door prepared it (None: prepared here).
    """
    t_start = time.perf_counter()
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}.")
    if guard not in GUARDS:
        raise ValueError(f"guard must be one of {GUARDS}, got {guard!r}.")
    rng = check_random_state(random_state)
    if _dask.is_dask_array(X) or _dask.is_dask_array(y):
        problem, variances, task_name = _dask_problem(X, y, isotropic, task, standardize,
                                                      rng, engine, objective)
        n, d = problem.n, problem.d
        Y = problem.Y
        landmarks, objective = problem.landmarks, "loo"
    else:
        problem, variances, task_name, objective, landmarks = _memory_problem(
            X, y, isotropic, feature_variance, task, objective, engine, rng, workers,
            targets)
        n, d = problem.n, problem.d
        Y = problem.Y
    guard = _resolve_guard(guard, objective, problem, task_name)
    gamma0, alpha0 = float(isotropic.best_gamma), float(isotropic.best_alpha)
    theta0 = np.r_[np.full(d, np.log(gamma0)), np.log(alpha0)]
    info: dict[str, Any] = {
        "engine": problem.engine, "objective": objective,
        "objective_description": _describe(objective, Y.shape[1]),
        "n_landmarks": None if landmarks is None else len(landmarks),
        "landmarks": None if landmarks is None else np.asarray(landmarks).tolist(),
        "dask": problem.rows is not None,
        "start": {"gamma": gamma0, "alpha": alpha0, "value": _value(problem, theta0),
                  "approximation": isotropic.details.get("approximation")},
        "bounds": _ard_search.bounds(problem, gamma0),
        "feature_variance": variances.tolist(), "task": task_name,
    }
    kept = True
    if objective == "evidence_subsample":
        theta, info["optimum"], kept, info["guard"] = _subsample_evidence(
            problem, isotropic, theta0, guard, rng, workers)
    elif objective == "evidence":
        theta, info["optimum"] = _evidence_optimum(problem, gamma0, alpha0)
        if guard == "kfold":
            kept, info["guard"] = second_opinion(problem.X, Y, theta0, theta, workers)
        else:
            info["guard"] = {"rule": "none", "reason": "guard='none'"}
    elif guard in ("nested", "rate"):
        folds = GUARD_FOLDS if problem.engine == "exact" else GUARD_FOLDS_NYSTROM
        check = nested_check(problem, gamma0, alpha0, folds,
                             seed=int(rng.integers(2**31 - 1)))
        theta_bag = bagged(check["fold_thetas"], n, folds)
        if guard == "nested":
            kept = bool(check["ard"] < (1.0 - GUARD_MARGIN) * check["isotropic"])
            info["guard"] = dict(check, rule="nested", margin=GUARD_MARGIN, kept=kept)
        else:
            kept, opinion = second_opinion(problem.X, Y, theta0, theta_bag, workers,
                                           loss="rate")
            info["guard"] = dict(check, rule="rate", rate=opinion, kept=kept)
        theta = theta_bag if kept else theta0
        info["optimum"] = {"how": f"mean of the {folds} fold optima in log space",
                           "gamma": np.exp(theta[:d]).tolist(),
                           "alpha": float(np.exp(theta[d])), "value": _value(problem, theta),
                           "evaluations": check["evaluations"], "seconds": check["seconds"]}
    else:
        opt = optimise(problem, gamma0, alpha0)
        theta = opt.theta()
        info["guard"] = {"rule": "none", "reason": (
            f"n={n} > {GUARD_MAX_N}" if n > GUARD_MAX_N else "guard='none'")}
        info["optimum"] = dict(opt.info(), how="L-BFGS-B on all rows")
    if task_name != "regression":
        held = (problem if objective != "evidence"
                else make_problem(problem.X, Y, "kfold", None, workers=workers))
        info["error_rate"] = {"start": _rate(held, theta0), "optimum": _rate(held, theta)}
    gamma, alpha = ((np.exp(theta[:d]), float(np.exp(theta[d]))) if kept
                    else (np.full(d, gamma0), alpha0))
    info.update(kept=kept, gamma=np.asarray(gamma).tolist(), alpha=float(alpha),
                seconds=time.perf_counter() - t_start)
    details = dict(isotropic.details, kernel=Kernel.ARD.value, ard=info)
    result = ArdSelectionResult(isotropic.gammas, isotropic.alphas, isotropic.curves,
                                isotropic.directions, isotropic.timings, details)
    result.best_gamma = np.asarray(gamma, dtype=np.float64)
    result.best_alpha = float(alpha)
    return result


def keep_isotropic(result: ArdSelectionResult, full: SelectionResult) -> ArdSelectionResult:
    """``result``, whose guard kept the isotropic kernel, with that kernel as the whole
    isotropic selection ``full`` chose it: γ_k = ``full.best_gamma`` for every feature,
    α = ``full.best_alpha``, and ``full``'s grid, curves, levels and details. Used when
    the search started from the isotropic defaults' first Nyström level alone
    (:data:`EVIDENCE_START`), whose coarse choice is only a starting point; the start
    stays in ``details["ard"]["start"]``."""
    d = np.size(result.best_gamma)
    gamma, alpha = float(full.best_gamma), float(full.best_alpha)
    info = dict(result.details["ard"], gamma=[gamma] * d, alpha=alpha)
    info["isotropic"] = {"how": "the whole isotropic selection (kernel='gaussian', the same "
                                "settings), as the start was its first Nyström level alone",
                         "gamma": gamma, "alpha": alpha,
                         "approximation": full.details.get("approximation")}
    details = dict(full.details, kernel=Kernel.ARD.value, ard=info)
    out = ArdSelectionResult(full.gammas, full.alphas, full.curves, full.directions,
                             full.timings, details, full.levels)
    out.best_gamma = np.full(d, gamma)
    out.best_alpha = alpha
    return out


def _memory_problem(X: Any, y: Any, isotropic: SelectionResult, feature_variance: Any,
                    task: Any, objective: str, engine: str, rng: np.random.Generator,
                    workers: int | None, targets: Targets | None = None
                    ) -> tuple[Any, np.ndarray, str, str, Any]:
    """(problem, feature variances, task, objective, landmarks) of the search on X in
    memory: ``objective="auto"`` resolved (the evidence for a real target up to
    EVIDENCE_MAX_N rows, else k-fold or leave-one-out) and the engine it runs on."""
    Xw = check_matrix(X, "X", dtype=np.float64, min_rows=3)
    variances = (np.ones(Xw.shape[1]) if feature_variance is None
                 else np.asarray(feature_variance, dtype=np.float64))
    Y, task_name = _targets_matrix(y, task, targets)
    n, d = Xw.shape
    if (objective == "auto" and engine != "nystrom" and n <= EVIDENCE_MAX_N
            and task_name == "regression"):
        objective = "evidence"
    if objective == "auto" and engine == "auto" and task_name == "regression":
        objective = "evidence_subsample"
    if objective == "evidence_subsample":
        if task_name != "regression":
            raise ValueError("objective='evidence_subsample' models a real target; y holds "
                             f"{task_name} labels (use objective='auto').")
        if engine == "exact":
            raise ValueError("objective='evidence_subsample' confirms its choice on a "
                             "Nyström stand-in; use approximation='auto' or 'nystrom'.")
        marks = _landmarks(isotropic, n, rng)
        return (make_problem(Xw, Y, "loo", marks, workers=workers), variances,
                task_name, objective, marks)
    use_exact = (engine == "exact" or objective == "evidence"
                 or (engine == "auto" and n <= EXACT_MAX_N))
    if objective == "evidence" and engine == "nystrom":
        raise ValueError("objective='evidence' runs on the exact kernel matrix; use "
                         "approximation='exact' (or 'auto'), or objective='loo' with "
                         "a Nyström stand-in.")
    landmarks = None if use_exact else _landmarks(isotropic, n, rng)
    if objective == "auto":
        objective = "kfold" if use_exact and n <= KFOLD_MAX_N else "loo"
    if objective == "kfold" and not use_exact:
        raise ValueError("objective='kfold' needs the exact kernel matrix (principal "
                         "blocks of its inverse); use objective='loo' with a Nyström "
                         "stand-in.")
    problem = make_problem(Xw, Y, objective, landmarks, workers=workers)
    return problem, variances, task_name, objective, landmarks


def _resolve_guard(guard: str, objective: str, problem: Any, task_name: str) -> str:
    """``guard="auto"`` resolved for this search, and the combinations that cannot
    run refused with the alternative named."""
    n = problem.n
    if objective == "evidence_subsample":
        if guard not in ("auto", "confirm", "none"):
            raise ValueError(f"guard={guard!r} does not apply to objective="
                             "'evidence_subsample', whose choice is confirmed on all rows; "
                             "use guard='auto' ('confirm') or 'none'.")
        return "confirm" if guard == "auto" else guard
    if guard == "confirm":
        raise ValueError("guard='confirm' belongs to objective='evidence_subsample'; use "
                         "guard='auto'.")
    if guard == "auto":
        guard = ("kfold" if objective == "evidence" else
                 "none" if n > GUARD_MAX_N or problem.rows is not None else
                 LABEL_GUARD if task_name != "regression" else GUARD)
    if guard == "kfold" and problem.engine != "exact":
        raise ValueError("guard='kfold' scores the optimum by the closed-form 5-fold error "
                         "of the exact kernel matrix; use guard='nested' or 'none' on a "
                         "Nyström stand-in.")
    if guard in ("nested", "rate") and objective == "evidence":
        raise ValueError(f"guard={guard!r} reruns a held-out-error search; with "
                         "objective='evidence' use guard='kfold' or 'none'.")
    if guard in ("nested", "rate") and problem.rows is not None:
        raise ValueError(f"guard={guard!r} refits the machine on held-out folds in memory; "
                         "it does not run on Dask input (use guard='none').")
    if guard == "rate" and task_name == "regression":
        raise ValueError("guard='rate' compares held-out error rates of class labels; "
                         "y is a real target (use guard='nested').")
    return guard


def start_approximation(approximation: Any, criterion: Any, X: Any, y: Any, task: Any,
                        engine: str, exact_max_n: int, first_level: int,
                        targets: Targets | None = None) -> Any:
    """The approximation of the isotropic start of ``select_kernel(kernel="ard")``:
    ``approximation`` itself, except that with :data:`EVIDENCE_START` = "first" a start
    the evidence search will follow (a real target, criterion and approximation "auto",
    exact_max_n < n ≤ :data:`EVIDENCE_MAX_N`, ``exact_max_n`` the defaults' exact range)
    runs the defaults' first Nyström level alone (``first_level`` landmarks)."""
    auto_criterion = isinstance(criterion, str) and criterion.strip().lower() == "auto"
    if (EVIDENCE_START != "first" or engine != "auto" or not auto_criterion
            or _dask.is_dask_array(X) or _dask.is_dask_array(y)):
        return approximation
    shape = np.shape(X)
    if len(shape) != 2 or not exact_max_n < shape[0] <= EVIDENCE_MAX_N:
        return approximation
    try:
        task_name = _targets_matrix(y, task, targets)[1]
    except (ValueError, TypeError):            # the isotropic selection names the problem
        return approximation
    if task_name != "regression":
        return approximation
    return Nystroem(n_landmarks=first_level)


def _evidence_optimum(problem: ArdProblem, gamma0: float, alpha0: float
                      ) -> tuple[np.ndarray, dict[str, Any]]:
    """The evidence searches of :data:`EVIDENCE_STARTS` on all rows; (θ of the lowest
    negative log evidence, their record)."""
    searches: dict[str, Any] = {}
    best: Any = None
    t0 = time.perf_counter()
    for start in EVIDENCE_STARTS:
        if start == "start":
            opt = optimise(problem, gamma0, alpha0)
        else:
            iso = optimise(problem, gamma0, alpha0, shared=True)
            searches["isotropic_evidence"] = dict(iso.info(), gamma=float(iso.gamma[0]))
            opt = optimise(problem, iso.gamma, iso.alpha)
        searches[f"from_{start}"] = opt.info()
        if best is None or opt.value < best.value:
            best = opt
    assert best is not None
    record = dict(best.info(), how="L-BFGS-B on the negative log evidence, all rows; the "
                  "lowest of the searches", searches=searches,
                  seconds=time.perf_counter() - t0)
    return best.theta(), record


def _subsample_evidence(problem: ArdProblem, isotropic: SelectionResult,
                        theta0: np.ndarray, guard: str, rng: np.random.Generator,
                        workers: int | None) -> tuple[np.ndarray, dict[str, Any], bool,
                                                      dict[str, Any]]:
    """The per-feature search of a real target beyond :data:`EVIDENCE_MAX_N` rows:
    the evidence searches of :data:`EVIDENCE_STARTS` on :data:`EVIDENCE_SUBSAMPLE`
    random rows (exact matrix, from the isotropic point θ₀; α is the noise-to-signal
    ratio, which does not scale with n), their second opinion on those rows
    (:func:`second_opinion`), then the confirmation (``guard="confirm"``) on all rows:
    the leave-one-out error (PRESS) of the LSSVM on the Nyström stand-in of every
    landmark the isotropic selection ended on, at the optimum and at θ₀; the optimum
    is kept only where it is lower. Returns (θ, optimum record, kept, guard record)."""
    n = problem.n
    rows = np.sort(rng.choice(n, size=min(n, EVIDENCE_SUBSAMPLE), replace=False))
    sub = make_problem(problem.X[rows], problem.Y[rows], "evidence", None, workers=workers)
    d = problem.d
    theta, record = _evidence_optimum(sub, float(np.exp(theta0[0])), float(np.exp(theta0[d])))
    record.update(rows=int(rows.size), how=f"L-BFGS-B on the negative log evidence of "
                  f"{rows.size} random rows; the lowest of the searches")
    kept, opinion = second_opinion(sub.X, sub.Y, theta0, theta, workers)
    if guard == "none":
        return theta, record, True, {"rule": "none", "reason": "guard='none'",
                                     "second_opinion": opinion}
    params = isotropic.details.get("approximation_params") or {}
    marks = params.get("landmarks")
    if (marks is None or np.ndim(marks) != 1
            or not np.issubdtype(np.asarray(marks).dtype, np.integer)):
        marks = problem.landmarks
    marks = np.asarray(marks)
    check = make_problem(problem.X, problem.Y, "loo", marks, workers=workers)
    start, opt = _value(check, theta0), _value(check, theta)
    confirmed = bool(np.isfinite(opt) and not opt >= start)
    return theta, record, bool(kept and confirmed), {
        "rule": "confirm", "second_opinion": opinion,
        "criterion": "leave-one-out (PRESS) of the LSSVM on all rows, Nyström stand-in",
        "n_landmarks": int(np.shape(marks)[0]), "start": start, "optimum": opt,
        "kept": bool(kept and confirmed)}


def second_opinion(X: np.ndarray, Y: np.ndarray, theta0: np.ndarray, theta: np.ndarray,
                   workers: int | None = None, loss: str = "squared"
                   ) -> tuple[bool, dict[str, Any]]:
    """The closed-form 5-fold held-out error of the LSSVM (``ekfold``'s folds) at θ
    against the start θ₀, on all rows, per point: the squared residual summed over the
    columns / t (``loss="squared"``, the guard of the evidence optimum), or whether the
    held-out decision is wrong (``loss="rate"``: the sign of a ±1 column, the argmax of
    one-vs-rest columns; the guard on class labels). Kept when the mean at θ is at most
    the start's plus :data:`SECOND_OPINION_SE` standard errors of the per-point
    difference. Returns (kept, record)."""
    problem = make_problem(X, Y, "kfold", None, workers=workers)
    per_point = {}
    for key, th in (("start", theta0), ("optimum", theta)):
        store: dict[str, Any] = {}
        try:
            problem.evaluate(th, grad=False, out=store)
            E = store["residuals"]
            per_point[key] = (_wrong(Y, E) if loss == "rate"
                              else np.sum(E ** 2, axis=1) / Y.shape[1])
        except EvaluationError:
            per_point[key] = np.full(Y.shape[0], np.inf)
    diff = per_point["optimum"] - per_point["start"]
    se = float(np.std(diff, ddof=1) / np.sqrt(diff.size)) if np.all(np.isfinite(diff)) \
        else float("inf")
    start, opt = float(np.mean(per_point["start"])), float(np.mean(per_point["optimum"]))
    kept = bool(opt <= start + SECOND_OPINION_SE * se)
    return kept, {"rule": "kfold" if loss == "squared" else "rate", "loss": loss,
                  "start": start, "optimum": opt, "se_difference": se,
                  "margin_se": SECOND_OPINION_SE, "kept": kept}


def _wrong(Y: np.ndarray, E: np.ndarray) -> np.ndarray:
    """Per point, 1.0 where the held-out decision Y − E of ±1 columns is wrong (sign,
    or argmax over one-vs-rest columns), else 0.0."""
    if Y.shape[1] == 1:
        return (Y[:, 0] * (Y[:, 0] - E[:, 0]) <= 0.0).astype(np.float64)
    return (np.argmax(Y - E, axis=1) != np.argmax(Y, axis=1)).astype(np.float64)


def _describe(objective: str, t: int) -> str:
    if objective == "evidence_subsample":
        return (f"negative log evidence per point of the Gaussian-process model on "
                f"{EVIDENCE_SUBSAMPLE} random rows, confirmed by the leave-one-out error "
                "(PRESS) of the LSSVM on all rows")
    if objective == "evidence":
        cols = "" if t == 1 else f", averaged over {t} one-vs-rest columns"
        return ("negative log evidence per point of the Gaussian-process model, the signal "
                f"scale profiled out{cols}")
    what = "5-fold cross-validation in closed form" if objective == "kfold" else \
        "leave-one-out (PRESS)"
    cols = "" if t == 1 else f", summed over {t} one-vs-rest columns"
    return f"log of the mean squared held-out residual of the LSSVM, {what}{cols}"


def _value(problem: ArdProblem, theta: np.ndarray) -> float:
    """The optimised criterion at θ (NaN where it is undefined)."""
    try:
        return float(problem.evaluate(theta, grad=False)[0])
    except EvaluationError:
        return float("nan")


def _rate(problem: ArdProblem, theta: np.ndarray) -> float:
    """Held-out error rate (of the optimised estimate) of ±1 / one-vs-rest targets at θ."""
    store: dict[str, Any] = {}
    try:
        problem.evaluate(theta, grad=False, out=store)
    except EvaluationError:           # an undefined point has no rate
        return float("nan")
    return (store["error_rate"] if "error_rate" in store
            else _error_rate(problem.Y, store["residuals"]))


def bagged(fold_thetas: Any, n: int, folds: int) -> np.ndarray:
    """The mean of the fold optima in (log γ, log α), α scaled from the folds' training
    parts (n − n/folds rows) to n rows (the same ridge per point)."""
    th = np.asarray(fold_thetas, dtype=np.float64).mean(axis=0)
    th[-1] += np.log(n / (n - n / folds))
    return th


#: criteria whose held-out residuals the per-feature search can differentiate
LOO_CRITERIA = ("eloo", "eloo_multiclass")
KFOLD_CRITERIA = ("ekfold", "ekfold_multiclass")


def ard_options(criterion: Any, approximation: Any) -> tuple[str, str]:
    """(objective, engine) for ``select_kernel(kernel="ard", criterion=...,
    approximation=...)``; refuses, naming what works, what the search cannot run."""
    name = criterion.strip().lower() if isinstance(criterion, str) else None
    if name == "auto":
        objective = "auto"
    elif name in LOO_CRITERIA:
        objective = "loo"
    elif name in KFOLD_CRITERIA:
        objective = "kfold"
    else:
        raise ValueError(
            f"kernel='ard' chooses one γ per feature by the gradient of the LSSVM's held-out "
            f"error, so criterion must be 'auto', 'eloo', 'eloo_multiclass', 'ekfold' or "
            f"'ekfold_multiclass'; got {criterion!r}. Use kernel='gaussian' for other "
            "criteria.")
    label = (approximation.strip().lower() if isinstance(approximation, str)
             else getattr(approximation, "name", None))
    engines = {"auto": "auto", "exact": "exact", "nystrom": "nystrom"}
    if label not in engines:
        raise ValueError(
            f"kernel='ard' runs on the exact kernel matrix or a Nyström stand-in with fixed "
            f"landmarks (approximation='auto', 'exact' or 'nystrom'), not on "
            f"{label or approximation!r}: the Song–Xu and randomised circulant stand-ins "
            "take one γ, and random features have no closed-form held-out gradient here. "
            "Use kernel='gaussian' with that approximation.")
    return objective, engines[label]


def is_auto_kernel(kernel: Any) -> bool:
    """Whether ``kernel`` asks for the evidence-based kernel rule (``"auto"``)."""
    return isinstance(kernel, str) and kernel.strip().lower() == "auto"


def auto_kernel(y: Any, task: Any, n: int | None = None, approximation: str | None = None,
                criterion: str | None = None, targets: Targets | None = None
                ) -> tuple[str, str]:
    """(kernel, reason) of ``kernel="auto"``: the per-feature kernel for a real target
    (one column) on at most ``_policy.ARD_AUTO_MAX_N`` rows, the isotropic Gaussian
    kernel for class labels, beyond that n, and with an ``approximation`` or a
    ``criterion`` (names) that the per-feature search does not take.

    The rule and its study: :func:`kernelselect._policy.kernel_for_task`. ``targets``:
    y as an estimator's door prepared it (None: its task is found here).
    """
    if targets is not None:
        return kernel_for_task(targets.task, n, approximation, criterion)
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        return kernel_for_task(None)
    return kernel_for_task(prepare_targets(arr, task).task, n, approximation, criterion)
