"""Loose flags, containers and types at the public boundary: each is used as meant or
refused with a message naming the argument (and the fix)."""

import warnings

import numpy as np
import pytest

import kernelselect
from kernelselect import Nystroem, select_kernel
from kernelselect.criteria import check_compatible, evaluate_criterion
from kernelselect.kernels import median_heuristic_gamma, sample_frequencies

from reference import kernel_matrix


def _data(n=90, d=3, seed=0, shift=0.0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * scale + shift
    y = np.sign(X[:, 0] - shift + 0.2 * rng.standard_normal(n))
    return X, y


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kernelselect.GridEdgeWarning)
        yield


# --------------------------------------------------------------------------- landmarks


@pytest.mark.parametrize("scale, shift", [(1.0, 0.0), (10.0, 5.0), (1e-120, 3e-120), (1e150, 0.0)])
def test_landmark_points_are_standardised_like_X(scale, shift):
    """Landmark points in X's units give the curves of the same rows given by index."""
    X, y = _data(scale=scale, shift=shift)
    idx = np.arange(0, X.shape[0], 4)
    kw = dict(criterion="kta", random_state=0, gammas=[0.05, 0.2, 1.0, 4.0])
    by_index = select_kernel(X, y, approximation=Nystroem(landmarks=idx), **kw)
    by_points = select_kernel(X, y, approximation=Nystroem(landmarks=X[idx]), **kw)
    np.testing.assert_allclose(by_points.curves["kta"], by_index.curves["kta"], rtol=1e-12)
    assert np.ptp(by_points.curves["kta"]) > 1e-3                 # not a flat curve


def test_landmark_points_are_standardised_on_dask():
    da = pytest.importorskip("dask.array")
    X, y = _data(scale=10.0, shift=5.0)
    idx = np.arange(0, X.shape[0], 4)
    kw = dict(criterion="kta", random_state=0, gammas=[0.05, 0.2, 1.0, 4.0])
    ref = select_kernel(X, y, approximation=Nystroem(landmarks=idx), **kw)
    got = select_kernel(da.from_array(X, chunks=30), da.from_array(y, chunks=30),
                        approximation=Nystroem(landmarks=X[idx]), **kw)
    np.testing.assert_allclose(got.curves["kta"], ref.curves["kta"], rtol=1e-9)


def test_rescaled_leaves_the_callers_instance_alone():
    X, _ = _data()
    approx = Nystroem(landmarks=X[:5])
    other = approx.rescaled(lambda P: P * 2.0)
    assert other is not approx
    np.testing.assert_array_equal(approx.landmarks, X[:5])
    np.testing.assert_array_equal(other.landmarks, 2.0 * X[:5])
    assert Nystroem(landmarks=np.arange(5)).rescaled(lambda P: P * 2.0).landmarks.tolist() == \
        list(range(5))


# --------------------------------------------------------------------------- loose flags


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(refine="no"), TypeError, "refine must be True or False"),
    (dict(refine=1), TypeError, "refine must be True or False"),
    (dict(standardize="no"), TypeError, "standardize must be True or False"),
    (dict(gammas=True), TypeError, "gammas must be a positive number"),
    (dict(gammas="1.0"), TypeError, "gammas must be a positive number"),
    (dict(gammas=[True, 2.0]), TypeError, "gammas must hold positive numbers"),
    (dict(alphas=np.array([True])), TypeError, "alphas must be a positive number"),
    (dict(alphas=[1.0, [2.0]]), ValueError, "alphas is ragged"),
    (dict(workers=True), TypeError, "workers must be an integer"),
    (dict(progress="yes"), ValueError, "progress must be True, False"),
])
def test_loose_flags_are_refused(kwargs, exc, match):
    X, y = _data()
    args = dict(gammas=[1.0], alphas=[1.0], approximation="exact")
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        select_kernel(X, y, **args)


def test_refine_false_and_true_are_honoured():
    X, y = _data()
    kw = dict(gammas=[0.25, 1.0, 4.0], approximation="exact", random_state=0)
    assert "refine" not in select_kernel(X, y, refine=False, **kw).details
    assert "refine" in select_kernel(X, y, refine=np.True_, **kw).details


def test_masked_targets_are_refused_like_masked_X():
    X, y = _data()
    ym = np.ma.masked_array(y, mask=np.arange(y.size) < 3)
    with pytest.raises(ValueError, match="y is a masked array with 3 masked entries"):
        select_kernel(X, ym, gammas=[1.0])
    # no masked entry: used as the plain array
    full = select_kernel(X, np.ma.masked_array(y), gammas=[1.0], approximation="exact")
    assert np.all(np.isfinite(full.curves[full.criteria[0]]))


def test_error_rate_loss_on_a_real_target_is_refused():
    X, _ = _data()
    y = X[:, 0] + 0.1 * X[:, 1]
    with pytest.raises(ValueError, match="loss='error_rate'.*real target.*loss='squared'"):
        select_kernel(X, y, criterion="eloo", loss="error_rate", gammas=[1.0])
    with pytest.raises(ValueError, match="loss='hybrid'"):
        select_kernel(X, y, criterion="eloo", loss="hybrid", gammas=[1.0])
    with pytest.raises(ValueError, match="ekfold with loss='error_rate'"):
        select_kernel(X, y, criterion="ekfold", loss="error_rate", gammas=[1.0],
                      approximation="exact")


# --------------------------------------------------------------------------- containers


def test_ragged_X_is_named():
    with pytest.raises(ValueError, match="X is ragged"):
        select_kernel([[1.0, 2.0], [3.0], [1.0, 1.0]], [1, -1, 1])


@pytest.mark.parametrize("dtype", ["Int64", "Float64"])
def test_pandas_nullable_frames(dtype):
    pd = pytest.importorskip("pandas")
    X, y = _data()
    Xq = np.round(X * 10)
    frame = pd.DataFrame(Xq).astype(dtype)
    kw = dict(gammas=[0.5, 1.0], approximation="exact", random_state=0)
    got = select_kernel(frame, pd.Series(y).astype("Int64"), **kw)
    ref = select_kernel(Xq, y, **kw)
    np.testing.assert_allclose(got.curves[got.criteria[0]], ref.curves[ref.criteria[0]])
    frame.iloc[2, 1] = pd.NA
    with pytest.raises(ValueError, match=r"X contains 1 missing value\(s\) \(pandas NA\)"):
        select_kernel(frame, y, **kw)
    ys = pd.Series(y).astype("Int64")
    ys.iloc[0] = pd.NA
    with pytest.raises(ValueError, match="y contains 1 missing value"):
        select_kernel(Xq, ys, **kw)


def test_text_targets_for_a_regressor_are_named():
    from kernelselect.models import KernelRidgeRegressor

    X, _ = _data(n=20)
    with pytest.raises(TypeError, match="y must hold real numbers for KernelRidgeRegressor"):
        KernelRidgeRegressor(gamma=0.1, alpha=1.0).fit(X, np.array(["a", "b"] * 10))


# --------------------------------------------------------------------------- primitives


def test_median_heuristic_arguments():
    X, _ = _data()
    with pytest.raises(ValueError, match="n_pairs must be an integer ≥ 1"):
        median_heuristic_gamma(X, n_pairs=0)
    with pytest.raises(TypeError, match="n_pairs must be an integer"):
        median_heuristic_gamma(X, n_pairs=2.5)
    with pytest.raises(TypeError, match="random_state"):
        median_heuristic_gamma(X, rng="seed")
    with pytest.raises(ValueError, match="at least 2 rows"):
        median_heuristic_gamma(np.ones((1, 3)))


def test_sample_frequencies_arguments():
    with pytest.raises(TypeError, match="n_features_in must be an integer"):
        sample_frequencies("gaussian", "3", 10, 0)
    with pytest.raises(TypeError, match="n_features must be an integer"):
        sample_frequencies("gaussian", 3, 10.5, 0)
    with pytest.raises(TypeError, match="random_state"):
        sample_frequencies("gaussian", 3, 10, "x")
    with pytest.raises(ValueError, match=r"W0 \(10 × 10000000000\).*needs about 820 GiB.*n_features"):
        sample_frequencies("gaussian", 10, 10**10, 0)
    W0, b = sample_frequencies("gaussian", 3, 10, 0)              # a seed is a random_state
    W1, b1 = sample_frequencies("gaussian", 3, 10, np.random.default_rng(0))
    np.testing.assert_array_equal(W0, W1)
    assert W0.shape == (3, 10) and b.shape == (10,)


def test_evaluate_criterion_and_check_compatible_types():
    X, y = _data(n=30)
    with pytest.raises(TypeError, match="operator must be a KernelOperator"):
        evaluate_criterion("kta", "not an operator", y, [1.0])
    with pytest.raises(TypeError, match="criterion must be a name"):
        evaluate_criterion(3, None, y, [1.0])
    check_compatible("kta", "exact")                              # a name is looked up
    with pytest.raises(ValueError, match="not a known approximation"):
        check_compatible("kta", "nope")
    with pytest.raises(TypeError, match="approximation must be a name or an Approximation"):
        check_compatible("kta", 5)
    with pytest.raises(ValueError, match=r"criterion= one of .*random_kta_row_2g"):
        check_compatible("eloo", "random_mcm")


# --------------------------------------------------------------------------- valid input


@pytest.mark.parametrize("criterion", ["kta", "ckta"])
@pytest.mark.parametrize("n", [5, 30, 60, 64])
def test_alignments_on_small_real_targets(criterion, n):
    """A real target with n ≤ 64 points, each its own value: the probe basis has more
    columns than rows."""
    rng = np.random.default_rng(n)
    X = rng.standard_normal((n, 2))
    y = X[:, 0] + 0.3 * rng.standard_normal(n)
    gammas = [0.1, 1.0]
    res = select_kernel(X, y, criterion=criterion, approximation="exact", gammas=gammas,
                        standardize=False)
    for i, g in enumerate(gammas):
        K = kernel_matrix(X, X, g, "gaussian")
        if criterion == "kta":
            want = y @ K @ y / (np.linalg.norm(K) * (y @ y))
        else:
            H = np.eye(n) - 1.0 / n
            Kc, yc = H @ K @ H, y - y.mean()
            want = yc @ Kc @ yc / (np.linalg.norm(Kc) * (yc @ yc))
        np.testing.assert_allclose(res.curves[criterion][i, 0], want, rtol=1e-8)


def test_default_criterion_follows_the_approximation():
    X, y = _data(n=120)
    res = select_kernel(X, y, approximation="random_mcm", random_state=0)
    assert res.criteria == ["random_kta_row_2g"]
    with pytest.raises(ValueError, match=r"criterion 'eloo' cannot be computed.*use one of "
                       r"exact.*criterion= one of .*random_eloo"):
        select_kernel(X, y, approximation="random_mcm", criterion="eloo")


def test_default_grid_is_a_function_of_X():
    """random_state=None: the γ grid is the same on every call, and the one of
    random_state=0 (the command line's default seed)."""
    X, y = _data(n=400)
    g = [kernelselect.selection.default_gammas(X) for _ in range(2)]
    np.testing.assert_array_equal(g[0], g[1])
    np.testing.assert_array_equal(g[0], kernelselect.selection.default_gammas(X, random_state=0))
    a = select_kernel(X, y, approximation="exact", criterion="kta").details["gamma0"]
    b = select_kernel(X, y, approximation="exact", criterion="kta").details["gamma0"]
    c = select_kernel(X, y, approximation="exact", criterion="kta",
                      random_state=0).details["gamma0"]
    assert a == b == c


def test_selection_cv_scales_landmark_points_like_X():
    from kernelselect import KernelSelectionCV
    from kernelselect.models import LSSVMClassifier

    X, y = _data(scale=10.0, shift=5.0)
    idx = np.arange(0, X.shape[0], 4)
    kw = dict(criterion="kta", gammas=[0.05, 0.2, 1.0, 4.0])
    by_index = KernelSelectionCV(approximation=Nystroem(landmarks=idx), **kw).fit(X, y)
    by_points = KernelSelectionCV(approximation=Nystroem(landmarks=X[idx]), **kw).fit(X, y)
    np.testing.assert_allclose(by_points.cv_results_["criterion_value"],
                               by_index.cv_results_["criterion_value"], rtol=1e-10)
    est = LSSVMClassifier(approximation=Nystroem(landmarks=X[idx]))
    fitted = KernelSelectionCV(estimator=est, gammas=[0.2, 1.0]).fit(X, y)
    np.testing.assert_array_equal(est.approximation.landmarks, X[idx])   # the user's, as given
    refit = fitted.best_estimator_.steps[1][1].approximation.landmarks
    np.testing.assert_allclose(refit, fitted.best_estimator_.steps[0][1].transform(X[idx]))


# --- messages that list what is accepted and name the culprit ------------------------------

@pytest.mark.parametrize("call, accepted", [
    (lambda X, y, k: select_kernel(X, y, kernel=k), "gaussian, laplacian, ard, auto"),
    (lambda X, y, k: kernelselect.KernelRidgeRegressor(kernel=k).fit(X, y),
     "gaussian, laplacian, ard, auto"),
    (lambda X, y, k: kernelselect.fit_krr(X, y, 1.0, 0.1, kernel=k), "gaussian, laplacian, ard"),
    (lambda X, y, k: kernelselect.lowlevel.kernel_block(X, X, 1.0, kernel=k),
     "gaussian, laplacian, ard"),
    (lambda X, y, k: median_heuristic_gamma(X, kernel=k), "gaussian, laplacian"),
])
@pytest.mark.parametrize("name", ["nope", "polynomial"])
def test_unknown_kernel_lists_every_name_its_entry_point_takes(call, accepted, name):
    X, y = _data(n=30)
    with pytest.raises(ValueError, match=rf"kernel='{name}' is not a known kernel; use one of "
                                         rf"{accepted} \('rbf'"):
        call(X, y, name)


@pytest.mark.parametrize("returned", [7, 1 + 2])
def test_plug_in_criterion_with_the_wrong_number_of_values_is_named(returned):
    X, y = _data(n=40)
    name = f"test_wrong_length_{returned}"
    kernelselect.criteria.register_criterion(kernelselect.criteria.Criterion(
        name, "min", "moments", "any", True, lambda op, y, alphas: np.ones(returned)))
    try:
        with pytest.raises(ValueError, match=rf"criterion '{name}' returned an array of shape "
                                             rf"\({returned},\) for 2 values of alpha; its "
                                             r"function must return shape \(2,\)"):
            select_kernel(X, y, criterion=name, gammas=[0.5, 1.0], alphas=[0.1, 1.0])
        # one value per α, or a single value, is taken
        with pytest.raises(ValueError, match=r"returned an array of shape \(\d+,\) for 4"):
            evaluate_criterion(name, kernelselect.Exact().build(X, y, 0.5, kernel="gaussian",
                                                                state=None, workers=None),
                               y, [1.0, 2.0, 3.0, 4.0] if returned != 4 else [1.0])
    finally:
        kernelselect.criteria.unregister_criterion(name)


@pytest.mark.parametrize("values", [lambda a: np.arange(a.size, dtype=float), lambda a: 3.0,
                                    lambda a: np.array([3.0])])
def test_plug_in_criterion_of_the_right_shape_is_taken(values):
    X, y = _data(n=40)
    crit = kernelselect.criteria.Criterion("test_right_shape", "min", "moments", "any", True,
                                           lambda op, y, alphas: values(alphas))
    op = kernelselect.Exact().build(X, y, 0.5, kernel="gaussian", state=None, workers=None)
    out = crit(op, y, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(out, np.broadcast_to(values(np.zeros(3)), (3,)))


@pytest.mark.parametrize("operator", ["nope", np.eye(3), None])
def test_operator_di_names_its_operator(operator):
    X, y = _data(n=30)
    with pytest.raises(TypeError, match=r"operator_di: operator must be a KernelOperator, "
                                        r"built by an approximation"):
        kernelselect.di.operator_di(operator=operator, y=y)
    with pytest.raises(TypeError, match=r"criterion 'kta': operator must be a KernelOperator"):
        kernelselect.get_criterion("kta")(operator, y, [1.0])
