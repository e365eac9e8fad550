"""The four transforms of :mod:`kernelselect.fft` (real ↔ half spectrum, complex ↔
complex) with their argument checks, run on pyFFTW's cached plans or ``scipy.fft``."""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from ..utils._threads import fft_threads as _threads
from .plans import _check_backend, _run_pyfftw, _scipy_fft


# --------------------------------------------------------------------------- argument checks


def _check_axes(axes: Any, ndim: int, name: str = "axes") -> tuple[int, ...]:
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
    out: list[int] = []
    for ax in raw:
        if isinstance(ax, (bool, np.bool_)) or not isinstance(ax, numbers.Integral):
            raise ValueError(f"{name} must hold ints, got {axes!r}.")
        if not -ndim <= int(ax) < ndim:
            raise ValueError(f"{name}={axes!r} is out of range for an array with {ndim} dimension(s).")
        out.append(int(ax) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}={axes!r} repeats an axis; name each axis once.")
    return tuple(out)


def _real_input(a: npt.ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real for a real-input transform, got dtype {arr.dtype}; "
                        "use fftn for complex input.")
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}.")
    dt = np.float32 if arr.dtype == np.float32 else np.float64
    return np.asarray(arr, dtype=dt)


def _complex_input(a: npt.ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}.")
    dt = np.complex64 if arr.dtype in (np.complex64, np.float32) else np.complex128
    return np.asarray(arr, dtype=dt)


def _check_nonempty(arr: np.ndarray, axes: tuple[int, ...], name: str) -> None:
    for ax in axes:
        if arr.shape[ax] < 1:
            raise ValueError(f"{name} has length 0 along axis {ax}; every transformed axis needs ≥ 1 point.")


def _half_shape(shape: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    half = list(shape)
    half[axes[-1]] = shape[axes[-1]] // 2 + 1
    return tuple(half)


# --------------------------------------------------------------------------- transforms

#: scipy.fft function for each transform kind
_SCIPY_FUNCTIONS = {"r2c": "rfftn", "c2r": "irfftn", "c2c_fwd": "fftn", "c2c_bwd": "ifftn"}


def _transform(kind: str, arr: np.ndarray, out_shape: tuple[int, ...], out_dtype: Any,
               axes: tuple[int, ...], workers: int | None, backend: str | None,
               **scipy_kw: Any) -> np.ndarray:
    """Run one checked transform on the chosen backend; the thread count follows the
    input's size (at most one thread per ``MIN_POINTS_PER_THREAD`` elements)."""
    threads = _threads(workers, arr.size)
    if _check_backend(backend) == "scipy":
        func = getattr(_scipy_fft, _SCIPY_FUNCTIONS[kind])
        return func(arr, axes=axes, workers=threads, **scipy_kw)
    return _run_pyfftw(kind, arr, out_shape, out_dtype, axes, threads)


def rfftn(a: npt.ArrayLike, axes: int | Sequence[int] | None = None, workers: int | None = None,
          backend: str | None = None) -> np.ndarray:
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
    out_dtype = np.complex64 if arr.dtype == np.float32 else np.complex128
    return _transform("r2c", arr, _half_shape(arr.shape, axes), out_dtype, axes, workers, backend)


def irfftn(A: npt.ArrayLike, s: int | Sequence[int], axes: int | Sequence[int] | None = None,
           workers: int | None = None, backend: str | None = None) -> np.ndarray:
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
    shape: Any = s
    if isinstance(shape, numbers.Integral) and not isinstance(shape, (bool, np.bool_)):
        shape = (shape,)
    try:
        s = tuple(shape)
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
    out_shape = list(arr.shape)
    out_shape[last] = s[-1]
    out_dtype = np.float32 if arr.dtype == np.complex64 else np.float64
    return _transform("c2r", arr, tuple(out_shape), out_dtype, axes, workers, backend, s=s)


def fftn(a: npt.ArrayLike, axes: int | Sequence[int] | None = None, workers: int | None = None,
         backend: str | None = None) -> np.ndarray:
    """n-dimensional DFT of a complex (or real, promoted) array.

    Same conventions as ``rfftn`` but the full spectrum is returned, with the
    shape of ``a``; complex64 (or float32) input gives complex64.
    """
    arr = _complex_input(a, "a")
    axes = _check_axes(axes, arr.ndim)
    _check_nonempty(arr, axes, "a")
    return _transform("c2c_fwd", arr, arr.shape, arr.dtype, axes, workers, backend)


def ifftn(A: npt.ArrayLike, axes: int | Sequence[int] | None = None, workers: int | None = None,
          backend: str | None = None) -> np.ndarray:
    """Inverse of ``fftn`` (divides by the number of points transformed)."""
    arr = _complex_input(A, "A")
    axes = _check_axes(axes, arr.ndim)
    _check_nonempty(arr, axes, "A")
    return _transform("c2c_bwd", arr, arr.shape, arr.dtype, axes, workers, backend)
