# cython: language_level=3
"""Kernel matrices, kernel-matrix products and kernel-matrix sums.

Gaussian entries come from the expansion ||x - z||^2 = ||x||^2 + ||z||^2 - 2 x.z, the
dot products by BLAS (scipy.linalg.cython_blas), then one pass that clamps at 0,
scales by -gamma and exponentiates. Laplacian entries sum |x_k - z_k| directly.

The streaming kernels (ks_kernel_matvec, ks_kernel_sums) never hold K: the rows of
K(X, X) are cut into blocks of ROW_BLOCK rows, processed in an OpenMP loop with a
static schedule, and each row block walks the columns in tiles of COL_BLOCK columns
held in a per-thread buffer. Every output row belongs to exactly one row block and
is accumulated tile by tile in column order, so results do not depend on the
number of threads.
"""

from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport exp, expf, fabs, fabsf, INFINITY
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dgemm, sgemm

cdef extern from *:
    """
    #include <stdlib.h>
    #ifdef _OPENMP
    #include <omp.h>
    static int ks_kernels_thread_num(void) { return omp_get_thread_num(); }
    #else
    static int ks_kernels_thread_num(void) { return 0; }
    #endif
    /* 64-byte aligned buffer; size rounded up as aligned_alloc requires. */
    static void *ks_kernels_aligned_alloc(size_t size) {
        size_t rounded = (size + 63) & ~((size_t)63);
        if (rounded == 0) rounded = 64;
        return aligned_alloc(64, rounded);
    }
    """
    int ks_kernels_thread_num() noexcept nogil
    void *ks_kernels_aligned_alloc(size_t size) noexcept nogil

# Rows per block (unit of parallel work and of determinism) and columns per tile.
cdef enum:
    ROW_BLOCK = 128
    COL_BLOCK = 512

ROW_BLOCK_SIZE = ROW_BLOCK
COL_BLOCK_SIZE = COL_BLOCK


# ---------------------------------------------------------------------------
# small building blocks
# ---------------------------------------------------------------------------

cdef inline void _gemm_nt(const floating* A, Py_ssize_t na,
                          const floating* B, Py_ssize_t nb, Py_ssize_t d,
                          floating alpha, floating* C, Py_ssize_t ldc) noexcept nogil:
    """C[i, j] = alpha * A[i] . B[j] (row-major A (na, d), B (nb, d), C (na, ldc))."""
    # Row-major C is column-major C^T = B A^T: op(B-as-stored) = T, op(A-as-stored) = N.
    cdef char transa = b'T'
    cdef char transb = b'N'
    cdef int m = <int>nb
    cdef int n = <int>na
    cdef int k = <int>d
    cdef int lda = <int>d
    cdef int ldb = <int>d
    cdef int ldc_ = <int>ldc
    cdef floating beta = 0
    if floating is double:
        dgemm(&transa, &transb, &m, &n, &k, &alpha, <double*>B, &lda,
              <double*>A, &ldb, &beta, C, &ldc_)
    else:
        sgemm(&transa, &transb, &m, &n, &k, &alpha, <float*>B, &lda,
              <float*>A, &ldb, &beta, C, &ldc_)


cdef inline void _gemm_acc(const floating* T, Py_ssize_t bi, Py_ssize_t bj,
                           const floating* V, Py_ssize_t m,
                           floating* Y) noexcept nogil:
    """Y (bi, m) += T (bi, bj) @ V (bj, m), all row-major and contiguous."""
    # Column-major view: Y^T (m, bi) += V^T (m, bj) T^T (bj, bi).
    cdef char trans = b'N'
    cdef int mm = <int>m
    cdef int nn = <int>bi
    cdef int kk = <int>bj
    cdef int ldv = <int>m
    cdef int ldt = <int>bj
    cdef floating one = 1
    if floating is double:
        dgemm(&trans, &trans, &mm, &nn, &kk, &one, <double*>V, &ldv,
              <double*>T, &ldt, &one, Y, &ldv)
    else:
        sgemm(&trans, &trans, &mm, &nn, &kk, &one, <float*>V, &ldv,
              <float*>T, &ldt, &one, Y, &ldv)


cdef inline void _exp_inplace(floating* a, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t i
    if floating is double:
        for i in range(size):
            a[i] = exp(a[i])
    else:
        for i in range(size):
            a[i] = expf(a[i])


cdef inline floating _neg_gamma(double gamma, const floating* like) noexcept nogil:
    """-gamma in the working precision, kept finite so that -gamma * 0 is 0."""
    if floating is float:
        if gamma > 3.4028234663852886e38:
            return <float>-3.4028234663852886e38
    return <floating>(-gamma)


cdef void _sq_norms(const floating* X, Py_ssize_t n, Py_ssize_t d,
                    floating* out) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef floating s
    for i in range(n):
        s = 0
        for k in range(d):
            s = s + X[i * d + k] * X[i * d + k]
        out[i] = s


cdef void _tile(const floating* X, const floating* sq, Py_ssize_t d,
                Py_ssize_t i0, Py_ssize_t bi, Py_ssize_t j0, Py_ssize_t bj,
                floating neg_gamma, int kernel, floating* T) noexcept nogil:
    """T (bi, bj), contiguous = K(X[i0:i0+bi], X[j0:j0+bj]); exact 1 on K's diagonal."""
    cdef Py_ssize_t ii, jj, k, i
    cdef floating t, sqi
    cdef const floating* xi
    cdef const floating* xj
    cdef floating* row
    if kernel == 0:
        _gemm_nt(X + i0 * d, bi, X + j0 * d, bj, d, <floating>-2, T, bj)
        for ii in range(bi):
            row = T + ii * bj
            sqi = sq[i0 + ii]
            for jj in range(bj):
                t = row[jj] + sqi + sq[j0 + jj]
                if t < 0:
                    t = 0
                row[jj] = neg_gamma * t
    else:
        for ii in range(bi):
            row = T + ii * bj
            xi = X + (i0 + ii) * d
            for jj in range(bj):
                xj = X + (j0 + jj) * d
                t = 0
                for k in range(d):
                    if floating is double:
                        t = t + fabs(xi[k] - xj[k])
                    else:
                        t = t + fabsf(xi[k] - xj[k])
                row[jj] = neg_gamma * t
    # The diagonal of K(X, X) is kappa(0) = 1; the expansion above may miss it by
    # rounding, so pin the argument to exactly 0 where the tile meets the diagonal.
    for ii in range(bi):
        i = i0 + ii
        if j0 <= i < j0 + bj:
            T[ii * bj + (i - j0)] = 0
    _exp_inplace(T, bi * bj)


# ---------------------------------------------------------------------------
# public nogil kernels (declared in _kernels.pxd)
# ---------------------------------------------------------------------------

cdef int ks_kernel_block(const floating* X, Py_ssize_t nx,
                         const floating* Z, Py_ssize_t nz, Py_ssize_t d,
                         double gamma, int kernel, floating* K,
                         int threads) noexcept nogil:
    cdef Py_ssize_t i, j, k
    cdef floating t, sqi
    cdef floating neg_gamma = _neg_gamma(gamma, X)
    cdef floating* sq
    cdef floating* row
    cdef const floating* xi
    cdef const floating* zj
    if kernel != 0 and kernel != 1:
        return KS_ERR_KERNEL
    if kernel == 0:
        sq = <floating*>malloc((nx + nz) * sizeof(floating))
        if sq == NULL:
            return KS_ERR_NOMEM
        _sq_norms(X, nx, d, sq)
        _sq_norms(Z, nz, d, sq + nx)
        # One BLAS call for all dot products (BLAS threads are the caller's choice).
        _gemm_nt(X, nx, Z, nz, d, <floating>-2, K, nz)
        for i in prange(nx, nogil=True, schedule='static', num_threads=threads):
            row = K + i * nz
            sqi = sq[i]
            for j in range(nz):
                t = row[j] + sqi + sq[nx + j]
                if t < 0:
                    t = 0
                row[j] = neg_gamma * t
            _exp_inplace(row, nz)
        free(sq)
    else:
        for i in prange(nx, nogil=True, schedule='static', num_threads=threads):
            row = K + i * nz
            xi = X + i * d
            for j in range(nz):
                zj = Z + j * d
                t = 0
                for k in range(d):
                    if floating is double:
                        t = t + fabs(xi[k] - zj[k])
                    else:
                        t = t + fabsf(xi[k] - zj[k])
                row[j] = neg_gamma * t
            _exp_inplace(row, nz)
    return KS_OK


cdef int ks_kernel_matvec(const floating* X, Py_ssize_t n, Py_ssize_t d,
                          const floating* V, Py_ssize_t m,
                          double gamma, int kernel, floating* Y,
                          int threads) noexcept nogil:
    cdef Py_ssize_t n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, i0, bi, j0, bj, ii, jj
    cdef floating neg_gamma = _neg_gamma(gamma, X)
    cdef floating s
    cdef floating* sq
    cdef floating* buffers
    cdef floating* T
    cdef floating* y
    cdef const floating* row
    if kernel != 0 and kernel != 1:
        return KS_ERR_KERNEL
    if threads > n_blocks:
        threads = <int>n_blocks
    if threads < 1:
        threads = 1
    sq = <floating*>malloc(n * sizeof(floating))
    buffers = <floating*>ks_kernels_aligned_alloc(
        <size_t>threads * ROW_BLOCK * COL_BLOCK * sizeof(floating))
    if sq == NULL or buffers == NULL:
        free(sq)
        free(buffers)
        return KS_ERR_NOMEM
    _sq_norms(X, n, d, sq)
    memset(Y, 0, n * m * sizeof(floating))
    for blk in prange(n_blocks, nogil=True, schedule='static', num_threads=threads):
        T = buffers + ks_kernels_thread_num() * ROW_BLOCK * COL_BLOCK
        i0 = blk * ROW_BLOCK
        bi = min(ROW_BLOCK, n - i0)
        j0 = 0
        while j0 < n:
            bj = min(COL_BLOCK, n - j0)
            _tile(X, sq, d, i0, bi, j0, bj, neg_gamma, kernel, T)
            if m == 1:
                for ii in range(bi):
                    row = T + ii * bj
                    s = 0
                    for jj in range(bj):
                        s = s + row[jj] * V[j0 + jj]
                    Y[i0 + ii] = Y[i0 + ii] + s
            else:
                _gemm_acc(T, bi, bj, V + j0 * m, m, Y + i0 * m)
            j0 = j0 + bj
    free(sq)
    free(buffers)
    return KS_OK


cdef int ks_kernel_sums(const floating* X, Py_ssize_t n, Py_ssize_t d,
                        const Py_ssize_t* codes, Py_ssize_t n_classes,
                        double gamma, int kernel,
                        double* class_row_sums, double* row_sq_sums,
                        int threads) noexcept nogil:
    cdef Py_ssize_t n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, i0, bi, j0, bj, ii, jj
    cdef floating neg_gamma = _neg_gamma(gamma, X)
    cdef double s, s2, t
    cdef floating* sq
    cdef floating* buffers
    cdef floating* T
    cdef double* acc
    cdef const floating* row
    if kernel != 0 and kernel != 1:
        return KS_ERR_KERNEL
    if threads > n_blocks:
        threads = <int>n_blocks
    if threads < 1:
        threads = 1
    sq = <floating*>malloc(n * sizeof(floating))
    buffers = <floating*>ks_kernels_aligned_alloc(
        <size_t>threads * ROW_BLOCK * COL_BLOCK * sizeof(floating))
    if sq == NULL or buffers == NULL:
        free(sq)
        free(buffers)
        return KS_ERR_NOMEM
    _sq_norms(X, n, d, sq)
    memset(class_row_sums, 0, n * n_classes * sizeof(double))
    memset(row_sq_sums, 0, n * sizeof(double))
    for blk in prange(n_blocks, nogil=True, schedule='static', num_threads=threads):
        T = buffers + ks_kernels_thread_num() * ROW_BLOCK * COL_BLOCK
        i0 = blk * ROW_BLOCK
        bi = min(ROW_BLOCK, n - i0)
        j0 = 0
        while j0 < n:
            bj = min(COL_BLOCK, n - j0)
            _tile(X, sq, d, i0, bi, j0, bj, neg_gamma, kernel, T)
            for ii in range(bi):
                row = T + ii * bj
                acc = class_row_sums + (i0 + ii) * n_classes
                s2 = 0
                if n_classes == 1:
                    s = 0
                    for jj in range(bj):
                        t = row[jj]
                        s = s + t
                        s2 = s2 + t * t
                    acc[0] = acc[0] + s
                else:
                    for jj in range(bj):
                        t = row[jj]
                        acc[codes[j0 + jj]] += t
                        s2 = s2 + t * t
                row_sq_sums[i0 + ii] = row_sq_sums[i0 + ii] + s2
            j0 = j0 + bj
    free(sq)
    free(buffers)
    return KS_OK


# ---------------------------------------------------------------------------
# Python entry points (inputs validated and converted by kernelselect._kernel_ops)
# ---------------------------------------------------------------------------

cdef _raise(int status):
    if status == KS_ERR_NOMEM:
        raise MemoryError("could not allocate the kernel work buffers")
    if status == KS_ERR_KERNEL:
        raise ValueError("unknown kernel code")


def kernel_block_into(const floating[:, ::1] X, const floating[:, ::1] Z,
                      double gamma, int kernel, floating[:, ::1] K, int threads):
    """K (nx, nz) = kappa(X, Z); X (nx, d), Z (nz, d) C-contiguous, same dtype."""
    cdef int status
    with nogil:
        status = ks_kernel_block(&X[0, 0], X.shape[0], &Z[0, 0], Z.shape[0],
                                 X.shape[1], gamma, kernel, &K[0, 0], threads)
    _raise(status)


def kernel_matvec_into(const floating[:, ::1] X, const floating[:, ::1] V,
                       double gamma, int kernel, floating[:, ::1] Y, int threads):
    """Y (n, m) = K(X, X) @ V (n, m), streaming; call with BLAS limited to 1 thread."""
    cdef int status
    with nogil:
        status = ks_kernel_matvec(&X[0, 0], X.shape[0], X.shape[1], &V[0, 0],
                                  V.shape[1], gamma, kernel, &Y[0, 0], threads)
    _raise(status)


def kernel_sums_into(const floating[:, ::1] X, const Py_ssize_t[::1] codes,
                     double gamma, int kernel, double[:, ::1] class_row_sums,
                     double[::1] row_sq_sums, int threads):
    """One streaming pass: class_row_sums (n, C) and row_sq_sums (n,)."""
    cdef int status
    with nogil:
        status = ks_kernel_sums(&X[0, 0], X.shape[0], X.shape[1], &codes[0],
                                class_row_sums.shape[1], gamma, kernel,
                                &class_row_sums[0, 0], &row_sq_sums[0], threads)
    _raise(status)
