"""The column standardisation of ``standardize=True``, as a transform that can be
applied to other points in X's units (user landmarks) exactly as to X."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["ColumnScaling"]


class ColumnScaling:
    """x ↦ (x·2^−e − μ)/σ per column, fitted on X at any magnitude.

    Columns are first divided by a power of two 2^e near their largest magnitude
    (exact), so that the mean μ and the standard deviation σ are taken on numbers of
    order one: data of size 10¹⁶⁰ or 10⁻¹⁶⁰ standardise as data of size 1 do (the
    variance of X·10¹⁶⁰ itself overflows). Constant columns (σ = 0) are only centred.
    A point that equals a row of X is mapped to exactly that row's image.
    """

    def __init__(self, exponents: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> None:
        self.exponents = exponents
        self.mean = mean
        self.scale = scale

    @classmethod
    def fit(cls, X: npt.ArrayLike) -> ColumnScaling:
        """The scaling of the columns of a finite 2-D array X."""
        X = np.asarray(X)
        peak = np.max(np.abs(X), axis=0)
        exponents = np.where(peak > 0, np.frexp(peak)[1], 0)
        Xs = np.ldexp(X.astype(np.float64, copy=False), -exponents[None, :])
        sd = Xs.std(axis=0)
        return cls(exponents, Xs.mean(axis=0), np.where(sd > 0, sd, 1.0))

    def transform(self, P: npt.ArrayLike, dtype: Any = None) -> np.ndarray:
        """The points P (rows, X's columns) in the standardised units, C-contiguous,
        of P's floating dtype (float64 for other dtypes) unless ``dtype`` says."""
        P = np.asarray(P)
        if dtype is None:
            dtype = P.dtype if P.dtype in (np.float32, np.float64) else np.float64
        Ps = np.ldexp(P.astype(np.float64, copy=False), -self.exponents[None, :])
        return np.ascontiguousarray((Ps - self.mean) / self.scale, dtype=dtype)
