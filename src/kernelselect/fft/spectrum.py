"""Sums over the full spectrum of a real array's DFT from its stored half
(``rfftn``'s output): the multiplicity of each stored coefficient and the sums
Σ_k g(A(k)) that the spectral criteria need."""

from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence

import numpy as np
import numpy.typing as npt

from .transforms import _check_axes, _half_shape


# --------------------------------------------------------------------------- half-spectrum sums


def _check_shape(shape: Any, name: str = "shape") -> tuple[int, ...]:
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


def _paired_slice(n: int) -> slice:
    """Indices along the halved axis whose mirror frequency is not stored: 1..⌈n/2⌉−1."""
    return slice(1, (n + 1) // 2)


def rfftn_multiplicity(shape: Sequence[int], axes: int | Sequence[int] | None = None) -> np.ndarray:
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


def full_spectrum_sum(values: npt.ArrayLike, shape: Sequence[int],
                      axes: int | Sequence[int] | None = None,
                      extra_axes: str = "trailing") -> Any:
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


def spectrum_sum(f: Callable[[np.ndarray], npt.ArrayLike], V: npt.ArrayLike, shape: Sequence[int],
                 axes: int | Sequence[int] | None = None, extra_axes: str = "trailing") -> Any:
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
