# cython: language_level=3, boundscheck=False, wraparound=False
"""A downstream extension that calls kernelselect's compiled
kernels from its own nogil code, without going through Python."""

import numpy as np

from kernelselect._kernels cimport (KS_OK, ks_kernel_block,
                                    ks_kernel_matvec)
from kernelselect._rff cimport rff_columns


def gaussian_block(double[:, ::1] X, double[:, ::1] Z,
                   double gamma, int threads=1):
    """K[i, j] = exp(-gamma ||X[i] - Z[j]||^2), without the GIL."""
    K = np.empty((X.shape[0], Z.shape[0]))
    cdef double[:, ::1] out = K
    cdef int status
    with nogil:
        status = ks_kernel_block(
            &X[0, 0], X.shape[0], &Z[0, 0], Z.shape[0], X.shape[1],
            gamma, 0, &out[0, 0], threads)  # kernel 0: Gaussian
    if status != KS_OK:
        raise MemoryError("ks_kernel_block: no memory for buffers")
    return K


def kernel_row_sums(double[:, ::1] X, double gamma, int threads=1):
    """K(X, X) @ 1 without ever holding K (streaming matvec)."""
    n = X.shape[0]
    ones = np.ones((n, 1))
    sums = np.empty((n, 1))
    cdef double[:, ::1] v = ones, y = sums
    cdef int status
    with nogil:
        status = ks_kernel_matvec(
            &X[0, 0], n, X.shape[1], &v[0, 0], 1,
            gamma, 0, &y[0, 0], threads)
    if status != KS_OK:
        raise MemoryError("ks_kernel_matvec: no memory for buffers")
    return sums[:, 0]


def random_features(double[:, ::1] X, double[:, ::1] W,
                    double[::1] b, int threads=1):
    """z(x)_k = sqrt(2/D) cos(x . W[:, k] + b[k]) for each row."""
    D = W.shape[1]
    Z = np.empty((X.shape[0], D))
    cdef double[:, ::1] out = Z
    cdef double[::1] no_row_scale = np.empty(0)
    cdef double scale = (2.0 / D) ** 0.5
    cdef int status
    with nogil:
        status = rff_columns(X, W, b, no_row_scale, scale, out,
                             threads)
    if status != 0:
        raise ValueError("X, W, b and the output disagree in shape")
    return Z
