"""The per-feature (ARD) Gaussian kernel: the primitives against dense references, the
closed-form held-out errors against refitting, their analytic gradients against
central finite differences, and equality with the isotropic kernel when every γ_k is
equal."""

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import reference as ref
from kernelselect.ard import _base, _exact, _nystrom
from kernelselect import kernels, lowlevel
from kernelselect.solvers._exact import cross_kernel_matvec
from kernelselect.criteria import evaluate_criterion, get_criterion
from kernelselect.criteria.kfold import fold_labels
from kernelselect.operators.dense import Exact
from kernelselect.operators.nystrom import Nystroem


def _data(seed, n, d, t, kind):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X -= X.mean(axis=0)
    if kind == "regression":
        Y = (np.sin(X[:, :1]) + 0.3 * rng.standard_normal((n, 1)))
    elif t == 1:
        Y = np.where(X[:, :1] + 0.5 * rng.standard_normal((n, 1)) > 0, 1.0, -1.0)
    else:
        codes = np.arange(n) % t
        rng.shuffle(codes)
        Y = np.where(codes[:, None] == np.arange(t)[None, :], 1.0, -1.0)
    return X, Y


# --------------------------------------------------------------------------- primitives


@settings(max_examples=25)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 30), m=st.integers(1, 20),
       d=st.integers(1, 5))
def test_ard_primitives_match_the_formula(seed, n, m, d):
    rng = np.random.default_rng(seed)
    X, Z = rng.uniform(-3, 3, (n, d)), rng.uniform(-3, 3, (m, d))
    g = np.exp(rng.uniform(-4, 1.5, d))
    K = ref.ard_kernel_matrix(X, Z, g)
    np.testing.assert_allclose(lowlevel.kernel_block(X, Z, g, kernel="ard"), K,
                               rtol=1e-12, atol=1e-14)
    Kx = ref.ard_kernel_matrix(X, X, g)
    V = rng.standard_normal((n, 2))
    np.testing.assert_allclose(lowlevel.kernel_matvec(X, V, g, kernel="ard"), Kx @ V,
                               rtol=1e-10, atol=1e-12)
    sums = lowlevel.kernel_sums(X, g, kernel="ard")
    np.testing.assert_allclose(sums["row_sums"], Kx.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(sums["frobenius_sq"], np.sum(Kx ** 2), rtol=1e-12)
    coef = rng.standard_normal((m, 3))
    np.testing.assert_allclose(cross_kernel_matvec(X, Z, coef, g, kernel="ard"), K @ coef,
                               rtol=1e-10, atol=1e-12)


def test_ard_with_equal_gammas_is_the_gaussian_kernel():
    rng = np.random.default_rng(1)
    X, Z = rng.standard_normal((40, 3)), rng.standard_normal((7, 3))
    np.testing.assert_array_equal(lowlevel.kernel_block(X, Z, 0.7, kernel="ard"),
                                  lowlevel.kernel_block(X * np.sqrt(0.7), Z * np.sqrt(0.7),
                                                        1.0))
    np.testing.assert_allclose(lowlevel.kernel_block(X, Z, [0.7] * 3, kernel="ard"),
                               lowlevel.kernel_block(X, Z, 0.7), rtol=1e-13)


def test_ard_frequencies_have_the_spectral_scale():
    rng = np.random.default_rng(2)
    g = np.array([0.1, 2.0, 30.0])
    W0, b = kernels.sample_frequencies("ard", 3, 200000, rng)
    W = kernels.scale_frequencies(W0, g, kernel="ard")
    np.testing.assert_allclose(W, np.sqrt(2 * g)[:, None] * W0)
    np.testing.assert_allclose(W.var(axis=1), 2 * g, rtol=0.02)   # w ~ N(0, 2 diag γ)


@pytest.mark.parametrize("gamma, match", [([1.0, 2.0], r"shape \(2,\).*\(3,\)"),
                                          ([1.0, 0.0, 1.0], r"gamma\[1\]"),
                                          ([1.0, np.nan, 1.0], r"finite"),
                                          ("wide", "positive number")])
def test_ard_gamma_is_checked(gamma, match):
    X = np.zeros((4, 3))
    with pytest.raises((ValueError, TypeError), match=match):
        lowlevel.kernel_block(X, X, gamma, kernel="ard")


def test_one_gamma_paths_refuse_ard_naming_what_works():
    with pytest.raises(ValueError, match="kernel='ard'.*select_kernel"):
        lowlevel.song_xu_column([4, 4], [1.0, 1.0], 1.0, kernel="ard")


# --------------------------------------------------------------------------- criteria


def _exact_operator(X, y, gamma):
    ex = Exact()
    state = ex.prepare(X, y, kernel="gaussian", random_state=0, workers=None)
    return ex.build(X, y, gamma, kernel="gaussian", state=state, workers=None)


@settings(max_examples=20)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(6, 25), d=st.integers(1, 4),
       t=st.sampled_from([1, 3]), kind=st.sampled_from(["regression", "classes"]),
       log_alpha=st.floats(-3, 0))
def test_held_out_errors_match_refitting(seed, n, d, t, kind, log_alpha):
    if kind == "regression":
        t = 1
    X, Y = _data(seed, n, d, t, kind)
    rng = np.random.default_rng(seed + 1)
    g = np.exp(rng.uniform(-2, 0.5, d))
    alpha = n * 10.0 ** log_alpha
    Xs = X * np.sqrt(g)
    K = ref.ard_kernel_matrix(X, X, g)
    loo = _exact.press_exact(Xs, Y, alpha, grad=False)[0]
    assert loo == pytest.approx(ref.lssvm_heldout_mse(K, Y, alpha), rel=1e-8)
    folds = fold_labels(n, 3, seed % 7, None)
    kf = _exact.press_kfold_exact(Xs, Y, alpha, folds, grad=False)[0]
    assert kf == pytest.approx(ref.lssvm_heldout_mse(K, Y, alpha, folds), rel=1e-8)
    marks = np.sort(rng.choice(n, size=max(2, n // 3), replace=False))
    Kt = ref.ard_nystroem_matrix(X, marks, g, marks.size, 1e-8)
    ny = _nystrom.press_nystrom(Xs, Xs[marks], marks, Y, alpha, grad=False)[0]
    assert ny == pytest.approx(ref.lssvm_heldout_mse(Kt, Y, alpha), rel=1e-7)


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
def test_equal_gammas_give_the_isotropic_curves(task):
    """The per-feature criteria with γ_k = γ for all k are the library's eloo / ekfold
    (squared loss) on the exact matrix and on the Nyström stand-in, to 1e-10."""
    t = 3 if task == "multiclass" else 1
    X, Y = _data(5, 60, 3, t, "regression" if task == "regression" else "classes")
    y = Y[:, 0] if t == 1 else Y
    eloo = get_criterion("eloo_multiclass" if t > 1 else "eloo")
    ekfold = get_criterion("ekfold_multiclass" if t > 1 else "ekfold")
    marks = np.sort(np.random.default_rng(0).choice(60, 15, replace=False))
    ny = Nystroem(landmarks=marks)
    ny_state = ny.prepare(X, Y[:, 0], kernel="gaussian", random_state=0, workers=None)
    strata = None if task == "regression" else np.argmax(Y, axis=1) if t > 1 else \
        (Y[:, 0] > 0).astype(int)
    folds = fold_labels(60, 5, 0, strata)
    for gamma in (0.02, 0.3, 3.0):
        alphas = 60 * 10.0 ** np.arange(-6.0, 0.5, 1.0)
        op = _exact_operator(X, Y[:, 0], gamma)
        ny_op = ny.build(X, Y[:, 0], gamma, kernel="gaussian", state=ny_state, workers=None)
        lib_loo = evaluate_criterion(eloo, op, y, alphas, loss="squared")
        lib_kf = evaluate_criterion(ekfold, op, y, alphas, loss="squared")
        lib_ny = evaluate_criterion(eloo, ny_op, y, alphas, loss="squared")
        Xs = X * np.sqrt(np.full(3, gamma))
        for j, a in enumerate(alphas):
            assert _exact.press_exact(Xs, Y, a, grad=False)[0] == pytest.approx(lib_loo[j],
                                                                              rel=1e-10)
            assert _exact.press_kfold_exact(Xs, Y, a, folds, grad=False)[0] == pytest.approx(
                lib_kf[j], rel=1e-10)
            assert _nystrom.press_nystrom(Xs, Xs[marks], marks, Y, a, grad=False)[0] == \
                pytest.approx(lib_ny[j], rel=1e-10)


# --------------------------------------------------------------------------- gradients


def _central_difference(f, theta, h=1e-2):
    """Central differences with one Richardson step, (4 D(h/2) − D(h)) / 3: error
    O(h⁴) at a step where rounding stays small (a kept eigenvalue of W near 1e-8·σ_max
    carries ~1e-8 of relative noise into f, which a step of 1e-5 turns into 1e-4)."""
    def step(h):
        out = np.empty(theta.size)
        for k in range(theta.size):
            e = np.zeros(theta.size)
            e[k] = h
            out[k] = (f(theta + e) - f(theta - e)) / (2 * h)
        return out

    return (4.0 * step(h / 2) - step(h)) / 3.0


def _check_gradient(f, theta):
    value, grad = f(theta)
    fd = _central_difference(lambda th: f(th)[0], theta)
    scale = max(np.max(np.abs(fd)), 1e-3 * abs(value))
    np.testing.assert_allclose(grad, fd, rtol=0, atol=1e-6 * scale)


_gradient_cases = dict(seed=st.integers(0, 2**31 - 1), n=st.integers(8, 30),
                       d=st.integers(1, 4), t=st.sampled_from([1, 3]),
                       kind=st.sampled_from(["regression", "classes"]),
                       log_alpha=st.floats(-2.5, 0))


@settings(max_examples=20)
@given(**_gradient_cases)
def test_exact_gradients_match_central_differences(seed, n, d, t, kind, log_alpha):
    if kind == "regression":
        t = 1
    X, Y = _data(seed, n, d, t, kind)
    rng = np.random.default_rng(seed + 2)
    theta = np.r_[rng.uniform(-2.5, 0.5, d), np.log(n) + log_alpha * np.log(10)]
    folds = fold_labels(n, 4, 0, None)

    def loo(th):
        return _exact.press_exact(X * np.sqrt(np.exp(th[:-1])), Y, np.exp(th[-1]))

    def kfold(th):
        return _exact.press_kfold_exact(X * np.sqrt(np.exp(th[:-1])), Y, np.exp(th[-1]), folds)

    def evidence(th):
        return _exact.evidence_exact(X * np.sqrt(np.exp(th[:-1])), Y, np.exp(th[-1]))

    _check_gradient(loo, theta)
    _check_gradient(kfold, theta)
    if np.all(np.ptp(Y, axis=0) > 0):
        # the evidence, also at a ridge per point of 10^-2.5 … 1 (α itself, not α/n)
        _check_gradient(evidence, theta)
        _check_gradient(evidence, np.r_[theta[:-1], log_alpha * np.log(10)])


@settings(max_examples=20)
@given(floor=st.sampled_from([1e-8, 1e-3]), **_gradient_cases)
@example(floor=1e-8, seed=157, n=19, d=1, t=1, kind="regression", log_alpha=0.0)
@example(floor=1e-8, seed=9441, n=8, d=1, t=1, kind="regression", log_alpha=0.0)
def test_nystrom_gradients_match_central_differences(seed, n, d, t, kind, log_alpha, floor):
    """Including the eigenvalues of W the floor drops (the divided differences of the
    truncated inverse), away from a change of the kept set."""
    if kind == "regression":
        t = 1
    X, Y = _data(seed, n, d, t, kind)
    rng = np.random.default_rng(seed + 3)
    theta = np.r_[rng.uniform(-2.5, 0.5, d), np.log(n) + log_alpha * np.log(10)]
    marks = np.sort(rng.choice(n, size=max(3, n // 3), replace=False))
    Zs = X[marks] * np.sqrt(np.exp(theta[:-1]))
    sig = np.linalg.eigvalsh(ref.ard_kernel_matrix(Zs, Zs, 1.0))
    cut = floor * sig.max()
    # the kept set stays fixed over the difference steps (no eigenvalue within 5 % of the cut)
    assume(np.min(np.abs(np.log(np.maximum(sig, 1e-300) / cut))) > 0.05)

    def nys(th):
        Xs = X * np.sqrt(np.exp(th[:-1]))
        return _nystrom.press_nystrom(Xs, Xs[marks], marks, Y, np.exp(th[-1]), eigen_floor=floor)

    _check_gradient(nys, theta)


def test_nystrom_gradient_covers_dropped_eigenvalues():
    """A case where the floor drops eigenvalues of W: their coupling term matters."""
    X, Y = _data(11, 40, 2, 1, "regression")
    marks = np.arange(0, 40, 3)
    theta = np.r_[np.log([0.05, 0.08]), np.log(0.4)]
    Zs = X[marks] * np.sqrt(np.exp(theta[:-1]))
    sig = np.linalg.eigvalsh(ref.ard_kernel_matrix(Zs, Zs, 1.0))
    assert np.sum(sig <= 1e-3 * sig.max()) >= 3

    def nys(th):
        Xs = X * np.sqrt(np.exp(th[:-1]))
        return _nystrom.press_nystrom(Xs, Xs[marks], marks, Y, np.exp(th[-1]), eigen_floor=1e-3)

    _check_gradient(nys, theta)


def test_distance_contraction_is_the_sum_over_pairs():
    rng = np.random.default_rng(4)
    H, A, B = rng.standard_normal((7, 5)), rng.standard_normal((7, 3)), rng.standard_normal((5, 3))
    direct = np.einsum("ij,ijk->k", H, (A[:, None, :] - B[None, :, :]) ** 2)
    np.testing.assert_allclose(_base.distance_contraction(H, A, B), direct, rtol=1e-12)
    S = H[:5, :5] + H[:5, :5].T
    direct = np.einsum("ij,ijk->k", S, (B[:, None, :] - B[None, :, :]) ** 2)
    np.testing.assert_allclose(_base.distance_contraction(S, B, B, symmetric=True), direct,
                               rtol=1e-12)


# --------------------------------------------------------------------------- evidence


@settings(max_examples=20)
@given(scale=st.sampled_from([1e-3, 1.0, 30.0]), **_gradient_cases)
def test_evidence_matches_the_gaussian_density(seed, n, d, t, kind, log_alpha, scale):
    if kind == "regression":
        t = 1
    X, Y = _data(seed, n, d, t, kind)
    assume(np.all(np.ptp(Y, axis=0) > 0))
    g = np.exp(np.random.default_rng(seed + 4).uniform(-2, 0.5, d))
    alpha = scale * 10.0 ** log_alpha
    K = ref.ard_kernel_matrix(X, X, g)
    value = _exact.evidence_exact(X * np.sqrt(g), Y, alpha, grad=False)[0]
    assert value == pytest.approx(ref.gp_evidence(K, Y, alpha), rel=1e-9, abs=1e-10)


def test_evidence_is_minus_the_log_density_per_point():
    """Against scipy's multivariate normal at σ̂² = q/n (an independent density)."""
    from scipy.stats import multivariate_normal

    X, Y = _data(3, 25, 2, 1, "regression")
    g, alpha = np.array([0.3, 1.2]), 0.05
    Ka = ref.ard_kernel_matrix(X, X, g) + alpha * np.eye(25)
    y = Y[:, 0] - Y[:, 0].mean()
    s2 = y @ np.linalg.solve(Ka, y) / 25
    logpdf = multivariate_normal(np.zeros(25), s2 * Ka).logpdf(y)
    value = _exact.evidence_exact(X * np.sqrt(g), Y, alpha, grad=False)[0]
    assert value == pytest.approx(-logpdf / 25, rel=1e-12)


@pytest.mark.parametrize("t", [1, 3])
def test_evidence_with_equal_gammas_is_the_isotropic_value(t):
    X, Y = _data(6, 40, 3, t, "regression" if t == 1 else "classes")
    for gamma in (0.02, 0.3, 3.0):
        K = ref.kernel_matrix(X, X, gamma)
        for alpha in (1e-6, 1e-2, 1.0):
            value = _exact.evidence_exact(X * np.sqrt(np.full(3, gamma)), Y, alpha,
                                        grad=False)[0]
            assert value == pytest.approx(ref.gp_evidence(K, Y, alpha), rel=1e-10)


def test_evidence_refuses_a_constant_target_and_a_nystrom_stand_in():
    from kernelselect.ard import _search as _ard_search

    X, _ = _data(7, 12, 2, 1, "regression")
    with pytest.raises(_base.EvaluationError, match="constant"):
        _exact.evidence_exact(X, np.ones((12, 1)), 0.1)
    prob = _ard_search.make_problem(X, X[:, :1], "evidence", np.arange(4))
    with pytest.raises(ValueError, match="exact kernel matrix"):
        prob.evaluate(np.zeros(3))


def test_shared_search_keeps_one_gamma_and_lowers_the_evidence():
    from kernelselect.ard import _search as _ard_search

    X, Y = _data(8, 60, 3, 1, "regression")
    prob = _ard_search.make_problem(X, Y, "evidence", None)
    iso = _ard_search.optimise(prob, 0.05, 1.0, shared=True)
    assert np.ptp(np.log(iso.gamma)) == 0.0
    assert iso.value < iso.start_value
    ard = _ard_search.optimise(prob, iso.gamma, iso.alpha)
    assert ard.value <= iso.value
    # at the isotropic optimum the summed γ-gradient and the α-gradient vanish
    g = prob.evaluate(iso.theta())[1]
    assert abs(g[:3].sum()) < 1e-3 and abs(g[3]) < 1e-3


# --------------------------------------------------------------------------- shared factors


@pytest.mark.parametrize("seed, spectrum, rank, floor", [
    (0, [5.0, 2.0, 1.0, 1e-4, 1e-9, 0.0], 6, 1e-6),       # the floor drops two
    (1, [3.0, 3.0, 0.5, 0.25, 0.1], 3, 1e-8),             # the rank drops two
    (2, [1.0, 1e-2, 1e-5, -1e-14], 4, 1e-3),              # a negative one: dropped
])
def test_landmark_eigenpairs_keep_the_largest_above_the_floor(seed, spectrum, rank, floor):
    """The eigen-floor rule of the library's Nyström stand-in, which the per-feature
    objectives share: eigenpairs largest first, the k largest above floor·σ_max kept,
    and the transform T = U_kΣ_k^{−1/2} of nystroem_transform built from exactly those."""
    from kernelselect.operators.nystrom import landmark_eigenpairs, nystroem_transform
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((len(spectrum), len(spectrum))))[0]
    W = (Q * np.asarray(spectrum)) @ Q.T
    sig, U, keep = landmark_eigenpairs(W, rank, floor)
    want = np.sort(spectrum)[::-1]
    np.testing.assert_allclose(sig, want, atol=1e-12)
    np.testing.assert_allclose(W @ U, U * sig, atol=1e-12)
    expected = [i for i, s in enumerate(want) if s > floor * want[0]][:rank]
    assert keep.tolist() == expected
    np.testing.assert_array_equal(nystroem_transform(W, rank, floor),
                                  U[:, keep] / np.sqrt(sig[keep]))


@pytest.mark.parametrize("seed, m, rank, floor", [(3, 12, 12, 1e-8), (4, 15, 9, 1e-3)])
def test_ard_nystrom_factor_is_the_library_stand_in(seed, m, rank, floor):
    """The per-feature Nyström factor at γ = 1 on the scaled features is the library's
    Nyström stand-in with the same landmarks, rank and floor: ΨΨᵀ = VVᵀ, same kept set."""
    X, _ = _data(seed, 50, 3, 1, "regression")
    Xs = X * np.sqrt([0.4, 1.5, 0.05])
    marks = np.sort(np.random.default_rng(seed).choice(50, m, replace=False))
    F = _nystrom.nystrom_factor(Xs, Xs[marks], marks, rank, floor)
    op = Nystroem(landmarks=marks, rank=rank, eigen_floor=floor).build(
        Xs, None, 1.0, kernel="gaussian", state=None, workers=1)
    assert F.keep.size == op.details["effective_rank"] == op.factor.shape[1]
    np.testing.assert_allclose(F.Psi @ F.Psi.T, op.factor @ op.factor.T, rtol=1e-9,
                               atol=1e-12)


@pytest.mark.parametrize("seed, alpha", [(5, 1e-3), (6, 2.0)])
def test_exact_inverse_is_the_ridge_inverse(seed, alpha):
    """αK_α⁻¹ from the compiled factorisation against numpy's inverse, and a K + αI that
    is not positive definite refused as an undefined point (not a LinAlgError)."""
    X, Y = _data(seed, 40, 3, 1, "regression")
    K = ref.ard_kernel_matrix(X, X, 0.3)
    M0 = _exact._scaled_inverse(K, alpha)
    np.testing.assert_allclose(M0, alpha * np.linalg.inv(K + alpha * np.eye(40)),
                               rtol=1e-8, atol=1e-10 * np.abs(M0).max())
    np.testing.assert_array_equal(M0, M0.T)
    with pytest.raises(_base.EvaluationError, match="not numerically positive definite"):
        _exact._scaled_inverse(K, -2.0)
    with pytest.raises(_base.EvaluationError, match="not numerically positive definite"):
        _exact.evidence_exact(X * np.sqrt(0.3), Y, -2.0)


@pytest.mark.parametrize("seed, n, m, d, symmetric", [(7, 9, 6, 3, False),
                                                      (8, 14, 14, 2, True)])
def test_gradient_contraction_is_the_kernels_log_gamma_derivative(seed, n, m, d, symmetric):
    """Σ_ij H_ij ∂K_ij/∂log γ_k, which every gradient here forms as
    −contraction(H∘K, X̃, Z̃) on the points of Kernel.ARD.points, against the kernel
    value's dense derivative ∂K/∂log γ (shape (d, n, m))."""
    from kernelselect.kernels import Kernel
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Z = X if symmetric else rng.standard_normal((m, d))
    H = rng.standard_normal((n, m))
    if symmetric:
        H = H + H.T
    gamma = rng.uniform(0.1, 2.0, d)
    Xs, Zs = Kernel.ARD.points(X, gamma)[0], Kernel.ARD.points(Z, gamma)[0]
    K = _base.gaussian_block(Xs, Zs)
    want = np.einsum("kij,ij->k", Kernel.ARD.log_gamma_derivative(X, Z, gamma), H)
    got = -_base.distance_contraction(H * K, Xs, Zs, symmetric=symmetric)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12 * np.abs(H).sum())
