"""The machines' approximation="auto" and the Nyström machine by conjugate gradients
through the public doors (fit_krr, fit_lssvm, the estimators, KernelSelectionCV)."""

import warnings

import numpy as np
import pytest

import kernelselect
from kernelselect import (KernelRidgeRegressor, KernelSelectionCV, LSSVMClassifier,
                          NystroemPCG, fit_krr, fit_lssvm)
from kernelselect.models import _fit_policy
from kernelselect import _policy as _rules
from kernelselect.models._fit_policy import auto_centres, describe_fit, machine_approximation
from kernelselect.operators.dense import Exact

from reference import nystrom_ridge


def data(seed=0, n=300, d=3, t=1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = np.sin(X @ rng.standard_normal((d, t))) + 0.1 * rng.standard_normal((n, t))
    return X, Y


@pytest.fixture
def small_exact_limit(monkeypatch):
    """"auto" switches to the Nyström machine beyond 100 rows, with at least 40 centres."""
    monkeypatch.setattr(_rules, "EXACT_FIT_MAX_N", 100)
    monkeypatch.setattr(_rules, "MIN_CENTRES", 40)


def test_auto_resolution():
    assert isinstance(machine_approximation("auto", 5000, 3), Exact)
    big = machine_approximation("auto", 10**5, 10)
    assert isinstance(big, NystroemPCG) and big.n_centres == auto_centres(10**5)
    for name in ("nystrom-pcg", "Nystrom_PCG", "pcg", "falkon"):
        assert isinstance(machine_approximation(name, 50, 2), NystroemPCG)
    assert machine_approximation("nystrom", 50, 2).name == "nystrom"
    with pytest.raises(ValueError, match="not a known approximation"):
        machine_approximation("bogus", 50, 2)


def test_auto_centres_rule():
    n = 10**5
    base = auto_centres(n)
    assert base == int(np.ceil(np.sqrt(n) * np.log(n)))
    assert auto_centres(n, d_eff=100.0) == base               # √n·ln n dominates
    # d_eff·max(3, ln d_eff) dominates
    assert auto_centres(n, d_eff=1500.0) == int(np.ceil(1500 * np.log(1500)))
    assert auto_centres(n, d_eff=150.0) == base
    assert auto_centres(n, d_eff=4000.0) == _fit_policy.MAX_CENTRES
    assert auto_centres(n, d_eff=1e6) == _fit_policy.MAX_CENTRES
    assert auto_centres(n, d_eff=float("nan")) == base
    # the memory limit caps m: the m × m factors alone of 12000 centres are 1.15 GB
    with kernelselect.config_context(max_bytes=200 * 2**20):
        capped = auto_centres(n, d_eff=4000.0, d=10)
    assert 1 <= capped < 12000
    from kernelselect.solvers._pcg import nystrom_pcg_bytes
    assert nystrom_pcg_bytes(n, capped, 10, 1, 1) <= 200 * 2**20


def test_automatic_centres_in_memory_keep_to_their_budget(monkeypatch):
    """Without a limit set, the automatic in-memory solve holds at most 1.5 GiB (the
    largest m that does, near 1.4·10⁴ at 10 features); a limit that was set is the
    budget, so that 16 GiB gives the rule's 2·10⁴; centres given are held to the limit
    only."""
    from kernelselect.solvers._pcg import nystrom_pcg_bytes
    from kernelselect.utils import _resources

    monkeypatch.delenv("KERNELSELECT_MAX_BYTES", raising=False)
    n, budget = 2 * 10**5, 1.5 * 2**30
    assert _resources.memory_fit_limit() == min(_resources.max_bytes(), budget)
    m = auto_centres(n, d_eff=4000.0, d=10)
    if _resources.max_bytes() >= budget:
        # the passes' buffers depend on the threads (a few rows of m per thread)
        assert nystrom_pcg_bytes(n, m, 10, 1, 1) <= budget < nystrom_pcg_bytes(n, m + 50, 10,
                                                                                1, 1)
        assert 13_000 < m < 15_000
    assert auto_centres(n, d_eff=4000.0) == _fit_policy.MAX_CENTRES   # d unknown: the rule
    with kernelselect.config_context(max_bytes="16G"):
        assert _resources.memory_fit_limit() == 16 * 2**30
        assert auto_centres(n, d_eff=4000.0, d=10) == _fit_policy.MAX_CENTRES
    monkeypatch.setattr(_resources, "MEMORY_FIT_BYTES", nystrom_pcg_bytes(n, 600, 10, 1, 1))
    assert 550 <= auto_centres(n, d_eff=4000.0, d=10) <= 600


def test_default_is_exact_at_small_n():
    X, Y = data()
    auto = fit_krr(X, Y, 0.5, 0.1)
    exact = fit_krr(X, Y, 0.5, 0.1, approximation="exact")
    assert auto.method == "cholesky"
    np.testing.assert_array_equal(auto.decision_function(X), exact.decision_function(X))
    reg = KernelRidgeRegressor(gamma=0.5, alpha=0.1).fit(X, Y[:, 0])
    assert reg.approximation_ == "exact" and reg.n_centres_ is None and reg.n_iter_ is None


@pytest.mark.filterwarnings("ignore::kernelselect.ConvergenceWarning")  # tol=1e-12: beyond reach
@pytest.mark.parametrize("bias", [False, True])
def test_pcg_machine_matches_least_squares(bias):
    """Multi-target: the estimator's fit equals the least-squares Nyström reference."""
    X, Y = data(1, n=250, d=3, t=3)
    recipe = NystroemPCG(n_centres=60, tol=1e-12, max_iter=500)
    reg = KernelRidgeRegressor(gamma=0.4, alpha=0.05, approximation=recipe, random_state=2,
                               fit_intercept=bias).fit(X, Y)
    m = reg.model_
    assert reg.approximation_ == "nystrom-pcg" and reg.n_centres_ == 60
    assert reg.n_iter_ >= 1 and reg.residual_ <= 1e-12
    assert reg.residual_ == max(m.details["residual"][0])
    ref = nystrom_ridge(X, Y, X[m.support_indices], 0.4, 0.05, bias,
                        jitter=m.details["jitter"][0])
    X_new = np.random.default_rng(5).standard_normal((30, 3))
    np.testing.assert_allclose(reg.predict(X_new), ref(X_new), atol=1e-8)
    np.testing.assert_allclose(reg.predict(X), ref(X), atol=1e-8)


def test_fit_functions_accept_the_recipe_and_its_name():
    X, Y = data(2)
    recipe = NystroemPCG(n_centres=50, tol=1e-12, max_iter=300)
    a = fit_lssvm(X, Y, 0.5, [0.1, 1.0], approximation=recipe, random_state=0)
    b = fit_lssvm(X, Y, 0.5, [0.1, 1.0], approximation="nystrom-pcg", random_state=0)
    assert a.coef.shape == (50, 1, 2) and a.method == "nystrom-pcg"
    assert b.details["n_centres"] == min(300, _fit_policy.MIN_CENTRES)
    assert np.all(a.details["converged"])
    ref = nystrom_ridge(X, Y, X[a.support_indices], 0.5, 1.0, True,
                        jitter=a.details["jitter"][1])
    np.testing.assert_allclose(a.decision_function(X)[:, :, 1], ref(X), atol=1e-8)


@pytest.mark.filterwarnings("ignore::kernelselect.ConvergenceWarning")  # tol=1e-12: beyond reach
def test_one_vs_rest_classifier_on_the_pcg_machine():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 2))
    y = np.array(["a", "b", "c"])[np.digitize(X[:, 0], [-0.5, 0.5])]
    clf = LSSVMClassifier(gamma=0.5, alpha=0.1, random_state=0,
                          approximation=NystroemPCG(n_centres=80, tol=1e-12,
                                                    max_iter=400)).fit(X, y)
    assert clf.dual_coef_.shape == (80, 3)
    # one solve for the three columns equals three single-column solves
    for k, c in enumerate(clf.classes_):
        one = fit_lssvm(X, np.where(y == c, 1.0, -1.0), 0.5, 0.1, random_state=0,
                        approximation=NystroemPCG(n_centres=80, tol=1e-12, max_iter=400))
        np.testing.assert_allclose(clf.decision_function(X)[:, k],
                                   one.decision_function(X)[:, 0, 0], atol=1e-8)
    assert clf.score(X, y) > 0.9


def test_ard_on_the_pcg_machine_equals_the_isotropic_one():
    X, Y = data(4)
    recipe = NystroemPCG(n_centres=50, tol=1e-12, max_iter=300)
    iso = fit_krr(X, Y, 0.3, 0.1, approximation=recipe, random_state=1)
    ard = fit_krr(X, Y, [0.3, 0.3, 0.3], 0.1, kernel="ard", approximation=recipe,
                  random_state=1)
    X_new = np.random.default_rng(6).standard_normal((20, 3))
    np.testing.assert_allclose(ard.decision_function(X_new), iso.decision_function(X_new),
                               atol=1e-9)
    np.testing.assert_array_equal(ard.support, X[ard.support_indices])


def test_auto_beyond_the_exact_limit(small_exact_limit):
    X, Y = data(5, n=400)
    reg = KernelRidgeRegressor(gamma=0.5, alpha=0.1, random_state=0).fit(X, Y[:, 0])
    assert reg.approximation_ == "nystrom-pcg"
    # the rule at the effective dimension the machine measured at its own (γ, α)
    d_eff = reg.approximation_gap_["effective_dimension"]
    assert reg.n_centres_ == auto_centres(400, d_eff, 3)
    assert reg.n_centres_ >= max(40, int(np.ceil(np.sqrt(400) * np.log(400))))
    assert reg.residual_ <= 1e-6 and reg.model_.details["converged"] == [True]
    assert describe_fit(reg.model_.details)["n_iter"] == reg.n_iter_


def test_selection_refit_beyond_the_exact_limit(small_exact_limit):
    X, Y = data(6, n=400)
    sel = KernelSelectionCV(random_state=0).fit(X, Y[:, 0])
    machine = sel.best_estimator_[-1]
    assert isinstance(machine.approximation, NystroemPCG)
    assert machine.approximation_ == "nystrom-pcg"
    refit = sel.selection_.details["refit"]
    assert refit["approximation"] == "nystrom-pcg"
    assert refit["n_centres"] == machine.n_centres_ and refit["n_iter"] == machine.n_iter_
    assert refit["criterion"] == sel.selection_.criteria[0]
    assert np.isfinite(refit["selected_value"]) and refit["gcv"].shape == (1,)
    assert 0 < refit["effective_dimension"] <= machine.n_centres_ + 1
    d_eff = sel.selection_.details["refit_effective_dimension"]     # measured or a pilot
    assert d_eff is not None and machine.n_centres_ == auto_centres(400, d_eff, 3)
    assert sel.score(X, Y[:, 0]) > 0.8


def test_selection_refits_exactly_at_small_n():
    X, Y = data(7, n=200)
    sel = KernelSelectionCV(random_state=0).fit(X, Y[:, 0])
    assert sel.best_estimator_[-1].approximation == "auto"
    assert sel.selection_.details["refit"]["approximation"] == "exact"


def test_refit_memory_refused_before_the_selection():
    X, Y = data(8, n=300)
    est = KernelRidgeRegressor(approximation=NystroemPCG(n_centres=300))
    with kernelselect.config_context(max_bytes=2**19):
        with pytest.raises(ValueError, match="selection was not started.*centres"):
            KernelSelectionCV(est).fit(X, Y[:, 0])


def test_pilot_effective_dimension_against_the_dense_spectrum():
    from kernelselect.models._fit_policy import pilot_effective_dimension

    from reference import kernel_matrix

    X, _ = data(9, n=60)                      # m₀ = min(n, 2⌈√n·ln n⌉) = n: exact
    for alpha in (1e-3, 0.1, 10.0):
        mu = np.linalg.eigvalsh(kernel_matrix(X, X, 0.7, "gaussian"))
        expected = np.sum(np.clip(mu, 0, None) / (np.clip(mu, 0, None) + alpha))
        got = pilot_effective_dimension(X, 0.7, alpha, "gaussian", random_state=0)
        assert got == pytest.approx(expected, rel=1e-10)
    ard = pilot_effective_dimension(X, [0.7, 0.7, 0.7], 0.1, "ard", random_state=0)
    assert ard == pytest.approx(pilot_effective_dimension(X, 0.7, 0.1, "gaussian", 0),
                                rel=1e-10)
    big, _ = data(10, n=3000)                 # m₀ = 2⌈√n·ln n⌉ < n rows, scaled by n/m₀
    estimate = pilot_effective_dimension(big, 0.7, 1.0, "gaussian", random_state=0)
    assert 0 < estimate < 2 * np.ceil(np.sqrt(3000) * np.log(3000))


def test_selection_refit_alpha_by_the_final_models_leave_one_out(small_exact_limit,
                                                                  monkeypatch):
    """Beyond the exact limit the refit solves the Nyström machine for the selection's
    candidate α and both forms of the constant term (ȳ with the rest left to the kernel,
    or an unpenalised bias) and keeps the pair whose leave-one-out error on the final
    model is smallest; the errors reported are those of the models, checked by refitting
    without each row (ȳ or the bias refitted too)."""
    from reference import nystrom_ridge_loo

    # the default machine on the isotropic kernel, which the reference evaluates
    monkeypatch.setattr(_rules, "ARD_AUTO_MAX_N", 0)
    X, Y = data(6, n=150)
    sel = KernelSelectionCV(random_state=0).fit(X, Y[:, 0])
    scaler, machine = sel.best_estimator_
    refit = sel.selection_.details["refit"]
    loo = refit["loo"]
    assert refit["alpha_rule"] == "leave-one-out" and refit["n_iter"] is None
    assert refit["intercept_rule"] == "leave-one-out"
    assert refit["intercept_form"] == machine.intercept_form_ in ("mean", "bias")
    np.testing.assert_array_equal(
        loo["alphas"], np.unique(np.r_[sel.selection_.alphas, sel.best_params_["alpha"]]))
    forms = refit["loo_forms"]
    best = {f: v[:, 0].min() for f, v in forms.items()}
    assert refit["intercept_loo"] == best
    assert best[machine.intercept_form_] == min(best.values())
    np.testing.assert_array_equal(loo["mse"], forms[machine.intercept_form_])
    k = int(np.argmin(loo["mse"][:, 0]))
    assert refit["alpha"] == machine.alpha_ == loo["alphas"][k]
    assert machine.alpha == sel.best_params_["alpha"]          # the selection's choice kept
    np.testing.assert_array_equal(refit["loo_mse"], loo["mse"][k])
    Z = scaler.transform(X)
    jitter = machine.model_.details["jitter"]
    for form, bias in (("mean", "mean"), ("bias", True)):
        dense = nystrom_ridge_loo(Z, Y[:, 0], Z[machine.support_], machine.gamma_,
                                  machine.alpha_, bias=bias, jitter=jitter)
        np.testing.assert_allclose(forms[form][k], dense, rtol=1e-6)
    assert sel.score(X, Y[:, 0]) > 0.8


def test_in_memory_budget_caps_the_machine_and_says_so(monkeypatch):
    """A machine sized automatically in memory keeps to the budget (here that of 300
    centres) and warns naming it; centres given are held to the limit only."""
    from kernelselect.solvers._pcg import nystrom_pcg_bytes
    from kernelselect.utils import _resources

    monkeypatch.delenv("KERNELSELECT_MAX_BYTES", raising=False)
    n = 6000
    X, Y = data(n=n)
    monkeypatch.setattr(_resources, "MEMORY_FIT_BYTES", nystrom_pcg_bytes(n, 300, 3, 1, 1))
    with pytest.warns(kernelselect.ApproximationWarning,
                      match="fewer than the.*budget of an automatically sized in-memory"):
        reg = KernelRidgeRegressor(gamma=0.4, alpha=0.5, random_state=0).fit(X, Y[:, 0])
    assert reg.approximation_ == "nystrom-pcg" and 250 <= reg.n_centres_ <= 300
    assert reg.approximation_gap_["centres_rule"] == "memory cap"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kernelselect.ConvergenceWarning)
        given = KernelRidgeRegressor(gamma=0.4, alpha=0.5, random_state=0,
                                     approximation=NystroemPCG(n_centres=400, max_iter=2)
                                     ).fit(X, Y[:, 0])
    assert given.n_centres_ == 400
