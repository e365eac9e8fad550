"""Operators: exact dense and streaming, Nyström, RFF; kernel families."""


import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect.kernels import (
    median_heuristic_gamma,
    sample_frequencies,
    scale_frequencies,
)
from kernelselect.operators import approximation_names, get_approximation
from kernelselect.operators._lowrank import factor_spectrum

import reference as ref
from _toy import binary_data, prepare


def data(n=30, d=3, seed=0):
    return binary_data(n, d, seed)


def make(approx, X, y, gamma, kernel="gaussian", seed=0):
    approx = get_approximation(approx)
    state = prepare(approx, X, y, kernel, seed)
    return approx.build(X, y, gamma, kernel=kernel, state=state, workers=None), state


def funcs(alphas):
    a = np.asarray(alphas)[None, :]
    return {
        "inv": (lambda lam: 1.0 / (lam[:, None] + a), lambda A, al: np.linalg.inv(A + al * np.eye(len(A)))),
        "ratio": (lambda lam: lam[:, None] / (lam[:, None] + a),
                  lambda A, al: A @ np.linalg.inv(A + al * np.eye(len(A)))),
    }


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_dense_operator_spectral_forms(kernel):
    X, y = data()
    K = ref.kernel_matrix(X, X, 0.5, kernel)
    op, _ = make(kernelselect.Exact(method="dense"), X, y, 0.5, kernel)
    np.testing.assert_allclose((op.basis * op.eigenvalues) @ op.basis.T, K, atol=1e-12)
    alphas = [0.1, 1.0]
    B = np.stack([y, np.ones(len(y)), X[:, 1]], axis=1)
    for name, (g, G) in funcs(alphas).items():
        quad = op.quadratic(g, B)
        appl = op.apply_function(g, B)
        diag = op.diagonal_function(g)
        tr = op.trace(g)
        assert quad.shape == (3, 3, 2) and appl.shape == (30, 3, 2) and diag.shape == (30, 2)
        for j, al in enumerate(alphas):
            M = G(K, al)
            np.testing.assert_allclose(quad[:, :, j], B.T @ M @ B, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(appl[:, :, j], M @ B, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(diag[:, j], np.diag(M), rtol=1e-10)
            np.testing.assert_allclose(tr[j], np.trace(M), rtol=1e-10)
    for r in range(5):
        np.testing.assert_allclose(op.power_quadratic(r, B), B.T @ np.linalg.matrix_power(K, r) @ B,
                                   rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(op.power_trace(r), np.trace(np.linalg.matrix_power(K, r)), rtol=1e-10)
    np.testing.assert_allclose(op.diagonal(), np.diag(K), rtol=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_streaming_operator_moments(kernel):
    X, y = data(25)
    K = ref.kernel_matrix(X, X, 0.7, kernel)
    op, _ = make(kernelselect.Exact(method="streaming"), X, y, 0.7, kernel)
    assert not op.spectral
    ones = np.ones(25)
    P = np.stack([ones, y], axis=1)
    for r in range(6):
        np.testing.assert_allclose(op.power_quadratic(r, P), P.T @ np.linalg.matrix_power(K, r) @ P,
                                   rtol=1e-10)
    passes = op.passes
    # probes in span{1, y} cost no further pass over K
    ybar = np.where(y > 0, 1 / np.sum(y > 0), -1 / np.sum(y < 0))
    np.testing.assert_allclose(op.power_quadratic(3, ybar[:, None])[0, 0],
                               ybar @ np.linalg.matrix_power(K, 3) @ ybar, rtol=1e-10)
    assert op.passes == passes
    # a new direction costs one pass per power already cached
    z = X[:, 1]
    np.testing.assert_allclose(op.power_quadratic(2, z[:, None])[0, 0], z @ K @ K @ z, rtol=1e-10)
    assert op.passes > passes
    np.testing.assert_allclose(op.power_trace(2), np.sum(K * K), rtol=1e-12)
    np.testing.assert_allclose(op.power_trace(1), np.trace(K), rtol=1e-12)
    assert op.power_trace(0) == 25
    np.testing.assert_allclose(op.diagonal(), np.diag(K))


@settings(deadline=None, max_examples=20)
@given(n=st.integers(6, 40), seed=st.integers(0, 2**31), log_gamma=st.floats(-3, 2),
       frac=st.floats(0.2, 1.0), kernel=st.sampled_from(["gaussian", "laplacian"]))
def test_nystroem_operator_is_the_nystroem_matrix(n, seed, log_gamma, frac, kernel):
    X, y = data(n, 2, seed)
    c = max(1, int(frac * n))
    k = max(1, c - 2)
    gamma = 2.0 ** log_gamma
    approx = kernelselect.Nystroem(n_landmarks=c, rank=k)
    op, state = make(approx, X, y, gamma, kernel, seed)
    assert state.landmarks.size == c and np.unique(state.landmarks).size == c
    landmarks = X[state.landmarks]
    sig = np.linalg.eigvalsh(ref.kernel_matrix(landmarks, landmarks, gamma, kernel))[::-1]
    # a rank-k truncation inside a (near-)degenerate eigenvalue cluster is not unique
    assume(k >= c or sig[k - 1] - sig[k] > 1e-6 * sig[0])
    Kt = ref.nystroem_matrix(X, state.landmarks, gamma, kernel, k, approx.eigen_floor)
    A = (op.basis * op.eigenvalues) @ op.basis.T
    np.testing.assert_allclose(A, Kt, atol=1e-8 * max(1.0, np.abs(Kt).max()))
    np.testing.assert_allclose(op.basis.T @ op.basis, np.eye(op.basis.shape[1]), atol=1e-10)
    assert op.details["n_landmarks"] == c and op.details["effective_rank"] <= k


def test_nystroem_landmarks_drawn_once_and_reproducible():
    X, y = data(50)
    approx = kernelselect.Nystroem(n_landmarks=10)
    s1 = approx.prepare(X, y, kernel="gaussian", random_state=np.random.default_rng(4), workers=None)
    s2 = approx.prepare(X, y, kernel="gaussian", random_state=np.random.default_rng(4), workers=None)
    np.testing.assert_array_equal(s1.landmarks, s2.landmarks)
    fixed = kernelselect.Nystroem(n_landmarks=10, random_state=7)
    a = fixed.prepare(X, y, kernel="gaussian", random_state=None, workers=None)
    b = fixed.prepare(X, y, kernel="gaussian", random_state=None, workers=None)
    np.testing.assert_array_equal(a.landmarks, b.landmarks)
    # defaults: c = min(n, 200), k = c
    assert kernelselect.Nystroem()._sizes(50) == (50, 50)
    assert kernelselect.Nystroem()._sizes(1000) == (200, 200)


def test_nystroem_bad_parameters():
    X, y = data(20)
    for approx, msg in [(kernelselect.Nystroem(n_landmarks=30), "exceeds the number of samples"),
                        (kernelselect.Nystroem(n_landmarks=5, rank=6), "rank=6 exceeds"),
                        (kernelselect.Nystroem(n_landmarks=0), "n_landmarks"),
                        (kernelselect.Nystroem(sampler="bogus"), "sampler")]:
        with pytest.raises(ValueError, match=msg):
            approx.prepare(X, y, kernel="gaussian", random_state=None, workers=None)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_rff_operator_is_zzt(kernel):
    X, y = data(30)
    op, state = make(kernelselect.RFF(n_features=12), X, y, 0.8, kernel, seed=3)
    W = scale_frequencies(state.W0, 0.8, kernel)
    Z = ref.rff_features(X, W, state.b)
    np.testing.assert_allclose((op.basis * op.eigenvalues) @ op.basis.T, Z @ Z.T, atol=1e-12)
    assert op.eigenvalues.shape == (12,)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_rff_converges_to_the_kernel(kernel):
    X, y = data(15, 2)
    gamma = 0.5
    op, _ = make(kernelselect.RFF(n_features=20000), X, y, gamma, kernel, seed=1)
    A = (op.basis * op.eigenvalues) @ op.basis.T
    # Monte Carlo error ~ 1/√D per entry
    assert np.max(np.abs(A - ref.kernel_matrix(X, X, gamma, kernel))) < 0.04


def test_spectral_samplers():
    rng = np.random.default_rng(0)
    W0, b = sample_frequencies("gaussian", 3, 40000, rng)
    W = scale_frequencies(W0, 2.0, "gaussian")
    assert abs(np.var(W) - 4.0) < 0.1                         # N(0, 2γ)
    assert b.min() >= 0 and b.max() < 2 * np.pi
    C0, _ = sample_frequencies("laplacian", 3, 40000, rng)
    C = scale_frequencies(C0, 2.0, "laplacian")
    assert abs(np.median(np.abs(C)) - 2.0) < 0.1              # Cauchy(0, γ): median |w| = γ
    with pytest.raises(ValueError, match="kernel"):
        sample_frequencies("poly", 3, 4, rng)


def test_median_heuristic():
    X, _ = data(20)
    i, j = np.triu_indices(20, 1)
    sq = np.sum((X[i] - X[j]) ** 2, axis=1)
    l1 = np.sum(np.abs(X[i] - X[j]), axis=1)
    assert np.isclose(median_heuristic_gamma(X, "gaussian"), 1 / np.median(sq))
    assert np.isclose(median_heuristic_gamma(X, "laplacian"), 1 / np.median(l1))
    big = np.random.default_rng(0).standard_normal((400, 2))
    g1 = median_heuristic_gamma(big, "gaussian", np.random.default_rng(1), n_pairs=3000)
    g2 = median_heuristic_gamma(big, "gaussian", np.random.default_rng(1), n_pairs=3000)
    assert g1 == g2 and abs(g1 * 2 * 2 * np.log(2) - 1) < 0.1   # ‖x−x′‖² ~ 2χ²₂, median 4 ln 2
    with pytest.raises(ValueError, match="all 5 rows of X are equal"):
        median_heuristic_gamma(np.zeros((5, 2)))
    # many duplicates: the pairs are drawn again among the distinct rows
    dup = np.zeros((3000, 2))
    dup[0] = 1.0
    assert median_heuristic_gamma(dup, "gaussian", np.random.default_rng(0), n_pairs=100) == 0.5


def test_factor_spectrum_ill_conditioned_falls_back():
    rng = np.random.default_rng(0)
    for scales in (np.logspace(0, -3, 8), np.logspace(0, -14, 8), np.r_[np.ones(7), 0.0]):
        V = rng.standard_normal((50, 8)) * scales
        lam, Q = factor_spectrum(V)
        s = np.linalg.svd(V, compute_uv=False)
        np.testing.assert_allclose(lam, s ** 2, rtol=1e-8, atol=1e-13)
        np.testing.assert_allclose((Q * lam) @ Q.T, V @ V.T, atol=1e-12)
        np.testing.assert_allclose(Q.T @ Q, np.eye(8), atol=1e-10)


def test_exact_methods_and_limits():
    X, y = data(30)
    auto = kernelselect.Exact()
    auto.configure({"moments"})
    op, _ = make(auto, X, y, 1.0)
    assert op.name == "streaming"
    auto.configure({"moments", "spectral"})
    op, _ = make(auto, X, y, 1.0)
    assert op.name == "dense"
    assert kernelselect.Exact(method="streaming").provides == {"moments"}
    with pytest.raises(ValueError, match="max_dense=20.*streaming"):
        kernelselect.Exact(method="dense", max_dense=20).prepare(
            X, y, kernel="gaussian", random_state=None, workers=None)
    with pytest.raises(ValueError, match="method must be"):
        kernelselect.Exact(method="fast").prepare(X, y, kernel="gaussian", random_state=None, workers=None)


def test_approximation_names():
    names = approximation_names()
    assert {"exact", "nystrom", "rff"} <= set(names)
    assert isinstance(get_approximation("Nystroem"), kernelselect.Nystroem)
    assert isinstance(get_approximation(kernelselect.RFF), kernelselect.RFF)
    with pytest.raises(ValueError, match="not a known approximation.*nystrom"):
        get_approximation("svd")
    with pytest.raises(TypeError):
        get_approximation(3)
    assert "n_landmarks=5" in repr(kernelselect.Nystroem(n_landmarks=5))


def _ridge_reference(K, kind, alpha, power):
    """g(K) written out: K_α^(−p) or (K K_α⁻¹)^p."""
    inv = np.linalg.inv(K + alpha * np.eye(len(K)))
    M = {"resolvent": inv, "smoother": K @ inv, "complement": alpha * inv}[kind]
    return np.linalg.matrix_power(M, power)


@settings(deadline=None, max_examples=25)
# a complete eigenbasis carries no complement term: g(0) = α⁻² would magnify its rounding
@example(n=4, seed=4, log_gamma=0.0, log_alphas=[-3.0], kind="resolvent", power=2,
         kernel="laplacian")
@given(n=st.integers(4, 40), seed=st.integers(0, 2**31), log_gamma=st.floats(-4, 2),
       log_alphas=st.lists(st.floats(-3, 1), min_size=1, max_size=3),
       kind=st.sampled_from(["resolvent", "smoother", "complement"]),
       power=st.sampled_from([1, 2]),
       kernel=st.sampled_from(["gaussian", "laplacian"]))
def test_dense_ridge_forms_from_cholesky(n, seed, log_gamma, log_alphas, kind, power, kernel):
    from kernelselect.operators import RidgeFunction
    from kernelselect.operators.dense import DenseOperator

    X, y = data(n, 3, seed)
    K = ref.kernel_matrix(X, X, 2.0 ** log_gamma, kernel)
    alphas = 10.0 ** np.asarray(log_alphas)
    g = RidgeFunction(kind, alphas, power)
    B = np.stack([y, np.ones(n), X[:, 1]], axis=1)
    ops = {solver: DenseOperator(K, solver=solver) for solver in ("auto", "eigh")}
    for op in ops.values():
        quad, quad_pq = op.quadratic(g, B), op.quadratic(g, B[:, :1], B[:, 1:])
        appl, diag, tr = op.apply_function(g, B), op.diagonal_function(g), op.trace(g)
        assert quad.shape == (3, 3, alphas.size) and quad_pq.shape == (1, 2, alphas.size)
        # the rounding of a form pᵀMq grows with ‖p‖‖q‖‖M‖, of Mb with ‖b‖‖M‖
        probe = float(np.linalg.norm(B, axis=0).max())
        for j, a in enumerate(alphas):
            M = _ridge_reference(K, kind, a, power)
            scale = np.abs(M).max()
            np.testing.assert_allclose(quad[:, :, j], B.T @ M @ B, rtol=1e-8,
                                       atol=1e-10 * scale * n * probe ** 2)
            np.testing.assert_allclose(quad_pq[:, :, j], B[:, :1].T @ M @ B[:, 1:], rtol=1e-8,
                                       atol=1e-10 * scale * n * probe ** 2)
            np.testing.assert_allclose(appl[:, :, j], M @ B, rtol=1e-8,
                                       atol=1e-10 * scale * n * probe)
            np.testing.assert_allclose(diag[:, j], np.diag(M), rtol=1e-8, atol=1e-10 * scale)
            np.testing.assert_allclose(tr[j], np.trace(M), rtol=1e-8, atol=1e-10 * scale * n)
    # "auto" served every form from Cholesky factors, never from an eigendecomposition
    assert ops["auto"]._eig is None and ops["auto"].details["factorisation"] == "cholesky"
    assert ops["eigh"].details["factorisation"] == "eigh"


@settings(deadline=None, max_examples=15)
@given(n=st.integers(4, 30), seed=st.integers(0, 2**31), log_gamma=st.floats(-4, 2))
def test_dense_moments_from_k_without_factorising(n, seed, log_gamma):
    from kernelselect.operators.dense import DenseOperator

    X, y = data(n, 2, seed)
    K = ref.kernel_matrix(X, X, 2.0 ** log_gamma)
    op = DenseOperator(K)
    P = np.stack([y, np.ones(n)], axis=1)
    for r in range(6):
        Kr = np.linalg.matrix_power(K, r)
        np.testing.assert_allclose(op.power_quadratic(r, P), P.T @ Kr @ P, rtol=1e-10,
                                   atol=1e-12 * np.abs(Kr).max() * n)
    for r in range(3):
        np.testing.assert_allclose(op.power_trace(r), np.trace(np.linalg.matrix_power(K, r)),
                                   rtol=1e-12)
    np.testing.assert_array_equal(op.diagonal(), np.diag(K))
    assert op._eig is None and op._ridge == {}
    # tr K³ needs the spectrum; afterwards the moments come from the eigenpairs
    np.testing.assert_allclose(op.power_trace(3), np.trace(K @ K @ K), rtol=1e-10)
    assert op._eig is not None
    np.testing.assert_allclose(op.power_quadratic(3, P), P.T @ K @ K @ K @ P, rtol=1e-9,
                               atol=1e-12 * n ** 3)


def test_dense_operator_picks_its_factorisation():
    from kernelselect.operators import RidgeFunction
    from kernelselect.operators.dense import DenseOperator

    X, y = data(25)
    K = ref.kernel_matrix(X, X, 0.5)
    long_path = RidgeFunction("resolvent", np.logspace(-2, 1, 4))
    op = DenseOperator(K)
    op.trace(long_path)                              # 4 > max_ridge_alphas: eigh
    assert op._eig is not None and op._ridge == {}
    op = DenseOperator(K, max_ridge_alphas=4)
    op.trace(long_path)
    assert op._eig is None and len(op._ridge) == 4
    # once the eigenpairs exist, they serve every later request
    assert op.eigenvalues.shape == (25,)
    before = dict(op._ridge)
    op.trace(RidgeFunction("resolvent", [7.0]))
    assert op._ridge.keys() == before.keys()
    # a plain callable always goes through the spectrum
    op = DenseOperator(K)
    np.testing.assert_allclose(op.trace(lambda lam: np.sqrt(np.clip(lam, 0, None))),
                               np.sum(np.sqrt(np.clip(np.linalg.eigvalsh(K), 0, None))))
    with pytest.raises(ValueError, match="solver must be"):
        DenseOperator(K, solver="lu")
    with pytest.raises(ValueError, match="dense_solver must be"):
        kernelselect.Exact(dense_solver="lu").prepare(X, y, kernel="gaussian", random_state=None,
                                                      workers=None)


def test_dense_cholesky_failure_falls_back_to_eigh():
    from kernelselect.operators import RidgeFunction
    from kernelselect.operators.dense import DenseOperator

    # rank one K with a ridge far below rounding: K + αI is not numerically SPD
    K = np.ones((12, 12))
    g = RidgeFunction("smoother", [1e-30])
    auto, eig = DenseOperator(K), DenseOperator(K, solver="eigh")
    np.testing.assert_array_equal(auto.trace(g), eig.trace(g))
    assert auto.details["factorisation"] == "eigh"


@settings(deadline=None, max_examples=20)
@given(n=st.integers(5, 40), seed=st.integers(0, 2**31), log_gamma=st.floats(-4, 2),
       log_alpha=st.floats(-3, 1), regression=st.booleans())
def test_exact_criteria_same_by_cholesky_and_eigh(n, seed, log_gamma, log_alpha, regression):
    from kernelselect.criteria import criterion_names, evaluate_criterion, get_criterion
    from kernelselect.operators.dense import DenseOperator

    X, y = data(n, 3, seed)
    assume(0 < np.sum(y > 0) < n)
    if regression:
        y = X[:, 0] * 2.0 + np.sin(X[:, 1])
    K = ref.kernel_matrix(X, X, 2.0 ** log_gamma)
    alphas = [10.0 ** log_alpha]
    for name in criterion_names():
        crit = get_criterion(name)
        if crit.requirement() not in ("moments", "spectral"):
            continue
        if crit.labels == "binary" and regression:
            continue
        fast = evaluate_criterion(crit, DenseOperator(K), y, alphas)
        slow = evaluate_criterion(crit, DenseOperator(K, solver="eigh"), y, alphas)
        if name == "eloo" and not regression:
            # an error rate: counts flip only where a LOO margin is at rounding level
            assert np.abs(fast - slow).max() <= 1.0 / n + 1e-12
            continue
        np.testing.assert_allclose(fast, slow, rtol=1e-7, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("n", [1, 7, 600, 1100])
def test_symmetrise_from_one_triangle(n, lower):
    from kernelselect.operators.dense import _symmetrise_from

    rng = np.random.default_rng(n)
    S = rng.standard_normal((n, n))
    S = S + S.T
    A = rng.standard_normal((n, n))                       # garbage in the other triangle
    keep = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
    A[keep] = S[keep]
    out = _symmetrise_from(A, lower)
    np.testing.assert_array_equal(out, S)
    assert np.shares_memory(out, A)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 40), alpha=st.floats(1e-3, 10.0))
def test_resolvent_diagonal_from_the_solves_factor_is_the_inverse_diagonal(seed, n, alpha):
    from kernelselect.operators import RidgeFunction
    from kernelselect.operators.dense import DenseOperator

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n + 2))
    K = A @ A.T / n
    op = DenseOperator(K)
    B = rng.standard_normal((n, 2))
    first = op.apply_function(RidgeFunction("resolvent", [alpha]), B)   # caches the factor
    inv = np.linalg.inv(K + alpha * np.eye(n))
    np.testing.assert_allclose(op.resolvent_diagonal(alpha), np.diag(inv), rtol=1e-9)
    # the factor was used up: a later solve factors again, to the same answer
    np.testing.assert_allclose(op.apply_function(RidgeFunction("resolvent", [alpha]), B),
                               first, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.resolvent_diagonal(alpha / 2),           # no factor yet
                               np.diag(np.linalg.inv(K + alpha / 2 * np.eye(n))), rtol=1e-9)
