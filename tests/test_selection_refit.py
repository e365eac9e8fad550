"""The selection estimators select and refit the machine as it was passed: the
criterion scores the constant term the refit fits, and a target that is mostly its
mean warns a machine without intercept."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import train_test_split

from kernelselect import KernelRidgeRegressor, KernelSelectionCV, KernelSelectionRegressor, datasets

import reference as ref


def _halves(name, rows=None):
    data = datasets.load(name)
    X, y = data.X, data.y
    if rows is not None:
        X, y = X[:rows], y[:rows]
    return train_test_split(X, y, test_size=0.5, random_state=0)


@pytest.mark.parametrize("Estimator", [KernelSelectionCV, KernelSelectionRegressor])
def test_machine_without_intercept_is_selected_for_itself_winequality(Estimator):
    """KernelRidgeRegressor() (no intercept) on winequality_red, a 50/50 split: the
    selection scores that machine (GCV) instead of the LSSVM with bias, so the refit
    predicts as well as the default (it scored R² 0.033 against 0.330)."""
    Xtr, Xte, ytr, yte = _halves("winequality_red")
    default = Estimator(random_state=0).fit(Xtr, ytr)
    with pytest.warns(UserWarning, match="fit_intercept='mean'"):     # y: 5.7 ± 0.8
        given = Estimator(KernelRidgeRegressor(), random_state=0).fit(Xtr, ytr)
    assert given.selection_.criteria == ["gcv"]
    assert "fit_intercept=False" in given.selection_.details["criterion_rule"]
    assert given.best_estimator_[-1].fit_intercept is False          # refit as configured
    r2 = given.score(Xte, yte)
    assert r2 > 0.25 and r2 > default.score(Xte, yte) - 0.05
    # the intercept forms that the default criteria score keep them
    for form in (True, "mean"):
        sel = Estimator(KernelRidgeRegressor(fit_intercept=form), random_state=0).fit(Xtr, ytr)
        assert sel.selection_.criteria == ["eloo"]
        assert sel.best_estimator_[-1].fit_intercept == form


def test_machine_without_intercept_scores_the_machine_it_refits_mpg():
    """Other data (mpg, exact kernel matrix): the chosen (γ, α) is the minimum over the
    grid of the dense GCV of kernel ridge regression without intercept, and the refit
    is that machine: a = (K + αI)⁻¹y on the standardised rows."""
    Xtr, _, ytr, _ = _halves("mpg")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)        # mpg: 23 ± 8, near the line
        sel = KernelSelectionCV(KernelRidgeRegressor(), approximation="exact",
                                random_state=0).fit(Xtr, ytr)
    assert sel.selection_.criteria == ["gcv"]
    Xs = sel.best_estimator_[0].transform(Xtr)
    y = np.asarray(ytr, dtype=np.float64)
    grid = sel.selection_
    values = np.array([[ref.crit_gcv(ref.kernel_matrix(Xs, Xs, g), y, a) for a in grid.alphas]
                       for g in grid.gammas])
    i, j = np.unravel_index(np.argmin(values), values.shape)
    assert sel.best_params_ == pytest.approx({"gamma": grid.gammas[i], "alpha": grid.alphas[j]})
    K = ref.kernel_matrix(Xs, Xs, grid.gammas[i])
    np.testing.assert_allclose(sel.predict(Xtr), K @ ref.krr_solve(K, y, grid.alphas[j]),
                               rtol=1e-8, atol=1e-8 * np.abs(y).max())


def test_machine_without_intercept_is_selected_by_its_own_kfold_error_on_small_n_servo():
    """At most 400 rows (where the defaults use the exact k-fold error of the LSSVM),
    the machine without intercept is scored by its own exact 5-fold error over the
    defaults' grid: cross_validate_grid(machine="krr") on the standardised rows."""
    from kernelselect import cross_validate_grid
    from kernelselect.selection import default_gammas
    from kernelselect.selection._policy import alpha_path

    Xtr, _, ytr, _ = _halves("servo")
    sel = KernelSelectionCV(KernelRidgeRegressor(), random_state=0).fit(Xtr, ytr)
    assert sel.selection_.criteria == ["cv"]
    assert "k-fold" in sel.selection_.details["criterion_rule"]
    Xs = sel.best_estimator_[0].transform(Xtr)
    want = cross_validate_grid(Xs, ytr, gammas=default_gammas(Xs, random_state=0),
                               alphas=alpha_path(Xs.shape[0]), machine="krr", cv=5,
                               random_state=0)
    np.testing.assert_allclose(sel.selection_.curves["cv"], want.curves["cv"], rtol=1e-10)
    assert sel.best_params_ == pytest.approx({"gamma": want.best_gamma,
                                              "alpha": want.best_alpha})
    assert sel.best_estimator_[-1].fit_intercept is False
    assert "split0_test_score" in sel.cv_results_


def test_criterion_scoring_another_machine_warns():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(80)           # centred: no target warning
    for criterion in ("eloo", ["ekfold", "gcv"]):
        with pytest.warns(UserWarning, match=r"scores the LSSVM regression.*fit_intercept"):
            KernelSelectionCV(KernelRidgeRegressor(), criterion=criterion,
                              random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sel = KernelSelectionCV(KernelRidgeRegressor(), criterion="gcv", random_state=0).fit(X, y)
    assert sel.selection_.criteria == ["gcv"]
    with pytest.warns(UserWarning, match="kernel='ard'.*fit_intercept=False"):
        KernelSelectionCV(KernelRidgeRegressor(kernel="ard"), random_state=0).fit(X[:60], y[:60])


@pytest.mark.parametrize("offset, warns", [(5.0, True), (-40.0, True), (0.0, False),
                                           (0.25, False)])
def test_target_mostly_its_mean_warns_without_intercept(offset, warns):
    """|ȳ| > 3·std(y) warns, naming fit_intercept and the fix; the intercept forms and
    a centred target do not."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((50, 2))
    y = offset + np.sin(X[:, 0]) * 0.5 + 0.05 * rng.standard_normal(50)
    if warns:
        with pytest.warns(UserWarning, match=r"fit_intercept=False.*fit_intercept='mean'"):
            KernelRidgeRegressor(alpha=0.1).fit(X, y)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            KernelRidgeRegressor(alpha=0.1).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for form in (True, "mean"):
            KernelRidgeRegressor(alpha=0.1, fit_intercept=form).fit(X, y)
    # several outputs: one column far from zero is enough
    Y = np.column_stack([y - offset, y - offset + 10.0])
    with pytest.warns(UserWarning, match="fit_intercept"):
        KernelRidgeRegressor(alpha=0.1).fit(X, Y)


def test_progress_reports_the_selection_and_sizes_the_refit(monkeypatch, capsys):
    """progress=True: the selection's lines on stderr (nothing on stdout), and the
    automatically sized Nyström refit gets the same setting; default False: silent."""
    from kernelselect import _policy as _rules

    monkeypatch.setattr(_rules, "EXACT_FIT_MAX_N", 100)    # the Nyström refit at n = 150
    monkeypatch.setattr(_rules, "MIN_CENTRES", 40)
    rng = np.random.default_rng(4)
    X = rng.standard_normal((150, 3))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(150)
    sel = KernelSelectionRegressor(random_state=0, progress=True).fit(X, y)
    out, err = capsys.readouterr()
    assert out == "" and "kernel selection:" in err and "operators done in" in err
    assert sel.best_estimator_[-1].approximation.get_params()["progress"] is True
    quiet = KernelSelectionRegressor(random_state=0).fit(X, y)
    assert capsys.readouterr() == ("", "")
    assert quiet.best_estimator_[-1].approximation.get_params()["progress"] is False


def test_progress_of_cross_validation_counts_folds_on_class_labels(capsys):
    """Other data: class labels and criterion="cv" (a line per fold count); a bad
    value is named."""
    from kernelselect import KernelSelectionClassifier

    rng = np.random.default_rng(5)
    X = rng.standard_normal((90, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, "a", "b")
    KernelSelectionClassifier(criterion="cv", cv=3, gammas=[0.5, 1.0, 2.0],
                              alphas=[0.01, 0.1, 1.0], progress=True).fit(X, y)
    err = capsys.readouterr().err
    assert "cross-validation: 0/3 fold done" in err and "3/3 fold done in" in err
    with pytest.raises(ValueError, match="progress must be"):
        KernelSelectionCV(progress="yes").fit(X, y)


@pytest.mark.parametrize("standardize", [True, False])
def test_a_machine_with_a_fitting_recipe_is_refitted_by_it(standardize):
    """A selection estimator whose machine is fitted by a recipe (the Nyström
    conjugate-gradient machine with its centres given) selects with its own stand-in
    and refits with the recipe, standardised or not: the recipe holds no points in X's
    units, so standardising leaves it as it is. Its predictions are the refitted
    machine's on the transformed rows."""
    from kernelselect import NystroemPCG

    ds = datasets.load("servo")
    X, y = ds.X.astype(float), ds.y.astype(float)
    recipe = NystroemPCG(n_centres=60, tol=1e-10, max_iter=500)
    sel = KernelSelectionRegressor(KernelRidgeRegressor(kernel="gaussian",
                                                        approximation=recipe),
                                   standardize=standardize, random_state=0).fit(X, y)
    machine = sel.best_estimator_[-1] if standardize else sel.best_estimator_
    assert machine.approximation_ == "nystrom-pcg" and machine.n_centres_ == 60
    assert recipe.get_params()["n_centres"] == 60            # the caller's, untouched
    rows = sel.best_estimator_[0].transform(X) if standardize else X
    np.testing.assert_allclose(sel.predict(X), machine.predict(rows), rtol=0, atol=1e-12)
