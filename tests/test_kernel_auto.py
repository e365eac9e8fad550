"""kernel="auto", the default of the selection, the estimators, the machines and the CLI:
one rule (kernelselect._policy.kernel_for_task) decided in one place."""

import json
import warnings

import numpy as np
import pytest

from kernelselect import (KernelRidgeRegressor, KernelSelectionClassifier,
                          KernelSelectionRegressor, LSSVMClassifier, select_kernel)
from kernelselect import _policy as rules


def _data(n, seed, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    return X, y


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


@pytest.mark.parametrize("seed", [0, 4])
def test_auto_on_a_small_real_target_picks_ard_and_says_why(seed):
    X, y = _data(80, seed)
    res = _quiet(select_kernel, X, y, random_state=0)
    assert res.kernel == "ard" and np.shape(res.best_gamma) == (3,)
    assert res.details["rules"]["kernel"].startswith("a real target: one γ per feature")


@pytest.mark.parametrize("labels", [lambda y: np.sign(y), lambda y: (y > 0.3).astype(int)
                                    + (y > -0.3)])
def test_auto_on_class_labels_picks_the_gaussian(labels):
    X, y = _data(80, 1)
    res = _quiet(select_kernel, X, labels(y), random_state=0)
    assert res.kernel == "gaussian" and np.ndim(res.best_gamma) == 0
    assert "labels: the isotropic Gaussian kernel" in res.details["rules"]["kernel"]


def test_auto_above_the_limit_keeps_the_gaussian_and_says_so():
    n = rules.ARD_AUTO_MAX_N + 1
    assert rules.kernel_for_task("regression", n)[0] == "gaussian"
    assert rules.kernel_for_task("regression", rules.ARD_AUTO_MAX_N)[0] == "ard"
    X, y = _data(n, 2)
    res = _quiet(select_kernel, X, y, random_state=0, approximation="nystrom",
                 gammas=[0.5, 1.0], alphas=[1.0])
    assert res.kernel == "gaussian"
    assert f"n = {n} > {rules.ARD_AUTO_MAX_N}" in res.details["rules"]["kernel"]


@pytest.mark.parametrize("kw, why", [({"approximation": "rff"}, "approximation='rff'"),
                                     ({"criterion": "gcv"}, "criterion='gcv'")])
def test_auto_with_what_the_per_feature_search_does_not_take_keeps_the_gaussian(kw, why):
    X, y = _data(80, 3)
    res = _quiet(select_kernel, X, y, random_state=0, **kw)
    assert res.kernel == "gaussian" and why in res.details["rules"]["kernel"]


@pytest.mark.parametrize("door", ["select_kernel", "estimator"])
def test_auto_on_dask_input_gives_the_in_memory_choice(door):
    """The per-feature rule was measured on X in memory (its objective the evidence):
    where it chooses one γ per feature, a Dask array (streamed otherwise: approximation
    'nystrom') is gathered and gives the in-memory selection bit for bit."""
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X, y = _data(120, 7)
    Xd, yd = da.from_array(X, chunks=(40, -1)), da.from_array(y, chunks=40)
    with dask.config.set(scheduler="synchronous"):
        if door == "select_kernel":
            res = _quiet(select_kernel, Xd, yd, random_state=0, approximation="nystrom")
            mem = _quiet(select_kernel, X, y, random_state=0, approximation="nystrom")
            assert "gathered into memory (kernel='auto'" in res.details["input"]
        else:
            res = _quiet(KernelSelectionRegressor(random_state=0, approximation="nystrom").fit,
                         Xd, yd).selection_
            mem = _quiet(KernelSelectionRegressor(random_state=0, approximation="nystrom").fit,
                         X, y).selection_
    assert res.kernel == mem.kernel == "ard"
    assert res.details["rules"]["kernel"] == mem.details["rules"]["kernel"]
    np.testing.assert_array_equal(res.best_gamma, mem.best_gamma)
    assert res.best_alpha == mem.best_alpha


def test_auto_on_dask_input_beyond_the_limit_keeps_the_gaussian(monkeypatch):
    """Beyond ARD_AUTO_MAX_N rows Dask input stays in its chunks, on the isotropic
    kernel, as the same rows in memory."""
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    monkeypatch.setattr(rules, "ARD_AUTO_MAX_N", 100)
    X, y = _data(120, 7)
    Xd, yd = da.from_array(X, chunks=(40, -1)), da.from_array(y, chunks=40)
    with dask.config.set(scheduler="synchronous"):
        res = _quiet(select_kernel, Xd, yd, random_state=0, approximation="nystrom",
                     gammas=[0.5, 1.0], alphas=[1.0])
    assert res.kernel == "gaussian" and "streamed by chunks" in res.details["input"]
    assert "n = 120 > 100" in res.details["rules"]["kernel"]


@pytest.mark.parametrize("seed, target", [(5, "regression"), (6, "binary")])
def test_explicit_gaussian_is_the_isotropic_selection_bit_for_bit(seed, target):
    X, y = _data(70, seed)
    if target == "binary":
        y = np.sign(y)
    a = _quiet(select_kernel, X, y, kernel="gaussian", random_state=0)
    b = _quiet(select_kernel, X, y, kernel=" Gaussian ", random_state=0)
    assert a.kernel == "gaussian" and "kernel" not in a.details["rules"]
    assert a.best_gamma == b.best_gamma and a.best_alpha == b.best_alpha
    for name in a.curves:
        np.testing.assert_array_equal(a.curves[name], b.curves[name])


def test_estimators_report_best_kernel():
    X, y = _data(60, 7)
    reg = _quiet(KernelSelectionRegressor(random_state=0).fit, X, y)
    assert reg.best_kernel_ == "ard" and np.shape(reg.best_params_["gamma"]) == (3,)
    assert reg.selection_.details["rules"]["kernel"].startswith("a real target")
    clf = _quiet(KernelSelectionClassifier(random_state=0).fit, X, np.sign(y))
    assert clf.best_kernel_ == "gaussian" and np.ndim(clf.best_params_["gamma"]) == 0
    iso = _quiet(KernelSelectionRegressor(
        KernelRidgeRegressor(kernel="gaussian", fit_intercept="mean"), random_state=0).fit, X, y)
    assert iso.best_kernel_ == "gaussian" and "kernel" not in iso.selection_.details["rules"]


def test_a_bare_machine_reads_auto_from_the_shape_of_gamma():
    X, y = _data(50, 8)
    assert KernelRidgeRegressor().kernel == "auto" == LSSVMClassifier().kernel
    for gamma, kernel in ((0.7, "gaussian"), (None, "gaussian"), ([0.5, 0.1, 2.0], "ard")):
        auto = KernelRidgeRegressor(gamma=gamma, alpha=0.1).fit(X, y)
        named = KernelRidgeRegressor(kernel=kernel, gamma=gamma, alpha=0.1).fit(X, y)
        np.testing.assert_array_equal(auto.predict(X), named.predict(X))
    c = LSSVMClassifier(gamma=[0.5, 0.1, 2.0]).fit(X, np.sign(y))
    np.testing.assert_array_equal(
        c.decision_function(X),
        LSSVMClassifier(kernel="ard", gamma=[0.5, 0.1, 2.0]).fit(X, np.sign(y))
        .decision_function(X))


def test_the_cli_defaults_to_auto(tmp_path):
    from kernelselect.cli import main
    from kernelselect.cli._parsing import build_parser

    assert build_parser().parse_args(["select", "x.csv"]).kernel == "auto"
    X, y = _data(40, 9, d=2)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, np.sign(y)]), delimiter=",")
    out = tmp_path / "r.json"
    assert _quiet(main, ["select", str(path), "--json", str(out), "--random-state", "0"]) == 0
    result = json.loads(out.read_text())["result"]
    assert "labels: the isotropic Gaussian kernel" in result["details"]["rules"]["kernel"]
