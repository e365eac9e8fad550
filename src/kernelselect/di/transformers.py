"""scikit-learn transformers whose kernel feature map is trained by DI.

:class:`DIRandomFourierFeatures` and :class:`DINystroem` are supervised
transformers: ``fit(X, y)`` learns the map by maximising the discriminant
information of mini-batches (:func:`kernelselect.di.train_rfdi`,
:func:`kernelselect.di.train_nysdi`), ``transform(X)`` applies it. They slot into a
``Pipeline`` before a linear model. scikit-learn is optional for kernelselect but
required here: without it, constructing either class raises ``ImportError``.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from ..utils._labels import check_labels, encode_labels
from ..utils._validation import check_bool
from .objectives import _gaussian_block, _rff_map
from .._typing import RandomState
from .training import train_nysdi, train_rfdi

if TYPE_CHECKING:
    from typing_extensions import Self

from ..utils._sklearn import (BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                        check_is_fitted, type_of_target, validate_data)

__all__ = ["DIRandomFourierFeatures", "DINystroem"]


def _resolve_task(target: str, y: np.ndarray) -> str:
    if target in ("classification", "regression"):
        return target
    if target != "auto":
        raise ValueError(
            f"target={target!r} is not known; use 'auto', 'classification' or 'regression'."
        )
    kind = type_of_target(y, input_name="y")
    if kind in ("continuous", "continuous-multioutput"):
        return "regression"
    if kind in ("binary", "multiclass"):
        return "classification"
    raise ValueError(
        f"Unknown label type: y looks {kind!r}; DI transformers take 1-D class labels or real targets. "
        "Pass target='classification' or 'regression' explicitly."
    )


class _DIBase(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared parameters, parameter checks and fitting scaffold.

    The output features are named after the class, as scikit-learn's feature-producing
    transformers name theirs (``get_feature_names_out``: "dirandomfourierfeatures0",
    …), so that ``set_output(transform="pandas")``, ``Pipeline`` and
    ``ColumnTransformer`` can label them."""

    def __init__(self, n_components: int = 100, gamma: float = 1.0, rho: float = 1e-4,
                 batch_size: int | None = None, max_epochs: int = 200,
                 learning_rate: float = 1e-2, tol: float = 1e-3, target: str = "auto",
                 verbose: bool = False, random_state: RandomState = None) -> None:
        self.n_components = n_components
        self.gamma = gamma
        self.rho = rho
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.learning_rate = learning_rate
        self.tol = tol
        self.target = target
        self.verbose = verbose
        self.random_state = random_state

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    def _fit_common(self, X: npt.ArrayLike, y: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, str]:
        X, y = cast("tuple[np.ndarray, np.ndarray]",
                    validate_data(self, X, y, dtype=np.float64, y_numeric=False,
                                  multi_output=True))
        for name in ("n_components", "max_epochs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be an integer ≥ 1, got {value!r}.")
        if X.shape[0] < 2:
            raise ValueError(
                f"n_samples={X.shape[0]}: DI needs at least 2 samples (and two classes)."
            )
        task = _resolve_task(self.target, y)
        if task == "classification":
            y = check_labels(y, "y")
            encode_labels(y, "y", checked=True, who=" (DI measures class separation)")
        return X, y, task

    def _train_kwargs(self, task: str) -> dict[str, Any]:
        return dict(rho=self.rho, task=task, batch_size=self.batch_size,
                    learning_rate=self.learning_rate, max_epochs=self.max_epochs,
                    tol=self.tol, random_state=self.random_state,
                    progress=check_bool(self.verbose, "verbose"))

    def _check_transform_input(self, X: npt.ArrayLike) -> np.ndarray:
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)


class DIRandomFourierFeatures(_DIBase):
    """Random Fourier features of the Gaussian kernel, trained by RFDI.

    Starts from the standard random Fourier map of exp(−γ‖x − x′‖²)
    (W ~ N(0, 2γI), b ~ U[0, 2π], as scikit-learn's ``RBFSampler``) and moves
    (W, b) by mini-batch Adam ascent on the discriminant information
    tr((ZᵀCZ + ρI)⁻¹ZᵀCYYᵀCZ) (Al et al., paper eq. 7, Algorithm 2). The map is
    z(x) = √(2/J) cos(Wᵀx + b).

    Parameters
    ----------
    n_components : int, default 100
        J, the number of features.
    gamma : float, default 1.0
        Bandwidth of the initial Gaussian kernel.
    rho : float, default 1e-4
        Ridge ρ of DI.
    batch_size : int or None, default None
        Mini-batch size; None → 1000, or 2J when J > 500 (paper Sect. 5.1).
    max_epochs : int, default 200
    learning_rate : float, default 1e-2
        Initial Adam step; multiplied by 0.1 whenever the mean mini-batch objective
        of an epoch fails to improve by a relative ``tol``; training stops when a
        decay brings no improvement.
    tol : float, default 1e-3
    target : {"auto", "classification", "regression"}, default "auto"
        How to read y: class labels (one-hot, unit-norm columns) or real targets.
        "auto" uses scikit-learn's ``type_of_target``.
    verbose : bool, default False
        tqdm progress bar during fit.
    random_state : None, int or numpy Generator
        Initial map and mini-batch order; fixed seed → identical fit.

    Attributes
    ----------
    random_weights_ : ndarray of shape ``(n_features_in_, n_components)``
        Trained W.
    random_offset_ : ndarray of shape (n_components,)
        Trained b.
    history_ : kernelselect.di.TrainingHistory
        Per-epoch mean objective and learning rate, decays, stop reason, time.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.linear_model import RidgeClassifier
    >>> model = make_pipeline(DIRandomFourierFeatures(100, gamma=0.5, random_state=0),
    ...                       RidgeClassifier())                       # doctest: +SKIP
    """

    @property
    def _n_features_out(self) -> int:
        """J, the number of output features (after fit)."""
        return int(self.random_weights_.shape[1])

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> Self:
        """Learn (W, b) from samples X (n, d) and targets y (n,)."""
        X, y, task = self._fit_common(X, y)
        W, b, hist = train_rfdi(X, y, self.n_components, self.gamma,
                                    **self._train_kwargs(task))
        self.random_weights_, self.random_offset_, self.history_ = W, b, hist
        return self

    def transform(self, X: npt.ArrayLike) -> np.ndarray:
        """z(X) = √(2/J) cos(XW + b), shape (n, n_components)."""
        X = self._check_transform_input(X)
        return _rff_map(X, self.random_weights_, self.random_offset_)


class DINystroem(_DIBase):
    """Nyström features of the Gaussian kernel with landmarks trained by NysDI.

    Landmarks start as a random subset of the training samples and move by
    mini-batch Adam ascent on tr((GᵀCG + ρB)⁻¹GᵀCYYᵀCG), G = K(X, X_r),
    B = K(X_r, X_r) (Al et al., paper eq. 10, Algorithm 1). The map is
    φ(x) = K(x, X_r) B^{-1/2} (pseudo-inverse square root, as scikit-learn's
    ``Nystroem``), whose DI equals the KDI of the landmarks.

    Parameters
    ----------
    n_components : int, default 100
        J, the number of landmarks; capped at the number of training samples
        (``n_components_`` says how many were used).
    gamma : float, default 1.0
        Bandwidth γ of exp(−γ‖x − x′‖²), fixed during training.
    rho, batch_size, max_epochs, learning_rate, tol, target, verbose, random_state
        As for :class:`DIRandomFourierFeatures`.

    Attributes
    ----------
    components_ : ndarray of shape ``(n_components_, n_features_in_)``
        Trained landmarks.
    component_indices_ : ndarray of shape ``(n_components_,)``
        Training rows the landmarks started from.
    normalization_ : ndarray of shape ``(n_components_, n_components_)``
        B^{-1/2} (eigenvalues below 1e-12 treated as 1e-12).
    n_components_ : int
    history_ : kernelselect.di.TrainingHistory
    n_features_in_ : int
    """

    @property
    def _n_features_out(self) -> int:
        """``n_components_``, the number of output features (after fit)."""
        return int(self.n_components_)

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> Self:
        """Learn the landmarks from samples X (n, d) and targets y (n,)."""
        X, y, task = self._fit_common(X, y)
        J = min(self.n_components, X.shape[0])
        R, idx, hist = train_nysdi(X, y, J, self.gamma, **self._train_kwargs(task))
        B = _gaussian_block(R, R, self.gamma)
        lam, U = np.linalg.eigh(0.5 * (B + B.T))
        self.normalization_ = (U / np.sqrt(np.maximum(lam, 1e-12))) @ U.T
        self.components_, self.component_indices_, self.history_ = R, idx, hist
        self.n_components_ = J
        return self

    def transform(self, X: npt.ArrayLike) -> np.ndarray:
        """φ(X) = K(X, X_r) B^{-1/2}, shape ``(n, n_components_)``."""
        X = self._check_transform_input(X)
        return _gaussian_block(X, self.components_, self.gamma) @ self.normalization_
