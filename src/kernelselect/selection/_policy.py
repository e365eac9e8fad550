"""How :func:`kernelselect.select_kernel` searches when left to its defaults.

The thresholds and decisions are set in :mod:`kernelselect._policy`, each with the
study that set it (their old names here are the same objects); this module applies
them: the first level, the nested levels, the grid edges and the refinement. The
rules, each with its reason:

* **Default criterion** (:func:`default_criterion`): on the exact kernel matrix with
  n ≤ :data:`KFOLD_MAX_N`, 5-fold cross-validation of the LSSVM in closed form
  (``ekfold``, ``ekfold_multiclass``; one factorisation per γ, then one n/5 × n/5
  solve per fold and α), with the same losses as below. Leave-one-out's choice has
  the larger variance (its n estimates are strongly correlated; Arlot & Celisse,
  Statistics Surveys 4, 2010, §8): on small regression sets it picked
  near-interpolating ridges that 5-fold CV avoids (servo: +0.04 NMSE behind CV with
  leave-one-out, −0.02 with 5-fold; docs/defaults.md).
  Beyond n = 400, the closed-form leave-one-out error of the LSSVM, which every
  stand-in computes in O(n·rank) per α (a fold's block would be an n/5 × n/5 array)
  and whose variance falls with n. Leave-one-out estimates the test error itself (it
  is n-fold cross-validation, computed exactly from one factorisation), so it ranks
  kernels by what the user is after. Binary labels (±1) and real targets: the mean
  squared held-out residual (PRESS), ``loss="squared"`` — smooth in (γ, α), where the
  0-1 error is a step function whose many ties and plateaus let a poor kernel win by
  one point (measured on 28 binary sets against 5-fold CV: the defaults +0.13 pp, the
  0-1 LOO error −0.79 pp with one set 18 points behind). C ≥ 3 classes:
  the one-vs-rest forms (argmax of the held-out decisions) with the PRESS tie-break,
  ``loss="hybrid"``. Each name has one loss (``eloo`` and ``ekfold`` the squared
  loss), so the names compute what the defaults compute. Numbers in docs/defaults.md.
* **α path** (:func:`alpha_path`): α = n·10^k, k = −6, −5.5, …, 0 (13 values). A
  Gaussian or Laplacian kernel has κ(x, x) = 1, so tr K = n and the eigenvalues of K
  sum to n; α/n is the ridge relative to the kernel's scale (the per-sample ridge μ of
  the risk (1/n)Σ(f − y)² + μ‖f‖²). Six decades of μ span near-interpolation
  (μ = 10⁻⁶) to a ridge as large as the whole spectrum's mean (μ = 1). Every
  spectral operator evaluates an α path from one factorisation per γ.
* **γ grid**: γ₀·2^k, k = −7…7, around the median heuristic γ₀
  (:func:`kernelselect.selection.default_gammas`).
* **Grid edges** (:func:`extend_edges`): when the best point of an automatic grid lies
  on its first or last γ (or α), ``EXTEND_STEPS`` more values are added beyond that
  edge — γ by factors of 2, α by half-decades — at most ``MAX_EXTENSIONS`` times per
  axis; a :class:`GridEdgeWarning` says when the best point is still on an edge.
* **approximation="auto"** (:func:`auto_start`, :func:`auto_levels`): the exact kernel
  matrix when n ≤ ``EXACT_MAX_N``; beyond, Nyström levels with nested uniform landmarks
  (one random permutation; level m uses its first m rows, so each level refines the
  one before with common random numbers). The first level, m = ``START_LANDMARKS``,
  evaluates the whole grid; each next level doubles m and evaluates the γ within
  ``WINDOW`` step of the previous best point (every α), walking one γ further while
  its best γ lies on an inner edge, so that every level brackets its own minimum
  (:func:`bracket_gamma`). The search stops at the first level that is *settled*:

  - its best (γ, α) lies within ``STABLE_STEPS`` grid step of the previous level's on
    both axes — a move the grid cannot resolve; and
  - the stand-in has enough landmarks for the model chosen: the effective dimension
    d = Σ λᵢ/(λᵢ + α) of the level's operator at its best point (the number of
    directions the ridge leaves unpenalised) is at most ``DEFF_FRACTION``·m. A Nyström
    model with m ≳ d landmarks predicts as well as the exact one (Bach, COLT 2013;
    Rudi, Camoriano & Rosasco, NeurIPS 2015); when d approaches m the ridge asks for
    more directions than the stand-in holds and its criterion is biased towards
    wide kernels and large ridges.

  A level that would exceed n/2 landmarks is replaced by the exact window (at that
  size a Nyström level costs as much as the exact matrix: 1.46 s per γ with 800
  landmarks against 1.19 s exact at n = 1000). A last Nyström level of min(n/2,
  ``MAX_LANDMARKS``) landmarks in its place (``LAST_LEVEL = "half"``) takes 1.1–6×
  less time on the sets that reach the window but chooses larger ridges (the bias the
  effective-dimension check guards against): on the defaults study's training sets
  with 400 < n ≤ 1000 (split 0), +0.0084 NMSE on the four regression sets that reach
  the window (parkinsons +0.027); with n up to 2000, −0.74 pp (multi-class) and
  +0.010 NMSE on those that reach it (the repository's speed_exact_region study). The
  exact window stays. The levels stop at ``MAX_LANDMARKS`` whether settled or not:
  a level costs about 2nm² per γ, and on
  cadata at n = 10⁴ a level of 1600 landmarks took 33 s per γ against 6.7 s at 800
  (load 6, one thread), four times the whole search below it, for a choice that
  the 800-level had already made.

  **Coarse levels on a subsample** (:func:`kernelselect._policy.coarse_rows`): beyond
  2·``SUBSAMPLE_ROWS`` rows the first grid and the levels up to ``MAX_LANDMARKS``/2
  landmarks run on ``SUBSAMPLE_ROWS`` rows drawn by the same permutation (the first
  rows of it, so that level m has the same landmarks as on all rows), with the α path
  r·10^k; their choice moves to all rows as γ and the exponent k of α = n·10^k, and the
  levels go on there: with the same landmarks where the subsample settled (the first
  all-rows level confirms it), with twice them where it did not. The criteria are
  means over rows, so the subsample ranks the coarse grid as all rows do to within
  its standard error, and the decision is made on every row. The subsample decides
  its grid extensions at its own α/n, which is larger than all rows' optimum (at 10⁶
  rows the subsample's choice stopped on the α path's lower edge where all rows chose
  α/n three times smaller); so the all-rows levels score the carried α path widened on
  each side by the extensions' reach (:func:`widened_alphas`: one more criterion value
  per α on an operator, where growing a level at an α edge rebuilds its γ window), and
  the last of them still grows past an edge of the automatic grids its best point lies
  on, as the first grid does. Dask input gathers the subsample (r × d values) and
  streams only the levels on all rows.

  Evidence (docs/defaults.md, the sets of the defaults study with
  n > 400, against 5-fold CV): mean Δ +0.13 pp (binary), −0.01 pp (multi-class),
  +0.0022 NMSE (regression), the exact window on 25 of 90 training sets. Without the
  effective-dimension check the multi-class and regression means fell to −0.11 pp and
  +0.0031; the previous rule (200 landmarks on the whole grid, exact agreement, ±2
  windows) scored +0.15, +0.05 and +0.0028 at twice the time, with the exact window on
  64 sets; four landmarks per degree of freedom scored +0.13, +0.08 and +0.0008 at 3.5
  times the time.
* **Dask input** follows the same rules on the same landmarks, grid and stop rule: the
  levels stream over the chunks (the landmarks are gathered by index), so the choice is
  the one made in memory for the same data and seed. Below :data:`GATHER_BELOW` rows
  (4·``MAX_LANDMARKS``), where the rules may use the exact kernel matrix (the first
  level when n ≤ ``EXACT_MAX_N``, the exact window when a level would exceed n/2
  landmarks), X is gathered into memory instead (it is then at most 3200 rows; the
  memory guard checks its size) and the in-memory path runs unchanged.
* **Refinement** (:func:`refine_best`, ``refine=True``): a local search in
  (log γ, log α) within one grid step of the best point on the same operator recipe
  (same landmarks), kept only when it improves the criterion.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .._policy import (ALPHA_EXPONENTS, ALPHA_SELECTING, DEFF_FRACTION, EXACT_MAX_N,
                       EXTEND_STEPS, FALLBACK_CRITERIA, GATHER_BELOW, KFOLD_MAX_N,
                       LAST_LEVEL, MAX_EXTENSIONS, MAX_LANDMARKS, STABLE_STEPS,
                       START_LANDMARKS, WINDOW, alpha_path, default_criterion)
from .. import _policy as _rules
from ._result import SearchLevel
from ._search import Search, Surface, best_index
from ..utils._warnings import warn_user
from ..operators.dense import Exact
from ..operators.nystrom import Nystroem

if TYPE_CHECKING:
    from ..operators import Approximation

__all__ = ["GridEdgeWarning", "default_criterion", "alpha_path", "ALPHA_EXPONENTS",
           "START_LANDMARKS", "MAX_LANDMARKS", "GATHER_BELOW", "WINDOW", "EXTEND_STEPS",
           "MAX_EXTENSIONS"]

class GridEdgeWarning(UserWarning):
    """The selected γ or α lies on the edge of the grid that was searched.

    The best value may lie beyond it: extend the grid in the direction named."""


# --------------------------------------------------------------------------- grid edges


def _edges(index: tuple[int, ...], shape: tuple[int, ...], alpha_axis: bool) -> list[str]:
    """Which edges the best index lies on: subset of {"gamma_low", "gamma_high",
    "alpha_low", "alpha_high"} (an axis of length 1 has no edge)."""
    i, j = index
    out = []
    if shape[0] > 1 and i == 0:
        out.append("gamma_low")
    if shape[0] > 1 and i == shape[0] - 1:
        out.append("gamma_high")
    if alpha_axis and shape[1] > 1 and j == 0:
        out.append("alpha_low")
    if alpha_axis and shape[1] > 1 and j == shape[1] - 1:
        out.append("alpha_high")
    return out


#: the grids' steps beyond an edge: γ by factors of 2, α by half-decades
_GAMMA_RATIO = 2.0
_ALPHA_RATIO = 10.0 ** 0.5


def _beyond(edge: float, ratio: float, steps: int, before: bool) -> np.ndarray:
    """``steps`` values past ``edge`` by factors of ``ratio``, in increasing order:
    below it (``before``) or above it."""
    k = np.arange(1, steps + 1)
    return edge * (ratio ** (-k[::-1]) if before else ratio ** k)


def extend_edges(search: Search, approx: Approximation, state: Any, surface: Surface,
                 extend_gamma: bool, extend_alpha: bool) -> list[dict[str, Any]]:
    """Grow ``surface`` beyond the edge its best point lies on (see the module
    docstring); returns the list of extensions made."""
    crit = search.crits[0]
    done: list[dict[str, Any]] = []
    counts = {"gamma": 0, "alpha": 0}
    while True:
        idx = best_index(surface.curves[crit.name], crit.direction)
        if idx is None:
            return done
        edges = _edges(idx, surface.curves[crit.name].shape, crit.alpha_dependent)
        step = None
        for edge in edges:
            axis = edge.split("_")[0]
            allowed = extend_gamma if axis == "gamma" else extend_alpha
            if allowed and counts[axis] < _rules.MAX_EXTENSIONS:
                step = edge
                break
        if step is None:
            return done
        axis, side = step.split("_")
        counts[axis] += 1
        before = side == "low"
        if axis == "gamma":
            new = _beyond(surface.gammas[0] if before else surface.gammas[-1], _GAMMA_RATIO,
                          _rules.EXTEND_STEPS, before)
            curves, timings, ops = search.evaluate(approx, state, new, surface.alphas)
            surface.add_gammas(new, curves, timings, ops, before)
        else:
            new = _beyond(surface.alphas[0] if before else surface.alphas[-1], _ALPHA_RATIO,
                          _rules.EXTEND_STEPS, before)
            rows = np.arange(max(idx[0] - _rules.WINDOW, 0), min(idx[0] + _rules.WINDOW + 1,
                                                           surface.gammas.size))
            curves, timings, _ = search.evaluate(approx, state, surface.gammas[rows], new)
            surface.add_alphas(new, rows, curves, timings, before)
        done.append({"edge": step, "added": [float(v) for v in new]})


def widened_alphas(alphas: np.ndarray) -> np.ndarray:
    """``alphas`` grown on both sides by the half-decades the edge extensions of
    :func:`extend_edges` could add (:data:`EXTEND_STEPS` × :data:`MAX_EXTENSIONS`).

    The all-rows levels after a subsample score this path: the subsample decided its
    extensions at its own α/n, larger than all rows' best, and widening the path costs
    one more criterion value per α on each operator, where an extension at the last
    level rebuilds the operators of its γ window."""
    reach = _rules.EXTEND_STEPS * _rules.MAX_EXTENSIONS
    return np.concatenate([_beyond(alphas[0], _ALPHA_RATIO, reach, True), alphas,
                           _beyond(alphas[-1], _ALPHA_RATIO, reach, False)])


def warn_edges(search: Search, surface: Surface, warn_gamma: bool, warn_alpha: bool) -> list[str]:
    """The edges the best point lies on; a :class:`GridEdgeWarning` for those of the
    automatic axes (``warn_gamma`` / ``warn_alpha``: grids the caller did not give)."""
    crit = search.crits[0]
    idx = best_index(surface.curves[crit.name], crit.direction)
    if idx is None:
        return []
    edges = _edges(idx, surface.curves[crit.name].shape, crit.alpha_dependent)
    loud = [e for e in edges if (warn_gamma if e.startswith("gamma") else warn_alpha)]
    if loud:
        g, a = surface.gammas[idx[0]], surface.alphas[idx[1]]
        warn_user(
            f"{crit.name} is best on the edge of the extended grid ({', '.join(loud)}: "
            f"gamma={g:.4g}, alpha={a:.4g}); the best kernel may lie beyond it. Pass a wider "
            "gammas= / alphas= grid.", GridEdgeWarning)
    return edges


# --------------------------------------------------------------------------- auto


def auto_start(n: int, criteria_need_spectral: bool) -> tuple[Approximation | None, str]:
    """(approximation, reason) of the first level of ``approximation="auto"``
    (:func:`kernelselect._policy.selection_start`); None: the nested Nyström levels."""
    exact, reason = _rules.selection_start(n, criteria_need_spectral)
    return (Exact() if exact else None), reason


def nested_nystroem(perm: np.ndarray, m: int) -> Nystroem:
    return Nystroem(n_landmarks=None, landmarks=np.sort(perm[:m]))


def auto_levels(search: Search, surface: Surface, perm: np.ndarray, first_state_m: int,
                start: tuple[np.ndarray, np.ndarray, tuple[float, float]] | None = None,
                top: int = MAX_LANDMARKS
                ) -> tuple[Surface, Approximation | None, Any, list[dict[str, Any]],
                           list[SearchLevel]]:
    """Double the landmarks around the best point until the choice is settled
    (module docstring). Returns (surface of the last level, its approximation, its
    state, levels info, the levels searched). ``start``: (γ grid, α path, best point)
    to climb from instead of ``surface``'s (the coarse levels' choice, carried to all
    rows); the first level is then compared with that point. ``top``: the most
    landmarks a level may have here."""
    crit = search.crits[0]
    n = search.X.shape[0]
    levels: list[dict[str, Any]] = []
    searched: list[SearchLevel] = []
    m = first_state_m
    if start is None:
        prev = best_index(surface.curves[crit.name], crit.direction)
        if prev is None:
            return surface, None, None, levels, searched
        prev_point = (surface.gammas[prev[0]], surface.alphas[prev[1]])
        grid, alphas = surface.gammas, surface.alphas
    else:
        grid, alphas, prev_point = start
    current = surface
    approx: Approximation | None = None
    state: Any = None
    last = False
    while True:
        kind, m_next, last, why = _rules.next_level(m, n, top)
        if kind == "stop":
            levels.append({"stopped": why})
            return current, approx, state, levels, searched
        if kind == "exact":
            approx, label = Exact(), "exact"
        else:
            approx, label = nested_nystroem(perm, m_next), f"nystrom(m={m_next})"
        label += search.rows_label
        t0 = time.perf_counter()
        state = search.prepare(approx)
        # a Nyström level keeps its spectra: the effective dimension below reads them
        search.spectra = None if kind == "exact" else {}
        level = bracket_gamma(search, approx, state, grid, alphas, prev_point[0])
        spectra, search.spectra = search.spectra, None
        idx = best_index(level.curves[crit.name], crit.direction)
        info: dict[str, Any] = {"approximation": label, "gammas": level.gammas.tolist()}
        current = level
        searched.append(level.level(label, search.subsample))
        if idx is None:
            levels.append(dict(info, stable=False, seconds=time.perf_counter() - t0))
            return current, approx, state, levels, searched
        point = (level.gammas[idx[0]], alphas[idx[1]])
        stable = _within_steps(point, prev_point, _rules.STABLE_STEPS)
        info.update(best_gamma=float(point[0]), best_alpha=float(point[1]),
                    value=float(level.curves[crit.name][idx]), agrees=bool(stable))
        if stable and spectra is not None and _rules.DEFF_FRACTION is not None:
            d_eff = degrees_of_freedom(spectra[float(point[0])], point[1])
            info["effective_dimension"] = d_eff
            stable = stable and _rules.level_settled(d_eff, m_next)
        info.update(stable=bool(stable), seconds=time.perf_counter() - t0)
        levels.append(info)
        if stable or last or kind == "exact":
            return current, approx, state, levels, searched
        prev_point = point
        m = m_next


def bracket_gamma(search: Search, approx: Approximation, state: Any, grid: np.ndarray,
                  alphas: np.ndarray, centre: float) -> Surface:
    """The criterion on ``grid``'s γ within ``WINDOW`` steps of ``centre`` (every α),
    extended one γ at a time past an inner edge of the window while the best point
    lies on it, so that the returned surface brackets its best γ (or reaches the end
    of the grid)."""
    crit = search.crits[0]
    gi = int(np.argmin(np.abs(np.log(grid) - np.log(centre))))
    lo, hi = max(gi - _rules.WINDOW, 0), min(gi + _rules.WINDOW, grid.size - 1)
    curves, timings, ops = search.evaluate(approx, state, grid[lo:hi + 1], alphas)
    level = Surface(grid[lo:hi + 1], alphas, curves, timings, ops)
    while True:
        idx = best_index(level.curves[crit.name], crit.direction)
        if idx is None:
            return level
        if idx[0] == 0 and lo > 0:
            lo, before = lo - 1, True
        elif idx[0] == level.gammas.size - 1 and hi < grid.size - 1:
            hi, before = hi + 1, False
        else:
            return level
        new = grid[lo:lo + 1] if before else grid[hi:hi + 1]
        curves, timings, ops = search.evaluate(approx, state, new, alphas)
        level.add_gammas(new, curves, timings, ops, before)


def _within_steps(point: tuple[float, float], prev: tuple[float, float], steps: int) -> bool:
    """Whether two (γ, α) points lie within ``steps`` grid steps of each other on
    both axes (γ steps are factors of 2, α steps half-decades)."""
    dg = abs(np.log2(point[0] / prev[0]))
    da = abs(np.log10(point[1] / prev[1])) * 2.0
    return bool(dg <= steps + 1e-6 and da <= steps + 1e-6)


def degrees_of_freedom(eigenvalues: np.ndarray, alpha: float) -> float:
    """d_eff = Σ λ/(λ + α): the number of directions the ridge α leaves effectively
    unpenalised in an operator of these eigenvalues."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    return float(np.sum(lam / (lam + alpha)))


def effective_dimension(approx: Approximation, state: Any, search: Search, gamma: float,
                        alpha: float) -> float:
    """:func:`degrees_of_freedom` of the operator ``approx`` builds at γ (one build;
    the levels of :func:`auto_levels` read the spectra their search kept instead)."""
    op = approx.build(search.X, search.y_build, float(gamma), kernel=search.kernel,
                      state=state, workers=search.workers)
    search.n_builds += 1
    return degrees_of_freedom(op.eigenvalues, alpha)


# --------------------------------------------------------------------------- refinement


def refine_best(search: Search, approx: Approximation, state: Any, gamma: float, alpha: float,
                value: float, step_gamma: float = 2.0, step_alpha: float = 10.0 ** 0.5,
                max_builds: int = 8) -> tuple[float, float, float, dict[str, Any]]:
    """Local search in (log γ, log α) within one grid step of (gamma, alpha).

    For a trial γ, one operator gives the criterion on a fine α path (9 values within
    one α step: the α path is free per γ); γ moves by golden-section search on the
    best value over that path. Same recipe and state (common random numbers). Returns
    (gamma, alpha, value, info); the grid point is kept unless a strictly better one
    is found.
    """
    crit = search.crits[0]
    sign = 1.0 if crit.direction == "min" else -1.0
    fine = alpha * step_alpha ** np.linspace(-1.0, 1.0, 9)
    cache = {}

    def at(log_g: float) -> tuple[float, float, float]:
        key = round(float(log_g), 12)
        if key not in cache:
            g = float(np.exp(log_g))
            vals = search.first_criterion_at(approx, state, g, fine)
            vals = np.where(np.isfinite(vals), sign * vals, np.inf)
            j = int(np.argmin(vals))
            cache[key] = (float(vals[j]), g, float(fine[j]))
        return cache[key]

    lo, hi = np.log(gamma) - np.log(step_gamma), np.log(gamma) + np.log(step_gamma)
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    while len(cache) < max_builds:
        if at(c)[0] <= at(d)[0]:
            b, d = d, c
            c = b - ratio * (b - a)
        else:
            a, c = c, d
            d = a + ratio * (b - a)
    cand = min(list(cache.values()) + [at(np.log(gamma))], key=lambda t: t[0])
    best_val = sign * cand[0]
    info = {"evaluations": len(cache), "grid_value": float(value)}
    if sign * best_val < sign * value:
        info.update(improved=True, value=float(best_val))
        return cand[1], cand[2], best_val, info
    info["improved"] = False
    return gamma, alpha, value, info
