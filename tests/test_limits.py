"""Thread counts, the memory guard and refused machines: every case fails fast with a
clear ValueError instead of crashing, allocating tens of gigabytes or fitting nonsense."""

import os
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

import kernelselect
from kernelselect import lowlevel
from kernelselect.utils._threads import check_workers, max_workers


def run_python(code, env=None):
    """Run ``code`` in a fresh interpreter; returns (returncode, stdout + stderr)."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout + proc.stderr


# ---------------------------------------------------------------------------
# workers
# ---------------------------------------------------------------------------

def test_huge_worker_counts_raise_instead_of_crashing():
    # formerly SIGSEGV (100000) or libgomp "Thread creation failed" and exit 1 (1000);
    # OMP_NUM_THREADS far above the cores must not crash the default (workers=None) either
    code, out = run_python("""
        import numpy as np
        from kernelselect import lowlevel
        from kernelselect.utils._threads import check_workers, max_workers
        for workers in (100000, 1000):
            try:
                lowlevel.kernel_block(np.ones((5, 2)), np.ones((5, 2)), 0.5, workers=workers)
            except ValueError as exc:
                print("ValueError:", exc)
        print("default capped:", check_workers(None) == max_workers())
        print(lowlevel.kernel_block(np.ones((500, 2)), np.ones((5, 2)), 0.5).shape)
    """, env={"OMP_NUM_THREADS": "100000"})
    assert code == 0, out
    for workers in (100000, 1000):
        assert f"ValueError: workers={workers} is more threads" in out and "at most" in out
    assert "default capped: True" in out and "(500, 5)" in out


def test_every_entry_point_checks_workers():
    X = np.random.default_rng(0).standard_normal((20, 2))
    y = np.sign(X[:, 0] + 0.1)
    too_many = max_workers() + 1
    calls = [
        lambda: lowlevel.kernel_matvec(X, y, 0.5, workers=too_many),
        lambda: lowlevel.kernel_sums(X, 0.5, workers=too_many),
        lambda: lowlevel.rff_features(X, np.ones((2, 3)), np.zeros(3), workers=too_many),
        lambda: lowlevel.song_xu_column([4, 4], 1.0, 0.5, workers=too_many),
        lambda: kernelselect.select_kernel(X, y, approximation="exact", workers=too_many),
        lambda: kernelselect.LSSVMClassifier(workers=too_many).fit(X, y),
        lambda: kernelselect.KernelRidgeRegressor(workers=too_many).fit(X, X[:, 0]),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=f"workers={too_many}"):
            call()


def test_check_workers_bounds():
    assert check_workers(max_workers()) == max_workers()
    assert 1 <= check_workers(None) <= max_workers()
    assert check_workers(-1) >= 1


def test_cli_refuses_huge_worker_count(tmp_path):
    rng = np.random.default_rng(0)
    data = np.column_stack([rng.standard_normal((30, 2)), rng.integers(0, 2, 30)])
    path = tmp_path / "d.csv"
    np.savetxt(path, data, delimiter=",")
    proc = subprocess.run([sys.executable, "-m", "kernelselect", "select", str(path),
                           "--workers", "100000"], capture_output=True, text=True, timeout=600)
    assert proc.returncode not in (0, -11), proc.stderr
    assert "workers=100000" in proc.stderr


# ---------------------------------------------------------------------------
# memory guard
# ---------------------------------------------------------------------------

N_BIG = 50000


@pytest.fixture(scope="module")
def big_X():
    return np.random.default_rng(1).random((N_BIG, 3))


def _refused_quickly(call, match="needs about"):
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=match) as info:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # no large allocation happened before the refusal (numpy reports its buffers to
    # tracemalloc); measured in bytes, not seconds, so a busy machine cannot fail it
    assert peak < 64 * 2**20, peak
    assert "set_config(max_bytes=" in str(info.value)
    return str(info.value)


def test_nystroem_landmarks_refused(big_X):
    msg = _refused_quickly(lambda: kernelselect.select_kernel(
        big_X, big_X[:, 0], approximation=kernelselect.Nystroem(n_landmarks=N_BIG)))
    assert "n_landmarks=50000" in msg and "fewer landmarks" in msg


def test_rff_features_refused(big_X):
    msg = _refused_quickly(lambda: kernelselect.select_kernel(
        big_X, big_X[:, 0], approximation=kernelselect.RFF(n_features=N_BIG)))
    assert "n_features=50000" in msg


def test_random_mcm_features_refused(big_X):
    y = np.sign(big_X[:, 0] - 0.5)
    _refused_quickly(lambda: kernelselect.select_kernel(
        big_X, y, criterion="random_kta",
        approximation=kernelselect.RandomMCM(n_features=N_BIG)))


def test_kernel_sums_with_per_sample_labels_refused(big_X):
    msg = _refused_quickly(lambda: lowlevel.kernel_sums(big_X, 0.5, labels=np.arange(N_BIG)))
    assert "50000 distinct labels" in msg


def test_di_nystroem_components_refused(big_X):
    _refused_quickly(lambda: kernelselect.DINystroem(n_components=40000).fit(
        big_X, big_X[:, 0] > 0.5))


def test_song_xu_grid_refused():
    _refused_quickly(lambda: lowlevel.song_xu_column([2**20, 2**20], 1.0, 0.5))
    _refused_quickly(lambda: lowlevel.song_xu_column([2**40], 1.0, 0.5))


def test_fit_spacing_pairs_refused():
    X = np.random.default_rng(0).standard_normal((64, 2))
    _refused_quickly(lambda: lowlevel.fit_spacing(X, [8, 8], n_pairs=10**10))


def test_kernel_block_output_refused(big_X):
    _refused_quickly(lambda: lowlevel.kernel_block(big_X, big_X, 0.5))


def test_exact_dense_path_uses_the_same_guard():
    X = np.random.default_rng(0).standard_normal((600, 2))
    with kernelselect.config_context(max_bytes=2**20):
        msg = _refused_quickly(lambda: kernelselect.select_kernel(
            X, X[:, 0], approximation="exact"))
    assert "exact dense kernel matrix" in msg
    kernelselect.select_kernel(X[:100], X[:100, 0], criterion="ree", approximation="exact")


def test_selection_cv_refuses_the_refit_before_selecting(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((9000, 2))
    y = X[:, 0] + 0.1 * rng.standard_normal(9000)
    from kernelselect.models import _selection_cv
    ran = []
    monkeypatch.setattr(_selection_cv, "_select_validated", lambda *a, **k: ran.append(1))
    exact = kernelselect.KernelRidgeRegressor(approximation="exact")
    with pytest.raises(ValueError, match="final refit.*not started.*max_dense=8000"):
        kernelselect.KernelSelectionCV(exact, approximation="nystrom").fit(X, y)
    assert ran == []                                 # no selection ran


def test_limit_can_be_raised_and_read_from_the_environment():
    assert kernelselect.get_config()["max_bytes"] > 2**20
    with kernelselect.config_context(max_bytes="1K"):
        assert kernelselect.get_config()["max_bytes"] == 1024
        with pytest.raises(ValueError, match="1 KiB"):
            lowlevel.kernel_block(np.ones((20, 2)), np.ones((20, 2)), 0.5)
    lowlevel.kernel_block(np.ones((20, 2)), np.ones((20, 2)), 0.5)
    code, out = run_python("""
        import numpy as np
        from kernelselect import lowlevel
        try:
            lowlevel.kernel_block(np.ones((20, 2)), np.ones((20, 2)), 0.5)
        except ValueError as exc:
            print(exc)
    """, env={"KERNELSELECT_MAX_BYTES": "1K"})
    assert code == 0 and "needs about 3.12 KiB" in out, out
    for bad in ("lots", -5, 0):
        with pytest.raises((ValueError, TypeError), match="max_bytes"):
            kernelselect.set_config(max_bytes=bad)


# ---------------------------------------------------------------------------
# machines on the Song–Xu circulant stand-in
# ---------------------------------------------------------------------------

def test_krr_on_mcm_is_refused_with_the_reason():
    # formerly: training R² of −14.5 at alpha=1, decision values growing like 1/alpha
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    for est in (kernelselect.KernelRidgeRegressor(gamma=0.05, alpha=1, approximation="mcm"),
                kernelselect.LSSVMClassifier(gamma=0.05, alpha=1, approximation="mcm")):
        target = y if isinstance(est, kernelselect.KernelRidgeRegressor) else y > 0
        with pytest.raises(ValueError, match="cannot train a kernel machine"):
            est.fit(X, target)
    with pytest.raises(ValueError, match="cannot train"):
        kernelselect.cross_validate_grid(X, y, machine="krr", approximation="mcm",
                                         gammas=[0.1], alphas=[1.0])
    with pytest.raises(ValueError, match="final refit.*cannot train"):
        kernelselect.KernelSelectionCV(kernelselect.KernelRidgeRegressor(approximation="mcm"),
                                       approximation="exact").fit(X, y)
    # selecting with the circulant stand-in stays available
    res = kernelselect.select_kernel(X, y, approximation="mcm", random_state=0)
    assert np.isfinite(res.best_gamma)


def test_choose_grid_refuses_sizes_beyond_the_memory_guard():
    """A grid for 2^62 points searched for ~10 minutes; its column alone would exceed
    any memory limit, so the size is refused before the search."""
    with pytest.raises(ValueError, match=r"2-level grid for n=4611686018427387904 points"):
        lowlevel.choose_grid(2**62, 2)
    with kernelselect.config_context(max_bytes="64G"):
        m, used = lowlevel.choose_grid(10**9 + 7, 2)        # a prime-adjacent size: fast
    assert used <= 10**9 + 7 and m[0] * m[1] == used and m[0] <= 2 * m[1]


@pytest.mark.parametrize("approx, criterion", [
    (kernelselect.RFF(n_features=10**9), "kta"),
    (kernelselect.RandomMCM(n_features=10**9), "random_kta"),
])
def test_random_frequencies_are_guarded_before_they_are_drawn(approx, criterion):
    """The d × D frequency draws of a huge n_features: refused by the memory guard at
    any n (they allocated 22 GiB on 300 points)."""
    X = np.random.default_rng(0).random((300, 3))
    y = np.sign(X[:, 0] - 0.5)
    with pytest.raises(ValueError, match=r"random frequencies W0 \(3 × 1000000000\)"):
        kernelselect.select_kernel(X, y, approximation=approx, criterion=criterion,
                                   gammas=[1.0])
