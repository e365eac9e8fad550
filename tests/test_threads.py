"""The one thread policy (kernelselect.utils._threads) that every kernel, FFT and BLAS call uses."""

import os
import sys

import pytest
from threadpoolctl import threadpool_info

from kernelselect.utils import _threads
from kernelselect import fft
from kernelselect.utils._threads import check_workers


def _blas_threads():
    return {p["filepath"]: p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


def test_block_workers_and_threads():
    small, large = _threads.SMALL_BLOCK - 1, _threads.SMALL_BLOCK
    assert _threads.block_workers(small, None) == 1
    assert _threads.block_workers(large, None) is None
    assert _threads.block_workers(small, 2) == 2          # an explicit count is kept
    assert _threads.block_threads(small, None) == 1
    assert _threads.block_threads(large, None) == check_workers(None)
    assert _threads.block_threads(small, 1) == 1
    with pytest.raises(TypeError, match="workers"):
        _threads.block_threads(large, 1.5)


def test_fft_threads():
    per = _threads.MIN_POINTS_PER_THREAD
    assert fft.MIN_POINTS_PER_THREAD == per
    assert _threads.fft_threads(8, per - 1) == 1
    assert _threads.fft_threads(8, 3 * per) == 3
    assert _threads.fft_threads(2, 100 * per) == 2
    assert _threads.fft_threads(1, 100 * per) == 1


def test_blas_limits():
    before = _blas_threads()
    if not before:  # a BLAS threadpoolctl cannot see: every limit must be a harmless no-op
        for context in (_threads.blas_for_flops(0), _threads.one_blas_thread(),
                        _threads.blas_threads(1), _threads.blas_threads(None)):
            with context:
                assert _blas_threads() == {}
        return
    with _threads.blas_for_flops(_threads.SMALL_FLOPS / 2):
        assert set(_blas_threads().values()) == {1}
    with _threads.blas_for_flops(_threads.SMALL_FLOPS):
        assert _blas_threads() == before
    with _threads.one_blas_thread():
        assert set(_blas_threads().values()) == {1}
    with _threads.blas_threads(1):
        assert set(_blas_threads().values()) == {1}
    with _threads.blas_threads(None):
        assert _blas_threads() == before
    assert _blas_threads() == before


def test_streamed_passes_leave_cores_kept_busy_by_others(monkeypatch):
    """The default thread count of the streamed passes: the usable cores less the
    other processes' runnable threads now, at least one; OMP_NUM_THREADS wins."""
    import os

    from kernelselect.operators import streaming_lowrank as sl

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr("kernelselect.utils._threads.check_workers", lambda w: 4)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    for others, want in [(0, 4), (1, 3), (2, 2), (3, 1), (40, 1)]:
        monkeypatch.setattr("kernelselect.utils._threads._runnable_others", lambda o=others: o)
        assert sl.default_threads() == want, others
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setattr("kernelselect.utils._threads.check_workers", lambda w: 3)
    assert sl.default_threads() == 3                       # the user's choice, whatever the load


def test_free_cores_falls_back_to_the_load_average(monkeypatch):
    """Where /proc does not give the run queue: the 1-minute load beyond one process
    (rounded down) is taken as busy cores."""
    import os

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr("kernelselect.utils._threads.check_workers", lambda w: 4)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr("kernelselect.utils._threads._runnable_others", lambda: None)
    for load, want in [(0.0, 4), (1.9, 4), (2.0, 3), (3.5, 2), (7.0, 1)]:
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert _threads.free_cores() == want, load


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_run_queue_sees_a_busy_neighbour_but_not_a_yielding_one():
    """A spinning process is counted as soon as it runs (no minute of lag); one niced
    far below this process is read as yielding (it gets under a tenth of a core beside
    us) and so is not counted."""
    import subprocess
    import time

    if os.nice(0) + _threads.YIELDING_NICE > 19:
        pytest.skip("this process is itself niced too far for a yielding neighbour")
    # each spinner says when it spins (an interpreter still starting may be waiting on
    # the disk, a busy machine may take seconds to start it): no guess at a delay
    spin = [sys.executable, "-c", "print('spinning', flush=True)\nwhile True: pass"]
    busy = subprocess.Popen(spin, stdout=subprocess.PIPE)
    polite = subprocess.Popen(["nice", "-n", "19"] + spin, stdout=subprocess.PIPE)
    try:
        for p in (busy, polite):
            assert p.stdout.readline() == b"spinning\n"
        # runnable (state R) whether running or waiting for a core; read again while a
        # spinner is caught between two states (page faults, the end of its print)
        deadline = time.monotonic() + 120
        while True:
            competing = _threads._competing_runnable()
            if busy.pid in competing or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert busy.pid in competing and polite.pid not in competing
        assert os.getpid() not in competing
        assert _threads._task_state(f"/proc/{polite.pid}/stat") == (b"R", 19)
        _threads._runqueue_reading = (-float("inf"), None)      # a fresh reading
        assert _threads._runnable_others() >= 1
    finally:
        for p in (busy, polite):
            p.kill()
            p.wait()
            p.stdout.close()


def test_blas_limits_nest_and_interleave():
    """Limits from several callers: the smallest registered one is in force, and the
    original counts come back only when the last caller leaves, whatever the order of
    the exits."""
    before = _blas_threads()
    if not before or max(before.values()) < 2:
        pytest.skip("needs a BLAS threadpoolctl sees, with at least 2 threads")
    two = _threads.blas_threads(2)
    one = _threads.one_blas_thread()
    two.__enter__()
    assert _blas_threads() == {k: min(v, 2) for k, v in before.items()}
    one.__enter__()
    assert set(_blas_threads().values()) == {1}
    two.__exit__(None, None, None)                     # the first in leaves first
    assert set(_blas_threads().values()) == {1}
    one.__exit__(None, None, None)
    assert _blas_threads() == before
    assert _threads._blas_limiter.active == 0


def test_concurrent_selections_restore_blas_threads():
    """Eight selections from Python threads at once (each limiting BLAS) leave the
    process's BLAS thread counts as they found them."""
    import threading

    import numpy as np

    import kernelselect

    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 3))
    y = np.sign(X[:, 0] + 0.1)
    errors = []
    kw = dict(criterion="eloo", approximation="exact", gammas=[0.5, 1.0], alphas=[0.1, 1.0])
    # one selection first, so that every BLAS it loads (scipy's own) is counted before
    kernelselect.select_kernel(X, y, **kw)
    before = _blas_threads()

    def run(seed):
        try:
            kernelselect.select_kernel(X, y, workers=1 + seed % 2, random_state=seed, **kw)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert _blas_threads() == before
    assert _threads._blas_limiter.active == 0


def test_blas_limit_rejects_absurd_counts():
    with pytest.raises(ValueError, match="workers"):
        with _threads.blas_threads(10**6):
            pass


def test_interruptible_runs_large_calls_in_a_helper_thread():
    import threading

    names = []

    def where(x, scale=1.0):
        names.append(threading.current_thread().name)
        return x * scale

    assert _threads.interruptible(1.0, where, 2.0) == 2.0                 # small: direct
    assert _threads.interruptible(1e12, where, 2.0, scale=3.0) == 6.0      # large: helper
    assert names == [threading.main_thread().name, "kernelselect-factorisation"]

    import numpy as np

    def fail():
        raise np.linalg.LinAlgError("singular")

    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        _threads.interruptible(1e12, fail)


def test_ctrl_c_reaches_the_caller_while_a_factorisation_runs():
    """SIGINT during a long eigendecomposition: KeyboardInterrupt is raised in the main
    thread while the factorisation is still running (it finishes in the background)."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import os, signal, threading, time
        import numpy as np
        from kernelselect.utils import _threads
        # Python's own handler, even where the parent ignores SIGINT (a command started
        # in the background by a shell without job control inherits SIG_IGN)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        A = np.random.default_rng(0).standard_normal((400, 400)); A = A @ A.T
        started, release = threading.Event(), threading.Event()
        def factor():
            # compiled LAPACK calls without the GIL until the caller has been
            # interrupted (one long factorisation, without a race on its length)
            started.set()
            while not release.is_set():
                np.linalg.eigh(A)
        def interrupt():
            started.wait()
            time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt, daemon=True).start()
        try:
            _threads.interruptible(1e12, factor)
            print("finished")
        except KeyboardInterrupt:
            alive = [t.name for t in threading.enumerate()
                     if t.name == "kernelselect-factorisation" and t.is_alive()]
            print("interrupted", "running" if alive else "done")
            release.set()
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["interrupted", "running"]


def test_interrupted_passes_end_their_queued_blocks():
    """Ctrl-C during a pass over row blocks (Dask chunks or the in-memory threads):
    the blocks still queued end at once instead of running the pass to its end."""
    import numpy as np

    from types import SimpleNamespace

    from kernelselect.utils import _dask
    from kernelselect.operators._row_passes import first_pass

    fmap = SimpleNamespace(gammas=np.ones(1), width=2)

    with pytest.raises(KeyboardInterrupt):
        with _dask.cluster_guard():
            raise KeyboardInterrupt
    with pytest.raises(_threads.PassCancelled):
        first_pass(fmap, np.zeros((4, 2)), np.zeros(4), None, [None])
    with _dask.cluster_guard():                # a new pass clears the mark
        _threads.check_cancelled()


def test_selection_threads_follow_size_and_load(monkeypatch):
    """workers=None: one thread for small problems or when other processes keep all
    but one core busy; the default rules otherwise; an explicit count is kept."""
    import os

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr("kernelselect.utils._threads.check_workers",
                        lambda w: 2 if w is None else w)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr("kernelselect.utils._threads._runnable_others", lambda: 0)
    small, large = _threads.SERIAL_MAX_N, _threads.SERIAL_MAX_N + 1
    assert _threads.selection_workers(None, small) == 1
    assert _threads.selection_workers(None, large) is None          # idle: all cores
    monkeypatch.setattr("kernelselect.utils._threads._runnable_others", lambda: 1)
    assert _threads.selection_workers(None, large) == 1             # the other core is busy
    assert _threads.selection_workers(2, small) == 2


def test_small_selection_runs_blas_on_one_thread(monkeypatch):
    """Every BLAS call of a small default selection runs on one thread."""
    import numpy as np

    import kernelselect

    seen = []
    real = _threads._BlasLimiter._apply

    def spy(self, limit):
        seen.append(limit)
        return real(self, limit)

    monkeypatch.setattr(_threads._BlasLimiter, "_apply", spy)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 3))
    kernelselect.select_kernel(X, np.sign(X[:, 0]), gammas=[0.5, 1.0])
    assert seen and seen[0] == 1 and set(seen[:-1]) == {1} and seen[-1] is None


def test_map_in_threads_keeps_order_runs_blas_on_one_thread_and_raises_the_first_error():
    import threading

    seen = []

    def square(x):
        seen.append((threading.get_ident(), _threads._blas_limiter.active))
        return x * x

    for threads in (1, 2, 5):
        assert _threads.map_in_threads(square, list(range(7)), threads) == [
            x * x for x in range(7)]
    assert all(active >= 1 for _, active in seen)          # one BLAS thread held
    assert _threads.map_in_threads(square, [], 2) == []

    def fail(x):
        if x == 3:
            raise ValueError("bad item 3")
        return x

    for threads in (1, 2):
        with pytest.raises(ValueError, match="bad item 3"):
            _threads.map_in_threads(fail, list(range(6)), threads)
    assert _threads._blas_limiter.active == 0
