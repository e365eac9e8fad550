"""Plots of predictive uncertainty: a reliability diagram of class probabilities and
the prediction intervals of a regressor (matplotlib, imported when called).

Both take plain arrays (what ``predict_proba`` and ``predict_interval`` return), so
they draw any estimator's output, and return the matplotlib ``Axes``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["plot_calibration", "plot_intervals", "reliability"]


def reliability(proba: npt.ArrayLike, y_true: npt.ArrayLike, classes: npt.ArrayLike | None = None,
                n_bins: int = 10) -> dict[str, np.ndarray]:
    """Top-label reliability per confidence bin, and the expected calibration error.

    Per equal-width bin of the top probability: the mean confidence, the accuracy and
    the count, and ECE = Σ_b (n_b/n)·abs(accuracy_b − confidence_b) (Guo, Pleiss, Sun & Weinberger, ICML
    2017).

    Parameters
    ----------
    proba : array-like of shape (n, n_classes)
        Rows of class probabilities, columns in ``classes`` order.
    y_true : array-like of shape (n,)
        The labels.
    classes : array-like of shape (n_classes,) or None
        The labels of the columns; None → ``numpy.unique(y_true)``.
    n_bins : int, default=10

    Returns
    -------
    dict
        ``confidence``, ``accuracy``, ``count`` (arrays of shape (n_bins,), NaN for an
        empty bin), ``edges`` (n_bins + 1,) and ``ece`` (a 0-d array).
    """
    P = np.asarray(proba, dtype=np.float64)
    y = np.asarray(y_true)
    if P.ndim != 2 or P.shape[0] != y.shape[0]:
        raise ValueError(f"proba must have shape (n, n_classes) with n = len(y_true) = "
                         f"{y.shape[0]}, got {P.shape}.")
    if not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}.")
    labels = np.unique(y) if classes is None else np.asarray(classes)
    if labels.shape[0] != P.shape[1]:
        raise ValueError(f"proba has {P.shape[1]} columns but there are {labels.shape[0]} "
                         "classes; pass classes= (the estimator's classes_).")
    conf = P.max(axis=1)
    hit = (labels[P.argmax(axis=1)] == y).astype(np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.clip(np.digitize(conf, edges[1:-1]), 0, n_bins - 1)
    count = np.bincount(idx, minlength=n_bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(idx, conf, n_bins) / count
        accuracy = np.bincount(idx, hit, n_bins) / count
    filled = count > 0
    ece = np.sum(count[filled] / max(len(y), 1)
                 * np.abs(accuracy[filled] - mean_conf[filled]))
    return {"confidence": mean_conf, "accuracy": accuracy, "count": count, "edges": edges,
            "ece": np.asarray(ece)}


def plot_calibration(proba: npt.ArrayLike, y_true: npt.ArrayLike,
                     classes: npt.ArrayLike | None = None, n_bins: int = 10,
                     ax: Any = None, label: str | None = None, **kwargs: Any) -> Any:
    """Draw a reliability diagram: accuracy against mean confidence per bin.

    The diagonal is perfect calibration; the ECE goes in the legend and the share of
    rows per bin is drawn as bars.

    Parameters
    ----------
    proba, y_true, classes, n_bins
        As :func:`reliability`.
    ax : matplotlib Axes or None
        Drawn into; None → a new figure.
    label : str or None
        The curve's legend entry (the ECE is appended).
    **kwargs
        Passed to ``Axes.plot`` for the curve.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    r = reliability(proba, y_true, classes, n_bins)
    if ax is None:
        _, ax = plt.subplots(figsize=(4, 4), layout="constrained")
    centres = 0.5 * (r["edges"][1:] + r["edges"][:-1])
    width = r["edges"][1] - r["edges"][0]
    ax.bar(centres, r["count"] / max(r["count"].sum(), 1), width=0.9 * width, color="0.85",
           zorder=0)
    ax.plot([0, 1], [0, 1], ":", color="0.4", lw=1)
    keep = r["count"] > 0
    text = f"ECE {float(r['ece']):.3f}"
    ax.plot(r["confidence"][keep], r["accuracy"][keep], "o-",
            label=f"{label}: {text}" if label else text, **kwargs)
    ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="mean confidence (top class)",
           ylabel="accuracy (bars: share of rows)")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def plot_intervals(x: npt.ArrayLike, intervals: npt.ArrayLike,
                   y_true: npt.ArrayLike | None = None,
                   prediction: npt.ArrayLike | None = None, ax: Any = None,
                   label: str = "interval", **kwargs: Any) -> Any:
    """Draw prediction intervals against one coordinate x.

    The band [lower, upper] and the prediction, sorted along x, and the true values
    marked inside or outside, with the empirical coverage in the legend.

    Parameters
    ----------
    x : array-like of shape (n,)
        The abscissa: a feature, the prediction, or the row number.
    intervals : array-like of shape (n, 2)
        [lower, upper] per row (``predict_interval``'s output).
    y_true : array-like of shape (n,) or None
    prediction : array-like of shape (n,) or None
    ax : matplotlib Axes or None
    label : str
    **kwargs
        Passed to ``Axes.fill_between`` for the band.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    xs = np.asarray(x, dtype=np.float64).ravel()
    band = np.asarray(intervals, dtype=np.float64)
    if band.shape != (xs.shape[0], 2):
        raise ValueError(f"intervals must have shape (n, 2) with n = len(x) = {xs.shape[0]}, "
                         f"got {band.shape}.")
    order = np.argsort(xs, kind="stable")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
    kwargs.setdefault("alpha", 0.3)
    ax.fill_between(xs[order], band[order, 0], band[order, 1], step="mid", label=label,
                    **kwargs)
    if prediction is not None:
        ax.plot(xs[order], np.asarray(prediction, dtype=np.float64).ravel()[order], "-",
                lw=1, color="k", label="prediction")
    if y_true is not None:
        y = np.asarray(y_true, dtype=np.float64).ravel()
        inside = (band[:, 0] <= y) & (y <= band[:, 1])
        ax.plot(xs[inside], y[inside], ".", ms=3, color="tab:blue",
                label=f"inside ({inside.mean():.1%})")
        ax.plot(xs[~inside], y[~inside], "x", ms=4, color="tab:red", label="outside")
    ax.legend(loc="best", fontsize="small")
    return ax
