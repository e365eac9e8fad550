"""The kernel as a value (:class:`kernelselect.kernels.Kernel`): the parse of a user's
argument, γ's shape and check, the points on which the compiled family equals the
kernel, the random-feature frequencies and the derivative of K in log γ, each against
a loop written from the formula."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelselect import kernels, lowlevel
from kernelselect.kernels import Kernel, kernel_or_auto
from kernelselect.utils import _kernel_family


def _kappa(x, z, gamma, kernel):
    """κ(x, z) by a loop over the features, from the formula of each kernel."""
    s = 0.0
    for k in range(len(x)):
        if kernel == "gaussian":
            s += gamma * (x[k] - z[k]) ** 2
        elif kernel == "laplacian":
            s += gamma * abs(x[k] - z[k])
        else:                                     # per-feature: γ_k (x_k − z_k)²
            s += gamma[k] * (x[k] - z[k]) ** 2
    return np.exp(-s)


def _block(X, Z, gamma, kernel):
    return np.array([[_kappa(x, z, gamma, kernel) for z in Z] for x in X])


# --------------------------------------------------------------------------- the parse

@pytest.mark.parametrize("name, member", [("gaussian", Kernel.GAUSSIAN), (" RBF ", Kernel.GAUSSIAN),
                                          ("Laplacian", Kernel.LAPLACIAN), ("ard", Kernel.ARD),
                                          (" ARD", Kernel.ARD), (Kernel.ARD, Kernel.ARD)])
def test_of_parses_every_spelling(name, member):
    assert Kernel.of(name) is member
    assert kernel_or_auto(name) is member


def test_a_kernel_is_its_name():
    assert Kernel.ARD == "ard" and str(Kernel.ARD) == "ard" and f"{Kernel.ARD}" == "ard"
    assert {"ard": 1}[Kernel.ARD] == 1
    assert kernels.Kernel is _kernel_family.Kernel          # the old import path holds


@pytest.mark.parametrize("bad", ["auto", "poly", 3, None])
def test_of_refuses_what_is_not_a_kernel(bad):
    with pytest.raises(ValueError, match="not a known kernel.*gaussian, laplacian, ard"):
        Kernel.of(bad)


def test_auto_is_an_argument_not_a_kernel():
    assert kernel_or_auto(" Auto ") == "auto"
    with pytest.raises(ValueError, match="ard, auto"):
        kernel_or_auto("poly")


def test_one_gamma_paths_refuse_the_per_feature_kernel():
    assert Kernel.of("laplacian", per_feature=False) is Kernel.LAPLACIAN
    with pytest.raises(ValueError, match="kernel='ard'.*not available here"):
        Kernel.of("ard", per_feature=False)


# --------------------------------------------------------------------------- γ

def test_gamma_shape_and_default():
    assert [k.per_feature for k in Kernel] == [False, False, True]
    assert Kernel.GAUSSIAN.default_gamma(4) == 0.25
    np.testing.assert_array_equal(Kernel.ARD.default_gamma(4), np.full(4, 0.25))
    assert Kernel.LAPLACIAN.check_gamma(2) == 2.0
    g = Kernel.ARD.check_gamma(0.5, n_features=3)
    assert g.dtype == np.float64 and g.shape == (3,)
    np.testing.assert_array_equal(Kernel.ARD.check_gamma([1, 2]), [1.0, 2.0])


@pytest.mark.parametrize("kernel, gamma, n, error, match", [
    (Kernel.GAUSSIAN, 0.0, None, ValueError, "bandwidth must be a finite number > 0"),
    (Kernel.GAUSSIAN, "x", None, TypeError, "bandwidth must be a real number"),
    (Kernel.LAPLACIAN, np.inf, None, ValueError, "bandwidth"),
    (Kernel.ARD, [1.0, 2.0], 3, ValueError, r"bandwidth has shape \(2,\).*\(3,\)"),
    (Kernel.ARD, [1.0, -1.0], 2, ValueError, r"bandwidth\[1\]"),
    (Kernel.ARD, [1.0, np.nan], None, ValueError, "finite"),
    (Kernel.ARD, 1.0, None, ValueError, r"shape \(n_features,\)"),
    (Kernel.ARD, "wide", 2, TypeError, "bandwidth must be a positive number"),
])
def test_check_gamma_names_the_argument(kernel, gamma, n, error, match):
    with pytest.raises(error, match=match):
        kernel.check_gamma(gamma, n, name="bandwidth")


# --------------------------------------------------------------------------- compiled family

def test_compiled_family_and_its_properties():
    assert Kernel.ARD.compiled is Kernel.GAUSSIAN
    assert [k.compiled for k in (Kernel.GAUSSIAN, Kernel.LAPLACIAN)] == [Kernel.GAUSSIAN,
                                                                          Kernel.LAPLACIAN]
    assert (Kernel.ARD.code, Kernel.ARD.power, Kernel.ARD.translates) == (
        Kernel.GAUSSIAN.code, 2, True)
    assert (Kernel.LAPLACIAN.power, Kernel.LAPLACIAN.translates) == (1, False)


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_points_leave_one_gamma_kernels_alone(kernel):
    X = np.arange(6.0).reshape(3, 2)
    Xs, g = Kernel.of(kernel).points(X, 0.3)
    assert Xs is X and g == 0.3


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 7), m=st.integers(1, 7),
       d=st.integers(1, 5), float32=st.booleans())
def test_points_and_the_compiled_gaussian_are_the_per_feature_kernel(seed, n, m, d, float32):
    rng = np.random.default_rng(seed)
    X, Z = rng.normal(size=(n, d)), rng.normal(size=(m, d))
    gamma = Kernel.ARD.check_gamma(np.exp(rng.uniform(-3, 2, d)), d)
    if float32:
        X, Z = X.astype(np.float32), Z.astype(np.float32)
    Xs, g = Kernel.ARD.points(X, gamma)
    Zs, _ = Kernel.ARD.points(Z, gamma)
    assert Xs.dtype == X.dtype and g == 1.0
    K = lowlevel.kernel_block(Xs, Zs, g, kernel=Kernel.ARD.compiled)
    ref = _block(X.astype(np.float64), Z.astype(np.float64), gamma, "ard")
    np.testing.assert_allclose(K, ref, rtol=1e-4 if float32 else 1e-10, atol=1e-6 if float32
                               else 1e-13)


# --------------------------------------------------------------------------- random features

@pytest.mark.parametrize("kernel", list(Kernel))
def test_frequencies_follow_the_spectral_density(kernel):
    d, D = 3, 400
    gamma = kernel.check_gamma([0.5, 2.0, 8.0] if kernel.per_feature else 2.0, d)
    W0 = kernel.standard_frequencies(np.random.default_rng(1), (d, D))
    W = kernel.scale_frequencies(W0, gamma)
    for k in range(d):
        gk = gamma[k] if kernel.per_feature else gamma
        want = np.sqrt(2 * gk) if kernel.compiled is Kernel.GAUSSIAN else gk
        np.testing.assert_allclose(W[k], want * W0[k], rtol=1e-15)
    # the draws are the spectral density's: standard normal, or Cauchy (median |w⁰| = 1)
    if kernel is Kernel.LAPLACIAN:
        assert 0.8 < np.median(np.abs(W0)) < 1.25
    else:
        assert 0.85 < W0.std() < 1.15


# --------------------------------------------------------------------------- ∂K/∂log γ

@pytest.mark.parametrize("kernel", ["gaussian", "laplacian"])
def test_log_gamma_derivative_of_one_gamma_kernels(kernel):
    rng = np.random.default_rng(3)
    X, Z, gamma = rng.normal(size=(5, 3)), rng.normal(size=(4, 3)), 0.7
    got = Kernel.of(kernel).log_gamma_derivative(X, Z, gamma)
    ref = np.empty((5, 4))
    for i in range(5):
        for j in range(4):
            dist = sum((X[i, k] - Z[j, k]) ** 2 if kernel == "gaussian"
                       else abs(X[i, k] - Z[j, k]) for k in range(3))
            ref[i, j] = -gamma * dist * np.exp(-gamma * dist)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)
    K = _block(X, Z, gamma, kernel)
    np.testing.assert_allclose(Kernel.of(kernel).log_gamma_derivative(X, Z, gamma, K=K), ref,
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("seed, d", [(4, 3), (5, 1)])
def test_log_gamma_derivative_of_the_per_feature_kernel(seed, d):
    rng = np.random.default_rng(seed)
    X, Z = rng.normal(size=(4, d)), rng.normal(size=(6, d))
    gamma = np.exp(rng.uniform(-1, 1, d))
    got = Kernel.ARD.log_gamma_derivative(X, Z, gamma)
    assert got.shape == (d, 4, 6)
    for k in range(d):
        for i in range(4):
            for j in range(6):
                want = -gamma[k] * (X[i, k] - Z[j, k]) ** 2 * _kappa(X[i], Z[j], gamma, "ard")
                assert got[k, i, j] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_log_gamma_derivative_is_the_finite_difference():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(5, 2))
    gamma, h = np.array([0.4, 1.5]), 1e-6
    dK = Kernel.ARD.log_gamma_derivative(X, X, gamma)
    for k in range(2):
        up, down = gamma.copy(), gamma.copy()
        up[k] *= np.exp(h)
        down[k] *= np.exp(-h)
        fd = (_block(X, X, up, "ard") - _block(X, X, down, "ard")) / (2 * h)
        np.testing.assert_allclose(dK[k], fd, atol=1e-8)


# --------------------------------------------------------------------------- the value below the doors

def test_machines_take_the_value_as_they_take_the_name():
    from kernelselect import fit_krr
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    gamma = [0.3, 1.0, 2.0]
    by_name = fit_krr(X, y, gamma, 0.1, kernel="ard", approximation="exact")
    by_value = fit_krr(X, y, gamma, 0.1, kernel=Kernel.ARD, approximation="exact")
    np.testing.assert_array_equal(by_name.decision_function(X[:5]),
                                  by_value.decision_function(X[:5]))
    # the per-feature machine is the Gaussian one on the kernel's points
    Xs, g = Kernel.ARD.points(X, Kernel.ARD.check_gamma(gamma, 3))
    gauss = fit_krr(Xs, y, g, 0.1, kernel="gaussian", approximation="exact")
    np.testing.assert_allclose(by_name.decision_function(X[:5]),
                               gauss.decision_function(Xs[:5]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("gamma, match", [([1.0, 2.0], r"shape \(2,\).*\(3,\)"),
                                          (-1.0, r"gamma\[0\]")])
def test_machines_check_gamma_for_their_kernel(gamma, match):
    from kernelselect import fit_lssvm
    X = np.random.default_rng(8).normal(size=(10, 3))
    with pytest.raises(ValueError, match=match):
        fit_lssvm(X, np.sign(X[:, 0]), gamma, 1.0, kernel="ard")


@pytest.mark.parametrize("kernel", ["ard", Kernel.ARD])
def test_one_gamma_operators_refuse_the_per_feature_kernel(kernel):
    from kernelselect import RFF, Nystroem
    X = np.random.default_rng(9).normal(size=(20, 2))
    for approx in (Nystroem(landmarks=5), RFF(n_features=8)):
        with pytest.raises(ValueError, match="kernel='ard'.*not available here"):
            approx.build(X, None, 1.0, kernel=kernel, state=None, workers=None)


def test_lowlevel_takes_the_value():
    rng = np.random.default_rng(10)
    X, gamma = rng.normal(size=(6, 2)), np.array([0.5, 3.0])
    np.testing.assert_array_equal(lowlevel.kernel_block(X, X, gamma, kernel=Kernel.ARD),
                                  lowlevel.kernel_block(X, X, gamma, kernel="ard"))
    np.testing.assert_allclose(lowlevel.kernel_sums(X, gamma, kernel=Kernel.ARD)["total"],
                               _block(X, X, gamma, "ard").sum(), rtol=1e-12)
