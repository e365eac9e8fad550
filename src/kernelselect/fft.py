"""n-dimensional FFTs for the circulant stand-ins: cached pyFFTW plans, scipy fallback.

The multilevel circulant operators are diagonalised by the p-dimensional DFT of
their first column (Ding et al., "Approximate Kernel Selection via Matrix
Approximation", TNNLS 2020, after Song & Xu; Ding et al., "Randomized Kernel
Selection with Spectra of Multilevel Circulant Matrices", AAAI 2018), so the
criteria evaluate one real-input transform per kernel. This module runs those
transforms with pyFFTW when it is installed and with ``scipy.fft`` otherwise,
behind one interface:

``rfftn`` / ``irfftn``
    Real input ↔ half spectrum (the last transformed axis keeps ``n // 2 + 1``
    coefficients).
``fftn`` / ``ifftn``
    Complex input ↔ complex spectrum.

Normalisation follows numpy's default ("backward"): forward transforms are not
scaled, inverse transforms divide by the number of points transformed.

pyFFTW plans are built once per (direction, shape, dtype, axes, threads, planner
effort) under a module-wide lock (FFTW's planner is not thread-safe) and kept in
a bounded LRU cache together with their SIMD-aligned buffers. Every call copies
its input into the plan's aligned input buffer and returns a **fresh array**:
a cached plan is pointed at a newly allocated aligned output for the call and
pointed back at its own buffer afterwards (FFTW's new-array execution, so no
copy-out), and a plan too large for the cache is built for the call and hands
over its own output buffer. A result therefore never shares memory with the
cache, the cache keeps no reference to it, and a later call never changes it.

The sum helpers (``rfftn_multiplicity``, ``full_spectrum_sum``,
``spectrum_sum``) turn a half spectrum into sums over every frequency of the
full spectrum, which is what the spectral criteria need.
"""

import collections
import importlib
import importlib.util
import math
import numbers
import threading

import numpy as np

from ._threads import MIN_POINTS_PER_THREAD  # noqa: F401  (re-exported)
from ._threads import fft_threads as _threads
from ._validation import check_workers


class _LazyModule:
    """A module imported on first attribute access: pyFFTW and scipy.fft take a few
    hundred milliseconds to import (pyFFTW also pulls in dask when it is installed),
    which ``import kernelselect`` should not pay when no FFT is ever run."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)


# pyFFTW is a dependency, but the scipy path must work without it.
_pyfftw = _LazyModule("pyfftw") if importlib.util.find_spec("pyfftw") is not None else None
_scipy_fft = _LazyModule("scipy.fft")

__all__ = [
    "rfftn",
    "irfftn",
    "fftn",
    "ifftn",
    "rfftn_multiplicity",
    "full_spectrum_sum",
    "spectrum_sum",
    "set_backend",
    "get_backend",
    "set_planner_effort",
    "get_planner_effort",
    "set_plan_cache_limits",
    "clear_plan_cache",
    "plan_cache_info",
    "export_wisdom",
    "import_wisdom",
    "forget_wisdom",
    "backend_info",
]

KNOWN_BACKENDS = ("pyfftw", "scipy")
PLANNER_EFFORTS = ("FFTW_ESTIMATE", "FFTW_MEASURE", "FFTW_PATIENT", "FFTW_EXHAUSTIVE")

_state = {
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


def _check_backend(backend):
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


def set_backend(name):
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


def get_backend():
    """The default backend name (``"pyfftw"`` if importable, else ``"scipy"``)."""
    return _state["backend"]


def set_planner_effort(effort):
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


def get_planner_effort():
    """The FFTW planner effort used for new plans."""
    return _state["effort"]


def set_plan_cache_limits(max_plans=None, max_bytes=None):
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


def clear_plan_cache():
    """Drop every cached plan and its buffers."""
    with _cache_lock:
        _plans.clear()


def plan_cache_info():
    """``{"plans", "bytes", "max_plans", "max_bytes"}`` of the plan cache."""
    with _cache_lock:
        return {
            "plans": len(_plans),
            "bytes": sum(p.nbytes for p in _plans.values()),
            "max_plans": _state["max_plans"],
            "max_bytes": _state["max_bytes"],
        }


def _check_nonnegative_int(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}.")
    if int(value) < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}.")
    return int(value)


# --------------------------------------------------------------------------- wisdom


def _require_pyfftw(what):
    if _pyfftw is None:
        raise RuntimeError(f"{what} needs pyfftw, which is not importable; install pyfftw.")


def export_wisdom():
    """FFTW's accumulated plans ("wisdom") as a tuple of three bytes objects.

    Store it (e.g. with pickle) and hand it to ``import_wisdom`` in a later
    process to skip ``FFTW_MEASURE``-or-longer planning for sizes seen before.
    """
    _require_pyfftw("export_wisdom")
    with _planner_lock:
        return _pyfftw.export_wisdom()


def import_wisdom(wisdom):
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
    _require_pyfftw("import_wisdom")
    if not (isinstance(wisdom, (tuple, list)) and len(wisdom) == 3
            and all(isinstance(w, bytes) for w in wisdom)):
        raise ValueError("wisdom must be the tuple of 3 bytes objects returned by export_wisdom().")
    with _planner_lock:
        return tuple(bool(x) for x in _pyfftw.import_wisdom(tuple(wisdom)))


def forget_wisdom():
    """Forget all FFTW wisdom and cached plans."""
    _require_pyfftw("forget_wisdom")
    clear_plan_cache()
    with _planner_lock:
        _pyfftw.forget_wisdom()


def backend_info():
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


# --------------------------------------------------------------------------- argument checks


def _check_axes(axes, ndim, name="axes"):
    if ndim == 0:
        raise ValueError("the input must have at least one dimension, got a 0-d array.")
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, numbers.Integral) and not isinstance(axes, (bool, np.bool_)):
        axes = (axes,)
    try:
        raw = tuple(axes)
    except TypeError:
        raise ValueError(f"{name} must be an int or a sequence of ints, got {axes!r}.") from None
    if len(raw) == 0:
        raise ValueError(f"{name} must name at least one axis, got {axes!r}.")
    out = []
    for ax in raw:
        if isinstance(ax, (bool, np.bool_)) or not isinstance(ax, numbers.Integral):
            raise ValueError(f"{name} must hold ints, got {axes!r}.")
        if not -ndim <= int(ax) < ndim:
            raise ValueError(f"{name}={axes!r} is out of range for an array with {ndim} dimension(s).")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}={axes!r} repeats an axis; name each axis once.")
    return tuple(out)


def _real_input(a, name):
    arr = np.asarray(a)
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real for a real-input transform, got dtype {arr.dtype}; "
                        "use fftn for complex input.")
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}.")
    dt = np.float32 if arr.dtype == np.float32 else np.float64
    return np.asarray(arr, dtype=dt)


def _complex_input(a, name):
    arr = np.asarray(a)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}.")
    dt = np.complex64 if arr.dtype in (np.complex64, np.float32) else np.complex128
    return np.asarray(arr, dtype=dt)


def _check_nonempty(arr, axes, name):
    for ax in axes:
        if arr.shape[ax] < 1:
            raise ValueError(f"{name} has length 0 along axis {ax}; every transformed axis needs ≥ 1 point.")


def _half_shape(shape, axes):
    half = list(shape)
    half[axes[-1]] = shape[axes[-1]] // 2 + 1
    return tuple(half)


# --------------------------------------------------------------------------- plans


class _Plan:
    """An FFTW plan with its own aligned input and output buffers."""

    __slots__ = ("fftw", "inp", "out", "lock", "nbytes", "scale")

    def __init__(self, kind, in_shape, in_dtype, out_shape, out_dtype, axes, threads, effort):
        self.inp = _pyfftw.empty_aligned(in_shape, dtype=in_dtype)
        self.out = _pyfftw.empty_aligned(out_shape, dtype=out_dtype)
        direction = "FFTW_FORWARD" if kind in ("r2c", "c2c_fwd") else "FFTW_BACKWARD"
        # FFTW_DESTROY_INPUT: the input buffer is scratch, refilled on every call.
        self.fftw = _pyfftw.FFTW(
            self.inp, self.out, axes=axes, direction=direction,
            flags=(effort, "FFTW_DESTROY_INPUT"), threads=threads,
        )
        self.lock = threading.Lock()
        self.nbytes = self.inp.nbytes + self.out.nbytes
        if direction == "FFTW_BACKWARD":
            real_shape = out_shape if kind == "c2r" else in_shape
            self.scale = 1.0 / math.prod(real_shape[ax] for ax in axes)
        else:
            self.scale = None


def _evict():
    # caller holds _cache_lock
    while _plans and (
        len(_plans) > _state["max_plans"]
        or sum(p.nbytes for p in _plans.values()) > _state["max_bytes"]
    ):
        _plans.popitem(last=False)


def _get_plan(kind, in_shape, in_dtype, out_shape, out_dtype, axes, threads):
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


def _run_pyfftw(kind, arr, out_shape, out_dtype, axes, threads):
    plan, cached = _get_plan(kind, arr.shape, arr.dtype, out_shape, out_dtype, axes, threads)
    with plan.lock:
        np.copyto(plan.inp, arr)
        if cached:
            result = _pyfftw.empty_aligned(out_shape, dtype=out_dtype)
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


# --------------------------------------------------------------------------- transforms


def rfftn(a, axes=None, workers=None, backend=None):
    """n-dimensional DFT of a real array, half spectrum along the last axis.

    Parameters
    ----------
    a : array_like of real numbers
        float32 stays float32 (complex64 result); anything else is computed in
        float64.
    axes : int or sequence of int, optional
        Axes to transform (default: all). The last one listed is halved.
    workers : int, optional
        Threads. None: kernelselect's default (OpenMP's, honouring
        ``OMP_NUM_THREADS``); -1: all cores. Small transforms use fewer: at
        most one thread per ``MIN_POINTS_PER_THREAD`` (65536) array elements.
    backend : {"pyfftw", "scipy"}, optional
        None: the module default (``get_backend()``).

    Returns
    -------
    A : ndarray, complex
        Shape of ``a`` with ``axes[-1]`` of length ``a.shape[axes[-1]] // 2 + 1``:
        A[k] = Σ_j a[j] exp(−2πi Σ_s j_s k_s / n_s). A fresh array.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelselect import fft
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> np.allclose(fft.rfftn(a), np.fft.rfftn(a))
    True
    """
    arr = _real_input(a, "a")
    axes = _check_axes(axes, arr.ndim)
    _check_nonempty(arr, axes, "a")
    threads = _threads(workers, arr.size)
    name = _check_backend(backend)
    if name == "scipy":
        return _scipy_fft.rfftn(arr, axes=axes, workers=threads)
    out_dtype = np.complex64 if arr.dtype == np.float32 else np.complex128
    return _run_pyfftw("r2c", arr, _half_shape(arr.shape, axes), out_dtype, axes, threads)


def irfftn(A, s, axes=None, workers=None, backend=None):
    """Inverse of ``rfftn``: real array of shape ``s`` along ``axes`` from its half spectrum.

    Parameters
    ----------
    A : array_like, complex
        Half spectrum; complex64 gives float32, anything else float64.
    s : sequence of int
        Length of the real output along each of ``axes``. It must agree with
        ``A``: ``s[i] == A.shape[axes[i]]`` for all but the last axis and
        ``s[-1] // 2 + 1 == A.shape[axes[-1]]`` (the last length cannot be
        inferred, since even and odd lengths give the same half length).
    axes : int or sequence of int, optional
        Default: the last ``len(s)`` axes.
    workers, backend
        As in ``rfftn``.

    Returns
    -------
    a : ndarray, real
        a[j] = (1/N) Σ_k A_full[k] exp(+2πi Σ_s j_s k_s / n_s), N the number of
        points transformed, the negative frequencies of A_full taken as the
        conjugates of the stored ones. A fresh array.
    """
    arr = _complex_input(A, "A")
    if isinstance(s, numbers.Integral) and not isinstance(s, (bool, np.bool_)):
        s = (s,)
    try:
        s = tuple(s)
    except TypeError:
        raise ValueError(f"s must be a sequence of positive ints (the real output's lengths), got {s!r}.") from None
    for v in s:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"s must hold positive ints, got {s!r}.")
    if axes is None:
        if len(s) == 0 or len(s) > arr.ndim:
            raise ValueError(f"s={s!r} must have between 1 and A.ndim={arr.ndim} entries.")
        axes = tuple(range(arr.ndim - len(s), arr.ndim))
    axes = _check_axes(axes, arr.ndim)
    if len(s) != len(axes):
        raise ValueError(f"s={s!r} and axes={axes!r} must have the same length.")
    for i, ax in enumerate(axes[:-1]):
        if s[i] != arr.shape[ax]:
            raise ValueError(
                f"s[{i}]={s[i]} does not match A.shape[{ax}]={arr.shape[ax]}; "
                "s gives the real output's lengths (padding and cropping are not supported)."
            )
    last = axes[-1]
    if s[-1] // 2 + 1 != arr.shape[last]:
        raise ValueError(
            f"s[-1]={s[-1]} does not match A.shape[{last}]={arr.shape[last]}: a half spectrum "
            f"of length {arr.shape[last]} comes from a real length of "
            f"{2 * arr.shape[last] - 2} or {2 * arr.shape[last] - 1}."
        )
    threads = _threads(workers, arr.size)
    name = _check_backend(backend)
    if name == "scipy":
        return _scipy_fft.irfftn(arr, s=s, axes=axes, workers=threads)
    out_shape = list(arr.shape)
    out_shape[last] = s[-1]
    out_dtype = np.float32 if arr.dtype == np.complex64 else np.float64
    return _run_pyfftw("c2r", arr, tuple(out_shape), out_dtype, axes, threads)


def fftn(a, axes=None, workers=None, backend=None):
    """n-dimensional DFT of a complex (or real, promoted) array.

    Same conventions as ``rfftn`` but the full spectrum is returned, with the
    shape of ``a``; complex64 (or float32) input gives complex64.
    """
    arr = _complex_input(a, "a")
    axes = _check_axes(axes, arr.ndim)
    _check_nonempty(arr, axes, "a")
    threads = _threads(workers, arr.size)
    name = _check_backend(backend)
    if name == "scipy":
        return _scipy_fft.fftn(arr, axes=axes, workers=threads)
    return _run_pyfftw("c2c_fwd", arr, arr.shape, arr.dtype, axes, threads)


def ifftn(A, axes=None, workers=None, backend=None):
    """Inverse of ``fftn`` (divides by the number of points transformed)."""
    arr = _complex_input(A, "A")
    axes = _check_axes(axes, arr.ndim)
    _check_nonempty(arr, axes, "A")
    threads = _threads(workers, arr.size)
    name = _check_backend(backend)
    if name == "scipy":
        return _scipy_fft.ifftn(arr, axes=axes, workers=threads)
    return _run_pyfftw("c2c_bwd", arr, arr.shape, arr.dtype, axes, threads)


# --------------------------------------------------------------------------- half-spectrum sums


def _check_shape(shape, name="shape"):
    try:
        shp = tuple(shape)
    except TypeError:
        if isinstance(shape, numbers.Integral):
            shp = (shape,)
        else:
            raise ValueError(f"{name} must be a sequence of positive ints, got {shape!r}.") from None
    if not shp:
        raise ValueError(f"{name} must have at least one entry, got {shape!r}.")
    for v in shp:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{name} must hold positive ints (the real array's shape), got {shape!r}.")
    return tuple(int(v) for v in shp)


def _paired_slice(n):
    """Indices along the halved axis whose mirror frequency is not stored: 1..⌈n/2⌉−1."""
    return slice(1, (n + 1) // 2)


def rfftn_multiplicity(shape, axes=None):
    """How many full-spectrum frequencies each stored ``rfftn`` coefficient stands for.

    Parameters
    ----------
    shape : sequence of int
        Shape of the real array that was transformed.
    axes : sequence of int, optional
        The transformed axes, as given to ``rfftn`` (default: all).

    Returns
    -------
    w : ndarray of shape ``rfftn(a, axes).shape``, int64, read-only
        Along ``axes[-1]`` (length n): 1 at index 0, 2 at indices 1..⌈n/2⌉−1,
        and 1 at index n/2 when n is even (the Nyquist column, its own mirror).
        Constant along every other axis. ``w.sum() == prod(shape)``. It is a
        broadcast view (no memory per element); copy it to write.

    Notes
    -----
    For real a, the full spectrum is Hermitian, A(−k) = conj A(k), with −k taken
    modulo each length. ``rfftn`` keeps indices 0..⌊n/2⌋ along the last axis; a
    stored index k whose mirror n − k lies beyond ⌊n/2⌋ represents both. In the
    other axes the mirror of a stored column is itself stored, since the whole
    slice at index k along the last axis pairs with the one at n − k.
    """
    shp = _check_shape(shape)
    axes = _check_axes(axes, len(shp))
    last = axes[-1]
    n = shp[last]
    w1 = np.ones(n // 2 + 1, dtype=np.int64)
    w1[_paired_slice(n)] = 2
    view_shape = [1] * len(shp)
    view_shape[last] = w1.size
    return np.broadcast_to(w1.reshape(view_shape), _half_shape(shp, axes))


def full_spectrum_sum(values, shape, axes=None, extra_axes="trailing"):
    """Σ over every frequency of the full spectrum, given values on the half spectrum.

    Parameters
    ----------
    values : array_like
        g(A) evaluated on the half spectrum A = rfftn(a, axes) of a real array a
        of shape ``shape``, where g(A(−k)) = g(A(k)) — i.e. g(conj z) = g(z):
        functions of |z| (power spectra, s = |v|², 1/(s+α)), of Re z, or
        any real-valued g on a real-symmetric spectrum (e.g. the Song–Xu
        eigenvalues). Shape: the half spectrum's, with optional extra axes
        (e.g. one per ridge α) after it or before it, as ``extra_axes`` says.
    shape : sequence of int
        Shape of the real array a.
    axes : sequence of int, optional
        The transformed axes, as given to ``rfftn`` (default: all). Untransformed
        axes are summed over as well.
    extra_axes : {"trailing", "leading"}
        Where ``values`` carries axes beyond the half spectrum's (if any).

    Returns
    -------
    total : scalar or ndarray
        Σ_k g(A_full(k)) = Σ_stored w·g, w = ``rfftn_multiplicity(shape, axes)``;
        the extra axes, if any, are kept.

    Notes
    -----
    Computed as the plain sum plus the sum over the paired columns again, so the
    multiplicity array is never formed. Cost: one pass over ``values``.
    """
    shp = _check_shape(shape)
    axes = _check_axes(axes, len(shp))
    half = _half_shape(shp, axes)
    if extra_axes not in ("trailing", "leading"):
        raise ValueError(f"extra_axes must be 'trailing' or 'leading', got {extra_axes!r}.")
    vals = np.asarray(values)
    k = len(half)
    offset = 0 if extra_axes == "trailing" else vals.ndim - k
    if offset < 0 or vals.shape[offset:offset + k] != half:
        raise ValueError(
            f"values has shape {vals.shape}, but the half spectrum of an array of shape {shp} "
            f"over axes {axes} has shape {half}; values must have that shape, optionally "
            f"with extra {extra_axes} axes (see extra_axes)."
        )
    spec_axes = tuple(range(offset, offset + k))
    last = offset + axes[-1]
    index = [slice(None)] * vals.ndim
    index[last] = _paired_slice(shp[axes[-1]])
    return vals.sum(axis=spec_axes) + vals[tuple(index)].sum(axis=spec_axes)


def spectrum_sum(f, V, shape, axes=None, extra_axes="trailing"):
    """Σ over every frequency of f(v), from the half spectrum V = rfftn(a, axes).

    Parameters
    ----------
    f : callable
        Applied elementwise to V (``f(V)`` is called once). It must satisfy
        f(conj z) = f(z) — e.g. depend on z only through |z|, or be real-valued on
        a spectrum that is itself real and symmetric — since the full spectrum of a
        real array has A(−k) = conj A(k) and the unstored half is never formed.
        ``f(V)`` may add trailing axes (e.g. one per ridge α), or leading ones
        with ``extra_axes="leading"``.
    V : ndarray
        The half spectrum, shape ``rfftn(a, axes).shape``.
    shape : sequence of int
        Shape of the real array a.
    axes : sequence of int, optional
        As given to ``rfftn``.
    extra_axes : {"trailing", "leading"}
        As in ``full_spectrum_sum``.

    Returns
    -------
    total : scalar or ndarray
        Σ_k f(A_full(k)).

    Examples
    --------
    Parseval: Σ_k |A(k)|² = N ‖a‖².

    >>> import numpy as np
    >>> from kernelselect import fft
    >>> a = np.random.default_rng(0).standard_normal((4, 5))
    >>> total = fft.spectrum_sum(lambda v: np.abs(v) ** 2, fft.rfftn(a), a.shape)
    >>> bool(np.isclose(total, a.size * np.sum(a ** 2)))
    True
    """
    if not callable(f):
        raise ValueError(f"f must be callable (applied elementwise to V), got {f!r}.")
    V = np.asarray(V)
    shp = _check_shape(shape)
    axes_c = _check_axes(axes, len(shp))
    half = _half_shape(shp, axes_c)
    if V.shape != half:
        raise ValueError(
            f"V has shape {V.shape}, but the half spectrum of an array of shape {shp} over "
            f"axes {axes_c} has shape {half}; pass the matching shape."
        )
    return full_spectrum_sum(f(V), shp, axes_c, extra_axes)
