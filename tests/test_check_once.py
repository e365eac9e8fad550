"""Each input is checked once per fit: an estimator's ``fit`` checks X and y at its door
and hands the checked arrays to the selection and to the refit, which do not check
them again.

The spies below wrap the package's check functions wherever a module has bound them
and count the outermost calls made on the training rows (X of shape (n, d), or any
standardised copy of it) and the preparations of the target (task detection and
encoding, :func:`kernelselect.utils._targets.prepare_targets`).
"""

import sys
import threading
import warnings

import numpy as np
import pytest

import kernelselect
from kernelselect import (KernelRidgeRegressor, KernelSelectionClassifier, KernelSelectionCV,
                          KernelSelectionRegressor, LSSVMClassifier, select_kernel)
from kernelselect.models import _cv, _dask_input
from kernelselect.utils import _dask, _sklearn, _targets, _validation

#: the functions that check a whole X (in memory or row-chunked Dask)
X_CHECKS = [(_validation, "check_matrix"), (_sklearn, "validate_data"),
            (_dask, "check_dask_rows"), (_dask, "check_dask_data"),
            (_dask_input, "dask_training_data"), (_dask_input, "check_dask_features")]
#: the functions that prepare y (task, encoding)
Y_PREPS = [(_targets, "prepare_targets"), (_targets, "multi_output_targets")]


class Spy:
    """Counts the outermost calls of the check functions on arrays of ``n`` rows."""

    def __init__(self, monkeypatch, n, d):
        self.n, self.d = n, d
        self.x_checks, self.y_preps = [], []
        x_depth, y_depth = threading.local(), threading.local()
        for module, name in X_CHECKS:
            self._patch(monkeypatch, getattr(module, name), name, self.x_checks, self._is_x,
                        x_depth)
        for module, name in Y_PREPS:
            self._patch(monkeypatch, getattr(module, name), name, self.y_preps, self._is_y,
                        y_depth)

    def _is_x(self, obj):
        shape = getattr(obj, "shape", None)
        return shape is not None and tuple(shape) == (self.n, self.d)

    def _is_y(self, obj):
        shape = getattr(obj, "shape", None)
        return shape is not None and len(shape) >= 1 and shape[0] == self.n

    def _patch(self, monkeypatch, original, name, log, matches, depth):
        """Replace ``original`` by a counting spy; a call inside another spied check of
        the same kind (``depth``, one per kind) is part of that check, not counted."""

        def spy(*args, **kwargs):
            level = getattr(depth, "level", 0)
            if level == 0 and any(matches(a) for a in (*args, *kwargs.values())):
                log.append(name)
            depth.level = level + 1
            try:
                return original(*args, **kwargs)
            finally:
                depth.level = level

        # wherever a module of the package bound the function, the spy replaces it
        for mod_name, module in list(sys.modules.items()):
            if not mod_name.startswith("kernelselect") or module is None:
                continue
            for attr, value in list(vars(module).items()):
                if value is original:
                    monkeypatch.setattr(module, attr, spy)


def _data(n=80, d=3, task="regression", seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    f = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1]
    if task == "regression":
        return X, f + 0.1 * rng.standard_normal(n)
    if task == "binary":
        return X, np.where(f > 0, "yes", "no")
    return X, np.digitize(f, [-0.5, 0.5]).astype(float)


def _count(monkeypatch, call, X):
    spy = Spy(monkeypatch, *X.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call()
    return spy


# the counts of one fit: (X checks at most, y preparations exactly)
ESTIMATOR_CASES = [
    ("regressor", lambda: KernelSelectionRegressor(random_state=0), "regression"),
    ("regressor-no-standardize", lambda: KernelSelectionRegressor(random_state=0,
                                                                  standardize=False),
     "regression"),
    ("regressor-given-krr", lambda: KernelSelectionRegressor(
        KernelRidgeRegressor(fit_intercept=True), random_state=0), "regression"),
    ("classifier", lambda: KernelSelectionClassifier(random_state=0), "binary"),
    ("classifier-multiclass", lambda: KernelSelectionClassifier(random_state=0), "multiclass"),
    ("cv-auto-task", lambda: KernelSelectionCV(random_state=0), "regression"),
    ("cv-criterion-cv", lambda: KernelSelectionCV(criterion="cv", cv=3, random_state=0),
     "binary"),
]


@pytest.mark.parametrize("label,make,task", ESTIMATOR_CASES, ids=[c[0] for c in ESTIMATOR_CASES])
@pytest.mark.parametrize("n", [80, 57])
def test_selection_estimator_checks_once(monkeypatch, label, make, task, n):
    X, y = _data(n=n, task=task, seed=n)
    est = make()
    spy = _count(monkeypatch, lambda: est.fit(X, y), X)
    assert len(spy.x_checks) <= 2, spy.x_checks
    assert len(spy.y_preps) == 1, spy.y_preps


@pytest.mark.parametrize("n", [60, 75])
def test_select_kernel_checks_once(monkeypatch, n):
    X, y = _data(n=n, task="binary", seed=n)
    spy = _count(monkeypatch, lambda: select_kernel(X, y, random_state=0), X)
    assert len(spy.x_checks) <= 1, spy.x_checks
    assert len(spy.y_preps) == 1, spy.y_preps


@pytest.mark.parametrize("make,task", [(lambda: KernelRidgeRegressor(gamma=0.5), "regression"),
                                       (lambda: LSSVMClassifier(gamma=0.5), "binary")])
def test_bare_machine_checks_once(monkeypatch, make, task):
    X, y = _data(n=70, task=task, seed=3)
    spy = _count(monkeypatch, lambda: make().fit(X, y), X)
    assert len(spy.x_checks) == 1, spy.x_checks


@pytest.mark.parametrize("approximation", ["exact", "nystrom"])
@pytest.mark.parametrize("kernel,folds,n", [("gaussian", 3, 90), ("laplacian", 4, 77)])
def test_cross_validation_conditions_each_fold_once(monkeypatch, approximation, kernel,
                                                    folds, n):
    """The training rows of a fold are conditioned for the compiled kernels (checked,
    centred, scaled: :class:`~kernelselect.primitives._kernel_ops.Points`) once per
    fold, not once per γ; the curves are those of the public entry."""
    from kernelselect.primitives import _kernel_ops

    made = []
    real = _kernel_ops.Points.__init__

    def counting(self, X, *args, **kwargs):
        made.append(np.shape(X)[0])
        real(self, X, *args, **kwargs)

    X, y = _data(n=n, task="binary", seed=n)
    y = (y == "yes").astype(float)
    gammas = [0.1, 0.5, 2.0, 8.0]
    reference = kernelselect.cross_validate_grid(X, y, gammas=gammas, alphas=[0.1, 1.0],
                                                 cv=folds, kernel=kernel,
                                                 approximation=approximation, random_state=1)
    monkeypatch.setattr(_kernel_ops.Points, "__init__", counting)
    res = kernelselect.cross_validate_grid(X, y, gammas=gammas, alphas=[0.1, 1.0], cv=folds,
                                           kernel=kernel, approximation=approximation,
                                           random_state=1)
    train_rows = {tr.size for tr, _ in res.details["folds"]}
    assert sum(1 for m in made if m in train_rows) == folds
    np.testing.assert_array_equal(res.curves["cv"], reference.curves["cv"])


def test_dask_estimator_checks_once(monkeypatch):
    """A Dask X is checked once at the estimator's door (the scaler, the selection and
    the refit take the checked chunks) and y prepared once."""
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X, y = _data(n=600, task="regression", seed=5)
    Xd, yd = da.from_array(X, chunks=(150, -1)), da.from_array(y, chunks=150)
    spy = Spy(monkeypatch, *X.shape)
    with warnings.catch_warnings(), dask.config.set(scheduler="synchronous"):
        warnings.simplefilter("ignore")
        KernelSelectionRegressor(random_state=0, approximation="nystrom").fit(Xd, yd)
    dask_checks = [c for c in spy.x_checks if c != "check_matrix"]
    assert dask_checks == ["dask_training_data"], spy.x_checks
    assert len(spy.y_preps) == 1, spy.y_preps


@pytest.mark.parametrize("n", [120, 97])
def test_per_feature_selection_checks_x_once_at_the_door(monkeypatch, n):
    """kernel="ard": the isotropic selections the gradient search starts from run on
    the rows checked at the door (X once there, once more by the per-feature search's
    own entry, which also prepares y for its objective)."""
    X, y = _data(n=n, task="regression", seed=n)
    est = KernelSelectionRegressor(KernelRidgeRegressor(kernel="ard", fit_intercept=True),
                                   random_state=0)
    spy = _count(monkeypatch, lambda: est.fit(X, y), X)
    assert len(spy.x_checks) <= 2, spy.x_checks
    assert len(spy.y_preps) <= 2, spy.y_preps


def _gamma_doors():
    """Every public door that takes a γ, as γ ↦ the call (small data, one thread)."""
    from kernelselect import di, kernels, lowlevel
    from kernelselect.operators.dense import Exact
    from kernelselect.operators.mcm import MCM
    from kernelselect.operators.nystrom import Nystroem
    from kernelselect.operators.rff import RFF

    X, y = _data(n=24, task="binary", seed=7)
    r = X[:, 1]
    Y = di.encode_targets(y)
    built = dict(kernel="gaussian", state=None, workers=1)
    return {
        "kernel_block": lambda g: lowlevel.kernel_block(X, X[:5], g, workers=1),
        "kernel_matvec": lambda g: lowlevel.kernel_matvec(X, np.ones(24), g, workers=1),
        "kernel_sums": lambda g: lowlevel.kernel_sums(X, g, workers=1),
        "song_xu_column": lambda g: lowlevel.song_xu_column([4, 3], 0.5, g, workers=1),
        "Exact.build": lambda g: Exact().build(X, r, g, **built),
        "Nystroem.build": lambda g: Nystroem(n_landmarks=6, random_state=0).build(X, r, g,
                                                                                  **built),
        "RFF.build": lambda g: RFF(n_features=8, random_state=0).build(X, r, g, **built),
        "MCM.build": lambda g: MCM().build(X, r, g, **built),
        "KernelRidgeRegressor": lambda g: KernelRidgeRegressor(gamma=g).fit(X, r),
        "LSSVMClassifier": lambda g: LSSVMClassifier(gamma=g).fit(X, y),
        "fit_krr": lambda g: kernelselect.fit_krr(X, r, gamma=g, alpha=1.0),
        "fit_lssvm": lambda g: kernelselect.fit_lssvm(X, np.where(y == "yes", 1.0, -1.0),
                                                      gamma=g, alpha=1.0),
        "nysdi": lambda g: di.nysdi(X, Y, X[:4], g),
        "train_rfdi": lambda g: di.train_rfdi(X, y, 3, gamma=g, max_epochs=1),
        "train_nysdi": lambda g: di.train_nysdi(X, y, 3, gamma=g, max_epochs=1),
        "scale_frequencies": lambda g: kernels.scale_frequencies(np.ones((3, 5)), g),
        "scale_frequencies(laplacian)": lambda g: kernels.scale_frequencies(np.ones((3, 5)), g,
                                                                            "laplacian"),
        # the per-feature kernel: one γ per feature
        "kernel_block(ard)": lambda g: lowlevel.kernel_block(X, X[:5], g, "ard", workers=1),
        "KernelRidgeRegressor(ard)": lambda g: KernelRidgeRegressor(kernel="ard",
                                                                    gamma=g).fit(X, r),
        "scale_frequencies(ard)": lambda g: kernels.scale_frequencies(np.ones((3, 5)), g, "ard"),
    }


#: bad γ → (error, its message) for the one-γ kernels and for the per-feature kernel
BAD_GAMMA = [
    (-1.0, ValueError, "gamma must be a finite number > 0, got -1.0.",
     "gamma[0] = np.float64(-1.0): every per-feature γ must be finite and > 0"),
    (float("nan"), ValueError, "gamma must be a finite number > 0, got nan.",
     "gamma[0] = np.float64(nan): every per-feature γ must be finite and > 0"),
    ("x", TypeError, "gamma must be a real number, got 'x'.",
     "gamma must be a positive number or an array of one positive number per feature for "
     "kernel='ard', got 'x'."),
]


@pytest.mark.parametrize("door", list(_gamma_doors()))
@pytest.mark.parametrize("gamma,error,message,per_feature_message", BAD_GAMMA,
                         ids=["negative", "nan", "text"])
def test_every_gamma_door_refuses_a_bad_gamma(door, gamma, error, message,
                                              per_feature_message):
    """γ is checked at each public door (through its layer's one check): a bad γ raises
    the error naming ``gamma`` before any work, with the kernel's message."""
    expected = per_feature_message if "ard" in door else message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as info:
            _gamma_doors()[door](gamma)
    assert str(info.value).startswith(expected), str(info.value)
