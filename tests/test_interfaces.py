"""The public API follows the scikit-learn conventions and refuses loose input
clearly: parameter protocol of the approximations, sparse and masked input, bool
flags and seeds, unknown keywords."""

import numpy as np
import pytest

pytest.importorskip("sklearn")
import scipy.sparse  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402

import kernelselect as ks  # noqa: E402
from kernelselect import lowlevel  # noqa: E402

APPROXIMATIONS = [ks.Exact, ks.Nystroem, ks.RFF, ks.MCM, ks.RandomMCM, ks.ProportionalNystroem]


def binary(n=90, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, 0)


# --------------------------------------------------------------- parameter protocol


def test_clone_estimator_with_approximation_object():
    est = ks.LSSVMClassifier(approximation=ks.Nystroem(n_landmarks=50))
    copy = clone(est)
    assert copy.approximation is not est.approximation
    assert copy.approximation == est.approximation
    assert copy.get_params()["approximation__n_landmarks"] == 50


@pytest.mark.parametrize("cls", APPROXIMATIONS)
def test_approximation_parameter_protocol(cls):
    a = cls()
    params = a.get_params(deep=True)
    assert params == a.get_params(deep=False)
    assert set(params) and all(not k.startswith("_") for k in params)
    b = clone(a)
    assert b == a and b is not a and type(b) is cls
    key = "random_state" if "random_state" in params else next(iter(params))
    value = 7 if key == "random_state" else params[key]
    assert b.set_params(**{key: value}) is b
    assert getattr(b, key) == value
    with pytest.raises(ValueError, match="no parameter 'nonsense'"):
        b.set_params(nonsense=1)
    assert repr(cls()) == f"{cls.__name__}()"


def test_approximation_equality_and_repr():
    a = ks.Nystroem(n_landmarks=20, landmarks=None)
    assert a == ks.Nystroem(n_landmarks=20)
    assert a != ks.Nystroem(n_landmarks=21)
    assert a != ks.RFF()
    assert ks.Nystroem(landmarks=np.arange(3)) == ks.Nystroem(landmarks=np.arange(3))
    assert ks.Nystroem(landmarks=np.arange(3)) != ks.Nystroem(landmarks=np.arange(4))
    assert repr(a) == "Nystroem(n_landmarks=20)"
    assert len({a, ks.Nystroem(n_landmarks=20)}) == 1


def test_cross_val_score_and_grid_search_with_approximation_objects():
    X, y = binary()
    est = ks.LSSVMClassifier(gamma=0.5, approximation=ks.Nystroem(n_landmarks=20, random_state=0))
    scores = cross_val_score(est, X, y, cv=3)
    assert scores.shape == (3,) and np.all(scores > 0.7)
    grid = GridSearchCV(est, [{"approximation__n_landmarks": [5, 40]},
                              {"approximation": [ks.RFF(n_features=60, random_state=0), "exact"]}],
                        cv=3).fit(X, y)
    assert set(grid.cv_results_["params"][0]) == {"approximation__n_landmarks"}
    assert grid.best_score_ > 0.7
    # the user's instance is never changed by fitting clones of it
    assert est.approximation == ks.Nystroem(n_landmarks=20, random_state=0)


def test_select_kernel_leaves_the_callers_approximation_untouched():
    X, y = binary()
    exact = ks.Exact()
    ks.select_kernel(X, y, approximation=exact, criterion="kta", gammas=[0.5])
    assert exact._needs is None and exact == ks.Exact()
    # the same instance then serves a criterion that needs the dense operator
    res = ks.select_kernel(X, y, approximation=exact, criterion="ree", gammas=[0.5])
    assert np.isfinite(res.best_gamma)


# --------------------------------------------------------------- sparse and masked input


@pytest.mark.parametrize("call", [
    lambda X, y: ks.select_kernel(X, y),
    lambda X, y: ks.LSSVMClassifier().fit(X, y),
    lambda X, y: ks.KernelRidgeRegressor().fit(X, y.astype(float)),
    lambda X, y: ks.KernelSelectionCV().fit(X, y),
    lambda X, y: ks.DINystroem(n_components=5).fit(X, y),
    lambda X, y: ks.DIRandomFourierFeatures(n_components=5).fit(X, y),
    lambda X, y: ks.fit_lssvm(X, y, 0.5),
    lambda X, y: lowlevel.kernel_block(X, X, 0.5),
], ids=["select_kernel", "LSSVMClassifier", "KernelRidgeRegressor", "KernelSelectionCV",
        "DINystroem", "DIRandomFourierFeatures", "fit_lssvm", "kernel_block"])
def test_sparse_and_masked_input_refused_with_the_fix(call):
    X, y = binary()
    with pytest.raises(TypeError, match=r"scipy.sparse csr_matrix.*X.toarray\(\)"):
        call(scipy.sparse.csr_matrix(X), y)
    masked = np.ma.masked_array(X)
    masked[4, 1] = np.ma.masked
    with pytest.raises(ValueError, match="masked array with 1 masked entries"):
        call(masked, y)


def test_masked_array_without_masked_entries_is_its_data():
    X, y = binary()
    a = ks.select_kernel(np.ma.masked_array(X), y, criterion="ree", approximation="exact",
                         random_state=0)
    b = ks.select_kernel(X, y, criterion="ree", approximation="exact", random_state=0)
    np.testing.assert_array_equal(a.curves["ree"], b.curves["ree"])


# --------------------------------------------------------------- loose flags and keywords


@pytest.mark.parametrize("value", ["no", "False", 0, 1, None])
def test_standardize_must_be_a_bool(value):
    X, y = binary()
    with pytest.raises(TypeError, match="standardize must be True or False"):
        ks.select_kernel(X, y, standardize=value)


@pytest.mark.parametrize("value", [True, False, np.True_])
def test_random_state_refuses_bools(value):
    X, y = binary()
    with pytest.raises(TypeError, match="random_state .* bool"):
        ks.select_kernel(X, y, random_state=value)
    with pytest.raises(TypeError, match="random_state .* bool"):
        ks.LSSVMClassifier(gamma=0.5, approximation="nystrom", random_state=value).fit(X, y)


def test_n_jobs_points_to_workers():
    X, y = binary()
    with pytest.raises(TypeError, match=r"select_kernel has no parameter 'n_jobs'.*workers=N"):
        ks.select_kernel(X, y, n_jobs=2)
    with pytest.raises(TypeError, match=r"no parameter 'bogus'.*they take: .*sigma"):
        ks.select_kernel(X, y, criterion="ipe", bogus=2)


@pytest.mark.parametrize("labels", [
    [1, np.nan, 1, 2], np.array([1, np.nan, 1, 2], dtype=object),
    np.array(["a", None, "b", "a"], dtype=object), [1.0, np.inf, 2.0, 2.0],
])
def test_kernel_sums_refuses_missing_class_labels(labels):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match="labels contains"):
        lowlevel.kernel_sums(X, 0.5, labels=labels)


# --------------------------------------------------------------- messages that name the fix


def test_npz_problems_named(tmp_path):
    from kernelselect import datasets

    rng = np.random.default_rng(0)
    X = rng.standard_normal((160, 3))
    y = np.sign(X[:, 0])
    cases = {
        "empty.npz": (lambda p: p.write_bytes(b""), "the file is empty"),
        "random.npz": (lambda p: p.write_bytes(rng.bytes(500)), "not an .npz archive"),
        "single.npz": (lambda p: p.write_bytes(b"\x93NUMPY" + bytes(100)), "a single .npy array"),
        "y2d.npz": (lambda p: np.savez(p, X=X, y=np.column_stack([y, y])),
                    r"y must be 1-D of shape \(n,\).*\(160, 2\)"),
        "complex.npz": (lambda p: np.savez(p, X=X + 1j, y=y), "X holds complex numbers"),
        "complex_y.npz": (lambda p: np.savez(p, X=X, y=y + 0j), "y holds complex numbers"),
        "objects.npz": (lambda p: np.savez(p, X=X.astype(object), y=y),
                        "array of Python objects"),
        "text.npz": (lambda p: np.savez(p, X=X.astype(str), y=y), "X must hold numbers"),
    }
    for name, (make, message) in cases.items():
        path = tmp_path / name
        make(path)
        with pytest.raises(ValueError, match=message) as info:
            datasets.load_npz(path)
        assert name in str(info.value)
        assert "allow_pickle" not in str(info.value)
    np.savez(tmp_path / "column.npz", X=X, y=y[:, None])       # (n, 1) is one target
    assert datasets.load_npz(tmp_path / "column.npz").y.shape == (160,)


def test_grid_helpers_name_the_argument():
    X = np.random.default_rng(0).standard_normal((160, 3))
    with pytest.raises(ValueError, match=r"1000000-level grid .*use levels ≤ 6"):
        lowlevel.choose_grid(100, 10**6)
    for shape in [(2, 2), (3, 5), (3,)]:
        with pytest.raises(ValueError, match=r"directions must have shape \(d, p\) = \(3, 3\)"):
            lowlevel.grid_order(X, [4, 4, 10], directions=np.ones(shape))
    with pytest.raises(ValueError, match="directions contains NaN"):
        lowlevel.grid_order(X, [4, 4, 10], directions=np.full((3, 3), np.nan))
    order = lowlevel.grid_order(X, [4, 4, 10], directions=np.eye(3))
    assert np.array_equal(np.sort(order), np.arange(160))


def test_singular_ridge_system_names_alpha_and_duplicate_rows():
    X, y = binary(40)
    Xd, yd = np.vstack([X[:20], X[:20]]), np.concatenate([y[:20], y[:20]])
    for call in (lambda: ks.fit_krr(Xd, yd, 1.0, alpha=1e-300),
                 lambda: ks.KernelRidgeRegressor(gamma=1.0, alpha=1e-300).fit(Xd, yd)):
        with pytest.raises(ValueError, match=r"alpha=1e-300.*20 duplicate row\(s\).*larger alpha"):
            call()
