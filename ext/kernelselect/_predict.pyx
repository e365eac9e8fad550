# cython: language_level=3
"""Prediction kernel: K(X_new, X_train) @ C streamed over blocks of new points.

Memory beyond the inputs and the output: threads × PREDICT_ROWS × n_train doubles
(10 MB for two threads at n_train = 10⁴).
"""

from cython.parallel cimport prange
from libc.string cimport memcpy

from kernelselect._common cimport (alloc_thread_work, blas_dims, clamp_threads,
                                   exp_neg_scaled, gemm, ks_omp_thread_num,
                                   release_thread_work)
from kernelselect._kernels cimport kernel_block_into
from kernelselect._status cimport (OK, Status, check_status, require, status_bad_argument,
                                   status_ok)

cdef enum:
    PREDICT_ROWS = 64


cdef Status _check_sizes(Py_ssize_t n_new, Py_ssize_t n_train, Py_ssize_t m) noexcept nogil:
    if n_new < 0 or m < 0:
        return status_bad_argument(b"n_new and m", b">= 0")
    if n_train < 1:
        return status_bad_argument(b"n_train", b">= 1")
    return blas_dims(n_train, b"n_train", m, b"m")


cdef Status _stream(const double* X_new, const double* X_train, Py_ssize_t d,
                    const double* D, Py_ssize_t n_new, Py_ssize_t n_train,
                    const double* C, Py_ssize_t m, double gamma, int kernel,
                    double* out, int threads) noexcept nogil:
    """out = K @ C by blocks of PREDICT_ROWS new points, each block's rows of K formed in
    a buffer of its thread: from the points by kernel_block_into (D NULL), or from the
    distances D as exp(-gamma D)."""
    cdef Py_ssize_t n_blocks = (n_new + PREDICT_ROWS - 1) // PREDICT_ROWS
    cdef Py_ssize_t blk, i0, bi
    cdef double* buffers
    cdef double* T
    cdef Status* statuses
    cdef Status status = _check_sizes(n_new, n_train, m)
    if status.code != OK or n_blocks == 0 or m == 0:
        return status
    threads = clamp_threads(threads, n_blocks)
    status = alloc_thread_work(threads, PREDICT_ROWS * n_train, n_blocks, &buffers, &statuses)
    if status.code != OK:
        return status
    for blk in prange(n_blocks, nogil=True, schedule='static', num_threads=threads):
        T = buffers + ks_omp_thread_num() * PREDICT_ROWS * n_train
        i0 = blk * PREDICT_ROWS
        bi = min(PREDICT_ROWS, n_new - i0)
        if D == NULL:
            statuses[blk] = kernel_block_into(X_new + i0 * d, bi, X_train, n_train, d,
                                              gamma, kernel, T, 1)
        else:
            memcpy(T, D + i0 * n_train, bi * n_train * sizeof(double))
            exp_neg_scaled(T, bi * n_train, gamma)
            statuses[blk] = status_ok()
        if statuses[blk].code == OK:
            # out[i0:i0+bi] = T (bi, n_train) @ C (n_train, m)
            gemm(False, False, bi, m, n_train, 1.0, T, n_train, C, m, 0.0, out + i0 * m, m)
    return release_thread_work(buffers, statuses, n_blocks)


cdef Status cross_kernel_matvec_into(const double* X_new, Py_ssize_t n_new,
                                     const double* X_train, Py_ssize_t n_train,
                                     Py_ssize_t d, const double* C, Py_ssize_t m,
                                     double gamma, int kernel,
                                     double* out,
                                     int threads) noexcept nogil:
    return _stream(X_new, X_train, d, NULL, n_new, n_train, C, m, gamma, kernel, out,
                   threads)


cdef Status distance_kernel_matvec_into(const double* D, Py_ssize_t n_new,
                                        Py_ssize_t n_train,
                                        const double* C, Py_ssize_t m,
                                        double gamma,
                                        double* out,
                                        int threads) noexcept nogil:
    return _stream(NULL, NULL, 0, D, n_new, n_train, C, m, gamma, 0, out, threads)


# ---------------------------------------------------------------------------
# Python bindings (memoryviews; shapes checked before pointers are taken)
# ---------------------------------------------------------------------------

def _cross_kernel_matvec_into(const double[:, ::1] X_new, const double[:, ::1] X_train,
                              const double[:, ::1] C, double gamma, int kernel,
                              double[:, ::1] out, int threads):
    """out (n_new, m) = K(X_new, X_train) @ C; call with BLAS limited to one thread."""
    cdef Status status
    require(X_train.shape[1] == X_new.shape[1], "cross_kernel_matvec_into", "X_train",
            "of shape (n_train, d), X_new's d")
    require(C.shape[0] == X_train.shape[0], "cross_kernel_matvec_into", "C",
            "of shape (n_train, m)")
    require(out.shape[0] == X_new.shape[0] and out.shape[1] == C.shape[1],
            "cross_kernel_matvec_into", "out", "of shape (n_new, m)")
    with nogil:
        status = cross_kernel_matvec_into(&X_new[0, 0], X_new.shape[0], &X_train[0, 0],
                                          X_train.shape[0], X_new.shape[1], &C[0, 0],
                                          C.shape[1], gamma, kernel, &out[0, 0], threads)
    check_status(status, "cross_kernel_matvec_into")


def _distance_kernel_matvec_into(const double[:, ::1] D, const double[:, ::1] C,
                                 double gamma, double[:, ::1] out, int threads):
    """out (n_new, m) = exp(−γ D) @ C for distances D (n_new, n_train) (Gaussian: squared
    Euclidean, Laplacian: L1); call with BLAS limited to one thread."""
    cdef Status status
    require(C.shape[0] == D.shape[1], "distance_kernel_matvec_into", "C",
            "of shape (n_train, m)")
    require(out.shape[0] == D.shape[0] and out.shape[1] == C.shape[1],
            "distance_kernel_matvec_into", "out", "of shape (n_new, m)")
    with nogil:
        status = distance_kernel_matvec_into(&D[0, 0], D.shape[0], D.shape[1], &C[0, 0],
                                             C.shape[1], gamma, &out[0, 0], threads)
    check_status(status, "distance_kernel_matvec_into")
