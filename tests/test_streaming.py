"""Streaming Nyström / random-feature operators: against the in-memory operators (same
landmarks or frequencies) and against dense references written from the formulas."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref

import kernelselect
from kernelselect.criteria import evaluate_criterion
from kernelselect.operators.streaming_lowrank import ArrayRows, evaluate_grid

CRITERIA = ["ree", "ipe", "c1", "gcv", "eloo", "eloo_error_rate", "kta", "ckta", "fsm", "mmd",
            "sm"]
ALPHAS = np.array([0.05, 1.0, 20.0])


def _problem(n=300, d=4, seed=0, binary=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    f = X[:, 0] + 0.5 * np.sin(2 * X[:, 1])
    y = np.sign(f + 0.3 * rng.standard_normal(n)) if binary else f + 0.1 * rng.standard_normal(n)
    return X, y


def _ops(approx, X, y, gammas, threads=1, rows=None, seed=0):
    state = approx.prepare(X, y, kernel="gaussian", random_state=np.random.default_rng(seed),
                           workers=1)
    stream = approx.build_all(ArrayRows(X, y, threads=threads, rows=rows), y, gammas,
                              kernel="gaussian", state=state)
    memory = [approx.build(X, y, g, kernel="gaussian", state=state, workers=1) for g in gammas]
    return stream, memory


def _values(ops, y, names, alphas=ALPHAS):
    out = {name: np.empty((len(ops), alphas.size)) for name in names}

    def evaluate(i, op, name):
        out[name][i] = evaluate_criterion(name, op, y, alphas)

    evaluate_grid(ops, names, evaluate)
    return out


@pytest.mark.parametrize("approx", [kernelselect.Nystroem(n_landmarks=60),
                                    kernelselect.RFF(n_features=50)], ids=["nystrom", "rff"])
@pytest.mark.parametrize("binary", [True, False], ids=["binary", "regression"])
def test_same_criteria_as_in_memory_operator(approx, binary):
    X, y = _problem(binary=binary)
    if binary:
        names = CRITERIA
    else:
        names = [c for c in CRITERIA if c not in ("fsm", "mmd", "sm", "eloo_error_rate")]
    # the smallest γ give an ill-conditioned W (the rotated accumulation, Transform)
    gammas = [0.02, 0.1, 0.4, 1.6, 6.4]
    stream, memory = _ops(approx, X, y, gammas, rows=97)
    got = _values(stream, y, names)
    want = {name: np.array([evaluate_criterion(name, op, y, ALPHAS) for op in memory])
            for name in names}
    for name in names:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-10, atol=1e-14, err_msg=name)
    for a, b in zip(stream, memory):
        np.testing.assert_allclose(a.eigenvalues, b.eigenvalues[:a.eigenvalues.size],
                                   rtol=1e-9, atol=1e-10 * b.eigenvalues[0])


@settings(max_examples=15)
@given(n=st.integers(20, 70), d=st.integers(1, 4), c=st.integers(3, 15),
       log_gamma=st.floats(-2.0, 1.5), seed=st.integers(0, 2 ** 31), rows=st.integers(1, 30))
def test_nystroem_criteria_match_dense_reference(n, d, c, log_gamma, seed, rows):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    gamma = 10.0 ** log_gamma
    approx = kernelselect.Nystroem(n_landmarks=min(c, n))
    state = approx.prepare(X, y, kernel="gaussian", random_state=np.random.default_rng(seed),
                           workers=1)
    (op,) = approx.build_all(ArrayRows(X, y, threads=1, rows=rows), y, [gamma],
                             kernel="gaussian", state=state)
    A = ref.nystroem_matrix(X, state.landmarks, gamma, "gaussian", state.rank, 1e-8)
    scale = np.abs(A).max()
    got = _values([op], y, CRITERIA, np.array([1.0]))
    want = {
        "ree": ref.crit_ree(A, y, 1.0), "gcv": ref.crit_gcv(A, y, 1.0),
        "ipe": ref.crit_ipe(A, y, 1.0, 0.01 * np.std(y)),
        "c1": ref.crit_c1(A, y, 1.0, 0.01 * np.std(y)),
        "eloo": ref.crit_eloo(A, y, 1.0, "squared"),
        "eloo_error_rate": ref.crit_eloo(A, y, 1.0, "error_rate"), "kta": ref.crit_kta(A, y),
        "ckta": ref.crit_ckta(A, y), "fsm": ref.crit_fsm(A, y), "mmd": ref.crit_mmd(A, y),
        "sm": ref.crit_sm(A, y),
    }
    for name in CRITERIA:
        # K̃ itself is known to ~1e-8 relative with eigen_floor = 1e-8 (nystrom.py)
        np.testing.assert_allclose(got[name][0, 0], want[name], rtol=1e-6,
                                   atol=1e-9 * max(scale, 1.0), err_msg=name)


def test_squared_loo_residuals_match_dense_reference():
    X, y = _problem(n=120, binary=False)
    approx = kernelselect.Nystroem(n_landmarks=25)
    state = approx.prepare(X, y, kernel="gaussian", random_state=np.random.default_rng(1),
                           workers=1)
    (op,) = approx.build_all(ArrayRows(X, y, threads=1, rows=17), y, [0.5], kernel="gaussian",
                             state=state)
    A = ref.nystroem_matrix(X, state.landmarks, 0.5, "gaussian", state.rank, 1e-8)
    for alpha in (0.1, 3.0):
        want = np.mean(ref.crit_eloo_residuals(A, y, alpha) ** 2)
        got = evaluate_criterion("eloo", op, y, [alpha])[0]
        np.testing.assert_allclose(got, want, rtol=1e-8)


def test_thread_count_and_block_size_do_not_change_bits():
    X, y = _problem(n=2000)
    approx = kernelselect.Nystroem(n_landmarks=40)
    gammas = [0.05, 0.5, 5.0]
    one, _ = _ops(approx, X, y, gammas, threads=1, rows=128)
    two, _ = _ops(approx, X, y, gammas, threads=2, rows=128)
    v1, v2 = _values(one, y, ["eloo", "gcv"]), _values(two, y, ["eloo", "gcv"])
    for name in v1:
        np.testing.assert_array_equal(v1[name], v2[name])
    other, _ = _ops(approx, X, y, gammas, threads=2, rows=300)
    v3 = _values(other, y, ["eloo", "gcv"])
    np.testing.assert_allclose(v3["gcv"], v1["gcv"], rtol=1e-10)


def test_one_second_pass_serves_every_gamma_and_criterion():
    X, y = _problem(n=500)
    approx = kernelselect.Nystroem(n_landmarks=30)
    stream, _ = _ops(approx, X, y, [0.1, 1.0, 10.0])
    rows = stream[0]._family.rows
    assert rows.passes == 1
    _values(stream, y, ["eloo", "fsm", "gcv"])
    assert rows.passes == 2


def test_a_long_alpha_path_is_one_second_pass_with_the_in_memory_values(monkeypatch):
    """The criteria cut an α path into pieces by the rows their forms hold; a streamed
    operator holds a block of rows, so a path the in-memory operator of the same n
    evaluates in pieces is one pass over the rows here, with the same values."""
    from kernelselect.criteria import _base as criteria_base

    monkeypatch.setattr(criteria_base, "ALPHA_CHUNK_BYTES", 4 * 64 * 2000)  # 4 α at n = 2000
    X, y = _problem(n=2000)
    alphas = 10.0 ** np.linspace(-4, 3, 15)
    assert len(criteria_base.alpha_chunks(2000, alphas.size)) == 3
    # 600 landmarks: blocks of 2¹⁸/600 = 436 rows
    stream, memory = _ops(kernelselect.Nystroem(n_landmarks=600), X, y, [0.1, 1.0])
    assert len(criteria_base.alpha_chunks(stream[0].path_rows, alphas.size)) == 1
    rows = stream[0]._family.rows
    got = _values(stream, y, ["eloo", "gcv"], alphas)
    assert rows.passes == 2                       # the statistics, then one second pass
    for name in ("eloo", "gcv"):
        want = [evaluate_criterion(name, op, y, alphas) for op in memory]
        np.testing.assert_allclose(got[name], want, rtol=1e-10, err_msg=name)


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "regression"])
def test_a_grid_keeps_no_array_of_n_rows_besides_y(binary):
    """A selection keeps the operators of every grid it built, so what they share holds
    O(c²) numbers, not the n·m_Y probe basis (made again when a probe is projected)."""
    X, y = _problem(n=400, binary=binary)
    stream, _ = _ops(kernelselect.Nystroem(n_landmarks=20), X, y, [0.3, 3.0])
    family = stream[0]._family
    held = [(name, v.shape) for name, v in vars(family).items()
            if isinstance(v, np.ndarray) and v is not family.y and v.size >= X.shape[0]]
    assert not held, held
    assert np.allclose(stream[0].project(y), stream[0].project(2.0 * y) / 2.0)


def test_queued_row_reductions_hold_coefficients_not_probe_rows():
    """A grid queues the row reductions of every γ before its one pass: each waits as its
    probes' coefficients in the basis (m_Y × k), not as the n × k probes."""
    from kernelselect.operators.streaming_lowrank import RowsPending

    X, y = _problem(n=300, binary=False)
    stream, _ = _ops(kernelselect.Nystroem(n_landmarks=20), X, y, [0.3, 3.0])
    g = kernelselect.operators.RidgeFunction("resolvent", [0.5])
    B = np.stack([y, np.ones_like(y)], axis=1)
    for op in stream:
        op.collect = True
        with pytest.raises(RowsPending):
            op.reduce_rows(g, B, lambda Bb, gB, dg: np.sum(dg, axis=0))
    pending = stream[0]._family.pending
    assert len(pending) == 2
    for _, _, (_, coef, _) in pending:
        assert coef.shape == (2, 2)
        np.testing.assert_allclose(np.column_stack([y, np.ones_like(y)]) @ coef, B, atol=1e-9)


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "regression"])
def test_probe_projection_in_row_blocks_matches_one_block(monkeypatch, binary):
    """Probes are projected on the basis block by block (no n-row temporary): the same
    coefficients as one product to rounding, and a probe outside the span still refused."""
    from kernelselect.operators import streaming_lowrank

    X, y = _problem(n=300, binary=binary)
    (op,), _ = _ops(kernelselect.Nystroem(n_landmarks=20), X, y, [0.5])
    P = np.stack([y, np.ones_like(y), 3.0 * y - 2.0], axis=1)
    whole = op._family.coefficients(P)
    monkeypatch.setattr(streaming_lowrank, "PROJECTION_ROWS", 37)
    np.testing.assert_allclose(op._family.coefficients(P), whole, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op._family.basis_rows(0, 300) @ whole, P, atol=1e-12)
    with pytest.raises(ValueError, match="span"):
        op._family.coefficients(np.random.default_rng(1).standard_normal(300))


def test_row_arrays_match_the_in_memory_operator():
    X, y = _problem(n=150)
    approx = kernelselect.Nystroem(n_landmarks=20)
    (s,), (m,) = _ops(approx, X, y, [0.7], threads=2, rows=31)
    g = kernelselect.operators.RidgeFunction("resolvent", [0.5, 2.0])
    B = np.stack([y, np.ones_like(y)], axis=1)
    np.testing.assert_allclose(s.diagonal(), m.diagonal(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s.diagonal_function(g), m.diagonal_function(g), rtol=1e-9)
    np.testing.assert_allclose(s.apply_function(g, B), m.apply_function(g, B), rtol=1e-8,
                               atol=1e-12)


def test_probe_outside_the_basis_is_refused():
    X, y = _problem(n=80, binary=False)
    approx = kernelselect.RFF(n_features=10)
    (op,), _ = _ops(approx, X, y, [1.0])
    with pytest.raises(ValueError, match="span"):
        op.project(np.random.default_rng(0).standard_normal(80))


def test_multiclass_probes_use_class_indicators():
    X, _ = _problem(n=200)
    y = np.digitize(X[:, 0], [-0.5, 0.5]).astype(float)          # three classes
    res_s = kernelselect.select_kernel(X, y, criterion=["di", "kta"], gammas=[0.2, 1.0],
                                       random_state=0, approximation=kernelselect.Nystroem(40))

    class InMemory(kernelselect.Nystroem):
        def prefers_per_gamma(self, n, d):        # one in-memory operator per γ
            return True

    res_m = kernelselect.select_kernel(X, y, criterion=["di", "kta"], gammas=[0.2, 1.0],
                                       random_state=0, approximation=InMemory(40))
    for name in ("di", "kta"):
        np.testing.assert_allclose(res_s.curves[name], res_m.curves[name], rtol=1e-9)
    assert res_s.details["operators"][0]["method"] == "streaming"


def test_select_kernel_uses_streaming_for_uniform_and_not_for_gamma_dependent_samplers():
    X, y = _problem(n=200)
    res = kernelselect.select_kernel(X, y, criterion="eloo", random_state=0,
                                     approximation="nystrom")
    assert res.details["operators"][0]["method"] == "streaming"
    res = kernelselect.select_kernel(X, y, criterion="eloo", random_state=0,
                                     approximation=kernelselect.Nystroem(sampler="column_norm"))
    assert "method" not in res.details["operators"][0]


def test_doubling_grid_blocks_equal_fresh_exponentials():
    from kernelselect.operators.streaming_lowrank import LandmarkFeatures

    X, _ = _problem(n=300)
    gammas = 0.01 * 2.0 ** np.arange(10)
    fmap = LandmarkFeatures(X[:40], gammas, "gaussian")
    S = fmap.shared(X)
    F, chain = np.empty_like(S), [None, 0]
    for i, g in enumerate(gammas):
        fmap.block(S, i, F, chain)
        np.testing.assert_allclose(F, np.exp(-g * S), rtol=16 * np.finfo(float).eps, atol=0)
    assert chain == [9, 1]            # squared three times in a row, then a fresh exp


def test_compiled_eigendecompositions_leave_the_selection_as_scipys_did(monkeypatch):
    """The per-γ eigendecompositions of the streamed Nyström grid (landmark Gram
    matrices, then VᵀV) run without the interpreter lock, on the row source's threads:
    the curves, and so the chosen point, are those of scipy.linalg.eigh (driver
    "evd") bit for bit, on one thread and on two."""
    import scipy.linalg

    from kernelselect.operators import nystrom, streaming_lowrank

    X, y = _problem(n=700, binary=False)
    kwargs = dict(criterion=["gcv", "eloo"], gammas=np.logspace(-2, 1, 6),
                  alphas=np.logspace(-4, 0, 4) * 700, random_state=0,
                  approximation=kernelselect.Nystroem(n_landmarks=80, random_state=0))
    got = [kernelselect.select_kernel(X, y, workers=w, **kwargs) for w in (1, 2)]
    scipy_evd = lambda A: scipy.linalg.eigh(A, driver="evd")  # noqa: E731
    monkeypatch.setattr(nystrom, "symmetric_eigh_unchecked", scipy_evd)
    monkeypatch.setattr(streaming_lowrank, "symmetric_eigh_unchecked", scipy_evd)
    want = kernelselect.select_kernel(X, y, workers=1, **kwargs)
    for res in got:
        for name in ("gcv", "eloo"):
            np.testing.assert_array_equal(res.curves[name], want.curves[name])
            assert res.best[name] == want.best[name]


def test_landmark_cholesky_where_w_is_well_conditioned_and_eigh_elsewhere():
    """TTᵀ = W⁻¹ with T upper triangular where κ(W) is certainly ≤ 10⁴ and no
    eigenvalue is at the floor; None (the eigendecomposition) for wide kernels, a rank
    below c or a floor the bound cannot clear."""
    from kernelselect import lowlevel
    from kernelselect.operators import nystrom

    X = np.random.default_rng(4).standard_normal((60, 4))
    W = lowlevel.kernel_block(X, X, 2.0)
    W = 0.5 * (W + W.T)
    T = nystrom._cholesky_transform(W, 60, 1e-8)
    assert T is not None and np.array_equal(T, np.triu(T))
    np.testing.assert_allclose(T @ T.T @ W, np.eye(60), atol=1e-10)
    lam = np.linalg.eigvalsh(W)
    assert lam.max() / lam.min() <= nystrom.CHOLESKY_MAX_COND
    wide = lowlevel.kernel_block(X, X, 1e-3)
    assert nystrom._cholesky_transform(0.5 * (wide + wide.T), 60, 1e-8) is None
    assert nystrom._cholesky_transform(W, 59, 1e-8) is None
    assert nystrom._cholesky_transform(W, 60, 0.5) is None
    assert nystrom._cholesky_transform(np.zeros((0, 0)), 0, 1e-8) is None


def test_cholesky_levels_give_the_spectrum_and_criteria_of_the_eigendecomposition(
        monkeypatch):
    """A streamed grid from narrow kernels (W factored by Cholesky) to wide ones (W
    eigendecomposed): eigenvalues and criteria as with the eigendecomposition on every
    γ, to rounding."""
    from kernelselect.operators import nystrom

    X, y = _problem(n=500, binary=False)
    approx = kernelselect.Nystroem(n_landmarks=50)
    gammas = [0.01, 0.3, 3.0, 30.0]
    factored, original = [], nystrom._cholesky_transform

    def counted(*args):
        T = original(*args)
        factored.append(T is not None)
        return T

    monkeypatch.setattr(nystrom, "_cholesky_transform", counted)
    chol, _ = _ops(approx, X, y, gammas)
    assert 0 < sum(factored) < len(gammas)            # both ways on this grid
    monkeypatch.setattr(nystrom, "CHOLESKY_MAX_COND", 0.0)
    eig, _ = _ops(approx, X, y, gammas)
    for a, b in zip(chol, eig):
        np.testing.assert_allclose(a.eigenvalues, b.eigenvalues, rtol=1e-9,
                                   atol=1e-12 * b.eigenvalues.max())
    va, vb = _values(chol, y, ["gcv", "eloo"]), _values(eig, y, ["gcv", "eloo"])
    for name in va:
        np.testing.assert_allclose(va[name], vb[name], rtol=1e-9)
