"""The Nyström machine recipe (NystroemPCG) and its fit over an α path."""

import numpy as np
import pytest

from kernelselect.models._fit_policy import MAX_CENTRES, MIN_CENTRES, auto_centres
from kernelselect.solvers._nystroem_pcg import NystroemPCG, fit_pcg_machine
from kernelselect.solvers._pcg import sample_rows


def data(seed=0, n=600, d=3, t=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = np.sin(X @ rng.standard_normal((d, t))) + 0.1 * rng.standard_normal((n, t))
    return X, Y


def test_recipe_parameters_and_checks():
    recipe = NystroemPCG(n_centres=50, tol=1e-8)
    assert recipe.get_params()["n_centres"] == 50
    assert "NystroemPCG(" in repr(recipe) and "n_centres=50" in repr(recipe)
    assert recipe.set_params(max_iter=7).max_iter == 7
    assert recipe.centres_for(30) == 30                     # at most n
    for bad, name in ((dict(n_centres=0), "n_centres"), (dict(tol=-1.0), "tol"),
                      (dict(max_iter=0), "max_iter"), (dict(sample_per_centre=-1), "sample"),
                      (dict(progress="yes"), "progress")):
        with pytest.raises((ValueError, TypeError), match=name):
            NystroemPCG(**bad).checked()


def test_alpha_path_equals_separate_fits():
    X, Y = data()
    alphas = np.array([0.01, 0.3])
    recipe = NystroemPCG(n_centres=60, tol=1e-12, max_iter=400)
    path = fit_pcg_machine(X, Y, 0.5, alphas, recipe, kernel="gaussian", bias=True,
                           random_state=3)
    assert path.coef.shape == (60, 2, 2) and path.intercept.shape == (2, 2)
    # the automatic sample: q/m by the cost balance, here its cap of 8 (n = 600, m = 60)
    # lowered to m/(4d) = 5 by the bytes share
    assert path.details["n_centres"] == 60 and path.details["sample_rows"] == sample_rows(
        X.shape[0], 60, X.shape[1]) == 300 and path.details["sample_rule"] == "auto"
    assert len(path.details["iterations"]) == 2 and all(path.details["converged"])
    F = path.decision_function(X)
    for j, a in enumerate(alphas):
        one = fit_pcg_machine(X, Y, 0.5, np.array([a]), recipe, kernel="gaussian", bias=True,
                              random_state=3)
        np.testing.assert_allclose(F[:, :, j], one.decision_function(X)[:, :, 0], atol=1e-9)


def test_same_random_state_same_model():
    X, Y = data(1)
    recipe = NystroemPCG(n_centres=40)
    a = fit_pcg_machine(X, Y, 0.5, np.array([0.1]), recipe, kernel="gaussian", bias=False,
                        random_state=5)
    b = fit_pcg_machine(X, Y, 0.5, np.array([0.1]), recipe, kernel="gaussian", bias=False,
                        random_state=5)
    assert np.array_equal(a.support_indices, b.support_indices)
    assert np.array_equal(a.coef, b.coef)


def test_auto_centres_grows_and_is_bounded():
    sizes = [auto_centres(n) for n in (100, 10_000, 10**5, 10**6, 10**7, 10**9)]
    assert sizes[0] == 100                                   # at most n
    assert all(a <= b for a, b in zip(sizes, sizes[1:]))
    assert min(sizes[1:]) >= MIN_CENTRES and max(sizes) <= MAX_CENTRES
