"""The column standardisation of ``standardize=True``, as a transform that can be
applied to other points in X's units (user landmarks) exactly as to X, in memory and
on row-chunked Dask arrays alike."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

__all__ = ["ColumnScaling"]


def _is_lazy(X: Any) -> bool:
    return type(X).__module__.split(".")[0] == "dask"


class ColumnScaling:
    """x ↦ ((x·2^−e − μ) − c)/σ per column, fitted on X at any magnitude.

    Columns are first divided by a power of two 2^e near their largest magnitude
    (exact), so that the statistics are taken on numbers of order one: data of size
    10¹⁶⁰ or 10⁻¹⁶⁰ standardise as data of size 1 do (the variance of X·10¹⁶⁰ itself
    overflows). The statistics are the corrected two-pass ones (Chan, Golub & LeVeque,
    The American Statistician 37, 1983): μ from a first pass, then the mean c and the
    mean square s² of D = X − μ, σ = √(s² − c²), so that the map keeps its digits when
    the mean is large against the spread. Constant columns (σ = 0) are only centred.
    A point that equals a row of X is mapped to exactly that row's image, and a
    row-chunked Dask array gives the same numbers as in memory (to rounding: only the
    order of the sums differs).
    """

    def __init__(self, exponents: np.ndarray, mean: np.ndarray, shift: np.ndarray,
                 scale: np.ndarray) -> None:
        self.exponents = exponents
        self.mean = mean
        self.shift = shift
        self.scale = scale

    @classmethod
    def fit(cls, X: Any, compute: Callable[..., Any] | None = None) -> ColumnScaling | None:
        """The scaling of the columns of a 2-D array X (numpy, or Dask with ``compute``
        evaluating its reductions); None when a Dask X holds a non-finite entry (its
        row passes then name the row)."""
        lazy = _is_lazy(X)
        if not lazy:
            X = np.asarray(X)

        def stats(*things: Any) -> Any:
            with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)     # detected below
                if lazy:
                    assert compute is not None, "a Dask array needs compute="
                    return compute(*things)
                return things if len(things) > 1 else things[0]

        peak, mu = stats(abs(X).max(axis=0), X.mean(axis=0))
        exponents = np.where(peak > 0, np.frexp(peak)[1], 0)
        Xs = np.ldexp(X.astype(np.float64) if lazy else X.astype(np.float64, copy=False),
                      -exponents[None, :])
        if np.all(np.isfinite(mu)) and np.all(np.abs(exponents) <= 500):
            mu = np.ldexp(mu, -exponents)          # exact: the scaling commutes with the sum
        else:
            mu = stats(Xs.mean(axis=0))
        if not np.all(np.isfinite(mu)):
            return None
        D = Xs - mu
        c, m2 = stats(D.mean(axis=0), (D * D).mean(axis=0))
        sd = np.sqrt(np.maximum(m2 - c * c, 0.0))
        return cls(exponents, np.asarray(mu), np.asarray(c), np.where(sd > 0, sd, 1.0))

    def transform(self, P: Any, dtype: Any = None) -> Any:
        """The points P (rows, X's columns) in the standardised units: C-contiguous, of
        P's floating dtype (float64 for other dtypes) unless ``dtype`` says; a Dask
        array stays a (lazy) Dask array of float64."""
        if _is_lazy(P):
            Ps = np.ldexp(P.astype(np.float64), -self.exponents[None, :])
            return ((Ps - self.mean) - self.shift) / self.scale
        P = np.asarray(P)
        if dtype is None:
            dtype = P.dtype if P.dtype in (np.float32, np.float64) else np.float64
        Ps = np.ldexp(P.astype(np.float64, copy=False), -self.exponents[None, :])
        return np.ascontiguousarray(((Ps - self.mean) - self.shift) / self.scale, dtype=dtype)
