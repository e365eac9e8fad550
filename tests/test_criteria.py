"""Every criterion × every operator against the same formula on the explicit matrix."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect import criteria
from kernelselect.criteria import evaluate_criterion, get_criterion
from kernelselect.kernels import scale_frequencies
from kernelselect.operators import get_approximation

import reference as ref

SPECTRAL = ["ree", "ipe", "c1", "gcv", "eloo"]
MOMENTS = ["kta", "ckta", "fsm", "mmd", "sm"]
BINARY_SPECTRAL = ["eloo_error_rate"]
ALPHAS = np.array([0.01, 0.3, 2.0])


def reference_value(name, A, y, alpha, **params):
    """The criterion straight from its formula on the explicit matrix A."""
    if name == "ree":
        return ref.crit_ree(A, y, alpha)
    if name in ("ipe", "c1"):
        sigma = params.get("sigma")
        sigma = 0.01 * np.std(y) if sigma is None else sigma
        return (ref.crit_ipe if name == "ipe" else ref.crit_c1)(A, y, alpha, sigma)
    if name == "gcv":
        return ref.crit_gcv(A, y, alpha)
    if name == "eloo":
        return ref.crit_eloo(A, y, alpha, params.get("loss", "squared"))
    if name == "eloo_error_rate":
        return ref.crit_eloo(A, y, alpha, "error_rate")
    if name == "kta":
        return ref.crit_kta(A, y)
    if name == "ckta":
        return ref.crit_ckta(A, y)
    if name == "fsm":
        return ref.crit_fsm(A, y)
    if name == "mmd":
        return ref.crit_mmd(A, y)
    if name == "sm":
        return ref.crit_sm(A, y, r=params.get("r", 3), h=params.get("h"))
    raise AssertionError(name)


def build(approx, X, y, gamma, kernel="gaussian", seed=0):
    """The operator of ``approx`` and the explicit matrix it stands for."""
    approx = get_approximation(approx)
    state = approx.prepare(X, y, kernel=kernel, random_state=np.random.default_rng(seed),
                           workers=None)
    op = approx.build(X, y, gamma, kernel=kernel, state=state, workers=None)
    if isinstance(approx, kernelselect.Nystroem):
        c, k = approx._sizes(X.shape[0])
        A = ref.nystroem_matrix(X, state["landmarks"], gamma, kernel, k, approx.eigen_floor)
    elif isinstance(approx, kernelselect.RFF):
        W = scale_frequencies(state["W0"], gamma, kernel)
        Z = ref.rff_features(X, W, state["b"])
        A = Z @ Z.T
    else:
        A = ref.kernel_matrix(X, X, gamma, kernel)
    return op, A


def problem(n=40, d=3, seed=0, binary=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    f = np.sin(2 * X[:, 0]) + 0.5 * X[:, -1]
    y = np.where(f + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0) if binary else f + 0.1 * rng.standard_normal(n)
    return X, y


APPROXIMATIONS = {
    "dense": lambda: kernelselect.Exact(method="dense"),
    "streaming": lambda: kernelselect.Exact(method="streaming"),
    "nystrom": lambda: kernelselect.Nystroem(n_landmarks=25, rank=20),
    "rff": lambda: kernelselect.RFF(n_features=30),
}


def _can(approx_key, name):
    return not (approx_key == "streaming" and name in SPECTRAL + BINARY_SPECTRAL)


@pytest.mark.parametrize("approx_key", list(APPROXIMATIONS))
@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
@pytest.mark.parametrize("binary", [True, False])
def test_every_criterion_matches_dense_reference(approx_key, kernel, binary):
    X, y = problem(binary=binary)
    gamma = 0.4 if kernel == "gaussian" else 0.3
    op, A = build(APPROXIMATIONS[approx_key](), X, y, gamma, kernel)
    names = SPECTRAL + (BINARY_SPECTRAL + MOMENTS if binary else ["kta", "ckta"])
    for name in names:
        if not _can(approx_key, name):
            continue
        got = evaluate_criterion(name, op, y, ALPHAS)
        want = [reference_value(name, A, y, a) for a in ALPHAS]
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-13, err_msg=f"{name} on {approx_key}")


@pytest.mark.parametrize("approx_key", ["dense", "nystrom", "rff"])
def test_parameters_reach_the_formula(approx_key):
    X, y = problem()
    op, A = build(APPROXIMATIONS[approx_key](), X, y, 0.7)
    for name, params in [("ipe", {"sigma": 0.3}), ("c1", {"sigma": 0.05}), ("sm", {"r": 2}),
                         ("sm", {"r": 5}), ("sm", {"h": 0.01}), ("eloo", {"loss": "squared"})]:
        got = evaluate_criterion(name, op, y, ALPHAS, **params)
        want = [reference_value(name, A, y, a, **params) for a in ALPHAS]
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-14, err_msg=f"{name} {params}")


@settings(deadline=None, max_examples=25)
@given(n=st.integers(5, 30), d=st.integers(1, 4), seed=st.integers(0, 2**31),
       log_gamma=st.floats(-3, 2), log_alpha=st.floats(-2, 1), binary=st.booleans())
def test_dense_matches_reference_random(n, d, seed, log_gamma, log_alpha, binary):
    X, y = problem(n, d, seed, binary)
    if binary and np.unique(y).size < 2:
        y[0] = -y[0]
    op, A = build(kernelselect.Exact(method="dense"), X, y, 2.0 ** log_gamma)
    alphas = np.array([2.0 ** log_alpha])
    names = SPECTRAL + (BINARY_SPECTRAL + MOMENTS if binary else ["kta", "ckta"])
    for name in names:
        got = evaluate_criterion(name, op, y, alphas)
        want = reference_value(name, A, y, alphas[0])
        if name == "eloo_error_rate":
            # a LOO prediction exactly at the decision boundary may round either way
            assert abs(got[0] - want) <= 1.0 / n + 1e-12
            continue
        np.testing.assert_allclose(got, [want], rtol=1e-7, atol=1e-12, err_msg=name)


@settings(deadline=None, max_examples=25)
@given(n=st.integers(4, 30), d=st.integers(1, 4), seed=st.integers(0, 2**31),
       log_gamma=st.floats(-4, 3), kernel=st.sampled_from(["gaussian", "laplacian"]),
       r=st.integers(1, 5))
def test_streaming_equals_dense_for_moment_criteria(n, d, seed, log_gamma, kernel, r):
    X, y = problem(n, d, seed, True)
    if np.unique(y).size < 2:
        y[0] = -y[0]
    gamma = 2.0 ** log_gamma
    dense, _ = build(kernelselect.Exact(method="dense"), X, y, gamma, kernel)
    stream, _ = build(kernelselect.Exact(method="streaming"), X, y, gamma, kernel)
    for name in MOMENTS:
        params = {"r": r} if name == "sm" else {}
        a = evaluate_criterion(name, dense, y, [1.0], **params)
        b = evaluate_criterion(name, stream, y, [1.0], **params)
        np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-300, err_msg=name)


def test_textbook_forms_on_explicit_kernel():
    """The exact criteria against independent textbook expressions."""
    X, y = problem(30)
    K = ref.kernel_matrix(X, X, 0.5)
    op, _ = build(kernelselect.Exact(method="dense"), X, y, 0.5)
    n = len(y)
    # KRR hat matrix S: ree = (1/n) yᵀ(I − S)y, GCV with the smoother's residuals
    alpha = 0.2
    S = K @ np.linalg.inv(K + alpha * np.eye(n))
    fitted = S @ y
    assert np.isclose(evaluate_criterion("ree", op, y, [alpha])[0], y @ (y - fitted) / n, rtol=1e-10)
    gcv = np.mean((y - fitted) ** 2) / (1 - np.trace(S) / n) ** 2
    assert np.isclose(evaluate_criterion("gcv", op, y, [alpha])[0], gcv, rtol=1e-10)
    # effective degrees of freedom tr S inside C1
    c1 = alpha ** 2 / n * np.sum(np.linalg.solve(K + alpha * np.eye(n), y) ** 2) + 0.04 / n * np.trace(S)
    assert np.isclose(evaluate_criterion("c1", op, y, [alpha], sigma=0.2)[0], c1, rtol=1e-10)
    # MMD: mean within-class kernel minus cross-class kernel
    pos, neg = y > 0, y < 0
    mmd = K[np.ix_(pos, pos)].mean() + K[np.ix_(neg, neg)].mean() - 2 * K[np.ix_(pos, neg)].mean()
    assert np.isclose(evaluate_criterion("mmd", op, y, [1.0])[0], mmd, rtol=1e-10)
    # KTA for ±1 labels: yᵀKy/(n‖K‖_F)
    assert np.isclose(evaluate_criterion("kta", op, y, [1.0])[0], y @ K @ y / (n * np.linalg.norm(K)), rtol=1e-10)


@pytest.mark.parametrize("approx_key", ["dense", "nystrom", "rff"])
@pytest.mark.parametrize("binary", [True, False])
def test_eloo_equals_bruteforce_leave_one_out(approx_key, binary):
    X, y = problem(25, binary=binary)
    op, A = build(APPROXIMATIONS[approx_key](), X, y, 0.6)
    for alpha in (0.05, 1.0):
        e = ref.loo_lssvm_bruteforce(A, y, alpha)
        got = evaluate_criterion("eloo", op, y, [alpha])[0]
        assert np.isclose(got, np.mean(e ** 2), rtol=1e-8)
        if binary:
            rate = np.mean(np.sign(y - e) != y)
            assert np.isclose(evaluate_criterion("eloo_error_rate", op, y, [alpha])[0], rate)
            assert np.isclose(evaluate_criterion("eloo", op, y, [alpha], loss="error_rate")[0],
                              rate)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_nystroem_with_all_landmarks_equals_exact(kernel):
    X, y = problem(30)
    gamma = 1.0
    exact, _ = build(kernelselect.Exact(method="dense"), X, y, gamma, kernel)
    nys, _ = build(kernelselect.Nystroem(n_landmarks=30, rank=30), X, y, gamma, kernel)
    for name in SPECTRAL + MOMENTS:
        np.testing.assert_allclose(evaluate_criterion(name, nys, y, ALPHAS),
                                   evaluate_criterion(name, exact, y, ALPHAS), rtol=1e-8,
                                   err_msg=name)


@pytest.mark.parametrize("approx_key", ["dense", "streaming"])
def test_exact_criteria_are_permutation_invariant(approx_key):
    X, y = problem(30)
    perm = np.random.default_rng(3).permutation(len(y))
    op, _ = build(APPROXIMATIONS[approx_key](), X, y, 0.5)
    opp, _ = build(APPROXIMATIONS[approx_key](), X[perm], y[perm], 0.5)
    for name in SPECTRAL + MOMENTS:
        if not _can(approx_key, name):
            continue
        np.testing.assert_allclose(evaluate_criterion(name, opp, y[perm], ALPHAS),
                                   evaluate_criterion(name, op, y, ALPHAS), rtol=1e-9,
                                   err_msg=name)


def test_label_scale_invariance():
    X, y = problem(30, binary=False)
    op, _ = build(kernelselect.Exact(method="dense"), X, y, 0.5)
    for name in ("kta", "ckta"):
        np.testing.assert_allclose(evaluate_criterion(name, op, 7.5 * y, [1.0]),
                                   evaluate_criterion(name, op, y, [1.0]), rtol=1e-12)
    # ckta is also shift invariant (centred)
    np.testing.assert_allclose(evaluate_criterion("ckta", op, y + 3.0, [1.0]),
                               evaluate_criterion("ckta", op, y, [1.0]), rtol=1e-10)
    # binary criteria see only the two classes, whatever their values
    Xb, yb = problem(30)
    op, _ = build(kernelselect.Exact(method="dense"), Xb, yb, 0.5)
    relabelled = np.where(yb > 0, 5.0, -3.0)
    for name in ("fsm", "mmd", "sm"):
        np.testing.assert_allclose(evaluate_criterion(name, op, relabelled, [1.0]),
                                   evaluate_criterion(name, op, yb, [1.0]), rtol=1e-12)
    # ree and gcv scale with y²
    np.testing.assert_allclose(evaluate_criterion("ree", op, 2 * yb, ALPHAS),
                               4 * evaluate_criterion("ree", op, yb, ALPHAS), rtol=1e-12)


def test_alpha_path_equals_one_alpha_at_a_time():
    X, y = problem(30)
    op, _ = build(kernelselect.Nystroem(n_landmarks=20), X, y, 0.5)
    for name in SPECTRAL:
        path = evaluate_criterion(name, op, y, ALPHAS)
        single = [evaluate_criterion(name, op, y, [a])[0] for a in ALPHAS]
        np.testing.assert_allclose(path, single, rtol=1e-13)


def test_registry_api():
    names = criteria.criterion_names()
    for name in SPECTRAL + MOMENTS:
        assert name in names
        c = get_criterion(name.upper())
        assert c.name == name and c.direction in ("min", "max")
    assert get_criterion("kta").direction == "max" and get_criterion("ree").direction == "min"
    assert get_criterion("sm").requirement({"h": 0.1}) == "spectral"
    assert get_criterion("sm").requirement() == "moments"
    with pytest.raises(ValueError, match="not a known criterion.*ree"):
        get_criterion("nope")
    with pytest.raises(ValueError, match="already registered"):
        criteria.register_criterion(get_criterion("ree"))
    with pytest.raises(TypeError, match="unknown parameter.*sigma"):
        evaluate_criterion("ree", build("exact", *problem(10), 1.0)[0], problem(10)[1], sigma=1.0)
    assert set(criteria.approximations_for("ree")) >= {"exact", "nystrom", "rff"}
    with pytest.raises(ValueError, match=r"cannot be computed.*use one of .*exact"):
        criteria.check_compatible("ree", kernelselect.Exact(method="streaming"))


def test_custom_criterion_registers_and_runs():
    def trace_ratio(operator, y, alphas):
        return operator.power_trace(1) / operator.n

    c = criteria.Criterion("test_trace_ratio", "max", "moments", "any", False, trace_ratio)
    criteria.register_criterion(c, replace=True)
    try:
        X, y = problem(12)
        res = kernelselect.select_kernel(X, y, criterion="test_trace_ratio", gammas=[0.5, 1.0],
                                         approximation="exact")
        np.testing.assert_allclose(res.curves["test_trace_ratio"], 1.0)
    finally:
        criteria.unregister_criterion("test_trace_ratio")
    assert "test_trace_ratio" not in criteria.criterion_names()


def test_spectral_criterion_on_streaming_operator_raises():
    X, y = problem(12)
    op, _ = build(kernelselect.Exact(method="streaming"), X, y, 1.0)
    with pytest.raises(ValueError, match="spectral"):
        evaluate_criterion("ree", op, y)
    with pytest.raises(ValueError, match="spectral"):
        evaluate_criterion("sm", op, y, h=0.1)
    with pytest.raises(ValueError, match="tr K\\^3"):
        op.power_trace(3)


def test_binary_criteria_reject_one_class():
    X, y = problem(12)
    op, _ = build("exact", X, y, 1.0)
    with pytest.raises(ValueError, match="single class.*fsm"):
        evaluate_criterion("fsm", op, np.ones(12))
    with pytest.raises(ValueError, match="3 distinct values.*mmd"):
        evaluate_criterion("mmd", op, np.arange(12) % 3)


@settings(deadline=None, max_examples=20)
@given(n=st.integers(6, 30), seed=st.integers(0, 2**31), log_gamma=st.floats(-3, 2),
       log_alpha=st.floats(-2, 1), frac=st.floats(0.3, 1.0), D=st.integers(2, 40),
       kernel=st.sampled_from(["gaussian", "laplacian"]))
def test_lowrank_operators_match_reference_random(n, seed, log_gamma, log_alpha, frac, D, kernel):
    X, y = problem(n, 2, seed, True)
    if np.unique(y).size < 2:
        y[0] = -y[0]
    c = max(2, int(frac * n))
    # a floor well above rounding keeps the explicit C W_k⁺ Cᵀ accurate to ~1e-10
    approxes = [kernelselect.Nystroem(n_landmarks=c, rank=c - 1, eigen_floor=1e-6),
                kernelselect.RFF(n_features=D)]
    alphas = np.array([2.0 ** log_alpha])
    for approx in approxes:
        op, A = build(approx, X, y, 2.0 ** log_gamma, kernel, seed)
        scale = max(1.0, np.abs(A).max())
        for name in ["ree", "ipe", "c1", "gcv", "kta", "ckta", "mmd", "sm"]:
            got = evaluate_criterion(name, op, y, alphas)[0]
            want = reference_value(name, A, y, alphas[0])
            assert np.isclose(got, want, rtol=1e-7, atol=1e-12 * scale), (name, type(approx).__name__)
        e = ref.crit_eloo_residuals(A, y, alphas[0])
        got = evaluate_criterion("eloo", op, y, alphas, loss="squared")[0]
        assert np.isclose(got, np.mean(e ** 2), rtol=1e-6), type(approx).__name__


def test_fsm_is_infinite_when_class_means_coincide():
    # two classes placed symmetrically about one point share their feature-space mean
    X = np.array([[-1.0], [1.0], [-2.0], [2.0]])
    X = np.vstack([X, X])
    y = np.array([1, 1, 1, 1, -1, -1, -1, -1], dtype=float)
    op, _ = build(kernelselect.Exact(method="dense"), X, y, 0.5)
    assert evaluate_criterion("fsm", op, y, np.array([1.0]))[0] == np.inf
