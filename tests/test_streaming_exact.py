"""The exact kernel's moments for a whole γ grid from shared passes: against the dense
operator, dense references written from the formulas, and the single-γ operator."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref

import kernelselect
from kernelselect.criteria import evaluate_criterion
from kernelselect.operators.streaming_exact import TILE
from kernelselect.operators.streaming_lowrank import ArrayRows, evaluate_grid

MOMENTS = ["kta", "ckta", "fsm", "mmd", "sm"]
GAMMAS = [0.01, 0.02, 0.04, 0.3, 2.0, 30.0]           # a doubling run, then others


def _problem(n=700, d=3, seed=0, binary=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.linspace(0.5, 2.0, d) + 3.0   # off-centre
    f = X[:, 0] - 0.3 * X[:, 1] ** 2
    y = np.sign(f - np.median(f) + 0.5 * rng.standard_normal(n)) if binary else f
    return X, y


def _grid(X, y, gammas, kernel="gaussian", threads=1):
    approx = kernelselect.Exact(method="streaming")
    state = approx.prepare(X, y, kernel=kernel, random_state=0, workers=1)
    return approx.build_all(ArrayRows(X, y, threads=threads), y, gammas, kernel=kernel,
                            state=state)


def _values(ops, y, names, params=None):
    out = {name: np.empty(len(ops)) for name in names}

    def evaluate(i, op, name):
        out[name][i] = evaluate_criterion(name, op, y, [1.0], **(params or {}).get(name, {}))[0]

    evaluate_grid(ops, names, evaluate)
    return out


def _dense(X, y, gammas, name, kernel="gaussian", **params):
    approx = kernelselect.Exact(method="dense")
    state = approx.prepare(X, y, kernel=kernel, random_state=0, workers=1)
    return np.array([evaluate_criterion(name, approx.build(X, y, g, kernel=kernel,
                                                          state=state, workers=1),
                                        y, [1.0], **params)[0] for g in gammas])


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
@pytest.mark.parametrize("binary", [True, False], ids=["binary", "regression"])
def test_grid_moments_equal_the_dense_operator(kernel, binary):
    X, y = _problem(binary=binary)
    names = MOMENTS if binary else ["kta", "ckta"]
    ops = _grid(X, y, GAMMAS, kernel)
    got = _values(ops, y, names)
    for name in names:
        np.testing.assert_allclose(got[name], _dense(X, y, GAMMAS, name, kernel), rtol=1e-8,
                                   err_msg=name)
    assert ops[0]._family.passes == (2 if "sm" in names else 1)   # sm's r = 3: two passes


@pytest.mark.parametrize("r", [1, 2, 4, 5])
def test_spectral_measure_degrees(r):
    X, y = _problem(n=300)
    ops = _grid(X, y, GAMMAS)
    got = _values(ops, y, ["sm"], {"sm": {"r": r}})["sm"]
    np.testing.assert_allclose(got, _dense(X, y, GAMMAS, "sm", r=r), rtol=1e-8)
    assert ops[0]._family.passes == -(-r // 2)


def test_one_pass_for_every_gamma_of_the_first_moments():
    X, y = _problem(n=2 * TILE + 37)
    ops = _grid(X, y, GAMMAS)
    _values(ops, y, ["kta", "ckta", "fsm", "mmd"])
    assert ops[0]._family.passes == 1


def test_thread_count_does_not_change_bits():
    X, y = _problem(n=3 * TILE + 5)
    runs = [_values(_grid(X, y, GAMMAS, threads=t), y, MOMENTS) for t in (1, 2, 3)]
    for other in runs[1:]:
        for name in MOMENTS:
            assert np.array_equal(runs[0][name], other[name]), name


def test_probe_outside_the_basis_uses_the_single_gamma_operator():
    X, y = _problem(n=200)
    (op,) = _grid(X, y, [0.3])
    P = np.random.default_rng(1).standard_normal((200, 2))
    K = ref.kernel_matrix(X, X, 0.3)
    np.testing.assert_allclose(op.power_quadratic(1, P), P.T @ K @ P, rtol=1e-10)
    np.testing.assert_allclose(op.power_quadratic(2, y[:, None]), y @ K @ K @ y, rtol=1e-10)
    assert op.power_trace(2) == pytest.approx(np.sum(K * K), rel=1e-12)
    with pytest.raises(ValueError, match="only r ≤ 2"):
        op.power_trace(3)


def test_small_gamma_ckta_uses_the_gaussian_expansion():
    X, y = _problem(n=300)
    gammas = [1e-9, 1e-7]
    got = _values(_grid(X, y, gammas), y, ["ckta"])["ckta"]
    single = [kernelselect.Exact(method="streaming").build(X, y, g, kernel="gaussian",
                                                           state=None, workers=1)
              for g in gammas]
    want = [evaluate_criterion("ckta", op, y, [1.0])[0] for op in single]
    np.testing.assert_allclose(got, want, rtol=1e-8)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(5, 40), d=st.integers(1, 3), log_gamma=st.floats(-1.5, 1.0),
       seed=st.integers(0, 2 ** 31), kernel=st.sampled_from(["gaussian", "laplacian"]))
def test_moments_match_dense_references(n, d, log_gamma, seed, kernel):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    y[:2] = [-1.0, 1.0]
    gammas = [10.0 ** log_gamma, 2 * 10.0 ** log_gamma]
    got = _values(_grid(X, y, gammas, kernel), y, MOMENTS)
    for i, g in enumerate(gammas):
        K = ref.kernel_matrix(X, X, g, kernel)
        assert np.isclose(got["kta"][i], ref.crit_kta(K, y), rtol=1e-9)
        assert np.isclose(got["ckta"][i], ref.crit_ckta(K, y), rtol=1e-7, atol=1e-10)
        assert np.isclose(got["mmd"][i], ref.crit_mmd(K, y), rtol=1e-7, atol=1e-10)
        assert np.isclose(got["fsm"][i], ref.crit_fsm(K, y), rtol=1e-6)
        assert np.isclose(got["sm"][i], ref.crit_sm(K, y), rtol=1e-7, atol=1e-10)


def test_select_kernel_shares_the_passes():
    X, y = _problem(n=400)
    res = kernelselect.select_kernel(X, y, criterion=["kta", "mmd"], gammas=GAMMAS,
                                     approximation=kernelselect.Exact(method="streaming"),
                                     standardize=False)
    assert all(op["method"] == "streaming" for op in res.details["operators"])
    for name in ("kta", "mmd"):
        np.testing.assert_allclose(res.curves[name][:, 0], _dense(X, y, GAMMAS, name),
                                   rtol=1e-8)


def test_contrasts_do_not_cancel_when_k_is_nearly_constant():
    """ȳ is orthogonal to 1; at small γ (K ≈ 11ᵀ) its moments must not be read off as a
    difference of class-block sums of order n^r."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((1500, 5))
    y = np.sign(X[:, 0] + 0.5 * rng.standard_normal(1500))
    gammas = [2e-4, 1e-3]
    got = _values(_grid(X, y, gammas), y, ["sm", "mmd"])
    for name in ("sm", "mmd"):
        np.testing.assert_allclose(got[name], _dense(X, y, gammas, name), rtol=1e-9,
                                   err_msg=name)
