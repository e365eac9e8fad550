"""The kernel-selecting meta-estimator :class:`KernelSelectionCV`: choose (γ, α) by
a selection criterion or k-fold cross-validation, then refit the machine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from .._cv import cross_validate_grid
from .._labels import encode_labels
from .._policy import alpha_path
from .._solvers import check_machine
from .._typing import RandomState
from .._targets import check_task, prepare_targets
from .._validation import check_kernel
from ..kernels import is_ard
from ..selection import select_kernel
from ._machines import (KernelRidgeRegressor, LSSVMClassifier, _check_fit_intercept,
                        _KernelMachineEstimator)
from .._sklearn import (BaseEstimator, MetaEstimatorMixin, available_if,
                       check_classification_targets, check_is_fitted, clone, validate_data)

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..operators import Approximation
    from ..selection import SelectionResult

__all__ = ["KernelSelectionCV"]


def _refit_has_decision_function(self: KernelSelectionCV) -> bool:
    est = getattr(self, "best_estimator_", None)
    if est is None:
        est = self.estimator if self.estimator is not None else LSSVMClassifier
    return hasattr(est, "decision_function")


class KernelSelectionCV(MetaEstimatorMixin, BaseEstimator):
    """Choose (γ, α) by a selection criterion or by k-fold CV, then refit.

    With no arguments it selects the way :func:`kernelselect.select_kernel` does with
    its defaults (the same task rule, criterion, α path, approximation, grid
    extension and standardisation) and refits the machine whose error that criterion
    estimates — for a real target with the training mean of y as its constant term
    (see ``estimator``).

    Parameters
    ----------
    estimator : LSSVMClassifier, KernelRidgeRegressor or None
        The machine to tune (its ``kernel`` is used); None → ``LSSVMClassifier()`` for
        class labels (binary or multi-class, labels of any type),
        ``KernelRidgeRegressor(fit_intercept="mean")`` for a real target: kernel ridge
        regression of y − ȳ with ȳ added back. On the training points it fits as the
        LSSVM regression that the criteria score (``fit_intercept=True``), but away
        from them it predicts ȳ instead of the LSSVM bias, which for the wide kernels
        and small α the criteria often choose can lie far outside the range of y (see
        :class:`KernelRidgeRegressor`). Pass ``KernelRidgeRegressor(fit_intercept=True)``
        for the LSSVM itself.
    criterion : str, default="auto"
        "auto" (select_kernel's default for the task), any criterion of
        :func:`kernelselect.select_kernel` ("eloo", "gcv", "kta", ...), or "cv" for
        k-fold cross-validation of the estimator's own machine (LSSVM error rate / KRR
        mean squared error, with the regressor's ``fit_intercept``: none, the LSSVM
        bias, or each training fold's mean of y). Binary labels are encoded ±1 for the criteria; with more
        classes ``eloo_multiclass`` sees one-vs-rest columns and the other criteria the
        class codes 0, …, C−1 as a real target, while "cv" scores the one-vs-rest
        classifier itself.
    approximation : str or Approximation, default="auto"
        The kernel-matrix stand-in used during selection ("auto", "exact",
        "nystrom", ...; for "cv": "exact" (also for "auto") or "nystrom" per fold,
        paper 004's approximate CV). The final refit uses the estimator's own
        ``approximation``.
    gammas : array-like or None
        Candidate γ; None → select_kernel's median-heuristic grid (criteria) or paper
        004's grid 2^{−15,−13,…,9} (``criterion="cv"``).
    alphas : array-like or None, default=None
        Candidate ridge values; None → select_kernel's automatic path n·10^k,
        k = −6, −5.5, …, 0.
    cv : int, splitter or (train, test) pairs, default=5
        Folds for ``criterion="cv"``.
    random_state : int, Generator or None
    task : {"auto", "binary", "multiclass", "regression"}, default="auto"
        What y is (:func:`kernelselect._targets.detect_task` for "auto"); ignored when
        ``estimator`` is given (its type says).
    standardize : bool, default=True
        Scale every feature to zero mean and unit variance before selecting; the refit
        estimator is then a ``Pipeline(StandardScaler(), machine)``.
    refine : bool, default=False
        Passed to :func:`kernelselect.select_kernel`.

    Attributes
    ----------
    best_params_ : dict
        {"gamma": γ, "alpha": α} chosen (γ of shape (n_features,) for an estimator with
        ``kernel="ard"``).
    best_score_ : float
        The criterion's value there (its direction in ``selection_.directions``; for
        "cv" the mean held-out error or MSE, lower is better).
    selection_ : SelectionResult
        The whole criterion surface.
    cv_results_ : dict of arrays
        One entry per (γ, α): ``param_gamma``, ``param_alpha``, ``criterion_value``,
        ``rank_criterion`` and, for "cv", ``split{k}_test_loss`` and ``mean_test_loss``.
    best_estimator_ : estimator
        Refit on all of X, y with ``best_params_`` (a Pipeline with the scaler when
        ``standardize``).
    task_ : str
        "binary", "multiclass" or "regression".
    classes_ : ndarray (classifiers only)
        The original labels.
    n_features_in_ : int
    """

    def __init__(self, estimator: LSSVMClassifier | KernelRidgeRegressor | None = None, *,
                 criterion: str = "auto", approximation: str | Approximation = "auto",
                 gammas: npt.ArrayLike | None = None, alphas: npt.ArrayLike | None = None,
                 cv: int | None = 5, random_state: RandomState = None, task: str = "auto",
                 standardize: bool = True, refine: bool = False) -> None:
        self.estimator = estimator
        self.criterion = criterion
        self.approximation = approximation
        self.gammas = gammas
        self.alphas = alphas
        self.cv = cv
        self.random_state = random_state
        self.task = task
        self.standardize = standardize
        self.refine = refine

    def _task_and_estimator(self, y: np.ndarray) -> tuple[Any, _KernelMachineEstimator]:
        if self.estimator is not None:
            est = clone(self.estimator)
            if not isinstance(est, _KernelMachineEstimator):
                raise TypeError(
                    f"estimator must be an LSSVMClassifier or KernelRidgeRegressor, got {est!r}."
                )
            if isinstance(est, LSSVMClassifier):
                targets = prepare_targets(y, "auto")
                if targets.task == "regression":   # whole numbers that are not codes
                    targets = prepare_targets(y, "multiclass")
            else:
                targets = prepare_targets(y, "regression")
            return targets, est
        targets = prepare_targets(y, check_task(self.task))
        est = (KernelRidgeRegressor(fit_intercept="mean") if targets.task == "regression"
               else LSSVMClassifier())
        return targets, est

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> Self:
        X, y = cast("tuple[np.ndarray, np.ndarray]",
                    validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2,
                                  y_numeric=isinstance(self.estimator, KernelRidgeRegressor)))
        if isinstance(self.estimator, LSSVMClassifier):
            check_classification_targets(y)
        targets, est = self._task_and_estimator(y)
        self.task_ = targets.task
        classifier = targets.task != "regression"
        if classifier:
            self.classes_ = targets.classes
        kernel = "ard" if is_ard(est.kernel) else check_kernel(est.kernel)
        if kernel == "ard" and self.criterion == "cv":
            raise ValueError("criterion='cv' evaluates a grid of one γ; with an estimator of "
                             "kernel='ard' use criterion='auto' (the per-feature gradient "
                             "search of select_kernel).")
        # the final refit's feasibility (memory, approximation) before the selection runs
        try:
            check_machine(est.approximation, *X.shape)
        except ValueError as exc:
            raise ValueError(
                f"the final refit of {type(est).__name__}(approximation="
                f"{est.approximation!r}) on all {X.shape[0]} samples would fail, so the "
                f"selection was not started: {exc} The refit uses the estimator's own "
                f"approximation: pass e.g. {type(est).__name__}(approximation='nystrom')."
            ) from None
        if self.standardize:
            from sklearn.preprocessing import StandardScaler

            scaler = StandardScaler().fit(X)
            Xs = scaler.transform(X)
        else:
            scaler, Xs = None, X
        if self.criterion == "cv":
            # class labels of any type → codes 0..C−1 (the error rate is unchanged)
            y_cv = encode_labels(y).codes.astype(np.float64) if classifier else targets.y
            approximation = "exact" if self.approximation == "auto" else self.approximation
            alphas = self.alphas
            if alphas is None:
                alphas = alpha_path(Xs.shape[0])
            intercept = None if classifier else _check_fit_intercept(
                cast(KernelRidgeRegressor, est).fit_intercept)
            res = cross_validate_grid(
                Xs, y_cv, gammas=self.gammas, alphas=alphas, kernel=kernel,
                machine="lssvm" if classifier or intercept is True else "krr",
                loss="error" if classifier else "mse", approximation=approximation,
                cv=self.cv, random_state=self.random_state, workers=est.workers,
                center=intercept == "mean")
        else:
            res = select_kernel(Xs, y, kernel=kernel, gammas=self.gammas, alphas=self.alphas,
                                criterion=self.criterion, approximation=self.approximation,
                                random_state=self.random_state, workers=est.workers,
                                standardize=False, task=targets.task, refine=self.refine)
        self.selection_ = res
        name = res.criteria[0]
        best = res.best[name]
        if best["index"] is None:
            raise ValueError(
                f"criterion {name!r} is undefined (NaN) at every grid point; widen the grid "
                "or choose another criterion."
            )
        best_gamma = (np.asarray(res.best_gamma, dtype=np.float64) if kernel == "ard"
                      else float(res.best_gamma))     # one γ per feature for "ard"
        self.best_params_ = {"gamma": best_gamma, "alpha": float(res.best_alpha)}
        self.best_score_ = best["value"]
        self.cv_results_ = self._results(res, name)
        est.set_params(**self.best_params_)
        if scaler is not None:
            from sklearn.pipeline import Pipeline

            est = Pipeline([("standardscaler", scaler), ("machine", est)])
            est.steps[1][1].fit(Xs, y if classifier else targets.y)
        else:
            est.fit(X, y if classifier else targets.y)
        self.best_estimator_ = est
        return self

    @staticmethod
    def _results(res: SelectionResult, name: str) -> dict[str, Any]:
        G, A = np.meshgrid(res.gammas, res.alphas, indexing="ij")
        values = res.curves[name].ravel()
        order = values if res.directions[name] == "min" else -values
        filled = np.where(np.isfinite(order), order, np.inf)
        ranks = np.empty(values.size, dtype=np.int64)
        ranks[np.argsort(filled, kind="stable")] = np.arange(1, values.size + 1)
        out = {"param_gamma": G.ravel(), "param_alpha": A.ravel(), "criterion_value": values,
               "rank_criterion": ranks, "params": [{"gamma": float(g), "alpha": float(a)}
                                                   for g, a in zip(G.ravel(), A.ravel())]}
        if "fold_losses" in res.details:
            fl = res.details["fold_losses"]
            for k in range(fl.shape[0]):
                out[f"split{k}_test_loss"] = fl[k].ravel()
            out["mean_test_loss"] = fl.mean(axis=0).ravel()
            out["std_test_loss"] = fl.std(axis=0).ravel()
        return out

    def predict(self, X: npt.ArrayLike) -> np.ndarray:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(_refit_has_decision_function)
    def decision_function(self, X: npt.ArrayLike) -> np.ndarray:
        """decision_function of the refit classifier (absent for regressors)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    def score(self, X: npt.ArrayLike, y: npt.ArrayLike) -> float:
        """Accuracy (classifiers) or R² (regressors) of the refit estimator."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        if self.estimator is None:          # classifier or regressor, decided by y at fit
            return tags
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        return tags
