"""Randomised labelled MCM (paper 000): operator and criteria vs explicit matrices."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelselect.criteria import random_mcm as RC
from kernelselect.criteria import get_criterion
from kernelselect.operators.random_mcm import RandomMCM, RandomMCMOperator, scaled_frequencies


import reference as ref
FAST = settings(deadline=None, max_examples=20)
ALPHAS = np.array([0.05, 1.0, 7.0])


def _problem(seed, n, D, d=3, kernel="gaussian", gamma=0.4, regression=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if regression:
        y = rng.normal(size=n)
    else:
        y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        rng.shuffle(y)
    A = RandomMCM(n_features=D)
    state = A.prepare(X, y, kernel=kernel, random_state=seed)
    return X, y, A, state, A.build(X, y, gamma, kernel=kernel, state=state)


def _rel(a, b, rtol=1e-9):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12 * max(1.0, np.max(np.abs(b))))


# -- the column and the spectrum ------------------------------------------------------


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_column_uses_scaled_standard_draws(kernel):
    X, y, A, state, op = _problem(0, 9, 5, kernel=kernel, gamma=0.7)
    W = scaled_frequencies(state.W0, 0.7, kernel)
    expected = np.sqrt(2.0 * 0.7) * state.W0 if kernel == "gaussian" else 0.7 * state.W0
    np.testing.assert_array_equal(W, expected)
    _rel(op.unlabeled, ref.labeled_rff_column(X, None, W, state.b))
    _rel(op.column(y), ref.labeled_rff_column(X, y, W, state.b))
    assert np.all((state.b >= 0) & (state.b <= 2 * np.pi))


@FAST
@given(seed=st.integers(0, 2 ** 31), n=st.integers(3, 7), D=st.integers(1, 5))
def test_spectrum_is_eigenvalues_of_UUH(seed, n, D):
    X, y, A, state, op = _problem(seed, n, D)
    M = ref.lifted_gram(op.column(y))
    w = np.linalg.eigvalsh(M)
    _rel(np.sort(ref.circulant_spectrum(op.column(y)).ravel()), w, rtol=1e-8)
    s = ref.circulant_spectrum(op.column(y))
    _rel(op.zero_coefficient(y), s[0, 0])
    _rel(op.total_power(y), s.sum())
    Z = ref.rff_features(X, scaled_frequencies(state.W0, 0.4, "gaussian"), state.b)
    _rel(op.zero_row_power(y), s[0].sum())
    _rel(op.zero_row_power(y), np.sum((Z.T @ y) ** 2))


# -- the paper's criteria vs explicit U --------------------------------------------------


@FAST
@given(seed=st.integers(0, 2 ** 31), n=st.integers(3, 7), D=st.integers(1, 5),
       kernel=st.sampled_from(["gaussian", "laplacian"]))
def test_paper_criteria_match_dense(seed, n, D, kernel):
    X, y, A, state, op = _problem(seed, n, D, kernel=kernel)
    u = op.column(y)
    _rel(RC.random_c1(op, y, ALPHAS), [ref.random_c1_dense(u, a) for a in ALPHAS])
    _rel(RC.random_kta(op, y, ALPHAS), np.full(3, ref.random_kta_dense(u)))
    ybar = RC.class_weighted_labels(y)
    _rel(RC.random_mmd(op, y, ALPHAS), np.full(3, ref.random_mmd_dense(op.column(ybar))))


@FAST
@given(seed=st.integers(0, 2 ** 31), n=st.integers(3, 6), D=st.integers(1, 4),
       regression=st.booleans())
def test_random_eloo_matches_dense_lssvm_on_lifted_points(seed, n, D, regression):
    X, y, A, state, op = _problem(seed, n, D, regression=regression)
    loss = "squared" if regression else "error_rate"
    got = RC.random_eloo(op, y, ALPHAS)                      # loss="auto"
    expected, lo, hi = [], [], []
    for a in ALPHAS:
        e, value = ref.random_eloo_dense(op.unlabeled, y, a, loss)
        np.testing.assert_allclose(e, np.repeat(e[:, :1], D, axis=1), rtol=1e-7, atol=1e-9)
        expected.append(value)
        margin = y * (y - e[:, 0])
        lo.append(np.mean(margin < -1e-8))                   # exact ties (margin 0) are
        hi.append(np.mean(margin <= 1e-8))                   # decided by round-off
    if regression:
        _rel(got, expected, rtol=1e-7)
    else:
        assert np.all((np.array(lo) <= got) & (got <= np.array(hi)))
        # the squared loss of the same residuals is also available for ±1 labels
        sq = [np.mean(ref.random_eloo_dense(op.unlabeled, y, a, "squared")[0] ** 2) for a in ALPHAS]
        _rel(RC.random_eloo(op, y, ALPHAS, loss="squared"), sq, rtol=1e-7)


# -- the row-power estimators -------------------------------------------------------------


@FAST
@given(seed=st.integers(0, 2 ** 31), n=st.integers(3, 9), D=st.integers(1, 6))
def test_row_estimators_match_random_feature_formulas(seed, n, D):
    X, y, A, state, op = _problem(seed, n, D)
    W = scaled_frequencies(state.W0, 0.4, "gaussian")
    Z = ref.rff_features(X, W, state.b)
    Z2 = ref.rff_features(X, scaled_frequencies(state.W0, 0.8, "gaussian"), state.b)
    G = Z @ Z.T
    _rel(RC.random_kta_row(op, y, ALPHAS), np.full(3, y @ G @ y / (n * np.linalg.norm(G))))
    _rel(RC.random_kta_row_2g(op, y, ALPHAS),
         np.full(3, y @ G @ y / (n * np.sqrt(np.ones(n) @ Z2 @ Z2.T @ np.ones(n)))))
    ybar = RC.class_weighted_labels(y)
    _rel(RC.random_mmd_row(op, y, ALPHAS), np.full(3, ybar @ G @ ybar))
    sigma = 0.3
    expected = []
    for a in ALPHAS:
        R = np.linalg.inv(G + a * np.eye(n))
        expected.append(a ** 2 / n * y @ R @ R @ y + sigma ** 2 / n * np.trace(G @ R))
    _rel(RC.random_c1_rff(op, y, ALPHAS, sigma=sigma), expected, rtol=1e-8)


def test_row_powers_are_unbiased_estimates_for_large_D():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(rng.normal(size=40) > 0, 1.0, -1.0)
    gamma = 0.3
    A = RandomMCM(n_features=20000)
    op = A.build(X, y, gamma, state=A.prepare(X, y, random_state=1))
    K = ref.kernel_matrix(X, X, gamma)
    assert op.zero_row_power(y) == pytest.approx(y @ K @ y, rel=0.05)
    c = op.doubled_unlabeled().sum(axis=0)
    assert op.n_features * c @ c == pytest.approx(np.sum(K ** 2), rel=0.05)


# -- reproducibility and protocol ------------------------------------------------------------


def test_reproducible_with_random_state():
    X, y, A, s1, op1 = _problem(4, 12, 6)
    op2 = RandomMCM(n_features=6).build(X, y, 0.4, state=RandomMCM(n_features=6).prepare(X, y, random_state=4))
    np.testing.assert_array_equal(op1.unlabeled, op2.unlabeled)
    op3 = RandomMCM(n_features=6, random_state=5).build(X, y, 0.4)
    op4 = RandomMCM(n_features=6, random_state=5).build(X, y, 0.4)
    np.testing.assert_array_equal(op3.unlabeled, op4.unlabeled)
    assert not np.array_equal(op1.unlabeled, op3.unlabeled)
    for name, f in RC.RANDOM_CRITERIA.items():
        np.testing.assert_array_equal(f(op1, y, ALPHAS), f(op2, y, ALPHAS))
        assert get_criterion(name).direction in ("min", "max")


def test_operator_refuses_the_generic_protocol():
    X, y, A, state, op = _problem(0, 6, 3)
    assert isinstance(op, RandomMCMOperator) and op.details["n_features"] == 3
    for call in (lambda: op.power_trace(1), lambda: op.quadratic(lambda l: l, y[:, None]),
                 lambda: op.diagonal()):
        with pytest.raises(TypeError, match="random_"):
            call()


def test_bad_inputs():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 2))
    y = np.ones(8)
    for bad in (0, -3):
        with pytest.raises(ValueError, match="n_features"):
            RandomMCM(n_features=bad).prepare(X, y)
    with pytest.raises(TypeError, match="n_features"):
        RandomMCM(n_features=2.5).prepare(X, y)
    A = RandomMCM(n_features=4)
    state = A.prepare(X, y, kernel="gaussian", random_state=0)
    with pytest.raises(ValueError, match="kernel='laplacian'"):
        A.build(X, y, 1.0, kernel="laplacian", state=state)
    with pytest.raises(ValueError, match="gamma"):
        A.build(X, y, -1.0, state=state)
    op = A.build(X, y, 1.0, state=state)
    with pytest.raises(ValueError, match="two classes"):
        RC.random_mmd(op, y, [1.0])
    with pytest.raises(ValueError, match="two classes"):
        RC.random_mmd_row(op, y, [1.0])
    with pytest.raises(ValueError, match="alpha"):
        RC.random_c1(op, y, [0.0])
    with pytest.raises(ValueError, match="8 rows"):
        RC.random_kta(op, y[:5], [1.0])
    with pytest.raises(ValueError, match="loss"):
        RC.random_eloo(op, y, [1.0], loss="hinge")
    with pytest.raises(ValueError, match="±1"):
        RC.random_eloo(op, np.arange(8.0), [1.0], loss="error_rate")
    with pytest.raises(ValueError, match="NaN"):
        RandomMCM().prepare(np.full((4, 2), np.nan), None)


# -- registry and the driver ------------------------------------------------------------------


def test_registered_with_directions_and_requirement():
    from kernelselect.criteria import approximations_for, criterion_names, get_criterion

    names = set(criterion_names())
    assert set(RC.RANDOM_CRITERIA) <= names
    for name, func in RC.RANDOM_CRITERIA.items():
        crit = get_criterion(name)
        # the registry's direction is the one the formula's docstring states
        assert crit.func is func and crit.needs == "random_mcm"
        assert {"min": "Minimise.", "max": "Maximise."}[crit.direction] in func.__doc__
        assert approximations_for(name) == ["random_mcm"]
    assert get_criterion("random_mmd").labels == "binary"


def test_select_kernel_runs_random_mcm_and_mcm():
    import kernelselect as ks

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, 1.0, -1.0)
    names = list(RC.RANDOM_CRITERIA)
    r1 = ks.select_kernel(X, y, criterion=names, approximation=ks.RandomMCM(n_features=16),
                          alphas=(0.5, 2.0), random_state=3)
    r2 = ks.select_kernel(X, y, criterion=names, approximation="random_mcm", alphas=(0.5, 2.0),
                          random_state=3)
    for name in names:
        assert r1.curves[name].shape == (15, 2) and np.all(np.isfinite(r1.curves[name]))
    assert r2.details["operators"][0]["n_features"] == 100
    r3 = ks.select_kernel(X, y, criterion=["ree", "kta", "eloo"], approximation=ks.MCM(levels=2),
                          random_state=0)
    assert r3.details["operators"][0]["m"] == (10, 6)
    assert np.all(r3.curves["ree"] > 0)                    # clipped U: no negative training error
    with pytest.raises(ValueError, match="random_mcm"):
        ks.select_kernel(X, y, criterion="random_kta", approximation="rff")
    with pytest.raises(ValueError, match="mcm"):
        ks.select_kernel(X, y, criterion="kta", approximation="random_mcm")


@pytest.mark.parametrize("D", [1, 2, 5, 6])
def test_half_spectrum_carries_the_whole_spectrum(D):
    X, y, A, state, op = _problem(2, 7, D)
    s = ref.circulant_spectrum(op.column(y))
    for f in (lambda t: t, lambda t: 1.0 / (t + 0.3), np.sqrt):
        _rel(op.spectral_sum(f, y), np.sum(f(s)))
    s_half, weight = op.half_spectrum(y)
    _rel(s_half, s[:, : D // 2 + 1])
    assert weight.sum() == D


def test_x_is_checked_once_per_grid(monkeypatch):
    """build() given the array prepare() checked takes the checked copy (no check or
    cast per γ) and gives the same column as a build that checks X; any other X is
    still checked."""
    from kernelselect.lowlevel import labeled_rff_column
    from kernelselect.operators import random_mcm as rm

    rng = np.random.default_rng(1)
    X32 = rng.normal(size=(40, 3)).astype(np.float32)
    y = np.where(X32[:, 0] > 0, 1.0, -1.0)
    A = RandomMCM(n_features=8)
    state = A.prepare(X32, y, random_state=2)
    calls = []
    real = rm.check_matrix
    monkeypatch.setattr(rm, "check_matrix", lambda *a, **k: calls.append(1) or real(*a, **k))
    ops = [A.build(X32, y, g, state=state) for g in (0.1, 1.0, 10.0)]
    assert calls == []                                  # the grid's X: checked by prepare
    assert ops[0]._X is ops[2]._X and ops[0]._X.dtype == np.float64
    for op, g in zip(ops, (0.1, 1.0, 10.0)):
        want = labeled_rff_column(X32.astype(np.float64), None,
                                  scaled_frequencies(state.W0, g, "gaussian"), state.b)
        np.testing.assert_array_equal(op.unlabeled, want)
        np.testing.assert_array_equal(
            op.doubled_unlabeled(),
            labeled_rff_column(X32.astype(np.float64), None,
                               scaled_frequencies(state.W0, 2 * g, "gaussian"), state.b))
    bad = X32.astype(np.float64)
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X"):
        A.build(bad, y, 1.0, state=state)               # another array: checked
    assert calls == [1]
