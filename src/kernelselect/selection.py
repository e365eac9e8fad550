"""The selection driver: evaluate criteria over a (γ, α) grid and pick the best."""

import contextlib
import time

import numpy as np

from ._validation import (
    check_bool,
    check_kernel,
    check_matrix,
    check_random_state,
    check_vector,
    check_workers,
)
from ._progress import check_progress, progress_iter
from .criteria import check_compatible, encode_binary, evaluate_criterion, get_criterion
from .kernels import median_heuristic_gamma
from .operators import get_approximation

__all__ = ["select_kernel", "SelectionResult", "default_gammas"]

GRID_EXPONENTS = np.arange(-7, 8)


def default_gammas(X, kernel="gaussian", random_state=None):
    """The default γ grid: γ₀·2^k for k = −7, …, 7 (15 points).

    γ₀ is the median heuristic 1/median(‖x_i − x_j‖²) (Gaussian) or
    1/median(‖x_i − x_j‖₁) (Laplacian) over 5000 random pairs of points
    (:func:`kernelselect.kernels.median_heuristic_gamma`).
    """
    X = check_matrix(X, "X", min_rows=2)
    rng = check_random_state(random_state)
    g0 = median_heuristic_gamma(X, check_kernel(kernel), rng)
    return g0 * 2.0 ** GRID_EXPONENTS


def _check_grid(values, name):
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of positive numbers, got {values!r}.") from None
    arr = np.atleast_1d(arr)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of positive numbers, got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        bad = arr[~(np.isfinite(arr) & (arr > 0))][0]
        raise ValueError(f"{name} must all be finite and > 0; got {float(bad)!r}.")
    return arr


class SelectionResult:
    """Criterion curves over a (γ, α) grid and the kernel each criterion selects.

    Attributes
    ----------
    gammas : ndarray of shape (n_gammas,)
    alphas : ndarray of shape (n_alphas,)
    curves : dict of str → ndarray of shape (n_gammas, n_alphas)
        Criterion values; α-independent criteria repeat across the α axis.
    criteria : list of str
        Criterion names in the order asked; the first decides ``best_gamma``.
    directions : dict of str → {"min", "max"}
    best : dict of str → dict(gamma, alpha, value, index)
        The best grid point of each criterion (NaN values are skipped; ties go to
        the first γ, then the first α).
    best_gamma, best_alpha : float
        The choice of the first criterion.
    timings : ndarray of shape (n_gammas,)
        Seconds spent per γ (building the operator and every criterion).
    details : dict
        Kernel, approximation and its parameters, n, d, the median-heuristic γ₀
        when the grid was built from it, and per-γ operator facts (``operators``).
    """

    def __init__(self, gammas, alphas, curves, directions, timings, details):
        self.gammas = np.asarray(gammas, dtype=np.float64)
        self.alphas = np.asarray(alphas, dtype=np.float64)
        self.curves = dict(curves)
        self.criteria = list(curves)
        self.directions = dict(directions)
        self.timings = np.asarray(timings, dtype=np.float64)
        self.details = dict(details)
        self.best = {name: self._best(name) for name in self.criteria}
        first = self.best[self.criteria[0]]
        self.best_gamma = first["gamma"]
        self.best_alpha = first["alpha"]

    def _best(self, name):
        values = self.curves[name]
        finite = np.isfinite(values)
        if not finite.any():
            return {"gamma": float("nan"), "alpha": float("nan"), "value": float("nan"),
                    "index": None}
        fill = np.inf if self.directions[name] == "min" else -np.inf
        masked = np.where(finite, values, fill)
        flat = np.argmin(masked) if self.directions[name] == "min" else np.argmax(masked)
        i, j = np.unravel_index(flat, values.shape)
        return {"gamma": float(self.gammas[i]), "alpha": float(self.alphas[j]),
                "value": float(values[i, j]), "index": (int(i), int(j))}

    @property
    def total_time(self):
        """Seconds for the whole grid."""
        return float(self.timings.sum())

    def to_dict(self):
        """Plain Python types only (JSON-serialisable)."""
        def plain(v):
            if isinstance(v, np.ndarray):
                return v.tolist()
            if isinstance(v, np.generic):
                return v.item()
            if isinstance(v, dict):
                return {str(k): plain(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [plain(x) for x in v]
            return v

        return plain({
            "gammas": self.gammas, "alphas": self.alphas, "criteria": self.criteria,
            "curves": self.curves, "directions": self.directions, "best": self.best,
            "best_gamma": self.best_gamma, "best_alpha": self.best_alpha,
            "timings": self.timings, "details": self.details,
        })

    def to_frame(self):
        """A pandas DataFrame, one row per (γ, α), one column per criterion."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "SelectionResult.to_frame needs pandas; install it with `pip install pandas` "
                "(or use to_dict())."
            ) from None
        G, A = np.meshgrid(self.gammas, self.alphas, indexing="ij")
        data = {"gamma": G.ravel(), "alpha": A.ravel()}
        for name in self.criteria:
            data[name] = self.curves[name].ravel()
        return pd.DataFrame(data)

    def plot(self, axes=None, *, kind="curves", title=None, data_name=None):
        """Plot the criteria over the grid; returns the matplotlib Figure.

        The selected kernel (the first criterion's best) is a filled red diamond and
        each criterion's own best an open black circle; the legend says which is which.
        The value axes name the criterion and whether lower or higher is better.

        Parameters
        ----------
        axes : array of matplotlib Axes, optional
            One per criterion (two per criterion for ``kind="both"``: the curves first,
            then the heat maps). By default a new figure is made.
        kind : {"curves", "heatmap", "both"}, default="curves"
            ``"curves"``: each criterion against log₂ γ, one line per α.
            ``"heatmap"``: each criterion over the (log₂ γ, log₁₀ α) grid, the view
            of a joint (γ, α) selection; needs at least two alphas. ``"both"``: the
            curves above the heat maps.
        title : str, optional
            Figure title; by default the approximation, kernel and n from ``details``,
            preceded by ``data_name``. Pass ``""`` for none.
        data_name : str, optional
            Name of the data set, shown at the start of the default title.

        Returns
        -------
        matplotlib.figure.Figure
        """
        from ._plotting import plot_result

        return plot_result(self, axes, kind=kind, title=title, data_name=data_name)

    def __repr__(self):
        d = self.details
        head = (f"SelectionResult(kernel={d.get('kernel')!r}, approximation="
                f"{d.get('approximation')!r}, n={d.get('n')}, {self.gammas.size} gammas × "
                f"{self.alphas.size} alphas, {self.total_time:.3g} s)")
        rows = [f"  {'criterion':<12}{'dir':<5}{'best gamma':>12}{'best alpha':>12}{'value':>14}"]
        for name in self.criteria:
            b = self.best[name]
            rows.append(f"  {name:<12}{self.directions[name]:<5}{b['gamma']:>12.5g}"
                        f"{b['alpha']:>12.5g}{b['value']:>14.6g}")
        return "\n".join([head, *rows])


def _split_params(criteria, params):
    """Each keyword goes to every requested criterion that declares it."""
    per = {c.name: {} for c in criteria}
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


def select_kernel(X, y, *, kernel="gaussian", gammas=None, alphas=(1.0,), criterion="ree",
                  approximation="nystrom", random_state=None, workers=None, progress=False,
                  standardize=False, **criterion_params):
    """Evaluate kernel selection criteria over a grid of kernels and pick the best.

    For every γ, one operator (the kernel matrix or a stand-in for it) is built once
    and every requested criterion is evaluated on it for the whole α path.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training inputs, n ≥ 3. Distances are taken as given: scale the features
        first (or pass ``standardize=True``). A ``dask.array`` chunked by rows runs
        the streamed passes as a Dask graph on the active scheduler (Nyström with
        uniform landmarks, or RFF; docs/streaming.md); X is never gathered.
    y : array-like of shape (n_samples,)
        Targets. Exactly two distinct values mean a binary problem: they are encoded
        ±1 (the larger → +1) for every criterion. Otherwise y is a real target.
    kernel : {"gaussian", "laplacian"}, default="gaussian"
        exp(−γ‖x − x′‖²) or exp(−γ‖x − x′‖₁).
    gammas : array-like of positive floats or None
        Candidate γ. None: γ₀·2^k, k = −7, …, 7, around the median heuristic γ₀
        (:func:`default_gammas`).
    alphas : array-like of positive floats, default=(1.0,)
        Ridge values; the ridge is added to the kernel matrix, K + αI.
    criterion : str or list of str, default="ree"
        One of :func:`kernelselect.criteria.criterion_names` or a list of them; the
        first decides ``best_gamma`` / ``best_alpha``.
    approximation : str or Approximation, default="nystrom"
        "exact", "nystrom", "rff", "mcm", "random_mcm" (defaults) or an instance such
        as ``Nystroem(n_landmarks=500)``.
    random_state : int, Generator or None
        Seeds the γ-grid pairs and the approximation's random draws (drawn once and
        reused for every γ). A fixed seed gives the same result.
    workers : int or None
        Threads of the compiled kernels (None: OpenMP default; -1: all cores). When
        given, BLAS/LAPACK are limited to the same number of threads for the call.
    progress : bool or float, default=False
        Show progress over γ on stderr: a tqdm bar on a terminal when tqdm is
        installed, otherwise a line every 10 s. True: from the start; a number t:
        only once the call has run t seconds (nothing on shorter calls).
    standardize : bool, default=False
        Centre each feature and scale it to unit variance first
        (:func:`standardize_columns`, safe at any magnitude).
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

    Examples
    --------
    >>> import numpy as np, kernelselect
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 3)); y = np.sign(X[:, 0] + 0.1)
    >>> res = kernelselect.select_kernel(X, y, criterion=["ree", "kta"],
    ...                                  approximation="exact", random_state=0)
    >>> res.curves["ree"].shape
    (15, 1)
    """
    distributed = _is_dask(X) or _is_dask(y)
    if distributed:
        from . import _dask

        X, y, y_dask = _dask.check_dask_data(X, y)
    else:
        X = check_matrix(X, "X", dtype=np.float64 if np.asarray(X).dtype != np.float32
                         else None, min_rows=3)
    n = X.shape[0]
    y = check_vector(y, "y", n=n)
    kernel = check_kernel(kernel)
    standardize = check_bool(standardize, "standardize")
    workers_n = check_workers(workers) if workers is not None else None
    progress = check_progress(progress)

    names = [criterion] if isinstance(criterion, str) else list(criterion) \
        if isinstance(criterion, (list, tuple)) else [criterion]
    if not names:
        raise ValueError("criterion must name at least one criterion.")
    crits = []
    for name in names:
        c = get_criterion(name)
        if c.name not in [k.name for k in crits]:
            crits.append(c)
    params = _split_params(crits, criterion_params)

    approx = get_approximation(approximation)
    if distributed and not _dask.supports(approx):
        raise ValueError(
            f"approximation={getattr(approx, 'label', approx.name)!r} does not run on Dask "
            "arrays; use 'nystrom' (uniform landmarks) or 'rff', or pass numpy arrays.")
    needs = set()
    for c in crits:
        check_compatible(c, approx, params[c.name])
        needs.add(c.requirement(params[c.name]))
    approx = approx.configured(needs)

    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(
            f"y has a single value ({np.asarray(classes[0]).tolist()!r}) for all {n} samples; criterion "
            f"{crits[0].name!r} needs two classes or a varying target."
        )
    for c in crits:
        if c.labels == "binary":
            encode_binary(y, c.name)               # raises naming y and the criterion
    y_used = encode_binary(y)[0] if classes.size == 2 else y

    if standardize and distributed:
        X = _dask.standardize(X)
    elif standardize:
        X = standardize_columns(X)
    target_scale = 1.0
    if not distributed:
        y_used, params, target_scale = _rescale_target(y_used, params)

    rng = check_random_state(random_state)
    details = {"kernel": kernel, "n": n, "d": X.shape[1],
               "approximation": getattr(approx, "label", approx.name),
               "approximation_params": approx.get_params(),
               "criterion_params": {c.name: c.resolve_params(params[c.name]) for c in crits}}
    if target_scale != 1.0:
        details["target_scale"] = target_scale
    if gammas is None:
        with _dask.cluster_guard() if distributed else contextlib.nullcontext():
            g0 = median_heuristic_gamma(X, kernel, rng)     # reads only the sampled rows
        gammas = g0 * 2.0 ** GRID_EXPONENTS
        details["gamma0"] = g0
        details["gamma_rule"] = "median heuristic gamma0 * 2**k, k = -7..7"
    gammas = _check_grid(gammas, "gammas")
    alphas = _check_alpha_range(_check_grid(alphas, "alphas"), n)

    state = approx.prepare(X, y_used, kernel=kernel, random_state=rng, workers=workers_n)
    curves = {c.name: np.empty((gammas.size, alphas.size)) for c in crits}
    timings = np.empty(gammas.size)
    op_details = []
    ops = None
    if getattr(approx, "build_all", None) is not None:
        if distributed:
            rows = _dask.DaskRows(X, _dask.encoded_target(y_dask, classes))
        else:
            from .operators.streaming_lowrank import ArrayRows

            rows = ArrayRows(X, y_used, threads=workers_n)
        # every γ from shared row passes: progress is a heartbeat over the whole grid
        for _ in progress_iter(range(1), 1, progress, desc="kernel selection (all γ at once)",
                               unit="grid"):
            ops = _build_all(approx, rows, y_used, gammas, kernel, state)
            if ops is not None:
                _run_streaming(ops, y_used, alphas, crits, params, curves, timings, op_details)
    if ops is None:
        iterator = progress_iter(range(gammas.size), gammas.size, progress,
                                 desc="kernel selection", unit="γ")
        with _blas_threads(workers_n):
            _run_grid(iterator, approx, X, y_used, gammas, alphas, kernel, state, workers_n,
                      crits, params, curves, timings, op_details)
    details["operators"] = op_details
    directions = {c.name: c.direction for c in crits}
    return _finite_selection(SelectionResult(gammas, alphas, curves, directions, timings,
                                             details))


def standardize_columns(X):
    """Each column centred and scaled to unit variance, at any magnitude.

    Columns are first divided by a power of two near their largest magnitude (exact),
    so that the mean and the variance are computed on numbers of order one: data of
    size 10¹⁶⁰ or 10⁻¹⁶⁰ standardise as data of size 1 do (the variance of X·10¹⁶⁰
    itself overflows). Constant columns become 0.
    """
    X = np.asarray(X)
    peak = np.max(np.abs(X), axis=0)
    exponents = np.where(peak > 0, np.frexp(peak)[1], 0)
    Xs = np.ldexp(X.astype(np.float64, copy=False), -exponents[None, :])
    mu = Xs.mean(axis=0)
    sd = Xs.std(axis=0)
    return np.ascontiguousarray((Xs - mu) / np.where(sd > 0, sd, 1.0), dtype=X.dtype)


#: a target whose largest magnitude lies outside [2^-k, 2^k] is rescaled
TARGET_EXPONENT_LIMIT = 256


def _rescale_target(y, params):
    """(y / s, params with σ / s, s) for s = 2ᵉ when y's magnitude is extreme, else s = 1.

    The error criteria (ree, ipe, c1, gcv, eloo's squared loss) grow as y², so y of
    size 10¹⁵⁴ overflows them and 10⁻¹⁶⁰ underflows them; their minimiser does not
    depend on the scale of y, and kta, ckta and the error rate do not depend on it at
    all. Dividing by a power of two is exact; the curves are then those of y / s.
    """
    peak = float(np.max(np.abs(y))) if y.size else 0.0
    if peak == 0.0:
        return y, params, 1.0
    exponent = int(np.frexp(peak)[1])
    if abs(exponent) <= TARGET_EXPONENT_LIMIT:
        return y, params, 1.0
    scale = float(np.ldexp(1.0, exponent))
    scaled = {}
    for name, p in params.items():
        p = dict(p)
        if p.get("sigma") is not None:
            p["sigma"] = np.ldexp(float(p["sigma"]), -exponent)
        scaled[name] = p
    return np.ldexp(y, -exponent), scaled, scale


def _check_alpha_range(alphas, n):
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


def _finite_selection(result):
    """The result, or ``ValueError`` when a criterion has no finite value on the grid."""
    for name in result.criteria:
        if result.best[name]["index"] is not None:
            continue
        values = result.curves[name]
        kind = "NaN" if np.isnan(values).all() else "not finite"
        g, a = result.gammas, result.alphas
        raise ValueError(
            f"criterion {name!r} is {kind} at every grid point (γ in [{g.min():.3g}, "
            f"{g.max():.3g}], α in [{a.min():.3g}, {a.max():.3g}]), so it selects nothing. "
            "Likely causes: α far outside the kernel's eigenvalue range (0 … n), a γ grid "
            "where the kernel matrix is numerically constant or the identity, or a "
            "criterion undefined for these data (e.g. both classes with the same mean); "
            "change the grid or the criterion."
        )
    return result


def _blas_threads(workers):
    """BLAS/LAPACK limited to ``workers`` threads when the caller set ``workers``."""
    if workers is None:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return contextlib.nullcontext()
    return threadpool_limits(limits=workers, user_api="blas")


def _is_dask(obj):
    return type(obj).__module__.split(".")[0] == "dask"


def _build_all(approx, rows, y_used, gammas, kernel, state):
    """Operators for the whole γ grid from shared passes over ``rows``, when the
    approximation offers them (``build_all``); None otherwise."""
    build_all = getattr(approx, "build_all", None)
    if build_all is None:
        return None
    t0 = time.perf_counter()
    ops = build_all(rows, y_used, gammas, kernel=kernel, state=state)
    if ops is not None:
        for op in ops:
            op.build_time = (time.perf_counter() - t0) / len(ops)
    return ops


def _run_streaming(ops, y_used, alphas, crits, params, curves, timings, op_details):
    """Every criterion on every operator of a streamed grid; the row passes they need
    are shared (``evaluate_grid``) and their time is spread evenly over γ."""
    from .operators.streaming_lowrank import evaluate_grid

    by_name = {c.name: c for c in crits}
    spent = np.zeros(len(ops))

    def evaluate(i, op, name):
        t0 = time.perf_counter()
        try:
            curves[name][i] = evaluate_criterion(by_name[name], op, y_used, alphas,
                                                 **params[name])
        finally:
            spent[i] += time.perf_counter() - t0

    t0 = time.perf_counter()
    evaluate_grid(ops, list(by_name), evaluate)
    shared = (time.perf_counter() - t0 - spent.sum()) / len(ops)
    for i, op in enumerate(ops):
        timings[i] = op.build_time + shared + spent[i]
        op_details.append(dict(op.details, n_operator=op.n))


def _run_grid(iterator, approx, X, y_used, gammas, alphas, kernel, state, workers_n, crits,
              params, curves, timings, op_details):
    for i in iterator:
        t0 = time.perf_counter()
        op = approx.build(X, y_used, float(gammas[i]), kernel=kernel, state=state,
                          workers=workers_n)
        for c in crits:
            curves[c.name][i] = evaluate_criterion(c, op, y_used, alphas, **params[c.name])
        timings[i] = time.perf_counter() - t0
        op_details.append(dict(op.details, n_operator=op.n))
