"""scikit-learn's estimator machinery, or stand-ins that explain how to get it.

scikit-learn (≥ 1.6, for ``validate_data``) is an optional dependency: the estimators
and transformers need it (base classes, input validation), the solvers
(:func:`kernelselect.fit_lssvm`, :func:`kernelselect.fit_krr`), cross-validation and
the selection do not. Without it the stand-in base class refuses to construct an
estimator, naming the install command. Every estimator module imports scikit-learn
through here.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["BaseEstimator", "ClassifierMixin", "RegressorMixin", "MetaEstimatorMixin",
           "TransformerMixin", "OneToOneFeatureMixin", "ClassNamePrefixFeaturesOutMixin",
           "available_if", "check_classification_targets", "check_is_fitted", "clone",
           "type_of_target", "validate_data"]

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, MetaEstimatorMixin
    from sklearn.base import TransformerMixin, clone
    from sklearn.base import ClassNamePrefixFeaturesOutMixin, OneToOneFeatureMixin
    from sklearn.utils.metaestimators import available_if
    from sklearn.utils.multiclass import check_classification_targets, type_of_target
    from sklearn.utils.validation import check_is_fitted, validate_data

    from ._validation import screen_inputs

    validate_data = screen_inputs(validate_data)
    _SKLEARN_ERROR = None
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    _SKLEARN_ERROR = exc

    class BaseEstimator:  # type: ignore[no-redef]
        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            raise ImportError(
                f"kernelselect.{cls.__name__} needs scikit-learn ≥ 1.6 ({_SKLEARN_ERROR}); "
                "install it with `pip install scikit-learn` or `pip install "
                "kernelselect[sklearn]`. The solvers kernelselect.fit_lssvm / fit_krr, "
                "kernelselect.cross_validate_grid and select_kernel work without it."
            ) from _SKLEARN_ERROR

    # the mixins add nothing here: no estimator can be constructed without scikit-learn;
    # they stay distinct classes so that the estimators' bases are still valid
    for _mixin in ("ClassifierMixin", "RegressorMixin", "MetaEstimatorMixin", "TransformerMixin",
                   "OneToOneFeatureMixin", "ClassNamePrefixFeaturesOutMixin"):
        globals()[_mixin] = type(_mixin, (), {"__module__": __name__})

    def available_if(check: Callable[[Any], bool]) -> Callable[[Any], Any]:
        return lambda method: method

    def _needs_sklearn(*args: Any, **kwargs: Any) -> Any:
        raise ImportError("this needs scikit-learn; install it with `pip install "
                          "scikit-learn`.") from _SKLEARN_ERROR

    # reached only from estimator methods, and no estimator can be constructed
    clone = check_classification_targets = check_is_fitted = type_of_target = _needs_sklearn
    validate_data = _needs_sklearn

