"""The one thread policy (kernelselect._threads) that every kernel, FFT and BLAS call uses."""

import pytest
from threadpoolctl import threadpool_info

from kernelselect import _threads, fft
from kernelselect._validation import check_workers


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
    1-minute load beyond one process (rounded down), at least one; OMP_NUM_THREADS wins."""
    import os

    from kernelselect.operators import streaming_lowrank as sl

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr("kernelselect._validation.check_workers", lambda w: 4)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    for load, want in [(0.0, 4), (1.9, 4), (2.0, 3), (3.5, 2), (7.0, 1), (40.0, 1)]:
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert sl.default_threads() == want, load
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setattr("kernelselect._validation.check_workers", lambda w: 3)
    assert sl.default_threads() == 3                       # the user's choice, whatever the load
