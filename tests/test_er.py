"""The eigenvalue-ratio criterion on every spectral operator against its formula."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect import MCM
from kernelselect.criteria import eigenvalue_ratio, evaluate_criterion, get_criterion

import reference as ref
from test_criteria import build, problem

ALPHAS = np.array([0.05, 1.0, 3.0])


def test_registered_with_direction_and_parameters():
    crit = get_criterion("er")
    assert crit.direction == "min" and crit.alpha_dependent
    assert dict(crit.params) == {"t": None, "c": 1.0}
    assert crit.requirement() == "spectral"


@pytest.mark.parametrize("approx", [
    kernelselect.Exact(method="dense"),
    kernelselect.Nystroem(n_landmarks=25, rank=20),
    kernelselect.RFF(n_features=30),
])
@pytest.mark.parametrize("params", [{}, {"t": 3, "c": 0.5}, {"t": 1, "c": 0.0}])
def test_matches_reference(approx, params):
    X, y = problem(40, binary=False)
    op, A = build(approx, X, y, 0.4)
    got = evaluate_criterion("er", op, y, ALPHAS, **params)
    want = [ref.crit_er(A, y, a, **params) for a in ALPHAS]
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-13)


def test_mcm_operator_uses_its_spectrum():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(36, 3))
    y = np.where(rng.normal(size=36) > 0, 1.0, -1.0)
    approx = MCM(levels=2)
    op = approx.build(X, y, 0.3, state=approx.prepare(X, y, random_state=0))
    U = ref.multilevel_circulant(ref.song_xu_column(op.details["m"], op.details["h"], 0.3))
    w, V = np.linalg.eigh(U)
    Up = (V * np.maximum(w, 0)) @ V.T            # the operator is the PSD projection of U
    yv = op.restrict(y)
    got = evaluate_criterion("er", op, y, ALPHAS, t=4)
    want = [ref.crit_er(Up, yv, a, t=4) for a in ALPHAS]
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)


@settings(deadline=None, max_examples=25)
@given(n=st.integers(4, 30), d=st.integers(1, 4), seed=st.integers(0, 2**31),
       log_gamma=st.floats(-3, 2), log_alpha=st.floats(-2, 1),
       t=st.integers(1, 29), c=st.floats(0.0, 5.0))
def test_dense_matches_reference_random(n, d, seed, log_gamma, log_alpha, t, c):
    X, y = problem(n, d, seed, binary=False)
    t = min(t, n - 1)
    op, A = build(kernelselect.Exact(method="dense"), X, y, 2.0 ** log_gamma)
    alpha = 2.0 ** log_alpha
    got = evaluate_criterion("er", op, y, [alpha], t=t, c=c)[0]
    want = ref.crit_er(A, y, alpha, t=t, c=c)
    assert np.isclose(got, want, rtol=1e-7, atol=1e-12)


@settings(deadline=None, max_examples=25)
@given(lam=st.lists(st.floats(0.0, 10.0), min_size=2, max_size=12), extra=st.integers(0, 5),
       t=st.integers(1, 16), seed=st.integers(0, 100))
def test_ratio_ignores_order_and_counts_missing_eigenvalues_as_zero(lam, extra, t, seed):
    lam = np.array(lam)
    n = lam.size + extra
    if t >= n:
        with pytest.raises(ValueError, match="t must be"):
            eigenvalue_ratio(lam, n, t)
        return
    shuffled = np.random.default_rng(seed).permutation(lam)
    a = eigenvalue_ratio(shuffled, n, t)
    full = np.sort(np.concatenate([lam, np.zeros(extra)]))[::-1]
    main, tail = full[:t].sum(), full[t:].sum()
    if main == 0:
        assert np.isnan(a)
    else:
        assert np.isclose(a, tail / main)


def test_widest_kernel_has_smallest_ratio():
    # K → 11ᵀ as γ → 0: one eigenvalue carries the trace, the ratio goes to 0
    X, y = problem(30)
    values = []
    for gamma in (1e-6, 1e-2, 1.0, 100.0):
        op, _ = build(kernelselect.Exact(method="dense"), X, y, gamma)
        values.append(eigenvalue_ratio(op.eigenvalues, op.n, 5))
    assert values[0] < 1e-4 and np.all(np.diff(values) > 0)


def test_bad_parameters_are_named():
    X, y = problem(20)
    op, _ = build(kernelselect.Exact(method="dense"), X, y, 0.5)
    with pytest.raises(ValueError, match="t must be"):
        evaluate_criterion("er", op, y, [1.0], t=20)
    with pytest.raises(ValueError, match="t must be"):
        evaluate_criterion("er", op, y, [1.0], t=0)
    with pytest.raises(TypeError, match="t must be an integer"):
        evaluate_criterion("er", op, y, [1.0], t=2.5)
    with pytest.raises(ValueError, match="c must be"):
        evaluate_criterion("er", op, y, [1.0], c=-1.0)
    with pytest.raises(TypeError, match="unknown parameter"):
        evaluate_criterion("er", op, y, [1.0], r=3)


def test_streaming_operator_is_refused():
    X, y = problem(20)
    with pytest.raises(ValueError, match="er"):
        kernelselect.select_kernel(X, y, gammas=[0.5], criterion="er",
                                   approximation=kernelselect.Exact(method="streaming"))


def test_select_kernel_runs_on_every_spectral_approximation():
    X, y = problem(48)
    for approx in ("exact", "nystrom", "rff", "mcm"):
        res = kernelselect.select_kernel(X, y, gammas=[0.1, 1.0, 10.0], criterion="er",
                                         approximation=approx, random_state=0)
        assert np.all(np.isfinite(np.asarray(res.curves["er"])))
