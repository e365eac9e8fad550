"""The Nyström solver with float32 preconditioner factors: the compiled mixed-precision
triangular products, the float32 factors against dense references, the model they
solve (the float64 one, checked against the stable least-squares reference), and the
rule ``precision="auto"`` that keeps them or factors again in float64."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelselect import KernelRidgeRegressor, NystroemPCG
from kernelselect.solvers import _pcg
from kernelselect.solvers._pcg import (NystromPreconditioner, choose_centres, choose_sample,
                                       fit_nystrom_pcg, nystrom_pcg, streamed_rows)
from kernelselect.solvers._rows import Conditioning
from kernelselect.utils._lapack import triangular_apply

from reference import kernel_matrix, nystrom_ridge

pytestmark = pytest.mark.filterwarnings(
    "ignore::kernelselect.utils._warnings.ConvergenceWarning")


def data(seed, n, d, t):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal((d, t)) / np.sqrt(d)
    Y = np.sin(2.0 * X @ w) + 0.1 * rng.standard_normal((n, t))
    return X, Y, rng


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 70), st.integers(1, 3),
       st.sampled_from([np.float32, np.float64]), st.booleans(), st.booleans(), st.booleans(),
       st.sampled_from([1.0, 0.5, 3.0]))
def test_triangular_apply_matches_dense_products_and_solves(seed, m, t, dtype, lower, trans,
                                                            solve, scale):
    """op(F̃)(scale·B) and op(F̃)⁻¹(scale·B) for a Fortran-ordered F of either dtype with a
    separate float64 diagonal, against numpy on the triangle the factor's entries give in
    float64; F's diagonal and other triangle are never read."""
    rng = np.random.default_rng(seed)
    F = np.asfortranarray(rng.standard_normal((m, m)) / m, dtype=dtype)
    diag = rng.uniform(0.5, 2.0, m)
    F[np.diag_indices(m)] = np.nan                    # must not be read
    other = np.triu_indices(m, 1) if lower else np.tril_indices(m, -1)
    F[other] = np.nan
    entries = np.nan_to_num(F.astype(np.float64), nan=0.0)
    tri = entries + np.diag(diag)
    op = tri.T if trans else tri
    B = rng.standard_normal((m, t))
    ref = np.linalg.solve(op, scale * B) if solve else op @ (scale * B)
    out = triangular_apply(F, diag, lower, trans, solve, scale, np.asfortranarray(B))
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


def test_triangular_apply_is_linear_to_float64_rounding():
    """A float32 factor applied in float64 is one fixed linear map: B ↦ F̃⁻¹B is additive
    to float64 rounding (a float32 solve is not: its rounding is 2⁻²⁴ relative)."""
    rng = np.random.default_rng(3)
    m = 400
    F = np.asfortranarray(np.tril(rng.standard_normal((m, m)) / m), dtype=np.float32)
    diag = rng.uniform(0.5, 2.0, m)
    B1, B2 = rng.standard_normal((m, 1)), rng.standard_normal((m, 1))

    def solve(B):
        return triangular_apply(F, diag, True, False, True, 1.0, np.asfortranarray(B))

    total = solve(B1 + B2)
    np.testing.assert_allclose(total, solve(B1) + solve(B2), rtol=0,
                               atol=1e-14 * np.abs(total).max())


def test_float32_factors_against_dense_references():
    """T (TᵀT = K_mm + δ₃₂I, δ₃₂ = m·2⁻²³) and A (AᵀA = G/r + λI with G from T and the
    sample rows) in float32, their solves run in float64: against the dense factors of the
    same float32-rounded matrices to float32 accuracy."""
    X, _, rng = data(4, 200, 6, 1)
    Z, sample = X[:60], X[100:160]
    cond = Conditioning(Z, 0.1, "gaussian")
    P = NystromPreconditioner(cond, n=200, alpha=0.02, sample=sample, precision="float32")
    assert P.single and P.dtype == np.float32 and P._F.dtype == np.float32
    assert P.factor_jitter == 60 * 2.0 ** -23
    assert P.jitter == _pcg.jitter_for(60)               # the float64 model's
    Kmm = kernel_matrix(Z, Z, 0.1) + P.factor_jitter * np.eye(60)
    T = np.linalg.cholesky(Kmm).T
    Phi_S = np.linalg.solve(T.T, kernel_matrix(sample, Z, 0.1).T).T
    A = np.linalg.cholesky((T @ T.T + Phi_S.T @ Phi_S) / 120 + (0.02 / 200) * np.eye(60)).T
    B = rng.standard_normal((60, 2))
    for got, ref in ((P.solve_T, np.linalg.solve(T, B)), (P.solve_Tt, np.linalg.solve(T.T, B)),
                     (P.solve_A, np.linalg.solve(A, B)), (P.solve_At, np.linalg.solve(A.T, B)),
                     (P.times_At, A.T @ B)):
        np.testing.assert_allclose(got(np.asfortranarray(B)), ref, rtol=2e-4,
                                   atol=2e-4 * np.abs(ref).max())
    g = np.linalg.eigvalsh((T @ T.T + Phi_S.T @ Phi_S) / 120)
    assert P.effective_dimension() == pytest.approx(np.sum(g / (g + 0.02 / 200)), rel=1e-4)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 2), st.booleans(),
       st.sampled_from([1e-3, 1e-5, 1e-6]))
def test_float32_factors_solve_the_float64_model(seed, t, bias, lam):
    """With float32 factors the iteration solves the float64 model (K_mm + δI, δ the
    model's jitter): the fitted values agree with the stable least-squares solve of that
    model, the residual sum of squares with the one its coefficients have, and the
    predictions with float64 factors' to the tolerance."""
    X, Y, rng = data(seed, 300, 8, t)
    centres = choose_centres(300, 40, rng)
    sample = choose_sample(300, centres, 40, rng)
    kw = dict(centres=centres, sample=sample, bias=bias, tol=1e-10, max_iter=500)
    single = fit_nystrom_pcg(X, Y, 0.1, lam * 300, precision="float32", **kw)
    double = fit_nystrom_pcg(X, Y, 0.1, lam * 300, precision="float64", **kw)
    assert single.details["factors"] == "float32" and double.details["factors"] == "float64"
    assert single.details["converged"]
    assert single.details["jitter"] == double.details["jitter"]
    reference = nystrom_ridge(X, Y, X[centres], 0.1, lam * 300, bias,
                              jitter=single.details["jitter"])
    scale = np.abs(Y).max()
    fitted = single.decision_function(X)[:, :, 0]
    np.testing.assert_allclose(fitted, reference(X), rtol=0, atol=1e-7 * scale)
    np.testing.assert_allclose(fitted, double.decision_function(X)[:, :, 0], rtol=0,
                               atol=1e-7 * scale)
    rss = np.sum((Y - fitted) ** 2, axis=0)
    np.testing.assert_allclose(single.details["rss"], rss, rtol=1e-6)
    assert single.details["effective_dimension"] == pytest.approx(
        double.details["effective_dimension"], rel=1e-3)


def ill_conditioned():
    """3-dimensional data with a smooth kernel: a third of K_mm's eigenvalues lie below
    the float32 jitter (module notes)."""
    X, Y, rng = data(0, 2000, 3, 1)
    centres = choose_centres(2000, 300, rng)
    return X, Y, centres, 0.5


def test_auto_keeps_float64_bits_at_or_below_the_threshold():
    X, Y, rng = data(1, 400, 5, 1)
    centres = choose_centres(400, 50, rng)
    kw = dict(centres=centres, bias=True)
    auto = fit_nystrom_pcg(X, Y, 0.2, 1e-4 * 400, **kw)
    double = fit_nystrom_pcg(X, Y, 0.2, 1e-4 * 400, precision="float64", **kw)
    assert auto.details["factors"] == "float64"
    np.testing.assert_array_equal(auto.coef, double.coef)


def test_auto_factors_again_in_float64_where_float32_rounding_decides(monkeypatch):
    """Above the threshold (lowered here), "auto" keeps float32 factors on data whose
    K_mm is well above the float32 jitter and factors again in float64, with float64's
    bits, where pivots reach it; forced float32 factors there do not converge."""
    monkeypatch.setattr(_pcg, "FLOAT32_MIN_CENTRES", 0)
    X, Y, centres, gamma = ill_conditioned()
    alpha = 1e-6 * 2000
    auto = fit_nystrom_pcg(X, Y, gamma, alpha, centres=centres, bias=False, max_iter=300)
    double = fit_nystrom_pcg(X, Y, gamma, alpha, centres=centres, bias=False, max_iter=300,
                             precision="float64")
    assert auto.details["factors"] == "float64"
    np.testing.assert_array_equal(auto.coef, double.coef)
    assert double.details["converged"]
    forced = fit_nystrom_pcg(X, Y, gamma, alpha, centres=centres, bias=False, max_iter=300,
                             precision="float32")
    assert not forced.details["converged"]
    X, Y, rng = data(2, 2000, 10, 1)
    centres = choose_centres(2000, 300, rng)
    well = fit_nystrom_pcg(X, Y, 0.1, alpha, centres=centres, bias=False)
    assert well.details["factors"] == "float32" and well.details["converged"]


def test_pivot_test_reads_the_float32_factor():
    X, _, centres, gamma = ill_conditioned()
    cond = Conditioning(X[centres], gamma, "gaussian")
    P = NystromPreconditioner(cond, n=2000, alpha=2e-3, precision="float32")
    assert not P._single_suffices()
    X, _, rng = data(2, 2000, 10, 1)
    cond = Conditioning(X[choose_centres(2000, 300, rng)], 0.1, "gaussian")
    P = NystromPreconditioner(cond, n=2000, alpha=2e-3, precision="float32")
    assert P._single_suffices()


def test_checkpoint_fingerprint_names_the_factors():
    """A solve's saved state is in the preconditioner's coordinates: a float32 solve's
    fingerprint differs from a float64 one's (and float64's is unchanged)."""
    X, Y, rng = data(5, 200, 4, 1)
    centres = choose_centres(200, 30, rng)
    rows, _, _ = streamed_rows(X, Y, 0.3, centres, None, "gaussian", 1)
    KtY, sums, squares = rows.cross_targets()
    prints = {}
    for precision in ("float32", "float64"):
        P = NystromPreconditioner(rows.cond, 200, 0.02, precision=precision)
        prints[precision] = _pcg._fingerprint_solve(P, KtY, sums, squares)
    assert "factors" in prints["float32"] and "factors" not in prints["float64"]


def test_precision_is_checked_at_the_recipe():
    X, Y, _ = data(6, 100, 3, 1)
    model = KernelRidgeRegressor(gamma=0.3, alpha=1.0,
                                 approximation=NystroemPCG(n_centres=20, precision="half"))
    with pytest.raises(ValueError, match='precision must be "auto", "float64" or "float32"'):
        model.fit(X, Y[:, 0])
    assert NystroemPCG().precision == "auto"


def test_float32_solve_on_dask_rows_equals_memory():
    da = pytest.importorskip("dask.array")
    X, Y, rng = data(7, 600, 6, 1)
    centres = choose_centres(600, 50, rng)
    kw = dict(centres=centres, bias=True, precision="float32", tol=1e-9)
    memory = fit_nystrom_pcg(X, Y, 0.1, 0.01, **kw)
    dask = fit_nystrom_pcg(da.from_array(X, chunks=(128, 6)), da.from_array(Y, chunks=(128, 1)),
                           0.1, 0.01, **kw)
    assert dask.details["factors"] == "float32"
    np.testing.assert_allclose(dask.decision_function(X), memory.decision_function(X),
                               rtol=0, atol=1e-8)


def test_memory_guard_counts_float32_factors_at_half():
    """Forced float32 factors are checked at 4m² bytes, "auto" at float64's 8m² (it may
    factor again in float64): a limit between the two passes the one and refuses the
    other, naming the largest m of each."""
    import kernelselect
    from kernelselect.solvers._pcg import check_solver_memory, largest_centres, nystrom_pcg_bytes

    n, d, t, m = 100_000, 10, 1, 15_000
    single = nystrom_pcg_bytes(n, m, d, t, 2, "float32")
    assert nystrom_pcg_bytes(n, m, d, t, 2) - single == 4.0 * m * m
    assert nystrom_pcg_bytes(n, m, d, t, 2, "float64") == nystrom_pcg_bytes(n, m, d, t, 2)
    with kernelselect.config_context(max_bytes="1.5G"):
        check_solver_memory(n, m, d, t, 2, "float32")
        fits = largest_centres(n, d, t, 2)
        assert fits < m < largest_centres(n, d, t, 2, precision="float32")
        with pytest.raises(ValueError, match=rf"Use at most {fits} centres"):
            check_solver_memory(n, m, d, t, 2, "auto")


def test_float32_factors_give_the_same_bits_on_any_thread_count(on_one_and_two_threads):
    X, Y, rng = data(11, 3000, 8, 2)
    centres = choose_centres(3000, 700, rng)
    fits = on_one_and_two_threads(
        lambda threads: fit_nystrom_pcg(X, Y, 0.1, 0.5, centres=centres, bias=True, tol=1e-8,
                                        workers=threads, precision="float32"))
    assert fits[0].details["factors"] == "float32"
    assert np.array_equal(fits[0].coef, fits[1].coef)
    assert np.array_equal(fits[0].intercept, fits[1].intercept)
    assert fits[0].details["iterations"] == fits[1].details["iterations"]
