"""``kernel="ard"`` through the doors: select_kernel, the search and its guard, the
machines, KernelSelectionCV and the command line."""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import kernelselect
from kernelselect.ard import _search as _ard_search
from kernelselect import cli
from kernelselect.selection._ard_select import ArdSelectionResult, select_ard
from kernelselect.models import KernelRidgeRegressor, KernelSelectionCV, LSSVMClassifier


def _relevant_two(n=120, d=5, seed=0, task="regression"):
    """y depends on features 0 and 1 only."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    f = np.sin(2.0 * X[:, 0]) + 0.5 * X[:, 1]
    if task == "regression":
        return X, f + 0.1 * rng.standard_normal(n)
    return X, np.where(f + 0.2 * rng.standard_normal(n) > 0, "yes", "no")


@pytest.fixture(scope="module")
def regression_result():
    X, y = _relevant_two()
    return X, y, kernelselect.select_kernel(X, y, kernel="ard", random_state=0)


def test_ard_finds_the_relevant_features(regression_result):
    X, y, res = regression_result
    assert isinstance(res, ArdSelectionResult)
    assert res.best_gamma.shape == (5,)
    info = res.details["ard"]
    assert info["kept"] and res.details["kernel"] == "ard"
    rel = res.relevances()
    assert min(rel[0], rel[1]) > 100 * max(rel[2:])
    # the evidence searches lowered the negative log evidence from the isotropic start,
    # the closed-form 5-fold error agrees, and the choice is the lowest optimum
    assert info["objective"] == "evidence" and info["engine"] == "exact"
    assert info["optimum"]["value"] < info["start"]["value"]
    assert info["guard"]["rule"] == "kfold"
    assert info["guard"]["optimum"] < info["guard"]["start"]
    from kernelselect.selection._ard_select import EVIDENCE_STARTS

    searches = info["optimum"]["searches"]
    assert info["optimum"]["value"] == min(searches[f"from_{k}"]["value"]
                                           for k in EVIDENCE_STARTS)
    assert searches["from_isotropic_evidence"]["start_value"] == pytest.approx(
        searches["isotropic_evidence"]["value"])
    np.testing.assert_allclose(res.best_gamma, info["optimum"]["gamma"])


def test_second_opinion_is_the_closed_form_five_fold_error():
    """The guard's two estimates are the LSSVM's 5-fold held-out errors by refitting."""
    import reference as ref
    from kernelselect.selection._ard_select import second_opinion
    from kernelselect.criteria.kfold import fold_labels

    X, y = _relevant_two(n=50, d=3, seed=6)
    Xc = X - X.mean(axis=0)
    theta0 = np.r_[np.full(3, np.log(0.2)), np.log(0.5)]
    theta = np.r_[np.log([1.0, 0.3, 0.01]), np.log(0.05)]
    kept, rec = second_opinion(Xc, y[:, None], theta0, theta)
    folds = fold_labels(50, 5, 0, None)
    for key, th in (("start", theta0), ("optimum", theta)):
        K = ref.ard_kernel_matrix(Xc, Xc, np.exp(th[:-1]))
        assert rec[key] == pytest.approx(ref.lssvm_heldout_mse(K, y, np.exp(th[-1]), folds),
                                         rel=1e-8)
    assert kept == (rec["optimum"] <= rec["start"]) and rec["se_difference"] > 0


def test_second_opinion_keeps_the_isotropic_kernel_when_it_predicts_worse(monkeypatch):
    import kernelselect.selection._ard_select as sel

    X, y = _relevant_two(n=60, d=3, seed=1)
    iso = kernelselect.select_kernel(X, y, random_state=0, kernel="gaussian")

    def overfitted(problem, gamma0, alpha0):       # a useless per-feature kernel
        theta = np.r_[np.log([1e-6, 1e-6, 50.0]), np.log(1e-6)]
        return theta, {"gamma": np.exp(theta[:3]).tolist(), "alpha": 1e-6}

    monkeypatch.setattr(sel, "_evidence_optimum", overfitted)
    res = select_ard(X, y, isotropic=iso, random_state=0)
    info = res.details["ard"]
    assert info["guard"]["rule"] == "kfold" and not info["kept"]
    assert info["guard"]["optimum"] > info["guard"]["start"]
    np.testing.assert_array_equal(res.best_gamma, np.full(3, iso.best_gamma))
    assert res.best_alpha == iso.best_alpha


def test_nested_guard_averages_the_fold_optima():
    X, y = _relevant_two()
    iso = kernelselect.select_kernel(X, y, random_state=0, kernel="gaussian")
    res = select_ard(X, y, isotropic=iso, objective="kfold", guard="nested", random_state=0)
    info = res.details["ard"]
    # the fold searches lowered the criterion from the isotropic start, their held-out
    # estimate agrees, and the choice is the mean of their optima in log space
    assert info["optimum"]["value"] < info["start"]["value"]
    assert info["guard"]["ard"] < info["guard"]["isotropic"]
    assert info["objective"] == "kfold" and info["engine"] == "exact"
    th = np.mean(info["guard"]["fold_thetas"], axis=0)
    np.testing.assert_allclose(np.log(res.best_gamma), th[:-1])
    assert res.best_alpha == pytest.approx(np.exp(th[-1]) * 120 / 96)
    with pytest.raises(ValueError, match="objective='evidence'"):
        select_ard(X, y, isotropic=iso, objective="evidence", guard="nested")
    with pytest.raises(ValueError, match="exact kernel matrix"):
        select_ard(X, y, isotropic=iso, objective="evidence", engine="nystrom")


def test_ard_result_summarises_and_plots(regression_result):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    _, _, res = regression_result
    assert res.summary().startswith("alpha=") and "x0=" in res.summary()
    fig = res.plot_relevances(feature_names=list("abcde"), top=3)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][:2] in (["a", "b"],
                                                                          ["b", "a"])
    json.dumps(res.to_dict())                        # plain types, γ as a list
    with pytest.raises(ValueError, match="feature_names"):
        res.plot_relevances(feature_names=["a"])


def test_ard_is_reproducible_and_follows_the_isotropic_start():
    X, y = _relevant_two(n=70, d=3, seed=3, task="classes")
    a = kernelselect.select_kernel(X, y, kernel="ard", random_state=5)
    b = kernelselect.select_kernel(X, y, kernel="ard", random_state=5)
    np.testing.assert_array_equal(a.best_gamma, b.best_gamma)
    iso = kernelselect.select_kernel(X, y, random_state=5, kernel="gaussian")
    assert a.details["ard"]["start"]["gamma"] == iso.best_gamma
    np.testing.assert_array_equal(a.curves["ekfold"], iso.curves["ekfold"])
    assert a.details["ard"]["task"] == "binary"
    assert set(a.details["ard"]["error_rate"]) == {"start", "optimum"}


def test_guard_keeps_the_isotropic_kernel_when_ard_loses(monkeypatch):
    import kernelselect.selection._ard_select as sel

    X, y = _relevant_two(n=60, d=3, seed=1)
    iso = kernelselect.select_kernel(X, y, random_state=0, kernel="gaussian")
    free = select_ard(X, y, isotropic=iso, guard="none", random_state=0)
    assert free.details["ard"]["guard"]["rule"] == "none" and free.details["ard"]["kept"]

    def losing(problem, gamma0, alpha0, folds, seed):
        return {"ard": 2.0, "isotropic": 1.0, "folds": folds, "evaluations": 0,
                "seconds": 0.0, "fold_thetas": [[0.0] * 4] * folds}

    monkeypatch.setattr(sel, "nested_check", losing)
    kept = select_ard(X, y, isotropic=iso, objective="kfold", guard="nested", random_state=0)
    assert not kept.details["ard"]["kept"]
    np.testing.assert_array_equal(kept.best_gamma, np.full(3, iso.best_gamma))
    assert kept.best_alpha == iso.best_alpha


def test_nested_check_scores_both_kernels_on_held_out_folds():
    X, y = _relevant_two(n=60, d=3, seed=2)
    prob = _ard_search.make_problem(X, y[:, None], "loo", None)
    out = _ard_search.nested_check(prob, 0.3, 0.5, folds=3, seed=1)
    assert len(out["fold_ard"]) == 3 and len(out["fold_thetas"]) == 3
    assert out["ard"] == pytest.approx(np.mean(out["fold_ard"]), rel=0.2)
    # the isotropic held-out error by refitting the LSSVM on each training part
    from kernelselect.criteria.kfold import fold_labels

    fold_of = fold_labels(60, 3, 1, None)
    Xc = X - X.mean(axis=0)
    total = 0.0
    for f in range(3):
        tr, te = fold_of != f, fold_of == f
        m = kernelselect.fit_lssvm(Xc[tr], y[tr], 0.3, alpha=0.5 * tr.sum() / 60)
        total += np.sum((y[te] - m.decision_function(Xc[te])[:, 0, 0]) ** 2)
    assert out["isotropic"] == pytest.approx(total / 60, rel=1e-8)


def test_nystrom_engine_searches_with_fixed_landmarks():
    X, y = _relevant_two(n=150, d=4, seed=4)
    iso = kernelselect.select_kernel(X, y, random_state=0, approximation="nystrom",
                                     kernel="gaussian")
    res = select_ard(X, y, isotropic=iso, engine="nystrom", guard="none", random_state=0)
    info = res.details["ard"]
    assert info["engine"] == "nystrom" and info["objective"] == "loo"
    assert info["n_landmarks"] == 75            # the isotropic Nyström's min(n, 200) → n/2
    assert info["optimum"]["value"] < info["start"]["value"]
    with pytest.raises(ValueError, match="exact kernel matrix"):
        select_ard(X, y, isotropic=iso, engine="nystrom", objective="kfold")


@pytest.mark.parametrize("kwargs, match", [
    (dict(approximation="mcm"), "exact.*nystrom.*not on 'mcm'"),
    (dict(approximation="random_mcm"), "not on 'random_mcm'"),
    (dict(approximation="rff"), "not on 'rff'"),
    (dict(criterion="gcv"), "criterion must be 'auto'"),
])
def test_ard_refuses_what_it_cannot_search(kwargs, match):
    X, y = _relevant_two(n=30, d=2)
    with pytest.raises(ValueError, match=match):
        kernelselect.select_kernel(X, y, kernel="ard", **kwargs)


def test_ard_on_dask_input_streams_the_nystrom_passes():
    """Dask X: the isotropic selection's one Nyström level, then the per-feature search
    on its landmarks chunk by chunk; the same search as on the array in memory."""
    da = pytest.importorskip("dask.array")
    X, y = _relevant_two(n=300, d=3, seed=9)
    Xd = da.from_array(X, chunks=(70, 3))
    res = kernelselect.select_kernel(Xd, y, kernel="ard", random_state=0)
    info = res.details["ard"]
    assert info["dask"] and info["engine"] == "nystrom" and info["guard"]["rule"] == "none"
    assert info["optimum"]["value"] < info["start"]["value"]
    with pytest.raises(ValueError, match="guard='nested'"):
        select_ard(Xd, y, isotropic=res, guard="nested")


@pytest.mark.parametrize("classes", [0, 2, 3])
def test_dask_passes_equal_the_passes_in_memory(classes):
    da = pytest.importorskip("dask.array")
    from kernelselect.utils import _dask
    from kernelselect.operators._row_passes import ArrayRows

    X, y = _relevant_two(n=200, d=3, seed=10)
    if classes:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, classes + 1)[1:-1])).astype(float)
    Y = (y[:, None] if classes == 0 else np.where(y[:, None] == np.arange(classes), 1.0, -1.0)
         if classes > 2 else np.where(y[:, None] > 0, 1.0, -1.0))
    code = y if classes != 2 else np.where(y > 0, 1.0, -1.0)
    marks = np.arange(0, 200, 7)
    theta = np.r_[np.log([0.4, 0.2, 0.05]), np.log(0.3)]
    rows = _dask.DaskRows(da.from_array(X, chunks=(45, 3)), da.from_array(code, chunks=45))
    n_classes = classes if classes > 2 else None
    streamed = _ard_search.ArdProblem(np.empty((0, 3)), Y, "loo", None, marks, rows=rows,
                                      Z=X[marks], n_classes=n_classes)
    memory = _ard_search.ArdProblem(X, Y, "loo", None, marks)
    v1, g1 = streamed.evaluate(theta)
    v2, g2 = memory.evaluate(theta)
    assert v1 == pytest.approx(v2, rel=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-10, atol=1e-12 * np.abs(g2).max())
    # blocks and threads do not change the result
    threads = _ard_search.ArdProblem(X, Y, "loo", None, marks,
                                     rows=ArrayRows(X, Y, threads=2, rows=64), Z=X[marks])
    v3, g3 = threads.evaluate(theta)
    assert v3 == v2 or v3 == pytest.approx(v2, rel=1e-14)
    np.testing.assert_allclose(g3, g2, rtol=1e-12, atol=1e-14 * np.abs(g2).max())


# --------------------------------------------------------------------------- machines


@pytest.mark.parametrize("approximation", ["exact", "nystrom", "rff"])
def test_machines_with_a_gamma_per_feature(approximation):
    """An ARD machine is the Gaussian machine on X·diag(√γ), fitted and predicting."""
    X, y = _relevant_two(n=50, d=3, seed=6)
    g = np.array([0.8, 0.1, 2.0])
    ard = kernelselect.fit_lssvm(X, y, g, alpha=0.1, kernel="ard",
                                 approximation=approximation, random_state=0)
    iso = kernelselect.fit_lssvm(X * np.sqrt(g), y, 1.0, alpha=0.1,
                                 approximation=approximation, random_state=0)
    X_new = np.random.default_rng(1).standard_normal((7, 3))
    np.testing.assert_allclose(ard.decision_function(X_new),
                               iso.decision_function(X_new * np.sqrt(g)), atol=1e-10)


def test_estimators_take_kernel_ard():
    X, y = _relevant_two(n=60, d=3, seed=7, task="classes")
    clf = LSSVMClassifier(kernel="ard", gamma=[1.0, 0.5, 1e-6], alpha=0.1).fit(X, y)
    assert clf.gamma_.shape == (3,) and clf.score(X, y) > 0.8
    reg = KernelRidgeRegressor(kernel="ard").fit(X, np.sin(X[:, 0]))
    np.testing.assert_allclose(reg.gamma_, np.full(3, 1 / 3))
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        LSSVMClassifier(kernel="ard", gamma=[1.0, 2.0]).fit(X, y)


def test_kernel_selection_cv_with_an_ard_machine():
    X, y = _relevant_two(n=80, d=3, seed=8, task="classes")
    cv = KernelSelectionCV(LSSVMClassifier(kernel="ard"), random_state=0).fit(X, y)
    assert cv.best_params_["gamma"].shape == (3,)
    machine = cv.best_estimator_.steps[-1][1]
    np.testing.assert_array_equal(machine.gamma_, cv.best_params_["gamma"])
    assert cv.score(X, y) > 0.8
    with pytest.raises(ValueError, match="criterion='cv'"):
        KernelSelectionCV(LSSVMClassifier(kernel="ard"), criterion="cv").fit(X, y)


def test_cli_kernel_ard(capsys, tmp_path):
    out = tmp_path / "sel.json"
    assert cli.main(["select", "--dataset", "servo", "--kernel", "ard", "--random-state", "0",
                     "--json", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "kernel     ard" in text and "gamma:" in text
    result = json.loads(out.read_text())["result"]
    assert len(result["best_gamma"]) == 4 and result["details"]["kernel"] == "ard"


def test_kernel_auto_follows_the_target():
    X, y = _relevant_two(n=60, d=2, seed=12)
    reg = kernelselect.select_kernel(X, y, kernel="auto", random_state=0)
    assert isinstance(reg, ArdSelectionResult) and reg.best_gamma.shape == (2,)
    assert "real target" in reg.details["kernel_rule"]
    X, labels = _relevant_two(n=60, d=2, seed=12, task="classes")
    clf = kernelselect.select_kernel(X, labels, kernel="auto", random_state=0)
    assert not isinstance(clf, ArdSelectionResult) and np.ndim(clf.best_gamma) == 0
    assert "binary labels" in clf.details["kernel_rule"]
    assert clf.best_gamma == kernelselect.select_kernel(X, labels, random_state=0,
                                                        kernel="gaussian").best_gamma


def test_evidence_start_runs_the_first_level_alone(monkeypatch):
    """EVIDENCE_START = "first": a real target beyond the exact range starts the evidence
    search from the defaults' first Nyström level alone; any other problem, or
    "levels", starts from the isotropic defaults as given."""
    import kernelselect.selection._ard_select as sel
    from kernelselect.operators.nystrom import Nystroem

    monkeypatch.setattr(sel, "EVIDENCE_START", "first")
    X, y = _relevant_two(n=410, d=2, seed=4)
    limits = dict(exact_max_n=400, first_level=100)
    first = sel.start_approximation("auto", "auto", X, y, "auto", "auto", **limits)
    assert isinstance(first, Nystroem) and first.n_landmarks == 100
    for args in [("auto", "auto", X[:400], y[:400], "auto", "auto"),   # the exact range
                 ("auto", "eloo", X, y, "auto", "auto"),               # a criterion given
                 ("exact", "auto", X, y, "auto", "exact"),             # a stand-in given
                 ("auto", "auto", X, np.sign(y), "auto", "auto")]:     # class labels
        assert sel.start_approximation(*args, **limits) is args[0]
    res = kernelselect.select_kernel(X, y, kernel="ard", random_state=0)
    assert res.details["ard"]["start"]["approximation"] == "nystrom"
    assert res.details["ard"]["objective"] == "evidence"
    iso = kernelselect.select_kernel(X, y, approximation=Nystroem(n_landmarks=100),
                                     random_state=0, kernel="gaussian")
    assert res.details["ard"]["start"]["gamma"] == iso.best_gamma
    monkeypatch.setattr(sel, "EVIDENCE_START", "levels")
    assert sel.start_approximation("auto", "auto", X, y, "auto", "auto", **limits) == "auto"


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10**6), classes=st.sampled_from([2, 3]))
def test_rate_second_opinion_is_the_refitted_five_fold_error_rate(seed, classes):
    """guard="rate"'s estimates: the LSSVM's 5-fold held-out error rate by refitting on
    each training part (sign of the ±1 column, or argmax over one-vs-rest columns)."""
    import reference as ref
    from kernelselect.selection._ard_select import second_opinion
    from kernelselect.criteria.kfold import fold_labels
    from kernelselect.utils._labels import column_codes

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((45, 3))
    codes = np.digitize(X[:, 0] + 0.5 * rng.standard_normal(45),
                        np.quantile(X[:, 0], np.linspace(0, 1, classes + 1)[1:-1]))
    Y = np.where(codes[:, None] == np.arange(classes)[None, :], 1.0, -1.0)
    Y = Y[:, 1:] if classes == 2 else Y
    Xc = X - X.mean(axis=0)
    theta0 = np.r_[np.full(3, np.log(0.3)), np.log(0.5)]
    theta = np.r_[np.log(rng.uniform(0.05, 2.0, 3)), np.log(0.1)]
    kept, rec = second_opinion(Xc, Y, theta0, theta, loss="rate")
    folds = fold_labels(45, 5, 0, column_codes(Y))     # ekfold's stratified folds
    wrong = {}
    for key, th in (("start", theta0), ("optimum", theta)):
        K = ref.ard_kernel_matrix(Xc, Xc, np.exp(th[:-1]))
        F = Y - ref.kfold_lssvm_bruteforce(K, Y, np.exp(th[-1]), folds)
        wrong[key] = (F[:, 0] * Y[:, 0] <= 0 if classes == 2
                      else np.argmax(F, axis=1) != np.argmax(Y, axis=1))
        assert rec[key] == pytest.approx(np.mean(wrong[key]), abs=1e-12)
    diff = wrong["optimum"].astype(float) - wrong["start"]
    se = np.std(diff, ddof=1) / np.sqrt(45)
    assert rec["se_difference"] == pytest.approx(se, abs=1e-12)
    assert kept == (rec["optimum"] <= rec["start"] - se) and rec["rule"] == "rate"


def test_labels_keep_the_bagged_optimum_only_when_its_error_rate_is_lower():
    """Class labels: the nested searches' bagged optimum, kept when its closed-form
    5-fold error rate is below the start's by one standard error (guard="rate")."""
    from kernelselect.selection._ard_select import bagged, second_opinion

    X, labels = _relevant_two(n=120, d=4, seed=7, task="classes")
    res = kernelselect.select_kernel(X, labels, kernel="ard", random_state=3)
    info = res.details["ard"]
    guard = info["guard"]
    assert guard["rule"] == "rate" and info["kept"] == guard["kept"] == guard["rate"]["kept"]
    iso = kernelselect.select_kernel(X, labels, random_state=3, kernel="gaussian")
    Xw = kernelselect.selection.standardize_columns(X)
    Y = np.where(labels == "yes", 1.0, -1.0)[:, None]
    theta0 = np.r_[np.full(4, np.log(iso.best_gamma)), np.log(iso.best_alpha)]
    theta_bag = bagged(guard["fold_thetas"], 120, guard["folds"])
    kept, rec = second_opinion(Xw - Xw.mean(axis=0), Y, theta0, theta_bag, loss="rate")
    assert kept == info["kept"] and rec["optimum"] == pytest.approx(guard["rate"]["optimum"])
    expect = np.exp(theta_bag[:-1]) if kept else np.full(4, iso.best_gamma)
    np.testing.assert_allclose(res.best_gamma, expect, rtol=1e-12)
    X2, y2 = _relevant_two(n=60, d=2, seed=1)
    with pytest.raises(ValueError, match="guard='rate'.*real target"):
        select_ard(X2, y2, isotropic=kernelselect.select_kernel(X2, y2, random_state=0,
                                                               kernel="gaussian"),
                   objective="kfold", guard="rate")


@pytest.mark.parametrize("name, rows, seed", [("winequality_red", None, 0), ("energy", 700, 1)])
def test_guard_keeping_the_isotropic_kernel_returns_the_whole_isotropic_selection(
        name, rows, seed):
    """400 < n ≤ 1000 rows of a real target: the evidence search starts from the first
    Nyström level alone; when the guard keeps the isotropic kernel, its (γ, α) is the
    whole isotropic selection's — that of kernel="gaussian" with the same seed — not the
    coarse start's (winequality_red's training half: 0.0622 against 0.1245)."""
    from sklearn.model_selection import train_test_split

    data = kernelselect.datasets.load(name)
    X, y = data.X[:rows], data.y[:rows]
    if rows is None:
        X, _, y, _ = train_test_split(data.X, data.y, test_size=0.5, random_state=0)
    res = kernelselect.select_kernel(X, y, kernel="ard", random_state=seed)
    iso = kernelselect.select_kernel(X, y, kernel="gaussian", random_state=seed)
    info = res.details["ard"]
    assert info["kept"] is False and info["start"]["approximation"] == "nystrom"
    assert info["start"]["gamma"] != pytest.approx(iso.best_gamma)   # the coarse start
    np.testing.assert_array_equal(res.best_gamma, np.full(X.shape[1], iso.best_gamma))
    assert res.best_alpha == iso.best_alpha
    assert info["gamma"] == res.best_gamma.tolist() and info["alpha"] == res.best_alpha
    np.testing.assert_array_equal(res.gammas, iso.gammas)
    assert res.details["approximation"] == iso.details["approximation"]
    assert info["isotropic"]["gamma"] == iso.best_gamma


def _hand_built_ard(gamma):
    """An ArdSelectionResult with the given per-feature γ (no search: the views only)."""
    gamma = np.asarray(gamma, dtype=np.float64)
    res = ArdSelectionResult([0.5, 1.0], [0.1], {"eloo": np.array([[2.0], [1.0]])},
                             {"eloo": "min"}, [0.0, 0.0], {"ard": {"kept": True}})
    res.best_gamma, res.best_alpha = gamma, 0.1
    return res


@pytest.mark.parametrize("which", ["fitted", "hand_built"])
def test_ard_views_refuse_bad_feature_names_and_top(regression_result, which):
    """A short or long feature_names is a ValueError naming it and the length wanted
    (summary raised IndexError); top must be a positive integer (1.5 and "2" raised
    "slice indices must be integers", -1 silently dropped the last feature)."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    res = regression_result[2] if which == "fitted" else _hand_built_ard([0.3, 2.0, 0.01, 1.0])
    d = res.best_gamma.size
    for names in (["a"], [f"f{k}" for k in range(d + 1)]):
        for view in (res.summary, res.plot_relevances):
            with pytest.raises(ValueError, match=rf"feature_names has {len(names)} names.*"
                                                 rf"length {d}"):
                view(feature_names=names)
    for view in (res.summary, res.plot_relevances):
        for top in (1.5, "2", True):
            with pytest.raises(TypeError, match="top must be a positive integer"):
                view(top=top)
        for top in (-1, 0):
            with pytest.raises(ValueError, match="top must be a positive integer"):
                view(top=top)
    fig = res.plot_relevances(top=d)                  # every feature, the last one too
    assert len(fig.axes[0].get_yticklabels()) == d
    assert len(res.plot_relevances(top=np.int64(2)).axes[0].get_yticklabels()) == 2
    names = [f"f{k}" for k in range(d)]
    top_name = names[int(np.argmax(res.relevances()))]
    assert f"{top_name}=" in res.summary(feature_names=names, top=1)
