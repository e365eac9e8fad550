# cython: language_level=3
"""Prediction kernel: K(X_new, X_train) @ C streamed over blocks of new points.

Memory beyond the inputs and the output: threads × PREDICT_ROWS × n_train doubles
(10 MB for two threads at n_train = 10⁴).
"""

from cython.parallel cimport prange
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from scipy.linalg.cython_blas cimport dgemm

from kernelselect._kernels cimport ks_kernel_block

cdef extern from "_openmp_helpers.h":
    int ks_omp_thread_num() noexcept nogil

cdef extern from "_vecmath.h" nogil:
    void ks_exp_neg_scaled_f64(double *x, Py_ssize_t n, double gamma)

cdef enum:
    PREDICT_ROWS = 64


cdef int ks_cross_kernel_matvec(const double* X_new, Py_ssize_t n_new,
                                const double* X_train, Py_ssize_t n_train,
                                Py_ssize_t d, const double* C, Py_ssize_t m,
                                double gamma, int kernel, double* out,
                                int threads) noexcept nogil:
    cdef Py_ssize_t n_blocks = (n_new + PREDICT_ROWS - 1) // PREDICT_ROWS
    cdef Py_ssize_t blk, i0, bi
    cdef int status = 0
    cdef int im, ib, it
    cdef double one = 1.0, zero = 0.0
    cdef char* no = b"N"
    cdef double* buffers
    cdef double* T
    cdef int* errors
    if n_blocks == 0:
        return 0
    if threads > n_blocks:
        threads = <int>n_blocks
    if threads < 1:
        threads = 1
    buffers = <double*>malloc(<size_t>threads * PREDICT_ROWS * n_train * sizeof(double))
    errors = <int*>malloc(n_blocks * sizeof(int))
    if buffers == NULL or errors == NULL:
        free(buffers)
        free(errors)
        return 1
    im = <int>m
    it = <int>n_train
    for blk in prange(n_blocks, nogil=True, schedule='static', num_threads=threads):
        T = buffers + ks_omp_thread_num() * PREDICT_ROWS * n_train
        i0 = blk * PREDICT_ROWS
        bi = min(PREDICT_ROWS, n_new - i0)
        errors[blk] = ks_kernel_block(X_new + i0 * d, bi, X_train, n_train, d, gamma,
                                      kernel, T, 1)
        if errors[blk] == 0:
            ib = <int>bi
            # row-major out[i0:i0+bi] = T (bi × n_train) @ C (n_train × m), i.e.
            # column-major outᵀ (m × bi) = Cᵀ (m × n_train) · Tᵀ (n_train × bi)
            dgemm(no, no, &im, &ib, &it, &one, <double*>C, &im, T, &it, &zero,
                  out + i0 * m, &im)
    for blk in range(n_blocks):
        if errors[blk] != 0:
            status = errors[blk]
            break
    free(buffers)
    free(errors)
    return status


def cross_kernel_matvec_into(const double[:, ::1] X_new, const double[:, ::1] X_train,
                             const double[:, ::1] C, double gamma, int kernel,
                             double[:, ::1] out, int threads):
    """out (n_new, m) = K(X_new, X_train) @ C; call with BLAS limited to one thread."""
    cdef int status
    with nogil:
        status = ks_cross_kernel_matvec(&X_new[0, 0], X_new.shape[0], &X_train[0, 0],
                                        X_train.shape[0], X_new.shape[1], &C[0, 0],
                                        C.shape[1], gamma, kernel, &out[0, 0], threads)
    if status == 1:
        raise MemoryError("could not allocate the prediction work buffers")
    if status != 0:
        raise RuntimeError(f"kernel block failed with status {status}")


cdef int ks_distance_kernel_matvec(const double* D, Py_ssize_t n_new, Py_ssize_t n_train,
                                   double gamma, const double* C, Py_ssize_t m,
                                   double* out, int threads) noexcept nogil:
    """out = exp(−γ D) @ C for precomputed distances D (n_new, n_train), by row blocks."""
    cdef Py_ssize_t n_blocks = (n_new + PREDICT_ROWS - 1) // PREDICT_ROWS
    cdef Py_ssize_t blk, i0, bi
    cdef int im, ib, it
    cdef double one = 1.0, zero = 0.0
    cdef char* no = b"N"
    cdef double* buffers
    cdef double* T
    if n_blocks == 0:
        return 0
    if threads > n_blocks:
        threads = <int>n_blocks
    if threads < 1:
        threads = 1
    buffers = <double*>malloc(<size_t>threads * PREDICT_ROWS * n_train * sizeof(double))
    if buffers == NULL:
        return 1
    im = <int>m
    it = <int>n_train
    for blk in prange(n_blocks, nogil=True, schedule='static', num_threads=threads):
        T = buffers + ks_omp_thread_num() * PREDICT_ROWS * n_train
        i0 = blk * PREDICT_ROWS
        bi = min(PREDICT_ROWS, n_new - i0)
        memcpy(T, D + i0 * n_train, bi * n_train * sizeof(double))
        ks_exp_neg_scaled_f64(T, bi * n_train, gamma)
        ib = <int>bi
        dgemm(no, no, &im, &ib, &it, &one, <double*>C, &im, T, &it, &zero,
              out + i0 * m, &im)
    free(buffers)
    return 0


def distance_kernel_matvec_into(const double[:, ::1] D, double gamma,
                                const double[:, ::1] C, double[:, ::1] out, int threads):
    """out (n_new, m) = exp(−γ D) @ C for distances D (n_new, n_train) (Gaussian: squared
    Euclidean, Laplacian: L1); call with BLAS limited to one thread."""
    cdef int status
    with nogil:
        status = ks_distance_kernel_matvec(&D[0, 0], D.shape[0], D.shape[1], gamma,
                                           &C[0, 0], C.shape[1], &out[0, 0], threads)
    if status != 0:
        raise MemoryError("could not allocate the prediction work buffers")
