"""The approximation protocol: what each recipe declares (label, capabilities, its
machine), its prepared state as a frozen record, the Kernel value, and X checked and
conditioned once per data set rather than once per γ."""

import dataclasses

import numpy as np
import pytest

import kernelselect
from kernelselect.primitives import _kernel_ops
from kernelselect.utils._kernel_family import Kernel
from kernelselect.operators import Approximation, get_approximation
from kernelselect.operators._base import Capabilities
from kernelselect.operators.dense import DenseOperator, Exact


def _data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)


@pytest.mark.parametrize("name, label, grid, dask, fit", [
    ("exact", "exact", False, True, True),
    ("nystrom", "nystrom", True, True, True),
    ("rff", "rff", True, True, True),
    ("mcm", "mcm", False, False, False),
    ("random_mcm", "random_mcm", True, True, False),
])
def test_each_recipe_declares_what_it_can_do(name, label, grid, dask, fit):
    approx = get_approximation(name)
    caps = approx.capabilities
    assert isinstance(caps, Capabilities)
    assert (approx.label, caps.grid, caps.dask, caps.fit) == (label, grid, dask, fit)
    assert caps.criteria == approx.provides


def test_capabilities_follow_the_parameters():
    assert kernelselect.Nystroem(sampler="kmeans").capabilities.grid
    assert not kernelselect.Nystroem(sampler="kmeans").capabilities.dask
    assert not kernelselect.Nystroem(sampler="leverage").capabilities.grid
    streaming = Exact(method="streaming")
    assert streaming.label == "Exact(method='streaming')"
    assert streaming.capabilities.grid and streaming.capabilities.dask
    assert not Exact(method="dense").capabilities.dask
    # "auto" streams once told that the criteria need only moments
    assert Exact().configured({"moments"}).capabilities.grid
    assert not Exact().configured({"moments", "spectral"}).capabilities.grid


def test_a_third_party_recipe_gets_the_defaults():
    class Mine(Approximation):
        name = "mine"

    mine = Mine()
    assert mine.label == "mine" and mine.capabilities == Capabilities(mine.provides)
    assert mine.build_all(None, None, [1.0], kernel="gaussian", state=None) is None
    assert not mine.prefers_per_gamma(10, 2)
    with pytest.raises(ValueError, match="has no solver"):
        mine.machine()


def test_machine_recipes():
    dense, method = Exact(method="streaming").machine(None, n_alphas=3)
    assert (dense.method, dense.dense_solver, method) == ("dense", "tridiagonal", "tridiagonal")
    assert Exact().machine("eigh")[1] == "eigh" and Exact().machine()[1] == "cholesky"
    with pytest.raises(ValueError, match="exact_solver"):
        Exact().machine("qr")
    ny = kernelselect.Nystroem(20)
    assert ny.machine() == (ny, None)
    with pytest.raises(ValueError, match="cannot train a kernel machine"):
        kernelselect.MCM().machine()
    with pytest.raises(ValueError, match="has no solver"):
        kernelselect.RandomMCM().machine()


@pytest.mark.parametrize("name", ["exact", "nystrom", "rff", "mcm", "random_mcm"])
def test_prepared_states_are_frozen_records(name):
    X, y = _data()
    state = get_approximation(name).prepare(X, y, kernel="gaussian", random_state=0,
                                            workers=1)
    assert dataclasses.is_dataclass(state)
    field = dataclasses.fields(state)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(state, field, None)


def test_kernel_value():
    assert Kernel.of(" RBF ") is Kernel.GAUSSIAN and Kernel.of(Kernel.LAPLACIAN) is Kernel.LAPLACIAN
    assert Kernel.GAUSSIAN == "gaussian" and f"{Kernel.LAPLACIAN}" == "laplacian"
    assert (Kernel.GAUSSIAN.code, Kernel.LAPLACIAN.code) == (0, 1)
    assert (Kernel.GAUSSIAN.power, Kernel.LAPLACIAN.power) == (2, 1)
    assert Kernel.GAUSSIAN.frequency_scale(8.0) == 4.0 and Kernel.LAPLACIAN.frequency_scale(8.0) == 8.0
    with pytest.raises(ValueError, match="not a known kernel"):
        Kernel.of("cosine")


@pytest.mark.parametrize("approximation, criterion", [
    ("exact", "eloo"),
    (kernelselect.Nystroem(n_landmarks=15, sampler="column_norm"), "eloo"),
    (kernelselect.Exact(method="streaming"), "kta"),
])
def test_x_is_conditioned_once_per_data_set_not_per_gamma(monkeypatch, approximation,
                                                          criterion):
    """A selection over 3 or 9 γ conditions X (the check, translation and copy of
    kernelselect.primitives._kernel_ops.Points) the same number of times, and never through the
    public wrappers' per-call conditioning."""
    X, y = _data(60)
    made = []
    original = _kernel_ops.Points.__init__

    def counting(self, *args, **kwargs):
        made.append(1)
        original(self, *args, **kwargs)

    def refuse(*args, **kwargs):
        raise AssertionError("a per-call conditioning ran inside the selection")

    monkeypatch.setattr(_kernel_ops.Points, "__init__", counting)
    monkeypatch.setattr(_kernel_ops, "_condition", refuse)
    counts = []
    for n_gammas in (3, 9):
        made.clear()
        kernelselect.select_kernel(X, y, gammas=np.geomspace(0.1, 10, n_gammas),
                                   alphas=[1.0], criterion=criterion,
                                   approximation=approximation, random_state=0, workers=1,
                                   refine=True)
        counts.append(len(made))
    assert counts[0] == counts[1] <= 1


def test_a_state_built_for_one_x_is_not_used_for_another():
    X, y = _data(30)
    approx = Exact(method="dense")
    state = approx.prepare(X, y, kernel="gaussian", random_state=0, workers=1)
    a = approx.build(X, y, 0.5, kernel="gaussian", state=state, workers=1)
    X2 = X + 1e3                                       # the same distances, translated
    b = approx.build(X2, y, 0.5, kernel="gaussian", state=state, workers=1)
    assert isinstance(a, DenseOperator)
    np.testing.assert_allclose(a._full(), b._full(), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="X contains NaN"):
        approx.build(np.where(X > 1, np.nan, X), y, 0.5, kernel="gaussian", state=state,
                     workers=1)
