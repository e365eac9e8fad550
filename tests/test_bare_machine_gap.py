"""A machine fitted without a selection beyond the exact limit (``approximation="auto"``)
takes its centres from the effective dimension it measures at its own (γ, α), says when
the memory limit holds it below that, and reports how far it may be from the exact fit;
an exact machine refused for its size names the machines' alternatives."""

import warnings

import numpy as np
import pytest

import kernelselect
from kernelselect import Exact, KernelRidgeRegressor, KernelSelectionCV, LSSVMClassifier, fit_krr
from kernelselect.models import _fit_policy
from kernelselect import _policy as _rules
from kernelselect.solvers import _nystroem_pcg as _nystrom_machine
from kernelselect.models._fit_policy import measure_effective_dimension
from kernelselect import ApproximationWarning

from reference import kernel_matrix


@pytest.fixture
def small_exact_limit(monkeypatch):
    """"auto" switches to the Nyström machine beyond 100 rows, with at least 40 centres."""
    monkeypatch.setattr(_rules, "EXACT_FIT_MAX_N", 100)
    monkeypatch.setattr(_rules, "MIN_CENTRES", 40)


def problem(seed, n, d, n_test=100):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + n_test, d))
    y = (np.sin(X @ rng.standard_normal(d)) + 0.5 * np.cos(X[:, 0] * X[:, 1])
         + 0.1 * rng.standard_normal(n + n_test))
    return X[:n], y[:n], X[n:], y[n:]


def dense_deff(X, gamma, alpha):
    mu = np.clip(np.linalg.eigvalsh(kernel_matrix(X, X, gamma, "gaussian")), 0, None)
    return float(np.sum(mu / (mu + alpha)))


@pytest.mark.parametrize("seed, d, gamma, alpha", [(0, 8, 0.2, 0.1), (1, 5, 0.3, 0.05)])
def test_bare_machine_is_as_good_as_the_exact_fit(small_exact_limit, seed, d, gamma, alpha):
    """d_eff ≈ 280–390 of 600 rows: √n·ln n = 157 centres (the rule without d_eff) left
    the test error 66–70 % above the exact fit's; the measured d_eff asks for all rows."""
    X, y, X_test, y_test = problem(seed, 600, d)
    auto = KernelRidgeRegressor(gamma=gamma, alpha=alpha, random_state=0).fit(X, y)
    exact = KernelRidgeRegressor(gamma=gamma, alpha=alpha, approximation="exact").fit(X, y)
    assert auto.approximation_ == "nystrom-pcg"
    d_eff = dense_deff(X, gamma, alpha)
    assert auto.n_centres_ >= min(600, _nystrom_machine.deff_centres(0.9 * d_eff))
    mse = [np.mean((m.predict(X_test) - y_test) ** 2) for m in (auto, exact)]
    assert mse[0] <= 1.05 * mse[1]
    gap = auto.approximation_gap_
    assert gap["centres_rule"] == "rule" and gap["n_centres"] == auto.n_centres_
    assert gap["effective_dimension"] == pytest.approx(d_eff, rel=0.1)
    assert gap["captured"] == pytest.approx(1.0, abs=0.02)
    assert exact.approximation_gap_ is None


def test_centres_follow_the_machines_own_gamma_and_alpha(small_exact_limit):
    """The same rows at a smooth (γ, α) keep the √n·ln n rule; at a rough one the
    centres grow with the measured d_eff (LSSVM and fit_krr alike)."""
    X, y, _, _ = problem(2, 1500, 4)
    base = int(np.ceil(np.sqrt(1500) * np.log(1500)))
    smooth = LSSVMClassifier(gamma=0.05, alpha=10.0, random_state=0).fit(X, np.sign(y))
    assert smooth.n_centres_ == base
    rough = fit_krr(X, y, 0.5, [0.01, 1.0], random_state=0)
    d_eff = dense_deff(X, 0.5, 0.01)                    # the smallest α of the path
    assert rough.details["approximation_gap"]["n_centres"] > base
    assert rough.details["approximation_gap"]["n_centres"] >= min(
        1500, _nystrom_machine.deff_centres(0.9 * d_eff))


@pytest.mark.parametrize("seed, gamma, alpha", [(3, 0.5, 0.01), (4, 2.0, 0.1), (5, 0.1, 1.0)])
def test_measured_effective_dimension_against_the_dense_one(seed, gamma, alpha):
    """Where the first pilot (2⌈√n·ln n⌉ = 568 of 1500 rows) saturates (d_eff near or
    above its rows), the pilot is drawn again with more rows, and the estimate stays
    within 10 % of tr K(K + αI)⁻¹ computed densely (it was 40 % low before)."""
    X, _, _, _ = problem(seed, 1500, 4)
    expected = dense_deff(X, gamma, alpha)
    d_eff, rows = measure_effective_dimension(X, gamma, alpha, "gaussian", random_state=0)
    assert d_eff == pytest.approx(expected, rel=0.1)
    assert rows == 568 or d_eff <= _fit_policy.PILOT_SATURATION * rows or rows == 1500


def test_memory_cap_warns_and_reports(small_exact_limit):
    X, y, _, _ = problem(6, 600, 8)
    # the solve's fixed buffers take 16 MiB; 17 MiB leaves room for about 300 centres
    with kernelselect.config_context(max_bytes=17 * 2**20):
        with pytest.warns(ApproximationWarning, match=r"fewer than the 600 .*set_config.*"
                          r"NystroemPCG\(n_centres=\.\.\.\)"):
            reg = KernelRidgeRegressor(gamma=0.2, alpha=0.1, random_state=0).fit(X, y)
    gap = reg.approximation_gap_
    assert gap["centres_rule"] == "memory cap"
    assert gap["n_centres"] == reg.n_centres_ < gap["n_centres_asked"] == 600
    assert 0 < gap["captured"] < 1


def test_no_warning_when_the_rule_fits(small_exact_limit):
    X, y, _, _ = problem(7, 300, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximationWarning)
        KernelRidgeRegressor(gamma=0.5, alpha=0.1, random_state=0).fit(X, y)


def test_selection_refit_reports_the_gap(small_exact_limit):
    X, y, _, _ = problem(8, 400, 3)
    sel = KernelSelectionCV(random_state=0).fit(X, y)
    refit = sel.selection_.details["refit"]
    gap = refit["approximation_gap"]
    machine = sel.best_estimator_[-1]
    assert gap == machine.approximation_gap_
    assert gap["n_centres"] == refit["n_centres"] and gap["centres_rule"] == "rule"
    assert gap["effective_dimension"] == sel.selection_.details["refit_effective_dimension"]


@pytest.mark.parametrize("fit", [
    lambda X, y: fit_krr(X, y, 1.0, 1.0, approximation=Exact(max_dense=50)),
    lambda X, y: KernelRidgeRegressor(approximation=Exact(max_dense=50)).fit(X, y),
])
def test_exact_machine_refusal_names_the_machines_alternatives(fit):
    X, y, _, _ = problem(9, 60, 2)
    with pytest.raises(ValueError) as info:
        fit(X, y)
    message = str(info.value)
    assert "approximation='auto'" in message and "NystroemPCG" in message
    assert "mcm" not in message and "criteria" not in message


def test_exact_machine_memory_refusal_names_the_machines_alternatives():
    X, y, _, _ = problem(10, 200, 2)
    with kernelselect.config_context(max_bytes=2**18):
        with pytest.raises(ValueError, match="NystroemPCG") as info:
            fit_krr(X, y, 1.0, 1.0, approximation="exact")
    assert "mcm" not in str(info.value)


def test_more_centres_while_the_model_holds_too_little(small_exact_limit, monkeypatch):
    """A model holding less than GROW_CAPTURED of the measured d_eff is refitted with
    twice the centres (here the threshold is raised above any share, so every round
    grows): 2 rounds, 4× the rule's centres, capped by n; then a warning."""
    X, y, _, _ = problem(11, 1500, 3)
    first = KernelRidgeRegressor(gamma=0.05, alpha=10.0, random_state=0).fit(X, y)
    assert first.approximation_gap_["rounds"] == 0
    m0 = first.n_centres_
    monkeypatch.setattr(_rules, "GROW_CAPTURED", 10.0)
    with pytest.warns(ApproximationWarning, match="holds .* % of the effective dimension"):
        grown = KernelRidgeRegressor(gamma=0.05, alpha=10.0, random_state=0).fit(X, y)
    gap = grown.approximation_gap_
    assert gap["rounds"] == 2 and grown.n_centres_ == min(1500, 4 * m0)
    assert gap["n_centres_asked"] == grown.n_centres_ == gap["n_centres"]


def test_grown_recipe_rules():
    from kernelselect import NystroemPCG
    from kernelselect.solvers._nystroem_pcg import rule_centres

    recipe = NystroemPCG(n_centres=700)
    recipe.fit_policy = {"n_centres_asked": 700, "effective_dimension": 50.0,
                         "pilot_rows": 500, "centres_rule": "rule"}
    low = {"captured": 0.8, "model_effective_dimension": 40.0}
    grown = _fit_policy.grown_recipe(recipe, low, 5000, 3)
    assert grown.n_centres == 1400 and grown.fit_policy["rounds"] == 1
    assert recipe.n_centres == 700                          # the recipe itself is kept
    # enough: the rule at the model's tr S asks for no more than 1.1× the centres
    assert _fit_policy.grown_recipe(recipe, {"captured": 0.99,
                                             "model_effective_dimension": 49.5},
                                    5000, 3) is None
    # the model holds more than the pilot saw: the rule at its tr S
    more = _fit_policy.grown_recipe(recipe, {"captured": 6.0,
                                             "model_effective_dimension": 300.0}, 5000, 3)
    assert more.n_centres == rule_centres(5000, 300.0) > 700
    assert _fit_policy.grown_recipe(NystroemPCG(n_centres=700), low, 5000, 3) is None
    selected = NystroemPCG(n_centres=700)                   # d_eff from a selection
    selected.fit_policy = dict(recipe.fit_policy, pilot_rows=None)
    assert _fit_policy.grown_recipe(selected, low, 5000, 3) is None
    assert _fit_policy.grown_recipe(recipe, low, 1000, 3).n_centres == 1000


def test_exact_when_the_rule_asks_for_every_row(small_exact_limit):
    """Within twice the exact limit, a machine whose own d_eff asks for all n rows as
    centres is fitted exactly (the same model, without the Nyström machine's cost)."""
    X, y, _, _ = problem(12, 180, 5)
    auto = KernelRidgeRegressor(gamma=0.5, alpha=0.01).fit(X, y)
    exact = KernelRidgeRegressor(gamma=0.5, alpha=0.01, approximation="exact").fit(X, y)
    assert auto.approximation_ == "exact"
    np.testing.assert_array_equal(auto.predict(X), exact.predict(X))
    smooth = KernelRidgeRegressor(gamma=0.01, alpha=10.0, random_state=0).fit(X, y)
    assert smooth.approximation_ == "nystrom-pcg"           # the rule asks for fewer
