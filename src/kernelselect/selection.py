"""The selection driver: evaluate criteria over a (γ, α) grid and pick the best."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ._validation import (
    as_array,
    refuse_sparse_or_masked,
    check_bool,
    check_grid,
    check_kernel,
    check_matrix,
    check_random_state,
)
from . import _dask, _policy, _search
from ._ard_select import (ArdSelectionResult, ard_options, auto_kernel, is_auto_kernel,
                          select_ard)
from ._progress import check_progress
from ._targets import multi_output_targets, prepare_targets, rescale_target, target_matrix
from ._typing import RandomState
from ._threads import blas_threads as _blas_threads
from ._threads import selection_workers as _selection_workers
from .criteria import Criterion, check_compatible, encode_binary, get_criterion
from .kernels import is_ard, median_heuristic_gamma
from .operators import Approximation, get_approximation
from .operators.dense import Exact
from .operators.nystrom import Nystroem
from .operators.random_mcm import RandomMCM
from .operators.rff import RFF
from ._result import SearchLevel, SelectionResult, _finite_selection
from ._scaling import ColumnScaling

__all__ = ["select_kernel", "SelectionResult", "ArdSelectionResult", "SearchLevel",
           "default_gammas"]

GRID_EXPONENTS = np.arange(-7, 8)


def default_gammas(X: npt.ArrayLike, kernel: str = "gaussian",
                   random_state: RandomState = None) -> np.ndarray:
    """The default γ grid: γ₀·2^k for k = −7, …, 7 (15 points).

    γ₀ is the median heuristic 1/median(‖x_i − x_j‖²) (Gaussian) or
    1/median(‖x_i − x_j‖₁) (Laplacian) over 5000 random pairs of points
    (:func:`kernelselect.kernels.median_heuristic_gamma`), drawn with
    ``random_state`` (None: a fixed seed, the same pairs as ``random_state=0``).
    """
    X = check_matrix(X, "X", min_rows=2)
    g0 = median_heuristic_gamma(X, check_kernel(kernel), random_state)
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


def _streams_on_dask(approx: Approximation) -> bool:
    """Whether ``approx`` streams on Dask input (γ-independent landmarks drawn by index,
    random features, the randomised MCM's row statistics, or the exact kernel's moments
    by pairs of chunks)."""
    if isinstance(approx, (RFF, RandomMCM)):
        return True
    if isinstance(approx, Exact):         # the dense method is refused by its build_all
        return approx.method in ("auto", "streaming")
    if isinstance(approx, Nystroem):
        return approx.sampler == "uniform"
    return False


def select_kernel(X: npt.ArrayLike, y: npt.ArrayLike, *, kernel: str = "gaussian",
                  gammas: npt.ArrayLike | None = None, alphas: npt.ArrayLike | None = None,
                  criterion: str | Sequence[str] = "auto",
                  approximation: str | Approximation = "auto",
                  random_state: RandomState = None, workers: int | None = None,
                  progress: bool | float = False, standardize: bool = True,
                  task: Literal["auto", "binary", "multiclass", "regression"] = "auto",
                  refine: bool = False, **criterion_params: Any) -> SelectionResult:
    # The typed signature users see; the body (below) validates and converts every
    # argument, reusing the names with their checked types.
    if is_auto_kernel(kernel):
        kernel, rule = auto_kernel(y, task)
        result = select_kernel(X, y, kernel=kernel, gammas=gammas, alphas=alphas,
                               criterion=criterion, approximation=approximation,
                               random_state=random_state, workers=workers, progress=progress,
                               standardize=standardize, task=task, refine=refine,
                               **criterion_params)
        result.details["kernel_rule"] = rule
        return result
    if is_ard(kernel):
        return _select_ard(X, y, gammas=gammas, alphas=alphas, criterion=criterion,
                           approximation=approximation, random_state=random_state,
                           workers=workers, progress=progress, standardize=standardize,
                           task=task, refine=refine, **criterion_params)
    return _select_kernel(X, y, kernel=kernel, gammas=gammas, alphas=alphas,
                          criterion=criterion, approximation=approximation,
                          random_state=random_state, workers=workers, progress=progress,
                          standardize=standardize, task=task, refine=refine,
                          **criterion_params)


def _select_kernel(X: Any, y: Any, *, kernel: Any = "gaussian", gammas: Any = None,
                   alphas: Any = None, criterion: Any = "auto", approximation: Any = "auto",
                   random_state: Any = None, workers: Any = None, progress: Any = False,
                   standardize: Any = True, task: Any = "auto", refine: Any = False,
                   **criterion_params: Any) -> SelectionResult:
    """Select the kernel (γ, α) of a kernel machine by a selection criterion.

    With nothing but X and y it selects as well as 5-fold cross-validation at a small
    fraction of its cost (docs/defaults.md): k-fold (small n)
    or leave-one-out error of the LSSVM in closed form over γ × α, on the exact kernel
    matrix or nested
    Nyström stand-ins that grow until the choice stops moving, with grids that extend
    past their edges. The rules are stated in :mod:`kernelselect._policy`; what was
    done is in ``result.details``.

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
        ``approximation="auto"`` below 3200 rows (``_policy.GATHER_BELOW``), where
        the policy may use the exact kernel matrix.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets: class labels of any type (numbers, strings) or a real target; what
        it is follows ``task``. Binary labels are encoded ±1 (the later class in
        sorted order → +1); multi-class labels become one-vs-rest ±1 columns for
        ``eloo_multiclass`` and the codes 0, …, C−1 for the other criteria. Criteria
        of a target matrix (``di``, ``kdi``) receive the unit-norm class indicator
        columns, or the real target as columns; a real target of several columns
        (n_samples, n_outputs) is accepted when every requested criterion takes one.
    kernel : {"gaussian", "laplacian", "ard", "auto"}, default="gaussian"
        exp(−γ‖x − x′‖²), exp(−γ‖x − x′‖₁), or exp(−Σ_k γ_k (x_k − x′_k)²) with one γ
        per feature: ``"ard"`` runs the isotropic selection, then a gradient search of
        (γ₁, …, γ_d, α) from its choice, kept only when it predicts better on nested
        folds (:mod:`kernelselect._ard_select`); the result is an
        :class:`~kernelselect._ard_select.ArdSelectionResult` whose ``best_gamma`` has
        shape (n_features,) and which offers ``relevances()``. ``"auto"``: ``"ard"``
        for a real target, ``"gaussian"`` for class labels (the evidence is in
        :func:`kernelselect._ard_select.auto_kernel`; ``details["kernel_rule"]``).
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
        OpenMP's default (:mod:`kernelselect._threads`).
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
        What y is; "auto" follows :func:`kernelselect._targets.detect_task` (two
        values → binary; whole-number codes 0…C−1 or 1…C → multiclass; other numbers
        → regression; non-numeric labels → classes).
    refine : bool, default=False
        After the grid, search (log γ, log α) continuously within one grid step of the
        best point on the same operator draws; kept only if the criterion improves.
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
        When the selected γ or α is on the edge of the grid searched (after any
        extension).

    Examples
    --------
    >>> import numpy as np, kernelselect
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 3)); y = np.sign(X[:, 0] + 0.1)
    >>> res = kernelselect.select_kernel(X, y, random_state=0)
    >>> res.criteria, res.details["approximation"]
    (['ekfold'], 'exact')
    """
    auto_criterion = isinstance(criterion, str) and criterion.strip().lower() == "auto"
    auto_approx = isinstance(approximation, str) and approximation.strip().lower() == "auto"
    distributed = _is_dask(X) or _is_dask(y)
    input_note = None
    if distributed:
        X, y, y_dask = _dask.check_dask_data(X, y)
        if auto_approx and X.shape[0] < _policy.GATHER_BELOW:   # the in-memory path, exactly
            input_note = (f"Dask array gathered into memory (n < {_policy.GATHER_BELOW}, "
                          "where approximation='auto' may use the exact kernel matrix)")
            X, distributed = _dask.gather(X, f"n < {_policy.GATHER_BELOW} rows"), False
        else:
            input_note = "Dask array, streamed by chunks"
    if not distributed:
        X = check_matrix(X, "X", min_rows=3)      # float32 stays float32, else float64
    n = X.shape[0]
    y_arr = as_array(refuse_sparse_or_masked(y, "y"), "y")   # masked entries, pd.NA refused
    if y_arr.ndim == 2 and y_arr.shape[1] == 1:
        y_arr = y_arr[:, 0]
    # several target columns: only for criteria that take a target matrix (checked below)
    multi_output = not distributed and y_arr.ndim == 2 and y_arr.shape[0] == n
    if (y_arr.ndim != 1 and not multi_output) or y_arr.shape[0] != n:
        raise ValueError(f"y has {y_arr.shape[0] if y_arr.ndim else 0} entries (shape "
                         f"{y_arr.shape}) but X has {n} rows; give one target per row.")
    if y_arr.dtype.kind in "iufb" and y_arr.size and np.all(y_arr == y_arr.flat[0]):
        first = criterion if isinstance(criterion, str) else list(criterion or ["?"])[0]
        raise ValueError(
            f"y has a single value ({y_arr.flat[0].item()!r}) for all {n} samples; criterion "
            f"{getattr(first, 'name', first)!r} needs two classes or a varying target.")
    targets = (multi_output_targets(y_arr, task) if multi_output
               else prepare_targets(y_arr, task))
    kernel = check_kernel(kernel)
    standardize = check_bool(standardize, "standardize")
    refine = check_bool(refine, "refine")
    workers_n = _selection_workers(workers, n)    # None: 1 thread for small n or busy cores
    progress = check_progress(progress)

    if auto_criterion:
        if auto_approx:
            start = _policy.auto_start(n, True)[0]
            blocks = start is not None and "blocks" in start.provides
        else:
            provides = get_approximation(approximation).provides
            blocks = "blocks" in provides
        name, defaults = _policy.default_criterion(targets.task, n, blocks,
                                                   None if auto_approx else provides)
        names = [name]
        criterion_params = {**defaults, **criterion_params}
    else:
        names = [criterion] if isinstance(criterion, str) else list(criterion) \
            if isinstance(criterion, (list, tuple)) else [criterion]
    if not names:
        raise ValueError("criterion must name at least one criterion.")
    crits: list[Criterion] = []
    for name in names:
        c = get_criterion(name)
        if c.name not in [k.name for k in crits]:
            crits.append(c)
    params = _split_params(crits, criterion_params)
    if multi_output and any(c.labels != "matrix" for c in crits):
        names_1d = ", ".join(repr(c.name) for c in crits if c.labels != "matrix")
        raise ValueError(f"y has shape {y_arr.shape}: one target per row is needed for "
                         f"criterion {names_1d} (several target columns are taken only by "
                         "criteria of a target matrix, such as 'di' and 'kdi').")
    targets_for = {}
    for c in crits:
        if c.labels == "matrix":
            targets_for[c.name] = target_matrix(targets)
        elif c.labels == "binary":
            encode_binary(targets.y, c.name)          # raises naming y and the criterion
            targets_for[c.name] = targets.y
        elif c.labels == "multiclass":
            if targets.task == "regression":
                raise ValueError(f"criterion {c.name!r} needs class labels; y is a real target "
                                 f"({targets.reason}). Pass task='multiclass' if y holds codes.")
            targets_for[c.name] = targets.Y if targets.Y is not None else np.stack(
                [-targets.y, targets.y], axis=1)
        else:
            targets_for[c.name] = targets.y

    spectral = any(c.requirement(params[c.name]) != "moments" for c in crits)
    approx: Approximation | None
    if auto_approx:
        approx, auto_reason = _policy.auto_start(n, spectral)
    else:
        approx, auto_reason = get_approximation(approximation), None
    if distributed and approx is not None and not _streams_on_dask(approx):
        raise ValueError(
            f"approximation={getattr(approx, 'label', approx.name)!r} does not run on Dask "
            "arrays; use 'nystrom' (uniform landmarks) or 'rff', or pass numpy arrays.")
    for c in crits:
        if approx is not None:
            check_compatible(c, approx, params[c.name])
    needs = {c.requirement(params[c.name]) for c in crits}
    if approx is not None:
        approx = approx.configured(needs)

    if standardize:     # user landmark points go through the same map as X
        scaling = ColumnScaling.fit(X, _dask.compute if distributed else None)
        if scaling is not None:
            X = scaling.transform(X)
            approx = approx.rescaled(scaling.transform) if approx is not None else None
    target_scale = 1.0
    if targets.task == "regression":
        targets.y, params, target_scale = rescale_target(targets.y, params)
        matrix = {c.name for c in crits if c.labels == "matrix"}
        targets_for = {name: (target_matrix(targets) if name in matrix else targets.y)
                       for name in targets_for}

    rng = check_random_state(random_state)
    details = {"kernel": kernel, "n": n, "d": X.shape[1], "task": targets.task,
               "task_reason": targets.reason, "standardize": bool(standardize),
               "criterion_params": {c.name: c.resolve_params(params[c.name]) for c in crits}}
    if input_note is not None:
        details["input"] = input_note
    if target_scale != 1.0:
        details["target_scale"] = target_scale
    if targets.classes is not None:
        details["classes"] = targets.classes.tolist()
    auto_gammas = gammas is None
    if auto_gammas:
        with _dask.cluster_guard() if distributed else contextlib.nullcontext():
            # reads only the sampled rows; random_state=None: a fixed pair sample (the
            # grid depends on X alone, as with the command line's default seed 0)
            g0 = median_heuristic_gamma(X, kernel, rng if random_state is not None else None)
        gammas = g0 * 2.0 ** GRID_EXPONENTS
        details["gamma0"] = g0
        details["gamma_rule"] = "median heuristic gamma0 * 2**k, k = -7..7"
    auto_alphas = alphas is None and crits[0].name in _policy.ALPHA_SELECTING
    if auto_alphas:
        alphas = _policy.alpha_path(n)
        details["alpha_rule"] = "n * 10**k, k = -6, -5.5, ..., 0 (relative to tr K = n)"
    elif alphas is None:
        alphas = (1.0,)
        details["alpha_rule"] = (f"alpha = 1: {crits[0].name} does not estimate the test error, "
                                 "so it cannot choose alpha")
    gammas = check_grid(gammas, "gammas")
    alphas = _check_alpha_range(check_grid(alphas, "alphas"), n)

    rows = None
    if distributed:
        rows = _dask.DaskRows(X, _dask.encoded_target(y_dask, targets.classes, targets.task,
                                                      target_scale))
    search = _search.Search(X, targets.y, targets_for, crits, params, kernel, workers_n, rng,
                            progress, rows=rows)
    with _blas_threads(workers_n), contextlib.closing(search.bar):
        perm = None
        if approx is None:                       # auto beyond the exact range: Nyström levels
            perm = rng.permutation(n)
            approx = _policy.nested_nystroem(perm, _policy.START_LANDMARKS).configured(needs)
        state = search.prepare(approx)
        curves, timings, ops = search.evaluate(approx, state, gammas, alphas)
        surface = _search.Surface(gammas, alphas, curves, timings, ops)
        details["extensions"] = _policy.extend_edges(search, approx, state, surface,
                                                     auto_gammas, auto_alphas)
        label = getattr(approx, "label", approx.name)
        if perm is not None:
            label = f"nystrom(m={_policy.START_LANDMARKS})"
        details["approximation"] = label
        details["approximation_params"] = approx.get_params()
        searched = [surface.level(label)]
        if auto_approx:
            auto: dict[str, Any] = {"reason": auto_reason, "levels": [{
                "approximation": label, "gammas": surface.gammas.tolist(),
                "seconds": float(surface.timings.sum())}]}
            if perm is not None:
                final, f_approx, f_state, levels, windows = _policy.auto_levels(
                    search, surface, perm, _policy.START_LANDMARKS)
                auto["levels"] += levels
                searched += windows
                if f_approx is not None:
                    surface, approx, state = final, f_approx, f_state
                    last = [lv for lv in levels if "approximation" in lv][-1]
                    details["approximation"] = last["approximation"]
                    details["approximation_params"] = {
                        k: (v.tolist() if isinstance(v, np.ndarray) else v)
                        for k, v in approx.get_params().items()}
            details["auto"] = auto
        details["edges"] = _policy.warn_edges(search, surface, auto_gammas, auto_alphas)
        details["operators"] = surface.ops
        directions = {c.name: c.direction for c in crits}
        result = _finite_selection(SelectionResult(surface.gammas, surface.alphas,
                                                   surface.curves, directions,
                                                   surface.timings, details, searched))
        if refine:
            first = result.best[result.criteria[0]]
            if first["index"] is not None:
                t0 = time.perf_counter()
                g, a, v, info = _policy.refine_best(search, approx, state, first["gamma"],
                                                    first["alpha"], first["value"])
                info["seconds"] = time.perf_counter() - t0
                result.best_gamma, result.best_alpha = float(g), float(a)
                result.details["refine"] = dict(info, gamma=float(g), alpha=float(a))
    result.details["n_operator_builds"] = search.n_builds
    return result


select_kernel.__doc__ = _select_kernel.__doc__


def _select_ard(X: Any, y: Any, *, criterion: Any, approximation: Any, random_state: Any,
                workers: Any, standardize: Any, task: Any, **settings: Any) -> SelectionResult:
    """kernel="ard": the isotropic selection with the same settings, then the gradient
    search of one γ per feature from its choice (:mod:`kernelselect._ard_select`)."""
    objective, engine = ard_options(criterion, approximation)
    rng = check_random_state(random_state)
    iso = _select_kernel(X, y, kernel="gaussian", criterion=criterion,
                         approximation=approximation, random_state=rng, workers=workers,
                         standardize=standardize, task=task, **settings)
    if _is_dask(X) or _is_dask(y):           # standardised lazily by the search itself
        return select_ard(X, y, isotropic=iso, task=task, random_state=rng, workers=workers,
                          objective=objective, engine=engine, standardize=standardize)
    X = check_matrix(X, "X", dtype=np.float64, min_rows=3)
    return select_ard(standardize_columns(X) if standardize else X, y, isotropic=iso,
                      feature_variance=None if standardize else X.var(axis=0), task=task,
                      random_state=rng, workers=workers, objective=objective, engine=engine)


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
    scaling = ColumnScaling.fit(X, _dask.compute if _is_dask(X) else None)
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


def _is_dask(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "dask"
