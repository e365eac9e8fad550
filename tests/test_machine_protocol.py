"""The machine protocol: a fitting recipe (MachineRecipe) is what the machines call, an
Approximation reaches them as the recipe of its operator, a recipe is no stand-in for
the selection, and a fitted model declares what the machines read of it."""

import numpy as np
import pytest
from sklearn.base import clone

import kernelselect as ks
from kernelselect.operators import Approximation, Parameterised
from kernelselect.solvers import (MachineRecipe, NystroemPCG, OperatorRecipe,
                                  fit_kernel_machine, machine_recipe, resolve_machine)
from reference import kernel_matrix, krr_solve


def data(seed, n=120, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)


def test_nystroem_pcg_is_a_recipe_not_an_approximation():
    recipe = ks.NystroemPCG(n_centres=30, loo_intercept=True)
    assert isinstance(recipe, MachineRecipe) and isinstance(recipe, Parameterised)
    assert not isinstance(recipe, Approximation)
    assert recipe.dask and recipe.fit_policy is None and recipe.loo_intercept
    assert ks.NystroemPCG is NystroemPCG


@pytest.mark.parametrize("params", [dict(n_centres=30, tol=1e-6),
                                    dict(loo_alphas=np.array([0.1, 1.0]), max_iter=9)])
def test_recipe_keeps_the_parameter_protocol(params):
    recipe = NystroemPCG(**params)
    twin = clone(recipe)
    assert twin == recipe and twin is not recipe and hash(twin) == hash(recipe)
    assert repr(recipe).startswith("NystroemPCG(") and all(k in repr(recipe) for k in params)
    assert recipe.set_params(max_iter=11) is recipe and recipe.max_iter == 11
    assert recipe != twin
    with pytest.raises(ValueError, match="no parameter 'centres'"):
        recipe.set_params(centres=3)


@pytest.mark.parametrize("recipe", [NystroemPCG(), NystroemPCG(n_centres=40, tol=1e-9)])
def test_selection_refuses_a_recipe_naming_what_it_is(recipe):
    X, y = data(0)
    with pytest.raises(TypeError, match="fitting recipe for the machines.*not a stand-in"):
        ks.select_kernel(X, y, approximation=recipe)
    with pytest.raises(TypeError, match="fitting recipe"):
        ks.operators.get_approximation(recipe)


@pytest.mark.parametrize("name", ["exact", "nystrom", "rff"])
def test_an_approximation_reaches_the_machines_as_its_operator_recipe(name):
    fitting = machine_recipe(name)
    assert isinstance(fitting, OperatorRecipe) and fitting.name == name
    assert not fitting.dask and fitting.fit_policy is None
    with pytest.raises(ValueError, match="in memory only"):
        fitting.check_dask_resources(100, (50, 50), 3)
    pcg = NystroemPCG(n_centres=5)
    assert machine_recipe(pcg) is pcg and resolve_machine(pcg) is pcg
    assert isinstance(resolve_machine(NystroemPCG), NystroemPCG)
    assert resolve_machine(name) == ks.operators.get_approximation(name)


def test_mcm_refused_through_the_recipe():
    with pytest.raises(ValueError, match="mcm|circulant"):
        machine_recipe("mcm").check_resources(100, 2)


@pytest.mark.parametrize("seed, gamma, alpha", [(1, 0.5, 0.1), (2, 2.0, 0.01)])
def test_exact_recipe_fits_the_dense_reference(seed, gamma, alpha):
    X, y = data(seed, n=60)
    model = fit_kernel_machine(X, y, gamma, [alpha], bias=False, approximation="exact")
    a = krr_solve(kernel_matrix(X, X, gamma), y, alpha)
    np.testing.assert_allclose(model.coef[:, 0, 0], a, rtol=1e-8, atol=1e-10)
    assert model.conditioning is None            # a dual model: no streamed passes


@pytest.mark.parametrize("seed", [3, 4])
def test_fitted_models_declare_their_conditioning(seed):
    X, y = data(seed)
    exact = ks.KernelRidgeRegressor(gamma=0.5, alpha=0.1).fit(X, y)
    pcg = ks.KernelRidgeRegressor(gamma=0.5, alpha=0.1,
                                  approximation=NystroemPCG(n_centres=20)).fit(X, y)
    assert exact.model_.conditioning is None
    cond = pcg.model_.conditioning
    assert cond is not None and cond.centres.shape == (20, X.shape[1])
    assert pcg.approximation_ == "nystrom-pcg"


@pytest.mark.parametrize("seed, approximation, label", [
    (5, NystroemPCG(n_centres=200), "nystrom-pcg"), (6, "nystrom", "nystrom")])
def test_cross_validation_prepares_through_the_recipe(seed, approximation, label):
    from kernelselect.models._cv import cross_validate_grid

    X, y = data(seed, n=90, d=2)
    res = cross_validate_grid(X, y, approximation=approximation, gammas=[0.5, 2.0],
                              alphas=[0.1], machine="krr", loss="mse", cv=3, random_state=0)
    assert res.details["approximation"] == label
    losses = res.details["fold_losses"]
    assert losses.shape == (3, 2, 1) and np.all(np.isfinite(losses))
    assert np.all(losses < np.var(y) * 2)                # a model, not noise
