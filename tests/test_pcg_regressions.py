"""The Nyström conjugate-gradient machine where it used to answer wrongly: fits that
need no iteration, the bias at a tiny ridge, the jitter at a large one, a fit that stops
above its tolerance, and the memory refusal of many outputs; each against a dense
reference of the same model or the exact machine."""

import warnings

import numpy as np
import pytest

import kernelselect
from kernelselect import ConvergenceWarning, KernelRidgeRegressor, LSSVMClassifier, NystroemPCG
from kernelselect.solvers._pcg import (check_solver_memory, fit_nystrom_pcg,
                                              jitter_for)

from reference import kernel_matrix, krr_solve, lssvm_solve, mp_nystrom_fit, nystrom_ridge


def data(seed, n, d, offset=0.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sin(X @ rng.standard_normal(d)) + 0.1 * rng.standard_normal(n) + offset
    return X, y[:, None], rng


def relative(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


# -- fits that need no iteration ------------------------------------------------------

@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_zero_targets_give_the_zero_model(seed, bias):
    X, _, _ = data(seed, 90, 3)
    model = fit_nystrom_pcg(X, np.zeros((90, 2)), 0.5, 1.0, centres=np.arange(30), bias=bias)
    assert model.details["converged"] and model.details["iterations"] == 0
    assert model.details["history"].shape == (0, 2)
    assert np.all(model.coef == 0) and np.all(model.intercept == 0)
    np.testing.assert_array_equal(model.decision_function(X), 0.0)


@pytest.mark.parametrize("value, seed", [(3.0, 0), (-0.1, 2)])
def test_constant_targets_with_a_bias_give_the_constant(value, seed):
    """Cy = 0 exactly: β = 0 and b = the constant, as the exact machine has it."""
    X, _, rng = data(seed, 80, 2)
    Y = np.full((80, 1), value)
    model = fit_nystrom_pcg(X, Y, 0.5, 0.8, centres=np.arange(20), bias=True)
    assert np.all(model.coef == 0) and model.details["iterations"] == 0
    X_new = rng.standard_normal((10, 2))
    np.testing.assert_allclose(model.decision_function(X_new)[:, 0, 0], value, rtol=1e-15)


@pytest.mark.parametrize("intercept", [True, "mean"])
def test_constant_target_through_the_regressor_matches_the_exact_path(intercept):
    X, _, rng = data(4, 120, 3)
    y = np.full(120, 2.5)
    X_new = rng.standard_normal((15, 3))
    exact = KernelRidgeRegressor(gamma=0.4, alpha=0.3, approximation="exact",
                                 fit_intercept=intercept).fit(X, y).predict(X_new)
    pcg = KernelRidgeRegressor(gamma=0.4, alpha=0.3, approximation=NystroemPCG(n_centres=40),
                               fit_intercept=intercept, random_state=0).fit(X, y).predict(X_new)
    np.testing.assert_allclose(pcg, exact, rtol=1e-12)


@pytest.mark.parametrize("magnitude, bias", [(1e160, False), (1e-160, True), (1e300, True)])
def test_extreme_target_magnitudes_fit_the_scaled_model(magnitude, bias):
    """The solve is linear in y: y·s fits s times the model of y, without overflow."""
    X, Y, _ = data(5, 100, 3)
    kw = dict(centres=np.arange(0, 100, 3), bias=bias, tol=1e-10, max_iter=300)
    base = fit_nystrom_pcg(X, Y, 0.5, 0.1, **kw)
    big = fit_nystrom_pcg(X, Y * magnitude, 0.5, 0.1, **kw)
    assert big.details["converged"]
    # y·s differs from y in its last bits (s is no power of two): the fits agree to tol
    np.testing.assert_allclose(big.decision_function(X) / magnitude, base.decision_function(X),
                               rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("tol", [1.0, 5.0, -1e-3, float("nan")])
def test_tolerance_outside_zero_one_is_refused(tol):
    X, Y, _ = data(6, 50, 2)
    with pytest.raises(ValueError, match=r"tol must be a number in \[0, 1\)"):
        fit_nystrom_pcg(X, Y, 0.5, 1.0, centres=np.arange(10), bias=False, tol=tol)
    with pytest.raises(ValueError, match=r"tol must be a number in \[0, 1\)"):
        KernelRidgeRegressor(approximation=NystroemPCG(n_centres=10, tol=tol)).fit(X, Y[:, 0])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dask_input", [False, True])
def test_non_finite_targets_are_refused_naming_y(bad, dask_input):
    X, Y, _ = data(7, 60, 2)
    Y[17, 0] = bad
    if dask_input:
        da = pytest.importorskip("dask.array")
        X, Y = da.from_array(X, chunks=(20, -1)), da.from_array(Y, chunks=(20, -1))
    with pytest.raises(ValueError, match=r"y \(the targets\) holds NaN or infinite"):
        fit_nystrom_pcg(X, Y, 0.5, 1.0, centres=np.arange(12), bias=True)


@pytest.mark.parametrize("intercept", [False, True])
def test_dask_regressor_refuses_non_finite_targets(intercept):
    da = pytest.importorskip("dask.array")
    X, Y, _ = data(8, 90, 3)
    y = Y[:, 0].copy()
    y[40] = np.inf
    est = KernelRidgeRegressor(gamma=0.5, fit_intercept=intercept, random_state=0)
    with pytest.raises(ValueError, match=r"^y .*(NaN or infinite|NaN or inf)"):
        est.fit(da.from_array(X, chunks=(30, -1)), da.from_array(y, chunks=30))


# -- the bias at a tiny ridge ---------------------------------------------------------

@pytest.mark.parametrize("seed, n, d, gamma", [(1, 150, 8, 0.2), (5, 200, 5, 0.5)])
def test_bias_at_a_tiny_ridge_with_every_row_a_centre(seed, n, d, gamma):
    """The LSSVM with every row a centre at α/n = 1e-10: its predictions at new points
    agree with a least-squares solve of the same model to 5e-4 (they moved by 5-8 % when
    the stop test read only the residual in w of the bias-eliminated system, after one
    iteration)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = np.sign(np.sin(X @ rng.standard_normal(d)) + 0.3 * rng.standard_normal(n))[:, None]
    X_new = rng.standard_normal((300, d))
    alpha = 1e-10 * n
    model = fit_nystrom_pcg(X, Y, gamma, alpha, centres=np.arange(n), bias=True)
    reference = nystrom_ridge(X, Y, X, gamma, alpha, True, jitter=model.details["jitter"])
    assert model.details["converged"]
    assert relative(model.decision_function(X_new)[:, :, 0], reference(X_new)) < 5e-4


def test_dask_lssvm_with_every_row_a_centre_agrees_with_the_exact_machine():
    """On Dask with n ≤ 500 the machine takes every row as a centre: at α/n = 1e-10 its
    labels at new points are the exact LSSVM's."""
    da = pytest.importorskip("dask.array")
    import dask

    rng = np.random.default_rng(6)
    n, d = 400, 8
    X = rng.standard_normal((n, d))
    y = (np.sin(X @ rng.standard_normal(d)) + 0.3 * rng.standard_normal(n) > 0).astype(int)
    X_new = rng.standard_normal((400, d))
    exact = LSSVMClassifier(gamma=0.05, alpha=1e-10 * n, approximation="exact").fit(X, y)
    with dask.config.set(scheduler="synchronous"):
        pcg = LSSVMClassifier(gamma=0.05, alpha=1e-10 * n, random_state=0).fit(
            da.from_array(X, chunks=(100, -1)), da.from_array(y, chunks=100))
        f = np.asarray(pcg.decision_function(da.from_array(X_new, chunks=(100, -1))))
    assert pcg.n_centres_ == n
    f_exact = exact.decision_function(X_new)
    assert np.array_equal(np.sign(f), np.sign(f_exact))
    assert relative(f, f_exact) < 1e-3


# -- a stalled iteration finished directly ---------------------------------------------

def stall_data(seed):
    """Every row a centre, 1-D, a tiny ridge, with a bias: the rows of K_nm β cancel
    to 10⁻¹¹ of |β| (|β| ~ 10⁷ along the directions A⁻¹ stretches by 1/√λ), so the
    iteration's products carry errors of 10⁻⁵ and it stalls above its tolerance."""
    rng = np.random.default_rng(seed)
    if seed == 0:                          # the fuzz's draw: n = 5, α/n = 1e-8
        X = rng.standard_normal((5, 1))
        Y = (np.sin(X @ rng.standard_normal(1)) + 0.1 * rng.standard_normal(5))[:, None]
        return X, Y, 1e-8 * 5
    n = int(rng.integers(6, 25))
    rng.integers(1, 3)
    lam = 10.0 ** rng.uniform(-11, -7)
    X = rng.standard_normal((n, 1))
    Y = np.sin(X @ rng.standard_normal((1, 2))) + 0.1 * rng.standard_normal((n, 2))
    return X, Y, lam * n


@pytest.mark.parametrize("seed, dask_input", [(0, False), (18, True)])
def test_stalled_iteration_on_a_small_problem_is_solved_directly(seed, dask_input):
    """Where the iteration stalls (here at a preconditioned residual of 7e-6 and 2e-4,
    the fitted values 3e-6 and 1e-6 off) and n·m ≤ DIRECT_ENTRIES, the machine is solved
    by QR of the stacked least-squares form: the fitted values within 1e-8 of a 50-digit
    solve (plus ten times the spread the rounding of the kernel values causes), and it
    says so in details["direct"]; its residuals, read through the streamed products,
    decide ``converged`` and the warning as for any fit, which names the direct finish."""
    X, Y, alpha = stall_data(seed)
    n = X.shape[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        if dask_input:
            da = pytest.importorskip("dask.array")
            import dask

            with dask.config.set(scheduler="synchronous"):
                model = fit_nystrom_pcg(da.from_array(X, chunks=(n // 3, -1)),
                                        da.from_array(Y, chunks=(n // 3, -1)), 0.5, alpha,
                                        centres=np.arange(n), bias=True)
        else:
            model = fit_nystrom_pcg(X, Y, 0.5, alpha, centres=np.arange(n), bias=True)
    details = model.details
    assert details["direct"] and details["iterations"] < details["max_iter"]
    worst = np.maximum(details["residual"], details["preconditioned_residual"])
    assert details["converged"] == bool(np.all(worst <= details["tol"]))
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(messages) == (0 if details["converged"] else 1)
    assert all("finished by a direct least-squares solve" in text for text in messages)
    ref, spread = mp_nystrom_fit(X, Y, X, 0.5, alpha, True, jitter=details["jitter"],
                                 spread_draws=2, seed=seed)
    fitted = model.decision_function(X)[:, :, 0]
    assert np.max(np.abs(fitted - ref)) <= 1e-8 * np.abs(ref).max() + 10 * spread


def test_converged_iteration_is_not_solved_directly():
    """The common case runs no direct solve."""
    X, Y, _ = data(8, 300, 4)
    model = fit_nystrom_pcg(X, Y, 0.3, 1e-3, centres=np.arange(0, 300, 4), bias=True)
    assert model.details["converged"] and not model.details["direct"]


# -- the jitter -----------------------------------------------------------------------

@pytest.mark.parametrize("kernel, seed", [("gaussian", 0), ("laplacian", 3)])
@pytest.mark.parametrize("bias", [False, True])
def test_jitter_does_not_grow_with_the_ridge(kernel, seed, bias):
    """With every row a centre the model is the exact machine up to the jitter, which
    is set by the kernel: at α/n = 1, 1e3, 1e8 the fitted values equal the exact
    machine's to 1e-9 (the jitter 10⁻⁴·α used to change them by 0.1 % to 100 %); at
    α/n = 1e-9 they equal a least-squares solve of the same model to 1e-6."""
    X, Y, _ = data(seed, 120, 3)
    n = 120
    K = kernel_matrix(X, X, 0.5, kernel)
    jitters = set()
    for lam in (1e-9, 1.0, 1e3, 1e8):
        alpha = lam * n
        model = fit_nystrom_pcg(X, Y, 0.5, alpha, centres=np.arange(n), bias=bias,
                                kernel=kernel)
        assert model.details["converged"]
        jitters.add(model.details["jitter"])
        fitted = model.decision_function(X)[:, :, 0]
        if lam < 1:
            ref = nystrom_ridge(X, Y, X, 0.5, alpha, bias, jitter=model.details["jitter"],
                                kernel=kernel)(X)
            assert relative(fitted, ref) < 1e-6, lam
            continue
        if bias:
            a, b = lssvm_solve(K, Y[:, 0], alpha)
            exact = K @ a + b
        else:
            exact = K @ krr_solve(K, Y[:, 0], alpha)
        assert relative(fitted[:, 0], exact) < 1e-9, lam
    assert jitters == {jitter_for(n)}


# -- a fit that stops above its tolerance ---------------------------------------------

def test_unconverged_fit_warns_and_records_it():
    X, Y, rng = data(8, 300, 4)
    with pytest.warns(ConvergenceWarning, match=r"tol=1e-12: max_iter=2 "):
        model = fit_nystrom_pcg(X, Y, 0.3, 1e-3, centres=np.arange(0, 300, 4), bias=True,
                                tol=1e-12, max_iter=2)
    assert model.details["converged"] is False and model.details["iterations"] == 2
    assert np.max(np.maximum(model.details["residual"],
                             model.details["preconditioned_residual"])) > 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # a converged fit says nothing
        fit_nystrom_pcg(X, Y, 0.3, 1e-3, centres=np.arange(0, 300, 4), bias=True)


def test_unconverged_estimator_fit_warns_on_dask_too():
    da = pytest.importorskip("dask.array")
    import dask

    X, Y, _ = data(9, 240, 3, offset=2.0)
    est = KernelRidgeRegressor(gamma=0.6, alpha=1e-4, fit_intercept=True, random_state=1,
                               approximation=NystroemPCG(n_centres=60, tol=1e-13, max_iter=1))
    with dask.config.set(scheduler="synchronous"):
        with pytest.warns(ConvergenceWarning, match=r"max_iter=1 "):
            est.fit(da.from_array(X, chunks=(80, -1)), da.from_array(Y[:, 0], chunks=80))
    assert est.model_.details["converged"] == [False]
    assert est.n_iter_ == 1 or est.n_iter_ == [1]


# -- the memory refusal of many outputs -----------------------------------------------

@pytest.mark.parametrize("n, m, t", [(20_000, 1000, 300), (50_000, 800, 120)])
def test_memory_refusal_names_the_outputs_when_they_dominate(n, m, t):
    with kernelselect.config_context(max_bytes="64M"):
        with pytest.raises(ValueError, match=rf"Fit at most \d+ of the {t} outputs at a time"):
            check_solver_memory(n, m, 5, t, 2)


def test_memory_refusal_names_the_centres_when_they_dominate():
    with kernelselect.config_context(max_bytes="64M"):
        with pytest.raises(ValueError, match=r"Use at most \d+ centres \(the m × m "):
            check_solver_memory(100_000, 5000, 10, 1, 2)
