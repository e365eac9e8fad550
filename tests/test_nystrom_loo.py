"""The Nyström machine with its ridge chosen by exact leave-one-out: the errors against
refitting without each row, the model against a least-squares solve, the route's
budget and every door's bits."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

from kernelselect import KernelRidgeRegressor, NystroemPCG, fit_krr
from kernelselect import _policy as _rules
from kernelselect.solvers import _loo as _nystrom_loo
from kernelselect.solvers._loo import (fit_nystrom_loo, intercept_forms, loo_bytes,
                                              loo_flops)
from kernelselect.solvers._pcg import choose_centres, fit_nystrom_pcg

from reference import mp_nystrom_fit, mp_nystrom_loo, nystrom_ridge, nystrom_ridge_loo


def data(seed, n, d, t):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = np.sin(X @ rng.standard_normal((d, t))) + 0.1 * rng.standard_normal((n, t))
    return X, Y, rng


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(6, 30), st.integers(1, 3), st.integers(2, 12),
       st.integers(1, 2), st.booleans(), st.floats(0.1, 2.0))
# 8 centres among 12 and 15 points in 1-D: cond(K_mm + δI) = 8.6e9 and 2e11; at
# α/n = 1e-6 the float64 refits were 9.1e-7 and 1.0e-6 off the 50-digit ones, the closed
# form 2.8e-7 and 1.5e-6, which the rounding of the kernel values alone moves 5e-8 and
# 1.5e-6 (relative)
@example(seed=0, n=12, d=1, m=8, t=2, bias=False, gamma=1.0)
@example(seed=1, n=15, d=1, m=8, t=1, bias=False, gamma=0.75)
def test_leave_one_out_errors_equal_refits(seed, n, d, m, t, bias, gamma):
    """Every candidate's error equals the mean squared residual of the model refitted
    without each row (centres and jitter fixed), and the machine is the candidate with
    the smallest mean over the outputs. Where the float64 refits (whose feature map
    divides by the square roots of K_mm's eigenvalues) differ by more than 1e-6, the
    arbiter is the same refit in 50 digits, within 1e-6 plus ten times the spread that
    float64 rounding of the kernel values causes on the draw."""
    X, Y, rng = data(seed, n, d, t)
    centres = choose_centres(n, min(m, n), rng)
    alphas = n * np.array([1e-6, 1e-4, 1e-2, 1.0])
    model = fit_nystrom_loo(X, Y, gamma, alphas, centres=centres, bias=bias)
    loo = model.details["loo"]
    np.testing.assert_array_equal(loo["alphas"], alphas)
    for k, alpha in enumerate(alphas):
        ref = nystrom_ridge_loo(X, Y, X[centres], gamma, alpha, bias,
                                jitter=model.details["jitter"])
        spread = 0.0
        if not np.allclose(loo["mse"][k], ref, rtol=1e-6, atol=1e-10):
            ref, spread = mp_nystrom_loo(X, Y, X[centres], gamma, alpha, bias,
                                         jitter=model.details["jitter"], spread_draws=3,
                                         seed=seed)
        np.testing.assert_allclose(loo["mse"][k], ref, rtol=1e-6, atol=1e-10 + 10 * spread)
    best = int(np.argmin(loo["mse"].mean(axis=1)))
    assert model.alphas[0] == alphas[best] == model.details["alpha"]
    np.testing.assert_array_equal(model.details["loo_mse"], loo["mse"][best])


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(12, 30), st.integers(1, 3), st.integers(2, 6),
       st.integers(1, 2), st.floats(0.1, 2.0), st.floats(-5.0, 5.0))
# a random draw where the float64 refits of the reference were 2e-5 off (the 50-digit
# refits agree with the library to 1e-6)
@example(seed=0, n=12, d=1, m=5, t=2, gamma=0.125, offset=0.0)
def test_intercept_forms_equal_refits(seed, n, d, m, t, gamma, offset):
    """With both forms of the constant term, each form's error at every candidate (α/n
    from 1e-9 to 1) equals the refit without each row: for "mean" the ridge on the
    targets centred by the mean of the other rows, that mean added back; for "bias" the
    unpenalised bias refitted too (the same refits in 50 digits decide where the float64
    ones lose digits on a nearly singular K(Z, Z)). The machine is the (form, α) pair
    with the smallest mean error, and fits as that form's model: its fitted values
    equal a 50-digit solve to 1e-8 of max|y| (1e-5 at α/n = 1e-9) plus ten times the
    spread that float64 rounding of the kernel values causes on the draw (nearly
    coincident centres under a wide kernel make the model itself that uncertain)."""
    X, Y, rng = data(seed, n, d, t)
    Y = Y + offset
    Yc = Y - Y.mean(axis=0)                      # the "mean" form's targets
    centres = choose_centres(n, m, rng)
    alphas = n * np.array([1e-9, 1e-6, 1e-3, 1.0])
    model = fit_nystrom_loo(X, Yc, gamma, alphas, centres=centres, forms=("mean", "bias"))
    jitter = model.details["jitter"]
    errors = model.details["loo_forms"]
    for form, bias in (("mean", "mean"), ("bias", True)):
        for k, alpha in enumerate(alphas):
            ref = nystrom_ridge_loo(X, Y, X[centres], gamma, alpha, bias, jitter=jitter)
            spread = 0.0
            if not np.allclose(errors[form][k], ref, rtol=1e-5, atol=1e-9):
                # the float64 refits lose digits on a nearly singular K(Z, Z): 50 digits
                ref, spread = mp_nystrom_loo(X, Y, X[centres], gamma, alpha, bias,
                                             jitter=jitter, spread_draws=3, seed=seed)
            np.testing.assert_allclose(errors[form][k], ref, rtol=1e-5,
                                       atol=1e-9 + 10 * spread)
    scores = np.array([errors[f].mean(axis=1) for f in ("mean", "bias")])
    j, k = np.unravel_index(int(np.argmin(scores)), scores.shape)
    form = ("mean", "bias")[j]
    assert model.details["intercept_form"] == form and model.alphas[0] == alphas[k]
    np.testing.assert_array_equal(model.details["loo_mse"], errors[form][k])
    fitted, spread = mp_nystrom_fit(X, Yc, X[centres], gamma, alphas[k], form == "bias",
                                    jitter=jitter, spread_draws=3, seed=seed)
    scale = max(1.0, np.abs(Y).max())
    np.testing.assert_allclose(model.decision_function(X)[:, :, 0], fitted, rtol=0,
                               atol=(1e-8 if k else 1e-5) * scale + 10 * spread)


def test_intercept_forms():
    assert intercept_forms(False, True, True) == ("mean", "bias")
    assert intercept_forms(False, False, True) == ("none", "bias")
    assert intercept_forms(True, False, True) == ("bias",)
    assert intercept_forms(False, True, False) == ("mean",)
    assert loo_flops(10**4, 1000, 1, 13, ("mean", "bias")) > loo_flops(10**4, 1000, 1, 13)
    assert loo_bytes(1000, 3, 1, 13, ("mean", "bias")) > loo_bytes(1000, 3, 1, 13)


def test_recipe_chooses_the_intercept_form(monkeypatch):
    """``loo_intercept=True`` scores the regressor's own form ("mean") and the bias; the
    model returned is the chosen form's, as fitted with that ``fit_intercept`` alone;
    beyond the budget of both forms, the own form with its α by leave-one-out."""
    rng = np.random.default_rng(12)
    X = rng.standard_normal((300, 2))
    y = np.where(X[:, 0] > 1.0, 6.0, 0.0) + 0.05 * rng.standard_normal(300)
    choose = NystroemPCG(n_centres=60, loo_alphas=[1e-4, 1e-2, 1.0], loo_intercept=True)
    reg = KernelRidgeRegressor(gamma=2.0, alpha=1.0, approximation=choose,
                               fit_intercept="mean", random_state=0).fit(X, y)
    details = reg.model_.details
    assert details["intercept_rule"] == "leave-one-out"
    assert reg.intercept_form_ == details["intercept_form"] in ("mean", "bias")
    best = {f: v.mean(axis=1).min() for f, v in details["loo_forms"].items()}
    assert best[reg.intercept_form_] == min(best.values())
    alone = NystroemPCG(n_centres=60, loo_alphas=[1e-4, 1e-2, 1.0])
    same = KernelRidgeRegressor(gamma=2.0, alpha=1.0, approximation=alone, random_state=0,
                                fit_intercept=True if reg.intercept_form_ == "bias" else "mean"
                                ).fit(X, y)
    assert same.alpha_ == reg.alpha_
    np.testing.assert_allclose(same.predict(X), reg.predict(X), rtol=0, atol=1e-9)
    own = KernelRidgeRegressor(gamma=2.0, alpha=1.0, approximation=alone, random_state=0,
                               fit_intercept="mean").fit(X, y)
    np.testing.assert_array_equal(own.model_.details["loo"]["mse"],
                                  details["loo_forms"]["mean"])
    flops = loo_flops(300, 60, 1, 3, ("mean",))
    monkeypatch.setattr(_rules, "LOO_FLOPS", flops)
    capped = KernelRidgeRegressor(gamma=2.0, alpha=1.0, approximation=choose,
                                  fit_intercept="mean", random_state=0).fit(X, y)
    assert capped.intercept_form_ == "mean" and capped.alpha_ == own.alpha_
    assert capped.model_.details["intercept_rule"] == "given (both forms beyond budget)"
    with pytest.raises(TypeError, match="loo_intercept"):
        KernelRidgeRegressor(approximation=NystroemPCG(loo_alphas=[1.0], loo_intercept="yes"),
                             gamma=1.0).fit(X, y)


LAMBDAS = [1e-2, 1e-4, 1e-6, 1e-9]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(8, 60), st.integers(2, 4), st.integers(2, 20),
       st.integers(1, 3), st.booleans(), st.sampled_from(LAMBDAS), st.floats(0.1, 2.0))
def test_chosen_model_matches_stable_least_squares(seed, n, d, m, t, bias, lam, gamma):
    """With one candidate the route fits the solver's model: fitted values equal the
    50-digit solve of the same model to 1e-8 of max|y| down to α/n = 1e-6, and to
    1e-5 at 1e-9 (the eigendecomposition's weights are exact for a Gram matrix
    perturbed by about 2⁻⁵²·n, relative 2⁻⁵²/λ to the ridge), plus ten times the
    spread float64 rounding of the kernel values causes on the draw; the float64
    least-squares solve agrees as closely."""
    X, Y, rng = data(seed, n, d, t)
    centres = choose_centres(n, min(m, n), rng)
    alpha = lam * n
    model = fit_nystrom_loo(X, Y, gamma, np.array([alpha]), centres=centres, bias=bias)
    jitter = model.details["jitter"]
    fitted, spread = mp_nystrom_fit(X, Y, X[centres], gamma, alpha, bias, jitter=jitter,
                                    spread_draws=3, seed=seed)
    scale = max(1.0, np.abs(Y).max())
    atol = (1e-8 if lam >= 1e-6 else 1e-5) * scale + 10 * spread
    np.testing.assert_allclose(model.decision_function(X)[:, :, 0], fitted, rtol=0, atol=atol)
    least_squares = nystrom_ridge(X, Y, X[centres], gamma, alpha, bias, jitter=jitter)
    np.testing.assert_allclose(least_squares(X), fitted, rtol=0, atol=atol)
    rss = np.sum((Y - fitted) ** 2, axis=0)
    rss_atol = 1e-10 * scale**2 + 20 * np.sqrt(n * rss.max()) * spread
    np.testing.assert_allclose(model.details["rss"], rss, rtol=1e-6, atol=rss_atol)
    if not bias:
        assert np.all(model.intercept == 0)


@pytest.mark.filterwarnings("ignore::kernelselect.utils._warnings.ConvergenceWarning")
def test_one_candidate_is_the_conjugate_gradient_model():
    X, Y, rng = data(3, 500, 3, 2)
    centres = choose_centres(500, 80, rng)
    for bias in (False, True):
        direct = fit_nystrom_loo(X, Y, 0.5, np.array([0.05]), centres=centres, bias=bias)
        pcg = fit_nystrom_pcg(X, Y, 0.5, 0.05, centres=centres, bias=bias, tol=1e-13,
                              max_iter=1000)
        assert direct.details["jitter"] == pcg.details["jitter"]
        X_new = rng.standard_normal((50, 3))
        np.testing.assert_allclose(direct.decision_function(X_new),
                                   pcg.decision_function(X_new), rtol=0, atol=1e-9)


def test_same_bits_on_any_thread_count(on_one_and_two_threads):
    X, Y, rng = data(11, 3000, 5, 2)
    centres = choose_centres(3000, 300, rng)
    fits = on_one_and_two_threads(
        lambda threads: fit_nystrom_loo(X, Y, 0.2, np.array([0.1, 1.0, 10.0]),
                                        centres=centres, bias=True, workers=threads))
    np.testing.assert_array_equal(fits[0].coef, fits[1].coef)
    np.testing.assert_array_equal(fits[0].details["loo"]["mse"], fits[1].details["loo"]["mse"])


def test_dask_gives_the_in_memory_bits():
    da = pytest.importorskip("dask.array")
    import dask

    from kernelselect.solvers._rows import PART_ROWS

    n = 2 * PART_ROWS + 300          # three parts, two chunks of whole parts
    X, Y, rng = data(4, n, 2, 1)
    centres = choose_centres(n, 40, rng)
    alphas = np.array([1e-3, 1.0, 100.0])
    Y = Y - Y.mean(axis=0)
    for forms in (("bias",), ("mean", "bias")):
        eager = fit_nystrom_loo(X, Y, 0.5, alphas, centres=centres, forms=forms)
        with dask.config.set(scheduler="threads"):
            lazy = fit_nystrom_loo(da.from_array(X, chunks=(PART_ROWS, 2)),
                                   da.from_array(Y, chunks=(PART_ROWS, 1)), 0.5, alphas,
                                   centres=centres, forms=forms)
        np.testing.assert_array_equal(lazy.coef, eager.coef)
        np.testing.assert_array_equal(lazy.intercept, eager.intercept)
        np.testing.assert_array_equal(lazy.details["loo"]["mse"], eager.details["loo"]["mse"])
        assert lazy.details["intercept_form"] == eager.details["intercept_form"]


def test_recipe_routes_by_budget(monkeypatch):
    """``loo_alphas`` takes the leave-one-out route within the budget (the fitting α
    joins the candidates) and the conjugate-gradient route at the fitting α beyond."""
    X, Y, _ = data(5, 400, 3, 1)
    recipe = NystroemPCG(n_centres=60, loo_alphas=[1e-3, 1e-1, 10.0])
    reg = KernelRidgeRegressor(gamma=0.5, alpha=1.0, approximation=recipe,
                               random_state=0).fit(X, Y[:, 0])
    loo = reg.model_.details["loo"]
    np.testing.assert_array_equal(loo["alphas"], [1e-3, 1e-1, 1.0, 10.0])
    assert reg.alpha_ == loo["alphas"][np.argmin(loo["mse"][:, 0])]
    assert reg.model_.details["alpha_rule"] == "leave-one-out" and reg.n_iter_ is None
    monkeypatch.setattr(_rules, "LOO_FLOPS", 1.0)
    over = KernelRidgeRegressor(gamma=0.5, alpha=1.0, approximation=recipe,
                                random_state=0).fit(X, Y[:, 0])
    assert over.alpha_ == 1.0 and over.n_iter_ > 0
    assert over.model_.details["alpha_rule"].startswith("given")
    with pytest.raises(ValueError, match="loo_alphas"):
        fit_krr(X, Y, 0.5, 1.0, approximation=NystroemPCG(loo_alphas=[-1.0]))


def test_costs_grow_with_the_sizes():
    assert loo_flops(10**4, 1000, 1, 13) > 4e10
    assert loo_flops(2 * 10**4, 1000, 1, 13) > loo_flops(10**4, 1000, 1, 13)
    assert loo_bytes(2000, 10, 1, 13) > 4 * 8 * 2000**2
