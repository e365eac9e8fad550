"""Shared test configuration: hypothesis profiles, fixtures used by several files."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=40, derandomize=True)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=400)
# CI (CI=true) replays the same examples on every run, so a red build always names a
# reproducible case; locally each run draws new ones.
_profile = "ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "default"
settings.load_profile(os.environ.get("KERNELSELECT_HYPOTHESIS_PROFILE", _profile))

# tests/reference.py (the dense references) is imported as a plain module; only
# tests/ goes on sys.path, never src/ (the package is imported installed).
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def no_selection(monkeypatch):
    """select_kernel must not run: the error comes before any computation."""
    import kernelselect

    def forbidden(*args, **kwargs):
        raise AssertionError("select_kernel ran although the command was invalid")

    monkeypatch.setattr(kernelselect, "select_kernel", forbidden, raising=False)


@pytest.fixture
def operator_builds(monkeypatch):
    """A count of the operators a selection builds (``["n"]``, not those a checkpoint
    gives back); it raises KeyboardInterrupt on the ``["stop"]``-th, when set."""
    from kernelselect.selection import _search

    fresh = _search.Search._evaluate_fresh
    builds = {"n": 0, "stop": None}

    def counting(self, *args, **kw):
        builds["n"] += 1
        if builds["n"] == builds["stop"]:
            raise KeyboardInterrupt
        return fresh(self, *args, **kw)

    monkeypatch.setattr(_search.Search, "_evaluate_fresh", counting)
    return builds


@pytest.fixture
def on_one_and_two_threads():
    """``run(fit)``: [fit(1), fit(2)], each called with BLAS limited to that many
    threads, for the tests that a result has the same bits on any thread count."""
    from threadpoolctl import threadpool_limits

    def run(fit):
        results = []
        for threads in (1, 2):
            with threadpool_limits(threads):
                results.append(fit(threads))
        return results

    return run
