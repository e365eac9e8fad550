"""Figures of a :class:`~kernelselect.SelectionResult` (matplotlib, imported on use).

Two views of the same curves:

- ``"curves"``: one panel per criterion, its value against log₂ γ, one line per α;
- ``"heatmap"``: one panel per criterion, its value over the (log₂ γ, log₁₀ α) grid,
  the view that joint selection of γ and α needs.

In both, the kernel the result selects (the first criterion's best) is a filled red
diamond and each criterion's own best an open black circle, so that a criterion that
disagrees with the selection is visible at a glance; the legend says which is which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .selection import SelectionResult

PlotKind = Literal["curves", "heatmap", "both"]

__all__ = ["plot_result", "PLOT_KINDS"]

PLOT_KINDS = ("curves", "heatmap", "both")

_SELECTED: dict[str, Any] = dict(marker="D", ms=7, color="tab:red", mec="darkred", ls="none", zorder=5)
_OWN_BEST: dict[str, Any] = dict(marker="o", ms=13, mfc="none", mec="black", mew=1.6, ls="none", zorder=6)
_BETTER = {"min": "lower is better", "max": "higher is better"}


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "SelectionResult.plot needs matplotlib; install it with `pip install matplotlib` "
            "(or `pip install kernelselect[plot]`)."
        ) from None
    return plt


def value_label(result: SelectionResult, name: str) -> str:
    """The axis label of a criterion's values: its name and which way is better."""
    return f"{name} ({_BETTER.get(result.directions.get(name, ''), 'value')})"


def default_title(result: SelectionResult, data_name: str | None = None) -> str:
    """``<data>: <approximation> approximation, <kernel> kernel, n = …`` from ``details``."""
    d = result.details
    parts = []
    approx = d.get("approximation")
    if approx:
        parts.append(f"{approx} approximation")
    if d.get("kernel"):
        parts.append(f"{d['kernel']} kernel")
    if d.get("n") is not None:
        parts.append(f"n = {d['n']}")
    body = ", ".join(parts)
    if data_name:
        return f"{data_name}: {body}" if body else str(data_name)
    return body


def _check_kind(kind: str, result: SelectionResult) -> None:
    if kind not in PLOT_KINDS:
        raise ValueError(f"kind={kind!r} is not a plot kind; use one of {', '.join(PLOT_KINDS)}.")
    if kind in ("heatmap", "both") and result.alphas.size < 2:
        raise ValueError(
            f"kind={kind!r} needs an α path (at least two alphas; this result has "
            f"{result.alphas.size}); use kind='curves', or select with several alphas."
        )


def _selected_label(result: SelectionResult) -> str:
    b = result.best[result.criteria[0]]
    return f"selected by {result.criteria[0]}: γ = {b['gamma']:.4g}, α = {b['alpha']:.4g}"


def _own_label(name: str, shared: bool) -> str:
    return "best of the panel's criterion" if shared else f"best of {name}"


def _draw_curves(result: SelectionResult, ax: Axes, name: str, shared: bool) -> None:
    lg = np.log2(result.gammas)
    values = np.asarray(result.curves[name], dtype=float)
    for j, a in enumerate(result.alphas):
        label = f"α = {a:g}" if result.alphas.size > 1 else None
        ax.plot(lg, values[:, j], marker="o", ms=3, lw=1.2, label=label)
    chosen = result.best[result.criteria[0]].get("index")
    if chosen is not None:
        i, j = chosen
        ax.plot(lg[i], values[i, j], label=_selected_label(result), **_SELECTED)
    own = result.best[name].get("index")
    if own is not None:
        i, j = own
        ax.plot(lg[i], values[i, j], label=_own_label(name, shared), **_OWN_BEST)
    ax.set_xlabel("log₂ γ")
    ax.set_ylabel(value_label(result, name))
    ax.set_title(name)
    ax.grid(True, alpha=0.3)
    if not shared:
        ax.legend(fontsize="small", framealpha=0.8)


def _edges(centres: npt.ArrayLike) -> np.ndarray:
    """Cell edges around sorted centres (midpoints; half a step beyond the ends)."""
    c = np.asarray(centres, dtype=float)
    if c.size == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = (c[1:] + c[:-1]) / 2
    return np.concatenate([[c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]])


def _draw_heatmap(result: SelectionResult, ax: Axes, name: str, shared: bool) -> None:
    lg = np.log2(result.gammas)
    la = np.log10(result.alphas)
    values = np.ma.masked_invalid(np.asarray(result.curves[name], dtype=float))
    import matplotlib
    import matplotlib.colors

    # brighter is better either way; a NaN cell is light grey
    cmap = matplotlib.colormaps["viridis_r" if result.directions.get(name) == "min"
                               else "viridis"].with_extremes(bad="lightgrey")
    # a log colour scale when positive values span more than a decade and a half, so
    # that the region near the optimum is not washed out by the far corners
    finite = values.compressed()
    norm = None
    if finite.size and finite.min() > 0 and finite.max() / finite.min() > 30:
        norm = matplotlib.colors.LogNorm(vmin=finite.min(), vmax=finite.max())
    gi, ai = np.argsort(lg), np.argsort(la)
    mesh = ax.pcolormesh(_edges(lg[gi]), _edges(la[ai]), values[np.ix_(gi, ai)].T,
                         cmap=cmap, norm=norm, shading="flat")
    bar = ax.figure.colorbar(mesh, ax=ax)
    bar.set_label(value_label(result, name))
    chosen = result.best[result.criteria[0]].get("index")
    if chosen is not None:
        ax.plot(lg[chosen[0]], la[chosen[1]], label=_selected_label(result), **_SELECTED)
    own = result.best[name].get("index")
    if own is not None:
        ax.plot(lg[own[0]], la[own[1]], label=_own_label(name, shared), **_OWN_BEST)
    ax.set_xlabel("log₂ γ")
    ax.set_ylabel("log₁₀ α")
    ax.set_title(f"{name} over (γ, α)")
    if not shared:
        ax.legend(fontsize="small", framealpha=0.8)


def plot_result(result: SelectionResult, axes: Any = None, *, kind: PlotKind = "curves",
                title: str | None = None, data_name: str | None = None) -> Figure:
    """Draw ``result``; see :meth:`kernelselect.SelectionResult.plot`."""
    _check_kind(kind, result)
    plt = _pyplot()
    k = len(result.criteria)
    rows = 2 if kind == "both" else 1
    # A figure made here gets one legend below the panels; axes given by the caller
    # get a legend each.
    shared = axes is None
    if axes is None:
        fig, grid = plt.subplots(rows, k, figsize=(max(4.6 * k, 6.0), 3.8 * rows + 0.9),
                                 squeeze=False, layout="constrained")
        axes = grid.ravel()
    else:
        axes = np.atleast_1d(np.asarray(axes, dtype=object)).ravel()
        if axes.size != rows * k:
            what = "two rows of axes (curves, heat maps), " if rows == 2 else ""
            raise ValueError(f"axes must hold {rows * k} axes ({what}one per criterion), "
                             f"got {axes.size}.")
        fig = axes[0].figure
    for c, name in enumerate(result.criteria):
        if kind in ("curves", "both"):
            _draw_curves(result, axes[c], name, shared)
        if kind == "heatmap":
            _draw_heatmap(result, axes[c], name, shared)
        elif kind == "both":
            _draw_heatmap(result, axes[k + c], name, shared)
    if shared:
        # the α lines get a legend in the first panel, the two markers one below all
        handles, labels = axes[0].get_legend_handles_labels()
        lines = [(h, t) for h, t in zip(handles, labels) if t.startswith("α = ")]
        marks = [(h, t) for h, t in zip(handles, labels) if not t.startswith("α = ")]
        if lines:
            axes[0].legend(*zip(*lines), fontsize="small", framealpha=0.8)
        if marks:
            fig.legend(*zip(*marks), loc="outside lower center", ncols=len(marks),
                       fontsize="small", frameon=False)
    text = default_title(result, data_name) if title is None else title
    if text:
        fig.suptitle(text)
    return fig

