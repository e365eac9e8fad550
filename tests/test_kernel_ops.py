"""kernel_block, kernel_matvec and kernel_sums against the dense references."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.linalg
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kernelselect import _kernels, lowlevel

import reference as ref

KERNELS = ["gaussian", "laplacian"]
SUM_KEYS = ["total", "frobenius_sq", "row_sums", "row_sums_sq", "diagonal"]


def _data(dtype, max_rows=60, max_features=5, bound=10.0):
    width = 32 if dtype == np.float32 else 64
    return st.integers(1, max_features).flatmap(
        lambda d: st.tuples(
            arrays(dtype, st.tuples(st.integers(1, max_rows), st.just(d)),
                   elements=st.floats(-bound, bound, width=width)),
            arrays(dtype, st.tuples(st.integers(1, max_rows), st.just(d)),
                   elements=st.floats(-bound, bound, width=width)),
        )
    )


gammas = st.floats(1e-3, 5.0)
kernels = st.sampled_from(KERNELS)


def _underflow_floor(dtype):
    """The absolute error one kernel value may carry in ``dtype`` besides its relative
    error: below the smallest normal number the format keeps a fixed spacing
    (``smallest_subnormal`` = ``smallest_normal`` · eps), so a value such as
    exp(−96) ≈ 2.03e-42 is stored to about 1e-3 relative in float32. A correctly
    rounded exp is within one unit there, the rounding of the exponent's argument
    within another: two units per term."""
    return 2.0 * float(np.finfo(dtype).smallest_subnormal)


def _assert_product_close(Y, K, V, rtol, dtype=np.float64):
    """|Y − K V| ≤ rtol · (|K| |V|) + floor · Σ_j |V_j| elementwise: the natural error
    scale of a sum, each term's kernel value carrying the format's underflow floor."""
    Y = np.asarray(Y, dtype=np.float64).reshape(K.shape[0], -1)
    V = np.asarray(V, dtype=np.float64).reshape(K.shape[0], -1)
    bound = (rtol * (np.abs(K) @ np.abs(V))
             + _underflow_floor(dtype) * np.abs(V).sum(axis=0) + 1e-300)
    assert np.all(np.abs(Y - K @ V) <= bound)


def _assert_sums_close(got, want, rtol, dtype=np.float64):
    """Each sum within rtol plus, per kernel value it adds, the format's underflow
    floor (a whole block of far-apart points sums to a subnormal number in float32)."""
    n = np.asarray(got["row_sums"]).size
    atol = _underflow_floor(dtype) * n * n
    for key in SUM_KEYS:
        np.testing.assert_allclose(got[key], want[key], rtol=rtol, atol=atol, err_msg=key)
    if "classes" in want:
        np.testing.assert_array_equal(got["classes"], want["classes"])
        np.testing.assert_allclose(got["block_sums"], want["block_sums"], rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# against the references, small random inputs
# ---------------------------------------------------------------------------


@given(_data(np.float64), gammas, kernels)
def test_kernel_block_matches_reference(XZ, gamma, kernel):
    X, Z = XZ
    K = lowlevel.kernel_block(X, Z, gamma, kernel)
    assert K.dtype == np.float64 and K.shape == (X.shape[0], Z.shape[0])
    np.testing.assert_allclose(K, ref.kernel_matrix(X, Z, gamma, kernel), rtol=1e-10, atol=1e-13)


@given(_data(np.float32, bound=3.0), st.floats(1e-2, 3.0), kernels)
def test_kernel_block_float32(XZ, gamma, kernel):
    X, Z = XZ
    K = lowlevel.kernel_block(X, Z, gamma, kernel)
    assert K.dtype == np.float32
    np.testing.assert_allclose(K, ref.kernel_matrix(X, Z, gamma, kernel), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("d", [1, 17, 32, 33, 40])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@given(st.integers(1, 70), st.integers(1, 70), st.integers(0, 2**32 - 1))
@settings(max_examples=15, deadline=None)
def test_both_routes_of_the_gaussian_distances(d, dtype, nx, nz, seed):
    """Up to 32 features the Gaussian distances come from column products over the
    transposed points (any column count: the tail goes through a padded block), beyond
    from BLAS; both against the formula, with a repeated point giving exactly 1."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((nx, d)).astype(dtype)
    Z = rng.standard_normal((nz, d)).astype(dtype)
    Z[nz // 2] = X[nx // 2]
    gamma = 0.5 / d
    K = lowlevel.kernel_block(X, Z, gamma)
    assert K.dtype == dtype and K[nx // 2, nz // 2] == 1.0
    tol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(K, ref.kernel_matrix(X.astype(np.float64), Z.astype(np.float64),
                                                    gamma, "gaussian"), rtol=tol, atol=tol)


@given(_data(np.float64), gammas, kernels, st.integers(0, 3), st.integers(0, 2**32 - 1))
def test_kernel_matvec_matches_reference(XZ, gamma, kernel, m, seed):
    X = XZ[0]
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    V = rng.normal(size=n) if m == 0 else rng.normal(size=(n, m))
    Y = lowlevel.kernel_matvec(X, V, gamma, kernel)
    assert Y.shape == V.shape and Y.dtype == np.float64
    _assert_product_close(Y, ref.kernel_matrix(X, X, gamma, kernel), V, rtol=1e-10)


@given(_data(np.float32, bound=3.0), st.floats(1e-2, 3.0), kernels, st.integers(1, 3))
def test_kernel_matvec_float32(XZ, gamma, kernel, m):
    X = XZ[0]
    n = X.shape[0]
    V = np.random.default_rng(n).normal(size=(n, m)).astype(np.float32)
    Y = lowlevel.kernel_matvec(X, V, gamma, kernel)
    assert Y.dtype == np.float32
    _assert_product_close(Y, ref.kernel_matrix(X, X, gamma, kernel), V, rtol=1e-4,
                          dtype=np.float32)


@given(_data(np.float64), gammas, kernels, st.integers(0, 3), st.integers(0, 2**32 - 1))
def test_kernel_sums_matches_reference(XZ, gamma, kernel, n_classes, seed):
    X = XZ[0]
    n = X.shape[0]
    labels = None
    if n_classes:
        labels = np.random.default_rng(seed).integers(0, n_classes, size=n)
    got = lowlevel.kernel_sums(X, gamma, kernel, labels=labels)
    _assert_sums_close(got, ref.kernel_sums(X, gamma, kernel, labels=labels), rtol=1e-10)


# Two far-apart points: the class-crossing block sums are one kernel value below
# float32's smallest normal number, exp(−96) ≈ 2.03e-42 (stored as 2.03048e-42) and
# exp(−99) ≈ 1.01e-43 (about 1.4% apart from its float32 neighbours).
_FAR_PAIR = np.array([[0.0], [np.sqrt(96.0)]], dtype=np.float32)
_FAR_PAIR_5D = np.array([[-3.0] * 5, [3.0] * 5], dtype=np.float32)


@given(_data(np.float32, bound=3.0), st.floats(1e-2, 3.0), kernels)
@example((_FAR_PAIR, _FAR_PAIR), 1.0, "gaussian")
@example((_FAR_PAIR_5D, _FAR_PAIR_5D), 0.55, "gaussian")
def test_kernel_sums_float32(XZ, gamma, kernel):
    X = XZ[0]
    labels = np.arange(X.shape[0]) % 2 * 2 - 1.0
    got = lowlevel.kernel_sums(X, gamma, kernel, labels=labels)
    _assert_sums_close(got, ref.kernel_sums(X, gamma, kernel, labels=labels), rtol=1e-4,
                       dtype=np.float32)


# ---------------------------------------------------------------------------
# several row blocks and column tiles (tile sizes do not divide n)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiled():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(700, 3))
    return X, {k: ref.kernel_matrix(X, X, 0.4, k) for k in KERNELS}


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n", [1, 127, 129, 513, 700])
def test_tiled_matvec_and_sums(tiled, kernel, n):
    X, Ks = tiled
    X, K = X[:n], Ks[kernel][:n, :n]
    rng = np.random.default_rng(n)
    for V in (rng.normal(size=n), rng.normal(size=(n, 1)), rng.normal(size=(n, 5))):
        _assert_product_close(lowlevel.kernel_matvec(X, V, 0.4, kernel), K, V, rtol=1e-10)
    labels = rng.choice(["b", "a", "c"], size=n)
    got = lowlevel.kernel_sums(X, 0.4, kernel, labels=labels)
    _assert_sums_close(got, ref.kernel_sums(X, 0.4, kernel, labels=labels), rtol=1e-10)
    assert list(got["classes"]) == sorted(set(labels))


@pytest.mark.parametrize("kernel", KERNELS)
def test_tiled_block_and_float32(tiled, kernel):
    X, Ks = tiled
    np.testing.assert_allclose(lowlevel.kernel_block(X, X[:300], 0.4, kernel), Ks[kernel][:, :300],
                               rtol=1e-10, atol=1e-14)
    X32 = X.astype(np.float32)
    v = np.random.default_rng(0).normal(size=700)
    _assert_product_close(lowlevel.kernel_matvec(X32, v, 0.4, kernel), Ks[kernel], v, rtol=1e-4,
                          dtype=np.float32)
    got = lowlevel.kernel_sums(X32, 0.4, kernel, labels=np.arange(700) % 2)
    _assert_sums_close(got, ref.kernel_sums(X, 0.4, kernel, labels=np.arange(700) % 2), rtol=1e-4,
                       dtype=np.float32)


# ---------------------------------------------------------------------------
# thread-count invariance: bit for bit
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel", KERNELS)
def test_one_and_two_threads_agree_bitwise(tiled, kernel, dtype):
    X = tiled[0].astype(dtype)
    rng = np.random.default_rng(1)
    for V in (rng.normal(size=700), rng.normal(size=(700, 4))):
        np.testing.assert_array_equal(lowlevel.kernel_matvec(X, V, 0.4, kernel, workers=1),
                                      lowlevel.kernel_matvec(X, V, 0.4, kernel, workers=2))
    labels = rng.integers(0, 3, size=700)
    one = lowlevel.kernel_sums(X, 0.4, kernel, labels=labels, workers=1)
    two = lowlevel.kernel_sums(X, 0.4, kernel, labels=labels, workers=2)
    for key in one:
        np.testing.assert_array_equal(one[key], two[key], err_msg=key)
    np.testing.assert_array_equal(lowlevel.kernel_block(X, X[:50], 0.4, kernel, workers=1),
                                  lowlevel.kernel_block(X, X[:50], 0.4, kernel, workers=2))


@pytest.mark.parametrize("workers", [None, -1, 3])
def test_workers_values(tiled, workers):
    X = tiled[0][:200]
    want = lowlevel.kernel_sums(X, 0.4, workers=1)["row_sums"]
    np.testing.assert_array_equal(lowlevel.kernel_sums(X, 0.4, workers=workers)["row_sums"], want)


# ---------------------------------------------------------------------------
# labels, conversions and scale
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "labels",
    [
        np.array([1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0]),
        np.array([2, 0, 1, 2, 2, 0, 1]),
        np.array(["dog", "cat", "cat", "eel", "dog", "eel", "cat"]),
        [[1], [2], [1], [2], [1], [2], [2]],
        np.zeros(7),
    ],
)
def test_label_kinds(labels):
    X = np.random.default_rng(3).normal(size=(7, 2))
    got = lowlevel.kernel_sums(X, 0.7, labels=labels)
    flat = np.asarray(labels).ravel()
    _assert_sums_close(got, ref.kernel_sums(X, 0.7, labels=flat), rtol=1e-10)
    assert got["block_sums"].shape == (np.unique(flat).size,) * 2
    np.testing.assert_allclose(got["block_sums"].sum(), got["total"], rtol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 32, 33, 90])
def test_many_classes(tiled, n_classes):
    """Few classes use interleaved per-class lanes, many a direct loop: both exact."""
    X = tiled[0][:600]
    labels = np.random.default_rng(n_classes).integers(0, n_classes, size=600)
    got = lowlevel.kernel_sums(X, 0.4, "laplacian", labels=labels)
    _assert_sums_close(got, ref.kernel_sums(X, 0.4, "laplacian", labels=labels), rtol=1e-10)


def test_layout_and_dtype_conversions():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 6))
    V = rng.normal(size=(40, 3))
    Xi = rng.integers(-5, 5, size=(40, 3))
    base_K = lowlevel.kernel_block(X[:, ::2], X[:20, ::2], 0.3)
    np.testing.assert_array_equal(lowlevel.kernel_block(np.ascontiguousarray(X[:, ::2]),
                                                        X[:20, ::2].copy(), 0.3), base_K)
    np.testing.assert_array_equal(lowlevel.kernel_matvec(np.asfortranarray(X), np.asfortranarray(V), 0.3),
                                  lowlevel.kernel_matvec(X, V, 0.3))
    K = lowlevel.kernel_block(Xi, Xi, 0.3, "laplacian")
    assert K.dtype == np.float64
    np.testing.assert_allclose(K, ref.kernel_matrix(Xi, Xi, 0.3, "laplacian"), rtol=1e-12)
    # X decides the dtype: float32 X with float64 Z or V gives float32
    X32 = X.astype(np.float32)
    assert lowlevel.kernel_block(X32, X, 0.3).dtype == np.float32
    assert lowlevel.kernel_matvec(X32, V, 0.3).dtype == np.float32
    assert lowlevel.kernel_matvec(X, np.zeros((40, 0)), 0.3).shape == (40, 0)
    assert lowlevel.kernel_block(X, X, 0.3, kernel="RBF").shape == (40, 40)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("exponent", [-400, 300])
def test_extreme_scales_are_exact_rescalings(kernel, exponent):
    """K depends on γ·dist only; huge or tiny coordinates must neither overflow nor lose it."""
    X = np.random.default_rng(5).normal(size=(30, 4))
    power = 2 * exponent if kernel == "gaussian" else exponent
    X_scaled, gamma = np.ldexp(X, exponent), float(np.ldexp(0.5, -power))
    want = lowlevel.kernel_sums(X, 0.5, kernel)
    got = lowlevel.kernel_sums(X_scaled, gamma, kernel)
    for key in SUM_KEYS:
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12, err_msg=key)
    np.testing.assert_allclose(lowlevel.kernel_block(X_scaled, X_scaled[:5], gamma, kernel),
                               ref.kernel_matrix(X, X[:5], 0.5, kernel), rtol=1e-12)


def test_huge_gamma_gives_identity_not_nan():
    X = np.random.default_rng(6).normal(size=(20, 3))
    K = lowlevel.kernel_block(X, X, 1e308)
    np.testing.assert_array_equal(K, np.eye(20))
    s = lowlevel.kernel_sums(X.astype(np.float32), 1e300, "laplacian")
    assert s["total"] == 20.0 and s["frobenius_sq"] == 20.0


def test_compiled_kernels_are_exported_for_cimport():
    from kernelselect import _kernels

    names = " ".join(_kernels.__pyx_capi__)
    for name in ("kernel_block_into", "kernel_matvec_into", "kernel_sums_into"):
        assert name in names


def _under_memory_limit(setup, calls):
    """The line each of ``calls`` (lambdas, as source) prints, "MemoryError: …" or "no
    error", run after ``setup`` in a fresh process whose address space is then capped
    at its size plus 256 kB: room for small Python objects, not for work buffers of a
    megabyte. ``setup`` should warm up what the calls share (the OpenMP team)."""
    script = textwrap.dedent(setup) + textwrap.dedent(
        """
        import resource
        status = [l for l in open("/proc/self/status") if l.startswith("VmSize")]
        vm = int(status[0].split()[1]) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 10), resource.RLIM_INFINITY))
        for f in ({}):
            try:
                f()
                print("no error")
            except MemoryError as exc:
                print("MemoryError:", exc)
        """).format(", ".join(calls))
    # A fixed mmap threshold makes glibc map (and unmap on free) every large buffer,
    # so no freed heap space from earlier calls can satisfy the request.
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def _no_memory(function, nbytes):
    return (f"MemoryError: {function}: could not allocate {nbytes} bytes "
            f"({nbytes / 2**20:.1f} MiB) of work buffers")


@pytest.mark.skipif(sys.platform != "linux", reason="uses RLIMIT_AS and /proc")
def test_failed_buffer_allocation_raises_memory_error():
    """A malloc failure inside the nogil kernels surfaces as MemoryError, not a crash."""
    lines = _under_memory_limit(
        """
        import numpy as np
        from kernelselect import lowlevel as L
        X = np.random.default_rng(0).normal(size=(300, 3))
        L.kernel_sums(X[:5], 0.5, workers=2); L.kernel_matvec(X[:5], np.ones(5), 0.5, workers=2)
        """,
        ["lambda: L.kernel_sums(X, 0.5, workers=2)",
         "lambda: L.kernel_matvec(X, np.ones(300), 0.5, workers=2)"])
    size = 300 * 8 + 2 * 128 * 512 * 8          # 300 squared norms, two 128 × 512 tiles
    assert lines == [_no_memory("kernel_sums_into", size), _no_memory("kernel_matvec_into", size)]


@pytest.mark.skipif(sys.platform != "linux", reason="uses RLIMIT_AS and /proc")
def test_per_thread_work_that_cannot_be_allocated_raises_memory_error():
    """The streamed prediction and the Nyström machine's passes allocate each thread's
    buffer and one status per block of rows together; when that fails, the error gives
    the bytes of both (a Status is a code, a size and two pointers: 32 bytes)."""
    lines = _under_memory_limit(
        """
        import numpy as np
        from kernelselect import _nystrom_passes, _predict
        rng = np.random.default_rng(0)
        X, Z = rng.normal(size=(300, 3)), rng.normal(size=(2000, 3))
        C, out, KtKV, shift = np.ones((2000, 1)), np.empty((300, 1)), np.empty((2000, 1)), np.zeros(3)
        partials = np.empty((_nystrom_passes._pass_groups(300), 2000, 1))
        _predict._cross_kernel_matvec_into(X[:5], Z[:5], C[:5], 0.5, 0, out[:5], 2)
        _nystrom_passes._nystrom_pass_into(0, X[:5], shift, 1.0, Z[:5], C[:5], 0.5, 0, KtKV[:5],
                                           partials[:1, :5], 2)
        """,
        ["lambda: _predict._cross_kernel_matvec_into(X, Z, C, 0.5, 0, out, 2)",
         "lambda: _nystrom_passes._nystrom_pass_into(0, X, shift, 1.0, Z, C, 0.5, 0, KtKV, "
         "partials, 2)"])
    statuses = 5 * 32                           # 300 rows: 5 blocks (and groups) of 64
    assert lines == [
        _no_memory("cross_kernel_matvec_into", 2 * 64 * 2000 * 8 + statuses),   # rows × n_train
        # a block's 64 rows × d, and a sub-block's 16 rows × (m + t) (m = 2000: 16 rows)
        _no_memory("nystrom_pass_into", 2 * (64 * 3 + 16 * (2000 + 1)) * 8 + statuses)]


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------

_X = np.random.default_rng(8).normal(size=(6, 2))


def _with(value, i=0):
    A = _X.copy()
    A[i, 0] = value
    return A


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: lowlevel.kernel_block(_with(np.nan), _X, 1.0), ValueError, "X contains NaN"),
        (lambda: lowlevel.kernel_block(_X, _with(np.inf), 1.0), ValueError, "Z contains inf"),
        (lambda: lowlevel.kernel_block(_X[:, 0], _X, 1.0), ValueError, "X must be 2-D"),
        (lambda: lowlevel.kernel_block(_X, _X[:, 0], 1.0), ValueError, "Z must be 2-D"),
        (lambda: lowlevel.kernel_block(_X, np.ones((3, 5)), 1.0), ValueError, "Z has 5 features"),
        (lambda: lowlevel.kernel_block(np.ones((0, 2)), _X, 1.0), ValueError, "X needs at least"),
        (lambda: lowlevel.kernel_block(_X, _X, 0.0), ValueError, "gamma"),
        (lambda: lowlevel.kernel_block(_X, _X, -1.0), ValueError, "gamma"),
        (lambda: lowlevel.kernel_matvec(_X, np.ones(6), np.nan), ValueError, "gamma"),
        (lambda: lowlevel.kernel_sums(_X, np.inf), ValueError, "gamma"),
        (lambda: lowlevel.kernel_sums(_X, "1"), TypeError, "gamma"),
        (lambda: lowlevel.kernel_sums(_X, 1.0, kernel="poly"), ValueError, "gaussian, laplacian"),
        (lambda: lowlevel.kernel_block(_X, _X, 1.0, kernel=None), ValueError, "kernel"),
        (lambda: lowlevel.kernel_matvec(_X, np.ones(5), 1.0), ValueError, "V has 5 rows"),
        (lambda: lowlevel.kernel_matvec(_X, np.ones((6, 2, 2)), 1.0), ValueError, "V must be"),
        (lambda: lowlevel.kernel_matvec(_X, _with(np.nan, 3), 1.0), ValueError, "V contains NaN"),
        (lambda: lowlevel.kernel_matvec(_X, np.array(["a"] * 6), 1.0), TypeError, "V must hold"),
        (lambda: lowlevel.kernel_matvec(_with(np.inf), np.ones(6), 1.0), ValueError, "X contains inf"),
        (lambda: lowlevel.kernel_sums(_with(np.nan), 1.0), ValueError, "X contains NaN"),
        (lambda: lowlevel.kernel_sums(_X, 1.0, labels=np.ones(5)), ValueError, "labels has 5"),
        (lambda: lowlevel.kernel_sums(_X, 1.0, labels=np.ones((6, 2))), ValueError, "labels must be 1-D"),
        (lambda: lowlevel.kernel_sums(_X, 1.0, labels=[1, 2, np.nan, 1, 2, 1]), ValueError, "labels contains NaN"),
        (lambda: lowlevel.kernel_sums(_X, 1.0, labels=[1, "a", None, 1, 2, 1]), ValueError, "labels"),
        (lambda: lowlevel.kernel_sums(_X, 1.0, workers=0), ValueError, "workers"),
        (lambda: lowlevel.kernel_matvec(_X, np.ones(6), 1.0, workers=-2), ValueError, "workers"),
        (lambda: lowlevel.kernel_block(_X, _X, 1.0, workers=1.5), TypeError, "workers"),
    ],
)
def test_bad_input_raises(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(0, 70), cols=st.integers(1, 40), single=st.booleans(),
       seed=st.integers(0, 2**31 - 1))
def test_gram_update_adds_the_upper_triangle_of_PtP(rows, cols, single, seed):
    """G += PᵀP on the upper triangle, G's strict lower triangle untouched, for both
    dtypes; the reference is the formula Σ_r P[r, i] P[r, j]."""
    from kernelselect.primitives._kernel_ops import gram_upper_add_unchecked

    dtype = np.float32 if single else np.float64
    rng = np.random.default_rng(seed)
    P = rng.standard_normal((rows, cols)).astype(dtype)
    G0 = rng.standard_normal((cols, cols)).astype(dtype)
    G = G0.copy()
    gram_upper_add_unchecked(P, G)
    ref = G0.astype(np.float64) + np.einsum("ri,rj->ij", P.astype(np.float64),
                                            P.astype(np.float64))
    upper = np.triu_indices(cols)
    tol = 1e-4 if single else 1e-12
    scale = 1.0 + np.abs(ref).max()
    assert np.abs(G[upper] - ref[upper]).max() <= tol * scale * max(rows, 1)
    lower = np.tril_indices(cols, -1)
    assert np.array_equal(G[lower], G0[lower])


def test_gram_update_refuses_a_mismatched_output():
    from kernelselect.primitives._kernel_ops import gram_upper_add_unchecked

    with pytest.raises(ValueError, match="G"):
        gram_upper_add_unchecked(np.ones((3, 4)), np.zeros((3, 3)))


def _scipy_evd(A):
    return scipy.linalg.eigh(A, driver="evd")


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), single=st.booleans(), symmetric=st.booleans(),
       seed=st.integers(0, 2**31 - 1))
def test_symmetric_eigh_gives_the_bits_of_scipys_evd_driver(n, single, symmetric, seed):
    """The same eigenvalues and eigenvectors, bit for bit, as scipy.linalg.eigh with
    the "evd" driver, for both dtypes; a general matrix is read by its lower triangle
    as scipy reads it. And A·u_j = w_j·u_j with U orthonormal (the formula)."""
    from kernelselect.primitives._kernel_ops import symmetric_eigh_unchecked

    dtype = np.float32 if single else np.float64
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    if symmetric:
        A = A + A.T
    A = A.astype(dtype)
    w, U = symmetric_eigh_unchecked(A)
    w0, U0 = _scipy_evd(A)
    assert w.dtype == w0.dtype == dtype and U.dtype == U0.dtype == dtype
    np.testing.assert_array_equal(w, w0)
    np.testing.assert_array_equal(U, U0)
    S = np.tril(A.astype(np.float64)) + np.tril(A.astype(np.float64), -1).T
    Ud = U.astype(np.float64)
    tol = (1e-4 if single else 1e-12) * n * (1.0 + np.abs(S).max())
    assert np.abs(S @ Ud - Ud * w.astype(np.float64)).max() <= tol
    assert np.abs(Ud.T @ Ud - np.eye(n)).max() <= (1e-5 if single else 1e-13) * n
    assert np.all(np.diff(w.astype(np.float64)) >= 0)


@pytest.mark.parametrize("n", [64, 129, 300])
def test_symmetric_eigh_matches_scipy_on_kernel_matrices_past_the_blocked_reduction(n):
    """Landmark Gram matrices (graded spectra down to rounding) of the sizes where
    LAPACK's reduction to tridiagonal form runs blocked: the bits of scipy's evd."""
    from kernelselect.primitives._kernel_ops import symmetric_eigh_unchecked

    X = np.random.default_rng(n).standard_normal((n, 5))
    W = lowlevel.kernel_block(X, X, 0.05)
    W = 0.5 * (W + W.T)
    for A in (W, W.astype(np.float32)):
        w, U = symmetric_eigh_unchecked(A)
        w0, U0 = _scipy_evd(A)
        np.testing.assert_array_equal(w, w0)
        np.testing.assert_array_equal(U, U0)


def test_symmetric_eigh_on_python_threads_gives_the_serial_bits():
    from concurrent.futures import ThreadPoolExecutor

    from kernelselect.primitives._kernel_ops import symmetric_eigh_unchecked

    rng = np.random.default_rng(3)
    mats = [(lambda B: B + B.T)(rng.standard_normal((90, 90))) for _ in range(6)]
    serial = [symmetric_eigh_unchecked(A) for A in mats]
    with ThreadPoolExecutor(3) as pool:
        threaded = list(pool.map(symmetric_eigh_unchecked, mats))
    for (w, U), (w2, U2) in zip(serial, threaded):
        np.testing.assert_array_equal(w, w2)
        np.testing.assert_array_equal(U, U2)


def _scipy_cholesky_inverse(W):
    L, info = scipy.linalg.lapack.dpotrf(W, lower=1, clean=1) if W.dtype == np.float64 \
        else scipy.linalg.lapack.spotrf(W, lower=1, clean=1)
    if info != 0:
        return None
    L, info = scipy.linalg.lapack.dtrtri(L, lower=1) if W.dtype == np.float64 \
        else scipy.linalg.lapack.strtri(L, lower=1)
    return None if info != 0 else np.ascontiguousarray(L.T)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), single=st.booleans(), shift=st.sampled_from([1e-3, 1.0, -0.5]),
       seed=st.integers(0, 2**31 - 1))
def test_cholesky_inverse_gives_the_bits_of_scipys_potrf_and_trtri(n, single, shift, seed):
    """T = L⁻ᵀ bit for bit as scipy's dpotrf(clean=1) then dtrtri, transposed, for both
    dtypes; None where ?potrf finds W indefinite (a negative shift); and the formula:
    T upper triangular with TᵀWT = I."""
    from kernelselect.primitives._kernel_ops import cholesky_inverse_unchecked

    dtype = np.float32 if single else np.float64
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    W = (B @ B.T / n + shift * np.eye(n)).astype(dtype)
    W = 0.5 * (W + W.T)
    T, T0 = cholesky_inverse_unchecked(W), _scipy_cholesky_inverse(W)
    if T0 is None:
        assert T is None
        assert np.linalg.eigvalsh(W.astype(np.float64)).min() < 1e-3
        return
    assert T.dtype == dtype and T.flags.c_contiguous
    np.testing.assert_array_equal(T, T0)
    np.testing.assert_array_equal(np.tril(T, -1), 0.0)
    Td, Wd = T.astype(np.float64), W.astype(np.float64)
    cond = np.linalg.cond(Wd)
    assert np.abs(Td.T @ Wd @ Td - np.eye(n)).max() <= (1e-5 if single else 1e-13) * n * cond


def test_cholesky_inverse_on_python_threads_gives_the_serial_bits():
    from concurrent.futures import ThreadPoolExecutor

    from kernelselect.primitives._kernel_ops import cholesky_inverse_unchecked

    X = np.random.default_rng(4).standard_normal((150, 4))
    mats = [lowlevel.kernel_block(X, X, g) + 1e-6 * np.eye(150) for g in (0.1, 0.3, 1.0, 3.0)]
    serial = [cholesky_inverse_unchecked(0.5 * (W + W.T)) for W in mats]
    with ThreadPoolExecutor(2) as pool:
        threaded = list(pool.map(lambda W: cholesky_inverse_unchecked(0.5 * (W + W.T)), mats))
    for T, T2 in zip(serial, threaded):
        np.testing.assert_array_equal(T, T2)


def test_cholesky_inverse_refuses_what_lapack_cannot_take():
    from kernelselect.primitives._kernel_ops import cholesky_inverse_unchecked

    W = np.eye(4)
    W[1, 2] = np.nan                               # upper triangle: read
    with pytest.raises(ValueError, match="W must be finite"):
        cholesky_inverse_unchecked(W)
    with pytest.raises(ValueError, match="W must be square"):
        cholesky_inverse_unchecked(np.ones((3, 4)))
    A = np.eye(3)
    with pytest.raises(ValueError, match="T must be an array other than W"):
        _kernels._cholesky_inverse_into(A, A)
    assert cholesky_inverse_unchecked(np.zeros((3, 3))) is None     # not positive definite
    assert cholesky_inverse_unchecked(np.empty((0, 0))).shape == (0, 0)


def test_symmetric_eigh_refuses_what_lapack_cannot_take():
    from kernelselect.primitives._kernel_ops import symmetric_eigh_unchecked

    A = np.eye(4)
    A[2, 1] = np.nan                               # lower triangle: read
    with pytest.raises(ValueError, match="A must be finite"):
        symmetric_eigh_unchecked(A)
    B = np.eye(4)
    B[1, 2] = np.inf                               # strict upper triangle: not read
    w, U = symmetric_eigh_unchecked(B)
    np.testing.assert_array_equal(w, np.ones(4))
    with pytest.raises(ValueError, match="A must be square"):
        symmetric_eigh_unchecked(np.ones((3, 4)))
    A = np.eye(3)
    with pytest.raises(ValueError, match="Z must be an array other than A"):
        _kernels._symmetric_eigh_into(A, np.empty(3), A)
    with pytest.raises(ValueError, match="w must be of length n"):
        _kernels._symmetric_eigh_into(A, np.empty(2), np.empty((3, 3)))
    w, U = symmetric_eigh_unchecked(np.empty((0, 0)))
    assert w.shape == (0,) and U.shape == (0, 0)
