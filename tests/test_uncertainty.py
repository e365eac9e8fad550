"""Uncertainty without a refit: the closed-form leave-one-out of every fitted machine
against explicit refits, calibrated probabilities, jackknife(+) intervals."""

import pickle
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import linalg

from kernelselect import (KernelRidgeRegressor, KernelSelectionClassifier,
                          KernelSelectionRegressor, LSSVMClassifier, NystroemPCG)
from kernelselect.models import _uncertainty
from kernelselect import Nystroem

FORMS = [False, True, "mean"]


def _data(seed, n=30, d=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, -1] + 0.2 * rng.standard_normal(n)
    return X, y


def _refit_predictions(make, X, y, rows):
    """At each row i of ``rows``, the prediction of the estimator refitted without it."""
    n = X.shape[0]
    out = []
    for i in rows:
        keep = np.arange(n) != i
        out.append(make().fit(X[keep], y[keep]).predict(X[i:i + 1])[0])
    return np.array(out)


# ------------------------------------------------------------ leave-one-out = refits
@given(seed=st.integers(0, 2**16), n=st.integers(6, 25), gamma=st.floats(0.05, 3.0),
       alpha=st.floats(1e-2, 10.0), form=st.sampled_from(FORMS))
def test_exact_loo_equals_refits(seed, n, gamma, alpha, form):
    X, y = _data(seed, n)
    make = lambda: KernelRidgeRegressor(gamma=gamma, alpha=alpha, fit_intercept=form,  # noqa: E731
                                        approximation="exact")
    got = make().fit(X, y).loo_decision_[:, 0]
    np.testing.assert_allclose(got, _refit_predictions(make, X, y, range(n)), rtol=0, atol=1e-8)


@pytest.mark.parametrize("form", FORMS)
def test_nystrom_loo_at_fixed_landmarks_equals_refits(form):
    X, y = _data(3, 40, 3)
    marks = np.random.default_rng(9).standard_normal((8, 3))     # points, not rows
    make = lambda: KernelRidgeRegressor(gamma=0.4, alpha=0.2, fit_intercept=form,  # noqa: E731
                                        approximation=Nystroem(landmarks=marks))
    got = make().fit(X, y).loo_decision_[:, 0]
    np.testing.assert_allclose(got, _refit_predictions(make, X, y, range(40)), atol=1e-8)


@pytest.mark.parametrize("form", FORMS)
def test_random_features_loo_equals_refits(form):
    X, y = _data(4, 35, 2)
    make = lambda: KernelRidgeRegressor(gamma=0.7, alpha=0.1, fit_intercept=form,  # noqa: E731
                                        approximation="rff", random_state=1)
    got = make().fit(X, y).loo_decision_[:, 0]
    np.testing.assert_allclose(got, _refit_predictions(make, X, y, range(35)), atol=1e-8)


def _pcg_reference(model, X, y, alpha, form, offset):
    """The Nyström machine's ridge problem written out (Φ = K_nm T⁻¹ with the model's
    own jitter) and solved again without each row."""
    from kernelselect import lowlevel

    cond = model.conditioning
    Kmm = lowlevel.kernel_block(cond.centres, cond.centres, cond.gamma)
    jitter = model.details["jitter"]
    jitter = jitter[0] if isinstance(jitter, list) else jitter
    T = linalg.cholesky(Kmm + jitter * np.eye(Kmm.shape[0]), lower=False)
    Phi = linalg.solve_triangular(
        T, lowlevel.kernel_block((X - cond.shift) * cond.scale, cond.centres, cond.gamma).T,
        trans="T").T
    n, m = Phi.shape
    out = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        P, t = Phi[keep], y[keep]
        if form == "bias":
            A = np.column_stack([P, np.ones(n - 1)])
            reg = np.diag(np.r_[np.full(m, alpha), 0.0])
            w = np.linalg.solve(A.T @ A + reg, A.T @ t)
            out[i] = Phi[i] @ w[:m] + w[m]
        else:
            c = t.mean() if form == "mean" else 0.0
            w = np.linalg.solve(P.T @ P + alpha * np.eye(m), P.T @ (t - c))
            out[i] = Phi[i] @ w + c
    return out


@pytest.mark.parametrize("form", FORMS)
def test_conjugate_gradient_machine_loo_equals_its_refits(form):
    X, y = _data(5, 60, 2)
    reg = KernelRidgeRegressor(gamma=0.5, alpha=0.05, fit_intercept=form, random_state=0,
                               approximation=NystroemPCG(n_centres=12, tol=1e-13)).fit(X, y)
    ref = _pcg_reference(reg.model_, X, y, 0.05, reg.intercept_form_, None)
    np.testing.assert_allclose(reg.loo_decision_[:, 0], ref, atol=1e-8)


def test_ard_and_classifier_columns_loo_equal_refits():
    X, y = _data(6, 24, 3)
    g = [0.3, 1.2, 0.05]
    make = lambda: KernelRidgeRegressor(kernel="ard", gamma=g, alpha=0.3,  # noqa: E731
                                        fit_intercept="mean")
    np.testing.assert_allclose(make().fit(X, y).loo_decision_[:, 0],
                               _refit_predictions(make, X, y, range(24)), atol=1e-8)
    labels = np.digitize(X[:, 0], [-0.4, 0.4])                   # three classes
    clf = LSSVMClassifier(gamma=0.5, alpha=0.2).fit(X, labels)
    for i in (0, 7, 19):
        keep = np.arange(24) != i
        ref = LSSVMClassifier(gamma=0.5, alpha=0.2).fit(X[keep], labels[keep])
        np.testing.assert_allclose(clf.loo_decision_[i], ref.decision_function(X[i:i + 1])[0],
                                   atol=1e-8)


def test_dask_input_gives_the_in_memory_loo_and_dask_outputs():
    da = pytest.importorskip("dask.array")
    X, y = _data(7, 200, 2)
    labels = (y > 0).astype(int)
    make = lambda: LSSVMClassifier(gamma=0.5, alpha=0.1, random_state=0,  # noqa: E731
                                   approximation=NystroemPCG(n_centres=30))
    mem = make().fit(X, labels)
    lazy = make().fit(da.from_array(X, chunks=64), da.from_array(labels, chunks=64))
    np.testing.assert_allclose(lazy.loo_decision_, mem.loo_decision_, atol=1e-9)
    P = lazy.predict_proba(da.from_array(X, chunks=64))
    assert isinstance(P, da.Array)
    np.testing.assert_allclose(P.compute(), mem.predict_proba(X), atol=1e-9)
    reg = KernelRidgeRegressor(gamma=0.5, alpha=0.1, random_state=0, fit_intercept="mean",
                               approximation=NystroemPCG(n_centres=30))
    reg.fit(da.from_array(X, chunks=64), da.from_array(y, chunks=64))
    out = reg.predict_interval(da.from_array(X[:50], chunks=20), coverage=0.8)
    assert isinstance(out, da.Array) and out.shape == (50, 2)
    np.testing.assert_allclose(out.compute(), reg.predict_interval(X[:50], coverage=0.8))


# ------------------------------------------------------------------ probabilities
def _three_classes(seed=0, n=150):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.digitize(X[:, 0] + 0.5 * rng.standard_normal(n), [-0.5, 0.5])
    return X, y


@pytest.mark.parametrize("approx", ["exact", "nystrom", "rff", "nystrom-pcg"])
def test_probabilities_sum_to_one_in_class_order(approx):
    X, y = _three_classes()
    names = np.array(["lo", "mid", "hi"])[y]
    clf = LSSVMClassifier(gamma=0.5, alpha=0.3, approximation=approx, random_state=0).fit(X, names)
    P = clf.predict_proba(X)
    assert P.shape == (150, 3)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.log(P), clf.predict_log_proba(X), atol=1e-10)
    np.testing.assert_array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(X))
    # the most probable class of the rows labelled "hi" is mostly "hi": the order is classes_
    assert np.mean(clf.classes_[P[names == "hi"].argmax(axis=1)] == "hi") > 0.6


@given(perm=st.permutations([0, 1, 2]), seed=st.integers(0, 100))
def test_probabilities_invariant_to_label_permutation(perm, seed):
    X, y = _three_classes(seed, 90)
    base = LSSVMClassifier(gamma=0.5, alpha=0.3).fit(X, y).predict_proba(X)
    relabelled = np.asarray(perm)[y]                     # class c is now called perm[c]
    P = LSSVMClassifier(gamma=0.5, alpha=0.3).fit(X, relabelled).predict_proba(X)
    np.testing.assert_allclose(P[:, perm], base, atol=1e-5)


def test_binary_probabilities_swap_with_the_classes():
    X, y = _data(8, 80)
    labels = (y > 0).astype(int)
    P = LSSVMClassifier(gamma=0.5, alpha=0.3).fit(X, labels).predict_proba(X)
    Q = LSSVMClassifier(gamma=0.5, alpha=0.3).fit(X, 1 - labels).predict_proba(X)
    np.testing.assert_allclose(Q[:, ::-1], P, atol=1e-6)


def test_calibration_recovers_a_known_sigmoid():
    """Decision values f with y ~ Bernoulli(σ(2f − 0.5)): the fitted slope and
    intercept come back within sampling error (Platt's targets shrink them slightly)."""
    rng = np.random.default_rng(0)
    f = rng.standard_normal(20000)
    codes = (rng.random(20000) < 1 / (1 + np.exp(-(2 * f - 0.5)))).astype(np.intp)
    cal = _uncertainty.fit_calibration(f[:, None], codes, 2, intercepts=True)
    assert abs(cal.slope - 2.0) < 0.1 and abs(cal.intercepts[1] + 0.5) < 0.08
    alone = _uncertainty.fit_calibration(f[:, None], codes, 2)      # the slope only
    assert np.all(alone.intercepts == 0) and 1.5 < alone.slope < 2.1


def test_sklearn_scoring_and_calibration_in_a_pipeline():
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _data(9, 120)
    labels = (y > 0).astype(int)
    pipe = make_pipeline(StandardScaler(), LSSVMClassifier(gamma=0.5, alpha=0.3))
    assert np.all(cross_val_score(pipe, X, labels, scoring="neg_log_loss", cv=3) < 0)
    assert np.all(cross_val_score(pipe, X, labels, scoring="roc_auc", cv=3) > 0.8)
    cal = CalibratedClassifierCV(pipe, cv=3).fit(X, labels)
    np.testing.assert_allclose(cal.predict_proba(X).sum(axis=1), 1.0)


def test_selection_estimators_delegate():
    X, y = _data(10, 100)
    labels = np.where(y > 0, "pos", "neg")
    clf = KernelSelectionClassifier(random_state=0).fit(X, labels)
    P = clf.predict_proba(X)
    machine = clf.best_estimator_[-1]
    np.testing.assert_allclose(P, machine.predict_proba(clf.best_estimator_[:-1].transform(X)))
    assert not hasattr(KernelSelectionRegressor(), "predict_proba")
    reg = KernelSelectionRegressor(random_state=0).fit(X, y)
    out = reg.predict_interval(X[:5], coverage=0.8)
    pred = reg.predict(X[:5])
    assert out.shape == (5, 2) and np.all(out[:, 0] <= pred) and np.all(pred <= out[:, 1])
    assert not hasattr(clf, "predict_interval")


# ---------------------------------------------------------------------- intervals
def test_jackknife_plus_equals_explicit_refits():
    X, y = _data(11, 30)
    Xt = np.random.default_rng(1).standard_normal((6, 2))
    for form in FORMS:
        make = lambda: KernelRidgeRegressor(gamma=0.6, alpha=0.2, fit_intercept=form)  # noqa: E731
        reg = make().fit(X, y)
        r = reg.loo_residuals_[:, 0]
        loo = np.array([make().fit(np.delete(X, i, 0), np.delete(y, i)).predict(Xt)
                        for i in range(30)])                       # (n, n_test)
        k_lo, k_hi = _uncertainty.interval_quantiles(30, 0.8)
        lower = np.sort(loo - np.abs(r)[:, None], axis=0)[k_lo - 1]
        upper = np.sort(loo + np.abs(r)[:, None], axis=0)[k_hi - 1]
        got = reg.predict_interval(Xt, coverage=0.8)
        np.testing.assert_allclose(got, np.column_stack([lower, upper]), atol=1e-10)


@given(seed=st.integers(0, 1000), c1=st.floats(0.05, 0.95), c2=st.floats(0.05, 0.95),
       method=st.sampled_from(["jackknife+", "jackknife"]))
def test_intervals_nested_in_coverage(seed, c1, c2, method):
    X, y = _data(seed, 25)
    lo_c, hi_c = sorted((c1, c2))
    reg = KernelRidgeRegressor(gamma=0.5, alpha=0.3, fit_intercept="mean").fit(X, y)
    Xt = np.random.default_rng(seed).standard_normal((8, 2))
    inner = reg.predict_interval(Xt, lo_c, method=method)
    outer = reg.predict_interval(Xt, hi_c, method=method)
    assert np.all(outer[:, 0] <= inner[:, 0]) and np.all(inner[:, 1] <= outer[:, 1])
    assert np.all(inner[:, 0] <= inner[:, 1])


def test_jackknife_interval_is_the_residual_quantile_around_the_prediction():
    X, y = _data(12, 50)
    reg = KernelRidgeRegressor(gamma=0.5, alpha=0.3, approximation="nystrom",
                               random_state=0).fit(X, y)
    out = reg.predict_interval(X[:4], coverage=0.9)              # auto → jackknife here
    q = np.sort(np.abs(reg.loo_residuals_[:, 0]))[int(np.ceil(0.9 * 51)) - 1]
    np.testing.assert_allclose(out, reg.predict(X[:4])[:, None] + [-q, q])


def test_interval_infinite_when_too_few_rows_for_the_coverage():
    X, y = _data(13, 8)
    out = KernelRidgeRegressor(gamma=0.5).fit(X, y).predict_interval(X[:2], coverage=0.95)
    assert np.all(np.isinf(out))


def test_multi_output_intervals_have_one_pair_per_output():
    X, y = _data(14, 30)
    Y = np.column_stack([y, -2 * y])
    out = KernelRidgeRegressor(gamma=0.5, alpha=0.3).fit(X, Y).predict_interval(X[:3])
    assert out.shape == (3, 2, 2)


@pytest.mark.parametrize("coverage", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_coverage_is_refused(coverage):
    X, y = _data(15, 20)
    reg = KernelRidgeRegressor(gamma=0.5).fit(X, y)
    with pytest.raises(ValueError, match="coverage"):
        reg.predict_interval(X, coverage=coverage)
    with pytest.raises(TypeError, match="coverage"):
        reg.predict_interval(X, coverage="high")


def test_bad_method_is_refused():
    X, y = _data(16, 20)
    reg = KernelRidgeRegressor(gamma=0.5).fit(X, y)
    with pytest.raises(ValueError, match="method"):
        reg.predict_interval(X, method="bootstrap")
    approx = KernelRidgeRegressor(gamma=0.5, approximation="rff", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="jackknife"):
        approx.predict_interval(X, method="jackknife+")


def test_refit_clears_the_cached_leave_one_out():
    X, y = _data(17, 30)
    reg = KernelRidgeRegressor(gamma=0.5, alpha=0.3).fit(X, y)
    first = reg.loo_decision_.copy()
    reg.fit(X, 2 * y)
    np.testing.assert_allclose(reg.loo_decision_, 2 * first)


def test_unfitted_estimators_say_so():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        LSSVMClassifier().predict_proba(np.zeros((2, 2)))
    with pytest.raises(NotFittedError):
        KernelRidgeRegressor().predict_interval(np.zeros((2, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not hasattr(KernelRidgeRegressor(), "loo_residuals_")


# ------------------------------------------------------- Gaussian-process std (ARD)
@pytest.mark.parametrize("seed", [0, 1])
def test_return_std_is_the_gaussian_process_predictive_std(seed):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    X, y = _data(seed, 40)
    Xt = np.random.default_rng(seed + 5).standard_normal((6, 2))
    g, a = np.array([0.5, 2.0]), 0.1
    reg = KernelRidgeRegressor(kernel="ard", gamma=g, alpha=a, fit_intercept="mean").fit(X, y)
    mean, std = reg.predict(Xt, return_std=True)
    yc = y - y.mean()
    K = np.exp(-(((X[:, None, :] - X[None]) ** 2) * g).sum(-1))
    s2 = yc @ np.linalg.solve(K + a * np.eye(40), yc) / 40          # σ² profiled out
    gp = GaussianProcessRegressor(ConstantKernel(s2, "fixed") * RBF(1 / np.sqrt(2 * g), "fixed"),
                                  alpha=a * s2, optimizer=None).fit(X, yc)
    mu, sd = gp.predict(Xt, return_std=True)
    np.testing.assert_allclose(mean, mu + y.mean(), atol=1e-10)
    np.testing.assert_allclose(std, np.sqrt(sd ** 2 + a * s2), atol=1e-10)   # + the noise


def test_return_std_needs_an_exact_machine():
    X, y = _data(2, 30)
    reg = KernelRidgeRegressor(gamma=0.5, approximation="rff", random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="exact"):
        reg.predict(X, return_std=True)
    with pytest.raises(TypeError):
        KernelRidgeRegressor(gamma=0.5).fit(X, y).predict(X, return_std="yes")


def test_backward_leave_one_out_values_give_equal_probabilities_not_reversed_ones():
    f = np.linspace(-1, 1, 40)
    codes = (f < 0).astype(np.intp)                 # the values rank the classes backwards
    cal = _uncertainty.fit_calibration(f[:, None], codes, 2)
    assert cal.slope == 0.0
    np.testing.assert_allclose(cal.proba(f[:, None]), 0.5)


def test_one_training_row_is_refused_by_name():
    reg = KernelRidgeRegressor(gamma=0.5).fit(np.zeros((1, 2)), [0.0])
    with pytest.raises(ValueError, match="at least 2 training rows"):
        reg.predict_interval(np.zeros((1, 2)))


def test_only_a_regressor_keeps_the_n_by_n_factor():
    X, y = _data(18, 40)
    clf = LSSVMClassifier(gamma=0.5).fit(X, (y > 0).astype(int))
    clf.predict_proba(X)
    assert clf._loo()[1] is None                     # the classifier drops it
    reg = KernelRidgeRegressor(gamma=0.5).fit(X, y)
    reg.predict_interval(X)
    assert reg._loo()[1].Linv.shape == (40, 40)


# ------------------------------------------------------------------------ pickles
@pytest.mark.parametrize("approx", ["nystrom", "rff", "nystrom-pcg"])
def test_a_feature_map_machine_trades_its_training_rows_for_the_loo_values(approx):
    X, y = _data(19, 400, 8)
    reg = KernelRidgeRegressor(gamma=0.2, alpha=0.5, approximation=approx,
                               fit_intercept="mean", random_state=0).fit(X, y)
    before = len(pickle.dumps(reg))
    assert reg._uncertainty_cache()["source"][0] is not None and before > X.nbytes
    expected = reg.predict_interval(X[:20], coverage=0.8)
    assert reg._uncertainty_cache()["source"][0] is None
    after = pickle.dumps(reg)
    assert len(after) < before - X.nbytes + 400 * 8 + 4096       # the rows gave way to r
    back = pickle.loads(after)
    np.testing.assert_array_equal(back.predict_interval(X[:20], coverage=0.8), expected)
    np.testing.assert_array_equal(back.loo_residuals_, reg.loo_residuals_)


def test_a_pickle_leaves_out_the_exact_machines_factor_and_recomputes_it():
    X, y = _data(20, 300, 2)
    reg = KernelRidgeRegressor(gamma=0.5, alpha=0.3, fit_intercept="mean").fit(X, y)
    expected = reg.predict_interval(X[:10], coverage=0.8)
    _, std = reg.predict(X[:10], return_std=True)
    data = pickle.dumps(reg)
    assert len(data) < 300 * 300 * 8 / 4                     # not the 300 × 300 factor
    assert reg._loo()[1] is not None                         # the fitted one keeps its own
    back = pickle.loads(data)
    np.testing.assert_allclose(back.predict_interval(X[:10], coverage=0.8), expected,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(back.predict(X[:10], return_std=True)[1], std, rtol=1e-12)
    clf = LSSVMClassifier(gamma=0.5).fit(X, (y > 0).astype(int))
    P = clf.predict_proba(X[:10])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X[:10]), P)


@pytest.mark.parametrize("form", FORMS)
def test_the_conjugate_gradient_loo_holds_one_k_by_k_array(form, monkeypatch):
    X, y = _data(21, 1500, 3)
    k = 700
    reg = KernelRidgeRegressor(gamma=0.5, alpha=0.05, fit_intercept=form, random_state=0,
                               approximation=NystroemPCG(n_centres=k)).fit(X, y)
    monkeypatch.setattr(_uncertainty, "_BLOCK_ENTRIES", 2 ** 14)    # blocks ≪ k²
    tracemalloc.start()
    try:
        r = reg.loo_residuals_
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.3 * k * k * 8                  # T, G and L share one array
    monkeypatch.undo()
    again = KernelRidgeRegressor(gamma=0.5, alpha=0.05, fit_intercept=form, random_state=0,
                                 approximation=NystroemPCG(n_centres=k)).fit(X, y)
    np.testing.assert_allclose(r, again.loo_residuals_, rtol=1e-8, atol=1e-9)   # block order


def test_beyond_the_closed_form_limit_the_residuals_take_the_gcv_form(monkeypatch):
    da = pytest.importorskip("dask.array")
    X, y = _data(22, 600, 3)
    make = lambda: KernelRidgeRegressor(gamma=0.5, alpha=0.5, fit_intercept="mean",  # noqa: E731
                                        random_state=0, approximation=NystroemPCG(n_centres=60))
    exact = make().fit(X, y)
    assert exact.loo_method_ == "closed form"
    closed = exact.loo_residuals_                    # computed before the limit moves
    monkeypatch.setattr(_uncertainty, "LOO_EXACT_MAX_N", 599)
    reg = make().fit(X, y)
    assert reg.loo_method_ == "gcv"
    d_eff = reg.model_.details["effective_dimension"][0] + 1.0       # + ȳ
    expected = (y - reg.predict(X)) / (1.0 - d_eff / 600)
    np.testing.assert_allclose(reg.loo_residuals_[:, 0], expected, rtol=1e-12, atol=1e-12)
    # the mean leverage stands in for each: the residuals' 90 % quantile moves little
    q = [np.quantile(np.abs(r), 0.9) for r in (closed, reg.loo_residuals_)]
    assert q[0] != q[1] and abs(q[1] / q[0] - 1.0) < 0.05
    lazy = make().fit(da.from_array(X, chunks=128), da.from_array(y, chunks=128))
    np.testing.assert_allclose(lazy.loo_residuals_, reg.loo_residuals_, rtol=1e-10, atol=1e-12)
    assert make().fit(X[:599], y[:599]).loo_method_ == "closed form"
    unreported = make().fit(X, y)                # a solve without d_eff keeps the closed form
    unreported.model_.details["effective_dimension"] = [float("nan")]
    assert unreported.loo_method_ == "closed form"
    np.testing.assert_allclose(unreported.loo_residuals_, closed, atol=1e-9)


# --------------------------------------------------- the leave-one-out during fit
@pytest.mark.parametrize("form", FORMS)
def test_uncertainty_at_fit_gives_the_values_of_first_use(form):
    X, y = _data(23, 80, 3)
    make = lambda **kw: KernelRidgeRegressor(gamma=0.5, alpha=0.3,  # noqa: E731
                                             fit_intercept=form, **kw)
    lazy, eager = make().fit(X, y), make(uncertainty=True).fit(X, y)
    assert "leave_one_out" in eager.model_.details and "loo" in eager._uncertainty_cache()
    np.testing.assert_allclose(eager.loo_residuals_, lazy.loo_residuals_, atol=1e-12)
    for method in ("jackknife", "jackknife+"):
        np.testing.assert_allclose(eager.predict_interval(X[:7], method=method),
                                   lazy.predict_interval(X[:7], method=method), atol=1e-12)
    np.testing.assert_allclose(eager.predict(X[:7], return_std=True)[1],
                               lazy.predict(X[:7], return_std=True)[1], atol=1e-12)
    ard = dict(kernel="ard", gamma=[0.4, 1.5, 0.1])
    np.testing.assert_allclose(
        KernelRidgeRegressor(**ard, fit_intercept=form, uncertainty=True).fit(X, y)
        .loo_residuals_, KernelRidgeRegressor(**ard, fit_intercept=form).fit(X, y)
        .loo_residuals_, atol=1e-12)
    labels = np.digitize(X[:, 0], [-0.4, 0.4])
    np.testing.assert_allclose(
        LSSVMClassifier(gamma=0.5, uncertainty=True).fit(X, labels).predict_proba(X),
        LSSVMClassifier(gamma=0.5).fit(X, labels).predict_proba(X), atol=1e-12)


def test_uncertainty_at_fit_needs_no_second_factorisation(monkeypatch):
    X, y = _data(24, 60, 2)
    clf = LSSVMClassifier(gamma=0.5, uncertainty=True).fit(X, y > 0)
    reg = KernelRidgeRegressor(gamma=0.5, fit_intercept="mean", uncertainty=True).fit(X, y)

    def refuse(*args, **kwargs):
        raise AssertionError("a second factorisation")

    monkeypatch.setattr(_uncertainty, "ExactSmoother", refuse)
    clf.predict_proba(X)
    reg.predict_interval(X, method="jackknife")
    reg.predict_interval(X, method="jackknife+")       # from the inverse of the fit's factor
    reg.predict(X, return_std=True)
    lazy = KernelRidgeRegressor(gamma=0.5, fit_intercept="mean").fit(X, y)
    with pytest.raises(AssertionError, match="second"):   # without the flag: on first use
        lazy.predict_interval(X, method="jackknife+")
    with pytest.raises(TypeError, match="uncertainty"):
        KernelRidgeRegressor(uncertainty="yes").fit(X, y)
    assert KernelRidgeRegressor(uncertainty=True, approximation="nystrom", gamma=0.5,
                                random_state=0).fit(X, y).loo_residuals_.shape == (60, 1)


def test_selection_regressor_forwards_return_std_to_its_refit_machine():
    X, y = _data(31, 90, 3)
    reg = KernelSelectionRegressor(random_state=0).fit(X, y)
    mean, std = reg.predict(X[:6], return_std=True)
    ref_mean, ref_std = reg.best_estimator_.predict(X[:6], return_std=True)
    np.testing.assert_array_equal(mean, reg.predict(X[:6]))
    np.testing.assert_array_equal(std, ref_std)
    assert np.all(std > 0)
    clf = KernelSelectionClassifier(random_state=0).fit(X, y > 0)
    with pytest.raises(TypeError, match="return_std is offered by regressors"):
        clf.predict(X[:3], return_std=True)
