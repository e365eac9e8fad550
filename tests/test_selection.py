"""select_kernel and SelectionResult."""

import json
import time
import warnings

import numpy as np
import pytest

import kernelselect
from kernelselect.selection import _policy
from kernelselect import select_kernel
from kernelselect.kernels import median_heuristic_gamma
from kernelselect.operators import Approximation, get_approximation
from kernelselect.selection import default_gammas

import reference as ref

ALL = ["ree", "ipe", "c1", "gcv", "eloo", "kta", "ckta", "fsm", "mmd", "sm"]


def data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(np.sin(2 * X[:, 0]) + 0.3 * rng.standard_normal(n) > 0, 1.0, 0.0)
    return X, y


def test_curves_best_and_directions():
    X, y = data()
    gammas = 2.0 ** np.arange(-4, 3)
    alphas = [0.1, 1.0]
    res = select_kernel(X, y, gammas=gammas, alphas=alphas, criterion=ALL, approximation="exact",
                        standardize=False)
    assert res.criteria == ALL
    for name in ALL:
        assert res.curves[name].shape == (7, 2)
        d = res.directions[name]
        c = res.curves[name]
        i, j = np.unravel_index(np.argmin(c) if d == "min" else np.argmax(c), c.shape)
        assert res.best[name]["gamma"] == gammas[i] and res.best[name]["alpha"] == alphas[j]
        assert res.best[name]["value"] == c[i, j]
    for name in ["kta", "ckta", "fsm", "mmd", "sm"]:                     # α-independent
        np.testing.assert_array_equal(res.curves[name][:, 0], res.curves[name][:, 1])
    assert res.best_gamma == res.best["ree"]["gamma"] and res.best_alpha == res.best["ree"]["alpha"]
    assert res.directions["kta"] == "max" and res.directions["ree"] == "min"
    assert res.timings.shape == (7,) and np.all(res.timings > 0)
    assert res.details["n"] == 60 and res.details["approximation"] == "exact"
    # the curve is the formula on K, labels {0, 1} encoded as ±1
    ypm = np.where(y > 0, 1.0, -1.0)
    for i, g in enumerate(gammas):
        K = ref.kernel_matrix(X, X, g)
        assert np.isclose(res.curves["ree"][i, 1], ref.crit_ree(K, ypm, 1.0), rtol=1e-9)
        assert np.isclose(res.curves["ckta"][i, 0], ref.crit_ckta(K, ypm), rtol=1e-9)


def test_one_operator_per_gamma_shared_by_all_criteria():
    class Counting(Approximation):
        name = "counting"

        def __init__(self):
            self.builds = 0

        def build(self, X, y, gamma, *, kernel, state, workers):
            self.builds += 1
            return get_approximation("rff").build(X, y, gamma, kernel=kernel, state=self._st,
                                                  workers=workers)

        def prepare(self, X, y, *, kernel, random_state, workers):
            self._st = get_approximation("rff").prepare(X, y, kernel=kernel,
                                                        random_state=random_state, workers=workers)

    X, y = data(30)
    approx = Counting()
    select_kernel(X, y, gammas=[0.5, 1.0, 2.0], alphas=[0.1, 1, 10], criterion=ALL,
                  approximation=approx, random_state=0)
    assert approx.builds == 3


def test_default_grid_is_median_heuristic():
    X, y = data()
    res = select_kernel(X, y, criterion="kta", approximation="exact", random_state=0,
                        standardize=False)
    g0 = median_heuristic_gamma(X, "gaussian", np.random.default_rng(0))
    np.testing.assert_allclose(res.gammas, g0 * 2.0 ** np.arange(-7, 8))
    assert res.details["gamma0"] == g0
    np.testing.assert_allclose(default_gammas(X, random_state=0), res.gammas)
    lap = select_kernel(X, y, kernel="laplacian", criterion="kta", approximation="exact",
                        random_state=0, standardize=False)
    g0l = median_heuristic_gamma(X, "laplacian", np.random.default_rng(0))
    np.testing.assert_allclose(lap.gammas, g0l * 2.0 ** np.arange(-7, 8))


@pytest.mark.parametrize("approximation", [kernelselect.Nystroem(n_landmarks=20), "rff"])
def test_reproducible_with_random_state(approximation):
    X, y = data(80)
    kw = dict(criterion=["ree", "eloo", "kta"], approximation=approximation,
              alphas=[0.1, 1.0])
    a = select_kernel(X, y, random_state=3, **kw)
    b = select_kernel(X, y, random_state=3, **kw)
    c = select_kernel(X, y, random_state=4, **kw)
    for name in a.curves:
        np.testing.assert_array_equal(a.curves[name], b.curves[name])
    assert not np.array_equal(a.curves["ree"], c.curves["ree"])


def test_approximations_track_exact_on_a_small_problem():
    X, y = data(120, seed=1)
    gammas = 2.0 ** np.arange(-4, 3)
    exact = select_kernel(X, y, gammas=gammas, criterion="ree", approximation="exact")
    nys = select_kernel(X, y, gammas=gammas, criterion="ree",
                        approximation=kernelselect.Nystroem(n_landmarks=120), random_state=0)
    np.testing.assert_allclose(nys.curves["ree"], exact.curves["ree"], rtol=1e-6)


def test_standardize_equals_prescaled():
    X, y = data()
    X2 = X * np.array([10.0, 0.1, 3.0]) + 5.0
    Xs = (X2 - X2.mean(0)) / X2.std(0)
    a = select_kernel(X2, y, gammas=[0.3, 1.0], criterion="ree", approximation="exact", standardize=True)
    b = select_kernel(Xs, y, gammas=[0.3, 1.0], criterion="ree", approximation="exact")
    np.testing.assert_allclose(a.curves["ree"], b.curves["ree"], rtol=1e-10)


def test_regression_target_and_criterion_params():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(40)
    res = select_kernel(X, y, gammas=[0.5, 1.0], criterion=["ipe", "c1", "eloo"], approximation="exact", sigma=0.2,
                        standardize=False)
    K = ref.kernel_matrix(X, X, 0.5)
    assert np.isclose(res.curves["ipe"][0, 0], ref.crit_ipe(K, y, 1.0, 0.2), rtol=1e-9)
    assert np.isclose(res.curves["eloo"][0, 0], ref.crit_eloo(K, y, 1.0, "squared"), rtol=1e-9)
    assert res.details["criterion_params"]["c1"] == {"sigma": 0.2}


def test_result_exports():
    X, y = data(30)
    res = select_kernel(X, y, gammas=[0.5, 1.0, 2.0], alphas=[0.1, 1.0],
                        criterion=["ree", "kta"], approximation="nystrom", random_state=0)
    d = res.to_dict()
    assert json.loads(json.dumps(d))["best"]["ree"]["gamma"] == res.best["ree"]["gamma"]
    frame = res.to_frame()
    assert list(frame.columns) == ["level", "approximation", "n_landmarks", "n_rows", "gamma",
                                   "alpha", "ree", "kta"] and len(frame) == 6
    assert frame["n_rows"].isna().all()            # every row scored
    assert set(frame["level"]) == {0} and set(frame["approximation"]) == {"nystrom"}
    assert set(frame["n_landmarks"]) == {30}
    np.testing.assert_allclose(frame["ree"].to_numpy().reshape(3, 2), res.curves["ree"])
    assert len(res.levels) == 1 and res.levels[0].n_landmarks == 30
    np.testing.assert_array_equal(res.levels[0].curves["kta"], res.curves["kta"])
    assert json.loads(json.dumps(d))["levels"][0]["curves"]["kta"] == res.curves["kta"].tolist()
    text = repr(res)
    assert "ree" in text and "kta" in text and "nystrom" in text
    import matplotlib

    matplotlib.use("Agg")
    fig = res.plot()
    assert len(fig.axes) == 3                  # two panels and the α colour bar
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_progress_bar_runs(capsys):
    X, y = data(20)
    res = select_kernel(X, y, gammas=[0.5, 1.0], criterion="kta", approximation="exact", progress=True)
    assert res.curves["kta"].shape == (2, 1)


def test_streaming_exact_is_used_for_moment_criteria():
    X, y = data(30)
    res = select_kernel(X, y, gammas=[1.0], criterion=["kta", "sm"], approximation="exact")
    assert res.details["operators"][0]["method"] == "streaming"
    res = select_kernel(X, y, gammas=[1.0], criterion=["kta", "ree"], approximation="exact")
    assert res.details["operators"][0]["method"] == "dense"


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(X=np.zeros((2, 2)), y=[1, -1]), ValueError, "at least 3"),
    (dict(X=[[0.0], [np.nan], [1.0]], y=[1, -1, 1]), ValueError, "X contains NaN"),
    (dict(X=[[0.0], [np.inf], [1.0]], y=[1, -1, 1]), ValueError, "X contains inf"),
    (dict(y=np.r_[np.nan, np.ones(59)]), ValueError, "y contains NaN"),
    (dict(y=np.ones(5)), ValueError, "y has 5 entries"),
    (dict(gammas=[1.0, 0.0]), ValueError, "gammas must all be finite and > 0"),
    (dict(gammas=[-1.0]), ValueError, "gammas"),
    (dict(gammas=[np.inf]), ValueError, "gammas"),
    (dict(alphas=[0.0]), ValueError, "alphas must all be finite and > 0"),
    (dict(alphas=[]), ValueError, "alphas must be a non-empty"),
    (dict(y=np.ones(60)), ValueError, "y has a single value"),
    (dict(y=np.ones(60), criterion="fsm"), ValueError, "single value.*fsm"),
    (dict(y=np.arange(60) % 3, criterion=["ree", "mmd"]), ValueError, "3 distinct values.*mmd"),
    (dict(criterion="foo"), ValueError, r"not a known criterion; use one of c1, ckta, .*eloo, .*ree"),
    (dict(criterion=[]), ValueError, "at least one"),
    (dict(approximation="bar"), ValueError, "not a known approximation; use one of exact"),
    (dict(approximation=kernelselect.Exact(method="streaming"), criterion="ree"), ValueError,
     "criterion 'ree' cannot be computed with approximation .*streaming.*use one of exact"),
    (dict(approximation=kernelselect.Exact(method="streaming"), criterion="sm", h=0.1), ValueError,
     "criterion 'sm' cannot be computed"),
    (dict(kernel="poly"), ValueError, "kernel='poly' is not a known kernel"),
    (dict(sigma=0.1, criterion="kta"), TypeError, "none of the requested criteria"),
    (dict(workers=0), ValueError, "workers"),
])
def test_bad_inputs(kwargs, exc, match):
    X, y = data()
    args = dict(X=X, y=y, gammas=[1.0], approximation="exact")
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        select_kernel(args.pop("X"), args.pop("y"), **args)


def test_undefined_values_are_nan_and_skipped():
    X, y = data(20)
    X[:] = 0.0                                   # every point identical but one
    X[0, 0] = 1.0
    kw = dict(criterion=["ckta", "kta"], approximation="exact", kernel="laplacian")
    res = select_kernel(X, y, gammas=[1e-30, 1.0], **kw)
    # at γ = 1e-30, K = 11ᵀ in float64: ‖K_c‖_F = 0 to rounding and the Laplacian
    # kernel has no expansion to fall back on, so CKTA is undefined (NaN) there
    assert not np.isfinite(res.curves["ckta"][0, 0])
    assert np.isfinite(res.curves["ckta"][1, 0])
    assert res.best["ckta"]["gamma"] == 1.0 and res.best_gamma == 1.0
    # a selection is never NaN: no finite value anywhere raises, naming the criterion
    with pytest.raises(ValueError, match="criterion 'ckta' is NaN at every grid point"):
        select_kernel(X, y, gammas=[1e-30], **kw)
    # the Gaussian kernel's centred part at tiny γ is 2γ X_c X_cᵀ: CKTA is its limit
    res = select_kernel(X, y, gammas=[1e-30], criterion="ckta", approximation="exact")
    yc = y - y.mean()
    Xc = X - X.mean(axis=0)
    limit = (yc @ Xc) @ (Xc.T @ yc) / (np.linalg.norm(Xc.T @ Xc) * (yc @ yc))
    assert np.isclose(res.curves["ckta"][0, 0], limit, rtol=1e-12)


def test_workers_do_not_change_the_result():
    X, y = data(50)
    kw = dict(gammas=[0.5, 2.0], alphas=[0.1, 1.0], criterion=["ree", "eloo", "kta"],
              approximation=kernelselect.Nystroem(n_landmarks=30), random_state=1)
    a = select_kernel(X, y, workers=1, **kw)
    b = select_kernel(X, y, workers=-1, **kw)
    for name in a.curves:
        np.testing.assert_allclose(a.curves[name], b.curves[name], rtol=1e-10)


@pytest.mark.parametrize("change, message", [
    (dict(gammas=[-1.0, 1.0]), "gammas must be a non-empty 1-D array of finite values > 0"),
    (dict(alphas=[0.0, 1.0]), "alphas must be"),
    (dict(gammas=[[1.0, 2.0]]), "gammas must be"),
    (dict(curves={"ree": np.zeros((3, 2))}), r"curves\['ree'\] has shape \(3, 2\); it must be"),
    (dict(curves={}), "curves must be a non-empty dict"),
    (dict(directions={"ree": "down"}), "directions\\['ree'\\] must be 'min' or 'max'"),
    (dict(timings=[0.1]), "timings must hold one time"),
    (dict(details=[1]), "details must be a dict"),
])
def test_result_constructor_refuses_inconsistent_fields(change, message):
    args = dict(gammas=[0.5, 1.0], alphas=[0.1, 1.0, 10.0], curves={"ree": np.ones((2, 3))},
                directions={"ree": "min"}, timings=[0.1, 0.2], details={})
    args.update(change)
    with pytest.raises((ValueError, TypeError), match=message):
        kernelselect.SelectionResult(**args)
    good = dict(gammas=[0.5, 1.0], alphas=[0.1, 1.0, 10.0], curves={"ree": np.ones((2, 3))},
                directions={"ree": "min"}, timings=[0.1, 0.2], details={})
    assert kernelselect.SelectionResult(**good).best["ree"]["index"] == (0, 0)


def test_a_criterion_name_means_one_loss():
    """eloo and ekfold are the squared loss (PRESS) for every target, the defaults'
    loss; the 0-1 loss has its own names; the multi-class forms break ties by PRESS."""
    X, y = data(60)
    common = dict(approximation="exact", gammas=[0.3, 1.0], alphas=[0.1, 1.0])
    res = select_kernel(X, y, criterion=["eloo", "eloo_error_rate", "ekfold",
                                         "ekfold_error_rate"], **common)
    squared = select_kernel(X, y, criterion=["eloo", "ekfold"], loss="squared", **common)
    rate = select_kernel(X, y, criterion=["eloo", "ekfold"], loss="error_rate", **common)
    for name in ("eloo", "ekfold"):
        np.testing.assert_array_equal(res.curves[name], squared.curves[name])
        np.testing.assert_array_equal(res.curves[f"{name}_error_rate"], rate.curves[name])
        assert res.details["criterion_params"][name]["loss"] == "squared"
    assert "loss" not in res.details["criterion_params"]["eloo_error_rate"]
    with pytest.raises(TypeError, match="no parameter .loss.*eloo_error_rate"):
        select_kernel(X, y, criterion="eloo_error_rate", loss="squared", **common)
    for name in ("eloo_multiclass", "ekfold_multiclass"):
        assert kernelselect.get_criterion(name).params["loss"] == "hybrid"
    # what the defaults run is what the name runs
    assert _policy.default_criterion("binary", 5000)[1] == {"loss": "squared"}
    assert kernelselect.get_criterion("eloo").params["loss"] == "squared"
    assert _policy.default_criterion("multiclass", 5000)[1] == {
        "loss": kernelselect.get_criterion("eloo_multiclass").params["loss"]}


def test_the_old_automatic_loss_still_works_and_says_it_is_deprecated():
    X, y = data(60)
    common = dict(approximation="exact", gammas=[0.3, 1.0], alphas=[0.1, 1.0])
    rate = select_kernel(X, y, criterion="eloo_error_rate", **common)
    with pytest.warns(DeprecationWarning, match="loss='auto' is deprecated.*eloo_error_rate"):
        old = select_kernel(X, y, criterion="eloo", loss="auto", **common)
    np.testing.assert_array_equal(old.curves["eloo"], rate.curves["eloo_error_rate"])


def test_unknown_criterion_names_every_accepted_name():
    with pytest.raises(ValueError, match="use one of .*eloo_error_rate.*'auto' .*'cv'"):
        kernelselect.get_criterion("elo")
    with pytest.raises(ValueError, match="'auto' stands alone"):
        select_kernel(*data(20), criterion=["auto", "kta"])


def test_reports_carry_the_loss():
    X, y = data(60)
    res = select_kernel(X, y, criterion=["eloo", "eloo_error_rate", "kta"],
                        approximation="exact", gammas=[0.3, 1.0], alphas=[0.1, 1.0])
    text = repr(res)
    assert "eloo (squared loss)" in text and "eloo_error_rate " in text
    frame = res.to_frame()
    assert frame.attrs["criterion_params"]["eloo"]["loss"] == "squared"
    from kernelselect.selection._plotting import criterion_label

    assert criterion_label(res, "eloo") == "eloo, squared loss"
    assert criterion_label(res, "eloo_error_rate") == "eloo_error_rate"


def _timed_selection(X, y, **kwargs):
    t0 = time.perf_counter()
    res = select_kernel(X, y, **kwargs)
    return res, time.perf_counter() - t0


def test_total_time_counts_every_level_and_the_refinement():
    """Beyond the exact range the search runs several Nyström levels: total_time is
    the whole call (at least every level's operator time plus the refinement, at most
    the wall time around the call), level_times keeps each level's."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((900, 4))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(900)
    res, wall = _timed_selection(X, y, random_state=0, refine=True, kernel="gaussian")
    assert len(res.levels) >= 2
    np.testing.assert_allclose(res.level_times, [lv.timings.sum() for lv in res.levels])
    inner = res.level_times.sum() + res.details["refine"]["seconds"]
    assert inner <= res.total_time <= wall
    assert res.total_time > res.timings.sum()
    assert f"{res.total_time:.3g} s" in repr(res)


def test_total_time_of_the_per_feature_search_includes_its_start():
    """Other data and kernel="ard": the isotropic start and the per-feature search."""
    rng = np.random.default_rng(12)
    X = rng.standard_normal((150, 3))
    y = np.where(X[:, 0] - 0.5 * X[:, 2] > 0, "a", "b")
    res, wall = _timed_selection(X, y, kernel="ard", random_state=0)
    assert res.details["ard"]["seconds"] + res.timings.sum() <= res.total_time <= wall
    # a result built by hand: the time of its levels
    built = kernelselect.SelectionResult(res.gammas, res.alphas, res.curves, res.directions, res.timings,
                            {})
    assert built.total_time == pytest.approx(res.timings.sum())


def test_given_gamma_grid_with_the_best_on_its_edge_warns():
    """A user grid whose best point is on an edge warns as the library's own grids do
    (GridEdgeWarning), naming the argument and the direction to extend it."""
    rng = np.random.default_rng(21)
    X = rng.standard_normal((100, 2))
    y = np.sin(2 * X[:, 0]) + 0.05 * rng.standard_normal(100)
    with pytest.warns(kernelselect.GridEdgeWarning,
                      match=r"given grid.*extend gammas= above the largest value 0\.001 "
                            r"\(gamma_high\)"):
        res = select_kernel(X, y, gammas=[1e-4, 1e-3], random_state=0)
    assert "gamma_high" in res.details["edges"]
    g0 = median_heuristic_gamma(X)
    with warnings.catch_warnings():                    # an interior best: silent
        warnings.simplefilter("error")
        res = select_kernel(X, y, gammas=g0 * 2.0 ** np.arange(-4, 5), random_state=0)
    assert not any(e.startswith("gamma") for e in res.details["edges"])


def test_given_alpha_grid_with_the_best_on_its_edge_warns_on_class_labels():
    """Other data: class labels, a given α grid far too large (the best is its
    smallest α) with the automatic γ grid."""
    rng = np.random.default_rng(22)
    X = rng.standard_normal((120, 3))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4, 1, -1)
    with pytest.warns(kernelselect.GridEdgeWarning,
                      match=r"extend alphas= below the smallest value 1000 \(alpha_low\)"):
        res = select_kernel(X, y, alphas=[1e3, 1e4], random_state=0)
    assert "alpha_low" in res.details["edges"]
