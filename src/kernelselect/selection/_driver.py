"""The selection driver: evaluate criteria over a (γ, α) grid and pick the best."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, replace
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..utils._validation import (
    as_array,
    refuse_sparse_or_masked,
    check_bool,
    check_grid,
    check_matrix,
    check_random_state,
    check_rows,
)
from ..utils import _dask
from . import _policy, _search
from .. import _policy as _rules
from .._policy import GAMMA_EXPONENTS as GRID_EXPONENTS
from ._ard_select import (ArdSelectionResult, ard_options, auto_kernel,
                          keep_isotropic, select_ard, start_approximation)
from ..utils._progress import check_progress
from ..utils._targets import (Targets, multi_output_targets, prepare_targets, rescale_target,
                       target_matrix)
from .._typing import RandomState
from ..utils._threads import blas_threads as _blas_threads
from ..utils._threads import selection_workers as _selection_workers
from ..criteria import Criterion, check_compatible, encode_binary, get_criterion
from ..kernels import Kernel, kernel_or_auto, median_heuristic_gamma
from ..operators import Approximation, get_approximation
from ._checkpoint import SelectionCheckpoint, check_checkpoint, params_digest
from ._result import SearchLevel, SelectionResult, check_selects
from ..solvers._checkpoint import digest, fingerprint
from ..utils._scaling import ColumnScaling
from ..utils._warnings import warn_user

__all__ = ["select_kernel", "SelectionResult", "ArdSelectionResult", "SearchLevel",
           "default_gammas"]


def default_gammas(X: npt.ArrayLike, kernel: str = "gaussian",
                   random_state: RandomState = None) -> np.ndarray:
    """The default γ grid: γ₀·2^k for k = −7, …, 7 (15 points).

    γ₀ is the median heuristic 1/median(‖x_i − x_j‖²) (Gaussian) or
    1/median(‖x_i − x_j‖₁) (Laplacian) over 5000 random pairs of points
    (:func:`kernelselect.kernels.median_heuristic_gamma`), drawn with
    ``random_state`` (None: a fixed seed, the same pairs as ``random_state=0``).
    """
    return _gamma_grid(check_matrix(X, "X", min_rows=2), kernel, random_state)


def _gamma_grid(X: Any, kernel: str, random_state: RandomState) -> np.ndarray:
    """:func:`default_gammas` of an X its caller checked."""
    g0 = median_heuristic_gamma(X, kernel, random_state)
    return g0 * 2.0 ** GRID_EXPONENTS


def _split_params(criteria: Sequence[Criterion], params: Mapping[str, Any]
                  ) -> dict[str, dict[str, Any]]:
    """Each keyword goes to every requested criterion that declares it."""
    per: dict[str, dict[str, Any]] = {c.name: {} for c in criteria}
    for key, value in params.items():
        takers = [c for c in criteria if key in c.params]
        if not takers:
            names = ", ".join(c.name for c in criteria)
            known = sorted({p for c in criteria for p in c.params})
            hint = (f" (they take: {', '.join(known)})" if known
                    else " (they take no parameters)")
            if key in ("n_jobs", "threads", "num_threads", "n_threads"):
                hint += "; the number of threads is set with workers=N (-1: all cores)"
            raise TypeError(
                f"select_kernel has no parameter {key!r}, and none of the requested criteria "
                f"({names}) takes it{hint}."
            )
        for c in takers:
            per[c.name][key] = value
    return per


# Over 80 lines by its docstring alone (the reference of every argument); the code is
# the dispatch below, 20 lines.
def select_kernel(X: npt.ArrayLike, y: npt.ArrayLike, *, kernel: str = "auto",
                  gammas: npt.ArrayLike | None = None, alphas: npt.ArrayLike | None = None,
                  criterion: str | Sequence[str] = "auto",
                  approximation: str | Approximation = "auto",
                  random_state: RandomState = None, workers: int | None = None,
                  progress: bool | float = False, standardize: bool = True,
                  task: Literal["auto", "binary", "multiclass", "regression"] = "auto",
                  refine: bool = False, checkpoint: Any = None,
                  **criterion_params: Any) -> SelectionResult:
    """Select the kernel (γ, α) of a kernel machine by a selection criterion.

    With nothing but X and y it selects as well as 5-fold cross-validation at a small
    fraction of its cost (docs/defaults.md): k-fold (small n)
    or leave-one-out error of the LSSVM in closed form over γ × α, on the exact kernel
    matrix or nested
    Nyström stand-ins that grow until the choice stops moving, with grids that extend
    past their edges. The rules, each with the study that set it, are stated in
    :mod:`kernelselect._policy`; what was done is in ``result.details``, and
    ``result.details["rules"]`` names each argument left to them (``approximation``,
    ``criterion``, ``task``, ``gammas``, ``alphas``, ``kernel``) with the choice made
    and its reason.

    For every γ, one operator (the kernel matrix or a stand-in for it) is built once
    and every requested criterion is evaluated on it for the whole α path.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training inputs, n ≥ 3. Distances are taken as given: scale the features
        first or keep ``standardize=True``. A ``dask.array`` chunked by rows runs
        the streamed passes as a Dask graph on the active scheduler (Nyström with
        uniform landmarks, RFF, the exact moments; docs/streaming.md), with the same
        policy and the same result as in memory; X is not gathered, except by
        ``approximation="auto"`` below 3200 rows (``kernelselect._policy.GATHER_BELOW``), where
        the policy may use the exact kernel matrix, and where ``kernel="auto"`` chooses
        one γ per feature (at most ``kernelselect._policy.ARD_AUTO_MAX_N`` rows).
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets: class labels of any type (numbers, strings) or a real target; what
        it is follows ``task``. Binary labels are encoded ±1 (the later class in
        sorted order → +1); multi-class labels become one-vs-rest ±1 columns for
        ``eloo_multiclass`` and the codes 0, …, C−1 for the other criteria. Criteria
        of a target matrix (``di``, ``kdi``) receive the unit-norm class indicator
        columns, or the real target as columns; a real target of several columns
        (n_samples, n_outputs) is accepted when every requested criterion takes one.
    kernel : {"auto", "gaussian", "laplacian", "ard"}, default="auto"
        exp(−γ‖x − x′‖²), exp(−γ‖x − x′‖₁), or exp(−Σ_k γ_k (x_k − x′_k)²) with one γ
        per feature: ``"ard"`` runs the isotropic selection, then a gradient search of
        (γ₁, …, γ_d, α) from its choice, kept only when it predicts better on nested
        folds (:mod:`kernelselect.selection._ard_select`); the result is an
        :class:`~kernelselect.selection._ard_select.ArdSelectionResult` whose ``best_gamma`` has
        shape (n_features,) and which offers ``relevances()``. ``"auto"`` (the
        default): ``"ard"`` for a real target of at most
        ``kernelselect._policy.ARD_AUTO_MAX_N`` rows with approximation "auto", "exact"
        or "nystrom", else ``"gaussian"`` (class labels, several target columns, more
        rows, other stand-ins); the rule and its evidence:
        :func:`kernelselect._policy.kernel_for_task`, the reason in
        ``details["rules"]["kernel"]``. ``"gaussian"`` is the isotropic selection of
        earlier defaults.
    gammas : array-like of positive floats or None
        Candidate γ. None: γ₀·2^k, k = −7, …, 7, around the median heuristic γ₀
        (:func:`default_gammas`), extended past an edge when the best γ is on it.
    alphas : array-like of positive floats or None, default=None
        Ridge values; the ridge is added to the kernel matrix, K + αI. None: for
        criteria that estimate the test error (the leave-one-out and k-fold errors,
        gcv; :data:`kernelselect._policy.ALPHA_SELECTING`) the
        automatic path α = n·10^k, k = −6, −5.5, …, 0 (α relative to tr K = n),
        extended past an edge when the best α is on it; for the others α = 1.
    criterion : str or list of str, default="auto"
        "auto": on the exact kernel matrix with n ≤ 400, ``ekfold`` (5-fold
        cross-validation of the LSSVM in closed form, mean squared held-out residual)
        for binary labels and real targets and ``ekfold_multiclass`` (one-vs-rest,
        error rate with a PRESS tie-break) for C ≥ 3 classes; otherwise their
        leave-one-out forms ``eloo`` (PRESS, ``loss="squared"``) and
        ``eloo_multiclass``: the same criteria, with the same losses, as the names
        give. Or one of :func:`kernelselect.criteria.criterion_names` or a list of
        them; the first decides ``best_gamma`` / ``best_alpha``. A name has one loss:
        ``eloo`` and ``ekfold`` the squared loss, ``eloo_error_rate`` and
        ``ekfold_error_rate`` the 0-1 loss (binary labels), the ``_multiclass`` forms
        the error rate with a PRESS tie-break.
    approximation : str or Approximation, default="auto"
        "auto": exact for n ≤ 400, else Nyström levels with nested landmarks (100 on
        the whole grid, then doubled around the best point) until two levels agree
        within one grid step and the landmarks are at least twice the effective
        dimension of the chosen model (at most 800; exact once they would exceed n/2).
        Or "exact", "nystrom", "rff", "mcm", "random_mcm" (defaults) or an instance
        such as ``Nystroem(n_landmarks=500)``.
    random_state : int, Generator or None
        Seeds the γ-grid pairs and the approximation's random draws (drawn once and
        reused for every γ). A fixed seed gives the same result.
    workers : int or None
        Threads of the compiled kernels (-1: all cores). When given, BLAS/LAPACK are
        limited to the same number of threads for the call. None: one thread (BLAS
        too) for n ≤ 1000 or when other processes keep all but one core busy, else
        OpenMP's default (:mod:`kernelselect.utils._threads`).
    progress : bool or float, default=False
        Show progress on stderr, one bar over the operator builds planned (the total
        grows as levels and extensions are added), with the time left: a tqdm bar on
        a terminal when tqdm is installed, otherwise a line every 10 s. True: from the start; a number t:
        only once the call has run t seconds (nothing on shorter calls).
    standardize : bool, default=True
        Centre each feature and scale it to unit variance first
        (:func:`standardize_columns`, safe at any magnitude; distances, hence γ, then
        do not depend on the units of the features).
    task : {"auto", "binary", "multiclass", "regression"}, default="auto"
        What y is; "auto" follows :func:`kernelselect.utils._targets.detect_task` (two
        values → binary; whole-number codes 0…C−1 or 1…C → multiclass; other numbers
        → regression; non-numeric labels → classes).
    refine : bool, default=False
        After the grid, search (log γ, log α) continuously within one grid step of the
        best point on the same operator draws; kept only if the criterion improves.
    checkpoint : str, os.PathLike or None, default=None
        A file that saves every operator the search evaluates (its criteria over the
        α path), written after each: the same call run again after an interruption (a
        killed process, a lost Dask worker) reads the finished evaluations back and goes
        on from the first missing one, to the result of an uninterrupted run. A file of
        another selection (other data, grids, criteria or ``random_state``) is refused
        naming what differs; a file that is no checkpoint is never overwritten. The
        file is kept when the selection ends, so the call replays in moments; delete it
        to select afresh. Pass ``random_state`` so that a rerun draws the same
        landmarks. The isotropic kernels only. ``details["operators_read"]`` counts the
        evaluations read back, ``details["n_operator_builds"]`` those built.
    **criterion_params
        Passed to every requested criterion that takes them (e.g. ``sigma`` for ipe
        and c1, ``r`` or ``h`` for sm, ``loss`` for eloo).

    Returns
    -------
    SelectionResult

    Raises
    ------
    ValueError
        Besides bad input: when a requested criterion has no finite value anywhere on
        the grid (a selection is never NaN).

    Notes
    -----
    Numerical range: X enters only through distances, which the kernels compute on
    data rescaled by a power of two (the median-heuristic γ₀ too). A target y whose
    largest magnitude lies outside [2⁻²⁵⁶, 2²⁵⁶] is divided by a power of two s first;
    the curves are then those of y/s (the choices are the same: the error criteria
    scale as y², the alignments not at all) and ``details["target_scale"]`` holds s.

    Warns
    -----
    GridEdgeWarning
        When the selected γ or α is on the edge of the grid searched: the automatic
        grids after their extensions, a given ``gammas`` / ``alphas`` as given (the
        warning names the argument and the direction to extend it).

    Examples
    --------
    >>> import numpy as np, kernelselect
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 3)); y = np.sign(X[:, 0] + 0.1)
    >>> res = kernelselect.select_kernel(X, y, random_state=0)
    >>> res.criteria, res.details["approximation"]
    (['ekfold'], 'exact')
    """
    t0 = time.perf_counter()
    data, targets = None, None
    if not isinstance(kernel_or_auto(kernel), Kernel):
        # "auto" reads the task of y: X and y are checked and y prepared here, once, and
        # the isotropic plan takes them as they are
        data = _check_data(X, y, criterion, _is_auto(approximation))
        targets = (multi_output_targets(data.y, task) if data.multi_output
                   else prepare_targets(data.y, task))
    kernel, rule = _resolve_kernel(X, y, kernel, task, approximation, criterion,
                                   None if data is None or data.multi_output else targets)
    if kernel.per_feature and checkpoint is not None:
        raise ValueError(_PER_FEATURE_CHECKPOINT)
    if kernel.per_feature:
        note = None if data is None else data.note
        if data is not None:            # "auto": X in memory, Dask input gathered
            X, y = data.X, data.y
            if data.distributed:
                X, note = _gather_for_auto(X), f"Dask array gathered into memory ({_AUTO_GATHER})"
        result = _select_ard(X, y, gammas=gammas, alphas=alphas, criterion=criterion,
                             approximation=approximation, random_state=random_state,
                             workers=workers, progress=progress, standardize=standardize,
                             task=task, refine=refine, **criterion_params)
        if note is not None:
            result.details["input"] = note
    else:
        plan = _plan(X, y, kernel=kernel, gammas=gammas, alphas=alphas, criterion=criterion,
                     approximation=approximation, random_state=random_state, workers=workers,
                     progress=progress, standardize=standardize, task=task, refine=refine,
                     criterion_params=criterion_params, data=data, targets=targets,
                     checkpoint=checkpoint)
        result = _report(plan, _run(plan))
    if rule is not None:
        result.details["kernel_rule"] = rule
        result.details.setdefault("rules", {})["kernel"] = rule
    # the whole call: checks, grids, every level, extension and refinement, the
    # per-feature search (SelectionResult.total_time)
    result.details["total_seconds"] = time.perf_counter() - t0
    return result


#: why a checkpoint is refused on the per-feature search
_PER_FEATURE_CHECKPOINT = (
    "checkpoint= saves the isotropic search (kernel='gaussian' or 'laplacian'); the "
    "per-feature search (kernel='ard', or 'auto' on a real target up to 10⁴ rows) is not "
    "checkpointed: drop checkpoint= or pass kernel='gaussian'.")


def _resolve_kernel(X: Any, y: Any, kernel: Any, task: Any, approximation: Any,
                    criterion: Any = "auto", targets: Targets | None = None
                    ) -> tuple[Kernel, str | None]:
    """The kernel a selection runs on and, for ``kernel="auto"``, the policy's reason
    (:func:`kernelselect._policy.kernel_for_task`, by the task of y, the number of rows,
    the stand-in and the criterion); the one place where ``"auto"`` is decided."""
    chosen = kernel_or_auto(kernel)
    if isinstance(chosen, Kernel):
        return chosen, None
    shape = getattr(X, "shape", None)
    rows = shape[0] if shape is not None and len(shape) else len(X)
    n = int(rows) if isinstance(rows, (int, np.integer)) or (
        isinstance(rows, float) and np.isfinite(rows)) else None
    label = (approximation.strip().lower() if isinstance(approximation, str)
             else getattr(approximation, "name", None))
    crit = criterion.strip().lower() if isinstance(criterion, str) else repr(criterion)
    try:
        name, rule = auto_kernel(y, task, n, label, crit, targets)
    except (TypeError, ValueError):     # bad y: the isotropic selection's checks name it
        return Kernel.of("gaussian"), None
    return Kernel.of(name), rule


def _streamed(X: Any, y: Any, approximation: Any) -> bool:
    """Whether Dask input stays in its chunks: it is gathered into memory below
    ``_policy.GATHER_BELOW`` rows under ``approximation="auto"`` (:func:`_check_data`),
    where every door then runs the in-memory selection."""
    if not (_dask.is_dask_array(X) or _dask.is_dask_array(y)):
        return False
    return not _gathered(np.shape(X)[0], _is_auto(approximation))


def _gather_for_auto(X: Any) -> np.ndarray:
    """Dask X on which ``kernel="auto"`` chose the per-feature kernel, gathered (at most
    ``_rules.ARD_AUTO_MAX_N`` rows): the rule and its evidence are the in-memory
    search's, and every door then gives its answer."""
    return _dask.gather(X, _AUTO_GATHER)


#: why a Dask X is gathered for kernel="auto" (the gather's message and the result's note)
_AUTO_GATHER = f"kernel='auto' chose one γ per feature, n ≤ {_rules.ARD_AUTO_MAX_N} rows"


def _gathered(n: int, auto_approx: bool) -> bool:
    """Whether Dask input of n rows is gathered into memory: below
    ``_policy.GATHER_BELOW`` rows under ``approximation="auto"``."""
    return auto_approx and n < _policy.GATHER_BELOW


def _select_validated(X: Any, y: np.ndarray, targets: Targets, *, y_dask: Any = None,
                      kernel: str, gammas: Any, alphas: Any, criterion: Any,
                      approximation: Any, random_state: RandomState, workers: int | None,
                      progress: bool | float, refine: bool, auto: bool = False,
                      checkpoint: str | None = None) -> SelectionResult:
    """:func:`select_kernel` (``standardize=False``, ``task=targets.task``) on X and y
    an estimator checked at its door: X float64 in memory, or a checked row-chunked Dask
    array with y gathered and ``y_dask`` y in X's chunks; ``targets`` prepared from y.
    Neither is checked or prepared again. ``kernel="auto"`` is resolved as by
    :func:`select_kernel`; ``auto``: the door resolved it (a per-feature choice gathers
    Dask input, as ``select_kernel`` does). ``checkpoint``: a path checked by the door,
    which also refuses it for a per-feature kernel (as ``select_kernel`` does)."""
    chosen, rule = _resolve_kernel(X, y, kernel, targets.task, approximation, criterion,
                                   targets)
    result = _select_chosen(X, y, targets, y_dask, kernel=chosen, gammas=gammas,
                            alphas=alphas, criterion=criterion, approximation=approximation,
                            random_state=random_state, workers=workers, progress=progress,
                            refine=refine, auto=auto or rule is not None,
                            checkpoint=checkpoint)
    if rule is not None:
        result.details["kernel_rule"] = rule
        result.details.setdefault("rules", {})["kernel"] = rule
    return result


def _select_chosen(X: Any, y: np.ndarray, targets: Targets, y_dask: Any, *, kernel: Kernel,
                   gammas: Any, alphas: Any, criterion: Any, approximation: Any,
                   random_state: RandomState, workers: int | None,
                   progress: bool | float, refine: bool, auto: bool = False,
                   checkpoint: str | None = None) -> SelectionResult:
    """:func:`_select_validated` on a resolved kernel (``auto``: chosen by
    ``kernel="auto"``, whose per-feature choice gathers Dask input)."""
    if not kernel.per_feature:
        return _select_checked(X, y, targets, y_dask, kernel=kernel, gammas=gammas,
                               alphas=alphas, criterion=criterion,
                               approximation=approximation, random_state=random_state,
                               workers=workers, progress=progress, refine=refine,
                               checkpoint=checkpoint)
    t0 = time.perf_counter()
    if y_dask is not None and auto:
        X, y_dask = _gather_for_auto(X), None
    elif y_dask is not None and not _streamed(X, y_dask, approximation):
        # below the gather size every door runs the in-memory selection (_check_data)
        X, y_dask = _dask.gather(X, f"n < {_policy.GATHER_BELOW} rows"), None

    def isotropic(_X: Any, _y: Any, **options: Any) -> SelectionResult:
        """The per-feature search's isotropic selection, on the same checked rows."""
        del options["standardize"], options["task"]
        return _select_checked(X, y, targets, y_dask, **options)

    rows = _dask.IN_MEMORY if y_dask is None else _dask.RowSource.of_dask(X)
    result = _select_ard(X, y if y_dask is None else y_dask, gammas=gammas, alphas=alphas,
                         criterion=criterion, approximation=approximation,
                         random_state=random_state, workers=workers, progress=progress,
                         standardize=False, task=targets.task, refine=refine,
                         isotropic=isotropic, rows=rows,
                         targets=targets if y_dask is None else None)
    result.details["total_seconds"] = time.perf_counter() - t0
    return result


def _select_checked(X: Any, y: np.ndarray, targets: Targets, y_dask: Any, *, kernel: str,
                    gammas: Any, alphas: Any, criterion: Any, approximation: Any,
                    random_state: RandomState, workers: int | None,
                    progress: bool | float, refine: bool,
                    checkpoint: str | None = None) -> SelectionResult:
    """The isotropic selection of :func:`_select_validated`."""
    t0 = time.perf_counter()
    data = _check_data(X, y, criterion, _is_auto(approximation), checked=True,
                       y_dask=y_dask)
    plan = _plan(data.X, data.y, kernel=kernel, gammas=gammas, alphas=alphas,
                 criterion=criterion, approximation=approximation,
                 random_state=random_state, workers=workers, progress=progress,
                 standardize=False, task=targets.task, refine=refine,
                 criterion_params={}, data=data,
                 targets=replace(targets, reason="given"),   # the task was given
                 checkpoint=checkpoint)
    result = _report(plan, _run(plan))
    result.details["total_seconds"] = time.perf_counter() - t0
    return result


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class _Data:
    """X and y as checked at the boundary, and where they live."""

    X: Any                         # checked (numpy, or a row-chunked Dask array)
    y: np.ndarray                  # the labels or targets, one entry (or row) per row of X
    y_dask: Any                    # y as given when it is a Dask array, else None
    distributed: bool              # X stays in its Dask chunks
    multi_output: bool             # y holds several target columns
    note: str | None               # how Dask input is treated, for the details


@dataclass(frozen=True)
class _Plan:
    """Everything one selection on an isotropic kernel runs on, decided before any
    kernel is built: the targets, the criteria, the approximation and the grids."""

    X: Any                                   # checked and standardised
    targets: Targets                         # y encoded (divided by target_scale)
    targets_for: Mapping[str, np.ndarray]    # criterion name → the target it receives
    crits: tuple[Criterion, ...]             # the first decides the selection
    params: Mapping[str, dict[str, Any]]     # criterion name → its parameters
    kernel: str
    approx: Approximation | None             # None: the nested Nyström levels of "auto"
    needs: frozenset[str]                    # what the criteria require of an operator
    auto_reason: str | None                  # why "auto" starts as it does (None: given)
    gammas: np.ndarray
    alphas: np.ndarray
    auto_gammas: bool                        # grids chosen here may grow at their edges
    auto_alphas: bool
    rows: Any                                # the Dask row source, or None
    workers: int | None
    rng: np.random.Generator
    progress: bool | float
    refine: bool
    details: Mapping[str, Any]               # what the plan decided, for the result
    checkpoint: SelectionCheckpoint | None = None   # the saved evaluations, if asked


def _is_auto(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() == "auto"


def _plan(X: Any, y: Any, *, kernel: Any, gammas: Any, alphas: Any, criterion: Any,
          approximation: Any, random_state: Any, workers: Any, progress: Any,
          standardize: Any, task: Any, refine: Any,
          criterion_params: Mapping[str, Any], data: _Data | None = None,
          targets: Targets | None = None, checkpoint: Any = None) -> _Plan:
    """Check every argument once and decide what the selection evaluates (``data`` and
    ``targets``: X, y and the targets as an estimator's door checked them)."""
    checkpoint = check_checkpoint(checkpoint)
    if data is None:
        data = _check_data(X, y, criterion, _is_auto(approximation))
    n = data.X.shape[0]
    if targets is None:
        targets = (multi_output_targets(data.y, task) if data.multi_output
                   else prepare_targets(data.y, task))
    kernel = Kernel.of(kernel, per_feature=False)
    standardize = check_bool(standardize, "standardize")
    refine = check_bool(refine, "refine")
    workers_n = _selection_workers(workers, n)    # None: 1 thread for small n or busy cores
    progress = check_progress(progress)
    crits, params, approx, auto_reason = _criteria_and_approximation(
        criterion, approximation, targets.task, n, criterion_params)
    _check_targets(crits, targets, data)
    if data.distributed and approx is not None and not approx.capabilities.dask:
        raise ValueError(
            f"approximation={approx.label!r} does not run on Dask arrays; use 'nystrom' "
            "(uniform landmarks) or 'rff', or pass numpy arrays.")
    for c in crits:
        if approx is not None:
            check_compatible(c, approx, params[c.name])
    needs = frozenset(c.requirement(params[c.name]) for c in crits)
    approx = approx.configured(needs) if approx is not None else None
    X = data.X
    scaling = None
    if standardize:     # user landmark points go through the same map as X
        scaling = ColumnScaling.fit(X, _dask.compute if data.distributed else None)
        if scaling is not None:
            X = scaling.transform(X)
            approx = approx.rescaled(scaling.transform) if approx is not None else None
    target_scale = 1.0
    if targets.task == "regression":
        y_scaled, params, target_scale = rescale_target(targets.y, params)
        targets = replace(targets, y=y_scaled)
    rng = check_random_state(random_state)
    details: dict[str, Any] = {
        "kernel": kernel.value, "n": n, "d": X.shape[1], "task": targets.task,
        "task_reason": targets.reason, "standardize": bool(standardize),
        "criterion_params": {c.name: c.resolve_params(params[c.name]) for c in crits}}
    if data.note is not None:
        details["input"] = data.note
    if target_scale != 1.0:
        details["target_scale"] = target_scale
    if targets.classes is not None:
        details["classes"] = targets.classes.tolist()
    auto_gammas, alphas_given = gammas is None, alphas is not None
    auto_alphas = alphas is None and crits[0].name in _rules.ALPHA_SELECTING
    gammas, alphas = _grids(X, kernel, gammas, alphas, crits[0], rng, random_state,
                            data.distributed, details)
    details["rules"] = _resolved(details, auto_reason, crits[0].name if _is_auto(criterion)
                                 else None, task, auto_gammas, alphas_given)
    rows = None
    if data.distributed:
        rows = _dask.DaskRows(X, _dask.encoded_target(data.y_dask, targets.classes,
                                                      targets.task, target_scale))
    saved = None
    if checkpoint is not None:
        saved = SelectionCheckpoint(checkpoint, _fingerprint(
            X, targets, details, gammas, alphas, approx, scaling, random_state,
            data.distributed))
    return _Plan(X, targets, {c.name: _target_for(c, targets) for c in crits}, tuple(crits),
                 params, kernel, approx, needs, auto_reason, gammas, alphas, auto_gammas,
                 auto_alphas, rows, workers_n, rng, progress, refine, details, saved)


def _fingerprint(X: Any, targets: Targets, details: Mapping[str, Any], gammas: np.ndarray,
                 alphas: np.ndarray, approx: Approximation | None, scaling: Any,
                 random_state: Any, distributed: bool) -> dict[str, str]:
    """What identifies a selection for its checkpoint (selection/_checkpoint.py): the
    data by a digest of X in memory, by its column statistics on Dask input (read by the
    standardisation's pass, so none is added) or, without standardisation, by the
    γ grid the median heuristic drew from its rows."""
    if not distributed:
        data = digest(np.asarray(X))
    elif scaling is not None:
        data = digest(np.concatenate([np.ravel(scaling.exponents), np.ravel(scaling.mean),
                                      np.ravel(scaling.shift), np.ravel(scaling.scale)]))
    else:
        data = "Dask input without standardisation: the γ grid"
    return fingerprint(
        n=details["n"], d=details["d"], kernel=details["kernel"], task=details["task"],
        criteria=params_digest(details["criterion_params"]),
        gammas=np.asarray(gammas, dtype=np.float64),
        alphas=np.asarray(alphas, dtype=np.float64), X=data,
        y=np.asarray(targets.y, dtype=np.float64),
        approximation="auto" if approx is None else params_digest(
            dict(approx.get_params(), label=approx.label)),
        random_state=repr(random_state) if isinstance(random_state, (int, np.integer))
        else type(random_state).__name__)



def _check_data(X: Any, y: Any, criterion: Any, auto_approx: bool, *,
                checked: bool = False, y_dask: Any = None) -> _Data:
    """X and y checked: their shapes agree, y varies; Dask input below
    ``_policy.GATHER_BELOW`` rows is gathered for ``approximation="auto"``.

    ``checked``: X and y come from an estimator's door (X float64, or a checked
    row-chunked Dask array with y gathered and ``y_dask`` its chunked form); only the
    selection's own rules are applied."""
    distributed = y_dask is not None if checked else (_dask.is_dask_array(X)
                                                      or _dask.is_dask_array(y))
    note = None
    if distributed:
        if not checked:
            X, y, y_dask = _dask.check_dask_data(X, y)
        if _gathered(X.shape[0], auto_approx):                  # the in-memory path, exactly
            note = (f"Dask array gathered into memory (n < {_policy.GATHER_BELOW}, "
                    "where approximation='auto' may use the exact kernel matrix)")
            # gathered: finite (else refused naming the row), float32 or float64
            X, distributed = _dask.gather(X, f"n < {_policy.GATHER_BELOW} rows"), False
        else:
            note = "Dask array, streamed by chunks"
    elif checked:
        check_rows(X, "X", min_rows=3)
    else:
        X = check_matrix(X, "X", min_rows=3)      # float32 stays float32, else float64
    n = X.shape[0]
    y_arr = as_array(refuse_sparse_or_masked(y, "y"), "y")   # masked entries, pd.NA refused
    if y_arr.ndim == 2 and y_arr.shape[1] == 1:
        y_arr = y_arr[:, 0]
    # several target columns: only for criteria that take a target matrix (checked later)
    multi_output = not distributed and y_arr.ndim == 2 and y_arr.shape[0] == n
    if (y_arr.ndim != 1 and not multi_output) or y_arr.shape[0] != n:
        raise ValueError(f"y has {y_arr.shape[0] if y_arr.ndim else 0} entries (shape "
                         f"{y_arr.shape}) but X has {n} rows; give one target per row.")
    if y_arr.dtype.kind in "iufb" and y_arr.size and np.all(y_arr == y_arr.flat[0]):
        first = criterion if isinstance(criterion, str) else list(criterion or ["?"])[0]
        raise ValueError(
            f"y has a single value ({y_arr.flat[0].item()!r}) for all {n} samples; criterion "
            f"{getattr(first, 'name', first)!r} needs two classes or a varying target.")
    return _Data(X, y_arr, y_dask, distributed, multi_output, note)


def _criteria_and_approximation(criterion: Any, approximation: Any, task: str, n: int,
                                criterion_params: Mapping[str, Any]
                                ) -> tuple[list[Criterion], dict[str, dict[str, Any]],
                                           Approximation | None, str | None]:
    """(criteria, their parameters, the approximation, why "auto" chose it): the
    policy and the registry are asked once each. An approximation of None is the
    nested Nyström levels of ``approximation="auto"``."""
    auto_approx = _is_auto(approximation)
    if not _is_auto(criterion):
        names = ([criterion] if isinstance(criterion, str) else list(criterion)
                 if isinstance(criterion, (list, tuple)) else [criterion])
        if not names:
            raise ValueError("criterion must name at least one criterion.")
        crits: list[Criterion] = []
        for name in names:
            c = get_criterion(name)
            if c.name not in [k.name for k in crits]:
                crits.append(c)
        params = _split_params(crits, criterion_params)
        if auto_approx:
            spectral = any(c.requirement(params[c.name]) != "moments" for c in crits)
            return crits, params, *_policy.auto_start(n, spectral)
        return crits, params, get_approximation(approximation), None
    # the default criteria (leave-one-out or k-fold errors) need more than moments
    approx, reason = (_policy.auto_start(n, True) if auto_approx
                      else (get_approximation(approximation), None))
    blocks = approx is not None and "blocks" in approx.provides
    name, defaults = _rules.default_criterion(
        task, n, blocks, None if auto_approx or approx is None else approx.provides)
    crits = [get_criterion(name)]
    return crits, _split_params(crits, {**defaults, **criterion_params}), approx, reason


def _check_targets(crits: Sequence[Criterion], targets: Targets, data: _Data) -> None:
    """Refuse a target that a requested criterion cannot take, naming both."""
    if data.multi_output and any(c.labels != "matrix" for c in crits):
        names_1d = ", ".join(repr(c.name) for c in crits if c.labels != "matrix")
        raise ValueError(f"y has shape {data.y.shape}: one target per row is needed for "
                         f"criterion {names_1d} (several target columns are taken only by "
                         "criteria of a target matrix, such as 'di' and 'kdi').")
    for c in crits:
        if c.labels == "binary":
            encode_binary(targets.y, c.name)          # raises naming y and the criterion
        elif c.labels == "multiclass" and targets.task == "regression":
            raise ValueError(f"criterion {c.name!r} needs class labels; y is a real target "
                             f"({targets.reason}). Pass task='multiclass' if y holds codes.")


def _target_for(crit: Criterion, targets: Targets) -> np.ndarray:
    """What ``crit`` receives: a target matrix, ±1 or one-vs-rest columns, or y."""
    if crit.labels == "matrix":
        return target_matrix(targets)
    if crit.labels == "multiclass":
        return targets.Y if targets.Y is not None else np.stack([-targets.y, targets.y],
                                                                axis=1)
    return targets.y


def _grids(X: Any, kernel: str, gammas: Any, alphas: Any, first: Criterion,
           rng: np.random.Generator, random_state: Any, distributed: bool,
           details: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The γ and α grids, given or by the policy's rules (written into ``details``)."""
    n = X.shape[0]
    if gammas is None:
        with _dask.cluster_guard() if distributed else contextlib.nullcontext():
            # reads only the sampled rows; random_state=None: a fixed pair sample (the
            # grid depends on X alone, as with the command line's default seed 0)
            g0 = median_heuristic_gamma(X, kernel, rng if random_state is not None else None)
        gammas = g0 * 2.0 ** GRID_EXPONENTS
        details["gamma0"] = g0
        details["gamma_rule"] = "median heuristic gamma0 * 2**k, k = -7..7"
    if alphas is None and first.name in _rules.ALPHA_SELECTING:
        alphas = _rules.alpha_path(n)
        details["alpha_rule"] = "n * 10**k, k = -6, -5.5, ..., 0 (relative to tr K = n)"
    elif alphas is None:
        alphas = (1.0,)
        details["alpha_rule"] = (f"alpha = 1: {first.name} does not estimate the test error, "
                                 "so it cannot choose alpha")
    return check_grid(gammas, "gammas"), _check_alpha_range(check_grid(alphas, "alphas"), n)


def _resolved(details: Mapping[str, Any], auto_reason: str | None, auto_criterion: str | None,
              task: Any, auto_gammas: bool, alphas_given: bool) -> dict[str, str]:
    """Each argument of the selection left to the policy (:mod:`kernelselect._policy`)
    → the choice made and why: ``approximation``, ``criterion``, ``task``, ``gammas``,
    ``alphas`` (those given are absent)."""
    out: dict[str, str] = {}
    if auto_reason is not None:
        out["approximation"] = auto_reason
    if auto_criterion is not None:
        out["criterion"] = _rules.criterion_reason(auto_criterion, details["n"])
    if task is None or _is_auto(task):
        out["task"] = f"{details['task']}: {details['task_reason']}"
    if auto_gammas:
        out["gammas"] = details["gamma_rule"]
    if not alphas_given:
        out["alphas"] = details["alpha_rule"]
    return out


# --------------------------------------------------------------------------- run


@dataclass
class _Outcome:
    """What the search found: the last surface searched and how it got there."""

    surface: _search.Surface
    label: str                               # the approximation that scored the surface
    approximation_params: dict[str, Any]
    searched: list[SearchLevel]
    extensions: list[dict[str, Any]]
    edges: list[str]
    n_builds: int
    auto: dict[str, Any] | None = None       # the levels of approximation="auto"
    refined: dict[str, Any] | None = None    # the refinement's record, with its point


def _run(plan: _Plan) -> _Outcome:
    """The grid search, the edge extensions, the Nyström levels of "auto" and the
    refinement, with one progress bar and BLAS limited to the selection's threads."""
    search = _search.Search(plan.X, plan.targets.y, plan.targets_for, list(plan.crits),
                            plan.params, plan.kernel, plan.workers, plan.rng, plan.progress,
                            rows=plan.rows)
    search.checkpoint = plan.checkpoint
    with _blas_threads(plan.workers), contextlib.closing(search.bar):
        approx, perm, coarse, alphas = plan.approx, None, search, plan.alphas
        if approx is None:                       # auto beyond the exact range: Nyström levels
            perm = plan.rng.permutation(plan.X.shape[0])
            coarse, coarse_perm = _coarse_search(search, plan, perm)
            approx = _policy.nested_nystroem(coarse_perm, _rules.START_LANDMARKS).configured(
                plan.needs)
            alphas = plan.alphas * (coarse.X.shape[0] / plan.X.shape[0])
        state = coarse.prepare(approx)
        curves, timings, ops = coarse.evaluate(approx, state, plan.gammas, alphas)
        surface = _search.Surface(plan.gammas, alphas, curves, timings, ops)
        extensions = _policy.extend_edges(coarse, approx, state, surface, plan.auto_gammas,
                                          plan.auto_alphas)
        label = (approx.label if perm is None
                 else f"nystrom(m={_rules.START_LANDMARKS}){coarse.rows_label}")
        out = _Outcome(surface, label, approx.get_params(),
                       [surface.level(label, coarse.subsample)], extensions, [], 0)
        if plan.auto_reason is not None:
            out.auto = {"reason": plan.auto_reason, "levels": [{
                "approximation": label, "gammas": surface.gammas.tolist(),
                "seconds": float(surface.timings.sum())}]}
            if perm is not None:
                approx, state = _levels(search, coarse, out, perm, coarse_perm, approx, state,
                                        (plan.auto_gammas, plan.auto_alphas))
        out.edges = _policy.warn_edges(search, out.surface, plan.auto_gammas, plan.auto_alphas)
        _warn_given_edges(search, out.surface, out.edges, plan)
        check_selects(out.surface.gammas, out.surface.alphas, out.surface.curves)
        if plan.refine:
            out.refined = _refine(search, approx, state, out.surface)
    out.n_builds = search.n_builds
    return out


#: where to extend a given grid whose best point is on an edge: edge → (argument, words)
_EXTEND = {"gamma_low": ("gammas", "below the smallest"),
           "gamma_high": ("gammas", "above the largest"),
           "alpha_low": ("alphas", "below the smallest"),
           "alpha_high": ("alphas", "above the largest")}


def _warn_given_edges(search: _search.Search, surface: _search.Surface, edges: list[str],
                      plan: _Plan) -> None:
    """A :class:`~kernelselect.selection._policy.GridEdgeWarning` for the edges of the
    grids the caller gave (the automatic ones extend and warn in
    :func:`~kernelselect.selection._policy.warn_edges`): the argument to extend and the
    direction."""
    given = [e for e in edges if not (plan.auto_gammas if e.startswith("gamma")
                                      else plan.auto_alphas)]
    if not given:
        return
    crit = search.crits[0]
    idx = _search.best_index(surface.curves[crit.name], crit.direction)
    assert idx is not None                      # edges were found at the best point
    point = {"gammas": surface.gammas[idx[0]], "alphas": surface.alphas[idx[1]]}
    parts = [f"{_EXTEND[e][0]}= {_EXTEND[e][1]} value {point[_EXTEND[e][0]]:.4g} ({e})"
             for e in given]
    warn_user(f"{crit.name} is best on the edge of the given grid, so the best kernel may "
              f"lie beyond it: extend {' and '.join(parts)}.", _policy.GridEdgeWarning)


def _coarse_search(search: _search.Search, plan: _Plan, perm: np.ndarray
                   ) -> tuple[_search.Search, np.ndarray]:
    """(search, permutation) the first grid and the coarse levels run on: the first
    :func:`~kernelselect._policy.coarse_rows` rows of ``perm`` (in X's order; gathered
    into memory from a Dask X) with their positions in ``perm``'s order, so that level m
    has the landmarks it has on all rows; or the whole search when n is small."""
    n = plan.X.shape[0]
    rows = _rules.coarse_rows(n)
    if rows is None:
        return search, perm
    index = np.sort(perm[:rows])
    X = plan.rows.gather(index) if plan.rows is not None else np.asarray(plan.X[index])
    position = np.empty(n, dtype=np.intp)
    position[index] = np.arange(rows)
    return search.on_rows(index, X), position[perm[:rows]]


def _record_best(levels: list[dict[str, Any]], surface: _search.Surface,
                 crit: Criterion) -> None:
    """The last level's record given the best point of its (extended) ``surface``."""
    idx = _search.best_index(surface.curves[crit.name], crit.direction)
    info = [lv for lv in levels if "approximation" in lv][-1]
    if idx is not None:
        info.update(best_gamma=float(surface.gammas[idx[0]]),
                    best_alpha=float(surface.alphas[idx[1]]),
                    value=float(surface.curves[crit.name][idx]), extended=True)


def _levels(search: _search.Search, coarse: _search.Search, out: _Outcome, perm: np.ndarray,
            coarse_perm: np.ndarray, approx: Approximation, state: Any,
            extend: tuple[bool, bool] = (False, False)) -> tuple[Approximation, Any]:
    """Nested Nyström levels from the first surface until the choice settles
    (:func:`kernelselect.selection._policy.auto_levels`); ``out`` then holds the last level.
    When ``coarse`` runs on a subsample, its choice (γ and the exponent of α/n) is
    carried to all rows and the levels go on there from its last level's landmarks, the
    first compared with the subsample's choice. The subsample's extensions were decided
    at its own, larger, α/n, so the all-rows levels score an automatic α path widened
    by the extensions' reach (``extend``: γ, α automatic) and the last of them still
    grows past an edge of the automatic grids its best point lies on, as the first
    grid does."""
    assert out.auto is not None
    first = out.surface
    final, f_approx, f_state, levels, windows = _policy.auto_levels(
        coarse, first, coarse_perm, _rules.START_LANDMARKS,
        top=_rules.MAX_LANDMARKS if coarse is search else _rules.MAX_LANDMARKS // 2)
    out.auto["levels"] += levels
    out.searched += windows
    if coarse is not search:
        search.n_builds += coarse.n_builds
        crit = search.crits[0]
        idx = _search.best_index(final.curves[crit.name], crit.direction)
        if idx is not None:
            scale = search.X.shape[0] / coarse.X.shape[0]
            point = (float(final.gammas[idx[0]]), float(final.alphas[idx[1]] * scale))
            landmarks = getattr(f_approx, "landmarks", None)
            m = _rules.START_LANDMARKS if landmarks is None else len(landmarks)
            settled = bool(levels and levels[-1].get("stable"))
            out.auto["subsample"] = {"rows": coarse.subsample, "gamma": point[0],
                                     "alpha": point[1], "landmarks": m, "settled": settled}
            # next_level doubles: all rows start at m where the subsample settled, else 2m
            alphas = first.alphas * scale
            final, f_approx, f_state, levels, windows = _policy.auto_levels(
                search, final, perm, m // 2 if settled else m,
                start=(first.gammas, _policy.widened_alphas(alphas) if extend[1] else alphas,
                       point))
            out.auto["levels"] += levels
            out.searched += windows
            if f_approx is not None and windows:
                grown = _policy.extend_edges(search, f_approx, f_state, final, *extend)
                if grown:
                    out.extensions += [dict(e, level=windows[-1].approximation) for e in grown]
                    out.searched[-1] = final.level(windows[-1].approximation)
                    _record_best(out.auto["levels"], final, crit)
    if f_approx is None:
        return approx, state
    out.surface = final
    out.label = [lv for lv in levels if "approximation" in lv][-1]["approximation"]
    out.approximation_params = {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                                for k, v in f_approx.get_params().items()}
    return f_approx, f_state


def _refine(search: _search.Search, approx: Approximation, state: Any,
            surface: _search.Surface) -> dict[str, Any]:
    """The refinement around the first criterion's best grid point
    (:func:`kernelselect.selection._policy.refine_best`): its record, with the point kept."""
    first = search.crits[0]
    idx = _search.best_index(surface.curves[first.name], first.direction)
    assert idx is not None                    # check_selects found a finite value
    t0 = time.perf_counter()
    g, a, _, info = _policy.refine_best(search, approx, state, float(surface.gammas[idx[0]]),
                                        float(surface.alphas[idx[1]]),
                                        float(surface.curves[first.name][idx]))
    info["seconds"] = time.perf_counter() - t0
    return dict(info, gamma=float(g), alpha=float(a))


# --------------------------------------------------------------------------- report


def _report(plan: _Plan, out: _Outcome) -> SelectionResult:
    """The :class:`SelectionResult` of a plan and what its run found."""
    details = dict(plan.details)
    details["extensions"] = out.extensions
    details["approximation"] = out.label
    details["approximation_params"] = out.approximation_params
    if out.auto is not None:
        details["auto"] = out.auto
    details["edges"] = out.edges
    details["operators"] = out.surface.ops
    surface = out.surface
    result = SelectionResult(surface.gammas, surface.alphas, surface.curves,
                             {c.name: c.direction for c in plan.crits}, surface.timings,
                             details, out.searched)
    if out.refined is not None:
        result.best_gamma, result.best_alpha = out.refined["gamma"], out.refined["alpha"]
        result.details["refine"] = out.refined
    result.details["n_operator_builds"] = out.n_builds
    if plan.checkpoint is not None:       # evaluations read back instead of built
        result.details["operators_read"] = plan.checkpoint.reused
    return result


def _select_ard(X: Any, y: Any, *, criterion: Any, approximation: Any, random_state: Any,
                workers: Any, standardize: Any, task: Any,
                isotropic: Callable[..., SelectionResult] | None = None,
                rows: _dask.RowSource | None = None, targets: Targets | None = None,
                **settings: Any) -> SelectionResult:
    """kernel="ard": the isotropic selection with the same settings, then the gradient
    search of one γ per feature from its choice (:mod:`kernelselect.selection._ard_select`).

    ``isotropic`` (default :func:`select_kernel`) makes the isotropic selection; ``rows``
    says where rows an estimator's door checked live (None: X and y are checked here);
    ``targets`` y as that door prepared it."""
    isotropic = select_kernel if isotropic is None else isotropic
    objective, engine = ard_options(criterion, approximation)
    rng = check_random_state(random_state)
    start = start_approximation(approximation, criterion, X, y, task, engine,
                                exact_max_n=_policy.EXACT_MAX_N,
                                first_level=_policy.START_LANDMARKS, targets=targets)
    iso = isotropic(X, y, kernel="gaussian", criterion=criterion,
                        approximation=start, random_state=rng, workers=workers,
                        standardize=standardize, task=task, **settings)
    lazy = (_dask.is_dask_array(X) or _dask.is_dask_array(y)) if rows is None else rows.lazy
    if lazy:                        # standardised lazily by the search itself
        return select_ard(X, y, isotropic=iso, task=task, random_state=rng, workers=workers,
                          objective=objective, engine=engine, standardize=standardize)
    Xc = check_matrix(X, "X", dtype=np.float64, min_rows=3) if rows is None else X
    result = select_ard(standardize_columns(Xc) if standardize else Xc, y, isotropic=iso,
                        feature_variance=None if standardize else Xc.var(axis=0), task=task,
                        random_state=rng, workers=workers, objective=objective, engine=engine,
                        targets=targets)
    if start is approximation or result.details["ard"]["kept"]:
        return result
    # the guard kept the isotropic kernel, but the start was the coarse first level only:
    # the isotropic choice is the whole isotropic selection's, as kernel="gaussian" makes it
    # (the same seed when random_state is one)
    full = isotropic(X, y, kernel="gaussian", criterion=criterion,
                         approximation=approximation,
                         random_state=rng if isinstance(random_state, np.random.Generator)
                         else random_state, workers=workers, standardize=standardize,
                         task=task, **settings)
    return keep_isotropic(result, full)


def standardize_columns(X: Any) -> Any:
    """Each column centred and scaled to unit variance, at any magnitude.

    Columns are first divided by a power of two near their largest magnitude (exact),
    so that the mean and the variance are computed on numbers of order one: data of
    size 10¹⁶⁰ or 10⁻¹⁶⁰ standardise as data of size 1 do (the variance of X·10¹⁶⁰
    itself overflows). The statistics are the corrected two-pass ones (Chan, Golub &
    LeVeque, The American Statistician 37, 1983): μ from a first pass, then the mean
    c and the mean square s² of D = X − μ, so that x ↦ (x − μ − c)/√(s² − c²) keeps
    its digits when the mean is large against the spread. Constant columns become 0.

    A row-chunked Dask array is standardised lazily to the same numbers (to rounding:
    only the order of the sums differs), from two passes over its chunks (a third for
    data beyond 2^±500); with a non-finite entry it comes back unscaled, for the row
    passes to name the row.
    """
    scaling = ColumnScaling.fit(X, _dask.compute if _dask.is_dask_array(X) else None)
    return X if scaling is None else scaling.transform(X)


def _check_alpha_range(alphas: np.ndarray, n: int) -> np.ndarray:
    """Refuse ridges so large that K + αI rounds to αI for every kernel.

    The kernel's eigenvalues lie in [0, n] (κ ≤ 1), so for α > 2⁵²·n every λ + α
    rounds to α in float64: the ridge forms are those of αI, every kernel scores the
    same and a selection would be arbitrary. Small α needs no bound (the criteria are
    evaluated through α/(λ + α), see :mod:`kernelselect.criteria`).
    """
    limit = float(n) * 2.0 ** 52
    if np.any(alphas > limit):
        raise ValueError(
            f"alphas must be at most 2^52·n = {limit:.3g} for n = {n} samples, got "
            f"{float(alphas.max())!r}: the kernel's eigenvalues lie in [0, n], so K + αI "
            "rounds to αI and every kernel scores the same. Use smaller alphas."
        )
    return alphas

