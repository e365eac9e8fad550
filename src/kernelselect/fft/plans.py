"""pyFFTW plans for the transforms of :mod:`kernelselect.fft`: the default backend and
planner effort, FFTW wisdom, and a bounded LRU cache of plans with their SIMD-aligned
buffers (see the package docstring for the ownership rules of a result)."""

import collections
import importlib
import importlib.util
import math
import numbers
import threading
from typing import Any, Sequence

import numpy as np

from ..utils._threads import check_workers, openmp_team


class _LazyModule:
    """A module imported on first attribute access: pyFFTW and scipy.fft take a few
    hundred milliseconds to import (pyFFTW also pulls in dask when it is installed),
    which ``import kernelselect`` should not pay when no FFT is ever run."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


# pyFFTW is a dependency, but the scipy path must work without it.
_pyfftw = _LazyModule("pyfftw") if importlib.util.find_spec("pyfftw") is not None else None
_scipy_fft = _LazyModule("scipy.fft")

KNOWN_BACKENDS = ("pyfftw", "scipy")
PLANNER_EFFORTS = ("FFTW_ESTIMATE", "FFTW_MEASURE", "FFTW_PATIENT", "FFTW_EXHAUSTIVE")

_state: dict[str, Any] = {
    "backend": "pyfftw" if _pyfftw is not None else "scipy",
    "effort": "FFTW_ESTIMATE",
    "max_plans": 32,
    "max_bytes": 256 * 2**20,
}

# FFTW's planner (and its wisdom store) is shared global state: one planner at a time.
_planner_lock = threading.Lock()
# Guards the LRU dict itself; never held while planning.
_cache_lock = threading.Lock()
_plans: "collections.OrderedDict[tuple, _Plan]" = collections.OrderedDict()


# --------------------------------------------------------------------------- settings


def _check_backend(backend: Any) -> str:
    if backend is None:
        return _state["backend"]
    name = backend.strip().lower() if isinstance(backend, str) else backend
    if name not in KNOWN_BACKENDS:
        raise ValueError(
            f"backend={backend!r} is not a known FFT backend; use one of "
            f"{', '.join(KNOWN_BACKENDS)} (or None for the module default)."
        )
    if name == "pyfftw" and _pyfftw is None:
        raise ValueError(
            "backend='pyfftw' needs the pyfftw package, which is not importable; "
            "install pyfftw or use backend='scipy'."
        )
    return name


def set_backend(name: str) -> str:
    """Set the default backend used when ``backend=None``.

    Parameters
    ----------
    name : {"pyfftw", "scipy"}
        ``"pyfftw"`` needs pyFFTW to be importable.

    Returns
    -------
    previous : str
        The backend that was the default before the call.
    """
    if name is None:
        raise ValueError("name must be 'pyfftw' or 'scipy', got None.")
    new = _check_backend(name)
    previous = _state["backend"]
    _state["backend"] = new
    return previous


def get_backend() -> str:
    """The default backend name (``"pyfftw"`` if importable, else ``"scipy"``)."""
    return _state["backend"]


def set_planner_effort(effort: str) -> str:
    """Set the FFTW planner effort used for new plans.

    Parameters
    ----------
    effort : str
        One of ``FFTW_ESTIMATE`` (default: plans in microseconds, no trial runs),
        ``FFTW_MEASURE``, ``FFTW_PATIENT``, ``FFTW_EXHAUSTIVE``; the ``FFTW_``
        prefix and case are optional. Longer planning can find faster plans for
        sizes transformed many times; keep the result with ``export_wisdom``.

    Returns
    -------
    previous : str
        The effort in force before the call.
    """
    if not isinstance(effort, str):
        raise ValueError(f"effort must be one of {', '.join(PLANNER_EFFORTS)}, got {effort!r}.")
    name = effort.strip().upper()
    if not name.startswith("FFTW_"):
        name = "FFTW_" + name
    if name not in PLANNER_EFFORTS:
        raise ValueError(f"effort must be one of {', '.join(PLANNER_EFFORTS)}, got {effort!r}.")
    previous = _state["effort"]
    _state["effort"] = name
    return previous


def get_planner_effort() -> str:
    """The FFTW planner effort used for new plans."""
    return _state["effort"]


def set_plan_cache_limits(max_plans: int | None = None, max_bytes: int | None = None
                          ) -> dict[str, int]:
    """Bound the pyFFTW plan cache.

    Parameters
    ----------
    max_plans : int, optional
        Most plans kept (least recently used evicted first). 0 disables caching.
    max_bytes : int, optional
        Most bytes of aligned buffers kept over all cached plans. A plan whose own
        buffers exceed this is built for its call and not kept.

    Returns
    -------
    limits : dict
        The limits in force before the call.
    """
    previous = {"max_plans": _state["max_plans"], "max_bytes": _state["max_bytes"]}
    if max_plans is not None:
        _state["max_plans"] = _check_nonnegative_int(max_plans, "max_plans")
    if max_bytes is not None:
        _state["max_bytes"] = _check_nonnegative_int(max_bytes, "max_bytes")
    with _cache_lock:
        _evict()
    return previous


def clear_plan_cache() -> None:
    """Drop every cached plan and its buffers."""
    with _cache_lock:
        _plans.clear()


def plan_cache_info() -> dict[str, int]:
    """``{"plans", "bytes", "max_plans", "max_bytes"}`` of the plan cache."""
    with _cache_lock:
        return {
            "plans": len(_plans),
            "bytes": sum(p.nbytes for p in _plans.values()),
            "max_plans": _state["max_plans"],
            "max_bytes": _state["max_bytes"],
        }


def _check_nonnegative_int(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}.")
    if int(value) < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}.")
    return int(value)


# --------------------------------------------------------------------------- wisdom


def _require_pyfftw(what: str) -> _LazyModule:
    """The pyFFTW module, or RuntimeError naming ``what`` when it is not importable."""
    if _pyfftw is None:
        raise RuntimeError(f"{what} needs pyfftw, which is not importable; install pyfftw.")
    return _pyfftw


def export_wisdom() -> tuple[bytes, bytes, bytes]:
    """FFTW's accumulated plans ("wisdom") as a tuple of three bytes objects.

    Store it (e.g. with pickle) and hand it to ``import_wisdom`` in a later
    process to skip ``FFTW_MEASURE``-or-longer planning for sizes seen before.
    """
    pyfftw = _require_pyfftw("export_wisdom")
    with _planner_lock:
        return pyfftw.export_wisdom()


def import_wisdom(wisdom: Sequence[bytes]) -> tuple[bool, ...]:
    """Load wisdom from ``export_wisdom``.

    Parameters
    ----------
    wisdom : tuple of 3 bytes
        Double, single and long-double precision wisdom, as exported.

    Returns
    -------
    loaded : tuple of 3 bool
        Whether each precision's wisdom was accepted.
    """
    pyfftw = _require_pyfftw("import_wisdom")
    if not (isinstance(wisdom, (tuple, list)) and len(wisdom) == 3
            and all(isinstance(w, bytes) for w in wisdom)):
        raise ValueError("wisdom must be the tuple of 3 bytes objects returned by export_wisdom().")
    with _planner_lock:
        return tuple(bool(x) for x in pyfftw.import_wisdom(tuple(wisdom)))


def forget_wisdom() -> None:
    """Forget all FFTW wisdom and cached plans."""
    pyfftw = _require_pyfftw("forget_wisdom")
    clear_plan_cache()
    with _planner_lock:
        pyfftw.forget_wisdom()


def backend_info() -> dict[str, Any]:
    """What the FFT layer will use.

    Returns
    -------
    info : dict
        ``backend`` (default backend), ``threads`` (default thread count),
        ``pyfftw_version`` (None without pyFFTW), ``planner_effort``,
        ``simd_alignment`` (bytes; None without pyFFTW) and ``plan_cache``
        (``plan_cache_info()``).
    """
    return {
        "backend": _state["backend"],
        "threads": check_workers(None),
        "pyfftw_version": getattr(_pyfftw, "__version__", None),
        "planner_effort": _state["effort"],
        "simd_alignment": getattr(_pyfftw, "simd_alignment", None),
        "plan_cache": plan_cache_info(),
    }


# --------------------------------------------------------------------------- plans


class _Plan:
    """An FFTW plan with its own aligned input and output buffers."""

    __slots__ = ("fftw", "inp", "out", "lock", "nbytes", "scale")

    def __init__(self, kind: str, in_shape: tuple[int, ...], in_dtype: Any,
                 out_shape: tuple[int, ...], out_dtype: Any, axes: tuple[int, ...], threads: int,
                 effort: str) -> None:
        pyfftw = _require_pyfftw("an FFTW plan")
        self.inp = pyfftw.empty_aligned(in_shape, dtype=in_dtype)
        self.out = pyfftw.empty_aligned(out_shape, dtype=out_dtype)
        direction = "FFTW_FORWARD" if kind in ("r2c", "c2c_fwd") else "FFTW_BACKWARD"
        # FFTW_DESTROY_INPUT: the input buffer is scratch, refilled on every call.
        self.fftw = pyfftw.FFTW(
            self.inp, self.out, axes=axes, direction=direction,
            flags=(effort, "FFTW_DESTROY_INPUT"), threads=threads,
        )
        self.lock = threading.Lock()
        self.nbytes = self.inp.nbytes + self.out.nbytes
        if direction == "FFTW_BACKWARD":
            real_shape = out_shape if kind == "c2r" else in_shape
            self.scale: float | None = 1.0 / math.prod(real_shape[ax] for ax in axes)
        else:
            self.scale = None


def _evict() -> None:
    # caller holds _cache_lock
    while _plans and (
        len(_plans) > _state["max_plans"]
        or sum(p.nbytes for p in _plans.values()) > _state["max_bytes"]
    ):
        _plans.popitem(last=False)


def _get_plan(kind: str, in_shape: tuple[int, ...], in_dtype: Any, out_shape: tuple[int, ...],
              out_dtype: Any, axes: tuple[int, ...], threads: int) -> tuple[_Plan, bool]:
    effort = _state["effort"]
    key = (kind, in_shape, np.dtype(in_dtype).str, out_shape, axes, threads, effort)
    with _cache_lock:
        plan = _plans.get(key)
        if plan is not None:
            _plans.move_to_end(key)
            return plan, True
    with _planner_lock:
        plan = _Plan(kind, in_shape, in_dtype, out_shape, out_dtype, axes, threads, effort)
    if plan.nbytes > _state["max_bytes"] or _state["max_plans"] == 0:
        return plan, False
    with _cache_lock:
        _plans[key] = plan
        _plans.move_to_end(key)
        _evict()
    return plan, True


def _run_pyfftw(kind: str, arr: np.ndarray, out_shape: tuple[int, ...], out_dtype: Any,
                axes: tuple[int, ...], threads: int) -> np.ndarray:
    _require_pyfftw("an FFTW transform").FFTW           # imported, with its OpenMP runtime
    # FFTW's OpenMP loops take the runtime's default team (OMP_NUM_THREADS): set it to
    # the capped count in this thread before planning (which runs transforms) and
    # executing
    openmp_team(threads)
    plan, cached = _get_plan(kind, arr.shape, arr.dtype, out_shape, out_dtype, axes, threads)
    with plan.lock:
        np.copyto(plan.inp, arr)
        if cached:
            result = _require_pyfftw("an FFTW transform").empty_aligned(out_shape, dtype=out_dtype)
            plan.fftw.update_arrays(plan.inp, result)
            try:
                plan.fftw.execute()
            finally:
                plan.fftw.update_arrays(plan.inp, plan.out)
        else:
            plan.fftw.execute()
            result = plan.out
    if plan.scale is not None:
        result *= plan.scale
    return result
