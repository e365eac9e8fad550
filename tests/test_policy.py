"""The automatic rules live in one module, kernelselect._policy: each threshold is set
there once and cites the study that set it, every other module reads it from there,
and a selection records every choice it left to the policy with its reason."""

import ast
import math
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect import _policy as rules
from kernelselect import select_kernel

SRC = pathlib.Path(kernelselect.__file__).resolve().parent
POLICY = SRC / "_policy.py"
STUDIES = pathlib.Path(__file__).resolve().parents[1] / "studies"   # the checkout's, wherever the package is installed


def _constants():
    """The rule thresholds: the upper-case names of the policy's ``__all__``."""
    return [n for n in rules.__all__ if n.isupper() or n.startswith(("GAMMA_", "ALPHA_"))]


# ------------------------------------------------------------------ one source


def _literal_assignments(path):
    """{name: line} of module-level ``NAME = <literal>`` in a file (a number, a string,
    a tuple/frozenset/dict of them or an arithmetic of them)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        literal = all(isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator,
                                     ast.unaryop, ast.Tuple, ast.Load))
                      for n in ast.walk(value))
        if literal:
            for name in names:
                out[name] = node.lineno
    return out


def test_no_rule_threshold_is_set_outside_the_policy():
    # the thresholds that were set in several modules (selection, per-feature search,
    # fit policy, the Nyström machine, the leave-one-out route, the intervals)
    names = set(_constants()) | {"KFOLD_MAX_N", "EXACT_MAX_N", "MAX_LANDMARKS",
                                 "EVIDENCE_MAX_N", "GUARD_MAX_N"}
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path == POLICY:
            continue
        for name, line in _literal_assignments(path).items():
            if name in names:
                found.append(f"{path.relative_to(SRC)}:{line} {name}")
    assert found == [], "rule thresholds set outside kernelselect/_policy.py:\n" + "\n".join(found)


def test_the_finder_sees_a_planted_threshold(tmp_path):
    planted = tmp_path / "m.py"
    planted.write_text("import numpy as np\nEXACT_MAX_N = 400\nKFOLD_MAX_N = 2 * 200\n"
                       "X = np.arange(3)\nY = rules.EXACT_MAX_N\n")
    assert _literal_assignments(planted) == {"EXACT_MAX_N": 2, "KFOLD_MAX_N": 3}


@pytest.mark.parametrize("module, name, rule", [
    ("kernelselect.selection._policy", "EXACT_MAX_N", "EXACT_MAX_N"),
    ("kernelselect.selection._policy", "KFOLD_MAX_N", "KFOLD_MAX_N"),
    ("kernelselect.selection._policy", "START_LANDMARKS", "START_LANDMARKS"),
    ("kernelselect.selection._policy", "GATHER_BELOW", "GATHER_BELOW"),
    ("kernelselect.selection._policy", "ALPHA_SELECTING", "ALPHA_SELECTING"),
    ("kernelselect.selection._policy", "default_criterion", "default_criterion"),
    ("kernelselect.selection._policy", "alpha_path", "alpha_path"),
    ("kernelselect.selection._ard_select", "EXACT_MAX_N", "ARD_EXACT_MAX_N"),
    ("kernelselect.selection._ard_select", "KFOLD_MAX_N", "ARD_KFOLD_MAX_N"),
    ("kernelselect.selection._ard_select", "EVIDENCE_MAX_N", "ARD_EVIDENCE_MAX_N"),
    ("kernelselect.selection._ard_select", "GUARD_MAX_N", "ARD_GUARD_MAX_N"),
    ("kernelselect.selection._ard_select", "MAX_LANDMARKS", "ARD_MAX_LANDMARKS"),
    ("kernelselect.selection._driver", "GRID_EXPONENTS", "GAMMA_EXPONENTS"),
    ("kernelselect.models._fit_policy", "EXACT_FIT_MAX_N", "EXACT_FIT_MAX_N"),
    ("kernelselect.models._fit_policy", "PILOT_SATURATION", "PILOT_SATURATION"),
    ("kernelselect.models._fit_policy", "GROW_CAPTURED", "GROW_CAPTURED"),
    ("kernelselect.models._fit_policy", "MIN_CENTRES", "MIN_CENTRES"),
    ("kernelselect.models._fit_policy", "MAX_CENTRES", "MAX_CENTRES"),
    ("kernelselect.solvers._nystroem_pcg", "MIN_CENTRES", "MIN_CENTRES"),
    ("kernelselect.solvers._nystroem_pcg", "DEFF_FACTOR", "DEFF_FACTOR"),
    ("kernelselect.solvers._nystroem_pcg", "rule_centres", "rule_centres"),
    ("kernelselect.solvers._nystroem_pcg", "deff_centres", "deff_centres"),
    ("kernelselect.solvers._loo", "LOO_FLOPS", "LOO_FLOPS"),
    ("kernelselect.solvers._loo", "intercept_forms", "intercept_forms"),
    ("kernelselect.models._uncertainty", "JACKKNIFE_PLUS_MAX_N", "JACKKNIFE_PLUS_MAX_N"),
])
def test_the_old_names_are_the_policys(module, name, rule):
    import importlib

    assert getattr(importlib.import_module(module), name) is getattr(rules, rule)


def test_the_policy_imports_nothing_of_the_package():
    tree = ast.parse(POLICY.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert not node.level and node.module.split(".")[0] in ("__future__", "math", "numpy")
        elif isinstance(node, ast.Import):
            assert all(a.name.split(".")[0] in ("math", "numpy") for a in node.names)


# ------------------------------------------------------------------ each with its study


def _comment_above(lines, lineno):
    """The ``#:`` comment block documenting the assignment on ``lineno`` (1-based),
    through the assignments grouped under the same comment."""
    i, block = lineno - 2, []
    while i >= 0 and lines[i].strip():
        if lines[i].lstrip().startswith("#:"):
            block.append(lines[i])
        elif not block and "=" in lines[i]:
            pass                                   # a grouped assignment
        else:
            break
        i -= 1
    return " ".join(reversed(block))


def _cited(text):
    """The study files ``studies/X.py`` and ``studies/results/X.md`` a text names."""
    import re

    return re.findall(r"studies/(?:results/)?[\w.]+", text)


def test_every_threshold_cites_its_study_or_says_it_has_none():
    text = POLICY.read_text(encoding="utf-8")
    lines = text.splitlines()
    assigned = _literal_assignments(POLICY)
    tree = ast.parse(text)
    for node in tree.body:                          # derived constants: NAME = OTHER
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            assigned.setdefault(node.targets[0].id, node.lineno)
        if isinstance(node, ast.AnnAssign):
            assigned.setdefault(node.target.id, node.lineno)
    missing = []
    for name in _constants():
        comment = _comment_above(lines, assigned[name])
        if not (_cited(comment) or "no study" in comment or "not a measurement" in comment):
            missing.append(name)
        for cited in _cited(comment):
            assert (STUDIES.parent / cited.rstrip(".")).exists() or \
                (STUDIES.parent / cited.rstrip(".")).with_suffix("").exists(), cited
    assert missing == []


def test_every_rule_function_cites_its_study_or_its_threshold():
    for name in rules.__all__:
        obj = getattr(rules, name)
        if not callable(obj):
            continue
        doc = obj.__doc__ or ""
        # a study, a threshold of this module (documented with its study) or another rule
        assert _cited(doc) or ":data:`" in doc or ":func:`" in doc, name


# ------------------------------------------------------------------ the rules are read from here


def _regression(n, seed=0, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(n)


def test_the_selection_reads_its_limits_from_the_policy(monkeypatch):
    X, y = _regression(120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = select_kernel(X, y, random_state=0)
        assert before.criteria == ["ekfold"] and before.details["approximation"] == "exact"
        monkeypatch.setattr(rules, "KFOLD_MAX_N", 100)
        assert select_kernel(X, y, random_state=0).criteria == ["eloo"]
        monkeypatch.setattr(rules, "EXACT_MAX_N", 100)
        monkeypatch.setattr(rules, "START_LANDMARKS", 20)
        after = select_kernel(X, y, random_state=0)
    assert after.details["auto"]["reason"].startswith("n=120 > 100")
    assert after.details["auto"]["levels"][0]["approximation"] == "nystrom(m=20)"


def test_the_machines_read_their_limits_from_the_policy(monkeypatch):
    from kernelselect.models._fit_policy import machine_approximation
    from kernelselect.solvers._loo import loo_affordable
    from kernelselect.solvers._nystroem_pcg import auto_centres

    assert machine_approximation("auto", 3000, 4).label == "exact"
    monkeypatch.setattr(rules, "EXACT_FIT_MAX_N", 1000)
    recipe = machine_approximation("auto", 3000, 4)
    assert type(recipe).__name__ == "NystroemPCG"
    assert recipe.n_centres == rules.rule_centres(3000) == 500        # MIN_CENTRES
    monkeypatch.setattr(rules, "MIN_CENTRES", 40)
    assert auto_centres(3000) == math.ceil(math.sqrt(3000) * math.log(3000))
    assert loo_affordable(1000, 100, 3, 1, 5)
    monkeypatch.setattr(rules, "LOO_FLOPS", 1.0)
    assert not loo_affordable(1000, 100, 3, 1, 5)


def test_the_regressor_without_intercept_reads_the_kfold_limit_from_the_policy(monkeypatch):
    X, y = _regression(90, seed=2)
    y = y + 5.0
    grid = dict(gammas=[0.3, 1.0], alphas=[1e-2, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reg = kernelselect.KernelSelectionRegressor(
            kernelselect.KernelRidgeRegressor(fit_intercept=False), random_state=0, **grid)
        details = reg.fit(X, y).selection_.details
        assert details["criterion_rule"].startswith("cv:")
        monkeypatch.setattr(rules, "KFOLD_MAX_N", 50)
        details = reg.fit(X, y).selection_.details
    assert details["criterion_rule"].startswith("gcv:")
    assert details["rules"]["criterion"] == details["criterion_rule"]


# ------------------------------------------------------------------ the rules themselves


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 10**7), d_eff=st.one_of(st.none(), st.floats(0.0, 1e6)))
def test_rule_centres_is_the_formula(n, d_eff):
    m = math.sqrt(n) * math.log(max(n, 2))
    if d_eff is not None:
        m = max(m, d_eff * max(3.0, math.log(max(d_eff, 1.0))))
    want = min(n, 20_000, max(500, math.ceil(m)))
    assert rules.rule_centres(n, d_eff) == want
    assert min(n, rules.MIN_CENTRES) <= want <= min(n, rules.MAX_CENTRES)


@pytest.mark.parametrize("n, want", [
    (500, ["nystrom 200", "exact"]),
    (1000, ["nystrom 200", "nystrom 400", "exact"]),
    (1599, ["nystrom 200", "nystrom 400", "exact"]),
    (3200, ["nystrom 200", "nystrom 400", "nystrom 800", "stop"]),
    (10_000, ["nystrom 200", "nystrom 400", "nystrom 800", "stop"]),
])
def test_the_levels_double_until_the_exact_window_or_the_largest(n, want):
    got, m = [], rules.START_LANDMARKS
    while True:
        kind, m_next, last, why = rules.next_level(m, n)
        got.append(kind if kind != "nystrom" else f"nystrom {m_next}")
        if kind != "nystrom":
            break
        m = m_next
    assert got == want
    assert (why is not None) == (kind == "stop") and not last


def test_last_level_half_ends_on_n_over_2(monkeypatch):
    monkeypatch.setattr(rules, "LAST_LEVEL", "half")
    assert rules.next_level(200, 1000) == ("nystrom", 400, False, None)
    assert rules.next_level(400, 1000) == ("nystrom", 500, True, None)
    kind, m, last, why = rules.next_level(800, 1000)
    assert kind == "stop" and "n/2" in why


@pytest.mark.parametrize("n, spectral, exact", [(400, True, True), (401, True, False),
                                                 (10**6, False, True), (3, True, True)])
def test_selection_start(n, spectral, exact):
    got, reason = rules.selection_start(n, spectral)
    assert got is exact
    assert (f"n={n}" in reason) if spectral else reason.startswith("moment criteria")


def test_pilot_rows_and_regrowth():
    m0, top = rules.pilot_rows(6000, 2**40)
    assert top == 4000 and m0 == 2 * math.ceil(math.sqrt(6000) * math.log(6000))
    assert rules.pilot_rows(6000, 24 * 100**2) == (100, 100)           # the memory cap
    assert rules.pilot_regrow(m0, top, m0 / 6) is None                  # trusted
    assert rules.pilot_regrow(m0, top, 432.0) == min(4000, max(2 * m0, math.ceil(432 * 6)))
    assert rules.pilot_regrow(4000, 4000, 3000.0) is None               # at its cap


@pytest.mark.parametrize("task, kernel", [("regression", "ard"), ("binary", "gaussian"),
                                          ("multiclass", "gaussian"), (None, "gaussian")])
def test_kernel_for_task(task, kernel):
    assert rules.kernel_for_task(task)[0] == kernel


def test_intercept_forms_and_no_intercept_criterion():
    assert rules.intercept_forms(False, True, True) == ("mean", "bias")
    assert rules.intercept_forms(True, False, True) == ("bias",)
    assert rules.intercept_forms(False, False, False) == ("none",)
    assert rules.criterion_without_intercept(True)[0] == "cv"
    assert rules.criterion_without_intercept(False)[0] == "gcv"
    assert rules.no_intercept_kfold(400, False, True)
    assert not rules.no_intercept_kfold(401, False, True)
    assert not rules.no_intercept_kfold(100, True, True)
    assert not rules.no_intercept_kfold(100, False, False)


# ------------------------------------------------------------------ _plan records every choice


def test_a_default_selection_records_every_choice_with_its_reason():
    X, y = _regression(150, seed=1)
    res = select_kernel(X, y, random_state=0)
    r = res.details["rules"]
    assert set(r) == {"approximation", "criterion", "task", "gammas", "alphas", "kernel"}
    assert r["kernel"].startswith("a real target: one γ per feature")
    assert res.kernel == "ard" and np.shape(res.best_gamma) == (X.shape[1],)
    assert r["approximation"] == res.details["auto"]["reason"]
    assert r["gammas"] == res.details["gamma_rule"]
    assert r["alphas"] == res.details["alpha_rule"]
    assert r["criterion"].startswith("ekfold:") and "n=150 ≤ 400" in r["criterion"]
    assert r["task"].startswith("regression:")


def test_given_arguments_are_not_recorded_as_choices():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((600, 3))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(600) > 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = select_kernel(X, y, approximation="nystrom", gammas=[0.1, 1.0],
                            task="binary", random_state=0, kernel="gaussian")
    r = res.details["rules"]
    assert set(r) == {"criterion", "alphas"}
    assert r["criterion"].startswith("eloo:")        # no exact matrix: leave-one-out
    fixed = select_kernel(X[:200], y[:200], criterion="kta", approximation="exact",
                          gammas=[0.1, 1.0], alphas=[1.0], task="binary", kernel="gaussian")
    assert fixed.details["rules"] == {}


def test_kernel_auto_records_its_rule():
    X, y = _regression(60, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = select_kernel(X, np.where(y > 0, 1, 0), kernel="auto", random_state=0)
    assert res.details["rules"]["kernel"] == res.details["kernel_rule"]
    assert res.details["rules"]["kernel"].startswith("binary labels")


# ------------------------------------------------------------------ the preconditioner's sample

def _fit_time(x, n, m):
    """The cost model of sample_per_centre: (2x − 1)·m³ flops for the factors and the
    sample, I·(2/x)^p iterations of n·m kernel values at c flops each."""
    p = rules.SAMPLE_ITERATION_POWER
    i_c = rules.SAMPLE_BALANCE / (p * 2.0 ** (p - 1.0))          # I·c
    return (2.0 * x - 1.0) * m ** 3 + i_c * (2.0 / x) ** p * n * m


@settings(max_examples=60, deadline=None)
@given(st.integers(1000, 10**8), st.integers(100, 40_000))
def test_sample_rule_minimises_the_fit_time_within_its_bounds(n, m):
    """q/m from the rule is where the cost model's time is smallest over r/m in
    [1 + min, 1 + max], checked on a fine grid; it stays within its bounds, grows with n
    and falls with m."""
    ratio = rules.sample_per_centre(n, m)
    low, high = rules.SAMPLE_MIN_PER_CENTRE, rules.SAMPLE_MAX_PER_CENTRE
    assert low <= ratio <= high
    grid = np.linspace(1.0 + low, 1.0 + high, 2001)
    best = grid[np.argmin(_fit_time(grid, n, m))]
    assert abs((1.0 + ratio) - best) <= (high - low) / 2000 + 1e-9
    assert rules.sample_per_centre(2 * n, m) >= ratio >= rules.sample_per_centre(n, 2 * m)


def test_sample_rule_at_the_scales_it_was_set_for():
    """The floor at 2·10⁵ rows and 2·10⁴ centres (m rows cost about 20 iterations there),
    the cap at 10⁶ rows and 8021 centres (the Dask budget's), between at 10⁵ and 5000."""
    assert rules.sample_per_centre(200_000, 20_000) == rules.SAMPLE_MIN_PER_CENTRE == 1.0
    assert rules.sample_per_centre(1_000_000, 8021) == rules.SAMPLE_MAX_PER_CENTRE == 8.0
    assert 4.0 < rules.sample_per_centre(100_000, 5000) < 6.0


def test_sample_rule_keeps_the_rows_values_within_a_share_of_the_factor():
    """With many features the sampled rows' values (q·d doubles) stay within
    SAMPLE_BYTES_SHARE of the m × m factor's bytes, never below q = m."""
    n, m = 10**6, 8000
    assert rules.sample_per_centre(n, m, d=10) == rules.sample_per_centre(n, m) == 8.0
    wide = rules.sample_per_centre(n, m, d=1000)
    assert wide * m * 1000 <= rules.SAMPLE_BYTES_SHARE * m * m + 1e-6 and wide == 2.0
    assert rules.sample_per_centre(n, m, d=10**5) == rules.SAMPLE_MIN_PER_CENTRE
