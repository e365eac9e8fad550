# cython: language_level=3
"""Kernel matrices, kernel-matrix products and kernel-matrix sums.

Gaussian entries come from the expansion ||x - z||^2 = ||x||^2 + ||z||^2 - 2 x.z, the
dot products by BLAS (scipy.linalg.cython_blas), then one pass that clamps at 0
(recomputing near-duplicate pairs directly), and the vectorised exp(-gamma * .)
loop of _vecmath.h. Laplacian entries sum |x_k - z_k| directly.

The streaming kernels (ks_kernel_matvec, ks_kernel_sums) never hold K: the rows of
K(X, X) are cut into blocks of ROW_BLOCK rows, handed out to the OpenMP threads,
and each row block walks the columns in tiles of COL_BLOCK columns held in a
per-thread buffer. Every output row belongs to exactly one row block and is
accumulated tile by tile in column order, so results do not depend on the number
of threads nor on which thread took which block. That freedom is why the row
blocks are scheduled dynamically: on a shared machine a thread that loses its
core does not leave the others waiting at the end.
"""

from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport fabs, fabsf, INFINITY
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dgemm, sgemm

cdef extern from *:
    """
    #include <stdlib.h>
    /* 64-byte aligned buffer; size rounded up as aligned_alloc requires. */
    static void *ks_kernels_aligned_alloc(size_t size) {
        size_t rounded = (size + 63) & ~((size_t)63);
        if (rounded == 0) rounded = 64;
        return aligned_alloc(64, rounded);
    }
    """
    void *ks_kernels_aligned_alloc(size_t size) noexcept nogil

cdef extern from "_openmp_helpers.h":
    int ks_omp_thread_num() noexcept nogil

cdef extern from "_vecmath.h" nogil:
    void ks_exp_neg_scaled_f64(double *x, Py_ssize_t n, double gamma)
    void ks_exp_neg_scaled_f32(float *x, Py_ssize_t n, float gamma)


# Rows per block (unit of parallel work and of determinism) and columns per tile.
cdef enum:
    ROW_BLOCK = 128
    COL_BLOCK = 512
    BLOCK_ENTRIES = 16384     # entries of K per chunk of kernel_block (128 KiB in float64)


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


cdef inline void _exp_neg_scaled(floating* a, Py_ssize_t size,
                                 floating gamma) noexcept nogil:
    """a[k] <- exp(-gamma * a[k]) for the distances a; exp(-gamma * 0) is exactly 1."""
    if floating is double:
        ks_exp_neg_scaled_f64(a, size, gamma)
    else:
        ks_exp_neg_scaled_f32(a, size, gamma)


cdef inline floating _gamma(double gamma, const floating* like) noexcept nogil:
    """gamma in the working precision, kept finite so that gamma * 0 is 0."""
    if floating is float:
        if gamma > 3.4028234663852886e38:
            return <float>3.4028234663852886e38
    return <floating>gamma


cdef void _sq_norms(const floating* X, Py_ssize_t n, Py_ssize_t d,
                    floating* out) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef floating s
    for i in range(n):
        s = 0
        for k in range(d):
            s = s + X[i * d + k] * X[i * d + k]
        out[i] = s


cdef inline floating _direct_sq(const floating* x, const floating* z,
                                Py_ssize_t d) noexcept nogil:
    cdef Py_ssize_t k
    cdef floating s = 0, u
    for k in range(d):
        u = x[k] - z[k]
        s = s + u * u
    return s


cdef inline void _finish_sq_row(floating* row, const floating* x, floating sqx,
                                const floating* Z, const floating* sqz,
                                Py_ssize_t nz, Py_ssize_t d) noexcept nogil:
    """row[j] holds -2 x.z_j; make it ||x - z_j||^2 (>= 0).

    Where the expansion sits inside its own rounding error (near-duplicate points,
    dist^2 below ~2^-20 (float32: 2^-10) of ||x||^2 + ||z||^2) the distance is
    recomputed directly, so identical points give exactly 0.
    """
    cdef Py_ssize_t j
    cdef floating t, tol
    if floating is double:
        tol = 9.5367431640625e-07
    else:
        tol = <float>9.765625e-04
    for j in range(nz):
        t = row[j] + sqx + sqz[j]
        if t < tol * (sqx + sqz[j]):
            t = _direct_sq(x, Z + j * d, d)
        row[j] = t


cdef inline void _l1_row(floating* row, const floating* x, const floating* ZT,
                         Py_ssize_t ldzt, Py_ssize_t nz, Py_ssize_t d) noexcept nogil:
    """row[j] = sum_k |x_k - z_jk| with Z given transposed (ZT[k, j], leading dim ldzt).

    Summed over k in increasing order, as a direct loop would; the inner loop runs
    over j so that it vectorises.
    """
    cdef Py_ssize_t j, k
    cdef floating xk
    cdef const floating* zk
    for j in range(nz):
        row[j] = 0
    for k in range(d):
        xk = x[k]
        zk = ZT + k * ldzt
        if floating is double:
            for j in range(nz):
                row[j] = row[j] + fabs(xk - zk[j])
        else:
            for j in range(nz):
                row[j] = row[j] + fabsf(xk - zk[j])


cdef floating* _transpose(const floating* X, Py_ssize_t n, Py_ssize_t d) noexcept nogil:
    """A malloc'd (d, n) copy of the (n, d) array X, or NULL."""
    cdef floating* XT = <floating*>malloc(n * d * sizeof(floating) + 1)
    cdef Py_ssize_t i, k
    if XT != NULL:
        for i in range(n):
            for k in range(d):
                XT[k * n + i] = X[i * d + k]
    return XT


cdef void _tile(const floating* X, const floating* XT, const floating* sq,
                Py_ssize_t n, Py_ssize_t d,
                Py_ssize_t i0, Py_ssize_t bi, Py_ssize_t j0, Py_ssize_t bj,
                floating gamma, int kernel, floating* T) noexcept nogil:
    """T (bi, bj), contiguous = K(X[i0:i0+bi], X[j0:j0+bj]); exact 1 on K's diagonal.

    XT is X transposed (d, n), used by the Laplacian kernel.
    """
    cdef Py_ssize_t ii, i
    if kernel == 0:
        _gemm_nt(X + i0 * d, bi, X + j0 * d, bj, d, <floating>-2, T, bj)
        for ii in range(bi):
            _finish_sq_row(T + ii * bj, X + (i0 + ii) * d, sq[i0 + ii],
                           X + j0 * d, sq + j0, bj, d)
    else:
        for ii in range(bi):
            _l1_row(T + ii * bj, X + (i0 + ii) * d, XT + j0, n, bj, d)
    # The diagonal of K(X, X) is kappa(0) = 1: pin the distance to exactly 0.
    for ii in range(bi):
        i = i0 + ii
        if j0 <= i < j0 + bj:
            T[ii * bj + (i - j0)] = 0
    _exp_neg_scaled(T, bi * bj, gamma)


cdef inline void _sum_and_sq(const floating* row, Py_ssize_t size,
                             double* total, double* total_sq) noexcept nogil:
    """Sum and sum of squares of row, in four interleaved partial sums (added in a
    fixed order) so that the additions do not wait on each other."""
    cdef double s0 = 0, s1 = 0, s2 = 0, s3 = 0
    cdef double q0 = 0, q1 = 0, q2 = 0, q3 = 0
    cdef double t0, t1, t2, t3
    cdef Py_ssize_t j = 0
    while j + 4 <= size:
        t0 = row[j]
        t1 = row[j + 1]
        t2 = row[j + 2]
        t3 = row[j + 3]
        s0 += t0
        s1 += t1
        s2 += t2
        s3 += t3
        q0 += t0 * t0
        q1 += t1 * t1
        q2 += t2 * t2
        q3 += t3 * t3
        j += 4
    while j < size:
        t0 = row[j]
        s0 += t0
        q0 += t0 * t0
        j += 1
    total[0] = (s0 + s1) + (s2 + s3)
    total_sq[0] = (q0 + q1) + (q2 + q3)


cdef inline floating _dot(const floating* a, const floating* b,
                          Py_ssize_t size) noexcept nogil:
    """a . b in four interleaved partial sums added in a fixed order."""
    cdef floating s0 = 0, s1 = 0, s2 = 0, s3 = 0
    cdef Py_ssize_t j = 0
    while j + 4 <= size:
        s0 += a[j] * b[j]
        s1 += a[j + 1] * b[j + 1]
        s2 += a[j + 2] * b[j + 2]
        s3 += a[j + 3] * b[j + 3]
        j += 4
    while j < size:
        s0 += a[j] * b[j]
        j += 1
    return (s0 + s1) + (s2 + s3)


cdef inline void _class_sums_and_sq(const floating* row, Py_ssize_t size,
                                    const Py_ssize_t* codes, Py_ssize_t n_classes,
                                    double* lanes, double* acc,
                                    double* total_sq) noexcept nogil:
    """acc[c] += sum of row[j] over codes[j] == c; total_sq = sum of row[j]^2.

    Four interleaved lanes of per-class partial sums (lanes holds 4 * n_classes
    doubles), combined in a fixed order, so that consecutive equal labels do not
    chain their additions through one memory cell.
    """
    cdef double q0 = 0, q1 = 0, q2 = 0, q3 = 0
    cdef double t0, t1, t2, t3
    cdef double* l1 = lanes + n_classes
    cdef double* l2 = lanes + 2 * n_classes
    cdef double* l3 = lanes + 3 * n_classes
    cdef Py_ssize_t j = 0, c
    for c in range(4 * n_classes):
        lanes[c] = 0
    while j + 4 <= size:
        t0 = row[j]
        t1 = row[j + 1]
        t2 = row[j + 2]
        t3 = row[j + 3]
        lanes[codes[j]] += t0
        l1[codes[j + 1]] += t1
        l2[codes[j + 2]] += t2
        l3[codes[j + 3]] += t3
        q0 += t0 * t0
        q1 += t1 * t1
        q2 += t2 * t2
        q3 += t3 * t3
        j += 4
    while j < size:
        t0 = row[j]
        lanes[codes[j]] += t0
        q0 += t0 * t0
        j += 1
    for c in range(n_classes):
        acc[c] += (lanes[c] + l1[c]) + (l2[c] + l3[c])
    total_sq[0] = (q0 + q1) + (q2 + q3)


# ---------------------------------------------------------------------------
# public nogil kernels (declared in _kernels.pxd)
# ---------------------------------------------------------------------------

cdef int ks_kernel_block(const floating* X, Py_ssize_t nx,
                         const floating* Z, Py_ssize_t nz, Py_ssize_t d,
                         double gamma, int kernel, floating* K,
                         int threads) noexcept nogil:
    cdef Py_ssize_t i, c, i0, bi
    cdef Py_ssize_t rows = BLOCK_ENTRIES // nz if nz < BLOCK_ENTRIES else 1
    cdef Py_ssize_t n_chunks = (nx + rows - 1) // rows
    cdef floating g = _gamma(gamma, X)
    cdef floating* sq
    cdef floating* ZT
    if kernel != 0 and kernel != 1:
        return KS_ERR_KERNEL
    # never more threads than units of work (each thread costs the runtime a stack)
    if kernel == 1:
        n_chunks = nx
    if threads > n_chunks:
        threads = <int>n_chunks
    if threads < 1:
        threads = 1
    if kernel == 0:
        sq = <floating*>malloc((nx + nz) * sizeof(floating))
        if sq == NULL:
            return KS_ERR_NOMEM
        _sq_norms(X, nx, d, sq)
        _sq_norms(Z, nz, d, sq + nx)
        # Fixed chunks of rows: the chunk's dot products by a single-threaded BLAS call
        # straight into its rows of K, then the distances and exp while they are still
        # in cache (one pass over K instead of three; the call scales with threads).
        for c in prange(n_chunks, nogil=True, schedule='static', num_threads=threads):
            i0 = c * rows
            bi = min(rows, nx - i0)
            _gemm_nt(X + i0 * d, bi, Z, nz, d, <floating>-2, K + i0 * nz, nz)
            for i in range(i0, i0 + bi):
                _finish_sq_row(K + i * nz, X + i * d, sq[i], Z, sq + nx, nz, d)
                _exp_neg_scaled(K + i * nz, nz, g)
        free(sq)
    else:
        ZT = _transpose(Z, nz, d)
        if ZT == NULL:
            return KS_ERR_NOMEM
        for i in prange(nx, nogil=True, schedule='static', num_threads=threads):
            _l1_row(K + i * nz, X + i * d, ZT, nz, nz, d)
            _exp_neg_scaled(K + i * nz, nz, g)
        free(ZT)
    return KS_OK


cdef int ks_kernel_matvec(const floating* X, Py_ssize_t n, Py_ssize_t d,
                          const floating* V, Py_ssize_t m,
                          double gamma, int kernel, floating* Y,
                          int threads) noexcept nogil:
    cdef Py_ssize_t n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, i0, bi, j0, bj, ii
    cdef floating g = _gamma(gamma, X)
    cdef floating* sq
    cdef floating* XT
    cdef floating* buffers
    cdef floating* T
    if kernel != 0 and kernel != 1:
        return KS_ERR_KERNEL
    if threads > n_blocks:
        threads = <int>n_blocks
    if threads < 1:
        threads = 1
    sq = <floating*>malloc(n * sizeof(floating))
    XT = _transpose(X, n, d) if kernel == 1 else NULL
    buffers = <floating*>ks_kernels_aligned_alloc(
        <size_t>threads * ROW_BLOCK * COL_BLOCK * sizeof(floating))
    if sq == NULL or buffers == NULL or (kernel == 1 and XT == NULL):
        free(sq)
        free(XT)
        free(buffers)
        return KS_ERR_NOMEM
    _sq_norms(X, n, d, sq)
    memset(Y, 0, n * m * sizeof(floating))
    for blk in prange(n_blocks, nogil=True, schedule='dynamic', num_threads=threads):
        T = buffers + ks_omp_thread_num() * ROW_BLOCK * COL_BLOCK
        i0 = blk * ROW_BLOCK
        bi = min(ROW_BLOCK, n - i0)
        j0 = 0
        while j0 < n:
            bj = min(COL_BLOCK, n - j0)
            _tile(X, XT, sq, n, d, i0, bi, j0, bj, g, kernel, T)
            if m == 1:
                for ii in range(bi):
                    Y[i0 + ii] = Y[i0 + ii] + _dot(T + ii * bj, V + j0, bj)
            else:
                _gemm_acc(T, bi, bj, V + j0 * m, m, Y + i0 * m)
            j0 = j0 + bj
    free(sq)
    free(XT)
    free(buffers)
    return KS_OK


cdef int ks_kernel_sums(const floating* X, Py_ssize_t n, Py_ssize_t d,
                        const Py_ssize_t* codes, Py_ssize_t n_classes,
                        double gamma, int kernel,
                        double* class_row_sums, double* row_sq_sums,
                        int threads) noexcept nogil:
    cdef Py_ssize_t n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, i0, bi, j0, bj, ii, jj
    cdef floating g = _gamma(gamma, X)
    cdef double s, s2, t
    cdef floating* sq
    cdef floating* XT
    cdef floating* buffers
    cdef floating* T
    cdef double* acc
    cdef double* lanes
    cdef double* all_lanes
    cdef const floating* row
    # Per-class lanes pay off while zeroing them is cheap next to a tile row.
    cdef bint use_lanes = n_classes > 1 and n_classes <= COL_BLOCK // 16
    if kernel != 0 and kernel != 1:
        return KS_ERR_KERNEL
    if threads > n_blocks:
        threads = <int>n_blocks
    if threads < 1:
        threads = 1
    sq = <floating*>malloc(n * sizeof(floating))
    XT = _transpose(X, n, d) if kernel == 1 else NULL
    buffers = <floating*>ks_kernels_aligned_alloc(
        <size_t>threads * ROW_BLOCK * COL_BLOCK * sizeof(floating))
    all_lanes = <double*>malloc(<size_t>threads * 4 * n_classes * sizeof(double))
    if (sq == NULL or buffers == NULL or all_lanes == NULL
            or (kernel == 1 and XT == NULL)):
        free(sq)
        free(XT)
        free(buffers)
        free(all_lanes)
        return KS_ERR_NOMEM
    _sq_norms(X, n, d, sq)
    memset(class_row_sums, 0, n * n_classes * sizeof(double))
    memset(row_sq_sums, 0, n * sizeof(double))
    for blk in prange(n_blocks, nogil=True, schedule='dynamic', num_threads=threads):
        T = buffers + ks_omp_thread_num() * ROW_BLOCK * COL_BLOCK
        lanes = all_lanes + ks_omp_thread_num() * 4 * n_classes
        i0 = blk * ROW_BLOCK
        bi = min(ROW_BLOCK, n - i0)
        j0 = 0
        while j0 < n:
            bj = min(COL_BLOCK, n - j0)
            _tile(X, XT, sq, n, d, i0, bi, j0, bj, g, kernel, T)
            for ii in range(bi):
                row = T + ii * bj
                acc = class_row_sums + (i0 + ii) * n_classes
                s = 0
                s2 = 0
                if n_classes == 1:
                    _sum_and_sq(row, bj, &s, &s2)
                    acc[0] = acc[0] + s
                elif use_lanes:
                    _class_sums_and_sq(row, bj, codes + j0, n_classes, lanes, acc, &s2)
                else:
                    for jj in range(bj):
                        t = row[jj]
                        acc[codes[j0 + jj]] += t
                        s2 = s2 + t * t
                row_sq_sums[i0 + ii] = row_sq_sums[i0 + ii] + s2
            j0 = j0 + bj
    free(sq)
    free(XT)
    free(buffers)
    free(all_lanes)
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
