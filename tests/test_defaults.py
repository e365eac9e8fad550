"""The default selection path: task rule, one-vs-rest leave-one-out, α path, automatic
approximation, grid extension and refinement."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelselect
from kernelselect import GridEdgeWarning, KernelSelectionCV, cli, datasets, select_kernel
from kernelselect.selection import _policy, _search
from kernelselect import _policy as _rules
from kernelselect.selection._policy import alpha_path
from kernelselect.utils._targets import detect_task, prepare_targets
from kernelselect.criteria import evaluate_criterion
from kernelselect.operators.dense import ExactState
from kernelselect.operators import get_approximation

import reference as ref

# ------------------------------------------------------------------ task detection


@pytest.mark.parametrize("y, task", [
    ([0, 1, 1, 0], "binary"),
    ([-1.0, 1.0, 1.0], "binary"),
    ([3, 7, 7, 3], "binary"),
    (["benign", "malignant", "benign"], "binary"),
    ([True, False, True], "binary"),
    ([0, 1, 2, 2, 1], "multiclass"),
    ([1.0, 2.0, 3.0, 4.0], "multiclass"),
    (["a", "b", "c", "a"], "multiclass"),
    (np.array(["x", "y", "z"], dtype=object), "multiclass"),
    ([3, 4, 5, 6, 7, 8, 5], "regression"),                 # ratings 3…8: not codes
    ([1, 2, 3, 5, 6], "regression"),                       # a gap: not codes
    ([0, 2, 4, 6], "regression"),
    (list(range(51)), "regression"),                       # more than 50 values
    (list(range(50)), "multiclass"),
    ([0.5, 1.5, 2.0], "regression"),
    (np.array([0.1, 0.2, 0.3], dtype=object), "regression"),
])
def test_task_detection_table(y, task):
    assert detect_task(y)[0] == task


def test_shipped_sets_detect_as_their_metadata_says():
    for name in ("abalone", "winequality_red", "breast_cancer", "mpg", "servo"):
        data = datasets.load(name)
        raw = data.y
        assert detect_task(raw)[0] == data.task, name
    assert detect_task(datasets.load("abalone").y)[0] == "regression"


def test_task_override_and_bad_task():
    y = np.array([3, 4, 5, 6, 7, 8, 5])
    assert prepare_targets(y, "multiclass").task == "multiclass"
    t = prepare_targets(["b", "a", "b"], "auto")
    assert t.task == "binary" and t.classes.tolist() == ["a", "b"] and t.y.tolist() == [1, -1, 1]
    with pytest.raises(ValueError, match="task='binary' needs exactly two"):
        prepare_targets([0, 1, 2], "binary")
    with pytest.raises(ValueError, match="task='regression' needs numeric"):
        prepare_targets(["a", "b", "c"], "regression")
    with pytest.raises(ValueError, match="task='classify' is not known"):
        prepare_targets([0, 1], "classify")


def test_cli_task_accepts_every_value_its_messages_suggest(capsys):
    parser = cli.build_parser()
    for task in ("auto", "binary", "multiclass", "regression"):
        args = parser.parse_args(["select", "--task", task])
        assert args.task == task
    with pytest.raises(ValueError) as info:
        datasets.to_binary_labels([0, 1, 2])
    for word in ("regression", "multiclass"):
        assert word in str(info.value)


# ------------------------------------------------------------------ multi-class LOO


def blobs(n, classes=3, d=2, seed=0, spread=1.0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, n)
    centres = 2.0 * rng.standard_normal((classes, d))
    X = centres[labels] + spread * rng.standard_normal((n, d))
    return X, labels


def _exact_operator(X, y, gamma):
    approx = get_approximation("exact")
    state = approx.prepare(X, y, kernel="gaussian", random_state=None, workers=None)
    return approx.build(X, y, gamma, kernel="gaussian", state=state, workers=None)


def _multiclass_blobs(n, classes, seed):
    """blobs with at least two classes present."""
    X, labels = blobs(n, classes, seed=seed)
    if np.unique(labels).size < 2:
        labels[0] = (labels[0] + 1) % classes
    return X, labels


def _multiclass_case(n, classes, seed, log_gamma, log_alpha):
    """(X, labels, γ, α, the exact operator at γ) of a drawn multi-class case."""
    X, labels = _multiclass_blobs(n, classes, seed)
    gamma = 2.0 ** log_gamma
    return X, labels, gamma, 2.0 ** log_alpha, _exact_operator(X, labels, gamma)


@settings(deadline=None, max_examples=15)
@given(n=st.integers(8, 24), classes=st.integers(2, 4), seed=st.integers(0, 2**31),
       log_gamma=st.floats(-2, 1), log_alpha=st.floats(-2, 1))
def test_eloo_multiclass_equals_one_vs_rest_refits(n, classes, seed, log_gamma, log_alpha):
    X, labels, gamma, alpha, op = _multiclass_case(n, classes, seed, log_gamma, log_alpha)
    A = ref.kernel_matrix(X, X, gamma)
    rate, E = ref.loo_ovr_bruteforce(A, labels, alpha)
    got = evaluate_criterion("eloo_multiclass", op, labels, [alpha, 2 * alpha],
                             loss="error_rate")
    # argmax ties between classes are measure-zero for continuous data
    assert got[0] == pytest.approx(rate, abs=1e-12)
    press = evaluate_criterion("eloo_multiclass", op, labels, [alpha], loss="squared")[0]
    assert press == pytest.approx(np.mean(E ** 2), rel=1e-7)
    hybrid = evaluate_criterion("eloo_multiclass", op, labels, [alpha])[0]   # its own loss
    assert rate <= hybrid < rate + 1.0 / n


def test_eloo_multiclass_on_two_classes_is_binary_eloo():
    X, labels = blobs(30, 2, seed=3)
    op = get_approximation("exact").build(X, labels, 0.7, kernel="gaussian",
                                          state=ExactState("dense"), workers=None)
    ypm = np.where(labels == 1, 1.0, -1.0)
    for loss in ("hybrid", "error_rate", "squared"):
        np.testing.assert_allclose(
            evaluate_criterion("eloo_multiclass", op, labels, [0.1, 1.0], loss=loss),
            evaluate_criterion("eloo", op, ypm, [0.1, 1.0], loss=loss))
    np.testing.assert_allclose(evaluate_criterion("eloo_multiclass", op, labels, [0.1, 1.0],
                                                  loss="error_rate"),
                               evaluate_criterion("eloo_error_rate", op, ypm, [0.1, 1.0]))


def test_hybrid_loss_orders_by_error_rate_first():
    X, labels = blobs(40, 2, seed=5, spread=2.0)
    ypm = np.where(labels == 1, 1.0, -1.0)
    op = get_approximation("exact").build(X, ypm, 0.5, kernel="gaussian",
                                          state=ExactState("dense"), workers=None)
    alphas = np.logspace(-3, 2, 11)
    rate = evaluate_criterion("eloo", op, ypm, alphas, loss="error_rate")
    hyb = evaluate_criterion("eloo", op, ypm, alphas, loss="hybrid")
    assert np.all((hyb >= rate) & (hyb < rate + 1.0 / 40))
    order = np.argsort(hyb, kind="stable")
    assert np.all(np.diff(rate[order]) >= -1e-15)


# ------------------------------------------------------------------ the default path


def test_default_path_equals_the_explicit_call_exact():
    X, labels = blobs(150, 2, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        res = select_kernel(X, labels, random_state=0, kernel="gaussian")
        d = res.details
        assert d["task"] == "binary" and res.criteria == ["ekfold"]
        assert d["approximation"] == "exact"
        np.testing.assert_allclose(res.alphas[:13] if res.alphas[0] >= alpha_path(150)[0]
                                   else res.alphas[-13:], alpha_path(150))
        assert d["criterion_params"]["ekfold"] == {"loss": "squared", "folds": 5, "seed": 0}
        explicit = select_kernel(X, labels, gammas=res.gammas, alphas=res.alphas,
                                 criterion="ekfold", loss="squared", approximation="exact",
                                 standardize=True, kernel="gaussian")
    np.testing.assert_array_equal(np.isnan(res.curves["ekfold"]),
                                  np.isnan(explicit.curves["ekfold"]) | np.isnan(res.curves["ekfold"]))
    ok = np.isfinite(res.curves["ekfold"])
    np.testing.assert_allclose(res.curves["ekfold"][ok], explicit.curves["ekfold"][ok], rtol=1e-10)
    assert (res.best_gamma, res.best_alpha) == (explicit.best_gamma, explicit.best_alpha)


def test_default_path_equals_the_explicit_call_nystroem_levels():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((700, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.2 * rng.standard_normal(700)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        res = select_kernel(X, y, random_state=0, kernel="gaussian")
    d = res.details
    assert d["task"] == "regression" and d["criterion_params"]["eloo"] == {"loss": "squared"}
    levels = d["auto"]["levels"]
    assert levels[0]["approximation"] == f"nystrom(m={_policy.START_LANDMARKS})"
    assert len(levels) >= 2
    assert d["approximation"] == levels[-1].get("approximation", d["approximation"])
    if d["approximation"] == "exact":
        approx = "exact"
    else:
        approx = kernelselect.Nystroem(landmarks=np.asarray(
            d["approximation_params"]["landmarks"]))
        assert approx.landmarks.size == int(d["approximation"].split("=")[1].rstrip(")"))
    explicit = select_kernel(X, y, gammas=res.gammas, alphas=res.alphas, criterion="eloo",
                             loss="squared", approximation=approx, kernel="gaussian")
    np.testing.assert_allclose(res.curves["eloo"], explicit.curves["eloo"], rtol=1e-8)
    assert (res.best_gamma, res.best_alpha) == (explicit.best_gamma, explicit.best_alpha)


@pytest.mark.parametrize("point, prev, steps, agrees", [
    ((1.0, 1.0), (1.0, 1.0), 0, True),
    ((2.0, 1.0), (1.0, 1.0), 0, False),
    ((2.0, 1.0), (1.0, 1.0), 1, True),
    ((0.5, 10 ** 0.5), (1.0, 1.0), 1, True),          # one step down in γ, up in α
    ((4.0, 1.0), (1.0, 1.0), 1, False),               # two γ steps
    ((1.0, 10.0), (1.0, 1.0), 1, False),              # two α steps (one decade)
    ((1.0, 0.1), (1.0, 1.0), 2, True),
])
def test_levels_agree_within_grid_steps(point, prev, steps, agrees):
    assert _policy._within_steps(point, prev, steps) is agrees


def _levels_problem():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((900, 4))
    y = np.sin(3 * X[:, 0]) * X[:, 1] + np.cos(2 * X[:, 2]) + 0.1 * rng.standard_normal(900)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        return X, y, select_kernel(X, y, random_state=3, kernel="gaussian")


def test_last_level_half_replaces_the_exact_window_by_nystroem_of_n_over_2(monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((500, 4))
    y = np.sin(3 * X[:, 0]) * X[:, 1] + np.cos(2 * X[:, 2]) + 0.1 * rng.standard_normal(500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        exact = select_kernel(X, y, random_state=3, kernel="gaussian")
        monkeypatch.setattr(_rules, "LAST_LEVEL", "half")
        half = select_kernel(X, y, random_state=3, kernel="gaussian")
    labels = [lv["approximation"] for lv in exact.details["auto"]["levels"]]
    assert labels[-1] == "exact", "the problem must reach the exact window by default"
    got = [lv["approximation"] for lv in half.details["auto"]["levels"]]
    # the same levels up to the window, then Nyström on the first n/2 of the permutation
    assert got == labels[:-1] + ["nystrom(m=250)"]
    for a, b in zip(exact.levels[:-1], half.levels[:-1]):
        np.testing.assert_array_equal(a.curves["eloo"], b.curves["eloo"])
    landmarks = np.asarray(half.details["approximation_params"]["landmarks"])
    assert landmarks.size == 250 and np.unique(landmarks).size == 250
    explicit = select_kernel(X, y, gammas=half.gammas, alphas=half.alphas, criterion="eloo",
                             loss="squared",
                             approximation=kernelselect.Nystroem(landmarks=landmarks), kernel="gaussian")
    np.testing.assert_allclose(half.curves["eloo"], explicit.curves["eloo"], rtol=1e-8)
    assert (half.best_gamma, half.best_alpha) == (explicit.best_gamma, explicit.best_alpha)


def test_auto_levels_stop_only_when_settled_and_bracket_their_best_gamma():
    X, y, res = _levels_problem()
    auto = res.details["auto"]
    grid = res.levels[0].gammas
    assert auto["levels"][0]["approximation"] == f"nystrom(m={_policy.START_LANDMARKS})"
    later = [lv for lv in auto["levels"][1:] if "approximation" in lv]
    assert later, "the first level is never the last"
    for lv in later:
        g = np.asarray(lv["gammas"])
        k = int(np.argmin(np.abs(g - lv["best_gamma"])))
        lo, hi = np.searchsorted(grid, g[0]), np.searchsorted(grid, g[-1])
        assert not (k == 0 and lo > 0) and not (k == g.size - 1 and hi < grid.size - 1)
    for lv in later[:-1]:
        assert lv["stable"] is False
    last = later[-1]
    if last["approximation"] != "exact":
        m = int(last["approximation"].split("=")[1].rstrip(")"))
        assert last["stable"] and last["agrees"]
        assert last["effective_dimension"] <= _policy.DEFF_FRACTION * m
    assert (res.best_gamma, res.best_alpha) == (last["best_gamma"], last["best_alpha"])
    # the result keeps every level searched: the coarse grid, then each window
    assert [lv.approximation for lv in res.levels] == [
        lv["approximation"] for lv in auto["levels"] if "approximation" in lv]
    for lv, info in zip(res.levels[1:], later):
        np.testing.assert_array_equal(lv.gammas, info["gammas"])
        assert lv.n_landmarks == (None if info["approximation"] == "exact"
                                  else int(info["approximation"][10:-1]))
    assert res.levels[-1].gammas is res.gammas and res.levels[-1].curves["eloo"] is \
        res.curves["eloo"]
    frame = res.to_frame()
    assert len(frame) == sum(lv.gammas.size * lv.alphas.size for lv in res.levels)
    coarse = frame[frame["level"] == 0]
    np.testing.assert_array_equal(coarse["eloo"].to_numpy(),
                                  res.levels[0].curves["eloo"].ravel())
    assert (coarse["n_landmarks"] == _policy.START_LANDMARKS).all()
    # and the command line's table has one row per γ of every level, the choice marked
    from kernelselect.cli import format_table

    rows = [line for line in format_table(res).splitlines()
            if line[2:].startswith(("nystrom", "exact"))]
    assert len(rows) == sum(lv.gammas.size for lv in res.levels)
    (chosen,) = [line for line in rows if line.startswith(">")]
    assert chosen[2:].startswith(res.levels[-1].approximation + " ")


@pytest.mark.parametrize("n, rows", [(40_000, None), (40_001, 20_000), (10**7, 20_000)])
def test_coarse_rows_only_beyond_twice_the_subsample(n, rows):
    assert _rules.coarse_rows(n) == rows


def test_coarse_levels_on_a_subsample_then_the_last_level_on_all_rows(monkeypatch):
    """Beyond twice SUBSAMPLE_ROWS: the first grid and the coarse levels (at most
    MAX_LANDMARKS/2 landmarks) score a subsample with its own α path r·10^k; the
    subsample's choice is carried to all rows by γ and the exponent k, and the levels
    after it score every row with n·10^k, the last of them the reference's values."""
    monkeypatch.setattr(_rules, "SUBSAMPLE_ROWS", 1000)
    rng = np.random.default_rng(7)
    n = 3000
    X = rng.standard_normal((n, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.2 * rng.standard_normal(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        res = select_kernel(X, y, random_state=0, kernel="gaussian")
    sub = res.details["auto"]["subsample"]
    assert sub["rows"] == 1000
    rows = [lv.n_rows for lv in res.levels]
    k = rows.index(None)
    assert k >= 1 and all(r == 1000 for r in rows[:k]) and all(r is None for r in rows[k:])
    for lv in res.levels[:k]:
        assert lv.approximation.endswith(" on 1000 rows")
        assert lv.n_landmarks <= _rules.MAX_LANDMARKS // 2
    coarse_alphas = res.levels[0].alphas          # r·10^k, perhaps extended at an edge
    assert all(np.isclose(coarse_alphas, a, rtol=1e-12).any() for a in alpha_path(1000))
    # all rows: the subsample's α path times n/r, the carried point on it
    for lv in res.levels[k:]:                     # (the last may have grown at an edge)
        carried = res.levels[0].alphas * n / 1000
        assert all(np.isclose(lv.alphas, a, rtol=1e-12).any() for a in carried)
    assert np.isclose(res.levels[k].alphas, sub["alpha"], rtol=1e-12).any()
    coarse_last = res.levels[k - 1]
    i, j = np.unravel_index(np.nanargmin(coarse_last.curves["eloo"]),
                            coarse_last.curves["eloo"].shape)
    assert sub["gamma"] == coarse_last.gammas[i]
    assert sub["alpha"] == pytest.approx(coarse_last.alphas[j] * n / 1000, rel=1e-12)
    first_full = res.levels[k].n_landmarks
    assert first_full in (sub["landmarks"], 2 * sub["landmarks"])
    assert (first_full == sub["landmarks"]) is sub["settled"]
    # the last level is the Nyström stand-in on every row, as an explicit call computes it
    approx = kernelselect.Nystroem(landmarks=np.asarray(
        res.details["approximation_params"]["landmarks"]))
    explicit = select_kernel(X, y, gammas=res.gammas, alphas=res.alphas, criterion="eloo",
                             loss="squared", approximation=approx, kernel="gaussian")
    np.testing.assert_allclose(res.curves["eloo"], explicit.curves["eloo"], rtol=1e-8)
    assert (res.best_gamma, res.best_alpha) == (explicit.best_gamma, explicit.best_alpha)
    assert np.isclose(alpha_path(n), res.best_alpha, rtol=1e-12).any() or \
        res.details["extensions"]
    frame = res.to_frame()
    assert frame["n_rows"].isna().sum() == sum(
        lv.gammas.size * lv.alphas.size for lv in res.levels[k:])


def _tiny_alpha_problem(monkeypatch):
    """(X, y) on 3000 rows wanting an α/n below the subsample's extended path, with the
    subsample's own edge extensions switched off (SUBSAMPLE_ROWS = 1000)."""
    monkeypatch.setattr(_rules, "SUBSAMPLE_ROWS", 1000)
    grow = _policy.extend_edges

    def not_on_the_subsample(search, *args):
        return [] if search.subsample is not None else grow(search, *args)

    monkeypatch.setattr(_policy, "extend_edges", not_on_the_subsample)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((3000, 3))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.001 * rng.standard_normal(3000)
    return X, y


def _quiet_select(X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        return select_kernel(X, y, random_state=0, kernel="gaussian")


def test_the_all_rows_levels_score_the_carried_alpha_path_widened_by_the_extensions(
        monkeypatch):
    """The all-rows levels score the subsample's α path times n/r grown on each side
    by EXTEND_STEPS × MAX_EXTENSIONS half-decades, so a best α below the subsample's path
    is found without rebuilding a level's operators: the first all-rows level's best is
    the point the narrow path reaches only by extending that level after comparing its
    edge point with the subsample's, and the levels go on from the real best (here it
    disagrees with the subsample, so they climb), with fewer builds."""
    X, y = _tiny_alpha_problem(monkeypatch)
    n = X.shape[0]
    res = _quiet_select(X, y)
    k = [lv.n_rows for lv in res.levels].index(None)
    carried = res.levels[0].alphas * n / 1000
    reach = _rules.EXTEND_STEPS * _rules.MAX_EXTENSIONS
    wide = _policy.widened_alphas(carried)
    np.testing.assert_allclose(wide[reach:-reach], carried, rtol=0)
    np.testing.assert_allclose(np.diff(np.log10(wide[:reach + 1])), 0.5, rtol=1e-12)
    np.testing.assert_allclose(np.diff(np.log10(wide[-reach - 1:])), 0.5, rtol=1e-12)
    for lv in res.levels[k:-1]:
        np.testing.assert_allclose(lv.alphas, wide, rtol=1e-12)
    assert res.best_alpha < carried.min()
    assert not [e for e in res.details["extensions"] if "level" in e]
    monkeypatch.setattr(_policy, "widened_alphas", lambda alphas: alphas)
    narrow = _quiet_select(X, y)
    assert [e["edge"] for e in narrow.details["extensions"] if "level" in e][:1] == \
        ["alpha_low"]
    first_full = [lv for lv in res.details["auto"]["levels"]
                  if "approximation" in lv and " on " not in lv["approximation"]][0]
    assert (first_full["best_gamma"], first_full["best_alpha"]) == pytest.approx(
        (narrow.best_gamma, narrow.best_alpha), rel=1e-12)
    i, j = np.unravel_index(np.nanargmin(res.curves["eloo"]), res.curves["eloo"].shape)
    assert (res.gammas[i], res.alphas[j]) == (res.best_gamma, res.best_alpha)
    assert res.details["n_operator_builds"] < narrow.details["n_operator_builds"]


def test_the_last_all_rows_level_grows_past_an_alpha_edge_the_subsample_did_not(
        monkeypatch):
    """The subsample decides its extensions at its own (larger) α/n; when the all-rows
    level's best point still lies on the edge of the α path it scored (here not
    widened), that level grows past it, as the first grid would, and the result reads
    the grown level."""
    X, y = _tiny_alpha_problem(monkeypatch)
    monkeypatch.setattr(_policy, "widened_alphas", lambda alphas: alphas)
    n = X.shape[0]
    res = _quiet_select(X, y)
    grown = [e for e in res.details["extensions"] if "level" in e]
    assert grown and grown[0]["edge"] == "alpha_low"
    assert grown[0]["level"] == res.levels[-1].approximation and res.levels[-1].n_rows is None
    assert res.alphas.min() < alpha_path(n).min()
    assert res.levels[-1].alphas is res.alphas and res.levels[-1].curves["eloo"] is \
        res.curves["eloo"]
    last = [lv for lv in res.details["auto"]["levels"] if "approximation" in lv][-1]
    assert (last["best_gamma"], last["best_alpha"]) == (res.best_gamma, res.best_alpha)
    i, j = np.unravel_index(np.nanargmin(res.curves["eloo"]), res.curves["eloo"].shape)
    assert (res.gammas[i], res.alphas[j]) == (res.best_gamma, res.best_alpha)


@settings(max_examples=15, deadline=None)
@given(m=st.integers(5, 40), log_gamma=st.floats(-3.0, 1.0), log_alpha=st.floats(-4.0, 1.0),
       seed=st.integers(0, 10 ** 6))
def test_effective_dimension_matches_the_dense_stand_in(m, log_gamma, log_alpha, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((60, 3))
    idx = np.sort(rng.choice(60, size=m, replace=False))
    gamma, alpha = 10.0 ** log_gamma, 10.0 ** log_alpha
    search = _search.Search(X, np.zeros(60), {}, [], {}, "gaussian", 1, rng)
    approx = kernelselect.Nystroem(landmarks=idx)
    got = _policy.effective_dimension(approx, search.prepare(approx), search, gamma, alpha)
    K = ref.kernel_matrix(X, X, gamma)
    C, W = K[:, idx], K[np.ix_(idx, idx)]
    sig, U = np.linalg.eigh(W)
    keep = sig > 1e-8 * sig.max()                  # the stand-in's eigenvalue floor
    V = C @ (U[:, keep] / np.sqrt(sig[keep]))
    lam = np.clip(np.linalg.eigvalsh(V @ V.T), 0.0, None)
    assert got == pytest.approx(float(np.sum(lam / (lam + alpha))), rel=1e-7, abs=1e-7)


def test_small_n_is_exact_and_nested_levels_grow():
    X, labels = blobs(120, 3, seed=4)
    res = select_kernel(X, labels, random_state=0, gammas=2.0 ** np.arange(-3, 3), kernel="gaussian")
    assert res.details["approximation"] == "exact" and res.criteria == ["ekfold_multiclass"]
    assert res.details["auto"]["levels"][0]["approximation"] == "exact"


# ------------------------------------------------------------------ grid edges


def test_grid_extends_past_the_edge_and_records_it():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 2))
    y = np.where(X[:, 0] + 0.2 * X[:, 1] > 0, "pos", "neg")      # linear: wide kernels win
    gammas = 2.0 ** np.arange(2, 6)                              # far too narrow
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        explicit = select_kernel(X, y, gammas=gammas, random_state=0, kernel="gaussian")
    assert explicit.details["extensions"] == [] and explicit.gammas.size == 4
    assert "gamma_low" in explicit.details["edges"]
    res = select_kernel(X, y, random_state=0, kernel="gaussian")
    ext = [e for e in res.details["extensions"] if e["edge"].startswith("gamma")]
    g0 = res.details["gamma0"]
    if ext:
        assert res.gammas.size == 15 + 4 * len(ext)
        assert res.gammas.min() < g0 * 2.0 ** -7 or res.gammas.max() > g0 * 2.0 ** 7
        assert np.all(np.diff(np.log2(res.gammas)) == pytest.approx(1.0))


def test_edge_warning_when_still_on_the_edge():
    X, labels = blobs(80, 2, seed=6)
    # two well-separated blobs: every wide kernel separates them, so the 0-1 LOO error
    # ties on all of them and ties go to the first (widest) γ, beyond any grid
    with pytest.warns(GridEdgeWarning, match="gamma_low"):
        res = select_kernel(X, labels, criterion="eloo_error_rate", random_state=0, kernel="gaussian")
    assert [e["edge"] for e in res.details["extensions"]][:2] == ["gamma_low", "gamma_low"]
    assert res.gammas.size == 15 + 8 and "gamma_low" in res.details["edges"]
    assert res.best_gamma == res.gammas[0]


# ------------------------------------------------------------------ refinement


@settings(deadline=None, max_examples=6)
@given(seed=st.integers(0, 2**31), regression=st.booleans())
def test_refinement_never_worse_than_its_grid_point(seed, regression):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((60, 2))
    y = np.sin(2 * X[:, 0]) + 0.3 * rng.standard_normal(60)
    if not regression:
        y = np.where(y > 0, 1, 0)
    kw = dict(gammas=2.0 ** np.arange(-4, 4), alphas=np.logspace(-3, 1, 5), random_state=0,
              criterion="eloo", loss="squared" if regression else "hybrid")
    grid = select_kernel(X, y, **kw, kernel="gaussian")
    res = select_kernel(X, y, refine=True, **kw, kernel="gaussian")
    info = res.details["refine"]
    g, a = res.best_gamma, res.best_alpha
    again = select_kernel(X, y, gammas=[g], alphas=[a], random_state=0, criterion="eloo",
                          loss=kw["loss"], kernel="gaussian")
    value, at_grid = again.curves["eloo"][0, 0], grid.best["eloo"]["value"]
    assert value <= at_grid + 1e-12
    if not info["improved"]:
        # the grid point itself, recomputed alone: equal up to rounding (a one-γ call and
        # the grid call may sum in a different order; 7e-16 apart was seen)
        assert (g, a) == (grid.best_gamma, grid.best_alpha)
        assert abs(value - at_grid) <= 1e-12 * max(1.0, abs(at_grid))
    assert abs(np.log2(g / grid.best_gamma)) <= 1.0 + 1e-9


# ------------------------------------------------------------------ the estimator


def test_estimator_on_abalone_is_a_regressor():
    data = datasets.load("abalone")
    rng = np.random.default_rng(0)
    rows = rng.choice(data.X.shape[0], 600, replace=False)
    X, y = data.X[rows], data.y[rows]
    assert detect_task(y)[0] == "regression"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        est = KernelSelectionCV(random_state=0).fit(X, y)
    assert est.task_ == "regression"
    assert isinstance(est.best_estimator_[-1], kernelselect.KernelRidgeRegressor)
    assert est.best_estimator_[-1].fit_intercept
    assert est.score(X, y) > 0.4


def test_estimator_on_string_multiclass_labels_predicts_them():
    X, codes = blobs(150, 3, seed=8, spread=0.6)
    names = np.array(["setosa", "versicolor", "virginica"])[codes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        est = KernelSelectionCV(random_state=0).fit(X, names)
    assert est.task_ == "multiclass" and est.selection_.criteria == ["ekfold_multiclass"]
    assert est.classes_.tolist() == ["setosa", "versicolor", "virginica"]
    pred = est.predict(X)
    assert set(pred) <= set(names) and np.mean(pred == names) > 0.9
    binary = np.where(codes == 0, "benign", "malignant")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        est2 = KernelSelectionCV(random_state=0).fit(X, binary)
    assert est2.task_ == "binary" and set(est2.predict(X)) <= {"benign", "malignant"}
    forced = KernelSelectionCV(random_state=0, task="regression", gammas=[0.5, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        forced.fit(X, codes.astype(float))
    assert forced.task_ == "regression"


def test_select_kernel_string_labels_and_details():
    X, codes = blobs(90, 2, seed=9)
    y = np.array(["no", "yes"])[codes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        res = select_kernel(X, y, random_state=0, kernel="gaussian")
    assert res.details["classes"] == ["no", "yes"] and res.details["task"] == "binary"
    assert "alpha_rule" in res.details and "gamma_rule" in res.details


def test_estimator_selects_what_select_kernel_selects():
    rng = np.random.default_rng(11)
    X = 5.0 * rng.standard_normal((120, 3)) + 2.0          # units the scaler removes
    y = np.where(np.sin(X[:, 0] / 5.0) + 0.3 * rng.standard_normal(120) > 0, "yes", "no")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridEdgeWarning)
        res = select_kernel(X, y, random_state=0, kernel="gaussian")
        est = KernelSelectionCV(random_state=0).fit(X, y)
    assert est.selection_.criteria == res.criteria
    assert est.best_params_["gamma"] == pytest.approx(res.best_gamma, rel=1e-9)
    assert est.best_params_["alpha"] == pytest.approx(res.best_alpha, rel=1e-9)


def test_cli_reports_a_grid_edge_as_one_line(monkeypatch, capsys):
    real = kernelselect.select_kernel

    def edgy(*args, **kwargs):
        warnings.warn("eloo is best on the edge of the extended grid", GridEdgeWarning)
        return real(*args, **kwargs)

    monkeypatch.setattr(kernelselect, "select_kernel", edgy)
    code = cli.main(["select", "--dataset", "heart", "--gammas", "0.05,0.2", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0 and out.startswith("selected gamma=")
    # one line per warning, never a source listing (the two-point given grid also
    # warns on its own edge)
    lines = err.strip().splitlines()
    assert lines[0] == "kernelselect: warning: eloo is best on the edge of the extended grid"
    assert all(line.startswith("kernelselect: warning: ") for line in lines)


# ------------------------------------------------------------------ k-fold in closed form


@settings(deadline=None, max_examples=20)
@given(n=st.integers(10, 30), folds=st.integers(2, 6), seed=st.integers(0, 2**31),
       log_gamma=st.floats(-2, 1), log_alpha=st.floats(-4, 1), regression=st.booleans())
def test_ekfold_equals_refitting_every_fold(n, folds, seed, log_gamma, log_alpha, regression):
    from kernelselect.criteria import fold_labels

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = X[:, 0] + 0.3 * rng.standard_normal(n) if regression else np.where(
        X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    if not regression and abs(y.sum()) == n:
        y[0] = -y[0]
    gamma, alpha = 2.0 ** log_gamma, 2.0 ** log_alpha
    op = _exact_operator(X, y, gamma)
    strata = None if regression else (y > 0).astype(int)
    fold_of = fold_labels(n, folds, 7, strata)
    E = ref.kfold_lssvm_bruteforce(ref.kernel_matrix(X, X, gamma), y[:, None], alpha, fold_of)
    # four α, so the eigendecomposition path; one α, the Cholesky path
    for alphas in ([alpha, 2 * alpha, 5 * alpha, 10 * alpha], [alpha]):
        got = evaluate_criterion("ekfold", op, y, alphas, folds=folds, seed=7)
        assert got[0] == pytest.approx(np.mean(E ** 2), rel=1e-6)
    if not regression:
        rate = evaluate_criterion("ekfold_error_rate", op, y, [alpha], folds=folds, seed=7)[0]
        assert rate == pytest.approx(np.mean(y * (y - E[:, 0]) <= 0), abs=1e-12)


@settings(deadline=None, max_examples=10)
@given(n=st.integers(12, 30), classes=st.integers(3, 4), seed=st.integers(0, 2**31),
       log_gamma=st.floats(-2, 1), log_alpha=st.floats(-2, 1))
def test_ekfold_multiclass_equals_one_vs_rest_refits(n, classes, seed, log_gamma, log_alpha):
    from kernelselect.criteria import fold_labels, one_vs_rest

    X, labels, gamma, alpha, op = _multiclass_case(n, classes, seed, log_gamma, log_alpha)
    Y = one_vs_rest(labels)
    fold_of = fold_labels(n, 5, 0, np.argmax(Y, axis=1) * 2 + (Y[:, 0] > 0))
    E = ref.kfold_lssvm_bruteforce(ref.kernel_matrix(X, X, gamma), Y, alpha, fold_of)
    wrong = np.argmax(Y - E, axis=1) != np.argmax(Y, axis=1)
    got = evaluate_criterion("ekfold_multiclass", op, labels, [alpha, 3 * alpha, 9 * alpha,
                                                                 27 * alpha], loss="error_rate")
    assert got[0] == pytest.approx(np.mean(wrong), abs=1e-12)
    hybrid = evaluate_criterion("ekfold_multiclass", op, labels, [alpha])[0]  # its own loss
    assert np.mean(wrong) <= hybrid < np.mean(wrong) + 1.0 / n
    press = evaluate_criterion("ekfold_multiclass", op, labels, [alpha], loss="squared")[0]
    assert press == pytest.approx(np.mean(E ** 2), rel=1e-6)


def test_fold_labels_balanced_stratified_and_seeded():
    from kernelselect.criteria import fold_labels

    strata = np.repeat([0, 1, 2], [10, 20, 31])
    f = fold_labels(61, 5, 3, strata)
    assert np.array_equal(f, fold_labels(61, 5, 3, strata))
    assert not np.array_equal(f, fold_labels(61, 5, 4, strata))
    assert np.ptp(np.bincount(f)) <= 1
    for s in range(3):
        counts = np.bincount(f[strata == s], minlength=5)
        assert np.ptp(counts) <= 1                     # each class spread evenly


def test_ekfold_refuses_bad_parameters_and_low_rank_stand_ins():
    X, labels = blobs(20, 2, seed=1)
    op = _exact_operator(X, labels, 0.5)
    y = np.where(labels == 1, 1.0, -1.0)
    with pytest.raises(ValueError, match="folds must be an integer ≥ 2"):
        evaluate_criterion("ekfold", op, y, [1.0], folds=1)
    with pytest.raises(ValueError, match="seed must be an integer ≥ 0"):
        evaluate_criterion("ekfold", op, y, [1.0], seed=-1)
    with pytest.raises(ValueError, match="folds=21 is more than the 20 points"):
        evaluate_criterion("ekfold", op, y, [1.0], folds=21)
    with pytest.raises(ValueError, match="ekfold"):
        select_kernel(X, y, criterion="ekfold", approximation="nystrom", kernel="gaussian")


@pytest.mark.filterwarnings("ignore::kernelselect.GridEdgeWarning")
def test_default_criterion_is_kfold_on_the_exact_matrix_and_loo_beyond():
    X, labels = blobs(120, 2, seed=2)
    assert select_kernel(X, labels, random_state=0, kernel="gaussian").criteria == ["ekfold"]
    X3, labels3 = blobs(120, 3, seed=2)
    assert select_kernel(X3, labels3, random_state=0, kernel="gaussian").criteria == ["ekfold_multiclass"]
    assert select_kernel(X, labels, approximation="nystrom",
                         random_state=0, kernel="gaussian").criteria == ["eloo"]
    Xb, labelsb = blobs(450, 2, seed=2)
    assert select_kernel(Xb, labelsb, random_state=0, kernel="gaussian").criteria == ["eloo"]
