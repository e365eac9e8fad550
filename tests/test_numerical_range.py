"""Numerical range: results do not depend on the units of X or y, parameters outside
their ranges are refused by name, and a selection is never NaN."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import functools
import warnings

import kernelselect
from kernelselect import Nystroem, lowlevel
from kernelselect.selection import standardize_columns

# these checks are about units and ranges, written for one α per call and raw features:
# the calls that do not say otherwise keep criterion="ree", α = 1 and standardize=False
select_kernel = functools.partial(kernelselect.select_kernel, criterion="ree",
                                  standardize=False)


def problem(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(X[:, 0] + 0.2 * rng.standard_normal(n))
    target = X[:, 0] + 0.1 * rng.standard_normal(n)
    return X, y, target


# ---------------------------------------------------------------------------
# item: standardize at extreme magnitudes
# ---------------------------------------------------------------------------

def test_standardize_at_1e160_matches_unit_scale():
    X, y, _ = problem()
    ref = select_kernel(X, y, approximation="exact", standardize=True, random_state=0)
    big = select_kernel(X * 1e160, y, approximation="exact", standardize=True, random_state=0)
    # formerly X.std() overflowed, X became zeros and every curve was flat
    np.testing.assert_allclose(big.curves["ree"], ref.curves["ree"], rtol=1e-10)
    assert big.best_gamma == pytest.approx(ref.best_gamma, rel=1e-12)
    assert np.ptp(big.curves["ree"]) > 0


@settings(max_examples=20, deadline=None)
@given(exponent=st.integers(-300, 300))
def test_standardize_columns_is_scale_free(exponent):
    X, _, _ = problem(20, 2)
    scale = 10.0 ** exponent
    np.testing.assert_allclose(standardize_columns(X * scale), standardize_columns(X),
                               rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------
# item: MCM equivariant to the units of X
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("scale", [1e-12, 1e-10, 1e12])
def test_mcm_selection_does_not_depend_on_units(scale):
    X, y, _ = problem()
    ref = select_kernel(X, y, approximation="mcm", random_state=0)
    res = select_kernel(X * scale, y, approximation="mcm", random_state=0)
    # formerly off by 0.45 at 1e-12 (the spacing fit was not normalised)
    np.testing.assert_allclose(res.curves["ree"], ref.curves["ree"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(res.gammas * scale ** 2, ref.gammas, rtol=1e-12)


@pytest.mark.parametrize("scale", [1e-12, 1e-10, 1e10, 1e12])
def test_fit_spacing_is_equivariant(scale):
    X, _, _ = problem()
    h = lowlevel.fit_spacing(X, [5, 4, 3], random_state=0)
    hs = lowlevel.fit_spacing(X * scale, [5, 4, 3], random_state=0)
    # formerly 25 % off. The fit stops on ftol = 1e-14, a relative change of the cost,
    # which fixes h at a minimum only to about √ftol = 1e-7 relative: rescaled data
    # reach the same minimum on another path (2.4e-8 apart with scipy 1.17).
    np.testing.assert_allclose(hs / scale, h, rtol=1e-6)


# ---------------------------------------------------------------------------
# item: the default γ grid at extreme scales
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("scale", [1e-150, 1e-100, 1e100, 1e150])
def test_default_grid_follows_the_scale_of_X(scale):
    X, y, _ = problem()
    ref = select_kernel(X, y, approximation="exact", random_state=0)
    res = select_kernel(X * scale, y, approximation="exact", random_state=0)
    np.testing.assert_allclose(res.gammas * scale ** 2, ref.gammas, rtol=1e-12)
    np.testing.assert_allclose(res.curves["ree"], ref.curves["ree"], rtol=1e-8)


@pytest.mark.parametrize("scale", [1e-163, 1e-200, 1e154, 1e200])
def test_default_grid_outside_float_range_is_refused_naming_x(scale):
    X, y, _ = problem()
    # formerly γ₀ = 1 with flat curves (tiny X) or "gammas must all be finite" (huge X)
    with pytest.raises(ValueError, match="X's scale.*median-heuristic.*standardize=True"):
        select_kernel(X * scale, y, approximation="exact")
    res = select_kernel(X * scale, y, approximation="exact", standardize=True)
    assert np.isfinite(res.best_gamma)


def test_degenerate_x_is_refused():
    with pytest.raises(ValueError, match="all 10 rows of X are equal"):
        select_kernel(np.ones((10, 2)), np.arange(10.0), approximation="exact")


# ---------------------------------------------------------------------------
# item: criterion and approximation parameters
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(criterion="ipe", sigma=float("nan")), "'ipe': sigma must be"),
    (dict(criterion="ipe", sigma=float("inf")), "'ipe': sigma must be"),
    (dict(criterion="c1", sigma=-1), "'c1': sigma must be"),
    (dict(criterion="sm", h=float("nan")), "'sm': h must be"),
    (dict(criterion="sm", h=1.0), r"'sm': h must be.*\[0, 1\)"),
    (dict(criterion="sm", r=200), r"'sm': r must be an integer in \[1, 16\]"),
    (dict(criterion="sm", r=0), r"'sm': r must be"),
    (dict(criterion="eloo", loss="hinge"), "'eloo': loss must be"),
])
def test_criterion_parameters_are_checked(kwargs, match):
    X, y, _ = problem()
    with pytest.raises(ValueError, match=match):
        select_kernel(X, y, approximation="exact", **kwargs)


def test_criterion_parameter_types_are_checked():
    X, y, _ = problem()
    with pytest.raises(TypeError, match="'sm': r must be an integer"):
        select_kernel(X, y, approximation="exact", criterion="sm", r=2.5)
    with pytest.raises(TypeError, match="'ipe': sigma must be a real number"):
        select_kernel(X, y, approximation="exact", criterion="ipe", sigma="0.1")


def test_valid_edge_parameters_are_accepted():
    X, y, _ = problem()
    res = select_kernel(X, y, approximation="exact", criterion=["ipe", "sm"], sigma=0.0, r=16)
    assert all(np.isfinite(res.curves[c]).all() for c in res.criteria)


@pytest.mark.parametrize("floor", [2.0, 1.0, -0.1, float("nan")])
def test_nystroem_eigen_floor_range(floor):
    X, y, _ = problem()
    with pytest.raises(ValueError, match="eigen_floor"):
        select_kernel(X, y, approximation=Nystroem(eigen_floor=floor), criterion="kta")


# ---------------------------------------------------------------------------
# item: the scale of y
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("scale", [1e154, 1e300, 1e-160, 1e-300])
def test_target_scale_does_not_change_the_selection(scale):
    X, _, target = problem()
    crits = ["kta", "ckta", "ree", "eloo", "gcv", "ipe"]
    ref = select_kernel(X, target, criterion=crits, approximation="exact", random_state=0)
    res = select_kernel(X, target * scale, criterion=crits, approximation="exact",
                        random_state=0)
    s = res.details["target_scale"]
    assert 0.5 <= np.max(np.abs(target * scale)) / s < 1.0
    for name in crits:
        assert res.best[name]["gamma"] == ref.best[name]["gamma"], name
    # alignments do not depend on y's scale; the error criteria are those of y / s
    np.testing.assert_allclose(res.curves["kta"], ref.curves["kta"], rtol=1e-10)
    np.testing.assert_allclose(res.curves["ckta"], ref.curves["ckta"], rtol=1e-10)
    ratio = (np.max(np.abs(target)) / np.max(np.abs(target * scale / s))) ** 2
    np.testing.assert_allclose(res.curves["ree"] * ratio, ref.curves["ree"], rtol=1e-6)


def test_moderate_targets_are_not_rescaled():
    X, _, target = problem()
    res = select_kernel(X, target * 1e30, criterion="ree", approximation="exact")
    assert "target_scale" not in res.details


# ---------------------------------------------------------------------------
# item: ridge values far outside the kernel's scale
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("approximation", ["exact", "nystrom", "rff", "mcm"])
@pytest.mark.parametrize("alpha", [1e-300, 1e-20, 1e6, 1e17])
@pytest.mark.filterwarnings("ignore::kernelselect.GridEdgeWarning")   # flat curves: ties
def test_extreme_alphas_give_finite_selections(approximation, alpha):
    X, _, target = problem()
    crits = ["gcv", "ree", "eloo", "ipe", "c1"]
    res = select_kernel(X, target, alphas=[alpha], criterion=crits,
                        approximation=approximation, random_state=0)
    for name in crits:
        assert np.isfinite(res.best[name]["value"]) and np.isfinite(res.best[name]["gamma"])


@pytest.mark.parametrize("alpha", [1e200, 1e300, 60 * 2.0 ** 53])
def test_alphas_above_the_kernel_scale_are_refused(alpha):
    X, _, target = problem()
    # formerly best_gamma nan (gcv); every kernel scores the same there
    with pytest.raises(ValueError, match=r"alphas must be at most 2\^52·n"):
        select_kernel(X, target, alphas=[alpha], criterion="gcv", approximation="exact")


def test_gcv_and_eloo_match_their_formulas_at_small_alpha():
    X, _, target = problem(30)
    gamma, alpha = 0.7, 1e-9
    K = lowlevel.kernel_block(X, X, gamma)
    A = np.linalg.inv(K + alpha * np.eye(30))
    gcv = 30 * target @ A @ A @ target / np.trace(A) ** 2
    res = select_kernel(X, target, gammas=[gamma], alphas=[alpha], criterion="gcv",
                        approximation="exact")
    np.testing.assert_allclose(res.curves["gcv"][0, 0], gcv, rtol=1e-5)


def test_no_finite_value_raises_naming_the_criterion():
    X, y, _ = problem()
    X[:] = 0.0                                   # K = 11ᵀ: the centred kernel vanishes
    with pytest.raises(ValueError, match="criterion 'ckta' is NaN at every grid point"):
        select_kernel(X, y, gammas=[1.0, 2.0], criterion="ckta", approximation="exact")
    with pytest.raises(ValueError, match="criterion 'ckta'"):
        kernelselect.KernelSelectionCV(criterion="ckta", approximation="exact",
                                       gammas=[1.0, 2.0]).fit(X, y)


# ---------------------------------------------------------------------------
# item: products that overflow, and small-γ forms
# ---------------------------------------------------------------------------

def test_rff_phases_that_overflow_are_refused():
    X, _, _ = problem()
    rng = np.random.default_rng(1)
    W, b = rng.standard_normal((3, 5)), rng.uniform(0, 2 * np.pi, 5)
    with pytest.raises(ValueError, match="overflows.*Rescale X"):
        lowlevel.rff_features(X * 1e200, W * 1e200, b)   # formerly NaN output
    assert np.isfinite(lowlevel.rff_features(X * 1e100, W * 1e-100, b)).all()


def test_streamed_features_that_overflow_are_refused_by_gammas():
    """Laplacian random features at a huge γ: the phases s_γ·W₀ᵀx (s_γ = γ) overflow
    float64 (formerly a ValueError of the compiled eigendecomposition naming no
    argument); the same X and γ on Nyström give the limit exp(−∞) = 0 without a numpy
    warning."""
    X = np.array([[1.0], [-2.0], [6.4e9]])
    y = np.array([1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match=r"^gammas: the rff features are not finite at "
                                         r"γ = 1e\+300 .*standardize=True"):
        select_kernel(X, y, approximation="rff", gammas=[1.0, 1e300], kernel="laplacian",
                      random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = select_kernel(X, y, approximation=Nystroem(n_landmarks=3), gammas=[1e300],
                            kernel="laplacian", random_state=0)
    assert np.all(np.isfinite(res.curves["ree"]))


def test_kernel_matvec_rescales_v_and_refuses_overflow():
    X, y, _ = problem()
    ref = lowlevel.kernel_matvec(X, y, 0.5)
    np.testing.assert_allclose(lowlevel.kernel_matvec(X, y * 1e300, 0.5), ref * 1e300,
                               rtol=1e-12)
    np.testing.assert_allclose(lowlevel.kernel_matvec(X, y * 1e-300, 0.5), ref * 1e-300,
                               rtol=1e-12)
    with pytest.raises(ValueError, match="K V overflows"):
        lowlevel.kernel_matvec(X, y * 1e308, 0.5)          # formerly NaN output


def _ckta_mp(X, y, gamma):
    """CKTA in 60-digit arithmetic (mpmath), written from the definition."""
    import mpmath

    mpmath.mp.dps = 60
    n = len(X)
    K = mpmath.matrix(n, n)
    for i in range(n):
        for j in range(n):
            K[i, j] = mpmath.exp(-mpmath.mpf(gamma) * mpmath.mpf(float(np.sum((X[i] - X[j]) ** 2))))
    H = mpmath.eye(n) - mpmath.ones(n, n) / n
    Kc = H * K * H
    yc = H * mpmath.matrix(y.tolist())
    fro = mpmath.sqrt(sum(Kc[i, j] ** 2 for i in range(n) for j in range(n)))
    return float((yc.T * Kc * yc)[0] / (fro * (yc.T * yc)[0]))


@pytest.mark.parametrize("method, smallest, rtol", [("streaming", 1e-15, 1e-4),
                                                    ("dense", 1e-12, 1e-4)])
def test_ckta_at_small_gamma_matches_high_precision(method, smallest, rtol):
    X, y, _ = problem(12)
    for gamma in np.logspace(-1, np.log10(smallest), 8):
        res = select_kernel(X, y, gammas=[gamma], criterion="ckta",
                            approximation=kernelselect.Exact(method=method))
        # formerly NaN below γ·d² ≈ 1e-8
        assert res.curves["ckta"][0, 0] == pytest.approx(_ckta_mp(X, y, gamma), rel=rtol)


def test_fsm_at_small_gamma_is_never_a_false_best():
    X, y, _ = problem()
    for approximation in ["exact", "nystrom", "rff"]:
        for gamma in [1e-6, 1e-10, 1e-14]:
            try:
                res = select_kernel(X, y, gammas=[gamma, 1.0], criterion="fsm",
                                    approximation=approximation, random_state=0)
            except ValueError as exc:                 # pragma: no cover - reported
                pytest.fail(str(exc))
            v = res.curves["fsm"][0, 0]
            # finite and close to the exact limit, or undefined (NaN) — never 0 or −inf
            assert np.isnan(v) or v > 1.0, (approximation, gamma, v)
    exact = select_kernel(X, y, gammas=[1e-10], criterion="fsm", approximation="exact")
    assert 1.5 < exact.curves["fsm"][0, 0] < 1.7


@pytest.mark.parametrize("approximation, error, match", [
    (kernelselect.MCM(periodic="no"), TypeError, "periodic must be True or False"),
    (kernelselect.MCM(clip_negative="no"), TypeError, "clip_negative must be True or False"),
    (kernelselect.MCM(max_ratio=float("inf")), ValueError, "max_ratio must be a finite"),
    (kernelselect.RFF(n_features=2.5), TypeError, "n_features must be an integer"),
    (Nystroem(sampler="leverage", ridge=float("nan")), ValueError, "ridge must be"),
])
def test_approximation_parameters_are_checked(approximation, error, match):
    X, y, _ = problem()
    with pytest.raises(error, match=match):
        select_kernel(X, y, approximation=approximation, criterion="ree")


@pytest.mark.parametrize("scale", [1e160, 1e-300])
def test_dask_standardize_at_extreme_magnitudes(scale):
    da = pytest.importorskip("dask.array")
    X, y, _ = problem(200)
    ref = select_kernel(da.from_array(X, chunks=(50, 3)), y, standardize=True,
                        random_state=0)
    res = select_kernel(da.from_array(X * scale, chunks=(50, 3)), y, standardize=True,
                        random_state=0)
    # formerly the variance overflowed (1e160) and X became zeros
    np.testing.assert_allclose(res.curves["ree"], ref.curves["ree"], rtol=1e-9)
