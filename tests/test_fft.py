"""kernelselect.fft against numpy.fft, the half-spectrum sums against full-spectrum sums."""

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernelselect import fft

BACKENDS = ["pyfftw", "scipy"]
DTYPES = [np.float32, np.float64]


def _tol(dtype):
    return {"rtol": 1e-4, "atol": 1e-4} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-10}


@st.composite
def real_arrays(draw):
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=1, max_size=3)))
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**32 - 1))
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return a


@st.composite
def arrays_and_axes(draw):
    a = draw(real_arrays())
    axes = draw(st.permutations(range(a.ndim)))
    k = draw(st.integers(1, a.ndim))
    return a, tuple(axes[:k])


@pytest.mark.parametrize("backend", BACKENDS)
@settings(deadline=None)
@given(a=real_arrays(), workers=st.sampled_from([1, 2]))
def test_rfftn_matches_numpy(backend, a, workers):
    A = fft.rfftn(a, workers=workers, backend=backend)
    expected = np.fft.rfftn(a.astype(np.float64))
    assert A.dtype == (np.complex64 if a.dtype == np.float32 else np.complex128)
    np.testing.assert_allclose(A, expected, **_tol(a.dtype))
    # the stored half equals the first columns of the full complex spectrum
    full = np.fft.fftn(a.astype(np.float64))
    np.testing.assert_allclose(A, full[..., : a.shape[-1] // 2 + 1], **_tol(a.dtype))


@pytest.mark.parametrize("backend", BACKENDS)
@settings(deadline=None)
@given(data=arrays_and_axes())
def test_rfftn_irfftn_axes(backend, data):
    a, axes = data
    A = fft.rfftn(a, axes=axes, backend=backend)
    np.testing.assert_allclose(A, np.fft.rfftn(a.astype(np.float64), axes=axes), **_tol(a.dtype))
    s = [a.shape[ax] for ax in axes]
    back = fft.irfftn(A, s, axes=axes, backend=backend)
    assert back.dtype == a.dtype
    assert back.shape == a.shape
    np.testing.assert_allclose(back, a, **_tol(a.dtype))


@pytest.mark.parametrize("backend", BACKENDS)
@settings(deadline=None)
@given(data=arrays_and_axes())
def test_fftn_ifftn_complex(backend, data):
    a, axes = data
    rng = np.random.default_rng(a.size)
    z = (a + 1j * rng.standard_normal(a.shape)).astype(
        np.complex64 if a.dtype == np.float32 else np.complex128
    )
    Z = fft.fftn(z, axes=axes, backend=backend)
    assert Z.dtype == z.dtype
    np.testing.assert_allclose(Z, np.fft.fftn(z.astype(np.complex128), axes=axes), **_tol(a.dtype))
    np.testing.assert_allclose(fft.ifftn(Z, axes=axes, backend=backend), z, **_tol(a.dtype))


@settings(deadline=None)
@given(data=arrays_and_axes())
def test_multiplicity_counts_every_frequency(data):
    a, axes = data
    w = fft.rfftn_multiplicity(a.shape, axes)
    A = fft.rfftn(a, axes=axes)
    assert w.shape == A.shape
    assert w.sum() == a.size
    last = axes[-1]
    n = a.shape[last]
    w1 = np.moveaxis(w, last, -1).reshape(-1, w.shape[last])[0]
    assert w1[0] == 1
    if n % 2 == 0:
        assert w1[-1] == 1 and (w1[1:-1] == 2).all()
    else:
        assert (w1[1:] == 2).all()


@pytest.mark.parametrize("backend", BACKENDS)
@settings(deadline=None)
@given(data=arrays_and_axes())
def test_parseval_and_full_spectrum_sum(backend, data):
    a, axes = data
    a64 = a.astype(np.float64)
    A = fft.rfftn(a64, axes=axes, backend=backend)
    s = np.abs(A) ** 2
    N = np.prod([a.shape[ax] for ax in axes])
    w = fft.rfftn_multiplicity(a.shape, axes)
    parseval = N * np.sum(a64**2)
    np.testing.assert_allclose(np.sum(w * s), parseval, rtol=1e-10, atol=1e-10)
    full_s = np.abs(np.fft.fftn(a64, axes=axes)) ** 2
    np.testing.assert_allclose(fft.full_spectrum_sum(s, a.shape, axes), full_s.sum(), rtol=1e-10, atol=1e-10)
    # a nonlinear function of |v|, through spectrum_sum
    g = lambda v: 1.0 / (np.abs(v) ** 2 + 0.5)  # noqa: E731
    np.testing.assert_allclose(
        fft.spectrum_sum(g, A, a.shape, axes), g(np.fft.fftn(a64, axes=axes)).sum(), rtol=1e-10
    )


@settings(deadline=None)
@given(a=real_arrays())
def test_sum_vectorised_over_alpha(a):
    a64 = a.astype(np.float64)
    A = fft.rfftn(a64)
    alphas = np.array([1e-3, 0.1, 1.0, 10.0])
    s = np.abs(A) ** 2
    full = np.abs(np.fft.fftn(a64)) ** 2
    expected = np.array([np.sum(full / (full + al)) for al in alphas])
    trailing = fft.full_spectrum_sum(s[..., None] / (s[..., None] + alphas), a.shape)
    leading = fft.full_spectrum_sum(
        s[None] / (s[None] + alphas.reshape((-1,) + (1,) * a.ndim)), a.shape, extra_axes="leading"
    )
    assert trailing.shape == leading.shape == (4,)
    np.testing.assert_allclose(trailing, expected, rtol=1e-10)
    np.testing.assert_allclose(leading, expected, rtol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cached_plan_results_are_fresh(dtype):
    fft.clear_plan_cache()
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 5)).astype(dtype)
    b = rng.standard_normal((6, 5)).astype(dtype)
    first = fft.rfftn(a, backend="pyfftw", workers=1)
    keep = first.copy()
    assert fft.plan_cache_info()["plans"] == 1
    second = fft.rfftn(a, backend="pyfftw", workers=1)
    assert fft.plan_cache_info()["plans"] == 1  # reused, not re-planned
    np.testing.assert_array_equal(first, second)
    assert not np.shares_memory(first, second)
    third = fft.rfftn(b, backend="pyfftw", workers=1)
    np.testing.assert_array_equal(first, keep)  # a later call left the earlier result alone
    np.testing.assert_allclose(third, np.fft.rfftn(b.astype(np.float64)), **_tol(dtype))
    # writing into a result does not leak into the next one
    first[...] = 0
    np.testing.assert_array_equal(fft.rfftn(a, backend="pyfftw", workers=1), keep)
    # the inverse is normalised once per call, not cumulatively
    r1 = fft.irfftn(keep, a.shape, backend="pyfftw", workers=1)
    r2 = fft.irfftn(keep, a.shape, backend="pyfftw", workers=1)
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_allclose(r1, a, **_tol(dtype))
    # input is never modified, even though the c2r plan destroys its own buffer
    np.testing.assert_array_equal(keep, fft.rfftn(a, backend="pyfftw", workers=1))


def test_uncached_large_plan_and_cache_limits():
    previous = fft.set_plan_cache_limits(max_plans=2, max_bytes=10_000)
    try:
        fft.clear_plan_cache()
        rng = np.random.default_rng(2)
        big = rng.standard_normal((40, 50))  # buffers exceed max_bytes: built per call
        B1 = fft.rfftn(big, backend="pyfftw")
        B2 = fft.rfftn(big, backend="pyfftw")
        assert fft.plan_cache_info()["plans"] == 0
        assert not np.shares_memory(B1, B2)
        np.testing.assert_allclose(B1, np.fft.rfftn(big), rtol=1e-10, atol=1e-10)
        for n in (3, 4, 5):
            fft.rfftn(np.ones(n), backend="pyfftw")
        info = fft.plan_cache_info()
        assert info["plans"] == 2 and info["bytes"] <= 10_000
    finally:
        fft.set_plan_cache_limits(**previous)


def test_threads_share_plans_safely():
    fft.clear_plan_cache()
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((16, 12)) for _ in range(8)]
    expected = [np.fft.rfftn(x) for x in arrays]
    errors = []

    def work(i):
        for _ in range(20):
            got = fft.rfftn(arrays[i], backend="pyfftw", workers=1)
            if not np.allclose(got, expected[i], rtol=1e-10, atol=1e-10):
                errors.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(arrays))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("effort", ["FFTW_ESTIMATE", "measure"])
def test_planner_effort_and_wisdom(effort):
    previous = fft.set_planner_effort(effort)
    try:
        assert fft.get_planner_effort().startswith("FFTW_")
        a = np.random.default_rng(4).standard_normal((8, 6))
        np.testing.assert_allclose(fft.rfftn(a), np.fft.rfftn(a), rtol=1e-10, atol=1e-10)
        wisdom = fft.export_wisdom()
        assert len(wisdom) == 3 and all(isinstance(w, bytes) for w in wisdom)
        assert fft.import_wisdom(wisdom)[0] is True
    finally:
        fft.set_planner_effort(previous)


def test_backend_setting_and_info():
    previous = fft.set_backend("scipy")
    try:
        assert fft.get_backend() == "scipy"
        assert fft.backend_info()["backend"] == "scipy"
    finally:
        fft.set_backend(previous)
    info = fft.backend_info()
    assert info["backend"] in ("pyfftw", "scipy")
    assert isinstance(info["threads"], int) and info["threads"] >= 1
    assert "pyfftw_version" in info


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: fft.rfftn(np.ones(4), backend="numpy"), "backend"),
        (lambda: fft.set_backend("mkl"), "backend"),
        (lambda: fft.rfftn(np.ones(4), workers=0), "workers"),
        (lambda: fft.rfftn(np.ones(4), workers=-3), "workers"),
        (lambda: fft.irfftn(np.ones(3, complex), (4,), workers=0), "workers"),
        (lambda: fft.irfftn(np.ones(3, complex), (7,)), "s[-1]"),
        (lambda: fft.irfftn(np.ones((2, 3), complex), (3, 4)), "s[0]"),
        (lambda: fft.irfftn(np.ones((2, 3), complex), (2, 4), axes=(1,)), "s="),
        (lambda: fft.irfftn(np.ones(3, complex), (0,)), "s must"),
        (lambda: fft.rfftn(np.ones((2, 3)), axes=(0, 0)), "axes"),
        (lambda: fft.rfftn(np.ones((2, 3)), axes=(2,)), "axes"),
        (lambda: fft.rfftn(np.ones((0, 3))), "a has length 0"),
        (lambda: fft.set_planner_effort("fast"), "effort"),
        (lambda: fft.set_plan_cache_limits(max_plans=-1), "max_plans"),
        (lambda: fft.rfftn_multiplicity((3, 0)), "shape"),
        (lambda: fft.full_spectrum_sum(np.ones((4, 4)), (4, 5)), "values"),
        (lambda: fft.spectrum_sum(np.abs, np.ones((4, 4)), (4, 5)), "V has shape"),
        (lambda: fft.spectrum_sum(3.0, np.ones((4, 3)), (4, 5)), "f must"),
        (lambda: fft.import_wisdom(b"junk"), "wisdom"),
        (lambda: fft.full_spectrum_sum(np.ones(3), (4,), extra_axes="middle"), "extra_axes"),
        (lambda: fft.full_spectrum_sum(np.ones((2, 3)), (4,), extra_axes="trailing"), "values"),
    ],
)
def test_bad_input_names_the_argument(call, word):
    with pytest.raises(ValueError, match=word.replace("[", r"\[").replace("]", r"\]")):
        call()


def test_complex_input_to_rfftn_is_refused():
    with pytest.raises(TypeError, match="a must be real"):
        fft.rfftn(np.ones(4, dtype=complex))


def test_nan_propagates_without_error():
    a = np.ones((3, 4))
    a[1, 2] = np.nan
    for backend in BACKENDS:
        assert np.isnan(fft.rfftn(a, backend=backend)).any()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(520, 301), (60, 48, 50)])
def test_multithreaded_plans_large_enough_to_use_them(backend, shape):
    # ≥ 2·MIN_POINTS_PER_THREAD points, so two threads really run
    a = np.random.default_rng(5).standard_normal(shape)
    assert a.size >= 2 * fft.MIN_POINTS_PER_THREAD
    one = fft.rfftn(a, workers=1, backend=backend)
    two = fft.rfftn(a, workers=2, backend=backend)
    np.testing.assert_allclose(two, np.fft.rfftn(a), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(two, one, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(fft.irfftn(two, shape, workers=2, backend=backend), a, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("value", ["999999", "4096"])
def test_huge_omp_num_threads_is_capped_for_fftw(value):
    """FFTW's OpenMP loops take the runtime's default team: an OMP_NUM_THREADS far
    above the cores must be capped (it used to crash the process), in the main thread
    and in another Python thread."""
    import os
    import subprocess
    import sys

    code = (
        "import threading, numpy as np\n"
        "from kernelselect import fft\n"
        "a = np.random.default_rng(0).random((512, 512))\n"
        "ok = [np.allclose(fft.rfftn(a, backend='pyfftw'), np.fft.rfftn(a))]\n"
        "t = threading.Thread(target=lambda: ok.append(np.allclose(\n"
        "    fft.irfftn(fft.rfftn(a, backend='pyfftw'), a.shape, backend='pyfftw'), a)))\n"
        "t.start(); t.join()\n"
        "print(all(ok) and len(ok) == 2)\n")
    env = dict(os.environ, OMP_NUM_THREADS=value)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "True"
