"""A standardising transformer safe at any magnitude: :class:`Standardizer`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._scaling import ColumnScaling
from .._sklearn import (BaseEstimator, OneToOneFeatureMixin, TransformerMixin,
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
    by the corrected two-pass formulas (:class:`kernelselect._scaling.ColumnScaling`:
    a first mean μ_j, then the mean c_j of the deviations from it, σ_j from their mean
    square)::

        z = ((x · 2^−e_j − μ_j) − c_j) / σ_j.

    scikit-learn's ``StandardScaler`` computes the variance of x itself, which
    overflows for features of magnitude above about 1e154 and underflows below about
    1e-162; here data of size 10¹⁶⁰ or 10⁻¹⁶⁰ standardise as data of size 1 do.
    Constant columns are centred (σ_j taken as 1).

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
        """Learn e_j, μ_j and σ_j from X of shape (n_samples, n_features)."""
        X = validate_data(self, X, dtype=np.float64)
        scaling = ColumnScaling.fit(X)
        assert scaling is not None                  # validate_data refused non-finite X
        self.scaling_ = scaling
        self.exponent_ = scaling.exponents
        self.mean_ = scaling.mean + scaling.shift
        self.scale_ = scaling.scale
        return self

    def transform(self, X: npt.ArrayLike) -> np.ndarray:
        """(X · 2^−e − μ) / σ with the training statistics, float64."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.asarray(self.scaling_.transform(X, dtype=np.float64))

    def inverse_transform(self, X: npt.ArrayLike) -> np.ndarray:
        """The features back in the units of the training data."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.ldexp(X * self.scale_ + self.mean_, self.exponent_[None, :])
