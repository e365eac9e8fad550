"""A standardising transformer safe at any magnitude: :class:`Standardizer`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..utils._dask import IN_MEMORY, RowSource, check_dask_rows, is_dask_array
from ..utils._scaling import ColumnScaling
from ..utils._sklearn import (BaseEstimator, OneToOneFeatureMixin, TransformerMixin,
                        check_is_fitted, validate_data)

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Standardizer"]


class Standardizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale every feature to zero mean and unit variance, at any magnitude.

    The transform of :func:`kernelselect.select_kernel`'s ``standardize=True``
    (:func:`kernelselect.selection.standardize_columns`) as a fitted transformer: it
    learns the training statistics and applies them to new data, so that it can sit
    in a ``Pipeline`` before a kernel machine. Each column j is first divided by a
    power of two 2^e_j near its largest training magnitude (exact in floating point),
    and its mean and standard deviation are computed on those numbers of order one,
    by the corrected two-pass formulas (:class:`kernelselect.utils._scaling.ColumnScaling`:
    a first mean μ_j, then the mean c_j of the deviations from it, σ_j from their mean
    square)::

        z = ((x · 2^−e_j − μ_j) − c_j) / σ_j.

    scikit-learn's ``StandardScaler`` computes the variance of x itself, which
    overflows for features of magnitude above about 1e154 and underflows below about
    1e-162; here data of size 10¹⁶⁰ or 10⁻¹⁶⁰ standardise as data of size 1 do.
    Constant columns are centred (σ_j taken as 1). The column sums are taken over parts
    of 2¹⁶ rows added in row order, so an in-memory X and a row-chunked Dask X (whose
    statistics are computed chunk by chunk, X never gathered) give the same bits.

    Attributes
    ----------
    exponent_ : ndarray of int of shape (n_features,)
        e_j (0 for an all-zero column).
    mean_ : ndarray of shape (n_features,)
        μ_j + c_j, the mean of column j in units of 2^e_j.
    scale_ : ndarray of shape (n_features,)
        σ_j in units of 2^e_j (1 for a constant column).
    n_features_in_ : int
    scaling_ : ColumnScaling
        The fitted map, the one ``select_kernel(standardize=True)`` applies to X.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelselect.models import Standardizer
    >>> X = np.array([[1e-170, 2.0], [3e-170, 4.0]])
    >>> Standardizer().fit(X).transform(X)
    array([[-1., -1.],
           [ 1.,  1.]])
    """

    def fit(self, X: npt.ArrayLike, y: Any = None) -> Self:
        """Learn e_j, μ_j and σ_j from X of shape (n_samples, n_features) (a row-chunked
        Dask X: its column reductions are computed, X is not gathered)."""
        data: Any
        if is_dask_array(X):
            data = check_dask_rows(X).astype(np.float64)
            return self._fit_validated(data, RowSource.of_dask(data))
        return self._fit_validated(validate_data(self, X, dtype=np.float64))

    def _fit_validated(self, data: Any, source: RowSource = IN_MEMORY) -> Self:
        """:meth:`fit` on an X its caller checked: float64 in memory, or a checked
        row-chunked Dask array (``source`` says which)."""
        self.n_features_in_ = int(data.shape[1])
        self._rows = source
        scaling = _fixed_order_scaling(data, source.lazy)
        self.scaling_ = scaling
        self.exponent_ = scaling.exponents
        self.mean_ = scaling.mean + scaling.shift
        self.scale_ = scaling.scale
        return self

    def transform(self, X: npt.ArrayLike) -> np.ndarray:
        """(X · 2^−e − μ) / σ with the training statistics, float64 (a lazy Dask array
        for a Dask X)."""
        check_is_fitted(self)
        if is_dask_array(X):
            from ._dask_input import check_dask_features

            return self.scaling_.transform(check_dask_features(self, X))
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._transform_validated(X)

    def _transform_validated(self, X: Any) -> Any:
        """:meth:`transform` of the X :meth:`_fit_validated` was given (a Dask X stays
        lazy)."""
        if self._rows.lazy:
            return self.scaling_.transform(X)
        return np.asarray(self.scaling_.transform(X, dtype=np.float64))

    def inverse_transform(self, X: npt.ArrayLike) -> np.ndarray:
        """The features back in the units of the training data."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.ldexp(X * self.scale_ + self.mean_, self.exponent_[None, :])


def _fixed_order_scaling(X: Any, lazy: bool) -> ColumnScaling:
    """:class:`ColumnScaling`'s statistics, with every column sum taken over parts of
    ``PART_ROWS`` rows added one after the other, so that an in-memory X and a Dask X
    (any chunks) give the same bits: e_j from the largest magnitude, μ the mean of
    x·2^−e, c the mean of the deviations from μ, σ² the mean square deviation − c²
    (``lazy``: X is a checked row-chunked Dask array)."""
    from ..utils._dask import compute

    peak = np.asarray(compute(abs(X).max(axis=0)) if lazy else np.abs(X).max(axis=0))
    exponents = np.where(peak > 0, np.frexp(peak)[1], 0)
    n = int(X.shape[0])
    (total,) = _part_sums(X, lazy, _scaled_sums, exponents)
    mu = total / n
    if not np.all(np.isfinite(mu)):
        raise ValueError("X contains NaN or inf; drop or impute those rows first.")
    dev, sq = _part_sums(X, lazy, _deviation_sums, exponents, mu)
    c, m2 = dev / n, sq / n
    sd = np.sqrt(np.maximum(m2 - c * c, 0.0))
    return ColumnScaling(exponents, mu, c, np.where(sd > 0, sd, 1.0))


def _scaled_sums(block: np.ndarray, exponents: np.ndarray) -> list[np.ndarray]:
    return [np.ldexp(block, -exponents[None, :]).sum(axis=0)]


def _deviation_sums(block: np.ndarray, exponents: np.ndarray, mu: np.ndarray
                    ) -> list[np.ndarray]:
    D = np.ldexp(block, -exponents[None, :]) - mu
    return [D.sum(axis=0), (D * D).sum(axis=0)]


def _chunk_parts(x: Any, fn: Any, *args: Any) -> list[list[np.ndarray]]:
    """``fn`` on each part of ``PART_ROWS`` rows of the block x (C-ordered float64)."""
    from ..solvers._rows import PART_ROWS

    x = np.ascontiguousarray(x, dtype=np.float64)
    return [fn(x[a:a + PART_ROWS], *args) for a in range(0, x.shape[0], PART_ROWS)]


def _part_sums(X: Any, lazy: bool, fn: Any, *args: Any) -> list[np.ndarray]:
    """Σ of ``fn``'s outputs over the parts of X's rows, in row order (a Dask X: one task
    per chunk, its chunks first aligned to whole parts)."""
    from ..solvers._rows import aligned_chunks, fold

    if not lazy:
        return fold(_chunk_parts(X, fn, *args))
    import dask

    from ..utils._dask import compute

    rows = aligned_chunks(tuple(int(c) for c in X.chunks[0]))
    if rows != tuple(X.chunks[0]):
        X = X.rechunk({0: rows})
    task = dask.delayed(_chunk_parts, pure=True)
    per_chunk = [task(x, fn, *args) for x in X.to_delayed().ravel()]
    done = compute(*per_chunk)
    done = (done,) if len(per_chunk) == 1 else done
    return fold([part for chunk in done for part in chunk])
