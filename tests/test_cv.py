"""k-fold cross-validation over (γ, α): brute force, full-rank Nyström, folds, presets."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect import Nystroem, ProportionalNystroem, cross_validate_grid
from kernelselect.models._cv import make_folds

from reference import kernel_matrix, krr_mean_solve, krr_solve, lssvm_solve


def brute_force_cv(X, y, gammas, alphas, folds, bias, loss, center=False):
    """Fresh dense solve of the bordered system (or of KRR, of the centred target with
    ``center``) for every (γ, α, fold)."""
    out = np.empty((len(folds), len(gammas), len(alphas)))
    classes = np.unique(y)
    for f, (tr, va) in enumerate(folds):
        for i, g in enumerate(gammas):
            K = kernel_matrix(X[tr], X[tr], g)
            Kv = kernel_matrix(X[va], X[tr], g)
            for j, a in enumerate(alphas):
                if loss == "error" and classes.size > 2:
                    scores = []
                    for c in classes:
                        t = np.where(y[tr] == c, 1.0, -1.0)
                        coef, b = solve(K, t, a, bias)
                        scores.append(Kv @ coef + b)
                    pred = classes[np.argmax(np.column_stack(scores), axis=1)]
                    out[f, i, j] = np.mean(pred != y[va])
                    continue
                t = np.where(y[tr] == classes[-1], 1.0, -1.0) if loss == "error" else y[tr]
                coef, b = krr_mean_solve(K, t, a) if center else solve(K, t, a, bias)
                fv = Kv @ coef + b
                if loss == "error":
                    out[f, i, j] = np.mean(np.where(fv >= 0, classes[-1], classes[0]) != y[va])
                else:
                    out[f, i, j] = np.mean((fv - y[va]) ** 2)
    return out


def solve(K, t, a, bias):
    return lssvm_solve(K, t, a) if bias else (krr_solve(K, t, a), 0.0)


def data(seed, n, d, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    score = X[:, 0] + 0.5 * rng.standard_normal(n)
    edges = np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1])
    return X, np.digitize(score, edges).astype(float)


GAMMAS = [0.05, 0.5, 2.0]
ALPHAS = [1e-2, 0.3, 3.0]


@settings(max_examples=8)
@given(st.integers(0, 2**31 - 1), st.sampled_from([(2, "lssvm", "error"), (3, "lssvm", "error"),
                                                    (0, "krr", "mse"), (0, "lssvm", "mse")]))
def test_exact_cv_equals_brute_force(seed, case):
    classes, machine, loss = case
    X, y = data(seed, 30, 2, max(classes, 2))
    if classes == 0:
        y = X[:, 0] + np.sin(X[:, 1])
    res = cross_validate_grid(X, y, gammas=GAMMAS, alphas=ALPHAS, machine=machine, loss=loss,
                              cv=3, random_state=seed)
    ref = brute_force_cv(X, y, GAMMAS, ALPHAS, res.details["folds"], machine == "lssvm", loss)
    fl = res.details["fold_losses"]
    if loss == "error":
        # a decision value within rounding of 0 may flip; allow one point per fold
        n_va = min(va.size for _, va in res.details["folds"])
        assert np.max(np.abs(fl - ref)) <= 1.0 / n_va + 1e-12
        assert np.mean(fl == ref) > 0.95
    else:
        np.testing.assert_allclose(fl, ref, rtol=1e-6)
    np.testing.assert_allclose(res.curves["cv"], fl.mean(axis=0))


@settings(max_examples=6)
@given(st.integers(0, 2**31 - 1), st.floats(-50.0, 50.0))
def test_centred_krr_cv_equals_brute_force(seed, shift):
    # each training fold's own mean is subtracted and added back (no held-out leak)
    X, _ = data(seed, 30, 2)
    y = X[:, 0] + np.sin(X[:, 1]) + shift
    res = cross_validate_grid(X, y, gammas=GAMMAS, alphas=ALPHAS, machine="krr", cv=3,
                              random_state=seed, center=True)
    ref = brute_force_cv(X, y, GAMMAS, ALPHAS, res.details["folds"], False, "mse", center=True)
    np.testing.assert_allclose(res.details["fold_losses"], ref, rtol=1e-6)
    shifted = cross_validate_grid(X, y + 7.0, gammas=GAMMAS, alphas=ALPHAS, machine="krr",
                                  cv=3, random_state=seed, center=True)
    np.testing.assert_allclose(shifted.curves["cv"], res.curves["cv"], rtol=1e-6)
    with pytest.raises(ValueError, match="center"):
        cross_validate_grid(X, np.sign(y - np.median(y)), gammas=GAMMAS, alphas=ALPHAS,
                            center=True)


@pytest.mark.parametrize("machine", ["lssvm", "krr"])
def test_full_rank_nystroem_cv_equals_exact_cv(machine):
    X, y = data(1, 40, 3)
    if machine == "krr":
        y = X[:, 0] ** 2 + X[:, 1]
    folds = make_folds(y, 4, stratify=machine == "lssvm", random_state=0)
    exact = cross_validate_grid(X, y, gammas=GAMMAS, alphas=ALPHAS, machine=machine, cv=folds)
    full = ProportionalNystroem(landmark_fraction=1.0, rank_fraction=1.0, eigen_floor=0.0)
    approx = cross_validate_grid(X, y, gammas=GAMMAS, alphas=ALPHAS, machine=machine, cv=folds,
                                 approximation=full, random_state=0)
    if machine == "krr":
        np.testing.assert_allclose(approx.curves["cv"], exact.curves["cv"], rtol=1e-6)
    else:
        np.testing.assert_array_equal(approx.curves["cv"], exact.curves["cv"])
    assert approx.best_gamma == exact.best_gamma and approx.best_alpha == exact.best_alpha


def test_stratified_folds_partition_and_keep_proportions():
    y = np.array([0] * 30 + [1] * 12 + [2] * 8, dtype=float)
    folds = make_folds(y, 4, stratify=True, random_state=3)
    tests = np.concatenate([va for _, va in folds])
    assert np.array_equal(np.sort(tests), np.arange(50))
    for tr, va in folds:
        assert np.intersect1d(tr, va).size == 0 and tr.size + va.size == 50
        counts = np.bincount(y[va].astype(int), minlength=3)
        assert np.all(np.abs(counts - np.array([30, 12, 8]) / 4) <= 1)
    again = make_folds(y, 4, stratify=True, random_state=3)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))


def test_cv_accepts_splitters_and_pairs_and_is_reproducible():
    X, y = data(2, 36, 2)
    a = cross_validate_grid(X, y, gammas=GAMMAS, alphas=ALPHAS, cv=3, random_state=5,
                            approximation=Nystroem(n_landmarks=10, rank=5))
    b = cross_validate_grid(X, y, gammas=GAMMAS, alphas=ALPHAS, cv=3, random_state=5,
                            approximation=Nystroem(n_landmarks=10, rank=5))
    np.testing.assert_array_equal(a.curves["cv"], b.curves["cv"])
    c = cross_validate_grid(X, y, gammas=GAMMAS, alphas=ALPHAS, cv=a.details["folds"])
    from sklearn.model_selection import PredefinedSplit

    fold_id = np.empty(36, dtype=int)
    for f, (_, va) in enumerate(a.details["folds"]):
        fold_id[va] = f
    d = cross_validate_grid(X, y, gammas=GAMMAS, alphas=ALPHAS, cv=PredefinedSplit(fold_id))
    np.testing.assert_array_equal(c.curves["cv"], d.curves["cv"])


def test_nystrom_cv_setting():
    p = kernelselect.nystrom_cv_setting()
    np.testing.assert_array_equal(np.log2(p["gammas"]), np.arange(-15, 10, 2))
    np.testing.assert_array_equal(np.log2(p["alphas"]), np.arange(-15, 6, 2))
    assert p["gammas"].size == 13 and p["alphas"].size == 11
    assert p["approximation"]._sizes(400) == (40, 20)
    X, y = data(4, 60, 2)
    res = cross_validate_grid(X, y, cv=3, random_state=0, approximation=p["approximation"])
    assert res.curves["cv"].shape == (13, 11)
    assert np.all((res.curves["cv"] >= 0) & (res.curves["cv"] <= 1))


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"alphas": [0.0]}, ValueError, "alphas"),
    ({"alphas": [-1.0]}, ValueError, "alphas"),
    ({"gammas": [np.nan]}, ValueError, "gammas"),
    ({"cv": 1}, ValueError, "cv"),
    ({"cv": 40}, ValueError, "cv"),
    ({"cv": "five"}, TypeError, "cv"),
    ({"machine": "svm"}, ValueError, "machine"),
    ({"loss": "hinge"}, ValueError, "loss"),
    ({"approximation": Nystroem(n_landmarks=30)}, ValueError, "n_landmarks"),
    ({"approximation": Nystroem(n_landmarks=5, rank=6)}, ValueError, "rank"),
    ({"approximation": ProportionalNystroem(landmark_fraction=1.5)}, ValueError, "fraction"),
])
def test_bad_cv_inputs(kwargs, exc, match):
    X, y = data(5, 30, 2)
    with pytest.raises(exc, match=match):
        cross_validate_grid(X, y, **{"gammas": GAMMAS, "alphas": ALPHAS, "cv": 3, **kwargs})


def test_bad_targets():
    X, y = data(6, 30, 2)
    with pytest.raises(ValueError, match="one class"):
        cross_validate_grid(X, np.ones(30), cv=3)
    with pytest.raises(ValueError, match="y has 29 entries"):
        cross_validate_grid(X, y[:-1], cv=3)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cross_validate_grid(Xn, y, cv=3)
    y2 = y.copy()
    y2[:2] = 7.0                           # a class with 2 members cannot fill 3 folds
    with pytest.raises(ValueError, match="smallest"):
        cross_validate_grid(X, y2, cv=3)


def test_cached_distance_predictions_equal_streaming():
    from kernelselect.models._cv import _distance_predict, _held_out_distances

    rng = np.random.default_rng(9)
    A, B = rng.standard_normal((130, 4)), rng.standard_normal((70, 4))
    coef = rng.standard_normal((70, 2, 3))
    D = _held_out_distances(A, B, "gaussian")
    np.testing.assert_allclose(D, ((A[:, None] - B[None]) ** 2).sum(-1),
                               rtol=1e-10, atol=1e-12)
    got = _distance_predict(D, 0.3, coef, None)
    ref = np.einsum("ij,jtl->itl", kernel_matrix(A, B, 0.3), coef)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(got, _distance_predict(D, 0.3, coef, 2))
    assert _held_out_distances(A, B, "laplacian") is None


@pytest.mark.parametrize("where, old, new", [
    ("kernelselect", "paper004_grid", "nystrom_cv_setting"),
    ("kernelselect.models", "paper004_grid", "nystrom_cv_setting"),
    ("kernelselect.models", "PAPER_004_GAMMAS", "CV_GAMMAS"),
    ("kernelselect.models", "PAPER_004_ALPHAS", "CV_ALPHAS"),
    ("kernelselect.models._cv", "PAPER_004_GAMMAS", "CV_GAMMAS"),
])
def test_former_names_warn_and_give_the_new_object(where, old, new):
    import importlib
    module = importlib.import_module(where)
    with pytest.warns(FutureWarning, match=f"{old} is deprecated.*use {where}.{new}"):
        value = getattr(module, old)
    assert value is getattr(module, new)
    with pytest.raises(AttributeError, match="no attribute 'paper005_grid'"):
        getattr(module, "paper005_grid")
