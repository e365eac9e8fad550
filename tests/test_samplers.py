"""Nyström landmark samplers: distributions, modified and optimal approximations, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect.operators._samplers import (
    column_norm_probabilities,
    gumbel_top_c,
    ridge_leverage_scores,
)
from kernelselect.operators.nystrom import SAMPLERS

import reference as ref
from _toy import binary_data, prepare


def data(n=40, d=3, seed=0):
    return binary_data(n, d, seed, tilt=0.3)


def dense(op):
    return (op.basis * op.eigenvalues) @ op.basis.T


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
@given(seed=st.integers(0, 2 ** 16), gamma=st.floats(0.05, 3.0), n=st.integers(2, 30))
@settings(max_examples=15)
def test_column_norm_probabilities_equal_dense(kernel, seed, gamma, n):
    X, _ = data(n, seed=seed)
    p = column_norm_probabilities(X, gamma, kernel=kernel)
    np.testing.assert_allclose(p, ref.column_norm_probabilities(X, gamma, kernel), rtol=1e-10)
    assert p.sum() == pytest.approx(1.0, rel=1e-12)


def test_gumbel_top_c_is_the_top_of_log_p_plus_noise():
    p = np.array([0.1, 0.4, 0.0, 0.3, 0.2])
    g = np.array([0.5, -1.0, 9.0, 0.2, 1.5])
    keys = np.log(np.array([0.1, 0.4, 1.0, 0.3, 0.2])) + g
    keys[2] = -np.inf  # zero weight is never chosen
    np.testing.assert_array_equal(gumbel_top_c(p, g, 2), np.sort(np.argsort(-keys)[:2]))
    np.testing.assert_array_equal(gumbel_top_c(p, g, 5), np.arange(5))


def test_gumbel_top_one_samples_p():
    # c = 1 is a categorical draw from p: frequencies over 20000 fixed-seed draws
    rng = np.random.default_rng(1)
    p = np.array([0.5, 0.25, 0.15, 0.1])
    counts = np.bincount([gumbel_top_c(p, rng.gumbel(size=4), 1)[0] for _ in range(20000)],
                         minlength=4)
    np.testing.assert_allclose(counts / 20000, p, atol=0.015)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_column_norm_landmarks_follow_the_state_noise(kernel):
    X, y = data(50)
    approx = kernelselect.Nystroem(n_landmarks=10, sampler="column_norm")
    state = prepare(approx, X, y, kernel)
    for gamma in (0.2, 1.5):
        idx, pts = approx.landmarks_for(X, gamma, kernel=kernel, state=state)
        p = ref.column_norm_probabilities(X, gamma, kernel)
        assert pts is None
        np.testing.assert_array_equal(idx, gumbel_top_c(p, state.gumbel, 10))
        op = approx.build(X, y, gamma, kernel=kernel, state=state, workers=None)
        np.testing.assert_allclose(dense(op), ref.nystroem_matrix(X, idx, gamma, kernel, 10, 1e-8),
                                   atol=1e-9)


@given(seed=st.integers(0, 2 ** 16), gamma=st.floats(0.05, 3.0), lam=st.floats(0.05, 5.0),
       cp=st.integers(1, 25))
@settings(max_examples=25)
def test_leverage_estimate_matches_its_formula_and_bounds_the_exact_scores(seed, gamma, lam, cp):
    X, _ = data(25, seed=seed)
    pilot = np.sort(np.random.default_rng(seed).choice(25, size=cp, replace=False))
    K = ref.kernel_matrix(X, X, gamma)
    est = ridge_leverage_scores(X, gamma, pilot, lam)
    np.testing.assert_allclose(est, ref.ridge_leverage_nystroem(K, pilot, lam), rtol=1e-8,
                               atol=1e-12)
    exact = ref.ridge_leverage(K, lam)
    assert np.all(est >= exact * (1 - 1e-8) - 1e-12)
    assert np.all(est <= 1.0 / lam + 1e-12)


def test_leverage_estimate_is_exact_for_a_full_pilot_and_within_the_stated_factor():
    for seed in range(4):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((80, 3))
        for gamma in (0.1, 0.5, 2.0):
            lam = 0.4
            K = ref.kernel_matrix(X, X, gamma)
            exact = ref.ridge_leverage(K, lam)
            full = ridge_leverage_scores(X, gamma, np.arange(80), lam)
            np.testing.assert_allclose(full, exact, rtol=1e-7)
            cp = min(80, int(np.ceil(2 * exact.sum())))
            pilot = np.sort(rng.choice(80, size=cp, replace=False))
            ratio = ridge_leverage_scores(X, gamma, pilot, lam) / exact
            assert ratio.min() >= 1 - 1e-8 and ratio.max() <= 8.0


def test_leverage_sampler_uses_the_estimate():
    X, y = data(60)
    approx = kernelselect.Nystroem(n_landmarks=12, sampler="leverage", pilot_size=20, ridge=0.5)
    state = prepare(approx, X, y)
    idx, _ = approx.landmarks_for(X, 0.7, kernel="gaussian", state=state)
    K = ref.kernel_matrix(X, X, 0.7)
    p = ref.ridge_leverage_nystroem(K, state.pilot, 0.5)
    np.testing.assert_array_equal(idx, gumbel_top_c(p, state.gumbel, 12))


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_modified_nystroem_equals_dense_formula(kernel):
    X, y = data(40)
    approx = kernelselect.Nystroem(n_landmarks=8, sampler="modified", eigen_floor=0.0)
    state = prepare(approx, X, y, kernel)
    for gamma in (0.3, 1.0):
        op = approx.build(X, y, gamma, kernel=kernel, state=state, workers=None)
        expect = ref.modified_nystroem_matrix(X, state.landmarks, gamma, kernel)
        np.testing.assert_allclose(dense(op), expect, atol=1e-9 * np.abs(expect).max())


def test_modified_is_closer_to_k_than_plain_nystroem():
    X, y = data(60)
    K = ref.kernel_matrix(X, X, 0.5)
    plain = kernelselect.Nystroem(n_landmarks=10, random_state=3)
    mod = kernelselect.Nystroem(n_landmarks=10, sampler="modified", random_state=3)
    sp, sm = prepare(plain, X, y), prepare(mod, X, y)
    np.testing.assert_array_equal(sp.landmarks, sm.landmarks)
    kw = dict(kernel="gaussian", workers=None)
    ep = np.linalg.norm(K - dense(plain.build(X, y, 0.5, state=sp, **kw)))
    em = np.linalg.norm(K - dense(mod.build(X, y, 0.5, state=sm, **kw)))
    assert em <= ep * (1 + 1e-10)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_optimal_equals_dense_top_k(kernel):
    X, y = data(35)
    approx = kernelselect.Nystroem(n_landmarks=10, rank=6, sampler="optimal")
    state = prepare(approx, X, y, kernel)
    op = approx.build(X, y, 0.8, kernel=kernel, state=state, workers=None)
    np.testing.assert_allclose(dense(op), ref.optimal_rank_k(X, 0.8, 6, kernel), atol=1e-10)


def test_optimal_refuses_large_n():
    X = np.zeros((5001, 1))
    with pytest.raises(ValueError, match="n ≤ 5000"):
        prepare(kernelselect.Nystroem(n_landmarks=10, sampler="optimal"), X, None)


def test_kmeans_landmarks_reproducible_and_used():
    X, y = data(60)
    a = prepare(kernelselect.Nystroem(n_landmarks=7, sampler="kmeans", random_state=5), X, y)
    b = prepare(kernelselect.Nystroem(n_landmarks=7, sampler="kmeans", random_state=5), X, y)
    c = prepare(kernelselect.Nystroem(n_landmarks=7, sampler="kmeans", random_state=6), X, y)
    np.testing.assert_array_equal(a.points, b.points)
    assert a.points.shape == (7, 3) and not np.array_equal(a.points, c.points)
    approx = kernelselect.Nystroem(n_landmarks=7, sampler="kmeans", random_state=5)
    op = approx.build(X, y, 0.6, kernel="gaussian", state=a, workers=None)
    np.testing.assert_allclose(dense(op), ref.nystroem_points_matrix(X, a.points, 0.6),
                               atol=1e-8)


def test_user_landmarks_indices_and_points():
    X, y = data(30)
    idx = np.array([3, 1, 17, 25])
    approx = kernelselect.Nystroem(landmarks=idx)
    state = prepare(approx, X, y)
    np.testing.assert_array_equal(state.landmarks, np.sort(idx))
    op = approx.build(X, y, 0.9, kernel="gaussian", state=state, workers=None)
    np.testing.assert_allclose(dense(op), ref.nystroem_matrix(X, np.sort(idx), 0.9, "gaussian",
                                                             4, 1e-8), atol=1e-10)
    Z = np.random.default_rng(2).standard_normal((5, 3))
    approx = kernelselect.Nystroem(landmarks=Z)
    state = prepare(approx, X, y)
    op = approx.build(X, y, 0.9, kernel="gaussian", state=state, workers=None)
    assert op.details["n_landmarks"] == 5
    np.testing.assert_allclose(dense(op), ref.nystroem_points_matrix(X, Z, 0.9), atol=1e-9)
    mod = kernelselect.Nystroem(landmarks=idx, sampler="modified", eigen_floor=0.0)
    st_ = prepare(mod, X, y)
    op = mod.build(X, y, 0.9, kernel="gaussian", state=st_, workers=None)
    np.testing.assert_allclose(dense(op), ref.modified_nystroem_matrix(X, np.sort(idx), 0.9),
                               atol=1e-9)


@pytest.mark.parametrize("sampler", SAMPLERS)
def test_every_sampler_through_select_kernel_and_solver(sampler):
    X, y = data(60)
    gammas = [0.1, 0.5, 2.0]
    approx = kernelselect.Nystroem(n_landmarks=15, rank=10, sampler=sampler, random_state=0)
    r1 = kernelselect.select_kernel(X, y, gammas=gammas, criterion=["ree", "kta"],
                                    approximation=approx, random_state=0, standardize=False)
    r2 = kernelselect.select_kernel(X, y, gammas=gammas, criterion=["ree", "kta"],
                                    approximation=approx, random_state=0, standardize=False)
    for crit in ("ree", "kta"):
        assert np.all(np.isfinite(r1.curves[crit]))
        np.testing.assert_array_equal(r1.curves[crit], r2.curves[crit])
    # the exact criterion on the same K̃: criteria see exactly the built operator
    state = prepare(approx, X, y)
    op = approx.build(X, y, 0.5, kernel="gaussian", state=state, workers=None)
    Kt = dense(op)
    assert r1.curves["ree"][1, 0] == pytest.approx(ref.crit_ree(Kt, y, 1.0), rel=1e-8)
    model = kernelselect.LSSVMClassifier(approximation=approx).fit(X, y)
    assert model.score(X, y) > 0.7


def test_bad_inputs_raise_clear_errors():
    X, y = data(20)
    cases = [
        (dict(n_landmarks=21), ValueError, "exceeds the number of samples"),
        (dict(n_landmarks=5, rank=6), ValueError, "rank=6 exceeds"),
        (dict(n_landmarks=0), ValueError, "n_landmarks"),
        (dict(sampler="nope"), ValueError, "uniform, column_norm, leverage, kmeans, modified"),
        (dict(landmarks=np.zeros((4, 2))), ValueError, r"shape \(c, 3\)"),
        (dict(landmarks=np.array([0, 20])), ValueError, "indices must lie in"),
        (dict(landmarks=np.array([1, 1])), ValueError, "distinct"),
        (dict(landmarks=np.array([1, 2]), rank=3), ValueError, "rank=3 exceeds"),
        (dict(landmarks=np.array([1, 2]), sampler="leverage"), ValueError, "landmarks="),
        (dict(landmarks=np.zeros((2, 3)), sampler="modified"), ValueError, "indices"),
        (dict(sampler="leverage", pilot_size=30), ValueError, "pilot_size"),
        (dict(sampler="leverage", ridge=-1.0), ValueError, "ridge"),
    ]
    for params, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            prepare(kernelselect.Nystroem(**params), X, y)
