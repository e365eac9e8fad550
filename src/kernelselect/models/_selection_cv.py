"""The kernel-selecting meta-estimators: choose (γ, α) by a selection criterion or
k-fold cross-validation, then refit the machine.

:class:`KernelSelectionClassifier` and :class:`KernelSelectionRegressor` are the two
tasks' estimators (as scikit-learn's ``RidgeClassifierCV`` / ``RidgeCV``);
:class:`KernelSelectionCV` decides the task from y. All three share one core
(:class:`_KernelSelection`).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from ._cv import _cross_validate
from ._fit_policy import (centres_rule, describe_fit, machine_approximation,
                          pilot_effective_dimension)
from .. import _policy as _rules
from .._policy import alpha_path
from ..solvers import MachineRecipe, check_machine, machine_recipe
from ..utils._targets import Targets, check_task, prepare_targets
from .._typing import RandomState
from ..utils._dask import IN_MEMORY, RowSource
from ..utils._resources import dask_client_limit, memory_fit_limit
from ..utils._progress import check_progress
from ..utils._validation import check_bool
from ..utils._warnings import warn_user
from ..kernels import Kernel, kernel_or_auto
from ..selection._driver import (_PER_FEATURE_CHECKPOINT, _gamma_grid, _resolve_kernel,
                                 _select_validated)
from ..solvers._checkpoint import CGCheckpoint, check_checkpoint, checkpoint_to
from ._machines import (KernelRidgeRegressor, LSSVMClassifier, _check_fit_intercept,
                        _KernelMachineEstimator)
from ._dask_input import (check_dask_features, dask_recipe_error, dask_training_data,
                          is_dask_array)
from ._scaling import Standardizer
from ..utils._sklearn import (BaseEstimator, ClassifierMixin, MetaEstimatorMixin, RegressorMixin,
                        available_if, check_classification_targets, check_is_fitted, clone,
                        validate_data)

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..operators import Approximation
    from ..selection import SelectionResult

__all__ = ["KernelSelectionCV", "KernelSelectionClassifier", "KernelSelectionRegressor",
           "selection_checkpoint"]


def selection_checkpoint(path: str) -> str:
    """Where a checkpointed selection estimator (or ``kernelselect predict``) saves its
    selection beside the refit's solve at ``path``: ``path + ".selection.json"``."""
    return path + ".selection.json"


def _refit_has_decision_function(self: _KernelSelection) -> bool:
    est = getattr(self, "best_estimator_", None)
    if est is None:
        est = self.estimator if self.estimator is not None else self._default_machine
    return hasattr(est, "decision_function")


def _refit_has_predict_interval(self: _KernelSelection) -> bool:
    est: Any = getattr(self, "best_estimator_", None)
    if est is None:
        est = self.estimator if self.estimator is not None else self._default_machine
    if hasattr(est, "steps"):
        est = est[-1]
    return hasattr(est, "predict_interval")


def _rank_greater_is_better(scores: np.ndarray) -> np.ndarray:
    """GridSearchCV's ranks of ``scores`` (greater is better): ties share the smallest
    rank, NaN ties with the worst."""
    from scipy.stats import rankdata

    if scores.size == 0 or np.all(np.isnan(scores)):
        return np.ones(scores.size, dtype=np.int32)
    filled = np.nan_to_num(scores, nan=np.nanmin(scores) - 1.0)
    return rankdata(-filled, method="min").astype(np.int32)


class _KernelSelection(MetaEstimatorMixin, BaseEstimator):
    """The shared core: parameters, the selection, ``cv_results_`` and the refit.

    Subclasses say which machines they accept and what y is (:meth:`_targets`)."""

    #: the machine refitted when ``estimator`` is None and y gives no other choice
    _default_machine: type = LSSVMClassifier

    def __init__(self, estimator: LSSVMClassifier | KernelRidgeRegressor | None = None, *,
                 criterion: str = "auto", approximation: str | Approximation = "auto",
                 gammas: npt.ArrayLike | None = None, alphas: npt.ArrayLike | None = None,
                 cv: int | None = 5, random_state: RandomState = None,
                 standardize: bool = True, refine: bool = False,
                 progress: bool | float = False, checkpoint: Any = None) -> None:
        self.estimator = estimator
        self.criterion = criterion
        self.approximation = approximation
        self.gammas = gammas
        self.alphas = alphas
        self.cv = cv
        self.random_state = random_state
        self.standardize = standardize
        self.refine = refine
        self.progress = progress
        self.checkpoint = checkpoint

    # -- what y is, and the machine that fits it --------------------------------
    def _targets(self, y: np.ndarray) -> tuple[Targets, _KernelMachineEstimator]:
        raise NotImplementedError

    def _y_numeric(self) -> bool:
        return isinstance(self.estimator, KernelRidgeRegressor)

    @staticmethod
    def _class_targets(y: np.ndarray) -> Targets:
        """Class labels: binary or multi-class (whole numbers that the task rule would
        call a measured quantity are classes here)."""
        check_classification_targets(y)
        targets = prepare_targets(y, "auto")
        if targets.task == "regression":
            targets = prepare_targets(y, "multiclass")
        return targets

    def _checked_estimator(self, kinds: tuple[type, ...]) -> _KernelMachineEstimator | None:
        if self.estimator is None:
            return None
        est = clone(self.estimator)
        if not isinstance(est, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise TypeError(f"{type(self).__name__}: estimator must be {names} (or None), "
                            f"got {est!r}.")
        return cast(_KernelMachineEstimator, est)

    # -- fit ----------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> Self:
        """Select (γ, α) on X (n, d) and y (n,), then refit the machine on all of it.

        X and y may be row-chunked Dask arrays: the selection streams over the chunks
        (as :func:`kernelselect.select_kernel` on Dask input) and the refit is the
        Nyström machine by conjugate gradients, one task per chunk per pass; X is never
        gathered for the refit, and ``predict`` on a Dask X returns a Dask array. Where
        ``kernel="auto"`` chooses one γ per feature (a real target of at most
        ``kernelselect._policy.ARD_AUTO_MAX_N`` rows) the selection gathers X and is the
        one of the same rows in memory."""
        standardize = check_bool(self.standardize, "standardize")
        refine = check_bool(self.refine, "refine")
        progress = check_progress(self.progress)
        checkpoint = self._checked_checkpoint()
        X, y, y_dask = self._training_data(X, y)
        source = IN_MEMORY if y_dask is None else RowSource.of_dask(X)
        lazy = source.lazy
        targets, est = self._targets(y)
        self.task_ = targets.task
        classifier = targets.task != "regression"
        if classifier:
            self.classes_ = targets.classes
        kernel, kernel_rule = self._kernel(X, y, est, targets)
        est.set_params(kernel=kernel.value)
        self.best_kernel_ = kernel.value
        if kernel.per_feature and self.criterion == "cv":
            raise ValueError("criterion='cv' evaluates a grid of one γ; with an estimator of "
                             "kernel='ard' use criterion='auto' (the per-feature gradient "
                             "search of select_kernel).")
        if kernel.per_feature and checkpoint is not None and kernel_rule is None:
            raise ValueError(_PER_FEATURE_CHECKPOINT)     # asked for: as select_kernel
        # kernel="auto"'s per-feature search (at most 10⁴ rows) is not checkpointed
        selection_file = (None if checkpoint is None or kernel.per_feature
                          else selection_checkpoint(checkpoint))
        n, d = X.shape
        outputs = 1 if targets.classes is None or len(targets.classes) <= 2 else len(
            targets.classes)
        chunks = source.chunks
        _check_refit(est, n, d, outputs, chunks)
        # X and y are checked: the scaler, the selection and the refit take them as they are
        scaler = Standardizer()._fit_validated(X, source) if standardize else None
        Xs = X if scaler is None else scaler._transform_validated(X)
        selection_approx = self.approximation
        if scaler is not None:      # landmark points given in X's units are scaled as X is
            selection_approx = _rescaled(selection_approx, scaler.transform)
            est.set_params(approximation=_rescaled(est.approximation, scaler.transform))
        res = self._select(Xs, y, y_dask, targets, est, kernel, selection_approx, refine,
                           progress, auto=kernel_rule is not None, checkpoint=selection_file)
        self.selection_ = res
        if checkpoint is not None:        # the k-fold route of a regressor without
            res.details["checkpoint"] = {    # intercept at ≤ 400 rows is not saved
                "selection": None if res.criteria[0] == "cv" else selection_file,
                "refit": checkpoint}
        if kernel_rule is not None:
            res.details["kernel_rule"] = kernel_rule
            res.details.setdefault("rules", {})["kernel"] = kernel_rule
        name = res.criteria[0]
        if res.best[name]["index"] is None:
            raise ValueError(
                f"criterion {name!r} is undefined (NaN) at every grid point; widen the grid "
                "or choose another criterion."
            )
        self.cv_results_, self.best_index_ = self._results(res, name)
        self.best_params_ = dict(self.cv_results_["params"][self.best_index_])
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        if kernel.per_feature:    # the per-feature search's choice, from the grid's best point
            self.best_params_ = {"gamma": np.asarray(res.best_gamma, dtype=np.float64),
                                 "alpha": float(res.best_alpha)}
        est.set_params(**self.best_params_)
        if est.random_state is None:        # the refit's centres follow random_state too
            est.set_params(random_state=self.random_state)
        if isinstance(est.approximation, str) and est.approximation == "auto":
            self._size_automatic_refit(est, res, Xs, outputs, chunks, kernel,
                                       default_regressor=self.estimator is None
                                       and not classifier, progress=progress)
        del y                       # the refit takes the prepared targets
        if lazy:    # it streams y_dask and needs ȳ only: n gathered values less on the client
            targets = replace(targets, y=targets.y[:, None].mean(axis=0), Y=None)
        # a Nyström solve whose recipe names no checkpoint saves to ours (an enclosing
        # checkpoint_to is left to reach it when this estimator has none)
        with checkpoint_to(checkpoint) if checkpoint is not None else nullcontext():
            est._fit_validated(Xs, targets, y_dask)
        if scaler is not None:
            from sklearn.pipeline import Pipeline

            self.best_estimator_: Any = Pipeline([("standardizer", scaler), ("machine", est)])
        else:
            self.best_estimator_ = est
        res.details["refit"] = refit_details(
            est, name, float(self.cv_results_["criterion_value"][self.best_index_]))
        if "refit_centres_rule" in res.details:
            res.details["refit"]["centres_rule"] = res.details.pop("refit_centres_rule")
            res.details["refit"]["centres_budget"] = res.details.pop("refit_centres_budget")
        return self

    def _checked_checkpoint(self) -> str | None:
        """``checkpoint`` checked (a file path whose folder exists, or None); a
        checkpointed fit needs a fixed ``random_state``, so that the rerun draws the
        same landmarks and centres, and a criterion (``criterion="cv"``'s folds are
        not saved)."""
        path = check_checkpoint(self.checkpoint)
        if path is None:
            return None
        state = self.random_state
        if isinstance(state, bool) or not isinstance(state, (int, np.integer)):
            raise ValueError(f"checkpoint= needs random_state as an int (got {state!r}), so "
                             "that a rerun draws the same landmarks and centres and can "
                             "resume: pass random_state=0, or drop checkpoint=.")
        if isinstance(self.criterion, str) and self.criterion.strip().lower() == "cv":
            raise ValueError("checkpoint= saves a criterion's selection and the refit's "
                             "solve; criterion='cv' (a machine refitted per fold, in memory) "
                             "is not checkpointed: drop checkpoint= or use a criterion "
                             "(criterion='auto').")
        check_checkpoint(selection_checkpoint(path))
        CGCheckpoint(path).check_path()     # a foreign file: refused before the selection
        return path

    def _training_data(self, X: Any, y: Any) -> tuple[Any, np.ndarray, Any]:
        """(X, y, y_dask): X and y checked; on Dask input X stays a Dask array, y is
        gathered (the targets are small) and ``y_dask`` keeps its chunks, else None."""
        if not (is_dask_array(X) or is_dask_array(y)):
            X, y = cast("tuple[np.ndarray, np.ndarray]",
                        validate_data(self, X, y, dtype=np.float64, order="C",
                                      ensure_min_samples=2, y_numeric=self._y_numeric()))
            return X, y, None
        if self.criterion == "cv":
            raise ValueError("criterion='cv' refits a machine per fold and needs X in "
                             "memory; with Dask input use a selection criterion "
                             "(criterion='auto'), or pass X.compute().")
        X, y_local, y_dask = dask_training_data(X, y)
        if y_local is None:
            raise ValueError(f"y must be 1-D of shape ({X.shape[0]},), got a 2-D "
                             "Dask array.")
        self.n_features_in_ = int(X.shape[1])
        return X, y_local, y_dask

    def _kernel(self, X: Any, y: Any, est: _KernelMachineEstimator,
                targets: Targets) -> tuple[Kernel, str | None]:
        """The machine's kernel, ``kernel="auto"`` resolved as :func:`select_kernel`
        resolves it, with the reason; the isotropic Gaussian kernel where the selection
        scores a grid of one γ (``criterion="cv"``) or a regressor without constant
        term (the per-feature search scores the LSSVM with its bias)."""
        if isinstance(kernel_or_auto(est.kernel), Kernel):
            return Kernel.of(est.kernel), None
        if self.criterion == "cv" or (isinstance(est, KernelRidgeRegressor)
                                      and _check_fit_intercept(est.fit_intercept) is False):
            return Kernel.of("gaussian"), (
                "the isotropic Gaussian kernel (kernel='auto'): criterion='cv' and a "
                "regressor without constant term score a grid of one γ")
        return _resolve_kernel(X, y, "auto", targets.task, self.approximation, self.criterion,
                               targets)

    def _select(self, Xs: Any, y: np.ndarray, y_dask: Any, targets: Targets,
                est: _KernelMachineEstimator, kernel: str, approximation: Any, refine: bool,
                progress: bool | float = False, auto: bool = False,
                checkpoint: str | None = None) -> SelectionResult:
        """The selection on the (standardised) rows checked at :meth:`fit`'s door
        (``y_dask``: y in the chunks of a Dask X, else None): k-fold cross-validation of
        the machine (``criterion="cv"``) or the selection of :func:`select_kernel`."""
        classifier = targets.task != "regression"
        criterion, rule = self.criterion, None
        if not classifier and criterion != "cv":
            kfold = _rules.no_intercept_kfold(
                Xs.shape[0], y_dask is not None,
                isinstance(self.approximation, str) and self.approximation == "auto")
            criterion, rule = criterion_for_intercept(
                criterion, cast(KernelRidgeRegressor, est).fit_intercept, kernel, kfold)
        if criterion != "cv":
            res = _select_validated(Xs, y, targets, y_dask=y_dask, kernel=kernel,
                                    gammas=self.gammas, alphas=self.alphas,
                                    criterion=criterion, approximation=approximation,
                                    random_state=self.random_state, workers=est.workers,
                                    progress=progress, refine=refine, auto=auto,
                                    checkpoint=checkpoint)
            if rule is not None:
                res.details["criterion_rule"] = rule
                res.details.setdefault("rules", {})["criterion"] = rule
            return res
        # class labels of any type → codes 0..C−1 (the error rate is unchanged): the
        # prepared codes, or the ±1 of two classes as 0, 1
        y_cv = (targets.y > 0).astype(np.float64) if targets.task == "binary" else targets.y
        alphas = self.alphas
        if alphas is None:
            alphas = alpha_path(Xs.shape[0])
        intercept = None if classifier else _check_fit_intercept(
            cast(KernelRidgeRegressor, est).fit_intercept)
        gammas = self.gammas
        if gammas is None and rule is not None:    # chosen for the machine: the default grid
            gammas = _gamma_grid(Xs, kernel, self.random_state)
        res = _cross_validate(
            Xs, y_cv, gammas=gammas, alphas=alphas, kernel=kernel,
            machine="lssvm" if classifier or intercept is True else "krr",
            loss="error" if classifier else "mse",
            approximation="exact" if self.approximation == "auto" else approximation,
            cv=self.cv, random_state=self.random_state, workers=est.workers,
            center=intercept == "mean", progress=progress)
        if rule is not None:
            res.details["criterion_rule"] = rule
            res.details.setdefault("rules", {})["criterion"] = rule
        return res

    def _size_automatic_refit(self, est: _KernelMachineEstimator, res: SelectionResult,
                              Xs: Any, outputs: int, chunks: tuple[int, ...] | None,
                              kernel: str, default_regressor: bool,
                              progress: bool | float = False) -> None:
        """Give an ``approximation="auto"`` machine its recipe for the refit: centres
        from the effective dimension measured at the chosen point (models._fit_policy),
        and the final model's α chosen again, among the selection's candidates, by its
        own exact leave-one-out error where that is affordable; for the default
        regressor (ȳ, the rest left to the kernel) also whether an unpenalised bias
        fits better."""
        n, d = Xs.shape
        lazy = chunks is not None
        d_eff = _selected_deff(res)
        if d_eff is None and not _rules.fit_exact(n, not lazy):
            d_eff = pilot_effective_dimension(Xs, self.best_params_["gamma"],
                                              self.best_params_["alpha"], kernel,
                                              self.random_state)
        res.details["refit_effective_dimension"] = d_eff
        recipe = machine_approximation("auto", n, d, outputs, d_eff, est.workers,
                                       in_memory=not lazy, chunks=chunks,
                                       loo_alphas=np.asarray(res.alphas, dtype=np.float64),
                                       loo_intercept=default_regressor)
        if isinstance(recipe, MachineRecipe):
            if "progress" in recipe.get_params():     # the conjugate-gradient iterations
                recipe.set_params(progress=progress)
            est.set_params(approximation=recipe)
            res.details["refit_centres_rule"] = centres_rule(recipe, n, d_eff)
            # the budget the cap held m to: the client's part on Dask
            res.details["refit_centres_budget"] = (dask_client_limit() if lazy
                                                   else memory_fit_limit())

    @staticmethod
    def _results(res: SelectionResult, name: str) -> tuple[dict[str, Any], int]:
        """``cv_results_`` (one entry per (γ, α) of the grid, γ-major, then the refined
        point when refinement moved it) and the index of the chosen point."""
        G, A = np.meshgrid(res.gammas, res.alphas, indexing="ij")
        gammas, alphas = G.ravel(), A.ravel()
        values = res.curves[name].ravel().astype(np.float64)
        i, j = res.best[name]["index"]
        best = i * res.alphas.size + j
        refined = res.details.get("refine", {})
        extra = bool(refined.get("improved"))
        if extra:
            gammas = np.append(gammas, refined["gamma"])
            alphas = np.append(alphas, refined["alpha"])
            values = np.append(values, refined["value"])
            best = values.size - 1
        sign = 1.0 if res.directions[name] == "max" else -1.0
        scores = sign * values
        ranks = _rank_greater_is_better(scores)
        out: dict[str, Any] = {
            "params": [{"gamma": float(g), "alpha": float(a)} for g, a in zip(gammas, alphas)],
            "param_gamma": gammas, "param_alpha": alphas,
            "mean_test_score": scores, "rank_test_score": ranks,
            "criterion_value": values, "rank_criterion": ranks,
        }
        if "fold_losses" in res.details and not extra:
            fl = res.details["fold_losses"]
            for k in range(fl.shape[0]):
                out[f"split{k}_test_score"] = -fl[k].ravel()
                out[f"split{k}_test_loss"] = fl[k].ravel()
            out["std_test_score"] = fl.std(axis=0).ravel()
            out["mean_test_loss"] = fl.mean(axis=0).ravel()
            out["std_test_loss"] = out["std_test_score"]
        return out, int(best)

    # -- use ----------------------------------------------------------------------
    def _checked_input(self, X: npt.ArrayLike) -> Any:
        """X checked against what the selection was fitted on, naming this estimator
        (a Dask X stays lazy)."""
        check_is_fitted(self, "best_estimator_")
        if is_dask_array(X):
            return check_dask_features(self, X)
        return validate_data(self, X, reset=False, dtype=np.float64)

    def predict(self, X: npt.ArrayLike, return_std: bool = False) -> Any:
        """Predictions of the refit machine: class labels or real values; with
        ``return_std`` (a regressor) also the Gaussian-process predictive standard
        deviation of :meth:`KernelRidgeRegressor.predict`, ``(mean, std)``."""
        if return_std is not False:
            machine, Xm = self._final_machine(X)
            if not hasattr(machine, "predict_interval"):
                raise TypeError(f"return_std is offered by regressors; this "
                                f"{type(self).__name__} refitted a "
                                f"{type(machine).__name__}.")
            return machine.predict(Xm, return_std=return_std)
        X = self._checked_input(X)
        return self.best_estimator_.predict(X)

    @available_if(_refit_has_decision_function)
    def decision_function(self, X: npt.ArrayLike) -> np.ndarray:
        """decision_function of the refit classifier (absent for regressors): shape
        (n,) for two classes (> 0 → ``classes_[1]``), else (n, n_classes)."""
        X = self._checked_input(X)
        return self.best_estimator_.decision_function(X)

    def score(self, X: npt.ArrayLike, y: npt.ArrayLike) -> float:
        """Accuracy (classifiers) or R² (regressors) of the refit estimator (Dask X or
        y: the predictions and y are computed, n values each)."""
        X = self._checked_input(X)
        if is_dask_array(X) or is_dask_array(y):
            from sklearn.metrics import accuracy_score, r2_score

            from ..utils._dask import compute

            pred = np.asarray(compute(self.predict(X)) if is_dask_array(X) else self.predict(X))
            truth = np.asarray(compute(y) if is_dask_array(y) else y)
            if getattr(self, "task_", "regression") == "regression":
                return float(r2_score(truth, pred))
            return float(accuracy_score(truth, pred))
        return float(self.best_estimator_.score(X, y))

    # -- uncertainty of the refit machine, without a refit (models._uncertainty) ------
    def _final_machine(self, X: npt.ArrayLike) -> tuple[Any, Any]:
        """(the refit machine, X as it sees it: standardised when ``standardize``)."""
        X = self._checked_input(X)
        est = self.best_estimator_
        if hasattr(est, "steps"):                 # Pipeline(Standardizer, machine)
            return est[-1], est[:-1].transform(X)
        return est, X

    @available_if(_refit_has_decision_function)
    def predict_proba(self, X: npt.ArrayLike) -> Any:
        """Calibrated class probabilities of the refit classifier, (n, n_classes) in
        ``classes_`` order (:meth:`LSSVMClassifier.predict_proba`: a softmax, Platt's
        sigmoid for two classes, fitted on the machine's closed-form leave-one-out
        decision values; no refit)."""
        machine, Xm = self._final_machine(X)
        return machine.predict_proba(Xm)

    @available_if(_refit_has_decision_function)
    def predict_log_proba(self, X: npt.ArrayLike) -> Any:
        """The logarithm of :meth:`predict_proba`."""
        machine, Xm = self._final_machine(X)
        return machine.predict_log_proba(Xm)

    @available_if(_refit_has_predict_interval)
    def predict_interval(self, X: npt.ArrayLike, coverage: float = 0.9,
                         method: str = "auto") -> Any:
        """Prediction intervals of the refit regressor, (n, 2) of [lower, upper]
        (:meth:`KernelRidgeRegressor.predict_interval`: jackknife+ from the closed-form
        leave-one-out of an exact machine, the jackknife elsewhere; no refit)."""
        machine, Xm = self._final_machine(X)
        return machine.predict_interval(Xm, coverage=coverage, method=method)


_SHARED_PARAMETERS = """\
    criterion : str, default="auto"
        "auto" (select_kernel's default for the task), any criterion of
        :func:`kernelselect.select_kernel` ("eloo", "gcv", "kta", ...), or "cv" for
        k-fold cross-validation of the estimator's own machine (LSSVM error rate / KRR
        mean squared error, with the regressor's ``fit_intercept``: none, the LSSVM
        bias, or each training fold's mean of y). Binary labels are encoded ±1 for the
        criteria; with more classes ``eloo_multiclass`` sees one-vs-rest columns and
        the other criteria the class codes 0, …, C−1 as a real target, while "cv"
        scores the one-vs-rest classifier itself.
    approximation : str or Approximation, default="auto"
        The kernel-matrix stand-in used during selection ("auto", "exact",
        "nystrom", ...; for "cv": "exact" (also for "auto") or "nystrom" per fold,
        Ding & Liao (PAKDD 2012)'s approximate CV). The final refit uses the estimator's own
        ``approximation``; its default "auto" is the exact machine up to 5000 rows and
        beyond them the Nyström machine (:class:`~kernelselect.NystroemPCG`) with
        m = max(√n·ln n, 3·d_eff) centres, d_eff the effective dimension the selection
        measured at its choice, and at most what the memory limit allows (on Dask input,
        the Nyström machine at every n, m within the client's and each task's memory).
        Where n·m² is affordable its α is chosen again among the selection's candidates
        by the final model's exact leave-one-out error (``loo_alphas``), else it is the
        selected α, solved by conjugate gradients.
    gammas : array-like or None
        Candidate γ; None → select_kernel's median-heuristic grid (criteria) or paper
        004's grid 2^{−15,−13,…,9} (``criterion="cv"``).
    alphas : array-like or None, default=None
        Candidate ridge values; None → select_kernel's automatic path n·10^k,
        k = −6, −5.5, …, 0.
    cv : int, splitter or (train, test) pairs, default=5
        Folds for ``criterion="cv"``.
    random_state : int, Generator or None
    standardize : bool, default=True
        Scale every feature to zero mean and unit variance before selecting
        (:class:`~kernelselect.models.Standardizer`, safe at any magnitude); the refit
        estimator is then a ``Pipeline(Standardizer(), machine)``.
    refine : bool, default=False
        Passed to :func:`kernelselect.select_kernel`.
    progress : bool or float, default=False
        Show progress on stderr, as :func:`kernelselect.select_kernel`'s ``progress``
        (True: from the start; a number t: once a step has run t seconds): the
        selection's operator builds (the folds for ``criterion="cv"``), then the
        conjugate-gradient iterations of an automatically sized Nyström refit
        (:class:`~kernelselect.NystroemPCG`).
    checkpoint : str, os.PathLike or None, default=None
        Make a long fit resumable: the selection saves every operator it evaluates to
        ``checkpoint + ".selection.json"`` (as :func:`kernelselect.select_kernel`'s
        ``checkpoint``) and the refit's Nyström conjugate-gradient solve its state to
        ``checkpoint`` after every iteration (as :class:`~kernelselect.NystroemPCG`'s,
        unless the estimator's recipe names its own file). Fitting the same estimator on
        the same data again after an interruption (a killed process, a lost Dask worker)
        reads back the finished levels and continues the solve from its last iteration,
        to the model of an uninterrupted fit. The solve's file is removed when it
        converges; the selection's is kept, so a rerun replays it in moments (delete it
        to select afresh). Needs an int ``random_state`` (the rerun must draw the same
        landmarks and centres) and a criterion (not ``"cv"``); files of another fit are
        refused naming what differs, and a file that is no checkpoint is never
        overwritten. ``kernel="auto"``'s per-feature search (a real target of at most
        10⁴ rows, minutes at most) is not saved (``selection_.details["checkpoint"]``
        says what was); a machine of ``kernel="ard"`` is refused, as by
        ``select_kernel``."""

_SHARED_ATTRIBUTES = """\
    best_kernel_ : str
        The kernel selected and refitted: the estimator's ``kernel``, or for
        ``kernel="auto"`` (the machines' default) the policy's choice, its reason in
        ``selection_.details["rules"]["kernel"]`` (:func:`kernelselect.select_kernel`):
        ``"ard"`` with a vector ``best_params_["gamma"]``, else a scalar one.
    best_params_ : dict
        {"gamma": γ, "alpha": α} chosen (γ of shape (n_features,) for an estimator
        with ``kernel="ard"``; ``cv_results_`` and ``best_score_`` then describe the
        isotropic grid the per-feature search started from).
    best_score_ : float
        The score of the chosen point, greater is better as in scikit-learn's
        ``GridSearchCV``: the criterion's value for criteria that are maximised (kta,
        ckta, ...), its negation for those that are minimised (eloo, gcv, the "cv"
        mean held-out error or MSE, ...). ``cv_results_["criterion_value"]`` keeps the
        values as the criterion states them.
    best_index_ : int
        The entry of ``cv_results_`` that was chosen: ``cv_results_["params"]
        [best_index_] == best_params_``, its ``rank_test_score`` is 1.
    cv_results_ : dict of arrays
        One entry per (γ, α) of the grid, γ-major (then the refined point, when
        ``refine`` moved the choice off the grid): ``params``, ``param_gamma``,
        ``param_alpha``, ``mean_test_score`` (the score above), ``rank_test_score``
        (1 is best; ties share the smallest rank, undefined values rank last),
        ``criterion_value`` (the criterion itself) and ``rank_criterion`` (the same
        ranks); for "cv" also ``split{k}_test_score`` (the negated fold loss),
        ``std_test_score``, ``split{k}_test_loss``, ``mean_test_loss`` and
        ``std_test_loss``. ``pandas.DataFrame(cv_results_)`` gives the table.
    selection_ : SelectionResult
        The whole criterion surface.
    best_estimator_ : estimator
        Refit on all of X, y with ``best_params_`` (a Pipeline with the scaler when
        ``standardize``); the machine's ``approximation_``, ``n_centres_``,
        ``n_iter_`` and ``residual_`` say how it was solved, and
        ``selection_.details["refit"]`` holds the same with the selected criterion's
        value, the final model's ``alpha`` and ``alpha_rule`` ("leave-one-out" or
        "given"; the machine's ``alpha_``), and for the Nyström machine its own GCV
        score (RSS/n)/(1 − tr S/n)², effective dimension tr S, ``centres_rule`` ("rule"
        or "memory cap") and, on the leave-one-out route, its mean squared leave-one-out
        residual ``loo_mse`` and every candidate's (``loo``).
    task_ : str
        "binary", "multiclass" or "regression".
    n_features_in_ : int"""


class KernelSelectionCV(_KernelSelection):
    """Choose (γ, α) by a selection criterion or k-fold CV and refit; the task follows y.

    With no arguments it selects the way :func:`kernelselect.select_kernel` does with
    its defaults (the same task rule, criterion, α path, approximation, grid
    extension and standardisation) and refits the machine whose error that criterion
    estimates — for a real target with the training mean of y as its constant term
    (see ``estimator``). :class:`KernelSelectionClassifier` and
    :class:`KernelSelectionRegressor` are the same selection for one task, as
    scikit-learn classifiers and regressors (``is_classifier``, stratified folds in
    ``cross_val_score``).

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
        for the LSSVM itself. Where the Nyström refit scores its α by its own exact
        leave-one-out error (the user guide's "Fitting at any n"), the same
        leave-one-out chooses between ȳ and an unpenalised bias for the default
        regressor (``best_estimator_[-1].intercept_form_``); a given estimator keeps its
        ``fit_intercept``, and is selected for it: with ``criterion="auto"`` a
        regressor without intercept (``KernelRidgeRegressor()``, ``fit_intercept=False``)
        is scored by its own 5-fold error (``"cv"``) up to 400 rows with
        ``approximation="auto"``, else by ``gcv``, the generalised cross-validation of
        that machine, since the default criteria score the LSSVM, whose bias absorbs
        the mean of y (``selection_.details["criterion_rule"]``); a named criterion of the bias form, or
        ``kernel="ard"``, with ``fit_intercept=False`` warns (UserWarning).
{parameters}
    task : {{"auto", "binary", "multiclass", "regression"}}, default="auto"
        What y is (:func:`kernelselect._targets.detect_task` for "auto"); ignored when
        ``estimator`` is given (its type says).

    Attributes
    ----------
{attributes}
    classes_ : ndarray (classifiers only)
        The original labels.
    """

    def __init__(self, estimator: LSSVMClassifier | KernelRidgeRegressor | None = None, *,
                 criterion: str = "auto", approximation: str | Approximation = "auto",
                 gammas: npt.ArrayLike | None = None, alphas: npt.ArrayLike | None = None,
                 cv: int | None = 5, random_state: RandomState = None, task: str = "auto",
                 standardize: bool = True, refine: bool = False,
                 progress: bool | float = False, checkpoint: Any = None) -> None:
        super().__init__(estimator, criterion=criterion, approximation=approximation,
                         gammas=gammas, alphas=alphas, cv=cv, random_state=random_state,
                         standardize=standardize, refine=refine, progress=progress,
                         checkpoint=checkpoint)
        self.task = task

    def _targets(self, y: np.ndarray) -> tuple[Targets, _KernelMachineEstimator]:
        est = self._checked_estimator((LSSVMClassifier, KernelRidgeRegressor))
        if isinstance(est, LSSVMClassifier):
            return self._class_targets(y), est
        if est is not None:
            return prepare_targets(y, "regression"), est
        targets = prepare_targets(y, check_task(self.task))
        return targets, (KernelRidgeRegressor(fit_intercept="mean")
                         if targets.task == "regression" else LSSVMClassifier())

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        if self.estimator is None:          # classifier or regressor, decided by y at fit
            return tags
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        return tags


class KernelSelectionClassifier(ClassifierMixin, _KernelSelection):
    """Choose (γ, α) for a kernel classifier by a selection criterion and refit it.

    The classification form of :class:`KernelSelectionCV`.

    A scikit-learn classifier (``is_classifier`` holds, so ``cross_val_score`` and
    ``GridSearchCV`` stratify their folds by class); y holds class labels of any type,
    two or more classes (whole numbers are always classes here). It has
    ``decision_function`` and ``predict_proba``: the least-squares SVM fits ±1 targets
    by ridge regression, so its decision values are not probabilities, and
    ``predict_proba`` calibrates them — a softmax (Platt's sigmoid for two classes)
    fitted on the refit machine's closed-form leave-one-out decision values, with no
    refit (the user guide's page "Uncertainty").

    Parameters
    ----------
    estimator : LSSVMClassifier or None
        The machine to tune (its ``kernel`` and ``approximation`` are used for the
        refit); None → ``LSSVMClassifier()``.
{parameters}

    Attributes
    ----------
{attributes}
    classes_ : ndarray of shape (n_classes,)
        The labels, in ``numpy.unique`` order.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelselect import KernelSelectionClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((120, 2)); y = np.where(X[:, 0] * X[:, 1] > 0, "a", "b")
    >>> clf = KernelSelectionClassifier(random_state=0).fit(X, y)
    >>> clf.classes_.tolist(), clf.score(X, y) > 0.9
    (['a', 'b'], True)
    """

    def _targets(self, y: np.ndarray) -> tuple[Targets, _KernelMachineEstimator]:
        est = self._checked_estimator((LSSVMClassifier,))
        return self._class_targets(y), est if est is not None else LSSVMClassifier()


class KernelSelectionRegressor(RegressorMixin, _KernelSelection):
    """Choose (γ, α) for kernel ridge regression by a selection criterion and refit it.

    The regression form of :class:`KernelSelectionCV`.

    A scikit-learn regressor; y holds real numbers (whole numbers are a measured
    quantity here, whatever their values).

    Parameters
    ----------
    estimator : KernelRidgeRegressor or None
        The machine to tune; None → ``KernelRidgeRegressor(fit_intercept="mean")``,
        kernel ridge regression of y − ȳ with ȳ added back, or the unpenalised bias where
        the refit's leave-one-out prefers it (see :class:`KernelSelectionCV`). A given
        machine is refitted with its own ``fit_intercept`` and selected for it (without
        intercept: its own k-fold error or ``gcv``, as :class:`KernelSelectionCV`).
{parameters}

    Attributes
    ----------
{attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from kernelselect import KernelSelectionRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((120, 2)); y = np.sin(2 * X[:, 0]) + 0.1 * X[:, 1]
    >>> reg = KernelSelectionRegressor(random_state=0).fit(X, y)
    >>> reg.score(X, y) > 0.9
    True
    """

    _default_machine = KernelRidgeRegressor

    def _y_numeric(self) -> bool:
        return True

    def _targets(self, y: np.ndarray) -> tuple[Targets, _KernelMachineEstimator]:
        est = self._checked_estimator((KernelRidgeRegressor,))
        return (prepare_targets(y, "regression"),
                est if est is not None else KernelRidgeRegressor(fit_intercept="mean"))


for _cls in (KernelSelectionCV, KernelSelectionClassifier, KernelSelectionRegressor):
    _cls.__doc__ = (_cls.__doc__ or "").format(parameters=_SHARED_PARAMETERS,
                                               attributes=_SHARED_ATTRIBUTES)
del _cls


#: criteria that score the LSSVM regression with its unpenalised bias
#: (``fit_intercept=True``): its closed-form leave-one-out and k-fold errors
BIAS_CRITERIA = frozenset({"eloo", "ekfold", "eloo_error_rate", "ekfold_error_rate"})


def criterion_for_intercept(criterion: Any, fit_intercept: Any, kernel: Kernel | str,
                            kfold: bool = False) -> tuple[Any, str | None]:
    """(criterion, why it was chosen or None) for a regressor whose constant term is
    ``fit_intercept``, so that the selection scores the model the refit fits.

    The default criteria (``eloo``, ``ekfold``) score the LSSVM regression, whose bias
    absorbs the mean of y. Kernel ridge regression without intercept
    (``fit_intercept=False``) is scored instead, as the defaults' policy scores the
    LSSVM, by its own k-fold error (``"cv"``: the exact machine refitted per fold,
    where ``kfold`` says the defaults would use the exact k-fold error, n ≤ 400) or
    else by generalised cross-validation, GCV = n‖(I − S)y‖² / tr(I − S)²,
    S = K(K + αI)⁻¹ (Golub, Heath & Wahba, Technometrics 21, 1979), the
    rotation-invariant leave-one-out error of that very machine. A named criterion is
    kept; one that scores the bias form warns (it selects for a machine other than the
    one refitted), as does ``kernel="ard"``, whose per-feature search scores the LSSVM
    with bias only."""
    if _check_fit_intercept(fit_intercept) is not False:
        return criterion, None
    fix = ("pass KernelRidgeRegressor(fit_intercept='mean') (or True) to fit a "
           "constant term")
    if Kernel.of(kernel).per_feature:
        warn_user("the per-feature (kernel='ard') search scores the LSSVM regression with "
                  "its bias, but the estimator has fit_intercept=False: the selected "
                  f"(gamma, alpha) are not chosen for the machine refitted; {fix}.",
                  UserWarning)
        return criterion, None
    if isinstance(criterion, str) and criterion.strip().lower() == "auto":
        return _rules.criterion_without_intercept(kfold)
    first = criterion if isinstance(criterion, str) else next(iter(criterion), None)
    if isinstance(first, str) and first.strip().lower() in BIAS_CRITERIA:
        warn_user(f"criterion {first!r} scores the LSSVM regression with its bias, but the "
                  "estimator has fit_intercept=False: the selected (gamma, alpha) are not "
                  f"chosen for the machine refitted; use criterion='gcv' or 'auto', or {fix}.",
                  UserWarning)
    return criterion, None


def _check_refit(est: _KernelMachineEstimator, n: int, d: int, outputs: int,
                 chunks: tuple[int, ...] | None) -> None:
    """Refuse, before the selection runs, a final refit that would fail (memory, an
    approximation that cannot fit Dask input), naming the estimator's approximation."""
    try:
        recipe = machine_approximation(est.approximation, n, d, outputs,
                                       workers=est.workers, in_memory=chunks is None,
                                       chunks=chunks, warn=False)   # the refit warns
        if chunks is not None:
            fitting = machine_recipe(recipe)
            if not fitting.dask:
                raise dask_recipe_error(est.approximation)
            fitting.check_dask_resources(n, chunks, d, outputs)
        else:
            check_machine(recipe, n, d)
    except ValueError as exc:
        raise ValueError(
            f"the final refit of {type(est).__name__}(approximation="
            f"{est.approximation!r}) on all {n} samples would fail, so the "
            f"selection was not started: {exc} The refit uses the estimator's own "
            f"approximation: pass e.g. {type(est).__name__}(approximation='nystrom')."
        ) from None


def _rescaled(approximation: Any, transform: Any) -> Any:
    """``approximation`` with any points it holds in X's units mapped by ``transform``
    (:meth:`kernelselect.operators.Approximation.rescaled`); names pass unchanged."""
    return approximation if isinstance(approximation, str) else approximation.rescaled(transform)


def _selected_deff(res: SelectionResult) -> float | None:
    """The effective dimension Σ μ/(μ + α) the selection measured at its chosen point:
    on the last level of the automatic search, when that level was a Nyström level that
    settled the choice (then d_eff is at most half its landmarks, so not capped by
    them); else None."""
    levels = [lv for lv in (res.details.get("auto") or {}).get("levels") or []
              if "approximation" in lv]
    if levels and levels[-1].get("stable") and "effective_dimension" in levels[-1]:
        return float(levels[-1]["effective_dimension"])
    return None


def refit_details(est: _KernelMachineEstimator, criterion: str, selected: float
                  ) -> dict[str, Any]:
    """How the final machine was solved and how it scores: the approximation, centres,
    iterations and residual (:func:`kernelselect._fit_policy.describe_fit`), the
    selection's value of ``criterion`` at the chosen point, and for a Nyström machine by
    conjugate gradients its own generalised cross-validation score (RSS/n)/(1 − tr S/n)²
    and effective dimension tr S, from its solve (per output); the constant term's form
    (``intercept_form``, ``intercept_rule``) and, when the leave-one-out chose it, each
    form's errors (``loo_forms``, per candidate and output) and smallest mean error
    (``intercept_loo``)."""
    details = est.model_.details
    out: dict[str, Any] = dict(describe_fit(details), criterion=criterion,
                               selected_value=selected, alpha=float(est.alpha_),
                               alpha_rule=details.get("alpha_rule", "given"))
    out["intercept_form"] = getattr(est, "intercept_form_", None)
    out["intercept_rule"] = details.get("intercept_rule", "given")
    if "loo_forms" in details:                   # each form's leave-one-out errors
        out["loo_forms"] = {f: np.asarray(v, dtype=np.float64)
                            for f, v in details["loo_forms"].items()}
        out["intercept_loo"] = {f: float(np.min(np.mean(v, axis=1)))
                                for f, v in details["loo_forms"].items()}
    if details.get("solver") == "eigh":          # the leave-one-out route
        out["gcv"] = np.asarray(details["gcv"], dtype=np.float64)
        out["effective_dimension"] = float(details["effective_dimension"])
        out["loo_mse"] = np.asarray(details["loo_mse"], dtype=np.float64)
        out["loo"] = {k: np.asarray(v, dtype=np.float64) for k, v in details["loo"].items()}
    elif "gcv" in details:
        out["gcv"] = np.asarray(details["gcv"][0], dtype=np.float64)
        out["effective_dimension"] = float(details["effective_dimension"][0])
    return out
