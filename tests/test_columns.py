"""Column builders (Song–Xu MCM column, random Fourier columns) against dense references."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kernelselect.lowlevel import labeled_rff_column, rff_features, song_xu_column

import reference as ref

KERNELS = ["gaussian", "laplacian"]

# ---------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------


@st.composite
def grids(draw, max_m=7, max_p=3):
    p = draw(st.integers(1, max_p))
    m = tuple(draw(st.lists(st.integers(1, max_m), min_size=p, max_size=p)))
    h = draw(st.lists(st.floats(0.05, 3.0), min_size=p, max_size=p))
    gamma = draw(st.floats(1e-3, 5.0))
    kernel = draw(st.sampled_from(KERNELS))
    return m, h, gamma, kernel


@st.composite
def rff_inputs(draw, max_n=60, max_d=5, max_D=16, dtype=np.float64, labeled=True):
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    D = draw(st.integers(1, max_D))
    values = st.floats(-3, 3, width=32)
    X = draw(arrays(dtype, (n, d), elements=values))
    W = draw(arrays(dtype, (d, D), elements=values))
    b = draw(arrays(dtype, (D,), elements=st.floats(0, 6.25, width=32)))
    y = None
    if labeled and draw(st.booleans()):
        y = draw(arrays(dtype, (n,), elements=st.floats(-2, 2, width=32)))
    return X, y, W, b


# ---------------------------------------------------------------------------
# Song–Xu column
# ---------------------------------------------------------------------------


@given(grids())
def test_song_xu_matches_definition(args):
    m, h, gamma, kernel = args
    u = song_xu_column(m, h, gamma, kernel)
    assert u.shape == m and u.dtype == np.float64
    np.testing.assert_allclose(u, ref.song_xu_column(m, h, gamma, kernel), rtol=1e-10, atol=1e-300)


@given(grids())
def test_song_xu_matrix_symmetric_with_fft_spectrum(args):
    m, h, gamma, kernel = args
    u = song_xu_column(m, h, gamma, kernel)
    U = ref.multilevel_circulant(u)
    np.testing.assert_array_equal(U, U.T)
    spectrum = np.fft.fftn(u)
    scale = np.abs(spectrum).max()
    np.testing.assert_allclose(spectrum.imag, 0, atol=1e-12 * scale)
    np.testing.assert_allclose(
        np.linalg.eigvalsh(U), np.sort(spectrum.real.ravel()), rtol=1e-10, atol=1e-12 * scale
    )


def test_song_xu_middle_index_is_counted_once():
    # m = 4: D_2 = {2} (i = m/2), D_1 = {1, 3}
    gamma, h = 0.3, 0.7
    u = song_xu_column([4], h, gamma)
    expected = [1.0, np.exp(-gamma * h**2) + np.exp(-gamma * (3 * h) ** 2), np.exp(-gamma * (2 * h) ** 2)]
    np.testing.assert_allclose(u[:3], expected, rtol=1e-14)
    assert u[3] == u[1]
    lap = song_xu_column((4, 2), (h, 2.0), gamma, kernel="laplacian")
    np.testing.assert_allclose(lap[2, 1], np.exp(-gamma * (2 * h + 2.0)), rtol=1e-14)


@given(grids())
def test_song_xu_scalar_spacing_broadcasts(args):
    m, h, gamma, kernel = args
    np.testing.assert_array_equal(
        song_xu_column(m, h[0], gamma, kernel), song_xu_column(m, [h[0]] * len(m), gamma, kernel)
    )


def test_song_xu_accepts_int_and_numpy_grid():
    a = song_xu_column(5, 0.5, 1.0)
    np.testing.assert_array_equal(a, song_xu_column(np.array([5]), np.array([0.5]), 1.0))
    np.testing.assert_array_equal(
        song_xu_column(np.array([3, 2], dtype=np.int32), 1, 2), song_xu_column((3, 2), 1.0, 2.0)
    )


@pytest.mark.parametrize("kernel", KERNELS)
def test_song_xu_threads_bit_identical(kernel):
    # several parallel chunks of the output and of the 1-D factors
    m, h = (50, 60, 71), (0.1, 0.05, 0.03)
    one = song_xu_column(m, h, 0.8, kernel, workers=1)
    two = song_xu_column(m, h, 0.8, kernel, workers=2)
    np.testing.assert_array_equal(one, two)
    for idx in [(0, 0, 0), (25, 30, 3), (49, 1, 70), (7, 59, 35)]:
        np.testing.assert_allclose(one[idx], _song_xu_entry(idx, m, h, 0.8, kernel), rtol=1e-12)
    line = song_xu_column((40_001,), 1e-3, 2.0, kernel, workers=1)
    np.testing.assert_array_equal(line, song_xu_column((40_001,), 1e-3, 2.0, kernel, workers=2))
    for i in (1, 777, 20_000, 20_001, 40_000):
        np.testing.assert_allclose(line[i], _song_xu_entry((i,), (40_001,), (1e-3,), 2.0, kernel), rtol=1e-12)


def _song_xu_entry(idx, m, h, gamma, kernel):
    """One entry of the column straight from the definition (for grids too big for the reference)."""
    sets = [{0} if i == 0 else {i, ms - i} for i, ms in zip(idx, m)]
    total = 0.0
    for j in itertools.product(*sets):
        pos = np.array(j, dtype=float) * np.asarray(h)
        dist = np.sqrt(np.sum(pos**2)) if kernel == "gaussian" else np.sum(np.abs(pos))
        total += float(ref.radial_value(dist, gamma, kernel))
    return total


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(m=(3, 0), h=1.0, gamma=1.0), ValueError, r"m\[1\] = 0"),
        (dict(m=(), h=1.0, gamma=1.0), ValueError, "at least one level"),
        (dict(m=(3, -2), h=1.0, gamma=1.0), ValueError, r"m\[1\]"),
        (dict(m=(3, 2.5), h=1.0, gamma=1.0), TypeError, r"m\[1\] must be an integer"),
        (dict(m=(3, 2), h=0.0, gamma=1.0), ValueError, "h must hold finite spacings > 0"),
        (dict(m=(3, 2), h=(1.0, -1.0), gamma=1.0), ValueError, "h must hold finite spacings > 0"),
        (dict(m=(3, 2), h=(1.0, np.nan), gamma=1.0), ValueError, "h must hold finite"),
        (dict(m=(3, 2), h=(1.0, 2.0, 3.0), gamma=1.0), ValueError, "one spacing per level"),
        (dict(m=(3, 2), h=1.0, gamma=0.0), ValueError, "gamma must be a finite number > 0"),
        (dict(m=(3, 2), h=1.0, gamma=-1.0), ValueError, "gamma"),
        (dict(m=(3, 2), h=1.0, gamma=np.inf), ValueError, "gamma"),
        (dict(m=(3, 2), h=1.0, gamma=1.0, kernel="poly"), ValueError, "gaussian, laplacian"),
        (dict(m=(3, 2), h=1.0, gamma=1.0, workers=0), ValueError, "workers"),
        (dict(m=(2**21, 2**21), h=1.0, gamma=1.0), ValueError, "needs about 32 TiB"),
    ],
)
def test_song_xu_rejects_bad_input(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        song_xu_column(**kwargs)


# ---------------------------------------------------------------------------
# random Fourier columns
# ---------------------------------------------------------------------------


@given(rff_inputs())
def test_labeled_column_matches_definition(args):
    X, y, W, b = args
    u = labeled_rff_column(X, y, W, b)
    assert u.shape == (X.shape[0], W.shape[1]) and u.dtype == np.float64
    np.testing.assert_allclose(u, ref.labeled_rff_column(X, y, W, b), rtol=1e-10, atol=1e-14)


@given(rff_inputs(labeled=False))
def test_rff_features_match_definition(args):
    X, _, W, b = args
    Z = rff_features(X, W, b)
    np.testing.assert_allclose(Z, ref.rff_features(X, W, b), rtol=1e-10, atol=1e-14)


@given(rff_inputs(dtype=np.float32))
def test_float32_within_tolerance(args):
    X, y, W, b = args
    D = W.shape[1]
    u = labeled_rff_column(X, y, W, b)
    Z = rff_features(X, W, b)
    assert u.dtype == np.float32 and Z.dtype == np.float32
    X64, W64, b64 = (a.astype(np.float64) for a in (X, W, b))
    y64 = None if y is None else y.astype(np.float64)
    np.testing.assert_allclose(u, ref.labeled_rff_column(X64, y64, W64, b64), rtol=1e-4,
                               atol=1e-4 * np.sqrt(2) / D)
    np.testing.assert_allclose(Z, ref.rff_features(X64, W64, b64), rtol=1e-4,
                               atol=1e-4 * np.sqrt(2 / D))


@st.composite
def small_labeled(draw):
    X, y, W, b = draw(rff_inputs(max_n=12, max_d=3, max_D=6))
    return X, y, W, b


@given(small_labeled())
def test_labeled_mcm_spectrum(args):
    """circ_(n,D)[u] has the Fourier modes as eigenvectors with eigenvalues FFT₂(u),
    and U Uᴴ has eigenvalues |FFT₂(u)|²."""
    X, y, W, b = args
    u = labeled_rff_column(X, y, W, b)
    n, D = u.shape
    U = ref.multilevel_circulant(u)
    v = np.fft.fft2(u)
    i, j = np.meshgrid(np.arange(n), np.arange(D), indexing="ij")
    a, c = np.meshgrid(np.arange(n), np.arange(D), indexing="ij")
    # Phi[(i, j), (a, c)] = exp(2πi (a i / n + c j / D)), multi-indices in C order
    Phi = np.exp(2j * np.pi * (np.outer(i.ravel(), a.ravel()) / n + np.outer(j.ravel(), c.ravel()) / D))
    scale = max(np.abs(v).max(), 1e-300)
    np.testing.assert_allclose(U @ Phi, Phi * v.ravel()[None, :], rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(
        np.linalg.eigvalsh(U @ U.conj().T), np.sort(np.abs(v.ravel()) ** 2), rtol=0,
        atol=1e-10 * scale**2,
    )


def _large_inputs(dtype, D=7, n=3001, d=4):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(n, d)).astype(dtype)
    W = rng.normal(size=(d, D)).astype(dtype)
    b = rng.uniform(0, 2 * np.pi, D).astype(dtype)
    y = rng.choice([-1.0, 1.0], n).astype(dtype)
    return X, y, W, b


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("D", [1, 7, 100])
def test_threads_bit_identical(dtype, D):
    X, y, W, b = _large_inputs(dtype, D=D)
    for f, args in [(labeled_rff_column, (X, y, W, b)), (labeled_rff_column, (X, None, W, b)),
                    (rff_features, (X, W, b))]:
        one = f(*args, workers=1)
        two = f(*args, workers=2)
        np.testing.assert_array_equal(one, two)
    if dtype == np.float64:
        np.testing.assert_allclose(one, ref.rff_features(X, W, b), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("dtype, atol", [(np.float64, 1e-14), (np.float32, 1e-6)])
def test_cos_accuracy_over_wide_range(dtype, atol):
    # W = 1, b = 0: the gemm is exact, so this measures the cos loop alone
    t = np.linspace(-1e4, 1e4, 200_003).astype(dtype)
    Z = rff_features(t[:, None], np.ones((1, 1), dtype), np.zeros(1, dtype))
    np.testing.assert_allclose(Z[:, 0] / np.sqrt(2), np.cos(t.astype(np.float64)), rtol=0, atol=atol)


def test_layout_and_dtype_converted():
    X, y, W, b = _large_inputs(np.float64, D=5, n=40)
    Xi = np.asfortranarray(np.round(X * 3).astype(np.int64))
    Wn = np.repeat(W, 2, axis=1)[:, ::2]  # non-contiguous view
    assert not Wn.flags.c_contiguous
    yi = [int(v) for v in y]
    expected = ref.labeled_rff_column(Xi.astype(float), np.asarray(yi, float), W, b)
    np.testing.assert_allclose(labeled_rff_column(Xi, yi, Wn, list(b)), expected, rtol=1e-10, atol=1e-14)
    # mixed float32 X with float64 W: output follows X
    assert labeled_rff_column(X.astype(np.float32), y, W, b).dtype == np.float32
    assert rff_features(X, W.astype(np.float32), b).dtype == np.float64


def _bad(arr, index, value):
    arr = np.array(arr, dtype=float)
    arr[index] = value
    return arr


_X, _y, _W, _b = _large_inputs(np.float64, D=4, n=10, d=3)


@pytest.mark.parametrize("bad_value, word", [(np.nan, "NaN"), (np.inf, "inf")])
@pytest.mark.parametrize("name", ["X", "y", "W", "b"])
def test_non_finite_input_rejected(name, bad_value, word):
    args = dict(X=_X, y=_y, W=_W, b=_b)
    index = {"X": (2, 1), "y": 3, "W": (1, 2), "b": 0}[name]
    args[name] = _bad(args[name], index, bad_value)
    with pytest.raises(ValueError, match=f"{name} contains {word}"):
        labeled_rff_column(**args)
    if name != "y":
        del args["y"]
        with pytest.raises(ValueError, match=f"{name} contains {word}"):
            rff_features(**args)


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(W=np.ones((2, 4))), r"W must have shape \(3, D\)"),
        (dict(W=np.ones((3, 0))), "D ≥ 1"),
        (dict(W=np.ones(3)), "W must be 2-D"),
        (dict(b=np.ones(5)), "b has 5 entries but W has D = 4"),
        (dict(b=np.ones((2, 2))), "b must be 1-D"),
        (dict(y=np.ones(9)), "y has 9 entries but X has 10 rows"),
        (dict(X=np.ones(10)), "X must be 2-D"),
        (dict(X=np.ones((0, 3))), "X needs at least 1 row"),
        (dict(workers=0), "workers"),
    ],
)
def test_bad_shapes_rejected(change, match):
    args = dict(X=_X, y=_y, W=_W, b=_b)
    args.update(change)
    with pytest.raises(ValueError, match=match):
        labeled_rff_column(**args)
    if "y" not in change:
        del args["y"]
        with pytest.raises(ValueError, match=match):
            rff_features(**args)


def test_complex_and_text_rejected():
    with pytest.raises(TypeError, match="X must be real"):
        rff_features(_X + 1j, _W, _b)
    with pytest.raises(TypeError, match="W must hold numbers"):
        rff_features(_X, [["a"] * 4] * 3, _b)


def test_read_only_inputs_are_accepted():
    rng = np.random.default_rng(0)
    X, W, b, y = rng.normal(size=(9, 3)), rng.normal(size=(3, 4)), rng.uniform(0, 6, 4), rng.normal(size=9)
    for a in (X, W, b, y):
        a.setflags(write=False)
    np.testing.assert_allclose(rff_features(X, W, b), ref.rff_features(X, W, b), rtol=1e-10)
    np.testing.assert_allclose(labeled_rff_column(X, y, W, b),
                               ref.labeled_rff_column(X, y, W, b), rtol=1e-10)
