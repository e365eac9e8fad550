"""LSSVM and kernel ridge estimators, and a kernel-selecting meta-estimator.

scikit-learn compatible (``fit`` / ``predict`` / ``score`` / ``get_params`` /
``set_params``, fitted attributes with a trailing underscore). scikit-learn is an
optional dependency: it is needed only here, for the estimator base classes and
input validation; the solvers (:func:`fit_lssvm`, :func:`fit_krr`) and
cross-validation (:func:`cross_validate_grid`) work without it.

The ridge α is added to the kernel matrix, K + αI (α = μ of paper 004; α = μ·n for
the risk (1/n)Σ(f − y)² + μ‖f‖² of papers 000/002).

The code lives in ``_machines`` (the solvers and the two machines),
``_selection_cv`` (:class:`KernelSelectionCV`, :class:`KernelSelectionClassifier`,
:class:`KernelSelectionRegressor`), ``_scaling`` (:class:`Standardizer`) and
``kernelselect._sklearn`` (scikit-learn or its stand-ins); every name is imported,
pickled and documented as ``kernelselect.models.<name>``.
"""

from __future__ import annotations

from .._cv import (
    PAPER_004_ALPHAS,
    PAPER_004_GAMMAS,
    ProportionalNystroem,
    cross_validate_grid,
    make_folds,
    paper004_grid,
)
from .._solvers import KernelMachine
from ._machines import KernelRidgeRegressor, LSSVMClassifier, fit_krr, fit_lssvm
from ._scaling import Standardizer
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
    "paper004_grid",
    "ProportionalNystroem",
    "KernelMachine",
    "PAPER_004_GAMMAS",
    "PAPER_004_ALPHAS",
]

# the public home of the names defined in this package (pickles, reprs, the API docs)
for _obj in (LSSVMClassifier, KernelRidgeRegressor, KernelSelectionCV, KernelSelectionClassifier,
             KernelSelectionRegressor, Standardizer, fit_lssvm, fit_krr):
    _obj.__module__ = __name__
del _obj
