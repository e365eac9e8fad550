"""LSSVM and kernel ridge estimators, and a kernel-selecting meta-estimator.

scikit-learn compatible (``fit`` / ``predict`` / ``score`` / ``get_params`` /
``set_params``, fitted attributes with a trailing underscore). scikit-learn is an
optional dependency: it is needed only here, for the estimator base classes and
input validation; the solvers (:func:`fit_lssvm`, :func:`fit_krr`) and
cross-validation (:func:`cross_validate_grid`) work without it.

The ridge α is added to the kernel matrix, K + αI (α = μ of paper 004; α = μ·n for
the risk (1/n)Σ(f − y)² + μ‖f‖² of papers 000/002).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, cast

import numpy as np
import numpy.typing as npt

from ._cv import (
    PAPER_004_ALPHAS,
    PAPER_004_GAMMAS,
    ProportionalNystroem,
    cross_validate_grid,
    make_folds,
    paper004_grid,
)
from ._labels import decide, encode_labels
from ._solvers import KernelMachine, check_alphas, check_machine, fit_kernel_machine
from ._typing import RandomState
from ._targets import check_task, prepare_targets
from ._validation import check_kernel, check_matrix, check_positive, check_vector

if TYPE_CHECKING:
    from typing_extensions import Self

    from .operators import Approximation
    from .selection import SelectionResult

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, MetaEstimatorMixin
    from sklearn.base import clone
    from sklearn.utils.metaestimators import available_if
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data

    from ._validation import screen_inputs

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

__all__ = [
    "LSSVMClassifier",
    "KernelRidgeRegressor",
    "KernelSelectionCV",
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


def fit_lssvm(X: npt.ArrayLike, y: npt.ArrayLike, gamma: float,
              alpha: float | npt.ArrayLike = 1.0, *, kernel: str = "gaussian",
              approximation: str | Approximation = "exact",
              random_state: RandomState = None, workers: int | None = None) -> KernelMachine:
    """Train a least-squares SVM with bias (paper 004, eqs. 4–9) for one or more α.

    Solves K_α ρ = 1, K_α ν = y; b = 1ᵀν/1ᵀρ, a = ν − ρb; f(x) = Σ a_i κ(x, x_i) + b.

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,) or (n, t)
        Real targets (±1 for a binary classifier); t columns are solved together.
    gamma : float
    alpha : float or array-like of shape (L,)
        Ridge values; a path is solved from one factorisation.
    kernel : {"gaussian", "laplacian"}
    approximation : {"exact", "nystrom", "rff"} or Approximation
        exact: Cholesky (one α) or one tridiagonal reduction for an α path, O(n³); nystrom:
        Woodbury with the Nyström factor, O(c³ + nck) (paper 004 Alg. 1); rff: primal
        ridge in D dimensions. "mcm" is refused with the reason: the Song–Xu circulant
        stand-in selects kernels but its coefficients do not fit the data under the
        true kernel.
    random_state : int, Generator or None
    workers : int or None

    Returns
    -------
    KernelMachine
        ``coef`` (n_support, t, L), ``intercept`` (t, L); ``decision_function(X_new)``
        evaluates the true kernel against the support points in blocks.

    Examples
    --------
    >>> import numpy as np, kernelselect
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 2)); y = np.sign(X[:, 0])
    >>> m = kernelselect.fit_lssvm(X, y, gamma=0.5, alpha=[0.1, 1.0])
    >>> m.decision_function(X[:3]).shape
    (3, 1, 2)
    """
    X = check_matrix(X, "X", dtype=np.float64, min_rows=2)
    Y = _check_targets(y, X.shape[0])
    return fit_kernel_machine(X, Y, gamma, check_alphas(alpha), kernel=kernel, bias=True,
                              approximation=approximation, random_state=random_state,
                              workers=workers)


def fit_krr(X: npt.ArrayLike, y: npt.ArrayLike, gamma: float,
            alpha: float | npt.ArrayLike = 1.0, *, kernel: str = "gaussian",
            approximation: str | Approximation = "exact",
            random_state: RandomState = None, workers: int | None = None) -> KernelMachine:
    """Train kernel ridge regression (no bias): a = (K + αI)⁻¹y, f(x) = Σ a_i κ(x, x_i).

    Same parameters and return value as :func:`fit_lssvm` (intercepts are zero).
    """
    X = check_matrix(X, "X", dtype=np.float64, min_rows=1)
    Y = _check_targets(y, X.shape[0])
    return fit_kernel_machine(X, Y, gamma, check_alphas(alpha), kernel=kernel, bias=False,
                              approximation=approximation, random_state=random_state,
                              workers=workers)


def _check_targets(y: npt.ArrayLike, n: int) -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] > 1:
        if arr.shape[0] != n:
            raise ValueError(f"y has {arr.shape[0]} rows but X has {n}; they must match.")
        return check_matrix(arr, "y", dtype=np.float64)
    return check_vector(arr, "y", n=n)[:, None]


def _resolve_gamma(gamma: float | None, n_features: int) -> float:
    if gamma is None:
        return 1.0 / n_features
    return check_positive(gamma, "gamma")


class _KernelMachineEstimator(BaseEstimator):
    """Shared parameters and fitting of the two kernel machines."""

    @property
    def _bias(self) -> bool:
        """Whether the machine has an unpenalised bias b."""
        return True

    def __init__(self, kernel: str = "gaussian", gamma: float | None = None,
                 alpha: float = 1.0, approximation: str | Approximation = "exact",
                 random_state: RandomState = None, workers: int | None = None) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.alpha = alpha
        self.approximation = approximation
        self.random_state = random_state
        self.workers = workers

    def _check_params(self, n_features: int) -> tuple[str, float, float]:
        kernel = check_kernel(self.kernel)
        gamma = _resolve_gamma(self.gamma, n_features)
        alpha = check_alphas(self.alpha, "alpha")
        if alpha.size != 1:
            raise ValueError(f"alpha must be a single positive number, got {self.alpha!r}.")
        return kernel, gamma, float(alpha[0])

    def _fit_machine(self, X: np.ndarray, Y: np.ndarray) -> Self:
        kernel, gamma, alpha = self._check_params(X.shape[1])
        self.model_ = fit_kernel_machine(
            np.ascontiguousarray(X, dtype=np.float64), Y, gamma, alpha, kernel=kernel,
            bias=self._bias, approximation=self.approximation,
            random_state=self.random_state, workers=self.workers)
        self.gamma_ = gamma
        m = self.model_
        if m.coef is not None:
            self.dual_coef_ = m.coef[:, :, 0]
        self.intercept_ = m.intercept[:, 0]
        self.support_ = (np.arange(X.shape[0]) if m.support_indices is None
                         else np.asarray(m.support_indices))
        return self

    def _decision(self, X: npt.ArrayLike) -> np.ndarray:
        check_is_fitted(self, "model_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.model_.decision_function(X, workers=self.workers)[:, :, 0]


class LSSVMClassifier(ClassifierMixin, _KernelMachineEstimator):
    """Least-squares SVM classifier with bias (paper 004), binary or one-vs-rest.

    Parameters
    ----------
    kernel : {"gaussian", "laplacian"}, default="gaussian"
    gamma : float or None, default=None
        Kernel parameter; None → 1/n_features (as scikit-learn's rbf kernels).
    alpha : float, default=1.0
        Ridge added to K (α = μ of paper 004).
    approximation : {"exact", "nystrom", "rff"} or Approximation, default="exact"
        How the system is solved (see :func:`fit_lssvm`); predictions use the true
        kernel on new points (RFF: the random features).
    random_state : int, Generator or None
    workers : int or None
        Threads of the kernel computations.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_support, t)
        t = 1 for two classes (classes_[1] ↔ +1), else one column per class.
    intercept_ : ndarray of shape (t,)
    support_ : ndarray of int
        Training rows the model was solved on.
    model_ : KernelMachine
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np, kernelselect
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((80, 2)); y = (X[:, 0] > 0).astype(int)
    >>> clf = kernelselect.LSSVMClassifier(gamma=0.5, alpha=0.1).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    """

    _bias = True

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> Self:
        """Fit on X (n, d) and class labels y (n,)."""
        X, y = cast("tuple[np.ndarray, np.ndarray]", validate_data(self, X, y, dtype=np.float64))
        check_classification_targets(y)
        labels = encode_labels(y)
        self.classes_ = labels.classes
        return self._fit_machine(X, labels.columns())

    def decision_function(self, X: npt.ArrayLike) -> np.ndarray:
        """f(X): shape (n,) for two classes (> 0 → classes_[1]), else (n, n_classes)."""
        F = self._decision(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X: npt.ArrayLike) -> np.ndarray:
        """Class labels: sign of f (binary) or argmax over one-vs-rest f."""
        F = self._decision(X)
        return decide(F, self.classes_)


class KernelRidgeRegressor(RegressorMixin, _KernelMachineEstimator):
    """Kernel ridge regression: a = (K + αI)⁻¹y, without bias by default.

    With ``approximation="exact"`` and ``fit_intercept=False`` it predicts as
    scikit-learn's ``KernelRidge(kernel="rbf", gamma=gamma, alpha=alpha)`` (same α,
    same γ). ``fit_intercept=True`` adds an unpenalised bias b — the LSSVM regression
    of paper 004, [K + αI, 1; 1ᵀ, 0][a; b] = [y; 0], the model whose leave-one-out
    error ``eloo`` computes. Other parameters and attributes as
    :class:`LSSVMClassifier` (``intercept_`` is zero without the bias); y may have
    shape (n, t) for t outputs.
    """

    def __init__(self, kernel: str = "gaussian", gamma: float | None = None,
                 alpha: float = 1.0, approximation: str | Approximation = "exact",
                 random_state: RandomState = None, workers: int | None = None,
                 fit_intercept: bool = False) -> None:
        super().__init__(kernel=kernel, gamma=gamma, alpha=alpha, approximation=approximation,
                         random_state=random_state, workers=workers)
        self.fit_intercept = fit_intercept

    @property
    def _bias(self) -> bool:
        return bool(self.fit_intercept)

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> Self:
        """Fit on X (n, d) and real targets y (n,) or (n, t)."""
        X, y = cast("tuple[np.ndarray, np.ndarray]",
                    validate_data(self, X, y, dtype=np.float64, y_numeric=True,
                                  multi_output=True))
        y = np.asarray(y, dtype=np.float64)
        self._single_output = y.ndim == 1
        Y = y[:, None] if y.ndim == 1 else y
        return self._fit_machine(X, Y)

    def predict(self, X: npt.ArrayLike) -> np.ndarray:
        F = self._decision(X)
        return F[:, 0] if self._single_output else F

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


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
    estimates.

    Parameters
    ----------
    estimator : LSSVMClassifier, KernelRidgeRegressor or None
        The machine to tune (its ``kernel`` is used); None → ``LSSVMClassifier()`` for
        class labels (binary or multi-class, labels of any type),
        ``KernelRidgeRegressor(fit_intercept=True)`` (the LSSVM regression) for a real
        target.
    criterion : str, default="auto"
        "auto" (select_kernel's default for the task), any criterion of
        :func:`kernelselect.select_kernel` ("eloo", "gcv", "kta", ...), or "cv" for
        k-fold cross-validation of the estimator's own machine (LSSVM error rate / KRR
        mean squared error). Binary labels are encoded ±1 for the criteria; with more
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
        {"gamma": γ, "alpha": α} chosen.
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
        est = (KernelRidgeRegressor(fit_intercept=True) if targets.task == "regression"
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
        kernel = check_kernel(est.kernel)
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
                from ._policy import alpha_path

                alphas = alpha_path(Xs.shape[0])
            res = cross_validate_grid(
                Xs, y_cv, gammas=self.gammas, alphas=alphas, kernel=kernel,
                machine="lssvm" if classifier else "krr", approximation=approximation,
                cv=self.cv, random_state=self.random_state, workers=est.workers)
        else:
            from .selection import select_kernel

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
        self.best_params_ = {"gamma": float(res.best_gamma), "alpha": float(res.best_alpha)}
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
