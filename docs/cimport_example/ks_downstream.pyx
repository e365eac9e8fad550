# cython: language_level=3, boundscheck=False, wraparound=False
"""A downstream extension that calls kernelselect's compiled
kernels from its own nogil code, without going through Python."""

import numpy as np

from cython.parallel cimport prange
from libc.stdlib cimport free, malloc

from kernelselect._kernels cimport kernel_block_into, kernel_matvec_into
from kernelselect._rff cimport rff_columns_into
from kernelselect._status cimport OK, Status, check_status, status_no_memory

cdef enum:
    BLOCK = 64   # rows of K per task of nearest_similarity


def gaussian_block(double[:, ::1] X, double[:, ::1] Z,
                   double gamma, int threads=1):
    """K[i, j] = exp(-gamma ||X[i] - Z[j]||^2), without the GIL."""
    # Pointers carry no shapes: the caller checks them.
    if Z.shape[1] != X.shape[1]:
        raise ValueError("X and Z must have the same columns")
    K = np.empty((X.shape[0], Z.shape[0]))
    cdef double[:, ::1] out = K
    cdef Status status
    with nogil:
        status = kernel_block_into(
            &X[0, 0], X.shape[0], &Z[0, 0], Z.shape[0], X.shape[1],
            gamma, 0, &out[0, 0], threads)  # kernel 0: Gaussian
    # MemoryError, ValueError, OverflowError unless status is OK
    check_status(status, "gaussian_block")
    return K


def kernel_row_sums(double[:, ::1] X, double gamma, int threads=1):
    """K(X, X) @ 1 without ever holding K (streaming matvec)."""
    n = X.shape[0]
    ones = np.ones((n, 1))
    sums = np.empty((n, 1))
    cdef double[:, ::1] v = ones, y = sums
    cdef Status status
    with nogil:
        status = kernel_matvec_into(
            &X[0, 0], n, X.shape[1], &v[0, 0], 1,
            gamma, 0, &y[0, 0], threads)
    check_status(status, "kernel_row_sums")
    return sums[:, 0]


def nearest_similarity(double[:, ::1] X, double[:, ::1] Z,
                       double gamma, int threads=1):
    """max over j of K(X[i], Z[j]) for each row, block by block
    in an OpenMP loop: K(X, Z) is never held. Each task hands
    pointers into X and its own buffer to the kernel."""
    cdef Py_ssize_t n = X.shape[0], m = Z.shape[0]
    cdef Py_ssize_t n_blocks = (n + BLOCK - 1) // BLOCK
    cdef Py_ssize_t blk, i0, rows, i, j
    cdef double* buf
    cdef Status* statuses = <Status*>malloc(
        n_blocks * sizeof(Status))
    if statuses == NULL:
        raise MemoryError()
    best = np.zeros(n)
    cdef double[::1] top = best
    for blk in prange(n_blocks, nogil=True,
                      num_threads=threads):
        i0 = blk * BLOCK
        rows = min(BLOCK, n - i0)
        buf = <double*>malloc(rows * m * sizeof(double))
        if buf == NULL:
            statuses[blk] = status_no_memory(
                rows * m * sizeof(double))
        else:
            # one thread per task: the loop is already parallel
            statuses[blk] = kernel_block_into(
                &X[i0, 0], rows, &Z[0, 0], m, X.shape[1],
                gamma, 0, buf, 1)
            for i in range(rows):
                for j in range(m):
                    if buf[i * m + j] > top[i0 + i]:
                        top[i0 + i] = buf[i * m + j]
            free(buf)
    try:
        for blk in range(n_blocks):
            check_status(statuses[blk], "nearest_similarity")
    finally:
        free(statuses)
    return best


def random_features(double[:, ::1] X, double[:, ::1] W,
                    double[::1] b, int threads=1):
    """z(x)_k = sqrt(2/D) cos(x . W[:, k] + b[k]) for each row."""
    cdef Py_ssize_t D = W.shape[1]
    if W.shape[0] != X.shape[1] or b.shape[0] != D:
        raise ValueError("W must be (d, D) and b (D,)")
    Z = np.empty((X.shape[0], D))
    cdef double[:, ::1] out = Z
    cdef double scale = (2.0 / D) ** 0.5
    cdef Status status
    with nogil:
        status = rff_columns_into(
            &X[0, 0], X.shape[0], X.shape[1], &W[0, 0], D,
            &b[0], NULL,  # NULL: no per-row scale
            scale, &out[0, 0], threads)
    check_status(status, "random_features")
    return Z
