"""Every solve with K + αI against a high-precision or least-squares reference, at the
ridges the defaults reach (α/n from 1e-2 down to 1e-9) and for wide kernels (small γ,
where K is close to a constant matrix): the exact machines, the Nyström and
random-feature machines with and without bias, cross-validation, the criteria on
low-rank stand-ins and the discriminant-information forms."""

import functools

import mpmath
import numpy as np
import pytest
import scipy.linalg
from hypothesis import example, given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect import di
from kernelselect.models._cv import cross_validate_grid
from kernelselect.solvers._exact import fit_kernel_machine
from kernelselect.criteria import CRITERIA
from kernelselect.criteria._base import evaluate
from kernelselect.criteria.discriminant import operator_di
from kernelselect.operators._lowrank import LowRankOperator, ridge_weights
from kernelselect.operators.nystrom import Nystroem

import reference
from reference import kernel_matrix

EPS = np.finfo(float).eps
#: α/n: the widest ratio of the default path, a middle one and the smallest it reaches
RATIOS = [1e-2, 1e-6, 1e-9]
#: for standard-normal data in two dimensions γ = 1e-2 and 1e-4 are wide kernels
GAMMAS = [1.0, 1e-2, 1e-4]


def _data(n, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sin(2.0 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(n)
    return X, y


# ---------------------------------------------------------------------------
# exact machines: backward stable, forward error within the conditioning
# ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _exact_reference(gamma, ratio, bias):
    X, y = _data(30)
    K = kernel_matrix(X, X, gamma)
    return reference.mp_machine(K, y, ratio * 30, bias)


def _mp_residual_norm(K, alpha, a, b, y, bias):
    """‖P[a; b] − [y; 0]‖ in 50-digit arithmetic (bordered P with the bias)."""
    with mpmath.workdps(50):
        n = K.shape[0]
        rows = [mpmath.fsum(mpmath.mpf(float(K[i, j])) * mpmath.mpf(float(a[j]))
                            for j in range(n)) + mpmath.mpf(float(alpha)) * mpmath.mpf(float(a[i]))
                + mpmath.mpf(float(b)) - mpmath.mpf(float(y[i])) for i in range(n)]
        if bias:
            rows.append(mpmath.fsum(mpmath.mpf(float(v)) for v in a))
        return float(mpmath.sqrt(mpmath.fsum(r * r for r in rows)))


@pytest.mark.parametrize("ratio", RATIOS)
@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("solver", ["cholesky", "eigh", "tridiagonal"])
def test_exact_machine_is_backward_stable(solver, bias, gamma, ratio):
    X, y = _data(30)
    n, alpha = 30, ratio * 30
    K = kernel_matrix(X, X, gamma)
    m = fit_kernel_machine(X, y, gamma, [alpha], bias=bias, exact_solver=solver)
    a, b = m.coef[:, 0, 0], m.intercept[0, 0]
    P = reference.lssvm_bordered_matrix(K, alpha) if bias else K + alpha * np.eye(n)
    x = np.r_[a, b] if bias else a
    # normwise backward error (Rigal & Gaches 1967): measured ≤ 1 ε for every strategy
    eta = _mp_residual_norm(K, alpha, a, b, y, bias) / (
        np.linalg.norm(P, 2) * np.linalg.norm(x) + np.linalg.norm(y))
    assert eta < 50 * EPS
    a_ref, b_ref = _exact_reference(gamma, ratio, bias)
    x_ref = np.r_[a_ref, b_ref] if bias else a_ref
    bound = 100 * np.linalg.cond(P) * EPS
    assert np.linalg.norm(x - x_ref) <= bound * np.linalg.norm(x_ref)
    # the fitted values are what a user sees: within the same bound
    f, f_ref = K @ a + b, K @ a_ref + b_ref
    assert np.linalg.norm(f - f_ref) <= bound * np.linalg.norm(f_ref)


# ---------------------------------------------------------------------------
# low-rank machines: the ridge on the feature map, against the 50-digit solution
# ---------------------------------------------------------------------------

def _low_rank_setup(which, gamma, n=60, n_new=25):
    X, y = _data(n, seed=1)
    X_new = np.random.default_rng(2).standard_normal((n_new, 2))
    if which == "nystrom":
        approx = Nystroem(landmarks=np.arange(0, n, 5))          # 12 landmarks
    else:
        approx = kernelselect.RFF(n_features=12)
    state = approx.prepare(X, y, kernel="gaussian", random_state=np.random.default_rng(0),
                           workers=None)
    op = approx.build(X, y, gamma, kernel="gaussian", state=state, workers=None)
    if which == "nystrom":
        Z, _, T = op.landmarks
        np.testing.assert_array_equal(Z, X[::5])
        V_new = kernel_matrix(X_new, Z, gamma) @ T                # φ(x) = Tᵀk(Z, x)
    else:
        from kernelselect.kernels import scale_frequencies

        W = scale_frequencies(state.W0, gamma, "gaussian")
        np.testing.assert_allclose(op.factor, reference.rff_features(X, W, state.b),
                                   rtol=1e-12, atol=1e-14)
        V_new = reference.rff_features(X_new, W, state.b)
    return X, y, X_new, approx, state, op.factor, V_new


@functools.lru_cache(maxsize=None)
def _low_rank_reference(which, gamma, ratio, bias):
    _, y, _, _, _, V, _ = _low_rank_setup(which, gamma)
    return reference.mp_ridge(V, y, ratio * y.size, bias)


@pytest.mark.parametrize("ratio", RATIOS)
@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("which", ["nystrom", "rff"])
def test_low_rank_machine_is_the_stable_ridge_on_its_features(which, bias, gamma, ratio):
    X, y, X_new, approx, state, V, V_new = _low_rank_setup(which, gamma)
    alpha = ratio * y.size
    m = fit_kernel_machine(X, y, gamma, [alpha], bias=bias, approximation=approx, state=state)
    w_ref, b_ref = _low_rank_reference(which, gamma, ratio, bias)
    for A, points in ((V, X), (V_new, X_new)):          # training points, new points
        want = A @ w_ref + b_ref
        got = m.decision_function(points)[:, 0, 0]
        # measured ≤ 1e-12; the Woodbury dual evaluated with the true kernel was off
        # by orders of magnitude at α/n = 1e-6, and 1e-7 … 1e-4 even on the features
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    if which == "rff":
        np.testing.assert_allclose(m.weights[:, 0, 0], w_ref, rtol=1e-8,
                                   atol=1e-9 * np.abs(w_ref).max())
    np.testing.assert_allclose(m.intercept[0, 0], b_ref, rtol=1e-9, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 30), st.integers(1, 8),
       st.floats(-12, 1), st.floats(-6, 0), st.booleans())
@example(0, 6, 2, -10.0, -4.0, True)       # a weight at 2e-5 of the data's own precision
def test_ridge_weights_match_high_precision(seed, n, k, log_ratio, log_scale, bias):
    # random factors with singular values spread over 10^log_scale … 1 (ill-conditioned,
    # as Nyström factors of wide kernels are), tall or wide, any α down to 1e-12·n
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    P, _ = np.linalg.qr(rng.standard_normal((k, k)))
    r = min(n, k)
    s = np.sqrt(n) * np.logspace(0, 3 * log_scale, r)
    V = (U[:, :r] * s) @ P[:, :r].T
    V += rng.standard_normal(k)                    # column means: the centring matters
    y = rng.standard_normal(n)
    alpha = 10.0 ** log_ratio * n
    V0 = V.copy()
    W, b = ridge_weights(V, y[:, None], [alpha], bias)
    np.testing.assert_array_equal(V, V0)           # the caller's factor is left alone
    w_ref, b_ref = reference.mp_ridge(V, y, alpha, bias)
    f, f_ref = V @ W[:, 0, 0] + b[0, 0], V @ w_ref + b_ref
    np.testing.assert_allclose(f, f_ref, rtol=1e-9, atol=1e-9 * np.abs(f_ref).max())
    # the weights are as well determined as the data allow: one rounding of V (δV ~ ε‖V‖)
    # moves the exact ones by up to ‖δV‖(‖r‖ + σ_max‖w‖)/(σ_min² + α) (first order, σ of
    # the centred factor, r the residual), 2e-5 relative in a case with σ_min ~ 1e-12
    Vc = V - V.mean(axis=0) if bias else V
    sv = np.linalg.svd(Vc, compute_uv=False)
    resid = y - (V @ w_ref + b_ref)
    sigma_min2 = sv.min() ** 2 if Vc.shape[0] >= Vc.shape[1] else 0.0
    drift = (np.finfo(float).eps * np.linalg.norm(V, 2)
             * (np.linalg.norm(resid) + sv.max() * np.linalg.norm(w_ref)) / (sigma_min2 + alpha))
    np.testing.assert_allclose(W[:, 0, 0], w_ref, rtol=1e-6,
                               atol=1e-8 * np.abs(w_ref).max() + 10.0 * drift)


def test_ridge_weights_path_equals_single_solves_and_handles_rank_deficiency():
    X, y = _data(40)
    # duplicated columns and a column in span(1): V and V_c are rank deficient
    V = kernel_matrix(X, X[:6], 0.5)
    V = np.column_stack([V, V[:, :2], np.ones(40)])
    alphas = np.array([1e-9, 1e-3, 1.0]) * 40
    W, b = ridge_weights(V, np.column_stack([y, -y]), alphas, True)
    for j, a in enumerate(alphas):
        w_ref, b_ref = reference.mp_ridge(V, y, a, True)
        np.testing.assert_allclose(V @ W[:, 0, j] + b[0, j], V @ w_ref + b_ref, rtol=1e-9,
                                   atol=1e-10)
        np.testing.assert_allclose(W[:, 1, j], -W[:, 0, j], rtol=1e-12, atol=1e-14)


def test_nystroem_regressor_at_small_alpha_equals_the_stable_solve():
    # the reproduction of the defect: n = 400, 40 landmarks, γ near the median heuristic
    rng = np.random.default_rng(5)
    X = rng.standard_normal((600, 4))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(600)
    Xtr, ytr, Xte, yte = X[:400], y[:400], X[400:], y[400:]
    gamma = 0.125
    nmse = {}
    for ratio in RATIOS:
        est = kernelselect.KernelRidgeRegressor(
            gamma=gamma, alpha=ratio * 400, approximation=Nystroem(n_landmarks=40),
            random_state=0).fit(Xtr, ytr)
        Z = Xtr[est.support_]
        V, T = reference.nystroem_map(Xtr, Z, gamma)
        w = scipy.linalg.lstsq(np.vstack([V, np.sqrt(ratio * 400) * np.eye(V.shape[1])]),
                               np.r_[ytr, np.zeros(V.shape[1])])[0]
        want = kernel_matrix(Xte, Z, gamma) @ T @ w
        got = est.predict(Xte)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-7 * np.abs(want).max())
        nmse[ratio] = np.mean((got - yte) ** 2) / np.var(yte)
    # formerly 1e3 … 1e7 at the two small ridges
    assert max(nmse.values()) < 0.5


# ---------------------------------------------------------------------------
# k-fold cross-validation with per-fold Nyström models
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("machine", ["lssvm", "krr"])
@pytest.mark.parametrize("gamma", [1.0, 1e-3])
def test_nystroem_cross_validation_matches_least_squares_per_fold(machine, gamma):
    X, y = _data(60, seed=3)
    alphas = np.array(RATIOS) * 48
    approx = Nystroem(landmarks=np.arange(10))        # each fold's first 10 training rows
    res = cross_validate_grid(X, y, gammas=[gamma], alphas=alphas, machine=machine,
                              loss="mse", approximation=approx, cv=5, random_state=0)
    bias = machine == "lssvm"
    want = np.zeros(alphas.size)
    for tr, va in res.details["folds"]:
        Z = X[tr][:10]
        V, T = reference.nystroem_map(X[tr], Z, gamma)
        Vv = kernel_matrix(X[va], Z, gamma) @ T
        mu, ybar = (V.mean(axis=0), y[tr].mean()) if bias else (0.0, 0.0)
        for j, a in enumerate(alphas):
            k = V.shape[1]
            w = scipy.linalg.lstsq(np.vstack([V - mu, np.sqrt(a) * np.eye(k)]),
                                   np.r_[y[tr] - ybar, np.zeros(k)])[0]
            pred = Vv @ w + (ybar - mu @ w if bias else 0.0)
            want[j] += np.mean((pred - y[va]) ** 2) / len(res.details["folds"])
    np.testing.assert_allclose(res.curves["cv"][0], want, rtol=1e-7)


# ---------------------------------------------------------------------------
# the criteria on low-rank stand-ins (their forms go through α/(λ + α))
# ---------------------------------------------------------------------------

def _mp_criteria(V, y, alpha):
    """ree, gcv, eloo (squared) and DI (ρ = α) of K̃ = VVᵀ from the formulas of
    docs/criteria.md in 40-digit arithmetic (one inverse of K̃ + αI serves all)."""
    with mpmath.workdps(40):
        n = V.shape[0]
        Vm = mpmath.matrix(V.tolist())
        K = Vm * Vm.T
        a = mpmath.mpf(float(alpha))
        Ai = (K + a * mpmath.eye(n)) ** -1
        ym = mpmath.matrix([mpmath.mpf(float(v)) for v in y])
        ones = mpmath.matrix([1] * n)
        ay, a1 = Ai * ym, Ai * ones
        ree = a / n * mpmath.fsum(ym[i] * ay[i] for i in range(n))
        gcv = n * mpmath.fsum((a * v) ** 2 for v in ay) / (a * mpmath.fsum(
            Ai[i, i] for i in range(n))) ** 2
        s11 = mpmath.fsum(a1)
        b = mpmath.fsum(ay) / s11                      # the bordered system's bias
        e = [(ay[i] - a1[i] * b) / (Ai[i, i] - a1[i] ** 2 / s11) for i in range(n)]
        eloo = mpmath.fsum(v * v for v in e) / n
        # DI = y_cᵀK_c(K_c + ρI)⁻¹y_c = ‖y_c‖² − ρ y_cᵀ(K_c + ρI)⁻¹y_c, K_c = CKC
        row = [mpmath.fsum(K[i, j] for j in range(n)) / n for i in range(n)]
        total = mpmath.fsum(row) / n
        Kc = mpmath.matrix(n, n)
        for i in range(n):
            for j in range(n):
                Kc[i, j] = K[i, j] - row[i] - row[j] + total
        ybar = mpmath.fsum(ym) / n
        yc = mpmath.matrix([v - ybar for v in ym])
        sol = mpmath.lu_solve(Kc + a * mpmath.eye(n), yc)
        di_value = mpmath.fsum(v * v for v in yc) - a * mpmath.fsum(
            yc[i] * sol[i] for i in range(n))
        return {"ree": float(ree), "gcv": float(gcv), "eloo": float(eloo), "di": float(di_value)}


@functools.lru_cache(maxsize=None)
def _criteria_case(gamma, ratio):
    X, y = _data(30, seed=4)
    V, _ = reference.nystroem_map(X, X[:10], gamma)
    return X, y, V, _mp_criteria(V, y, ratio * 30)


@pytest.mark.parametrize("ratio", RATIOS)
@pytest.mark.parametrize("gamma", GAMMAS)
def test_criteria_on_low_rank_stand_ins_match_high_precision(gamma, ratio):
    X, y, V, want = _criteria_case(gamma, ratio)
    alpha = ratio * 30
    op = LowRankOperator(V)
    for name in ("ree", "gcv", "eloo"):
        got = evaluate(CRITERIA[name], op, y, [alpha], **({"loss": "squared"} if name == "eloo"
                                                           else {}))[0]
        # measured ≤ 6e-12 (eloo at γ = 1e-2, α/n = 1e-9: 2e-8 before its bias row's
        # complement term was formed from residual vectors)
        assert got == pytest.approx(want[name], rel=1e-10), name
    # DI: 2e-9 before its intercept terms were written with ρ(A + ρI)⁻¹
    assert operator_di(op, y, rho=alpha, task="regression") == pytest.approx(want["di"],
                                                                            rel=1e-11)
    # the streamed operator select_kernel builds (c × c statistics): measured ≤ 4e-9
    res = kernelselect.select_kernel(
        X, y, gammas=[gamma], alphas=[alpha], criterion=["ree", "gcv", "eloo"],
        approximation=Nystroem(landmarks=np.arange(10)), standardize=False, refine=False,
        task="regression")
    for name in ("ree", "gcv", "eloo"):
        assert res.curves[name][0, 0] == pytest.approx(want[name], rel=1e-7), name


# ---------------------------------------------------------------------------
# discriminant information: DI, KDI and the objectives' solves
# ---------------------------------------------------------------------------

def _mp_di(F, Y, rho, dps=50):
    """DI = tr((FᵀCF + ρI)⁻¹FᵀCYYᵀCF) in ``dps``-digit arithmetic."""
    with mpmath.workdps(dps):
        n, J = F.shape
        Fm = mpmath.matrix(F.tolist())
        Ym = mpmath.matrix(np.asarray(Y, dtype=float).reshape(n, -1).tolist())
        for A in (Fm, Ym):
            for j in range(A.cols):
                mean = mpmath.fsum(A[i, j] for i in range(n)) / n
                for i in range(n):
                    A[i, j] -= mean
        S = Fm.T * Fm + mpmath.mpf(float(rho)) * mpmath.eye(J)
        M = Fm.T * Ym
        return float(mpmath.fsum((M[:, c].T * mpmath.lu_solve(S, M[:, c]))[0]
                                 for c in range(M.cols)))


@pytest.mark.parametrize("ratio", RATIOS)
@pytest.mark.parametrize("gamma", [1.0, 1e-3])
def test_di_and_kdi_match_high_precision(gamma, ratio):
    rng = np.random.default_rng(9)
    n, J = 60, 15
    X = rng.standard_normal((n, 3))
    Y = di.encode_targets((X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int))
    rho = ratio * n
    R = X[:J]
    got = di.kdi_criterion(kernel_matrix(X, R, gamma), kernel_matrix(R, R, gamma), Y, rho)
    # measured ≤ 2.5e-10; the Cholesky solve of GᵀCG + ρB was 2e-5 … 3e-4 off at
    # γ = 1e-3, α/n = 1e-9
    assert got == pytest.approx(reference.mp_kdi(X, R, Y, gamma, rho), rel=1e-8)
    F = reference.rff_features(X, np.sqrt(2 * gamma) * rng.standard_normal((3, J)),
                               rng.uniform(0, 2 * np.pi, J))
    assert di.di_criterion(F, Y, rho) == pytest.approx(_mp_di(F, Y, rho), rel=1e-10)


def test_di_objective_solve_is_the_regularised_least_squares_solution():
    # A of rfdi / nysdi (what the gradients use) is the minimiser of
    # ‖Y_c − F_c A‖² + ρ tr(AᵀBA); check it against the stacked least-squares problem
    from kernelselect.di.objectives import _di_core

    rng = np.random.default_rng(3)
    X = rng.standard_normal((50, 2))
    R = X[:10]
    Yc = rng.standard_normal((50, 2))
    Yc -= Yc.mean(axis=0)
    for gamma in (1.0, 1e-3):
        G = kernel_matrix(X, R, gamma)
        Gc = G - G.mean(axis=0)
        B = kernel_matrix(R, R, gamma)
        for rho in (1e-2, 1e-7):
            lam, U = np.linalg.eigh(B)
            root = U * np.sqrt(np.maximum(lam, 0.0))
            M = np.vstack([Gc, np.sqrt(rho) * root.T])
            A_ref = scipy.linalg.lstsq(M, np.vstack([Yc, np.zeros((10, 2))]))[0]
            value, A = _di_core(Gc, Yc, rho, B=B)
            np.testing.assert_allclose(Gc @ A, Gc @ A_ref, rtol=1e-6, atol=1e-8)
            assert value == pytest.approx(float(np.sum(Yc * (Gc @ A_ref))), rel=1e-8)
            value, A = _di_core(Gc, Yc, rho)
            A_ref = np.linalg.solve(Gc.T @ Gc + rho * np.eye(10), Gc.T @ Yc)
            if gamma == 1.0:                     # well-conditioned: the normal equations
                np.testing.assert_allclose(A, A_ref, rtol=1e-8, atol=1e-10)
