"""Kernel families: values, spectral samplers for random features, bandwidth heuristic.

Both families are radial with κ(x, x) = 1:

- Gaussian   κ(x, x′) = exp(−γ‖x − x′‖²); spectral density N(0, 2γI).
- Laplacian  κ(x, x′) = exp(−γ‖x − x′‖₁); spectral density Π_j Cauchy(0, γ).

Random Fourier features (Rahimi & Recht 2007) draw w from the spectral density and
b ~ U[0, 2π). The standard draws (N(0, 1) or Cauchy(0, 1)) are made once and scaled
per γ (:func:`scale_frequencies`), so that one set of random numbers serves a whole
γ grid.
"""

import numpy as np

from ._validation import check_kernel

__all__ = [
    "kernel_matrix",
    "kernel_diagonal",
    "sample_frequencies",
    "scale_frequencies",
    "median_heuristic_gamma",
]


def kernel_matrix(X, Z, gamma, kernel="gaussian", workers=None):
    """K(X, Z) of shape (n_x, n_z) (via :func:`kernelselect.lowlevel.kernel_block`)."""
    from . import lowlevel

    return lowlevel.kernel_block(X, Z, gamma, kernel=kernel, workers=workers)


def kernel_diagonal(X, gamma, kernel="gaussian"):
    """diag K = κ(x_i, x_i) = 1 for both radial families, shape (n,)."""
    check_kernel(kernel)
    return np.ones(np.asarray(X).shape[0])


def sample_frequencies(kernel, n_features_in, n_features, rng):
    """Standard spectral draws ``(W0, b)``: W0 (d, D) standard normal (Gaussian) or
    standard Cauchy (Laplacian), b (D,) uniform on [0, 2π)."""
    kernel = check_kernel(kernel)
    if kernel == "gaussian":
        W0 = rng.standard_normal((n_features_in, n_features))
    else:
        W0 = rng.standard_cauchy((n_features_in, n_features))
    b = rng.uniform(0.0, 2.0 * np.pi, n_features)
    return W0, b


def scale_frequencies(W0, gamma, kernel="gaussian"):
    """Frequencies for kernel parameter γ from standard draws: √(2γ)·W0 (Gaussian,
    w ~ N(0, 2γI)) or γ·W0 (Laplacian, w_j ~ Cauchy(0, γ))."""
    kernel = check_kernel(kernel)
    scale = np.sqrt(2.0 * gamma) if kernel == "gaussian" else float(gamma)
    return scale * np.asarray(W0, dtype=np.float64)


def median_heuristic_gamma(X, kernel="gaussian", rng=None, n_pairs=5000):
    """γ₀ = 1/median distance over random pairs of distinct points.

    The distance is ‖x_i − x_j‖² for the Gaussian kernel and ‖x_i − x_j‖₁ for the
    Laplacian one (the quantity γ multiplies), over ``n_pairs`` pairs drawn uniformly
    (all pairs when there are fewer). Zero distances (duplicate points) are ignored;
    if every pair is a duplicate, γ₀ = 1.
    """
    kernel = check_kernel(kernel)
    if not hasattr(X, "shape"):
        X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    rng = np.random.default_rng(rng)
    if n * (n - 1) // 2 <= n_pairs:
        i, j = np.triu_indices(n, 1)
    else:
        i = rng.integers(0, n, n_pairs)
        j = rng.integers(0, n - 1, n_pairs)
        j = j + (j >= i)                        # j ≠ i, uniform over the others
    # only the rows in some pair are read (X may be a memory map or a Dask array)
    rows, inverse = np.unique(np.concatenate([i, j]), return_inverse=True)
    sample = np.asarray(X[rows], dtype=np.float64)
    bad = ~np.isfinite(sample).all(axis=1)
    if bad.any():
        raise ValueError(f"X contains NaN or inf (row {int(rows[bad][0])}); drop or impute "
                         "those rows.")
    diff = sample[inverse[: i.size]] - sample[inverse[i.size:]]
    dist = np.sum(diff ** 2, axis=1) if kernel == "gaussian" else np.sum(np.abs(diff), axis=1)
    dist = dist[dist > 0]
    if dist.size == 0:
        return 1.0
    return float(1.0 / np.median(dist))
