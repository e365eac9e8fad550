"""LSSVM / KRR solvers against dense numpy solves of the formulas."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect.solvers._exact import cross_kernel_matvec, dual_solution, fit_kernel_machine
from kernelselect.operators._lowrank import LowRankOperator
from kernelselect.operators._tridiagonal import TridiagonalReduction
from kernelselect.operators.dense import DenseOperator
from kernelselect.operators.mcm import MCMOperator
from kernelselect.operators.nystrom import Nystroem

from reference import kernel_matrix, multilevel_circulant, song_xu_column
from reference import krr_solve as dense_krr
from reference import lssvm_solve as dense_lssvm


def problem(seed, n, d):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(X[:, 0] + 0.3 * rng.standard_normal(n))
    y[y == 0] = 1.0
    return X, y


problems = st.tuples(st.integers(0, 2**31 - 1), st.integers(3, 40), st.integers(1, 4),
                     st.floats(0.05, 3.0), st.floats(1e-2, 10.0))


@settings(max_examples=30)
@given(problems)
def test_exact_strategies_match_dense_solves(p):
    seed, n, d, gamma, alpha = p
    X, y = problem(seed, n, d)
    K = kernel_matrix(X, X, gamma)
    a_ref, b_ref = dense_lssvm(K, y, alpha)
    r_ref = dense_krr(K, y, alpha)
    for solver in ("auto", "cholesky", "eigh", "tridiagonal"):
        factor = DenseOperator(K, solver=solver)
        a, b = dual_solution(factor, y[:, None], np.array([alpha]), bias=True)
        np.testing.assert_allclose(a[:, 0, 0], a_ref, rtol=1e-8, atol=1e-9 * (1 + np.abs(a_ref).max()))
        np.testing.assert_allclose(b[0, 0], b_ref, rtol=1e-8, atol=1e-10)
        r, b0 = dual_solution(factor, y[:, None], np.array([alpha]), bias=False)
        np.testing.assert_allclose(r[:, 0, 0], r_ref, rtol=1e-8, atol=1e-9 * (1 + np.abs(r_ref).max()))
        assert np.all(b0 == 0)


@settings(max_examples=30)
@given(problems, st.integers(1, 6))
def test_low_rank_dual_solution_matches_dense_low_rank_solve(p, k):
    # the dual (a, b) on K̃ = VVᵀ through the operator's eigenpairs
    seed, n, d, gamma, alpha = p
    rng = np.random.default_rng(seed + 1)
    V = rng.standard_normal((n, min(k, n)))
    Kt = V @ V.T
    y = rng.standard_normal(n)
    a_ref, b_ref = dense_lssvm(Kt, y, alpha)
    scale = np.abs(a_ref).max()
    a, b = dual_solution(LowRankOperator(V), y[:, None], np.array([alpha]), bias=True)
    np.testing.assert_allclose(a[:, 0, 0], a_ref, rtol=1e-7, atol=1e-8 * (1 + scale))
    np.testing.assert_allclose(b[0, 0], b_ref, rtol=1e-7, atol=1e-8 * (1 + abs(b_ref)))
    # the primal ridge on V's columns fits the same values: Vw + b = K̃a + b
    W, bw = LowRankOperator(V).ridge(y[:, None], [alpha], bias=True)
    np.testing.assert_allclose(V @ W[:, 0, 0] + bw[0, 0], Kt @ a_ref + b_ref, rtol=1e-7,
                               atol=1e-8 * (1 + np.abs(y).max()))


@settings(max_examples=20)
@given(st.integers(0, 2**31 - 1), st.lists(st.integers(1, 5), min_size=1, max_size=3),
       st.floats(0.1, 5.0), st.floats(0.5, 10.0))
def test_circulant_solve_matches_explicit_U(seed, m, gamma, alpha):
    rng = np.random.default_rng(seed)
    m = tuple(m)
    h = rng.uniform(0.3, 1.5, len(m))
    u = song_xu_column(m, h, gamma, "gaussian")
    U = multilevel_circulant(u)
    lam = np.linalg.eigvalsh(U)
    if np.min(np.abs(lam + alpha)) < 1e-3:
        return                                   # (nearly) singular U + αI: no reference
    n = U.shape[0]
    y = rng.standard_normal(n)
    op = MCMOperator(u)
    a, b = dual_solution(op, y[:, None], np.array([alpha]), bias=False)
    ref = np.linalg.solve(U + alpha * np.eye(n), y)
    np.testing.assert_allclose(a[:, 0, 0], ref, rtol=1e-8, atol=1e-9 * (1 + np.abs(ref).max()))
    if n > 1:
        a, b = dual_solution(op, y[:, None], np.array([alpha]), bias=True)
        a_ref, b_ref = dense_lssvm(U, y, alpha)
        np.testing.assert_allclose(a[:, 0, 0], a_ref, rtol=1e-7, atol=1e-8 * (1 + np.abs(a_ref).max()))
        np.testing.assert_allclose(b[0, 0], b_ref, rtol=1e-7, atol=1e-8 * (1 + abs(b_ref)))


def test_mcm_machine_is_refused_with_the_reason():
    X, y = problem(3, 37, 2)
    from kernelselect.operators.mcm import MCM

    for approx in ("mcm", MCM()):
        with pytest.raises(ValueError, match="cannot train a kernel machine.*select_kernel"):
            fit_kernel_machine(X, y, 0.7, [0.5], approximation=approx)


@pytest.mark.parametrize("bias", [True, False])
def test_nystroem_full_rank_equals_exact(bias):
    X, y = problem(5, 30, 3)
    exact = fit_kernel_machine(X, y, 0.4, [0.01, 1.0], bias=bias)
    ny = fit_kernel_machine(X, y, 0.4, [0.01, 1.0], bias=bias,
                            approximation=Nystroem(n_landmarks=30, rank=30, eigen_floor=0.0),
                            random_state=1)
    np.testing.assert_allclose(ny.coef, exact.coef, rtol=1e-6, atol=1e-7 * np.abs(exact.coef).max())
    np.testing.assert_allclose(ny.intercept, exact.intercept, rtol=1e-6, atol=1e-9)


def test_nystroem_machine_uses_paper_factor():
    X, y = problem(6, 50, 3)
    approx = Nystroem(n_landmarks=12, rank=6)
    state = approx.prepare(X, y, kernel="gaussian", random_state=np.random.default_rng(0),
                           workers=None)
    m = fit_kernel_machine(X, y, 0.3, [0.2], approximation=approx, state=state)
    lm = state.landmarks
    C = kernel_matrix(X, X[lm], 0.3)
    W = C[lm]
    s, U = np.linalg.eigh(W)
    top = np.argsort(s)[::-1][:6]
    T = U[:, top] / np.sqrt(s[top])
    V = C @ T
    a_ref, b_ref = dense_lssvm(V @ V.T, y, 0.2)
    # on the training points: the LSSVM on K̃ = VVᵀ (paper 004), which the criteria score
    np.testing.assert_allclose(m.decision_function(X)[:, 0, 0], V @ V.T @ a_ref + b_ref,
                               rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(m.intercept[0, 0], b_ref, rtol=1e-6, atol=1e-9)
    # the model keeps the landmarks and β = Tw, w = Vᵀa: new points go through the
    # Nyström map φ(x) = Tᵀk(landmarks, x)
    np.testing.assert_array_equal(m.support, X[lm])
    np.testing.assert_array_equal(m.support_indices, lm)
    np.testing.assert_allclose(m.coef[:, 0, 0], T @ (V.T @ a_ref), rtol=1e-6, atol=1e-8)
    Xn = np.random.default_rng(1).standard_normal((7, 3))
    f = m.decision_function(Xn)[:, 0, 0]
    np.testing.assert_allclose(f, kernel_matrix(Xn, X[lm], 0.3) @ T @ (V.T @ a_ref) + b_ref,
                               rtol=1e-6, atol=1e-8)


def test_rff_machine_is_primal_ridge():
    X, y = problem(7, 40, 3)
    approx = kernelselect.RFF(n_features=15)
    state = approx.prepare(X, y, kernel="gaussian", random_state=np.random.default_rng(0),
                           workers=None)
    m = fit_kernel_machine(X, y, 0.5, [0.3], bias=False, approximation=approx, state=state)
    Z = approx.features(X, 0.5, kernel="gaussian", state=state)
    w_ref = np.linalg.solve(Z.T @ Z + 0.3 * np.eye(15), Z.T @ y)
    np.testing.assert_allclose(m.weights[:, 0, 0], w_ref, rtol=1e-8, atol=1e-10)
    Xn = np.random.default_rng(2).standard_normal((5, 3))
    Zn = approx.features(Xn, 0.5, kernel="gaussian", state=state)
    np.testing.assert_allclose(m.decision_function(Xn)[:, 0, 0], Zn @ w_ref, rtol=1e-8, atol=1e-10)
    # with bias: the LSSVM on ZZᵀ
    mb = fit_kernel_machine(X, y, 0.5, [0.3], bias=True, approximation=approx, state=state)
    a_ref, b_ref = dense_lssvm(Z @ Z.T, y, 0.3)
    np.testing.assert_allclose(mb.weights[:, 0, 0], Z.T @ a_ref, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(mb.intercept[0, 0], b_ref, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("solver", ["cholesky", "eigh", "tridiagonal"])
def test_exact_solvers_agree_on_a_path(solver):
    X, y = problem(11, 35, 3)
    alphas = 2.0 ** np.arange(-15, 6, 2)
    ref = fit_kernel_machine(X, y, 0.7, alphas, exact_solver="cholesky")
    got = fit_kernel_machine(X, y, 0.7, alphas, exact_solver=solver)
    assert got.method == solver
    np.testing.assert_allclose(got.coef, ref.coef, rtol=1e-6, atol=1e-9 * np.abs(ref.coef).max())
    np.testing.assert_allclose(got.intercept, ref.intercept, rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="exact_solver"):
        fit_kernel_machine(X, y, 0.7, alphas, exact_solver="qr")


@settings(max_examples=20)
@given(problems)
def test_alpha_path_equals_fresh_solves(p):
    seed, n, d, gamma, _ = p
    X, y = problem(seed, n, d)
    alphas = np.array([1e-3, 0.1, 1.0, 30.0])
    for approx in ("exact", Nystroem(n_landmarks=max(1, n // 2))):
        path = fit_kernel_machine(X, y, gamma, alphas, approximation=approx, random_state=seed)
        for j, a in enumerate(alphas):
            one = fit_kernel_machine(X, y, gamma, [a], approximation=approx, random_state=seed)
            scale = np.abs(one.coef).max()
            np.testing.assert_allclose(path.coef[:, :, j], one.coef[:, :, 0], rtol=1e-6,
                                       atol=1e-8 * (1 + scale))
            np.testing.assert_allclose(path.intercept[:, j], one.intercept[:, 0], rtol=1e-6,
                                       atol=1e-8 * (1 + abs(one.intercept[0, 0])))


@settings(max_examples=20)
@given(st.integers(0, 2**31 - 1), st.integers(1, 50), st.integers(1, 30), st.integers(1, 3),
       st.sampled_from(["gaussian", "laplacian"]), st.integers(1, 2000))
def test_cross_kernel_matvec_equals_dense(seed, n_new, n_train, m, kernel, block_bytes):
    rng = np.random.default_rng(seed)
    Xn = rng.standard_normal((n_new, 3))
    Xt = rng.standard_normal((n_train, 3))
    coef = rng.standard_normal((n_train, m))
    ref = kernel_matrix(Xn, Xt, 0.6, kernel) @ coef
    python_blocks = cross_kernel_matvec(Xn, Xt, coef, 0.6, kernel, block_bytes=block_bytes)
    np.testing.assert_allclose(python_blocks, ref, rtol=1e-10, atol=1e-12)
    compiled = cross_kernel_matvec(Xn, Xt, coef, 0.6, kernel)
    np.testing.assert_allclose(compiled, ref, rtol=1e-10, atol=1e-12)
    out1 = cross_kernel_matvec(Xn, Xt, coef[:, 0], 0.6, kernel)
    np.testing.assert_allclose(out1, ref[:, 0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_compiled_prediction_is_thread_invariant(kernel):
    rng = np.random.default_rng(0)
    Xn = rng.standard_normal((700, 4))               # 11 blocks of 64 rows
    Xt = rng.standard_normal((150, 4))
    coef = rng.standard_normal((150, 3))
    one = cross_kernel_matvec(Xn, Xt, coef, 0.4, kernel, workers=1)
    two = cross_kernel_matvec(Xn, Xt, coef, 0.4, kernel, workers=2)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(one, kernel_matrix(Xn, Xt, 0.4, kernel) @ coef, rtol=1e-10,
                               atol=1e-12)
    empty = cross_kernel_matvec(Xn[:0], Xt, coef, 0.4, kernel)
    assert empty.shape == (0, 3)


def test_multi_output_solves_every_column():
    X, y = problem(8, 25, 2)
    Y = np.column_stack([y, -y, np.linspace(-1, 1, 25)])
    m = kernelselect.fit_lssvm(X, Y, 0.5, 0.2)
    K = kernel_matrix(X, X, 0.5)
    for j in range(3):
        a_ref, b_ref = dense_lssvm(K, Y[:, j], 0.2)
        np.testing.assert_allclose(m.coef[:, j, 0], a_ref, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(m.intercept[j, 0], b_ref, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha": 0.0}, "alpha"),
    ({"alpha": -1.0}, "alpha"),
    ({"alpha": [1.0, np.nan]}, "alpha"),
    ({"gamma": 0.0}, "gamma"),
    ({"kernel": "poly"}, "kernel"),
    ({"approximation": "nope"}, "approximation"),
    ({"approximation": Nystroem(n_landmarks=50)}, "n_landmarks"),
    ({"approximation": Nystroem(n_landmarks=5, rank=8)}, "rank"),
])
def test_bad_solver_inputs(kwargs, match):
    X, y = problem(9, 20, 2)
    args = {"gamma": 0.5, "alpha": 1.0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        kernelselect.fit_lssvm(X, y, **args)


def test_bad_data():
    X, y = problem(9, 20, 2)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        kernelselect.fit_krr(Xn, y, 0.5)
    with pytest.raises(ValueError, match="y has 19 entries"):
        kernelselect.fit_krr(X, y[:-1], 0.5)
    yn = y.copy()
    yn[0] = np.inf
    with pytest.raises(ValueError, match="y contains inf"):
        kernelselect.fit_lssvm(X, yn, 0.5)


# ---------------------------------------------------------------------------
# fitting = the approximation's operator + its resolvent, against the bordered
# LSSVM system (and K_α a = y) solved densely from the formula
# ---------------------------------------------------------------------------

fits = st.tuples(st.integers(0, 2**31 - 1), st.integers(4, 30), st.integers(1, 3),
                 st.floats(0.05, 2.0), st.lists(st.floats(1e-3, 10.0), min_size=1, max_size=4),
                 st.booleans())


def _stand_in(approx, X, gamma, state):
    """The matrix the machine is trained on, from the formulas (tests/reference.py)."""
    from kernelselect.kernels import scale_frequencies
    from reference import nystroem_matrix, rff_features

    if approx == "exact":
        return kernel_matrix(X, X, gamma)
    if isinstance(approx, Nystroem):
        return nystroem_matrix(X, state.landmarks, gamma, "gaussian", state.rank,
                               approx.eigen_floor)
    Z = rff_features(X, scale_frequencies(state.W0, gamma, "gaussian"), state.b)
    return Z @ Z.T


def _assert_fit_matches_reference(m, A, y, alphas, bias, Z=None):
    for j, a in enumerate(alphas):
        a_ref, b_ref = dense_lssvm(A, y, a) if bias else (dense_krr(A, y, a), 0.0)
        scale = 1 + np.abs(a_ref).max()
        if Z is None:
            np.testing.assert_allclose(m.coef[:, 0, j], a_ref, rtol=1e-7, atol=1e-8 * scale)
        else:                                  # primal weights w = Zᵀa
            np.testing.assert_allclose(m.weights[:, 0, j], Z.T @ a_ref, rtol=1e-7,
                                       atol=1e-8 * scale)
        np.testing.assert_allclose(m.intercept[0, j], b_ref, rtol=1e-7, atol=1e-8 * scale)


@settings(max_examples=25, deadline=None)
@given(fits, st.sampled_from([None, "cholesky", "eigh", "tridiagonal"]))
def test_exact_fit_equals_bordered_reference(p, solver):
    seed, n, d, gamma, alphas, bias = p
    X, y = problem(seed, n, d)
    m = fit_kernel_machine(X, y, gamma, alphas, bias=bias, exact_solver=solver)
    assert m.method == (solver or ("cholesky" if len(alphas) == 1 else "tridiagonal"))
    _assert_fit_matches_reference(m, kernel_matrix(X, X, gamma), y, alphas, bias)


@settings(max_examples=25, deadline=None)
@given(fits, st.sampled_from(["nystrom", "rff"]), st.sampled_from([None, "eigh"]))
def test_low_rank_fit_equals_bordered_reference(p, which, exact_solver):
    seed, n, d, gamma, alphas, bias = p
    X, y = problem(seed, n, d)
    approx = (Nystroem(n_landmarks=max(1, n // 2)) if which == "nystrom"
              else kernelselect.RFF(n_features=7))
    state = approx.prepare(X, y, kernel="gaussian", random_state=np.random.default_rng(seed),
                           workers=None)
    # exact_solver is the exact operator's strategy: the others ignore it
    m = fit_kernel_machine(X, y, gamma, alphas, bias=bias, approximation=approx, state=state,
                           exact_solver=exact_solver)
    A = _stand_in(approx, X, gamma, state)
    if which == "nystrom":
        c = state.landmarks.size
        assert m.method == "nystrom" and m.coef.shape == (c, 1, len(alphas))
        # the fit on the training points is that of the machine on K̃
        for j, a in enumerate(alphas):
            a_ref, b_ref = dense_lssvm(A, y, a) if bias else (dense_krr(A, y, a), 0.0)
            want = A @ a_ref + b_ref
            np.testing.assert_allclose(m.decision_function(X)[:, 0, j], want, rtol=1e-7,
                                       atol=1e-8 * (1 + np.abs(want).max()))
            np.testing.assert_allclose(m.intercept[0, j], b_ref, rtol=1e-7,
                                       atol=1e-8 * (1 + np.abs(a_ref).max()))
    else:
        from kernelselect.kernels import scale_frequencies
        from reference import rff_features

        Z = rff_features(X, scale_frequencies(state.W0, gamma, "gaussian"), state.b)
        assert m.method == "rff" and m.coef is None
        _assert_fit_matches_reference(m, A, y, alphas, bias, Z=Z)


def _ridge_reference(K, g, B):
    """g(K)B for a RidgeFunction by dense solves of the formula, (n, m, L)."""
    n = K.shape[0]
    out = []
    for j, a in enumerate(g.alphas):
        Kinv = np.linalg.inv(K + a * np.eye(n))
        base = {"resolvent": Kinv, "smoother": K @ Kinv,
                "complement": a * Kinv / (1.0 if g.scale is None else g.scale[j])}[g.kind]
        out.append(np.linalg.matrix_power(base, g.power) @ B)
    return np.stack(out, axis=-1)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 30),
       st.sampled_from(["resolvent", "smoother", "complement"]), st.sampled_from([1, 2]),
       st.lists(st.floats(1e-2, 10.0), min_size=1, max_size=6), st.booleans())
def test_dense_solve_strategies_match_dense_formulas(seed, n, kind, power, alphas, scaled):
    from kernelselect.operators import RidgeFunction

    X, y = problem(seed, n, 2)
    K = kernel_matrix(X, X, 0.6)
    B = np.column_stack([y, np.ones(n)])
    scale = np.linspace(0.5, 2.0, len(alphas)) if scaled and kind == "complement" else None
    g = RidgeFunction(kind, alphas, power, scale)
    ref = _ridge_reference(K, g, B)
    for solver in ("cholesky", "tridiagonal"):
        op = DenseOperator(K, solver=solver)
        got = op.apply_function(g, B)
        tol = 1e-8 * (1 + np.abs(ref).max())
        np.testing.assert_allclose(got, ref, rtol=1e-7, atol=tol)
        np.testing.assert_allclose(op.quadratic(g, B), np.einsum("ni,njl->ijl", B, ref),
                                   rtol=1e-7, atol=tol * n)
        assert op._eig is None                 # solves only: no eigendecomposition
    # the entries of K_α⁻¹ (a trace) follow the rules of "auto"
    op = DenseOperator(K, solver="tridiagonal")
    tr = op.trace(g)
    np.testing.assert_allclose(tr, [np.trace(_ridge_reference(K, RidgeFunction(
        kind, [a], power, None if scale is None else scale[j:j + 1]), np.eye(n))[:, :, 0])
        for j, a in enumerate(alphas)], rtol=1e-7, atol=1e-8 * n)


def test_tridiagonal_reduction_of_a_scalar_and_its_repeated_solves():
    red = TridiagonalReduction(np.array([[2.0]]))
    np.testing.assert_allclose(red.solve(np.array([[3.0]]), np.array([1.0, 4.0]))[0, 0],
                               [1.0, 0.5])
    rng = np.random.default_rng(0)
    G = rng.standard_normal((9, 9))
    K = G @ G.T
    red = TridiagonalReduction(K)
    R = rng.standard_normal((9, 2, 3))
    alphas = np.array([0.1, 1.0, 5.0])
    got = red.solve_each(R, alphas)
    for j, a in enumerate(alphas):
        np.testing.assert_allclose(got[:, :, j], np.linalg.solve(K + a * np.eye(9), R[:, :, j]),
                                   rtol=1e-9, atol=1e-10)


def test_ree_through_the_tridiagonal_strategy():
    from kernelselect.criteria import evaluate_criterion
    from reference import crit_ree

    X, y = problem(4, 40, 3)
    K = kernel_matrix(X, X, 0.5)
    alphas = np.logspace(-3, 1, 6)
    op = DenseOperator(K, solver="tridiagonal")
    got = evaluate_criterion("ree", op, y, alphas)
    np.testing.assert_allclose(got, [crit_ree(K, y, a) for a in alphas], rtol=1e-8)
    assert op.details["factorisation"] == "tridiagonal"


def test_exact_solver_strategies_refuse_or_route_as_documented():
    X, y = problem(12, 20, 2)
    with pytest.raises(ValueError, match="solver must be one of"):
        DenseOperator(kernel_matrix(X, X, 0.5), solver="qr")
    with pytest.raises(ValueError, match="has no solver"):
        fit_kernel_machine(X, y, 0.5, [0.1], approximation="random_mcm")
    # a selection recipe's streaming method does not leak into the machine: it holds K
    m = fit_kernel_machine(X, y, 0.5, [0.1, 1.0],
                           approximation=kernelselect.Exact(method="streaming"))
    assert m.method == "tridiagonal"
    _assert_fit_matches_reference(m, kernel_matrix(X, X, 0.5), y, [0.1, 1.0], True)


def test_tridiagonal_strategy_reuses_factors_a_trace_made():
    from kernelselect.operators import RidgeFunction

    X, y = problem(13, 25, 2)
    K = kernel_matrix(X, X, 0.5)
    g = RidgeFunction("complement", [0.1, 1.0], 2)
    op = DenseOperator(K, solver="tridiagonal")
    op.trace(RidgeFunction("complement", [0.1, 1.0]))        # Cholesky inverses (≤ 3 α)
    got = op.quadratic(g, y[:, None])
    assert op._tri is None                                   # no second factorisation
    ref = np.einsum("n,nl->l", y, _ridge_reference(K, g, y[:, None])[:, 0, :])
    np.testing.assert_allclose(got[0, 0], ref, rtol=1e-8)


def test_explicit_strategy_on_a_singular_system_falls_back_or_raises():
    from kernelselect.operators import RidgeFunction

    X, y = problem(14, 15, 2)
    Xd = np.vstack([X, X])                                   # duplicate rows: K singular
    K = kernel_matrix(Xd, Xd, 1.0)
    g = RidgeFunction("complement", [1e-300, 1.0])
    B = np.concatenate([y, y])[:, None]
    ref = DenseOperator(K, solver="eigh").apply_function(g, B)
    op = DenseOperator(K, solver="cholesky")
    np.testing.assert_allclose(op.apply_function(g, B), ref, rtol=1e-6, atol=1e-12)
    assert op.details["fallback"] == "eigh"
    with pytest.raises(np.linalg.LinAlgError):
        DenseOperator(K, solver="cholesky", on_singular="raise").apply_function(g, B)
    with pytest.raises(ValueError, match="on_singular"):
        DenseOperator(K, on_singular="ignore")


@pytest.mark.parametrize("sampler", ["uniform", "column_norm", "leverage", "kmeans",
                                     "modified", "optimal"])
@pytest.mark.parametrize("bias", [True, False])
def test_nystroem_machine_extends_its_factor_for_every_sampler(sampler, bias):
    # V = K(X, support) T for the map the model predicts with, so that on the training
    # points the model is the machine on K̃ = VVᵀ, whatever chose the landmarks
    X, y = problem(21, 45, 3)
    approx = Nystroem(n_landmarks=12, rank=8, sampler=sampler)
    state = approx.prepare(X, y, kernel="gaussian", random_state=np.random.default_rng(3),
                           workers=None)
    op = approx.build(X, y, 0.4, kernel="gaussian", state=state, workers=None)
    Z, idx, T = op.landmarks
    np.testing.assert_allclose(kernel_matrix(X, Z, 0.4) @ T, op.factor, rtol=1e-9,
                               atol=1e-9 * np.abs(op.factor).max())
    if idx is not None:
        np.testing.assert_array_equal(Z, X[idx])
    m = fit_kernel_machine(X, y, 0.4, [1e-3, 0.5], bias=bias, approximation=approx,
                           state=state)
    assert m.method == "nystrom" and m.coef.shape[0] == Z.shape[0]
    A = op.factor @ op.factor.T
    for j, a in enumerate([1e-3, 0.5]):
        a_ref, b_ref = dense_lssvm(A, y, a) if bias else (dense_krr(A, y, a), 0.0)
        np.testing.assert_allclose(m.decision_function(X)[:, 0, j], A @ a_ref + b_ref,
                                   rtol=1e-7, atol=1e-8)
