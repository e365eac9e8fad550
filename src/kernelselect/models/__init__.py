"""LSSVM and kernel ridge estimators, and a kernel-selecting meta-estimator.

scikit-learn compatible (``fit`` / ``predict`` / ``score`` / ``get_params`` /
``set_params``, fitted attributes with a trailing underscore). scikit-learn is an
optional dependency: it is needed only here, for the estimator base classes and
input validation; the solvers (:func:`fit_lssvm`, :func:`fit_krr`) and
cross-validation (:func:`cross_validate_grid`) work without it.

The ridge α is added to the kernel matrix, K + αI (α = μ of Ding & Liao, PAKDD 2012; α = μ·n for
the risk (1/n)Σ(f − y)² + μ‖f‖² of Ding et al., AAAI 2018 and TNNLS 2020).

The code lives in ``_machines`` (the solvers and the two machines),
``_selection_cv`` (:class:`KernelSelectionCV`, :class:`KernelSelectionClassifier`,
:class:`KernelSelectionRegressor`), ``_scaling`` (:class:`Standardizer`),
``_uncertainty`` (the closed-form leave-one-out, the probabilities' calibration and
the prediction intervals), ``_uncertainty_plots`` (:func:`plot_calibration`,
:func:`plot_intervals`, :func:`reliability`) and
``kernelselect.utils._sklearn`` (scikit-learn or its stand-ins); every name is imported,
pickled and documented as ``kernelselect.models.<name>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._cv import (
    CV_ALPHAS,
    CV_GAMMAS,
    RENAMED,
    ProportionalNystroem,
    cross_validate_grid,
    make_folds,
    nystrom_cv_setting,
)
from ..solvers import KernelMachine
from ..utils._warnings import renamed_attribute
from ._machines import KernelRidgeRegressor, LSSVMClassifier, fit_krr, fit_lssvm
from ._scaling import Standardizer
from ._uncertainty_plots import plot_calibration, plot_intervals, reliability
from ._selection_cv import KernelSelectionClassifier, KernelSelectionCV, KernelSelectionRegressor

__all__ = [
    "LSSVMClassifier",
    "KernelRidgeRegressor",
    "KernelSelectionCV",
    "KernelSelectionClassifier",
    "KernelSelectionRegressor",
    "Standardizer",
    "fit_lssvm",
    "fit_krr",
    "cross_validate_grid",
    "make_folds",
    "nystrom_cv_setting",
    "ProportionalNystroem",
    "KernelMachine",
    "CV_GAMMAS",
    "CV_ALPHAS",
    "plot_calibration",
    "plot_intervals",
    "reliability",
]

# the public home of the names defined in this package (pickles, reprs, the API docs)
for _obj in (LSSVMClassifier, KernelRidgeRegressor, KernelSelectionCV, KernelSelectionClassifier,
             KernelSelectionRegressor, Standardizer, fit_lssvm, fit_krr, plot_calibration,
             plot_intervals, reliability):
    _obj.__module__ = __name__
del _obj

if not TYPE_CHECKING:
    def __getattr__(name: str) -> Any:
        # the former names, with a FutureWarning naming the replacement
        return renamed_attribute(__name__, name, RENAMED, globals())
