"""The LSSVM and kernel ridge machines: the solvers :func:`fit_lssvm` and
:func:`fit_krr` and their scikit-learn estimators (:class:`LSSVMClassifier`,
:class:`KernelRidgeRegressor`).

The ridge α is added to the kernel matrix, K + αI (α = μ of Ding & Liao (PAKDD 2012); α = μ·n for
the risk (1/n)Σ(f − y)² + μ‖f‖² of Ding et al., AAAI 2018 and TNNLS 2020).
"""

from __future__ import annotations

import copy

from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from ._fit_policy import describe_fit, fit_gap, grown_recipe, machine_approximation
from ._dask_input import (check_dask_features, dask_recipe_error, dask_training_data,
                          is_dask_array, label_columns, mean_of)
from ..utils._dask import IN_MEMORY, RowSource
from ..utils._labels import decide, encode_labels
from ..utils._targets import Targets
from ..solvers import KernelMachine, check_alphas, fit_kernel_machine, machine_recipe
from . import _uncertainty
from .._typing import RandomState
from ..utils._validation import (check_bool, check_matrix,
                                 check_vector)
from ..utils._warnings import warn_user
from ..kernels import Kernel, kernel_or_auto
from ..utils._sklearn import (BaseEstimator, ClassifierMixin, RegressorMixin,
                       check_classification_targets, check_is_fitted, validate_data)

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..operators import Approximation

__all__ = ["fit_lssvm", "fit_krr", "LSSVMClassifier", "KernelRidgeRegressor"]


def fit_lssvm(X: npt.ArrayLike, y: npt.ArrayLike, gamma: float,
              alpha: float | npt.ArrayLike = 1.0, *, kernel: str = "gaussian",
              approximation: str | Approximation = "auto",
              random_state: RandomState = None, workers: int | None = None) -> KernelMachine:
    """Train a least-squares SVM with bias (Ding & Liao, PAKDD 2012, equations 4–9) for one or more α.

    Solves K_α ρ = 1, K_α ν = y; b = 1ᵀν/1ᵀρ, a = ν − ρb; f(x) = Σ a_i κ(x, x_i) + b.

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,) or (n, t)
        Real targets (±1 for a binary classifier); t columns are solved together.
    gamma : float, or array-like of shape (d,) for ``kernel="ard"``
    alpha : float or array-like of shape (L,)
        Ridge values; a path is solved from one factorisation.
    kernel : {"gaussian", "laplacian", "ard"}
        ``"ard"``: exp(−Σ_k γ_k (x_k − x′_k)²), one γ per feature (the Gaussian machine on
        X·diag(√γ); new points are scaled the same way).
    approximation : {"auto", "exact", "nystrom-pcg", "nystrom", "rff"} or Approximation
        auto (the default): exact up to 5000 rows, beyond that the Nyström machine by
        conjugate gradients with m = max(√n·ln n, d_eff·max(3, ln d_eff)) centres, d_eff
        the effective dimension measured at this γ and α (at least 500, at most 2·10⁴
        and what the memory limit allows, else an ``ApproximationWarning``;
        :mod:`kernelselect._fit_policy`);
        a row-chunked Dask X: the Nyström machine at every n;
        exact: Cholesky (one α) or one tridiagonal reduction for an α path, O(n³);
        nystrom-pcg or :class:`~kernelselect.NystroemPCG`: ridge regression on the
        Nyström feature map of m centres by preconditioned conjugate gradients over
        streamed passes, O(n·m) time per iteration and O(m²) memory, K(X, centres)
        never held;
        nystrom, rff: ridge regression on the feature map of the stand-in K̃ = VVᵀ
        (the Nyström map or the random features), O(c³ + nck + nk²), solved stably in k
        dimensions; on the training points it is the machine on K̃ (Ding & Liao, PAKDD 2012, Alg. 1).
        "mcm" is refused with the reason: the Song–Xu circulant stand-in selects
        kernels but its coefficients do not fit the data under the true kernel.
    random_state : int, Generator or None
    workers : int or None

    Returns
    -------
    KernelMachine
        ``coef`` (n_support, t, L), ``intercept`` (t, L); ``decision_function(X_new)``
        evaluates the kernel against the support points in blocks (every training
        point for exact, the landmarks for Nyström; random features predict from
        their features).

    Examples
    --------
    >>> import numpy as np, kernelselect
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 2)); y = np.sign(X[:, 0])
    >>> m = kernelselect.fit_lssvm(X, y, gamma=0.5, alpha=[0.1, 1.0])
    >>> m.decision_function(X[:3]).shape
    (3, 1, 2)
    """
    return _fit_function(X, y, gamma, alpha, kernel=kernel, bias=True,
                         approximation=approximation, random_state=random_state,
                         workers=workers)


def fit_krr(X: npt.ArrayLike, y: npt.ArrayLike, gamma: float,
            alpha: float | npt.ArrayLike = 1.0, *, kernel: str = "gaussian",
            approximation: str | Approximation = "auto",
            random_state: RandomState = None, workers: int | None = None) -> KernelMachine:
    """Train kernel ridge regression (no bias): a = (K + αI)⁻¹y, f(x) = Σ a_i κ(x, x_i).

    Same parameters and return value as :func:`fit_lssvm` (intercepts are zero).
    """
    return _fit_function(X, y, gamma, alpha, kernel=kernel, bias=False,
                         approximation=approximation, random_state=random_state,
                         workers=workers)


def _fit_function(X: npt.ArrayLike, y: npt.ArrayLike, gamma: Any, alpha: Any, *, kernel: Any,
                  bias: bool, approximation: Any, random_state: RandomState,
                  workers: int | None) -> KernelMachine:
    """:func:`fit_lssvm` (``bias``) or :func:`fit_krr`: X, y, the kernel and γ checked
    once, then the machine (the LSSVM's bias needs two rows)."""
    X, Y, source = _function_data(X, y, min_rows=2 if bias else 1)
    kernel = Kernel.of(kernel)
    gamma = _resolve_gamma(gamma, np.shape(X)[1], kernel, default=False)
    return _fit(X, Y, gamma, check_alphas(alpha), kernel=kernel, bias=bias,
                approximation=approximation, random_state=random_state, workers=workers,
                source=source)


def _fit(X: Any, Y: Any, gamma: Any, alphas: Any, *, kernel: Kernel, bias: bool,
         approximation: Any, random_state: RandomState, workers: int | None,
         centred: bool = False, source: RowSource = IN_MEMORY,
         loo: bool = False) -> KernelMachine:
    """The machine with ``approximation`` resolved for X's size ("auto", "nystrom-pcg":
    :func:`kernelselect._fit_policy.machine_approximation`); a Dask X (``source``: where
    the checked rows live) is fitted by a recipe with a streamed solver only."""
    n, d = X.shape
    lazy, chunks = source.lazy, source.chunks
    recipe = machine_approximation(approximation, int(n), int(d), int(Y.shape[1]),
                                   workers=workers, in_memory=not lazy, chunks=chunks,
                                   X=X, gamma=gamma, alphas=alphas, kernel=kernel,
                                   random_state=random_state)
    if lazy and not machine_recipe(recipe).dask:
        raise dask_recipe_error(approximation)
    while True:         # "auto": more centres while the model holds too little of d_eff
        model = fit_kernel_machine(X, Y, gamma, alphas, kernel=kernel, bias=bias,
                                   approximation=recipe, random_state=random_state,
                                   workers=workers, centred=centred, loo=loo)
        gap = fit_gap(recipe, model.details, alphas)
        if gap is not None:
            model.details["approximation_gap"] = gap
        recipe = grown_recipe(recipe, gap, int(n), int(d), int(Y.shape[1]), workers, chunks)
        if recipe is None:
            return model


def _function_data(X: Any, y: Any, min_rows: int) -> tuple[Any, Any, RowSource]:
    """X (n, d), Y (n, t) and where they live, for fit_krr / fit_lssvm: checked in
    memory, or kept as row-chunked Dask arrays."""
    if is_dask_array(X) or is_dask_array(y):
        Xd, _, Yd = dask_training_data(X, y)
        return Xd, Yd if Yd.ndim == 2 else Yd[:, None], RowSource.of_dask(Xd)
    X = check_matrix(X, "X", dtype=np.float64, min_rows=min_rows)
    return X, _check_targets(y, X.shape[0]), IN_MEMORY


def _check_targets(y: npt.ArrayLike, n: int) -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] > 1:
        if arr.shape[0] != n:
            raise ValueError(f"y has {arr.shape[0]} rows but X has {n}; they must match.")
        return check_matrix(arr, "y", dtype=np.float64)
    return check_vector(arr, "y", n=n)[:, None]


def _check_fit_intercept(fit_intercept: Any) -> bool | str:
    """False, True or "mean" (numpy booleans accepted), else a ValueError."""
    if isinstance(fit_intercept, (bool, np.bool_)):
        return bool(fit_intercept)
    if isinstance(fit_intercept, str) and fit_intercept == "mean":
        return "mean"
    raise ValueError(f"fit_intercept must be False (no intercept), True (the LSSVM's "
                     f"unpenalised bias) or 'mean' (the training mean of y), got "
                     f"{fit_intercept!r}.")


def _resolve_gamma(gamma: Any, n_features: int, kernel: Kernel, default: bool = True) -> Any:
    """γ of the machine checked for its kernel (:meth:`Kernel.check_gamma`); with
    ``default``, None → 1/n_features (for every feature with the per-feature kernel,
    which takes one γ per feature, shape (n_features,))."""
    if gamma is None and default:
        gamma = kernel.default_gamma(n_features)
    return kernel.check_gamma(gamma, n_features)


def _bare_kernel(kernel: Any, gamma: Any) -> Kernel:
    """The kernel of a machine fitted with its own γ: ``kernel="auto"`` (the machines'
    default, which a selection resolves by the policy) is the isotropic Gaussian kernel
    for a scalar or absent γ and the per-feature kernel for a vector γ, one per feature."""
    if isinstance(kernel_or_auto(kernel), Kernel):
        return Kernel.of(kernel)
    return Kernel.of("ard" if np.ndim(gamma) == 1 else "gaussian")


class _KernelMachineEstimator(BaseEstimator):
    """Shared parameters and fitting of the two kernel machines."""

    @property
    def _bias(self) -> bool:
        """Whether the machine has an unpenalised bias b."""
        return True

    def __init__(self, kernel: str = "auto", gamma: float | None = None,
                 alpha: float = 1.0, approximation: str | Approximation = "auto",
                 random_state: RandomState = None, workers: int | None = None,
                 uncertainty: bool = False) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.alpha = alpha
        self.approximation = approximation
        self.random_state = random_state
        self.workers = workers
        self.uncertainty = uncertainty

    def _check_params(self, n_features: int) -> tuple[Kernel, Any, float]:
        kernel = _bare_kernel(self.kernel, self.gamma)
        gamma = _resolve_gamma(self.gamma, n_features, kernel)
        alpha = check_alphas(self.alpha, "alpha")
        if alpha.size != 1:
            raise ValueError(f"alpha must be a single positive number, got {self.alpha!r}.")
        return kernel, gamma, float(alpha[0])

    def _fit_machine(self, X: Any, Y: Any, offset: np.ndarray | None = None,
                     source: RowSource = IN_MEMORY) -> Self:
        """Solve for Y (n, t) (in memory, or row-chunked Dask arrays: ``source``); with
        ``offset`` (t,), the machine is solved for Y − offset and the offset becomes part
        of its intercept."""
        kernel, gamma, alpha = self._check_params(X.shape[1])
        if not source.lazy:
            X = np.ascontiguousarray(X, dtype=np.float64)
        self.model_ = _fit(
            X, Y if offset is None else Y - offset,
            gamma, np.array([alpha]), kernel=kernel, bias=self._bias,
            approximation=self.approximation, random_state=self.random_state,
            workers=self.workers, centred=offset is not None, source=source,
            loo=check_bool(self.uncertainty, "uncertainty"))
        self._rows = source
        self.gamma_ = gamma
        m = self.model_
        self.alpha_ = float(m.alphas[0])
        how = describe_fit(m.details)
        self.approximation_ = how["approximation"]
        self.n_centres_ = how["n_centres"]
        self.n_iter_ = how["n_iter"]
        self.residual_ = how["residual"]
        self.approximation_gap_ = how["approximation_gap"]
        self.intercept_form_ = m.details.get(
            "intercept_form", "bias" if self._bias else "mean" if offset is not None else "none")
        if offset is not None:
            m.intercept = m.intercept + offset[:, None]
        if m.coef is not None:
            self.dual_coef_ = m.coef[:, :, 0]
        self.intercept_ = m.intercept[:, 0]
        self.support_ = m.support_indices
        # what the closed-form leave-one-out reads on first use (models._uncertainty):
        # the training rows (the exact machine holds them anyway), targets and ȳ
        cache = self._uncertainty_cache()
        cache["source"] = (X, Y, offset)
        parts = m.details.get("leave_one_out") or {}
        inverse = parts.pop("inverse", None)      # L⁻¹ of the fit's factor (uncertainty=True)
        if inverse is not None and self._keeps_smoother():
            cache["smoother"] = _uncertainty.ExactSmoother.from_inverse(
                np.ascontiguousarray(X, dtype=np.float64), m.gamma, m.kernel,
                self.intercept_form_, inverse, parts["diag"])
        del inverse
        if self.uncertainty:
            self._loo_values()
        return self

    def _decision(self, X: npt.ArrayLike) -> Any:
        """f(X) of shape (n, t); a Dask array for a Dask X (in its chunks of rows, moved to
        begin at the passes' 64-row blocks)."""
        check_is_fitted(self, "model_")
        if is_dask_array(X):
            if self.model_.conditioning is None:
                raise ValueError(
                    f"this {type(self).__name__} was fitted with approximation="
                    f"{self.approximation_!r} and predicts on X in memory; pass "
                    "X.compute(), or fit on a Dask X (the Nyström machine).")
            X = check_dask_features(self, X)
        else:
            X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.model_.decision_function(X, workers=self.workers)[:, :, 0]

    # -- uncertainty without a refit (models._uncertainty) -------------------------
    def _loo(self) -> tuple[np.ndarray, Any]:
        """(leave-one-out decision values (n, t), the exact smoother where the jackknife+
        and return_std use it, else None)."""
        return self._loo_values(), self._exact_smoother()

    def _keeps_smoother(self) -> bool:
        """Whether the machine offers the jackknife+ and return_std: an exact regressor
        of at most JACKKNIFE_PLUS_MAX_N rows (they hold its n × n factor)."""
        n = self._uncertainty_cache()["source"][1].shape[0]
        return (isinstance(self, RegressorMixin) and _uncertainty.is_exact(self.model_)
                and n <= _uncertainty.JACKKNIFE_PLUS_MAX_N)

    def _exact_smoother(self) -> Any:
        """The exact regressor's :class:`~kernelselect.models._uncertainty.ExactSmoother`
        (built on first use, or kept from the leave-one-out), or None."""
        if not self._keeps_smoother():
            return None
        cache = self._uncertainty_cache()
        if "smoother" not in cache:
            X, _, _ = cache["source"]
            cache["smoother"] = _uncertainty.ExactSmoother(
                np.ascontiguousarray(X, dtype=np.float64), self.model_.gamma,
                self.model_.kernel, self.alpha_, self.intercept_form_)
        return cache["smoother"]

    def _loo_values(self) -> np.ndarray:
        """The leave-one-out decision values (n, t), computed on first use (or in ``fit``
        with ``uncertainty=True``) from the fitted machine and cached."""
        cache = self._uncertainty_cache()
        if "loo" not in cache:
            X, Y, offset = cache["source"]
            if X.shape[0] < 2:
                raise ValueError("the leave-one-out values behind predict_proba, "
                                 "predict_interval and return_std need at least 2 training "
                                 f"rows; this {type(self).__name__} was fitted on "
                                 f"{X.shape[0]}.")
            F, smoother = _uncertainty.loo_decision(self.model_, X, Y, self.alpha_,
                                                    self.intercept_form_, offset, self._rows)
            cache["loo"] = F
            if smoother is not None and self._keeps_smoother():
                cache["smoother"] = smoother
            if not _uncertainty.is_exact(self.model_):
                # a feature-map machine predicts from its centres: its n leave-one-out
                # values replace the training rows it held for them
                cache["source"] = (None, Y, offset)
        return cast(np.ndarray, cache["loo"])

    def _targets(self) -> tuple[np.ndarray, np.ndarray | None]:
        """(the fitted targets Y (n, t) in memory, uncentred; ȳ of the "mean" form)."""
        _, Y, offset = self._uncertainty_cache()["source"]
        return np.asarray(Y.compute() if self._rows.lazy else Y, dtype=np.float64), offset

    def _uncertainty_cache(self) -> dict[str, Any]:
        """What the uncertainty methods computed, kept on the fitted machine (a refit
        starts afresh; the estimator's own attributes do not change at prediction)."""
        check_is_fitted(self, "model_")
        return cast("dict[str, Any]", self.model_.__dict__.setdefault("_uncertainty", {}))

    def __getstate__(self) -> dict[str, Any]:
        """The pickled state leaves out an exact machine's n × n factor (recomputed from
        its support, the training rows, on first use, to the same values)."""
        state = cast("dict[str, Any]", super().__getstate__())
        model = state.get("model_")
        cache = getattr(model, "__dict__", {}).get("_uncertainty", {})
        if "smoother" in cache:
            model = copy.copy(model)
            model.__dict__["_uncertainty"] = {k: v for k, v in cache.items()
                                              if k != "smoother"}
            state["model_"] = model
        return state

    @property
    def loo_method_(self) -> str:
        """How ``loo_decision_`` (and ``loo_residuals_``) are computed: "closed form",
        equal to n refits; or "gcv" for a conjugate-gradient machine of more than
        :data:`~kernelselect.models._uncertainty.LOO_EXACT_MAX_N` rows, the training
        residuals divided by 1 − d_eff/n (generalised cross-validation's form: one pass
        over the rows where the closed form takes two of 4·n·k² flops)."""
        n = self._uncertainty_cache()["source"][1].shape[0]
        return _uncertainty.loo_method(self.model_, n)

    @property
    def loo_decision_(self) -> np.ndarray:
        """ndarray of shape (n, t): at each training row, the prediction of the machine
        refitted without that row (closed form, no refit; computed on first use:
        exact O(n³), Nyström and random features two passes over the rows). For a
        classifier the one-vs-rest decision values (t = 1 for two classes)."""
        return self._loo_values()

    def _dask_fit_data(self, X: Any, y: Any) -> tuple[Any, np.ndarray | None, Any]:
        """A Dask X and y checked (``dask_training_data``); sets ``n_features_in_``."""
        Xd, y_local, y_dask = dask_training_data(X, y)
        self.n_features_in_ = int(Xd.shape[1])
        return Xd, y_local, y_dask


def _fitted_on(estimator: Any, X: Any) -> None:
    """What ``validate_data(reset=True)`` records of an X the caller checked: the number
    of features (a checked X is an array, so it has no feature names)."""
    estimator.n_features_in_ = int(X.shape[1])
    estimator.__dict__.pop("feature_names_in_", None)


def _dask_rows(F: Any, func: Any, columns: int) -> Any:
    """``func`` (an (b, t) → (b, columns) map) over the row chunks of a Dask F."""
    return F.map_blocks(func, chunks=(F.chunks[0], (columns,)), dtype=np.float64)


class LSSVMClassifier(ClassifierMixin, _KernelMachineEstimator):
    """Least-squares SVM classifier with bias (Ding & Liao, PAKDD 2012), binary or one-vs-rest.

    Parameters
    ----------
    kernel : {"auto", "gaussian", "laplacian", "ard"}, default="auto"
        ``"ard"``: exp(−Σ_k γ_k (x_k − x′_k)²), one γ per feature. ``"auto"``: inside
        a selection (:class:`KernelSelectionCV` and its kin) the policy's kernel
        (:func:`kernelselect.select_kernel`); fitted bare, the isotropic Gaussian
        kernel for a scalar or absent γ and ``"ard"`` for a vector γ.
    gamma : float, array of shape (n_features,) or None, default=None
        Kernel parameter; None → 1/n_features (as scikit-learn's rbf kernels); one
        value per feature (or a scalar for all) with ``kernel="ard"``.
    alpha : float, default=1.0
        Ridge added to K (α = μ of Ding & Liao (PAKDD 2012)).
    approximation : {"auto", "exact", "nystrom-pcg", "nystrom", "rff"} or Approximation, \
default="auto"
        The kernel matrix the machine is solved on (see :func:`fit_lssvm`): "auto" is
        exact up to 5000 rows and the Nyström machine by conjugate gradients
        (:class:`~kernelselect.NystroemPCG`) beyond. Exact models predict with the
        kernel against every training point; Nyström and RFF models are linear in
        their feature map (the kernel against the centres times a fixed map, or the
        random features), so that on the training points they are the machine on the
        stand-in the criteria score.
    random_state : int, Generator or None
    workers : int or None
        Threads of the kernel computations.
    uncertainty : bool, default=False
        Compute during ``fit`` the leave-one-out values that ``predict_proba`` and
        ``predict_interval`` read, as ``SVC(probability=True)`` calibrates in its fit.
        An exact machine then takes them from its own Cholesky factor, one triangular
        inverse (n³/3 flops) instead of a second factorisation on first use, and keeps n
        values, not the n × n factor. False: on first use.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_support, t)
        Coefficients of the kernel against the support points (every training
        point, or the Nyström landmarks; absent for RFF); t = 1 for two classes
        (classes_[1] ↔ +1), else one column per class.
    intercept_ : ndarray of shape (t,)
    support_ : ndarray of int or None
        Training rows of the support points (None when they are not training rows:
        k-means landmarks, random features).
    model_ : KernelMachine
        The fitted machine; ``model_.details`` holds how it was solved.
    approximation_ : str
        How it was solved: "exact", "nystrom-pcg", "nystrom" or "rff".
    n_centres_ : int or None
        Centres (landmarks) of a Nyström model.
    n_iter_ : int or None
        Conjugate-gradient iterations of a "nystrom-pcg" fit.
    residual_ : float or None
        The relative residual of the normal equations that fit reached (largest over
        the outputs).
    approximation_gap_ : dict or None
        For the Nyström machine of ``approximation="auto"`` (beyond the exact limit), how
        far it may be from the exact model: the centres used and asked for by the rule
        (``n_centres``, ``n_centres_asked``, ``centres_rule``: "rule" or "memory cap"),
        the effective dimension tr K(K + αI)⁻¹ measured at (γ, α)
        (``effective_dimension``), the fitted model's own (``model_effective_dimension``)
        and their ratio ``captured`` (≤ 1; 1 when nothing is lost). None otherwise.
    alpha_ : float
        The ridge of the fitted model: ``alpha``, or the candidate of a
        ``NystroemPCG(loo_alphas=...)`` recipe with the smallest leave-one-out error.
    intercept_form_ : str
        The constant term of the fitted model: "bias" (an unpenalised b), "mean" (the
        training mean of y, the rest left to the kernel) or "none"; the
        ``fit_intercept`` asked for, unless a ``NystroemPCG(loo_intercept=True)``
        recipe chose the bias by leave-one-out.
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
        """Fit on X (n, d) and class labels y (n,); X and y may be row-chunked Dask
        arrays (the Nyström machine, X never gathered)."""
        if is_dask_array(X) or is_dask_array(y):
            Xd, y_local, y_dask = self._dask_fit_data(X, y)
            if y_local is None:
                raise ValueError("y must be 1-D class labels of shape (n,).")
            check_classification_targets(y_local)
            self.classes_ = encode_labels(y_local).classes
            del y_local                 # the solve streams the label columns
            return self._fit_machine(Xd, label_columns(y_dask, self.classes_), None,
                                     RowSource.of_dask(Xd))
        X, y = cast("tuple[np.ndarray, np.ndarray]", validate_data(self, X, y, dtype=np.float64))
        check_classification_targets(y)
        labels = encode_labels(y)
        self.classes_ = labels.classes
        return self._fit_machine(X, labels.columns())

    def _fit_validated(self, X: Any, targets: Targets, y_dask: Any = None) -> Self:
        """Fit on X and class labels checked and encoded by the caller (a selecting
        estimator's door): X float64 (or a checked row-chunked Dask array) and its
        :class:`~kernelselect.utils._targets.Targets`; ``y_dask`` holds the labels in
        X's chunks when X is a Dask array."""
        _fitted_on(self, X)
        assert targets.classes is not None            # class labels always have classes
        self.classes_ = targets.classes
        if y_dask is not None:          # the solve streams the label columns
            return self._fit_machine(X, label_columns(y_dask, targets.classes), None,
                                     RowSource.of_dask(X))
        return self._fit_machine(X, targets.y[:, None] if targets.Y is None else targets.Y)

    def decision_function(self, X: npt.ArrayLike) -> np.ndarray:
        """f(X): shape (n,) for two classes (> 0 → classes_[1]), else (n, n_classes)."""
        F = self._decision(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X: npt.ArrayLike) -> np.ndarray:
        """Class labels: sign of f (binary) or argmax over one-vs-rest f."""
        F = self._decision(X)
        if is_dask_array(F):
            return F.map_blocks(decide, self.classes_, drop_axis=1, dtype=self.classes_.dtype)
        return decide(F, self.classes_)

    # -- calibrated probabilities (models._uncertainty) ------------------------------
    @property
    def calibration_(self) -> _uncertainty.Calibration:
        """The softmax (Platt's sigmoid for two classes) of the decision values fitted on
        the leave-one-out decision values: its ``slope`` a, p ∝ exp(a·f) (``intercepts``
        are zeros, so that the most probable class is the predicted one)."""
        cache = self._uncertainty_cache()
        if "calibration" not in cache:
            F = self._loo_values()
            Y = self._targets()[0]
            codes = (Y[:, 0] > 0).astype(np.intp) if Y.shape[1] == 1 else np.argmax(Y, axis=1)
            cache["calibration"] = _uncertainty.fit_calibration(F, codes, len(self.classes_))
        return cast(_uncertainty.Calibration, cache["calibration"])

    def predict_proba(self, X: npt.ArrayLike) -> Any:
        """Calibrated class probabilities, shape (n, n_classes) in ``classes_`` order,
        rows summing to 1 (a Dask array for a Dask X).

        p(c | x) ∝ exp(a·f_c(x)), a softmax of the decision values whose slope a is
        fitted by maximum likelihood on the machine's closed-form leave-one-out decision
        values (for two classes Platt's sigmoid 1/(1 + exp(−a·f)), Platt 1999; with more,
        temperature scaling of the one-vs-rest columns); no refit, and the most probable
        class is the one :meth:`predict` names. The user guide's page "Uncertainty" has
        the method and its measured calibration."""
        return np.exp(self.predict_log_proba(X)) if not is_dask_array(X) else (
            _dask_rows(self._decision(X), self.calibration_.proba, len(self.classes_)))

    def predict_log_proba(self, X: npt.ArrayLike) -> Any:
        """The logarithm of :meth:`predict_proba`, computed without underflow."""
        cal = self.calibration_
        F = self._decision(X)
        if is_dask_array(F):
            return _dask_rows(F, cal.log_proba, len(self.classes_))
        return cal.log_proba(F)


#: a target column is "mostly its mean" when |ȳ| > UNCENTRED_RATIO·std(y): the
#: constant then carries more than 90 % of its mean square ȳ² + var(y) (9/(9 + 1))
UNCENTRED_RATIO = 3.0


def warn_uncentred_target(Y: np.ndarray) -> None:
    """Warn when a target is mostly its mean: |ȳ| > :data:`UNCENTRED_RATIO`·std(y) for
    some column of Y (n, t).

    Without an intercept f(x) = Σ a_i κ(x, x_i) decays to 0 away from the training
    points and the ridge pulls f towards 0, not towards ȳ, so such a target loses
    most of its level on new points."""
    mean = Y.mean(axis=0)
    spread = Y.std(axis=0)
    far = np.abs(mean) > UNCENTRED_RATIO * spread
    if np.any(far):
        k = int(np.argmax(far))
        warn_user(f"KernelRidgeRegressor(fit_intercept=False) on a target whose mean "
                  f"{mean[k]:.4g} is more than {UNCENTRED_RATIO:g} times its standard deviation "
                  f"{spread[k]:.4g}: without "
                  "an intercept, predictions away from the training points fall towards 0, "
                  "not towards the mean. Pass fit_intercept='mean' (kernel ridge regression "
                  "of y - mean(y)) or fit_intercept=True (the LSSVM bias), or centre y.",
                  UserWarning)


class KernelRidgeRegressor(RegressorMixin, _KernelMachineEstimator):
    """Kernel ridge regression: a = (K + αI)⁻¹y, without bias by default.

    ``fit_intercept`` chooses the constant term b of f(x) = Σ a_i κ(x, x_i) + b:

    * ``False``: b = 0, a = (K + αI)⁻¹y. With ``approximation="exact"`` it predicts as
      scikit-learn's ``KernelRidge(kernel="rbf", gamma=gamma, alpha=alpha)`` (same α,
      same γ).
    * ``True``: an unpenalised bias — the LSSVM regression of Ding & Liao (PAKDD 2012),
      [K + αI, 1; 1ᵀ, 0][a; b] = [y; 0], the model whose leave-one-out error ``eloo``
      and k-fold error ``ekfold`` compute.
    * ``"mean"``: b = ȳ, the training mean of y, and a = (K + αI)⁻¹(y − ȳ1) —
      kernel ridge regression of the centred target (the Gaussian-process posterior
      mean with the constant prior mean ȳ; Rasmussen & Williams, *Gaussian Processes
      for Machine Learning*, MIT Press 2006, §2.2 and §2.7).

    The two intercepts differ where the kernel row κ(x, ·) vanishes, i.e. away from
    the training points, where f(x) → b. The LSSVM bias b = 1ᵀK_α⁻¹y / 1ᵀK_α⁻¹1 is a
    generalised-least-squares estimate of the constant whose effective sample size
    is 1ᵀK_α⁻¹1; for wide kernels (small γ) and small α that size is a few points
    and b can lie many standard deviations of y away from its mean (the kernel part
    carries the opposite offset on the training points), so predictions drift
    towards that b as x leaves the training data. ``"mean"`` falls back to ȳ there.

    Other parameters and attributes as :class:`LSSVMClassifier` (``intercept_`` is
    zero without the bias, ȳ per output with ``"mean"``); y may have shape (n, t)
    for t outputs.

    Warns
    -----
    UserWarning
        With ``fit_intercept=False`` (the default, as scikit-learn's ``KernelRidge``) on
        a target column whose mean exceeds 3 standard deviations
        (:func:`warn_uncentred_target`): away from the training points the machine
        predicts towards 0, not towards ȳ; ``fit_intercept="mean"`` is the fix.
    """

    def __init__(self, kernel: str = "auto", gamma: float | None = None,
                 alpha: float = 1.0, approximation: str | Approximation = "auto",
                 random_state: RandomState = None, workers: int | None = None,
                 fit_intercept: bool | str = False, uncertainty: bool = False) -> None:
        super().__init__(kernel=kernel, gamma=gamma, alpha=alpha, approximation=approximation,
                         random_state=random_state, workers=workers, uncertainty=uncertainty)
        self.fit_intercept = fit_intercept

    @property
    def _bias(self) -> bool:
        return _check_fit_intercept(self.fit_intercept) is True

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike) -> Self:
        """Fit on X (n, d) and real targets y (n,) or (n, t); X and y may be
        row-chunked Dask arrays (the Nyström machine, X never gathered)."""
        intercept = _check_fit_intercept(self.fit_intercept)
        if is_dask_array(X) or is_dask_array(y):
            Xd, y_local, y_dask = self._dask_fit_data(X, y)
            self._single_output = y_dask.ndim == 1
            Yd = y_dask[:, None] if y_dask.ndim == 1 else y_dask.astype(np.float64)
            offset = None
            if intercept == "mean":     # ȳ from the gathered vector: the in-memory fit's bits
                offset = (mean_of(Yd) if y_local is None else
                          np.asarray(y_local, dtype=np.float64)[:, None].mean(axis=0))
            del y_local                 # the solve streams Yd: n values less on the client
            return self._fit_machine(Xd, Yd.astype(np.float64), offset,
                                     RowSource.of_dask(Xd))
        X, y = cast("tuple[np.ndarray, np.ndarray]",
                    validate_data(self, X, y, dtype=np.float64, y_numeric=True,
                                  multi_output=True))
        return self._fit_target(X, np.asarray(y, dtype=np.float64), intercept)

    def _fit_validated(self, X: Any, targets: Targets, y_dask: Any = None) -> Self:
        """Fit on X and a real target checked by the caller (a selecting estimator's
        door): X float64 (or a checked row-chunked Dask array) and its
        :class:`~kernelselect.utils._targets.Targets`; ``y_dask`` holds the target in
        X's chunks when X is a Dask array, and ``targets.y`` may then hold its mean
        only (the solve streams y_dask)."""
        intercept = _check_fit_intercept(self.fit_intercept)
        _fitted_on(self, X)
        if y_dask is None:
            return self._fit_target(X, targets.y, intercept)
        self._single_output = y_dask.ndim == 1
        Yd = y_dask.astype(np.float64)[:, None]
        offset = targets.y[:, None].mean(axis=0) if intercept == "mean" else None
        return self._fit_machine(X, Yd, offset, RowSource.of_dask(X))

    def _fit_target(self, X: np.ndarray, y: np.ndarray, intercept: bool | str) -> Self:
        """The in-memory fit on a checked X (n, d) and float64 y (n,) or (n, t)."""
        self._single_output = y.ndim == 1
        Y = y[:, None] if y.ndim == 1 else y
        self._fit_machine(X, Y, Y.mean(axis=0) if intercept == "mean" else None)
        if intercept is False:          # after the fit: bad parameters are named first
            warn_uncentred_target(Y)
        return self

    def predict(self, X: npt.ArrayLike, return_std: bool = False) -> Any:
        """f(X), shape (n,) or (n, t); with ``return_std`` also the Gaussian-process
        predictive standard deviation of a new target at each row, as scikit-learn's
        ``GaussianProcessRegressor.predict(X, return_std=True)`` but for the observation
        (its noise α·σ̂² included): the model y − ȳ ~ N(0, σ²(K + αI)) whose evidence the
        per-feature selection (``kernel="ard"``) maximises, σ² profiled out,
        var = σ̂²(1 + α − k(x)ᵀ(K + αI)⁻¹k(x)). Exact machines of at most
        :data:`~kernelselect.models._uncertainty.JACKKNIFE_PLUS_MAX_N` rows (it holds the
        n × n factor, computed on first use as for :meth:`predict_interval`). Prefer
        :meth:`predict_interval` for coverage: it holds without the Gaussian model."""
        if return_std:
            check_bool(return_std, "return_std")
            smoother = self._exact_smoother()      # no leave-one-out passes to refuse
            if smoother is None:
                raise ValueError(
                    f"return_std=True needs an exact machine of at most "
                    f"{_uncertainty.JACKKNIFE_PLUS_MAX_N} rows (it holds the n x n factor); "
                    f"this one is {self.approximation_!r} on {self._targets()[0].shape[0]} rows: use "
                    "predict_interval.")
            Xc = np.ascontiguousarray(validate_data(self, X, reset=False, dtype=np.float64))
            F = self._decision(Xc)
            Y, offset = self._targets()
            std = smoother.predictive_std(Xc, Y, offset, self.alpha_)
            return (F[:, 0], std[:, 0]) if self._single_output else (F, std)
        F = self._decision(X)
        return F[:, 0] if self._single_output else F

    # -- prediction intervals (models._uncertainty) ------------------------------------
    @property
    def loo_residuals_(self) -> np.ndarray:
        """ndarray of shape (n, t): y_i minus the prediction at x_i of the machine
        refitted without row i (closed form, no refit; computed on first use)."""
        return self._targets()[0] - self._loo_values()

    def predict_interval(self, X: npt.ArrayLike, coverage: float = 0.9,
                         method: str = "auto") -> Any:
        """Prediction intervals from the closed-form leave-one-out, without a refit.

        Parameters
        ----------
        X : array-like of shape (n, d) or a row-chunked Dask array
        coverage : float, default=0.9
            The target probability 1 − α that a new y lies in its interval.
        method : {"auto", "jackknife+", "jackknife"}, default="auto"
            "jackknife+" (Barber, Candès, Ramdas & Tibshirani, Ann. Statist. 2021):
            [q⁻{f₋ᵢ(x) − abs(r_i)}, q⁺{f₋ᵢ(x) + abs(r_i)}] over the n leave-one-out models
            f₋ᵢ, which covers with probability at least 1 − 2α whatever the data and in
            practice about 1 − α; offered for exact machines of at most
            :data:`~kernelselect.models._uncertainty.JACKKNIFE_PLUS_MAX_N` rows (it
            holds the n × n factor and costs O(n²) per new row). "jackknife": f(x) ± the
            ⌈(1 − α)(n + 1)⌉-th smallest abs(r_i), O(1) per row beyond the prediction, at
            every n and approximation; its coverage rests on the machine's stability
            (measured in the user guide's page "Uncertainty"). "auto": jackknife+ where
            offered, else jackknife.

        Returns
        -------
        ndarray of shape (n, 2), or (n, t, 2) for t outputs
            [lower, upper] per row (± inf where coverage·(n + 1) exceeds n); a Dask array
            for a Dask X.
        """
        c = _uncertainty.check_coverage(coverage)
        if method not in _uncertainty.INTERVAL_METHODS:
            raise ValueError(f"method must be one of {_uncertainty.INTERVAL_METHODS}, "
                             f"got {method!r}.")
        R = self.loo_residuals_
        keeps = self._keeps_smoother()
        if method == "jackknife+" and not keeps:
            raise ValueError(
                f"method='jackknife+' needs an exact machine of at most "
                f"{_uncertainty.JACKKNIFE_PLUS_MAX_N} rows; this one is "
                f"{self.approximation_!r} on {R.shape[0]} rows: use method='jackknife'.")
        plus = method != "jackknife" and keeps
        smoother = self._exact_smoother() if plus else None
        delta = None
        if plus and self.intercept_form_ == "mean":
            Y, offset = self._targets()
            delta = -(Y - offset) / (R.shape[0] - 1.0)
        single = self._single_output

        def bounds(pred: np.ndarray, x: np.ndarray | None = None) -> np.ndarray:
            if plus:
                assert smoother is not None and x is not None
                out = _uncertainty.jackknife_plus_interval(smoother, x, pred, R, delta, c)
            else:
                out = _uncertainty.jackknife_interval(pred, R, c)
            return out[:, 0, :] if single else out

        if is_dask_array(X):          # a Dask X: the Nyström machine, so the jackknife
            F = self._decision(X)
            if single:
                return F.map_blocks(bounds, chunks=(F.chunks[0], (2,)), dtype=np.float64)
            return F.map_blocks(bounds, chunks=(F.chunks[0], F.chunks[1], (2,)), new_axis=2,
                                dtype=np.float64)
        Xc = validate_data(self, X, reset=False, dtype=np.float64) if plus else X
        pred = self._decision(Xc)
        return bounds(pred, np.ascontiguousarray(Xc) if plus else None)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
