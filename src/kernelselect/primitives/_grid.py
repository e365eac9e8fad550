"""Laying real data on a p-level grid for the Song–Xu multilevel circulant matrix.

The Song–Xu approximation (Ding, Liao et al., "Approximate kernel selection via
matrix approximation", TNNLS 2020, Alg. 1; after Song & Xu 2010) assumes the
training points are indexed by a grid i ∈ [m] = [m_0] × … × [m_{p−1}] with
x_i ≈ x_0 + (i_s h_s)_s. Real data are not a grid, so three choices are made
here:

1. :func:`choose_grid` picks the grid shape m (Π m = n′ ≤ n points are used).
2. :func:`grid_order` assigns the points to grid cells by recursive splits along
   principal directions.
3. :func:`fit_spacing` fits the spacing h by least squares over a random sample
   of point pairs.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

from ..utils._lapack import gram
from ..utils._resources import check_allocation
from ..utils._validation import (check_bool, check_finite, check_matrix, check_positive_int,
                          check_random_state, real_array)

__all__ = ["choose_grid", "grid_order", "fit_spacing", "grid_index_differences"]


def _search(n: int, p: int, lo: int, hi: int) -> tuple[int, list[int] | None]:
    """Largest product of p non-decreasing integers in [lo, hi], product ≤ n.

    Returns (product, factors ascending) or (0, None) when none exists.
    """
    if p == 1:
        top = min(n, hi)
        return (top, [top]) if top >= lo else (0, None)
    best: int = 0
    best_f: list[int] | None = None
    # the smallest of the remaining p factors is at most n^(1/p)
    a_max = min(hi, int(round(n ** (1.0 / p))) + 1)
    for a in range(lo, a_max + 1):
        if a ** p > n:
            break
        prod, rest = _search(n // a, p - 1, a, hi)
        if rest is not None and a * prod > best:
            best, best_f = a * prod, [a] + rest
            if best == n:                   # n itself: nothing larger exists
                break
    return best, best_f


def choose_grid(n: int, levels: int, max_ratio: float = 2.0) -> tuple[tuple[int, ...], int]:
    """The grid shape m for n points on ``levels`` levels.

    A number n′ is *well factorable* into p levels when n′ = m_0 ⋯ m_{p−1} with
    integers m_s ≥ 2 and max_s m_s ≤ ``max_ratio`` · min_s m_s (near-equal
    sides). The grid uses n′ = n when n is well factorable, else the largest
    well-factorable n′ < n. Among the factorisations of that n′ the most
    balanced one (smallest max/min) is taken; sides are returned in
    non-increasing order, so level 0 (the leading principal direction) gets the
    most cells.

    Parameters
    ----------
    n : int
        Number of points available (≥ 2^levels).
    levels : int
        p ≥ 1, the number of circulant levels.
    max_ratio : float, default 2.0
        Largest allowed ratio of the longest to the shortest side (≥ 1).

    Returns
    -------
    m : tuple of int, length p
        The grid shape, Π m = n′.
    n_used : int
        n′ = Π m ≤ n.

    Examples
    --------
    >>> choose_grid(1000, 3)
    ((10, 10, 10), 1000)
    >>> choose_grid(683, 2)            # 683 is prime: 682 = 31·22 is used
    ((31, 22), 682)
    """
    n = check_positive_int(n, "n")
    p = check_positive_int(levels, "levels")
    if (isinstance(max_ratio, bool) or not isinstance(max_ratio, numbers.Real)
            or not 1 <= max_ratio < float("inf")):
        raise ValueError(f"max_ratio must be a finite real number ≥ 1, got {max_ratio!r}.")
    if p > n.bit_length() - 1:  # n < 2^p, without forming 2^p for a huge p
        need = f"2^{p} = {2 ** p}" if p <= 64 else f"2^{p}"
        raise ValueError(
            f"n={n} points cannot fill a {p}-level grid with at least 2 cells per level "
            f"(needs n ≥ {need}); use levels ≤ {max(1, n.bit_length() - 1)}."
        )
    # a grid of n cells holds at least one float64 column (the circulant's): a size the
    # memory guard refuses is refused here, before a search of about n^(1/2) steps
    check_allocation(8.0 * n, f"a {p}-level grid for n={n} points (its circulant column)",
                     "use fewer points")
    if p == 1:
        return (n,), n
    best: int = 0
    best_f: list[int] | None = None
    # the smallest side a ranges over [⌈(n/r^{p−1})^{1/p}⌉ − 1, ⌊n^{1/p}⌋ + 1]
    a_lo = max(2, int((n / max_ratio ** (p - 1)) ** (1.0 / p)) - 1)
    a_hi = int(round(n ** (1.0 / p))) + 1
    for a in range(a_lo, a_hi + 1):
        if a ** p > n:
            break
        hi = int(np.floor(max_ratio * a + 1e-9))
        prod, rest = _search(n // a, p - 1, a, hi)
        if rest is None:
            continue
        total = a * prod
        f = sorted([a] + rest, reverse=True)
        if total > best or (total == best and f[0] / f[-1] < best_f[0] / best_f[-1]):
            best, best_f = total, f
        if best == n and best_f[0] == best_f[-1]:    # n exactly, on equal sides
            break
    if best_f is None:  # pragma: no cover - a = 2 for every level always fits
        raise RuntimeError("no grid found")
    return tuple(int(v) for v in best_f), int(best)


def _unit_scale(X: np.ndarray) -> np.ndarray:
    """X / max|X|: directions and orderings do not depend on the scale, and sums,
    covariances and projections then stay within the float range at any magnitude."""
    top = float(np.max(np.abs(X))) if X.size else 0.0
    return X / top if 0.0 < top < np.inf else X


def _principal_directions(X: np.ndarray, k: int) -> np.ndarray:
    """The k leading principal directions of X (columns, d × k), signs fixed.

    Each direction's largest-magnitude coordinate is made positive so that the
    result does not depend on the eigensolver's sign choice.
    """
    Xc = _unit_scale(X)
    Xc = Xc - Xc.mean(axis=0)
    cov = gram(Xc)
    w, V = np.linalg.eigh(cov)
    V = V[:, np.argsort(w)[::-1][:k]]
    pivot = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[pivot, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return V * signs


def grid_order(X: npt.ArrayLike, m: Sequence[int],
               directions: npt.ArrayLike | None = None) -> np.ndarray:
    """Assign the rows of X to the cells of a grid m by recursive principal splits.

    Level 0 sorts all Π m rows by their projection on the first principal
    direction of X and cuts them into m_0 slabs of Π m / m_0 consecutive rows;
    level s sorts the rows of each slab by the projection on the s-th principal
    direction of X (the same direction for every slab) and cuts the slab into
    m_s slabs; after level p − 1 each cell holds one point. Sorting is stable, so
    ties keep their input order and the result is deterministic.

    Parameters
    ----------
    X : ndarray of shape (n′, d)
        The points to place, n′ = Π m and d ≥ p.
    m : sequence of int, length p
        Grid shape.
    directions : ndarray of shape (d, p), optional
        Directions to split along; default the p leading principal directions.

    Returns
    -------
    order : ndarray of int, shape (n′,)
        ``order[f]`` is the row of X placed at the cell whose C-order (row-major)
        flat index is f; a permutation of 0..n′−1.
    """
    X = check_matrix(X, "X", dtype=np.float64)
    m = tuple(check_positive_int(v, "m") for v in m)
    p = len(m)
    n = X.shape[0]
    if math.prod(m) != n:
        raise ValueError(f"X has {n} rows but the grid {m} has {math.prod(m)} cells; they must match.")
    if directions is not None:
        D = real_array(directions, "directions")
        if D.ndim == 1 and p == 1:
            D = D[:, None]
        if D.shape != (X.shape[1], p):
            raise ValueError(
                f"directions must have shape (d, p) = ({X.shape[1]}, {p}): one column of "
                f"length d={X.shape[1]} per grid level; got shape {D.shape}."
            )
        check_finite(D, "directions")
        directions = D
    else:
        if X.shape[1] < p:
            raise ValueError(
                f"levels={p} needs at least {p} features to split along, X has {X.shape[1]}; "
                f"use levels ≤ {X.shape[1]}."
            )
        directions = _principal_directions(X, p)
    proj = _unit_scale(X) @ np.asarray(directions, dtype=np.float64)   # (n′, p)
    order = np.arange(n)
    block = n
    for s in range(p):
        block //= m[s]                                            # rows per slab after this level
        seg = n // (block * m[s])                                  # number of parent slabs
        keys = proj[order, s].reshape(seg, m[s] * block)
        within = np.argsort(keys, axis=1, kind="stable")
        order = np.take_along_axis(order.reshape(seg, m[s] * block), within, axis=1).ravel()
    return order


def grid_index_differences(a: npt.ArrayLike, b: npt.ArrayLike, m: Sequence[int],
                           periodic: bool = False) -> np.ndarray:
    """Per-level index differences δ_s between flat C-order grid cells a and b.

    ``periodic=False`` gives ``|i_s − j_s|`` (the grid geometry, Ding et al. (TNNLS 2020) H4);
    ``periodic=True`` gives min(k_s, m_s − k_s), k_s = (i_s − j_s) mod m_s, the
    distance on the torus that the circulant U uses when the far image is
    negligible (D_{i,s} = {k_s, m_s − k_s}).
    """
    ia = np.stack(np.unravel_index(np.asarray(a), m), axis=-1)
    ib = np.stack(np.unravel_index(np.asarray(b), m), axis=-1)
    if not periodic:
        return np.abs(ia - ib).astype(np.float64)
    k = np.mod(ia - ib, np.asarray(m))
    return np.minimum(k, np.asarray(m) - k).astype(np.float64)


def fit_spacing(X_grid: npt.ArrayLike, m: Sequence[int], n_pairs: int = 4096,
                periodic: bool = False, random_state: Any = None) -> np.ndarray:
    """Least-squares fit of the grid spacing h ∈ R^p to the data.

    With the rows of ``X_grid`` in grid order (row f at cell f, C order) and a
    uniform random sample of pairs (a, b), a ≠ b, h minimises

        Σ_pairs ( ‖x_a − x_b‖ − ‖δ(a, b) ∘ h‖ )²,   h ≥ 0,

    where δ_s is the per-level index difference of :func:`grid_index_differences`
    (``|i_s − j_s|`` by default, the relation H4 of Ding et al. (TNNLS 2020) assumes and its
    experiment tunes; ``periodic=True`` uses the torus distance instead). The
    start is the exact solution of the linear problem on squared distances,
    ‖x_a − x_b‖² ≈ Σ_s δ_s² h_s² (non-negative least squares in h_s²); a
    bounded Gauss–Newton refinement (scipy.optimize.least_squares) then fits the
    distances themselves. Points that are exactly a grid are recovered exactly
    (both problems have zero residual there).

    Parameters
    ----------
    X_grid : ndarray of shape (n′, d)
    m : sequence of int, length p, Π m = n′
    n_pairs : int, default 4096
    periodic : bool, default False
    random_state : None, int or numpy Generator

    Returns
    -------
    h : ndarray of shape (p,), every entry > 0
    """
    # Imported here, not at module level: scipy.optimize (with scipy.sparse, .special
    # and .spatial behind it) adds about 20 MB resident and 0.1 s to the import of
    # `kernelselect.lowlevel` and of `select_kernel`, and only this fit needs it.
    from scipy.optimize import least_squares, nnls

    X = check_matrix(X_grid, "X_grid", dtype=np.float64)
    m = tuple(check_positive_int(v, "m") for v in m)
    n = X.shape[0]
    if int(np.prod(m)) != n:
        raise ValueError(f"X_grid has {n} rows but the grid {m} has {math.prod(m)} cells.")
    if n < 2:
        raise ValueError(f"X_grid needs at least 2 rows (points) to fit a spacing, got {n}.")
    n_pairs = check_positive_int(n_pairs, "n_pairs")
    periodic = check_bool(periodic, "periodic")
    check_allocation(8.0 * n_pairs * (3 * X.shape[1] + 4 * len(m) + 8),
                     f"fit_spacing with n_pairs={n_pairs} (pair indices, differences and "
                     f"distances for {n_pairs} pairs in {X.shape[1]} features)",
                     "use fewer pairs (the default 4096 fixes h to a fraction of a percent)")
    rng = check_random_state(random_state)
    a = rng.integers(0, n, size=n_pairs)
    b = (a + rng.integers(1, n, size=n_pairs)) % n                # b ≠ a
    delta = grid_index_differences(a, b, m, periodic=periodic)    # (pairs, p)
    # The fit runs on X / 2^e (exact) with 2^e near X's largest magnitude, so that its
    # tolerances and floor act on numbers of order one: h is then equivariant to the
    # data's units (h(cX) = c h(X)) and the squared distances cannot overflow.
    unit = _power_of_two_scale(X)
    dist = np.sqrt(np.sum((np.ldexp(X[a], -unit) - np.ldexp(X[b], -unit)) ** 2, axis=1))
    active = delta.max(axis=0) > 0                                 # levels seen in the sample
    if not active.any():  # pragma: no cover - a ≠ b always differs on some level
        raise ValueError("no informative pairs; increase n_pairs.")
    h2, _ = nnls(delta[:, active] ** 2, dist ** 2)
    h0 = np.sqrt(h2)
    scale = dist.max() if dist.max() > 0 else 0.0
    if scale == 0.0:
        raise ValueError("X has no spread (all sampled points coincide); a grid spacing cannot be fitted.")
    floor = 1e-9 * scale
    h0 = np.maximum(h0, 2 * floor)
    Da = delta[:, active]

    def resid(hh: np.ndarray) -> np.ndarray:
        return np.sqrt(np.sum((Da * hh) ** 2, axis=1)) - dist

    def jac(hh: np.ndarray) -> np.ndarray:
        norm = np.sqrt(np.sum((Da * hh) ** 2, axis=1))
        norm = np.where(norm > 0, norm, 1.0)
        return Da ** 2 * hh / norm[:, None]

    res = least_squares(resid, h0, jac=jac, bounds=(floor, np.inf), method="trf",
                        xtol=1e-14, ftol=1e-14, gtol=1e-14, max_nfev=200)
    h = np.full(len(m), float(np.median(res.x)))
    h[active] = res.x
    h = np.ldexp(h, unit)
    if not np.all(np.isfinite(h) & (h > 0)):
        raise ValueError(
            "the fitted grid spacing h leaves the float64 range at the scale of X_grid "
            f"(largest magnitude 2^{unit}); rescale X."
        )
    return h


def _power_of_two_scale(X: np.ndarray) -> int:
    """e with 2^(e−1) ≤ max|X| < 2^e (0 for an all-zero X)."""
    peak = float(np.max(np.abs(X))) if X.size else 0.0
    return int(np.frexp(peak)[1]) if peak > 0 else 0
