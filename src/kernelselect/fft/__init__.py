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

Layout: :mod:`~kernelselect.fft.plans` (backend and planner settings, wisdom, the
bounded cache of pyFFTW plans and their execution), :mod:`~kernelselect.fft.transforms`
(the four transforms and their argument checks) and :mod:`~kernelselect.fft.spectrum`
(the half-spectrum sums). Every name is importable from :mod:`kernelselect.fft`.
"""

from ..utils._threads import MIN_POINTS_PER_THREAD
from .plans import (
    KNOWN_BACKENDS,
    PLANNER_EFFORTS,
    backend_info,
    clear_plan_cache,
    export_wisdom,
    forget_wisdom,
    get_backend,
    get_planner_effort,
    import_wisdom,
    plan_cache_info,
    set_backend,
    set_plan_cache_limits,
    set_planner_effort,
)
from .spectrum import full_spectrum_sum, rfftn_multiplicity, spectrum_sum
from .transforms import fftn, ifftn, irfftn, rfftn

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
