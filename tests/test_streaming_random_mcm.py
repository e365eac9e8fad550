"""The streamed randomised labelled MCM: against the in-memory operator (same draws)
and against dense references written from the formulas."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref

import kernelselect
from kernelselect.criteria import evaluate_criterion
from test_streaming import _problem
from kernelselect.operators.random_mcm import scaled_frequencies
from kernelselect.operators.streaming_lowrank import ArrayRows, evaluate_grid
from kernelselect.operators.streaming_random_mcm import FFT_CRITERIA, STREAMED_CRITERIA

ALPHAS = np.array([0.05, 1.0, 20.0])
ALL = list(STREAMED_CRITERIA) + list(FFT_CRITERIA)
BINARY_ONLY = ("random_mmd", "random_mmd_row")


def _ops(X, y, gammas, D=40, kernel="gaussian", threads=1, rows=None, seed=0):
    approx = kernelselect.RandomMCM(n_features=D)
    state = approx.prepare(X, y, kernel=kernel, random_state=np.random.default_rng(seed))
    source = ArrayRows(X, y, threads=threads, rows=rows)
    stream = approx.build_all(source, y, gammas, kernel=kernel, state=state)
    memory = [approx.build(X, y, g, kernel=kernel, state=state) for g in gammas]
    return stream, memory, source, state


def _values(ops, y, names):
    out = {name: np.empty((len(ops), ALPHAS.size)) for name in names}

    def evaluate(i, op, name):
        out[name][i] = evaluate_criterion(name, op, y, ALPHAS)

    evaluate_grid(ops, names, evaluate)
    return out


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
@pytest.mark.parametrize("binary", [True, False], ids=["binary", "regression"])
def test_same_criteria_as_in_memory_operator(binary, kernel):
    X, y = _problem(binary=binary)
    names = ALL if binary else [c for c in ALL if c not in BINARY_ONLY]
    gammas = [0.02, 0.1, 0.4, 1.6, 6.4, 10.0]          # 10 is not a doubling of its neighbour
    stream, memory, _, _ = _ops(X, y, gammas, kernel=kernel, rows=97)
    got = _values(stream, y, names)
    for name in names:
        want = np.array([evaluate_criterion(name, op, y, ALPHAS) for op in memory])
        np.testing.assert_allclose(got[name], want, rtol=1e-8, atol=1e-14, err_msg=name)


def test_one_pass_serves_every_gamma_and_streamed_criterion():
    X, y = _problem(n=200)
    stream, _, source, _ = _ops(X, y, [0.1, 0.2, 0.4, 3.0])
    assert source.passes == 0                         # nothing is read before it is asked for
    _values(stream, y, list(STREAMED_CRITERIA))
    assert source.passes == 1
    # criteria asked later reuse the statistics (no further pass)
    _values(stream, y, ["random_kta", "random_kta_row"])
    assert source.passes == 1


def test_only_the_statistics_asked_for_are_formed():
    X, y = _problem(n=200)
    stream, _, source, _ = _ops(X, y, [0.1, 0.2])
    _values(stream, y, ["random_kta", "random_mmd_row"])
    family = stream[0]._family
    assert {kind for _, kind in family.stats} == {"base"}
    _values(stream, y, ["random_kta_row"])             # the D × D Gram needs one more pass
    assert source.passes == 2 and (0, "gram") in family.stats


def test_thread_count_and_block_size_do_not_change_bits():
    X, y = _problem(n=700)
    names = list(STREAMED_CRITERIA)
    results = [_values(_ops(X, y, [0.05, 0.3, 2.0], threads=t, rows=r)[0], y, names)
               for t, r in [(1, 64), (3, 64), (2, 64)]]
    for other in results[1:]:
        for name in names:
            assert np.array_equal(results[0][name], other[name]), name


@settings(max_examples=12, deadline=None)
@given(n=st.integers(8, 25), d=st.integers(1, 3), D=st.integers(2, 6),
       log_gamma=st.floats(-2.0, 1.0), seed=st.integers(0, 2 ** 31), rows=st.integers(1, 9))
def test_streamed_statistics_match_dense_references(n, d, D, log_gamma, seed, rows):
    """The paper forms on the explicit lifted Gram matrix UUᴴ (Π × Π), the row-power and
    random-feature forms from the explicit features z(x) = √(2/D) cos(xᵀW + b)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    y[:2] = [-1.0, 1.0]
    gamma = 10.0 ** log_gamma
    (op,), _, _, state = _ops(X, y, [gamma], D=D, rows=rows, seed=seed)
    W = scaled_frequencies(state.W0, gamma, "gaussian")
    b = state.b
    vals = _values([op], y, list(STREAMED_CRITERIA))
    column = ref.labeled_rff_column(X, y, W, b)
    assert np.isclose(vals["random_kta"][0, 0], ref.random_kta_dense(column), rtol=1e-9)
    ybar = np.where(y > 0, 1.0 / np.sum(y > 0), -1.0 / np.sum(y < 0))
    bar = ref.labeled_rff_column(X, ybar, W, b)
    assert np.isclose(vals["random_mmd"][0, 0], ref.random_mmd_dense(bar),
                      rtol=1e-9, atol=1e-13)
    Z = ref.rff_features(X, W, b)
    assert np.isclose(vals["random_mmd_row"][0, 0], np.sum((Z.T @ ybar) ** 2), rtol=1e-9,
                      atol=1e-13)
    A = Z @ Z.T
    assert np.isclose(vals["random_kta_row"][0, 0], (y @ A @ y) / (n * np.linalg.norm(A)),
                      rtol=1e-9, atol=1e-13)
    Z2 = ref.rff_features(X, scaled_frequencies(state.W0, 2.0 * gamma, "gaussian"), b)
    assert np.isclose(vals["random_kta_row_2g"][0, 0],
                      (y @ A @ y) / (n * np.linalg.norm(Z2.sum(axis=0))), rtol=1e-9,
                      atol=1e-13)
    sigma = 0.01 * np.std(y)
    for j, alpha in enumerate(ALPHAS):
        R = np.linalg.inv(A + alpha * np.eye(n))
        c1 = alpha ** 2 / n * y @ R @ R @ y + sigma ** 2 / n * np.trace(A @ R)
        assert np.isclose(vals["random_c1_rff"][0, j], c1, rtol=1e-7), alpha


def test_select_kernel_streams_random_mcm():
    X, y = _problem(n=400)
    approx = kernelselect.RandomMCM(n_features=30)
    small = kernelselect.select_kernel(X, y, criterion="random_kta_row_2g", approximation=approx,
                                       gammas=[0.01, 0.02], random_state=3)
    assert all(op.get("method") != "streaming" for op in small.details["operators"])
    approx.in_memory_max_bytes = 0          # as for data too large for per-γ columns
    res = kernelselect.select_kernel(X, y, criterion=["random_kta_row_2g", "random_c1"],
                                     approximation=approx, gammas=0.01 * 2.0 ** np.arange(8),
                                     random_state=3)
    assert all(op["method"] == "streaming" for op in res.details["operators"])
    # the curves of the per-γ in-memory operators with the same draws
    Xs = kernelselect.selection.standardize_columns(X)
    state = approx.prepare(Xs, y, random_state=3)
    for name in res.criteria:
        want = [evaluate_criterion(name, approx.build(Xs, y, g, state=state), y,
                                   res.alphas) for g in res.gammas]
        np.testing.assert_allclose(res.curves[name], want, rtol=1e-8, err_msg=name)


def test_labels_outside_the_probe_basis_are_refused():
    X, y = _problem(n=200, binary=False)
    (op,), _, _, _ = _ops(X, y, [0.3])
    with pytest.raises(ValueError, match="span of y, 1 and the class indicators"):
        op.zero_row_power(np.arange(200.0) ** 2)
    with pytest.raises(TypeError, match="random_\\* criteria"):
        op.power_quadratic(1, np.ones((200, 1)))
