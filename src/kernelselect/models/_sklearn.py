"""scikit-learn's estimator machinery, or stand-ins that explain how to get it.

scikit-learn is an optional dependency: the estimators need it (base classes, input
validation), the solvers (:func:`kernelselect.fit_lssvm`, :func:`kernelselect.fit_krr`)
and cross-validation do not. Without it the stand-in base class refuses to construct
an estimator, naming the install command.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["BaseEstimator", "ClassifierMixin", "RegressorMixin", "MetaEstimatorMixin",
           "available_if", "check_classification_targets", "check_is_fitted", "clone",
           "validate_data"]

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, MetaEstimatorMixin
    from sklearn.base import clone
    from sklearn.utils.metaestimators import available_if
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data

    from .._validation import screen_inputs

    validate_data = screen_inputs(validate_data)
    _SKLEARN_ERROR = None
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    _SKLEARN_ERROR = exc

    class BaseEstimator:  # type: ignore[no-redef]
        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            raise ImportError(
                f"kernelselect.{cls.__name__} needs scikit-learn; install it with "
                "`pip install scikit-learn`. The solvers kernelselect.fit_lssvm / fit_krr "
                "and kernelselect.cross_validate_grid work without it."
            ) from _SKLEARN_ERROR

    class ClassifierMixin:  # type: ignore[no-redef]
        pass

    class RegressorMixin:  # type: ignore[no-redef]
        pass

    class MetaEstimatorMixin:  # type: ignore[no-redef]
        pass

    def available_if(check: Callable[[Any], bool]) -> Callable[[Any], Any]:
        return lambda method: method

    def _needs_sklearn(*args: Any, **kwargs: Any) -> Any:
        raise ImportError("this needs scikit-learn; install it with `pip install "
                          "scikit-learn`.") from _SKLEARN_ERROR

    # reached only from estimator methods, and no estimator can be constructed
    clone = check_classification_targets = check_is_fitted = _needs_sklearn
    validate_data = _needs_sklearn

