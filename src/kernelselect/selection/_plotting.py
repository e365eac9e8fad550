"""Figures of a :class:`~kernelselect.SelectionResult` (matplotlib, imported on use).

Two views of the same curves:

- ``"curves"``: one panel per criterion, its value against log₂ γ, one line per α,
  coloured by log₁₀ α on one colour map (with a colour bar);
- ``"heatmap"``: one panel per criterion, its value over the (log₂ γ, log₁₀ α) grid,
  the view that joint selection of γ and α needs.

A search in levels (``result.levels``: ``approximation="auto"`` beyond the exact
range) is drawn whole: the curves of the coarse grid dashed under the solid curves of
the last level (the one the choice was read from), and in the heat map the coarse grid
with every later window drawn over it and outlined.

In both, the kernel the result selects (the first criterion's best) is a filled red
diamond and each criterion's own best an open black circle, so that a criterion that
disagrees with the selection is visible at a glance; the legend, off the data, says
which is which. A per-feature selection (``kernel="ard"``) is not a point of the
isotropic grid: there the diamond is grey and marks the isotropic start, the legend
gives the per-feature choice's α (a red dashed line in the heat maps) and says that
its γ — one per feature — is off the grid (``plot_relevances`` draws them); when the
guard kept the isotropic kernel, the red diamond marks it as usual.

The value axis of the curves is logarithmic when a criterion to minimise is positive
and spans more than a decade (the exploding curves of small α would otherwise flatten
the minimum), and its top is cut, robustly, at ``median·(median/min)·CLIP_FACTOR``
when the largest value lies beyond (the cut is said in the panel). In the heat maps
the windows of a search in levels are outlined, each in its own line style named in
the legend, and the legend explains grey cells: (γ, α) the search did not evaluate,
or where the criterion is undefined.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from ..criteria.error import LOSS_WORDS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ._result import SelectionResult

PlotKind = Literal["curves", "heatmap", "both"]

__all__ = ["plot_result", "PLOT_KINDS"]

PLOT_KINDS = ("curves", "heatmap", "both")

_SELECTED: dict[str, Any] = dict(marker="D", ms=7, color="tab:red", mec="darkred", ls="none", zorder=5)
_OWN_BEST: dict[str, Any] = dict(marker="o", ms=13, mfc="none", mec="black", mew=1.6, ls="none", zorder=6)
_BETTER = {"min": "lower is better", "max": "higher is better"}
#: the colour map of the α lines (perceptually uniform, and not the heat maps' viridis)
ALPHA_CMAP = "plasma"
#: the isotropic start of a per-feature selection (not the selected kernel)
_START: dict[str, Any] = dict(_SELECTED, color="lightgrey", mec="dimgrey")
#: the curves' value axis is cut above median·(median/min)·CLIP_FACTOR (minimised,
#: positive criteria; median + CLIP_FACTOR·(median − min) for others)
CLIP_FACTOR = 3.0
#: the curves' value axis is logarithmic when a positive criterion to minimise spans
#: more than this ratio
LOG_SPAN = 10.0
#: line styles of the windows of a search in levels, in order
_WINDOW_STYLES: tuple[Any, ...] = ("--", ":", "-.", (0, (6, 2, 1, 2, 1, 2)))
_NOT_EVALUATED = "grey: not evaluated by the search, or undefined (NaN)"


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "SelectionResult.plot needs matplotlib; install it with `pip install matplotlib` "
            "(the [plot] extra of kernelselect)."
        ) from None
    return plt


def criterion_loss(result: SelectionResult, name: str) -> str | None:
    """The words for a criterion's loss (``"squared loss"``) when it has one, from the
    parameters the selection resolved (``details["criterion_params"]``)."""
    params = (result.details.get("criterion_params") or {}).get(name) or {}
    loss = params.get("loss") if isinstance(params, dict) else None
    return None if loss is None else LOSS_WORDS.get(loss, str(loss))


def criterion_label(result: SelectionResult, name: str) -> str:
    """A criterion's name with its loss when it has one: ``eloo, squared loss``."""
    loss = criterion_loss(result, name)
    return name if loss is None else f"{name}, {loss}"


def value_label(result: SelectionResult, name: str) -> str:
    """The axis label of a criterion's values: its name (and loss) and which way is
    better."""
    return (f"{criterion_label(result, name)} "
            f"({_BETTER.get(result.directions.get(name, ''), 'value')})")


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


def _per_feature(result: SelectionResult) -> dict[str, Any] | None:
    """The per-feature choice of an ``kernel="ard"`` result (None for an isotropic one):
    whether it was kept over the isotropic start, and its α."""
    ard = (result.details or {}).get("ard")
    if not isinstance(ard, dict) or np.ndim(result.best_gamma) != 1:
        return None
    return {"kept": bool(ard.get("kept", True)), "alpha": float(result.best_alpha)}


def _selected_label(result: SelectionResult) -> str:
    b = result.best[result.criteria[0]]
    point = f"γ = {b['gamma']:.4g}, α = {b['alpha']:.4g}"
    choice = _per_feature(result)
    if choice is None:
        return f"selected by {result.criteria[0]}: {point}"
    if choice["kept"]:
        return f"isotropic start (by {result.criteria[0]}): {point}"
    return f"selected (the guard kept the isotropic kernel; by {result.criteria[0]}): {point}"


def _selected_style(result: SelectionResult) -> dict[str, Any]:
    choice = _per_feature(result)
    return _START if choice is not None and choice["kept"] else _SELECTED


def _per_feature_handle(result: SelectionResult, heatmap: bool) -> list[tuple[Any, str]]:
    """The legend entry of a kept per-feature choice: off the isotropic grid."""
    from matplotlib.lines import Line2D

    choice = _per_feature(result)
    if choice is None or not choice["kept"]:
        return []
    where = " (the red dashed line)" if heatmap else ""
    return [(Line2D([], [], color="tab:red", ls="--", lw=1.4),
             f"selected: one γ per feature, off this isotropic grid\n(see the relevance "
             f"chart), α = {choice['alpha']:.4g}{where}")]


def _value_axis(ax: Axes, values: np.ndarray, direction: str | None) -> str | None:
    """Scale and cut the curves' value axis so that the minimum stays visible under
    exploding curves: logarithmic for a positive criterion to minimise spanning more
    than LOG_SPAN, and the top cut at a robust bound (see the module notes). Returns the
    words of the cut, or None."""
    finite = values[np.isfinite(values)]
    if finite.size < 2 or direction != "min":
        return None
    lo, mid, hi = float(finite.min()), float(np.median(finite)), float(finite.max())
    if lo > 0 and hi / lo > LOG_SPAN:
        ax.set_yscale("log")
        top = mid * (mid / lo) * CLIP_FACTOR
        bottom = lo / 1.5
    else:
        top = mid + CLIP_FACTOR * (mid - lo)
        bottom = lo - 0.05 * (min(hi, top) - lo)
    if not hi > top > lo:
        return None
    ax.set_ylim(bottom, top)
    return f"values above {top:.3g} are off the axis (max {hi:.3g})"


def _own_label(name: str, shared: bool) -> str:
    return "best of the panel's criterion" if shared else f"best of {name}"


def _alpha_colours(alphas: np.ndarray) -> Any:
    """A ScalarMappable over log₁₀ α (the colour of each α line, and its colour bar)."""
    import matplotlib
    import matplotlib.cm
    import matplotlib.colors

    la = np.log10(alphas)
    lo, hi = float(la.min()), float(la.max())
    norm = matplotlib.colors.Normalize(lo, hi if hi > lo else lo + 1.0)
    return matplotlib.cm.ScalarMappable(norm=norm, cmap=matplotlib.colormaps[ALPHA_CMAP])


def _alpha_lines(ax: Axes, gammas: np.ndarray, alphas: np.ndarray, values: np.ndarray,
                 colours: Any, **style: Any) -> None:
    """One line per α; one black line when the criterion does not depend on α."""
    lg = np.log2(gammas)
    order = np.argsort(lg)
    same = np.all((values == values[:, :1]) | np.isnan(values))
    for j, a in enumerate(alphas[:1] if same else alphas):
        colour = "black" if same or alphas.size == 1 else colours.to_rgba(np.log10(a))
        ax.plot(lg[order], values[order, j], color=colour, **style)


def _draw_curves(result: SelectionResult, ax: Axes, name: str, colours: Any,
                 shared: bool) -> None:
    levels = result.levels
    if len(levels) > 1:
        coarse = levels[0]
        _alpha_lines(ax, coarse.gammas, coarse.alphas,
                     np.asarray(coarse.curves[name], dtype=float), colours, ls="--", lw=0.9,
                     alpha=0.55, zorder=2)
    lg = np.log2(result.gammas)
    values = np.asarray(result.curves[name], dtype=float)
    _alpha_lines(ax, result.gammas, result.alphas, values, colours, marker="o", ms=3,
                 lw=1.4, zorder=3)
    shown = np.concatenate([np.ravel(np.asarray(lv.curves[name], dtype=float))
                            for lv in levels] + [values.ravel()])
    cut = _value_axis(ax, shown, result.directions.get(name))
    if cut is not None:
        ax.text(0.99, 0.98, cut, transform=ax.transAxes, ha="right", va="top",
                fontsize="x-small", color="dimgrey",
                bbox=dict(fc="white", ec="none", alpha=0.8, pad=1.5))
    chosen = result.best[result.criteria[0]].get("index")
    if chosen is not None:
        i, j = chosen
        ax.plot(lg[i], values[i, j], label=_selected_label(result), **_selected_style(result))
    own = result.best[name].get("index")
    if own is not None:
        i, j = own
        ax.plot(lg[i], values[i, j], label=_own_label(name, shared), **_OWN_BEST)
    ax.set_xlabel("log₂ γ")
    ax.set_ylabel(value_label(result, name))
    ax.set_title(criterion_label(result, name))
    ax.grid(True, alpha=0.3)


def _level_handles(result: SelectionResult) -> list[tuple[Any, str]]:
    """Legend entries for the line styles of a search in levels."""
    from matplotlib.lines import Line2D

    if len(result.levels) < 2:
        return []
    first, last = result.levels[0], result.levels[-1]
    return [(Line2D([], [], color="grey", ls="--", lw=0.9),
             f"{first.approximation}: the coarse grid"),
            (Line2D([], [], color="grey", marker="o", ms=3, lw=1.4),
             f"{last.approximation}: the last level (the choice)")]


def _edges(centres: npt.ArrayLike) -> np.ndarray:
    """Cell edges around sorted centres (midpoints; half a step beyond the ends)."""
    c = np.asarray(centres, dtype=float)
    if c.size == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = (c[1:] + c[:-1]) / 2
    return np.concatenate([[c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]])


def _composite(result: SelectionResult, name: str
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[str, np.ndarray]]]:
    """(gammas, alphas, values, windows): the coarse grid with every later level's
    values drawn over it (their γ are points of the coarse grid, their α the same), and
    each later level's label and γ."""
    levels = result.levels
    base = levels[0]
    gammas, alphas = base.gammas, base.alphas
    values = np.array(base.curves[name], dtype=float)
    windows = []
    for level in levels[1:]:
        gi = [int(np.argmin(np.abs(np.log(gammas) - np.log(g)))) for g in level.gammas]
        same_alphas = level.alphas.size == alphas.size and np.allclose(level.alphas, alphas)
        if not (same_alphas and np.allclose(gammas[gi], level.gammas, rtol=1e-12)):
            continue                        # not a window of the coarse grid: left out
        values[gi] = level.curves[name]
        windows.append((level.approximation, level.gammas))
    return gammas, alphas, values, windows


def _window_handle(style: Any, label: str) -> tuple[Any, str]:
    from matplotlib import patheffects
    from matplotlib.lines import Line2D

    return (Line2D([], [], color="white", ls=style, lw=1.2,
                   path_effects=[patheffects.withStroke(linewidth=2.4, foreground="black")]),
            f"outline: the window of {label}")


def _draw_heatmap(result: SelectionResult, ax: Axes, name: str, shared: bool
                  ) -> list[tuple[Any, str]]:
    """Draw one heat map; returns its legend entries beyond the axes' own (the windows'
    outlines, the grey of cells not evaluated)."""
    gammas, alphas, raw, windows = _composite(result, name)
    lg = np.log2(gammas)
    la = np.log10(alphas)
    values = np.ma.masked_invalid(raw)
    import matplotlib
    import matplotlib.colors
    import matplotlib.patches

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
    g_edges, a_edges = _edges(lg[gi]), _edges(la[ai])
    mesh = ax.pcolormesh(g_edges, a_edges, values[np.ix_(gi, ai)].T,
                         cmap=cmap, norm=norm, shading="flat")
    bar = ax.figure.colorbar(mesh, ax=ax)
    bar.set_label(value_label(result, name))
    from matplotlib import patheffects

    entries = []
    half = (g_edges[1] - g_edges[0]) / 2 if g_edges.size > 1 else 0.5
    for k, (label, window) in enumerate(windows):
        lo, hi = np.log2(window.min()) - half, np.log2(window.max()) + half
        inset = 0.04 * k * (a_edges[-1] - a_edges[0])          # nested windows stay apart
        style = _WINDOW_STYLES[k % len(_WINDOW_STYLES)]
        ax.add_patch(matplotlib.patches.Rectangle(
            (lo, a_edges[0] + inset), hi - lo, a_edges[-1] - a_edges[0] - 2 * inset,
            fill=False, ec="white", lw=1.2, ls=style, zorder=4,
            path_effects=[patheffects.withStroke(linewidth=2.4, foreground="black")]))
        entries.append(_window_handle(style, label))
    if np.ma.getmaskarray(values).any():
        entries.append((matplotlib.patches.Patch(fc="lightgrey", ec="dimgrey", lw=0.5),
                        _NOT_EVALUATED))
    lg_last, la_last = np.log2(result.gammas), np.log10(result.alphas)
    choice = _per_feature(result)
    if choice is not None and choice["kept"]:
        ax.axhline(np.log10(choice["alpha"]), color="tab:red", ls="--", lw=1.4, zorder=5)
    chosen = result.best[result.criteria[0]].get("index")
    if chosen is not None:
        ax.plot(lg_last[chosen[0]], la_last[chosen[1]], label=_selected_label(result),
                **_selected_style(result))
    own = result.best[name].get("index")
    if own is not None:
        ax.plot(lg_last[own[0]], la_last[own[1]], label=_own_label(name, shared),
                **_OWN_BEST)
    ax.set_xlabel("log₂ γ")
    ax.set_ylabel("log₁₀ α")
    ax.set_title(f"{criterion_label(result, name)} over (γ, α)")
    return entries


def plot_result(result: SelectionResult, axes: Any = None, *, kind: PlotKind = "curves",
                title: str | None = None, data_name: str | None = None) -> Figure:
    """Draw ``result``; see :meth:`kernelselect.SelectionResult.plot`."""
    _check_kind(kind, result)
    plt = _pyplot()
    k = len(result.criteria)
    rows = 2 if kind == "both" else 1
    # A figure made here gets one legend below the panels and one α colour bar beside
    # them; axes given by the caller get a legend below each and a colour bar each.
    shared = axes is None
    if axes is None:
        fig, grid = plt.subplots(rows, k, figsize=(max(4.6 * k, 6.0) + 0.8,
                                                   3.8 * rows + 1.1),
                                 squeeze=False, layout="constrained")
        axes = grid.ravel()
    else:
        axes = np.atleast_1d(np.asarray(axes, dtype=object)).ravel()
        if axes.size != rows * k:
            what = "two rows of axes (curves, heat maps), " if rows == 2 else ""
            raise ValueError(f"axes must hold {rows * k} axes ({what}one per criterion), "
                             f"got {axes.size}.")
        fig = axes[0].figure
    alphas = np.concatenate([lv.alphas for lv in result.levels] + [result.alphas])
    colours = _alpha_colours(alphas)
    curve_axes = list(axes[:k]) if kind in ("curves", "both") else []
    extra: dict[Any, list[tuple[Any, str]]] = {}        # legend entries of each heat map
    for c, name in enumerate(result.criteria):
        if kind in ("curves", "both"):
            _draw_curves(result, axes[c], name, colours, shared)
        if kind in ("heatmap", "both"):
            ax = axes[c] if kind == "heatmap" else axes[k + c]
            extra[ax] = _draw_heatmap(result, ax, name, shared)
    if curve_axes and alphas.size > 1 and np.ptp(np.log10(alphas)) > 0:
        for group in ([curve_axes] if shared else [[ax] for ax in curve_axes]):
            bar = fig.colorbar(colours, ax=group, pad=0.01)
            bar.set_label("log₁₀ α (one line per α)")
    handles, labels = axes[0].get_legend_handles_labels()
    entries = list(zip(handles, labels)) + (_level_handles(result) if curve_axes else [])
    entries += _per_feature_handle(result, bool(extra))
    for more in extra.values():
        entries += [e for e in more if e[1] not in {label for _, label in entries}]
    if shared and entries:
        fig.legend(*zip(*entries), loc="outside lower center", ncols=min(len(entries), 2),
                   fontsize="small", frameon=False)
    elif not shared:
        for ax in axes:
            own = list(zip(*ax.get_legend_handles_labels()))
            own += _level_handles(result) if ax in curve_axes else []
            own += extra.get(ax, [])
            if own:
                ax.legend(*zip(*own), loc="upper center", bbox_to_anchor=(0.5, -0.16),
                          fontsize="x-small", frameon=False, ncols=1)
    text = default_title(result, data_name) if title is None else title
    if text:
        fig.suptitle(text)
    return fig
