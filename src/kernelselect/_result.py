"""The result of a selection: criterion curves over the (γ, α) grid, each criterion's
best kernel, what was done (``details``) and views of it (table, frame, plots)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from ._plotting import plot_result

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["SelectionResult"]


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

    def __init__(self, gammas: npt.ArrayLike, alphas: npt.ArrayLike,
                 curves: Mapping[str, np.ndarray], directions: Mapping[str, str],
                 timings: npt.ArrayLike, details: Mapping[str, Any]) -> None:
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
    def total_time(self) -> float:
        """Seconds for the whole grid."""
        return float(self.timings.sum())

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types only (JSON-serialisable)."""
        def plain(v: Any) -> Any:
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

    def to_frame(self) -> Any:
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
        rows = [f"  {'criterion':<12}{'dir':<5}{'best gamma':>12}{'best alpha':>12}{'value':>14}"]
        for name in self.criteria:
            b = self.best[name]
            rows.append(f"  {name:<12}{self.directions[name]:<5}{b['gamma']:>12.5g}"
                        f"{b['alpha']:>12.5g}{b['value']:>14.6g}")
        return "\n".join([head, *rows])


def _finite_selection(result: SelectionResult) -> SelectionResult:
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
