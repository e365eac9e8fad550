"""The result of a selection: criterion curves over the (γ, α) grid, each criterion's
best kernel, every level of the search, what was done (``details``) and views of it
(table, frame, plots)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from ._plotting import criterion_loss, plot_result

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["SelectionResult", "SearchLevel"]


@dataclass(frozen=True, repr=False)
class SearchLevel:
    """The grid one approximation evaluated during a selection.

    ``approximation="auto"`` beyond the exact range searches in levels: the coarse
    γ × α grid with a first Nyström stand-in, then windows of that grid around the
    best point with ever more landmarks (:mod:`kernelselect.selection._policy`). Every other
    selection is one level.

    Attributes
    ----------
    approximation : str
        The stand-in's label, e.g. ``"nystrom(m=200)"`` or ``"exact"``.
    n_landmarks : int or None
        Its landmarks (Nyström), None for the others.
    gammas : ndarray of shape (n_gammas,)
    alphas : ndarray of shape (n_alphas,)
    curves : dict of str → ndarray of shape (n_gammas, n_alphas)
        Criterion values; NaN where the point was not evaluated (an α extension
        evaluates only the γ next to the best one) or the criterion is undefined.
    timings : ndarray of shape (n_gammas,)
        Seconds spent per γ.
    n_rows : int or None
        The rows the level scored when they were a uniform subsample of X (the coarse
        levels at large n: their α are the subsample's, n_rows·α/n of all rows'), None
        for all rows.
    """

    approximation: str
    n_landmarks: int | None
    gammas: np.ndarray
    alphas: np.ndarray
    curves: Mapping[str, np.ndarray]
    timings: np.ndarray
    n_rows: int | None = None

    def __post_init__(self) -> None:
        gammas, alphas, curves, timings = _check_grid_values(
            self.gammas, self.alphas, self.curves, self.timings, "SearchLevel")
        object.__setattr__(self, "gammas", gammas)
        object.__setattr__(self, "alphas", alphas)
        object.__setattr__(self, "curves", curves)
        object.__setattr__(self, "timings", timings)
        if self.n_landmarks is not None:
            object.__setattr__(self, "n_landmarks", int(self.n_landmarks))

    def __repr__(self) -> str:
        return (f"SearchLevel({self.approximation!r}, {self.gammas.size} gammas × "
                f"{self.alphas.size} alphas, γ in [{self.gammas.min():.4g}, "
                f"{self.gammas.max():.4g}])")


class SelectionResult:
    """Criterion curves over a (γ, α) grid and the kernel each criterion selects.

    Attributes
    ----------
    gammas : ndarray of shape (n_gammas,)
        The γ of the grid the choice was read from: the whole grid of a one-level
        search, the last window of ``approximation="auto"``'s Nyström levels (every
        level is in ``levels``).
    alphas : ndarray of shape (n_alphas,)
    curves : dict of str → ndarray of shape (n_gammas, n_alphas)
        Criterion values on that grid; α-independent criteria repeat across the α axis.
    criteria : list of str
        Criterion names in the order asked; the first decides ``best_gamma``.
    directions : dict of str → {"min", "max"}
    best : dict of str → dict(gamma, alpha, value, index)
        The best grid point of each criterion (NaN values are skipped; ties go to
        the first γ, then the first α).
    best_gamma, best_alpha : float
        The choice of the first criterion.
    timings : ndarray of shape (n_gammas,)
        Seconds spent per γ (building the operator and every criterion) on that grid;
        :attr:`level_times` has every level's, :attr:`total_time` the whole selection's.
    levels : list of SearchLevel
        Everything that was searched, in order: the coarse grid first, then each
        window (the last one is ``gammas`` × ``alphas``). One level when the search
        had one.
    details : dict
        Kernel, approximation and its parameters, n, d, the median-heuristic γ₀
        when the grid was built from it, per-γ operator facts (``operators``), and
        each choice left to the automatic rules with its reason (``rules``).

    Raises
    ------
    ValueError, TypeError
        When the grids are not positive and finite, a curve's shape is not
        (n_gammas, n_alphas), a direction is not "min" or "max", or the timings do
        not have one entry per γ.
    """

    def __init__(self, gammas: npt.ArrayLike, alphas: npt.ArrayLike,
                 curves: Mapping[str, np.ndarray], directions: Mapping[str, str],
                 timings: npt.ArrayLike, details: Mapping[str, Any],
                 levels: Sequence[SearchLevel] | None = None) -> None:
        self.gammas, self.alphas, self.curves, self.timings = _check_grid_values(
            gammas, alphas, curves, timings, "SelectionResult")
        self.criteria = list(self.curves)
        if not isinstance(directions, Mapping):
            raise TypeError(f"SelectionResult: directions must map each criterion to 'min' or "
                            f"'max', got {type(directions).__name__}.")
        for name in self.criteria:
            if directions.get(name) not in ("min", "max"):
                raise ValueError(f"SelectionResult: directions[{name!r}] must be 'min' or "
                                 f"'max', got {directions.get(name)!r}.")
        self.directions = {name: str(directions[name]) for name in self.criteria}
        if not isinstance(details, Mapping):
            raise TypeError(f"SelectionResult: details must be a dict, got "
                            f"{type(details).__name__}.")
        self.details = dict(details)
        if levels is None:
            levels = [SearchLevel(str(self.details.get("approximation", "")),
                                  n_landmarks_of(self.details.get("operators")), self.gammas, self.alphas,
                                  self.curves, self.timings)]
        self.levels = list(levels)
        for level in self.levels:
            if not isinstance(level, SearchLevel) or set(level.curves) != set(self.criteria):
                raise ValueError("SelectionResult: levels must be SearchLevel records holding "
                                 f"the criteria {self.criteria}.")
        self.best = {name: self._best(name) for name in self.criteria}
        first = self.best[self.criteria[0]]
        self.best_gamma = first["gamma"]
        self.best_alpha = first["alpha"]

    def _best(self, name: str) -> dict[str, Any]:
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
    def kernel(self) -> str:
        """The kernel the selection ran on (``details["kernel"]``): ``"gaussian"`` or
        ``"laplacian"`` with a scalar :attr:`best_gamma`, ``"ard"`` with one γ per
        feature; with ``kernel="auto"`` the policy's choice, its reason in
        ``details["rules"]["kernel"]``. A result built without it: ``"gaussian"``."""
        return str(self.details.get("kernel", "gaussian"))

    @property
    def total_time(self) -> float:
        """Seconds for the whole selection: every level, extension and refinement, and
        for ``kernel="ard"`` the isotropic start and the per-feature search
        (``details["total_seconds"]``, measured by :func:`kernelselect.select_kernel`).
        A result built without it: the operator builds of every level
        (:attr:`level_times` summed)."""
        total = self.details.get("total_seconds")
        return float(total) if total is not None else float(self.level_times.sum())

    @property
    def level_times(self) -> np.ndarray:
        """Seconds spent building operators and evaluating criteria per level of
        ``levels`` (the sum of each level's ``timings``), shape (n_levels,)."""
        return np.array([float(lv.timings.sum()) for lv in self.levels])

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types only (JSON-serialisable): the fields above, with
        ``levels`` as a list of dicts (level, approximation, n_landmarks, n_rows,
        gammas, alphas, curves, timings)."""
        return _plain({
            "gammas": self.gammas, "alphas": self.alphas, "criteria": self.criteria,
            "curves": self.curves, "directions": self.directions, "best": self.best,
            "best_gamma": self.best_gamma, "best_alpha": self.best_alpha,
            "timings": self.timings,
            "levels": [{"level": i, "approximation": lv.approximation,
                        "n_landmarks": lv.n_landmarks, "n_rows": lv.n_rows,
                        "gammas": lv.gammas,
                        "alphas": lv.alphas, "curves": dict(lv.curves), "timings": lv.timings}
                       for i, lv in enumerate(self.levels)],
            "details": self.details,
        })

    def to_frame(self) -> Any:
        """A pandas DataFrame of every point searched: one row per (level, γ, α).

        Columns ``level`` (0 for the coarse grid, then one per window of the
        automatic levels; the last level is the grid the choice was read from),
        ``approximation``, ``n_landmarks`` (None off Nyström), ``n_rows`` (the
        subsample a coarse level scored, None for all rows; its α are the
        subsample's), ``gamma``, ``alpha``, then one column per criterion (NaN: not evaluated there, or undefined).
        ``frame.attrs`` holds each criterion's direction and the parameters it ran
        with (its loss, for the leave-one-out and k-fold errors).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "SelectionResult.to_frame needs pandas; install it with `pip install pandas` "
                "(or use to_dict())."
            ) from None
        frames = []
        for i, level in enumerate(self.levels):
            G, A = np.meshgrid(level.gammas, level.alphas, indexing="ij")
            data: dict[str, Any] = {"level": i, "approximation": level.approximation,
                                    "n_landmarks": level.n_landmarks,
                                    "n_rows": level.n_rows,
                                    "gamma": G.ravel(), "alpha": A.ravel()}
            for name in self.criteria:
                data[name] = level.curves[name].ravel()
            frames.append(pd.DataFrame(data))
        frame = pd.concat(frames, ignore_index=True)
        frame["n_landmarks"] = frame["n_landmarks"].astype("Int64")
        frame["n_rows"] = frame["n_rows"].astype("Int64")
        frame.attrs["directions"] = dict(self.directions)
        frame.attrs["criterion_params"] = _plain(self.details.get("criterion_params", {}))
        return frame

    def plot(self, axes: Any = None, *, kind: Literal["curves", "heatmap", "both"] = "curves",
             title: str | None = None, data_name: str | None = None) -> Figure:
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
        return plot_result(self, axes, kind=kind, title=title, data_name=data_name)

    def __repr__(self) -> str:
        d = self.details
        head = (f"SelectionResult(kernel={d.get('kernel')!r}, approximation="
                f"{d.get('approximation')!r}, n={d.get('n')}, {self.gammas.size} gammas × "
                f"{self.alphas.size} alphas, {self.total_time:.3g} s)")
        losses = {name: criterion_loss(self, name) for name in self.criteria}
        labels = {name: name if loss is None else f"{name} ({loss})"
                  for name, loss in losses.items()}
        w = max([12] + [len(t) + 2 for t in labels.values()])
        rows = [f"  {'criterion':<{w}}{'dir':<5}{'best gamma':>12}{'best alpha':>12}"
                f"{'value':>14}"]
        for name in self.criteria:
            b = self.best[name]
            rows.append(f"  {labels[name]:<{w}}{self.directions[name]:<5}{b['gamma']:>12.5g}"
                        f"{b['alpha']:>12.5g}{b['value']:>14.6g}")
        return "\n".join([head, *rows])


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def n_landmarks_of(ops: Any) -> int | None:
    """The landmarks of a level, from its operators' details (None off Nyström)."""
    if isinstance(ops, Sequence) and ops and isinstance(ops[0], Mapping):
        m = ops[0].get("n_landmarks")
        return int(m) if m is not None else None
    return None


def _check_grid_values(gammas: Any, alphas: Any, curves: Any, timings: Any, who: str
                       ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Grids positive and finite, one curve of shape (n_gammas, n_alphas) per criterion
    (NaN allowed), one timing ≥ 0 per γ."""
    grids = []
    for name, values in (("gammas", gammas), ("alphas", alphas)):
        try:
            arr = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{who}: {name} must be a 1-D array of positive numbers, got "
                            f"{values!r}.") from None
        if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr) & (arr > 0)):
            raise ValueError(f"{who}: {name} must be a non-empty 1-D array of finite values "
                             f"> 0, got {arr!r}.")
        grids.append(arr)
    shape = (grids[0].size, grids[1].size)
    if not isinstance(curves, Mapping) or not curves:
        raise TypeError(f"{who}: curves must be a non-empty dict of criterion name → array "
                        f"of shape {shape}.")
    checked = {}
    for name, values in curves.items():
        try:
            arr = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{who}: curves[{name!r}] must be an array of numbers.") from None
        if arr.shape != shape:
            raise ValueError(f"{who}: curves[{name!r}] has shape {arr.shape}; it must be "
                             f"(len(gammas), len(alphas)) = {shape}.")
        checked[str(name)] = arr
    t = np.asarray(timings, dtype=np.float64)
    if t.shape != (shape[0],) or np.any(t < 0):
        raise ValueError(f"{who}: timings must hold one time ≥ 0 per γ, shape "
                         f"({shape[0]},), got shape {t.shape}.")
    return grids[0], grids[1], checked, t


def check_selects(gammas: np.ndarray, alphas: np.ndarray, curves: Mapping[str, np.ndarray]
                  ) -> None:
    """``ValueError`` when a criterion has no finite value on the (γ, α) grid."""
    for name, values in curves.items():
        if np.isfinite(values).any():
            continue
        kind = "NaN" if np.isnan(values).all() else "not finite"
        g, a = gammas, alphas
        raise ValueError(
            f"criterion {name!r} is {kind} at every grid point (γ in [{g.min():.3g}, "
            f"{g.max():.3g}], α in [{a.min():.3g}, {a.max():.3g}]), so it selects nothing. "
            "Likely causes: α far outside the kernel's eigenvalue range (0 … n), a γ grid "
            "where the kernel matrix is numerically constant or the identity, or a "
            "criterion undefined for these data (e.g. both classes with the same mean); "
            "change the grid or the criterion."
        )
