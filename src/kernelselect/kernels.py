"""The kernels: the :class:`Kernel` value, spectral samplers for random features,
bandwidth heuristic.

Three kernels, all with κ(x, x) = 1 (:class:`Kernel` holds what depends on each):

- Gaussian     κ(x, x′) = exp(−γ‖x − x′‖²); spectral density N(0, 2γI).
- Laplacian    κ(x, x′) = exp(−γ‖x − x′‖₁); spectral density Π_j Cauchy(0, γ).
- per-feature  κ(x, x′) = exp(−Σ_k γ_k (x_k − x′_k)²) (``Kernel.ARD``, ``"ard"``);
  spectral density N(0, 2 diag γ).

Random Fourier features (Rahimi & Recht 2007) draw w from the spectral density and
b ~ U[0, 2π). The standard draws (N(0, 1) or Cauchy(0, 1)) are made once and scaled
per γ (:func:`scale_frequencies`), so that one set of random numbers serves a whole
γ grid.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from .utils._resources import check_allocation
from .utils._kernel_family import AUTO, Kernel, kernel_or_auto
from .utils._validation import check_matrix, check_positive_int, check_random_state

__all__ = [
    "Kernel",
    "kernel_or_auto",
    "kernel_diagonal",
    "sample_frequencies",
    "scale_frequencies",
    "median_heuristic_gamma",
    "is_ard",
    "check_ard_gamma",
    "ard_scale",
    "scale_ard_frequencies",
]


def kernel_diagonal(X: npt.ArrayLike, gamma: Any, kernel: str = "gaussian") -> np.ndarray:
    """diag K = κ(x_i, x_i) = 1 for every :class:`Kernel`, shape (n,)."""
    Kernel.of(kernel)
    return np.ones(np.asarray(X).shape[0])


def sample_frequencies(kernel: str, n_features_in: int, n_features: int,
                       rng: Any) -> tuple[np.ndarray, np.ndarray]:
    """Draw the standard spectral samples ``(W0, b)`` of random Fourier features.

    W0 (d, D) is standard normal (Gaussian and ARD kernels) or standard Cauchy
    (Laplacian), b (D,) uniform on [0, 2π). ``rng`` is a numpy Generator or a seed (as
    ``random_state`` elsewhere); the (d + 1)·D draws are checked against the memory
    guard first."""
    family = Kernel.of(kernel)
    d = check_positive_int(n_features_in, "n_features_in")
    D = check_positive_int(n_features, "n_features")
    check_allocation(8.0 * (d + 1) * D, f"the random frequencies W0 ({d} × {D}) and phases b",
                     "use fewer random features (n_features)")
    rng = check_random_state(rng)
    W0 = family.standard_frequencies(rng, (d, D))
    b = rng.uniform(0.0, 2.0 * np.pi, D)
    return W0, b


def scale_frequencies(W0: npt.ArrayLike, gamma: Any, kernel: str = "gaussian") -> np.ndarray:
    """Frequencies for kernel parameter γ from standard draws: √(2γ)·W0 (Gaussian,
    w ~ N(0, 2γI)), γ·W0 (Laplacian, w_j ~ Cauchy(0, γ)), or for ``kernel="ard"``
    with γ of shape (d,) row k scaled by √(2γ_k) (w ~ N(0, 2 diag γ);
    :meth:`Kernel.scale_frequencies`). γ is checked for the kernel
    (:meth:`Kernel.check_gamma`)."""
    family = Kernel.of(kernel)
    W0 = np.asarray(W0, dtype=np.float64)
    return family.scale_frequencies(W0, family.check_gamma(gamma, W0.shape[0]))


def median_heuristic_gamma(X: Any, kernel: str = "gaussian", rng: Any = None,
                           n_pairs: int = 5000) -> float:
    """γ₀ = 1/median distance over random pairs of distinct points.

    The distance is ‖x_i − x_j‖² for the Gaussian kernel and ‖x_i − x_j‖₁ for the
    Laplacian one (the quantity γ multiplies), over ``n_pairs`` pairs drawn uniformly
    (all pairs when there are fewer) by ``rng`` (a Generator or a seed; None: the fixed
    seed :data:`PAIR_SEED`, so that γ₀ depends on X alone). Zero distances (duplicate
    points) are ignored; if every sampled pair is a duplicate, the pairs are drawn again among the
    distinct rows. All rows equal raises ``ValueError`` (no distance to take a
    median of).

    The distances are taken on X·2⁻ᵉ (exact, 2ᵉ near X's largest magnitude) and γ₀
    is scaled back by 2⁻²ᵉ (Gaussian) or 2⁻ᵉ (Laplacian), so that γ₀ is right at any
    scale where it is a float64: squared distances of data of size 10¹⁶⁰ or 10⁻¹⁶⁰
    neither overflow nor underflow. A γ₀ outside [2⁻¹⁰⁰⁰, 2¹⁰⁰⁰] (data beyond about
    10^±150 for the Gaussian kernel) raises ``ValueError``: a γ grid around it would
    leave the float64 range; rescale X (e.g. ``standardize=True``) or pass gammas.
    """
    kernel = Kernel.of(kernel, per_feature=False)
    n_pairs = check_positive_int(n_pairs, "n_pairs")
    if not hasattr(X, "shape"):
        X = check_matrix(X, "X", min_rows=2)
    if len(X.shape) != 2 or X.shape[0] < 2:
        raise ValueError(f"X must be 2-D with at least 2 rows to take distances between "
                         f"them, got shape {tuple(X.shape)}.")
    n = X.shape[0]
    rng = check_random_state(PAIR_SEED if rng is None else rng)
    all_pairs = n * (n - 1) // 2 <= n_pairs
    i, j = _pairs(n, rng, n_pairs)
    # only the rows in some pair are read (X may be a memory map or a Dask array)
    rows, inverse = np.unique(np.concatenate([i, j]), return_inverse=True)
    sample = np.asarray(X[rows], dtype=np.float64)
    bad = ~np.isfinite(sample).all(axis=1)
    if bad.any():
        raise ValueError(f"X contains NaN or inf (row {int(rows[bad][0])}); drop or impute "
                         "those rows.")
    peak = float(np.max(np.abs(sample))) if sample.size else 0.0
    unit = math.frexp(peak)[1] if peak > 0 else 0
    sample = np.ldexp(sample, -unit)
    dist = _distances(sample[inverse[: i.size]], sample[inverse[i.size:]], kernel)
    if dist.size == 0 and not all_pairs and isinstance(X, np.ndarray):
        # every sampled pair was a duplicate: draw again among the distinct rows
        distinct = np.unique(np.ldexp(X.astype(np.float64, copy=False), -unit), axis=0)
        if distinct.shape[0] >= 2:
            a, b = _pairs(distinct.shape[0], rng, n_pairs)
            dist = _distances(distinct[a], distinct[b], kernel)
    if dist.size == 0:
        which = f"all {n} rows of X are equal" if all_pairs or isinstance(X, np.ndarray) \
            else f"all {n_pairs} sampled pairs of rows of X are equal"
        raise ValueError(
            f"{which}: there is no distance between points, so the median-heuristic γ₀ "
            "(and any kernel choice) is undefined; check X, or pass gammas."
        )
    g_unit = 1.0 / float(np.median(dist))
    exponent = -kernel.power * unit
    lo, hi = GAMMA0_EXPONENT_RANGE
    if not lo <= math.frexp(g_unit)[1] + exponent <= hi:
        raise ValueError(
            f"X's scale (largest magnitude {peak:.3g}) puts the median-heuristic γ₀ at "
            f"about 2^{math.frexp(g_unit)[1] + exponent}, outside [2^{lo}, 2^{hi}]: a γ "
            "grid around it leaves the float64 range. Rescale X (e.g. standardize=True) "
            "or pass gammas."
        )
    return math.ldexp(g_unit, exponent)


def _pairs(n: int, rng: np.random.Generator, n_pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j), i ≠ j: all pairs when there are at most ``n_pairs``, else a
    uniform sample of ``n_pairs``."""
    if n * (n - 1) // 2 <= n_pairs:
        return np.triu_indices(n, 1)
    i = rng.integers(0, n, n_pairs)
    j = rng.integers(0, n - 1, n_pairs)
    return i, j + (j >= i)                      # j ≠ i, uniform over the others


def _distances(A: np.ndarray, B: np.ndarray, kernel: Kernel) -> np.ndarray:
    """Positive row distances ‖a − b‖² (Gaussian) or ‖a − b‖₁ (Laplacian)."""
    diff = A - B
    dist = np.sum(diff ** 2, axis=1) if kernel.power == 2 else np.sum(np.abs(diff), axis=1)
    return dist[dist > 0]


#: seed of the median heuristic's pair sample when no generator is given: the default
#: γ grid is then a function of X alone
PAIR_SEED = 0

#: binary exponents allowed for the median-heuristic γ₀ (grids γ₀·2^k stay normal floats)
GAMMA0_EXPONENT_RANGE = (-1000, 1000)


# --------------------------------------------------------------------------- per-feature γ
#
# The names below predate :class:`Kernel` and stay as aliases of its members.

#: the kernel name that takes one γ per feature
ARD = Kernel.ARD.value


def is_ard(kernel: Any) -> bool:
    """Whether ``kernel`` names the per-feature Gaussian kernel (``"ard"``)."""
    return isinstance(kernel, str) and kernel.strip().lower() == ARD


def check_ard_gamma(gamma: Any, n_features: int, name: str = "gamma") -> np.ndarray:
    """γ of the ARD kernel as a float64 array of shape (n_features,): a positive
    finite scalar (the isotropic kernel) or one positive finite value per feature
    (``Kernel.ARD.check_gamma``)."""
    return Kernel.ARD.check_gamma(gamma, n_features, name)


def ard_scale(X: npt.ArrayLike, gamma: npt.ArrayLike) -> np.ndarray:
    """X·diag(√γ): the features on which the ARD kernel is the Gaussian kernel with
    γ = 1 (``Kernel.ARD.points(X, gamma)[0]``). float32 stays float32, anything else
    becomes float64; O(nd)."""
    return Kernel.ARD.points(X, gamma)[0]


def ard_as_gaussian(arrays: list[Any], gamma: Any, n_features: int | None = None
                    ) -> tuple[list[np.ndarray], float, str]:
    """(scaled copies of ``arrays``, 1.0, "gaussian"): the call of a Gaussian primitive
    equal to an ARD one. The number of features is read from the first array."""
    first = np.asarray(arrays[0])
    d = first.shape[1] if first.ndim == 2 else (n_features or 0)
    g = check_ard_gamma(gamma, d)
    return [Kernel.ARD.points(a, g)[0] for a in arrays], 1.0, "gaussian"


def scale_ard_frequencies(W0: npt.ArrayLike, gamma: npt.ArrayLike) -> np.ndarray:
    """Frequencies w ~ N(0, 2 diag γ) of the ARD kernel from standard normal draws
    W0 (d, D): row k of W0 scaled by √(2γ_k)."""
    return scale_frequencies(W0, gamma, kernel=Kernel.ARD)
