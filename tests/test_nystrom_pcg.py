"""The large-m Nyström solver: streamed passes and preconditioned conjugate gradients
against dense references (stable least-squares solves of the same model)."""

import io

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect.solvers import _pcg
from kernelselect.solvers._pcg import (NystromPreconditioner, check_solver_memory,
                                       choose_centres, choose_sample, fit_nystrom_pcg,
                                       largest_centres, nystrom_pcg, nystrom_pcg_bytes)
from kernelselect.solvers._rows import (APPLY, CROSS, NORMAL, Conditioning, NystromRows,
                                              run_pass)

from reference import kernel_matrix, mp_nystrom_fit, mp_pcg_residual, nystrom_ridge

KERNELS = st.sampled_from(["gaussian", "laplacian"])

# Most fits below ask for tol = 1e-14 to reach the attainable accuracy, which they then
# compare; the warning such a fit gives when it stops above 1e-14 is tested in
# test_pcg_regressions.py.
pytestmark = pytest.mark.filterwarnings(
    "ignore::kernelselect.utils._warnings.ConvergenceWarning")


def data(seed, n, d, t, duplicates=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if duplicates:
        X[-duplicates:] = X[:duplicates]
    Y = np.sin(X @ rng.standard_normal((d, t))) + 0.1 * rng.standard_normal((n, t))
    return X, Y, rng


@settings(max_examples=30)
@given(st.integers(0, 2**31 - 1), st.integers(1, 300), st.integers(1, 4), st.integers(1, 40),
       st.integers(1, 3), st.floats(0.05, 2.0), KERNELS,
       st.sampled_from([0.0, 1.0, 2.0**300, 2.0**-300]))
def test_passes_match_dense_products(seed, n, d, m, t, gamma, kernel, magnitude):
    X, _, rng = data(seed, n, d, t)
    # X scaled by a magnitude and γ by its inverse square (Gaussian) or inverse (Laplacian):
    # the same kernel values, reached through the passes' power-of-two rescaling
    scale = magnitude or 1.0
    X = X * magnitude
    Z = X[rng.integers(0, n, m)]
    K = kernel_matrix(X / scale, Z / scale, gamma, kernel)
    gamma = gamma / scale ** (2 if kernel == "gaussian" else 1)
    cond = Conditioning(Z, gamma, kernel, bounds=(X.min(axis=0), X.max(axis=0)))
    V, W = rng.standard_normal((m, t)), rng.standard_normal((n, t))
    for mode, ref in ((NORMAL, K.T @ (K @ V)), (CROSS, K.T @ W), (APPLY, K @ V)):
        out = run_pass(mode, X, cond, W if mode == CROSS else V, workers=2)
        np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-10 * (1 + np.abs(ref).max()))


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 200), st.sampled_from([520, 700, 1100, 2100]),
       st.integers(1, 2), KERNELS)
def test_passes_over_sub_blocks_match_dense_products_on_any_thread_count(seed, n, m, t,
                                                                         kernel):
    """Past 512 centres a block of 64 rows is taken in sub-blocks of 32 or 16 rows (m
    here gives 32 and 16, with a last tile shorter than 512 centres and a last block
    shorter than a sub-block): the passes still give the dense products, and the same
    bits on one thread and on two."""
    X, _, rng = data(seed, n, 3, t)
    Z = rng.standard_normal((m, 3))
    K = kernel_matrix(X, Z, 0.3, kernel)
    cond = Conditioning(Z, 0.3, kernel, bounds=(X.min(axis=0), X.max(axis=0)))
    V, W = rng.standard_normal((m, t)), rng.standard_normal((n, t))
    for mode, ref in ((NORMAL, K.T @ (K @ V)), (CROSS, K.T @ W), (APPLY, K @ V)):
        out = run_pass(mode, X, cond, W if mode == CROSS else V, workers=2)
        np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-10 * (1 + np.abs(ref).max()))
        np.testing.assert_array_equal(
            out, run_pass(mode, X, cond, W if mode == CROSS else V, workers=1))


LAMBDAS = [1e-2, 1e-4, 1e-6, 1e-9]


@settings(max_examples=40)
@given(st.integers(0, 2**31 - 1), st.integers(8, 60), st.integers(2, 4), st.integers(2, 20),
       st.integers(1, 3), st.booleans(), st.sampled_from(LAMBDAS), st.floats(0.1, 2.0),
       st.integers(0, 3))
def test_pcg_matches_stable_least_squares(seed, n, d, m, t, bias, lam, gamma, duplicates):
    """Nyström KRR and the LSSVM, one or several outputs, α/n from 1e-2 to 1e-9: the
    fitted values agree with the least-squares solve of the same model to 1e-8 of
    max|y|; so do predictions at new points down to α/n = 1e-6. (At 1e-9 a new point's
    prediction can move by up to ‖w − w*‖ ≤ ‖residual‖/α, through directions the
    training points leave almost free: 1e-5 was seen.)"""
    X, Y, rng = data(seed, n, d, t, duplicates)
    centres = choose_centres(n, min(m, n), rng)
    alpha = lam * n
    model = fit_nystrom_pcg(X, Y, gamma, alpha, centres=centres, bias=bias, tol=1e-14,
                            max_iter=1000)
    reference = nystrom_ridge(X, Y, X[centres], gamma, alpha, bias,
                              jitter=model.details["jitter"])
    scale = max(1.0, np.abs(Y).max())
    np.testing.assert_allclose(model.decision_function(X)[:, :, 0], reference(X), rtol=0,
                               atol=1e-8 * scale)
    if lam >= 1e-6:
        X_new = rng.standard_normal((20, d))
        np.testing.assert_allclose(model.decision_function(X_new)[:, :, 0], reference(X_new),
                                   rtol=0, atol=1e-8 * scale)
    if not bias:
        assert np.all(model.intercept == 0)


def explicit_residual(X, Y, centres, gamma, alpha, bias, model):
    """‖ΦᵀCy − (ΦᵀCΦ + αI)w‖/‖ΦᵀCy‖ per output, from the returned β (w = Tβ), dense."""
    Z = X[centres]
    T = np.linalg.cholesky(kernel_matrix(Z, Z, gamma) + model.details["jitter"] *
                           np.eye(len(Z))).T
    Phi = np.linalg.solve(T.T, kernel_matrix(X, Z, gamma).T).T
    C = np.eye(len(X)) - (np.ones((len(X), len(X))) / len(X) if bias else 0)
    w = T @ model.coef[:, :, 0]
    rhs = Phi.T @ C @ Y
    res = rhs - (Phi.T @ C @ Phi + alpha * np.eye(len(Z))) @ w
    return np.linalg.norm(res, axis=0) / np.linalg.norm(rhs, axis=0)


@settings(max_examples=20)
@given(st.integers(0, 2**31 - 1), st.integers(2, 3), st.sampled_from(LAMBDAS),
       st.booleans())
@example(1397, 2, 1e-2, False)      # float64 reference 1.5e-11, reported 2.7e-13, true 1.4e-11
def test_reported_residual_is_the_explicit_one(seed, d, lam, bias):
    """The residual a fit reports is the one its coefficients have, whether or not the
    tolerance was met: equal to a factor 2 or to 2e-11, both being computed in floating
    point through the triangular factor of K(Z, Z). Where the float64 reference and the
    report differ by more, the residual in 50-digit arithmetic decides (a float64
    reference through an ill-conditioned factor can be 10 times the true residual). The
    floor is the rounding of the kernel values and products: at the example, a stalled
    fit finished directly, the true residual was 2.7e-12 with the distances of BLAS's
    expansion and 1.4e-11 with their direct sums, the report 2e-13 with either."""
    X, Y, rng = data(seed, 80, d, 2)
    centres = choose_centres(80, 25, rng)
    model = fit_nystrom_pcg(X, Y, 0.8, lam * 80, centres=centres, bias=bias, tol=1e-14,
                            max_iter=300)
    reported = model.details["residual"]

    def agree(explicit):
        return bool(np.all(explicit <= 2 * reported + 2e-11)
                    and np.all(reported <= 2 * explicit + 2e-11))

    dense = explicit_residual(X, Y, centres, 0.8, lam * 80, bias, model)
    if not agree(dense):
        exact = mp_pcg_residual(X, Y, X[centres], 0.8, lam * 80, bias,
                                model.details["jitter"], model.coef[:, :, 0])
        assert agree(exact), (dense, exact, reported)
    assert model.details["converged"] == bool(
        np.all(reported <= 1e-14) and np.all(model.details["preconditioned_residual"] <= 1e-14))


def test_one_dimension_at_the_smallest_ridge_reports_where_it_stalls(monkeypatch):
    """In one dimension with centres closer than the kernel width, K_mm's spectrum falls
    below the jitter and the residual stalls near 1e-8 at α/n = 1e-9: the fit stops
    there (a restart that does not halve it ends the iteration) and says so (above
    the size of the direct finish, as here with it turned off)."""
    monkeypatch.setattr(_pcg, "DIRECT_ENTRIES", 0)
    X, Y, rng = data(1, 80, 1, 2)
    centres = choose_centres(80, 25, rng)
    model = fit_nystrom_pcg(X, Y, 0.8, 1e-9 * 80, centres=centres, bias=False, tol=1e-14,
                            max_iter=300)
    reported = model.details["residual"]
    assert not model.details["converged"] and model.details["iterations"] < 300
    assert np.all((reported > 1e-11) & (reported < 1e-6))
    dense = explicit_residual(X, Y, centres, 0.8, 1e-9 * 80, False, model)
    assert np.all((dense < 10 * reported) & (reported < 10 * dense))  # both at rounding level


@pytest.mark.filterwarnings("ignore::kernelselect.ConvergenceWarning")
def test_one_dimension_at_the_smallest_ridge_is_finished_directly():
    """The same stall on a small problem (n·m = 2000) is finished by the direct solve:
    its fitted values are within three times the spread that float64 rounding of the
    kernel values causes (6e-8) of a 50-digit solve — 1.1e-7, where the stalled
    iteration's were 4.9e-7 off."""
    X, Y, rng = data(1, 80, 1, 2)
    centres = choose_centres(80, 25, rng)
    model = fit_nystrom_pcg(X, Y, 0.8, 1e-9 * 80, centres=centres, bias=False, tol=1e-14,
                            max_iter=300)
    assert model.details["direct"] and model.details["iterations"] < 300
    ref, spread = mp_nystrom_fit(X, Y, X[centres], 0.8, 1e-9 * 80, False,
                                 jitter=model.details["jitter"], spread_draws=2, seed=1)
    fitted = model.decision_function(X)[:, :, 0]
    assert np.max(np.abs(fitted - ref)) <= 3 * spread


def test_reachable_residual_at_the_smallest_ridge():
    """At α/n = 1e-9 (d = 3) the explicit relative residual of the normal equations falls
    to 1e-12 and the preconditioned one to 1e-10: the preconditioned system is well
    scaled, and the residual in w is read through Aᵀ, whose condition number is at most
    about 1/√λ."""
    X, Y, rng = data(3, 400, 3, 2)
    centres = choose_centres(400, 60, rng)
    model = fit_nystrom_pcg(X, Y, 0.5, 1e-9 * 400, centres=centres, bias=True, tol=1e-10,
                            max_iter=2000)
    assert model.details["converged"]
    assert np.all(model.details["residual"] <= 1e-10)
    assert np.all(model.details["preconditioned_residual"] <= 1e-10)
    tight = fit_nystrom_pcg(X, Y, 0.5, 1e-9 * 400, centres=centres, bias=True, tol=1e-12,
                            max_iter=2000)
    assert np.all(tight.details["residual"] <= 1e-12)


def test_multi_output_equals_separate_solves():
    X, Y, rng = data(5, 300, 3, 3)
    centres = choose_centres(300, 50, rng)
    joint = fit_nystrom_pcg(X, Y, 0.7, 0.03, centres=centres, bias=True, tol=1e-13,
                            max_iter=500)
    for j in range(3):
        one = fit_nystrom_pcg(X, Y[:, j:j + 1], 0.7, 0.03, centres=centres, bias=True,
                              tol=1e-13, max_iter=500)
        np.testing.assert_allclose(joint.coef[:, j], one.coef[:, 0], rtol=1e-9,
                                   atol=1e-9 * np.abs(one.coef).max())
        np.testing.assert_allclose(joint.intercept[j], one.intercept[0], rtol=1e-9, atol=1e-12)


def test_stopping_rule_reports_iterations_and_residual():
    X, Y, rng = data(7, 500, 4, 1)
    centres = choose_centres(500, 80, rng)
    loose = fit_nystrom_pcg(X, Y, 0.3, 1e-3, centres=centres, bias=False, tol=1e-3)
    tight = fit_nystrom_pcg(X, Y, 0.3, 1e-3, centres=centres, bias=False, tol=1e-10)
    assert loose.details["converged"] and tight.details["converged"]
    assert loose.details["residual"][0] <= 1e-3 and tight.details["residual"][0] <= 1e-10
    assert 0 < loose.details["iterations"] < tight.details["iterations"]
    capped = fit_nystrom_pcg(X, Y, 0.3, 1e-3, centres=centres, bias=False, tol=1e-14,
                             max_iter=2)
    assert capped.details["iterations"] == 2 and not capped.details["converged"]
    assert capped.details["residual"][0] > 1e-14
    # the passes: one right-hand side, one per iteration, one explicit residual check
    assert capped.details["passes"] == 2 + 2


def test_same_bits_on_any_thread_count(on_one_and_two_threads):
    X, Y, rng = data(11, 3000, 5, 2)
    centres = choose_centres(3000, 700, rng)
    fits = on_one_and_two_threads(
        lambda threads: fit_nystrom_pcg(X, Y, 0.2, 0.5, centres=centres, bias=True,
                                        tol=1e-8, workers=threads))
    assert np.array_equal(fits[0].coef, fits[1].coef)
    assert np.array_equal(fits[0].intercept, fits[1].intercept)
    assert fits[0].details["iterations"] == fits[1].details["iterations"]


def test_memory_guard_names_the_estimate_and_a_smaller_m():
    n, d, t, m = 100_000, 10, 1, 20_000
    need = nystrom_pcg_bytes(n, m, d, t, 2)
    assert need > 8.0 * m * m
    with kernelselect.config_context(max_bytes="1G"):
        fits = largest_centres(n, d, t, 2)
        assert 0 < fits < m and nystrom_pcg_bytes(n, fits, d, t, 2) <= 2**30
        assert nystrom_pcg_bytes(n, fits + 1, d, t, 2) > 2**30
        with pytest.raises(ValueError, match=rf"needs about .* GiB.*Use at most {fits} centres"):
            check_solver_memory(n, m, d, t, 2)
        X, Y, rng = data(0, 200, 2, 1)
        # the refusal comes before anything m × m is allocated
        with pytest.raises(ValueError, match="Use at most"):
            fit_nystrom_pcg(np.repeat(X, 60, axis=0)[:12_000], np.repeat(Y, 60, axis=0)[:12_000],
                            0.5, 1.0, centres=np.arange(12_000), bias=False)


def test_singular_centre_gram_gets_a_stated_jitter():
    X, Y, _ = data(2, 50, 2, 1)
    X = np.vstack([X, X[:10]])                   # duplicated centres: K_mm singular
    Y = np.vstack([Y, Y[:10]])
    centres = np.r_[np.arange(10), np.arange(50, 60), np.arange(10, 20)]
    model = fit_nystrom_pcg(X, Y, 1e-4, 1e-3, centres=centres, bias=True, tol=1e-12,
                            max_iter=500)
    assert model.details["jitter"] >= 30 * 2.0**-52
    reference = nystrom_ridge(X, Y, X[centres], 1e-4, 1e-3, True, jitter=model.details["jitter"])
    np.testing.assert_allclose(model.decision_function(X)[:, :, 0], reference(X), atol=1e-8)


@pytest.mark.parametrize("q", [0, 30])
def test_preconditioner_factors(q):
    X, _, rng = data(4, 80, 3, 1)
    Z = X[:25]
    sample = X[40:40 + q] if q else None
    cond = Conditioning(Z, 0.4, "gaussian")
    P = NystromPreconditioner(cond, n=80, alpha=0.08, sample=sample)
    assert P.rows == 25 + q
    Kmm = kernel_matrix(Z, Z, 0.4) + P.jitter * np.eye(25)
    T = np.linalg.cholesky(Kmm).T
    B = rng.standard_normal((25, 2))
    np.testing.assert_allclose(P.solve_T(np.asfortranarray(B)), np.linalg.solve(T, B), rtol=1e-9)
    np.testing.assert_allclose(P.solve_Tt(np.asfortranarray(B)), np.linalg.solve(T.T, B), rtol=1e-9)
    G = T @ T.T
    if q:
        Phi_S = np.linalg.solve(T.T, kernel_matrix(sample, Z, 0.4).T).T
        G = G + Phi_S.T @ Phi_S
    A = np.linalg.cholesky(G / (25 + q) + (0.08 / 80) * np.eye(25)).T
    np.testing.assert_allclose(P.solve_A(np.asfortranarray(B)), np.linalg.solve(A, B), rtol=1e-9)
    np.testing.assert_allclose(P.solve_At(np.asfortranarray(B)), np.linalg.solve(A.T, B), rtol=1e-9)
    np.testing.assert_allclose(P.times_At(np.asfortranarray(B)), A.T @ B, rtol=1e-12)


def test_sampled_rows_in_the_preconditioner_change_only_the_path():
    """Extra sampled rows in the preconditioner's Gram: the same solution, no more
    iterations; with every row sampled, a few iterations."""
    X, Y, rng = data(9, 600, 3, 1)
    centres = choose_centres(600, 60, rng)
    kw = dict(centres=centres, bias=True, tol=1e-10, max_iter=500)
    plain = fit_nystrom_pcg(X, Y, 0.5, 1e-5 * 600, **kw)
    pooled = fit_nystrom_pcg(X, Y, 0.5, 1e-5 * 600,
                             sample=choose_sample(600, centres, 60, rng), **kw)
    every = fit_nystrom_pcg(X, Y, 0.5, 1e-5 * 600,
                            sample=choose_sample(600, centres, 600, rng), **kw)
    assert every.details["iterations"] <= 5
    assert pooled.details["iterations"] <= plain.details["iterations"]
    for other in (pooled, every):
        np.testing.assert_allclose(other.decision_function(X), plain.decision_function(X),
                                   atol=1e-8)


def test_progress_lines_on_long_fits(monkeypatch):
    X, Y, rng = data(8, 200, 2, 1)
    centres = choose_centres(200, 30, rng)
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    rows = NystromRows(np.ascontiguousarray(X), Y, Conditioning(X[centres], 0.5, "gaussian"))
    sol = nystrom_pcg(rows, 0.1, bias=False, tol=1e-10, progress=True)
    text = stream.getvalue()
    assert "Nyström conjugate gradients" in text and "iterations" in text
    assert sol.iterations > 0


def test_dask_fit_and_predictions_equal_the_in_memory_ones():
    """Row-chunked Dask input: one task per chunk and pass, the parts' sums added in the
    order memory adds them, so the fit has the same bits; predictions come back as a
    Dask array with the same bits too."""
    da = pytest.importorskip("dask.array")
    import dask

    from kernelselect.solvers import _rows as _nystrom_rows

    X, Y, rng = data(12, 1500, 3, 2)
    centres = choose_centres(1500, 120, rng)
    kw = dict(centres=centres, sample=choose_sample(1500, centres, 120, rng), bias=True,
              tol=1e-6, max_iter=500)
    X_new = rng.standard_normal((700, 3))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_nystrom_rows, "PART_ROWS", 256)      # several parts per chunk
        mem = fit_nystrom_pcg(X, Y, 0.4, 0.05, **kw)
        Xd, Yd = da.from_array(X, chunks=(400, -1)), da.from_array(Y, chunks=(400, -1))
        with dask.config.set(scheduler="threads"):
            dist = fit_nystrom_pcg(Xd, Yd, 0.4, 0.05, **kw)
            pred = dist.decision_function(da.from_array(X_new, chunks=(300, -1)))
            assert pred.chunks[0] == (320, 256, 124)      # moved to 64-row blocks
            pred = pred.compute()
    assert np.array_equal(dist.coef, mem.coef) and np.array_equal(dist.intercept, mem.intercept)
    assert dist.details["iterations"] == mem.details["iterations"]
    assert np.array_equal(pred, mem.decision_function(X_new))
