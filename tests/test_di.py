"""Discriminant-information criteria, gradients, training and transformers."""

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernelselect
from kernelselect import di

import reference


def _problem(seed, n=40, d=3, n_classes=3):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=n)
    labels[:n_classes] = np.arange(n_classes)          # every class present
    X = rng.normal(size=(n, d)) + 0.8 * labels[:, None]
    return rng, X, labels


def _targets(rng, labels, task):
    if task == "classification":
        return di.encode_targets(labels)
    return rng.normal(size=(labels.shape[0], 2))


# -- targets --------------------------------------------------------------------------
def test_encode_targets_matches_loops_and_has_unit_columns():
    labels = np.array(["b", "a", "c", "a", "b", "a"])
    Y = di.encode_targets(labels)
    np.testing.assert_allclose(Y, reference.one_hot_unit_columns(labels), rtol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(Y, axis=0), 1.0, rtol=1e-15)
    np.testing.assert_array_equal(di.encode_targets([1.5, 2.5], task="regression"),
                                  [[1.5], [2.5]])


# -- criteria vs dense definitions ------------------------------------------------------
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 40), J=st.integers(1, 16),
       rho=st.sampled_from([1e-4, 1e-2, 1.0]), task=st.sampled_from(["classification", "regression"]))
def test_di_matches_dense(seed, n, J, rho, task):
    rng, _, labels = _problem(seed, n=n, n_classes=min(3, n))
    F = rng.normal(size=(n, J))
    Y = _targets(rng, labels, task)
    got = di.di_criterion(F, Y, rho)
    np.testing.assert_allclose(got, reference.dense_di(F, Y, rho), rtol=1e-9, atol=1e-12)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 40), J=st.integers(1, 12),
       gamma=st.floats(0.05, 2.0), task=st.sampled_from(["classification", "regression"]))
def test_kdi_matches_dense(seed, n, J, gamma, task):
    rng, X, labels = _problem(seed, n=n, n_classes=min(3, n))
    R = rng.normal(size=(J, X.shape[1])) * 2.0
    G = reference.kernel_matrix(X, R, gamma)
    B = reference.kernel_matrix(R, R, gamma)
    Y = _targets(rng, labels, task)
    rho = 1e-2
    got = di.kdi_criterion(G, B, Y, rho)
    np.testing.assert_allclose(got, reference.dense_kdi(G, B, Y, rho), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kdi_with_landmarks_equal_to_data_is_the_kdca_optimum(seed):
    # G = B = K: KDI = tr((KCK + ρK)⁻¹KCYYᵀCK) equals the KDCA optimum
    # tr((K̄² + ρK̄)⁺ K̄YYᵀK̄), K̄ = CKC (paper eq. 3 and the remark after eq. 10).
    rng, X, labels = _problem(seed, n=14, d=2, n_classes=3)
    K = reference.kernel_matrix(X, X, 1.0)
    Y = di.encode_targets(labels)
    rho = 1e-2
    kdi = di.kdi_criterion(K, K, Y, rho)
    np.testing.assert_allclose(kdi, reference.kdca_optimum(K, Y, rho), rtol=1e-8)
    # … and the ridge form tr(Ȳᵀ K̄ (K̄ + ρI)⁻¹ Ȳ), Ȳ = CY.
    C = reference.centering_matrix(14)
    Kb, Yb = C @ K @ C, C @ Y
    np.testing.assert_allclose(kdi, np.trace(Yb.T @ Kb @ np.linalg.solve(Kb + rho * np.eye(14), Yb)),
                               rtol=1e-8)
    np.testing.assert_allclose(di.nysdi(X, Y, X, 1.0, rho)[0], kdi, rtol=1e-8)


def test_objectives_equal_criteria_on_their_features():
    rng, X, labels = _problem(3, n=50)
    Y = di.encode_targets(labels)
    W = rng.normal(size=(3, 9))
    b = rng.uniform(0, 2 * np.pi, size=9)
    F = reference.rff_features(X, W, b)
    np.testing.assert_allclose(di.rfdi(X, Y, W, b, 1e-3)[0], reference.dense_di(F, Y, 1e-3), rtol=1e-9)
    R = X[:7] + 0.1
    G, B = reference.kernel_matrix(X, R, 0.5), reference.kernel_matrix(R, R, 0.5)
    np.testing.assert_allclose(di.nysdi(X, Y, R, 0.5, 1e-3)[0], reference.dense_kdi(G, B, Y, 1e-3),
                               rtol=1e-8)


def test_di_is_bounded_by_the_number_of_classes_and_rises_with_separation():
    rng, X, labels = _problem(4, n=60)
    Y = di.encode_targets(labels)
    F_sep = np.column_stack([Y, rng.normal(size=(60, 2))])     # contains the labels
    F_rand = rng.normal(size=(60, 5))
    sep, rnd = di.di_criterion(F_sep, Y, 1e-6), di.di_criterion(F_rand, Y, 1e-6)
    assert 0 <= rnd < sep < 3


# -- gradients vs central differences -------------------------------------------------
def _fd_relative_error(f, x, grad, h=1e-6):
    num = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        num[i] = (f(x + e) - f(x - e)) / (2 * h)
    return np.abs(num - grad).max() / np.abs(grad).max()


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("seed", [0, 1])
def test_rfdi_gradient_matches_finite_differences(seed, task):
    rng, X, labels = _problem(seed, n=30, d=3)
    Y = _targets(rng, labels, task)
    W = rng.normal(size=(3, 6))
    b = rng.uniform(0, 2 * np.pi, size=6)
    _, gW, gb = di.rfdi(X, Y, W, b, 1e-3)
    assert _fd_relative_error(lambda w: di.rfdi(X, Y, w, b, 1e-3)[0], W, gW) < 1e-6
    assert _fd_relative_error(lambda c: di.rfdi(X, Y, W, c, 1e-3)[0], b, gb) < 1e-6


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("seed", [0, 1])
def test_nysdi_gradient_matches_finite_differences(seed, task):
    rng, X, labels = _problem(seed, n=30, d=3)
    Y = _targets(rng, labels, task)
    R = X[rng.choice(30, 6, replace=False)] + 0.1 * rng.normal(size=(6, 3))
    _, gR = di.nysdi(X, Y, R, 0.4, 1e-3)
    assert _fd_relative_error(lambda r: di.nysdi(X, Y, r, 0.4, 1e-3)[0], R, gR) < 1e-6


# -- training --------------------------------------------------------------------------
def _replay_schedule(objective, tol=1e-3, patience=3):
    """Decay epochs and stop reason the documented rule implies for these means."""
    best, stale, decayed, decays = -np.inf, 0, False, []
    for t, m in enumerate(objective):
        if best == -np.inf or m > best + tol * abs(best):
            best, stale, decayed = m, 0, False
            continue
        stale += 1
        if stale < patience:
            continue
        if decayed:
            return decays, "no improvement after decay", t
        decays.append(t)
        stale, decayed = 0, True
    return decays, "max_epochs", len(objective) - 1


@pytest.mark.parametrize("batch_size", [300, 100])
def test_rfdi_training_raises_the_objective_and_follows_the_schedule(batch_size):
    rng, X, labels = _problem(5, n=300, d=4)
    Y = di.encode_targets(labels)
    W, b, hist = di.train_rfdi(X, labels, 20, gamma=0.3, batch_size=batch_size,
                               max_epochs=400, random_state=0)
    assert hist.n_batches == 300 // batch_size and hist.batch_size == batch_size
    init = np.random.default_rng(0)                 # the documented initial draw
    W0 = init.normal(0.0, np.sqrt(2 * 0.3), size=(4, 20))
    b0 = init.uniform(0.0, 2 * np.pi, size=20)
    assert di.rfdi(X, Y, W, b)[0] > di.rfdi(X, Y, W0, b0)[0] + 0.02
    if batch_size == 300:                            # full batch: a deterministic objective
        assert hist.objective[-1] > hist.objective[0] + 0.2
        assert np.all(np.diff(hist.objective[:20]) > 0)
    decays, reason, last = _replay_schedule(hist.objective)
    assert hist.decays == decays and hist.stop_reason == reason
    assert last == hist.n_epochs - 1 and reason == "no improvement after decay"
    lr = np.asarray(hist.learning_rate)
    assert lr[0] == 1e-2
    for k in range(1, hist.n_epochs):      # the rate changes only by ×0.1 after a decay
        expected = lr[k - 1] * (0.1 if (k - 1) in hist.decays else 1.0)
        np.testing.assert_allclose(lr[k], expected, rtol=1e-15)


def test_nysdi_training_raises_the_objective():
    rng, X, labels = _problem(6, n=200, d=3)
    Y = di.encode_targets(labels)
    R, idx, hist = di.train_nysdi(X, labels, 8, gamma=0.5, batch_size=200, max_epochs=60,
                                  random_state=1)
    assert hist.objective[-1] > hist.objective[0] + 0.02
    assert di.nysdi(X, Y, R, 0.5)[0] > di.nysdi(X, Y, X[idx], 0.5)[0]


def test_training_is_reproducible():
    _, X, labels = _problem(7, n=120)
    a = di.train_rfdi(X, labels, 10, gamma=0.5, batch_size=40, max_epochs=5, random_state=3)
    b = di.train_rfdi(X, labels, 10, gamma=0.5, batch_size=40, max_epochs=5, random_state=3)
    c = di.train_rfdi(X, labels, 10, gamma=0.5, batch_size=40, max_epochs=5, random_state=4)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert a[2].objective == b[2].objective
    assert not np.array_equal(a[0], c[0])
    r1 = di.train_nysdi(X, labels, 5, gamma=0.5, batch_size=40, max_epochs=4, random_state=3)
    r2 = di.train_nysdi(X, labels, 5, gamma=0.5, batch_size=40, max_epochs=4, random_state=3)
    np.testing.assert_array_equal(r1[0], r2[0])
    np.testing.assert_array_equal(r1[1], r2[1])


def test_the_two_trainers_take_the_same_parameters():
    """train_rfdi and train_nysdi are written out separately, each readable on its own;
    their parameters, defaults and annotations must not drift apart."""
    import inspect

    rfdi_sig, nysdi_sig = inspect.signature(di.train_rfdi), inspect.signature(di.train_nysdi)
    assert nysdi_sig == rfdi_sig.replace(return_annotation=nysdi_sig.return_annotation)


def test_regression_training_and_progress_bar():
    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, size=(150, 2))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=150)
    W, b, hist = di.train_rfdi(X, y, 10, gamma=1.0, task="regression", batch_size=50,
                               max_epochs=15, random_state=0, progress=True)
    assert hist.objective[-1] > hist.objective[0]


def test_duplicated_landmarks_stay_finite():
    # B and GᵀCG + ρB are singular: the Cholesky solve falls back to a small jitter
    rng, X, labels = _problem(17, n=40)
    Y = di.encode_targets(labels)
    R = np.vstack([X[:4], X[:4]])
    value, grad = di.nysdi(X, Y, R, 0.5, 1e-8)
    assert np.isfinite(value) and np.all(np.isfinite(grad))
    np.testing.assert_allclose(value, di.nysdi(X, Y, X[:4], 0.5, 1e-8)[0], rtol=1e-4)


def test_default_batch_size_follows_the_paper():
    assert di.default_batch_size(100) == 1000
    assert di.default_batch_size(500) == 1000
    assert di.default_batch_size(501) == 1002


def test_select_gamma_di_picks_the_best_score():
    _, X, labels = _problem(9, n=80)
    Y = di.encode_targets(labels)
    gammas = [0.01, 0.1, 1.0, 10.0]
    for approx in ("rff", "nystroem"):
        res = di.select_gamma_di(X, labels, gammas, approximation=approx, n_components=20,
                                 random_state=0)
        assert res["gamma"] == gammas[int(np.argmax(res["scores"]))]
        assert res["criterion"] == {"rff": "di", "nystroem": "kdi"}[approx]
    # the RFF score is the DI of the shared draw scaled by √(2γ)
    rng = np.random.default_rng(0)
    W0 = rng.standard_normal((3, 20))
    b = rng.uniform(0, 2 * np.pi, size=20)
    res = di.select_gamma_di(X, labels, gammas, n_components=20, random_state=0)
    want = [reference.dense_di(reference.rff_features(X, np.sqrt(2 * g) * W0, b), Y, 1e-4)
            for g in gammas]
    np.testing.assert_allclose(res["scores"], want, rtol=1e-8)


def _gamma_di_inputs(seed, n, task):
    rng, X, labels = _problem(seed, n=n)
    if task == "classification":
        return X, labels, di.encode_targets(labels)
    Yr = rng.normal(size=(n, 2))
    return X, Yr, Yr


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("approx", ["rff", "nystroem"])
def test_select_gamma_di_is_the_select_kernel_call(approx, task):
    X, y, _ = _gamma_di_inputs(17, 60, task)
    gammas = [0.05, 0.3, 2.0]
    got = di.select_gamma_di(X, y, gammas, approximation=approx, n_components=12, rho=1e-3,
                             task=task, random_state=5)
    name = {"rff": "di", "nystroem": "kdi"}[approx]
    stand_in = (kernelselect.RFF(n_features=12) if approx == "rff"
                else kernelselect.Nystroem(n_landmarks=12, eigen_floor=0.0))
    res = kernelselect.select_kernel(
        X, y, criterion=name, approximation=stand_in, gammas=gammas, standardize=False,
        task={"classification": "multiclass", "regression": "regression"}[task], rho=1e-3,
        random_state=5)
    np.testing.assert_array_equal(got["scores"], res.curves[name][:, 0])
    assert got["gamma"] == res.best_gamma and got["criterion"] == name
    np.testing.assert_array_equal(got["gammas"], gammas)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(8, 40), J=st.integers(1, 8),
       gamma=st.floats(0.2, 3.0), task=st.sampled_from(["classification", "regression"]),
       approx=st.sampled_from(["rff", "nystroem"]))
def test_select_gamma_di_scores_match_the_dense_formula(seed, n, J, gamma, task, approx):
    # the draws select_gamma_di documents: W₀ then b (RFF), sorted landmark indices (Nyström)
    X, y, Y = _gamma_di_inputs(seed, n, task)
    gammas = [gamma / 4, gamma]
    got = di.select_gamma_di(X, y, gammas, approximation=approx, n_components=J, rho=1e-2,
                             task=task, random_state=seed)["scores"]
    rng = np.random.default_rng(seed)
    if approx == "rff":
        W0 = rng.standard_normal((X.shape[1], J))
        b = rng.uniform(0, 2 * np.pi, size=J)
        want = [reference.dense_di(reference.rff_features(X, np.sqrt(2 * g) * W0, b), Y, 1e-2)
                for g in gammas]
    else:
        R = X[np.sort(rng.choice(n, size=J, replace=False))]
        want = [reference.dense_kdi(reference.kernel_matrix(X, R, g),
                                    reference.kernel_matrix(R, R, g), Y, 1e-2) for g in gammas]
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_select_gamma_di_nystroem_is_the_kdi_formula_where_b_is_ill_conditioned(task):
    # At γ = 10⁻³ and 10⁻² cond(B) is 1.7e12 and 2.4e8: the KDI formula in 60-digit
    # arithmetic is the reference. Keeping every positive eigenvalue of B matches it to
    # about 1e-9; the Nyström approximation's default eigen_floor (1e-8) would be
    # 0.5 % low, the direct float64 formula (Cholesky of GᵀCG + ρB) 1e-7 off.
    X, y, Y = _gamma_di_inputs(9, 80, task)
    gammas = [1e-3, 1e-2, 1.0]
    got = di.select_gamma_di(X, y, gammas, approximation="nystroem", n_components=20,
                             task=task, random_state=0)["scores"]
    R = X[np.sort(np.random.default_rng(0).choice(80, size=20, replace=False))]
    want = [reference.mp_kdi(X, R, Y, g, 1e-4) for g in gammas]
    np.testing.assert_allclose(got, want, rtol=1e-7)


def _exact_di(K, Y, rho):
    """DI of the exact kernel in its ridge form tr(Ȳᵀ K̄ (K̄ + ρI)⁻¹ Ȳ), K̄ = CKC, Ȳ = CY
    (the KDCA optimum, well-conditioned for ρ > 0)."""
    C = reference.centering_matrix(K.shape[0])
    Kb, Yb = C @ K @ C, C @ np.asarray(Y, dtype=float).reshape(K.shape[0], -1)
    return float(np.trace(Yb.T @ Kb @ np.linalg.solve(Kb + rho * np.eye(K.shape[0]), Yb)))


def test_select_kernel_hands_di_a_target_matrix():
    _, X, labels = _problem(18, n=30, d=2)
    rng = np.random.default_rng(18)
    gammas = [0.1, 1.0]
    K = [reference.kernel_matrix(X, X, g) for g in gammas]
    # several real target columns: DI of the exact kernel is the KDCA optimum with Y
    Yr = rng.normal(size=(30, 3))
    res = kernelselect.select_kernel(X, Yr, criterion="di", approximation="exact",
                                     gammas=gammas, standardize=False, rho=1e-2)
    np.testing.assert_allclose(res.curves["di"][:, 0],
                               [_exact_di(k, Yr, 1e-2) for k in K], rtol=1e-7)
    assert res.details["task"] == "regression"
    # the task is select_kernel's: whole-number ratings 3…8 are a real target
    ratings = rng.integers(3, 9, size=30).astype(float)
    res = kernelselect.select_kernel(X, ratings, criterion="di", approximation="exact",
                                     gammas=gammas, standardize=False, rho=1e-2)
    np.testing.assert_allclose(res.curves["di"][:, 0],
                               [_exact_di(k, ratings, 1e-2) for k in K], rtol=1e-7)
    # class labels: the unit-norm indicator columns, for two classes as for more
    for y in (labels, labels > 0):
        res = kernelselect.select_kernel(X, y, criterion="kdi", approximation="exact",
                                         gammas=gammas, standardize=False, rho=1e-2)
        want = [_exact_di(k, reference.one_hot_unit_columns(y), 1e-2) for k in K]
        np.testing.assert_allclose(res.curves["kdi"][:, 0], want, rtol=1e-7)
    # the other criteria still take one target per row
    for crit in ("kta", ["di", "eloo"]):
        with pytest.raises(ValueError, match="one target per row"):
            kernelselect.select_kernel(X, Yr, criterion=crit, gammas=gammas)
    with pytest.raises(ValueError, match="task="):
        kernelselect.select_kernel(X, Yr, criterion="di", gammas=gammas, task="multiclass")


# -- bad inputs ---------------------------------------------------------------------------
def test_bad_inputs():
    rng, X, labels = _problem(10, n=20)
    Y = di.encode_targets(labels)
    W, b = rng.normal(size=(3, 4)), rng.uniform(size=4)
    with pytest.raises(ValueError, match="one class|single class"):
        di.encode_targets(np.zeros(5))
    with pytest.raises(ValueError, match="single class"):
        di.train_rfdi(X, np.ones(20), 4)
    for rho in (0.0, -1.0):
        with pytest.raises(ValueError, match="rho"):
            di.rfdi(X, Y, W, b, rho)
        with pytest.raises(ValueError, match="rho"):
            di.di_criterion(X, Y, rho)
    with pytest.raises(ValueError, match="W"):
        di.rfdi(X, Y, np.zeros((3, 0)), np.zeros(0))
    with pytest.raises(ValueError, match="n_components"):
        di.train_rfdi(X, labels, 0)
    with pytest.raises(ValueError, match="landmarks"):
        di.nysdi(X, Y, np.zeros((0, 3)), 1.0)
    with pytest.raises(ValueError, match="W must have shape"):
        di.rfdi(X, Y, rng.normal(size=(2, 4)), b)
    with pytest.raises(ValueError, match="b must have"):
        di.rfdi(X, Y, W, np.zeros(5))
    with pytest.raises(ValueError, match="Y has 19 rows|Y has 19 entries"):
        di.rfdi(X, Y[:19], W, b)
    with pytest.raises(ValueError, match="landmarks must have shape"):
        di.nysdi(X, Y, np.zeros((4, 2)), 1.0)
    with pytest.raises(ValueError, match="B must have shape"):
        di.kdi_criterion(np.ones((20, 3)), np.eye(2), Y)
    with pytest.raises(ValueError, match="gamma"):
        di.nysdi(X, Y, X[:3], -1.0)
    with pytest.raises(ValueError, match="n_components=30 exceeds"):
        di.train_nysdi(X, labels, 30)
    with pytest.raises(ValueError, match="task"):
        di.train_rfdi(X, labels, 3, task="clustering")
    with pytest.raises(ValueError, match="approximation"):
        di.select_gamma_di(X, labels, [1.0], approximation="mcm")
    with pytest.raises(ValueError, match="X contains NaN"):
        di.rfdi(np.full((20, 3), np.nan), Y, W, b)


# -- transformers ------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [kernelselect.DIRandomFourierFeatures, kernelselect.DINystroem])
def test_transformer_in_a_pipeline(cls):
    from sklearn.linear_model import RidgeClassifier
    from sklearn.pipeline import make_pipeline

    _, X, labels = _problem(11, n=150)
    model = make_pipeline(cls(n_components=15, gamma=0.5, max_epochs=10, random_state=0),
                          RidgeClassifier(alpha=1e-3))
    model.fit(X, labels)
    assert model.score(X, labels) > 0.6
    step = model[0]
    assert step.transform(X).shape == (150, 15)
    assert step.history_.n_epochs >= 1


@pytest.mark.parametrize("cls", [kernelselect.DIRandomFourierFeatures, kernelselect.DINystroem])
def test_transformer_feature_names_pandas_output_and_column_transformer(cls):
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import RidgeClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    _, X, labels = _problem(13, n=60)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    prefix = cls.__name__.lower()
    est = cls(n_components=5, max_epochs=2, random_state=0).fit(frame, labels)
    names = [f"{prefix}{j}" for j in range(5)]
    assert est.get_feature_names_out().tolist() == names
    out = est.set_output(transform="pandas").transform(frame)
    assert isinstance(out, pd.DataFrame) and out.columns.tolist() == names
    np.testing.assert_array_equal(out.to_numpy(), est.set_output(transform="default")
                                  .transform(frame))
    # in a Pipeline with pandas output, and beside another block of columns
    pipe = make_pipeline(cls(n_components=4, max_epochs=2, random_state=0),
                         RidgeClassifier()).set_output(transform="pandas").fit(frame, labels)
    assert pipe[:-1].get_feature_names_out().tolist() == names[:4]
    ct = ColumnTransformer([("di", cls(n_components=4, max_epochs=2, random_state=0),
                             ["x0", "x1"]),
                            ("scaled", StandardScaler(), ["x2"])])
    table = ct.set_output(transform="pandas").fit(frame, labels).transform(frame)
    assert table.columns.tolist() == [f"di__{n}" for n in names[:4]] + ["scaled__x2"]
    with pytest.raises(TypeError, match="verbose must be True or False"):
        cls(verbose="no").fit(frame, labels)


def test_transformer_maps_agree_with_the_trained_parameters():
    _, X, labels = _problem(12, n=80)
    Y = di.encode_targets(labels)
    rff = kernelselect.DIRandomFourierFeatures(12, gamma=0.5, max_epochs=5, random_state=0).fit(X, labels)
    W, b, _ = di.train_rfdi(X, labels, 12, gamma=0.5, max_epochs=5, random_state=0)
    np.testing.assert_array_equal(rff.random_weights_, W)
    np.testing.assert_allclose(rff.transform(X), reference.rff_features(X, W, b), rtol=1e-12)
    nys = kernelselect.DINystroem(10, gamma=0.5, max_epochs=5, random_state=0).fit(X, labels)
    # DI of the Nyström features K(X, X_r) B^{-1/2} is the KDI of the landmarks
    R = nys.components_
    G, B = reference.kernel_matrix(X, R, 0.5), reference.kernel_matrix(R, R, 0.5)
    np.testing.assert_allclose(di.di_criterion(nys.transform(X), Y, 1e-4),
                               reference.dense_kdi(G, B, Y, 1e-4), rtol=1e-6)


def test_transformers_pass_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    for est in (kernelselect.DIRandomFourierFeatures(n_components=8, max_epochs=2),
                kernelselect.DINystroem(n_components=8, max_epochs=2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = check_estimator(est, on_fail=None)
        failed = [(r["check_name"], r["status"]) for r in results
                  if r["status"] != "passed"
                  # array-API inputs are not supported: skipped unless SCIPY_ARRAY_API=1
                  and r["check_name"] != "check_array_api_input"]
        assert failed == [], failed
        assert len(results) > 40


def test_transformer_without_scikit_learn_raises_import_error(monkeypatch):
    for name in list(sys.modules):
        if name == "sklearn" or name.startswith("sklearn."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "sklearn", None)
    # the package's one scikit-learn import, loaded afresh without scikit-learn …
    guard_path = Path(kernelselect.__file__).parent / "utils" / "_sklearn.py"
    spec = importlib.util.spec_from_file_location("kernelselect.utils._sklearn", guard_path)
    guard = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(guard)
    monkeypatch.setitem(sys.modules, "kernelselect.utils._sklearn", guard)
    # … and the transformers built on it
    path = Path(kernelselect.di.__file__).with_name("transformers.py")
    spec = importlib.util.spec_from_file_location("kernelselect.di._transformers_nosk", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(ImportError, match="scikit-learn"):
        module.DIRandomFourierFeatures()
    with pytest.raises(ImportError, match="scikit-learn"):
        module.DINystroem(n_components=5)


# -- criteria registry ("di" / "kdi" for select_kernel) ----------------------------------
def _built(approx, X, y, gamma):
    state = approx.prepare(X, y, kernel="gaussian", random_state=0, workers=None)
    approx.configure({"spectral"})
    return state, approx.build(X, y, gamma, kernel="gaussian", state=state, workers=None)


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_registered_di_on_rff_operator_is_the_di_of_its_features(task):
    from kernelselect.criteria import evaluate_criterion

    rng, X, labels = _problem(13, n=70)
    y = labels.astype(float) if task == "classification" else rng.normal(size=70)
    approx = kernelselect.RFF(n_features=12, random_state=0)
    state, op = _built(approx, X, y, 0.4)
    Z = approx.features(X, 0.4, kernel="gaussian", state=state)
    Y = di.encode_targets(labels) if task == "classification" else y
    got = evaluate_criterion("di", op, y, rho=1e-3, task=task)
    np.testing.assert_allclose(got, reference.dense_di(Z, Y, 1e-3), rtol=1e-8)


def test_registered_kdi_on_nystroem_operator_is_the_kdi_of_its_landmarks():
    from kernelselect.criteria import evaluate_criterion

    _, X, labels = _problem(14, n=70)
    approx = kernelselect.Nystroem(n_landmarks=9, random_state=0)
    state, op = _built(approx, X, labels, 0.4)
    R = X[state.landmarks]
    G, B = reference.kernel_matrix(X, R, 0.4), reference.kernel_matrix(R, R, 0.4)
    got = evaluate_criterion("kdi", op, labels.astype(float))
    np.testing.assert_allclose(got, reference.dense_kdi(G, B, di.encode_targets(labels), 1e-4),
                               rtol=1e-7)


def test_registered_di_on_the_exact_kernel_is_the_kdca_optimum():
    from kernelselect.criteria import evaluate_criterion

    _, X, labels = _problem(15, n=25, d=2)
    _, op = _built(kernelselect.Exact(), X, labels, 1.0)
    K = reference.kernel_matrix(X, X, 1.0)
    got = evaluate_criterion("di", op, labels.astype(float), rho=1e-2)
    np.testing.assert_allclose(got, reference.kdca_optimum(K, di.encode_targets(labels), 1e-2),
                               rtol=1e-7)


def test_select_kernel_with_di_and_kdi():
    _, X, labels = _problem(16, n=90)
    gammas = [0.01, 0.1, 1.0]
    res = kernelselect.select_kernel(X, labels.astype(float), criterion=["di", "kdi"],
                                     approximation=kernelselect.Nystroem(n_landmarks=20),
                                     gammas=gammas, alphas=[1e-3, 1.0], random_state=0)
    assert res.directions["di"] == "max"
    curve = res.curves["kdi"][:, 0]
    np.testing.assert_array_equal(res.curves["kdi"][:, 1], curve)     # α-independent
    np.testing.assert_allclose(res.curves["di"], res.curves["kdi"], rtol=1e-12)
    assert res.best_gamma == gammas[int(np.argmax(curve))]
    with pytest.raises(ValueError, match="rho"):
        kernelselect.select_kernel(X, labels.astype(float), criterion="di", approximation="rff",
                                   gammas=gammas, rho=0.0)
