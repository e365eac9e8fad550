# cython: language_level=3
"""Kernel matrices, kernel-matrix products and kernel-matrix sums.

Gaussian entries come from the expansion ||x - z||^2 = ||x||^2 + ||z||^2 - 2 x.z, the
dot products by BLAS (scipy.linalg.cython_blas), then one pass that clamps at 0
(recomputing near-duplicate pairs directly), and the vectorised exp(-gamma * .)
loop of _vecmath.h; kernel_block_into with at most KS_SQ_DIST_MAX_D features sums
the squared differences directly instead (_sqdist.h: as fast there, and no
cancellation). Laplacian entries sum |x_k - z_k| directly.

The streaming kernels (kernel_matvec_into, kernel_sums_into) never hold K: the rows of
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
from libc.math cimport INFINITY, fabs, fabsf, isfinite, nextafterf
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dsyrk, dtrsm, ssyrk, strsm
from scipy.linalg.cython_lapack cimport dpotrf, dsyevd, dtrtri, spotrf, ssyevd, strtri

from kernelselect._common cimport (BLAS_INT_MAX, KS_SQ_DIST_MAX_D, clamp_threads,
                                   exp_neg_scaled, gemm, ks_omp_thread_num, sq_dist_row,
                                   syrk_upper, transposed_copy)
from kernelselect._status cimport (OK, Status, check_status, require, status_bad_argument,
                                   status_no_memory, status_not_converged, status_ok,
                                   status_overflow)

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


# Rows per block (unit of parallel work and of determinism) and columns per tile.
cdef enum:
    ROW_BLOCK = 128
    COL_BLOCK = 512
    BLOCK_ENTRIES = 16384     # entries of K per chunk of kernel_block_into (128 KiB in float64)
    TRANSPOSE_TILE = 32       # rows and columns of a tile of a transposed copy


# ---------------------------------------------------------------------------
# small building blocks
# ---------------------------------------------------------------------------

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


cdef void _tile(const floating* X, const floating* XT, const floating* sq,
                Py_ssize_t n, Py_ssize_t d,
                Py_ssize_t i0, Py_ssize_t bi, Py_ssize_t j0, Py_ssize_t bj,
                floating gamma, int kernel, floating* T) noexcept nogil:
    """T (bi, bj), contiguous = K(X[i0:i0+bi], X[j0:j0+bj]); exact 1 on K's diagonal.

    XT is X transposed (d, n), used by the Laplacian kernel.
    """
    cdef Py_ssize_t ii, i
    if kernel == 0:
        gemm(False, True, bi, bj, d, -2, X + i0 * d, d, X + j0 * d, d, 0, T, bj)
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
    exp_neg_scaled(T, bi * bj, gamma)


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


cdef Status _check_args(Py_ssize_t rows, Py_ssize_t cols, const char* cols_name,
                        Py_ssize_t d, int kernel) noexcept nogil:
    """The arguments every kernel shares: sizes >= 0, d >= 1 and within BLAS, a known kernel."""
    if rows < 0 or cols < 0:
        return status_bad_argument(b"the number of rows", b">= 0")
    if d < 1:
        return status_bad_argument(b"d", b">= 1")
    if kernel != 0 and kernel != 1:
        return status_bad_argument(b"kernel", b"0 (Gaussian) or 1 (Laplacian)")
    if d > BLAS_INT_MAX:
        return status_overflow(b"d")
    if cols > BLAS_INT_MAX:
        return status_overflow(cols_name)
    return status_ok()


cdef Status _tile_workspace(const floating* X, Py_ssize_t n, Py_ssize_t d, int kernel,
                            int threads, floating** sq, floating** XT,
                            floating** tiles) noexcept nogil:
    """The squared norms of X's rows (filled), X transposed (Laplacian only, filled) and
    one ROW_BLOCK x COL_BLOCK tile per thread; nothing is left allocated on failure."""
    cdef size_t sq_bytes = n * sizeof(floating)
    cdef size_t xt_bytes = n * d * sizeof(floating) if kernel == 1 else 0
    cdef size_t tile_bytes = <size_t>threads * ROW_BLOCK * COL_BLOCK * sizeof(floating)
    sq[0] = <floating*>malloc(sq_bytes)
    XT[0] = transposed_copy(X, n, d) if kernel == 1 else NULL
    tiles[0] = <floating*>ks_kernels_aligned_alloc(tile_bytes)
    if sq[0] == NULL or tiles[0] == NULL or (kernel == 1 and XT[0] == NULL):
        free(sq[0])
        free(XT[0])
        free(tiles[0])
        return status_no_memory(sq_bytes + xt_bytes + tile_bytes)
    _sq_norms(X, n, d, sq[0])
    return status_ok()


# ---------------------------------------------------------------------------
# public nogil kernels (declared in _kernels.pxd)
# ---------------------------------------------------------------------------

cdef Status kernel_block_into(const floating* X, Py_ssize_t nx,
                              const floating* Z, Py_ssize_t nz, Py_ssize_t d,
                              double gamma, int kernel,
                              floating* K,
                              int threads) noexcept nogil:
    cdef Py_ssize_t i, c, i0, bi, rows, n_chunks
    cdef bint direct
    cdef floating g = _gamma(gamma, X)
    cdef floating* sq
    cdef floating* ZT
    cdef Status status = _check_args(nx, nz, b"nz", d, kernel)
    if status.code != OK or nx == 0 or nz == 0:
        return status
    rows = BLOCK_ENTRIES // nz if nz < BLOCK_ENTRIES else 1
    direct = kernel == 1 or d <= KS_SQ_DIST_MAX_D
    n_chunks = nx if direct else (nx + rows - 1) // rows
    threads = clamp_threads(threads, n_chunks)
    if direct:
        # the Laplacian, and the Gaussian with few features (no BLAS call, no
        # cancellation; _sqdist.h): each row's distances summed directly over Z
        # transposed once, then exp while in cache
        ZT = transposed_copy(Z, nz, d)
        if ZT == NULL:
            return status_no_memory(nz * d * sizeof(floating) + 1)
        for i in prange(nx, nogil=True, schedule='static', num_threads=threads):
            if kernel == 0:
                sq_dist_row(K + i * nz, X + i * d, ZT, nz, nz, d)
            else:
                _l1_row(K + i * nz, X + i * d, ZT, nz, nz, d)
            exp_neg_scaled(K + i * nz, nz, g)
        free(ZT)
        return status_ok()
    sq = <floating*>malloc((nx + nz) * sizeof(floating))
    if sq == NULL:
        return status_no_memory((nx + nz) * sizeof(floating))
    _sq_norms(X, nx, d, sq)
    _sq_norms(Z, nz, d, sq + nx)
    # Fixed chunks of rows: the chunk's dot products by a single-threaded BLAS call
    # straight into its rows of K, then the distances and exp while they are still
    # in cache (one pass over K instead of three; the call scales with threads).
    for c in prange(n_chunks, nogil=True, schedule='static', num_threads=threads):
        i0 = c * rows
        bi = min(rows, nx - i0)
        gemm(False, True, bi, nz, d, -2, X + i0 * d, d, Z, d, 0, K + i0 * nz, nz)
        for i in range(i0, i0 + bi):
            _finish_sq_row(K + i * nz, X + i * d, sq[i], Z, sq + nx, nz, d)
            exp_neg_scaled(K + i * nz, nz, g)
    free(sq)
    return status_ok()


cdef Status kernel_matvec_into(const floating* X, Py_ssize_t n, Py_ssize_t d,
                               const floating* V, Py_ssize_t m,
                               double gamma, int kernel,
                               floating* Y,
                               int threads) noexcept nogil:
    cdef Py_ssize_t n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t blk, i0, bi, j0, bj, ii
    cdef floating g = _gamma(gamma, X)
    cdef floating* sq
    cdef floating* XT
    cdef floating* buffers
    cdef floating* T
    cdef Status status = _check_args(n, m, b"m", d, kernel)
    if status.code != OK or n == 0 or m == 0:
        return status
    threads = clamp_threads(threads, n_blocks)
    status = _tile_workspace(X, n, d, kernel, threads, &sq, &XT, &buffers)
    if status.code != OK:
        return status
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
                # Y[i0:i0+bi] += T (bi, bj) @ V[j0:j0+bj] (bj, m)
                gemm(False, False, bi, m, bj, 1, T, bj, V + j0 * m, m, 1, Y + i0 * m, m)
            j0 = j0 + bj
    free(sq)
    free(XT)
    free(buffers)
    return status


cdef Status kernel_sums_into(const floating* X, Py_ssize_t n, Py_ssize_t d,
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
    # Per-class lanes pay off while zeroing them is cheap next to a tile row.
    cdef bint use_lanes = n_classes > 1 and n_classes <= COL_BLOCK // 16
    cdef Status status = _check_args(n, 0, b"", d, kernel)
    if status.code == OK and n_classes < 1:
        status = status_bad_argument(b"n_classes", b">= 1")
    for jj in range(n):
        if status.code == OK and not 0 <= codes[jj] < n_classes:
            status = status_bad_argument(b"codes", b"in [0, n_classes)")
    if status.code != OK or n == 0:
        return status
    threads = clamp_threads(threads, n_blocks)
    status = _tile_workspace(X, n, d, kernel, threads, &sq, &XT, &buffers)
    if status.code != OK:
        return status
    all_lanes = <double*>malloc(<size_t>threads * 4 * n_classes * sizeof(double))
    if all_lanes == NULL:
        free(sq)
        free(XT)
        free(buffers)
        return status_no_memory(<size_t>threads * 4 * n_classes * sizeof(double))
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
    return status


cdef Status gram_upper_into(const floating* P, Py_ssize_t rows, Py_ssize_t cols,
                            floating* G) noexcept nogil:
    if rows < 0 or cols < 0:
        return status_bad_argument(b"the number of rows", b">= 0")
    if rows > BLAS_INT_MAX:
        return status_overflow(b"rows")
    if cols > BLAS_INT_MAX:
        return status_overflow(b"cols")
    if rows == 0 or cols == 0:
        return status_ok()
    cdef char lower = b'L', plain = b'N'
    if cols > BLOCKED_MIN_ORDER:     # G's row-major upper triangle is BLAS's lower one
        _syrk_blocks(lower, plain, <int>cols, <int>rows, <floating>1.0, P, <int>cols, G,
                     <int>cols, BLOCK_ORDER)
    else:
        syrk_upper(<int>cols, <int>rows, <floating>1.0, P, <int>cols, <floating>1.0, G,
                   <int>cols)
    return status_ok()


cdef inline void _syevd(char* jobz, char* uplo, int* n, floating* a, int* lda, floating* w,
                        floating* work, int* lwork, int* iwork, int* liwork,
                        int* info) noexcept nogil:
    if floating is double:
        dsyevd(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info)
    else:
        ssyevd(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info)


cdef Status symmetric_eigh_into(const floating* A, Py_ssize_t n, floating* w,
                                floating* Z) noexcept nogil:
    # LAPACK is column-major: Z, read by columns, starts as a copy of A (Z[j*n + i] =
    # A[i, j]), so the lower triangle ?syevd reads is A's, as scipy's wrapper (which
    # copies A into Fortran order) passes it; the eigenvectors come back in Z's columns,
    # i.e. in the rows of the row-major Z. The workspace is the size LAPACK's query
    # gives, as scipy's eigh asks for it (the blocking of the reduction depends on it).
    cdef char jobz = b'V'
    cdef char uplo = b'L'
    cdef int size, lwork = -1, liwork = -1, info = 0, iwork_size = 0
    cdef floating work_size = 0
    cdef double wanted
    cdef floating* work
    cdef int* iwork
    cdef Py_ssize_t i, j, i0, j0
    if n < 0:
        return status_bad_argument(b"n", b">= 0")
    if n > BLAS_INT_MAX:
        return status_overflow(b"n")
    for i in range(n):
        for j in range(i + 1):
            if not isfinite(A[i * n + j]):
                return status_bad_argument(b"A", b"finite (its lower triangle holds NaN "
                                                 b"or infinity)")
    if n == 0:
        return status_ok()
    i0 = 0
    while i0 < n:                      # the transposed copy in tiles, cache-friendly
        j0 = 0
        while j0 < n:
            for i in range(i0, min(i0 + TRANSPOSE_TILE, n)):
                for j in range(j0, min(j0 + TRANSPOSE_TILE, n)):
                    Z[j * n + i] = A[i * n + j]
            j0 = j0 + TRANSPOSE_TILE
        i0 = i0 + TRANSPOSE_TILE
    size = <int>n
    _syevd(&jobz, &uplo, &size, Z, &size, w, &work_size, &lwork, &iwork_size, &liwork, &info)
    if info != 0:
        return status_bad_argument(b"n", b"a size ?syevd's workspace query accepts")
    if floating is float:      # a large size may be rounded down in single precision
        wanted = <double>nextafterf(work_size, INFINITY)
    else:
        wanted = work_size
    if wanted > BLAS_INT_MAX or iwork_size < 0:
        return status_overflow(b"the ?syevd workspace")
    lwork = max(<int>wanted, 1)
    liwork = max(iwork_size, 1)
    work = <floating*>malloc(<size_t>lwork * sizeof(floating))
    iwork = <int*>malloc(<size_t>liwork * sizeof(int))
    if work == NULL or iwork == NULL:
        free(work)
        free(iwork)
        return status_no_memory(<size_t>lwork * sizeof(floating) + <size_t>liwork * sizeof(int))
    _syevd(&jobz, &uplo, &size, Z, &size, w, work, &lwork, iwork, &liwork, &info)
    free(work)
    free(iwork)
    if info < 0:
        return status_bad_argument(b"an argument of ?syevd", b"valid (LAPACK info < 0)")
    if info > 0:
        return status_not_converged(b"?syevd")
    return status_ok()


cdef inline void _potrf(char* uplo, int* n, floating* a, int* lda, int* info) noexcept nogil:
    if floating is double:
        dpotrf(uplo, n, a, lda, info)
    else:
        spotrf(uplo, n, a, lda, info)


cdef inline void _trtri(char* uplo, char* diag, int* n, floating* a, int* lda,
                        int* info) noexcept nogil:
    if floating is double:
        dtrtri(uplo, diag, n, a, lda, info)
    else:
        strtri(uplo, diag, n, a, lda, info)


cdef Status cholesky_inverse_into(const floating* W, Py_ssize_t n, floating* T,
                                  int* outcome) noexcept nogil:
    # Column-major, LAPACK sees T's row-major upper triangle as its lower one: the copy
    # of W's upper triangle is (W symmetric) the lower triangle scipy's wrapper passes,
    # ?potrf leaves L there and ?trtri L^{-1}, which read by rows is L^{-T}; the other
    # triangle is zeroed, as scipy's clean=1 does.
    cdef char uplo = b'L'
    cdef char diag = b'N'
    cdef int size, info = 0
    cdef Py_ssize_t i, j
    outcome[0] = 0
    if n < 0:
        return status_bad_argument(b"n", b">= 0")
    if n > BLAS_INT_MAX:
        return status_overflow(b"n")
    for i in range(n):
        for j in range(n):
            if j < i:
                T[i * n + j] = 0
            else:
                if not isfinite(W[i * n + j]):
                    return status_bad_argument(b"W", b"finite (its upper triangle holds "
                                                     b"NaN or infinity)")
                T[i * n + j] = W[i * n + j]
    if n == 0:
        return status_ok()
    size = <int>n
    info = _potrf_any(uplo, size, T, size)
    if info < 0:
        return status_bad_argument(b"an argument of ?potrf", b"valid (LAPACK info < 0)")
    if info > 0:
        outcome[0] = 1
        return status_ok()
    _trtri(&uplo, &diag, &size, T, &size, &info)
    if info < 0:
        return status_bad_argument(b"an argument of ?trtri", b"valid (LAPACK info < 0)")
    if info > 0:
        outcome[0] = 2
    return status_ok()


# ---------------------------------------------------------------------------
# Python bindings (memoryviews; inputs validated and converted by
# kernelselect.primitives._kernel_ops, shapes checked here before pointers are taken)
# ---------------------------------------------------------------------------

def _kernel_block_into(const floating[:, ::1] X, const floating[:, ::1] Z,
                       double gamma, int kernel, floating[:, ::1] K, int threads):
    """K (nx, nz) = kappa(X, Z); X (nx, d), Z (nz, d) C-contiguous, same dtype."""
    cdef Status status
    require(Z.shape[1] == X.shape[1], "kernel_block_into", "Z", "of shape (nz, d), X's d")
    require(K.shape[0] == X.shape[0] and K.shape[1] == Z.shape[0], "kernel_block_into", "K",
            "of shape (nx, nz)")
    with nogil:
        status = kernel_block_into(&X[0, 0], X.shape[0], &Z[0, 0], Z.shape[0], X.shape[1],
                                   gamma, kernel, &K[0, 0], threads)
    check_status(status, "kernel_block_into")


def _kernel_matvec_into(const floating[:, ::1] X, const floating[:, ::1] V,
                        double gamma, int kernel, floating[:, ::1] Y, int threads):
    """Y (n, m) = K(X, X) @ V (n, m), streaming; call with BLAS limited to 1 thread."""
    cdef Status status
    require(V.shape[0] == X.shape[0], "kernel_matvec_into", "V", "of shape (n, m), X's n")
    require(Y.shape[0] == V.shape[0] and Y.shape[1] == V.shape[1], "kernel_matvec_into", "Y",
            "of V's shape (n, m)")
    with nogil:
        status = kernel_matvec_into(&X[0, 0], X.shape[0], X.shape[1], &V[0, 0], V.shape[1],
                                    gamma, kernel, &Y[0, 0], threads)
    check_status(status, "kernel_matvec_into")


def _kernel_sums_into(const floating[:, ::1] X, const Py_ssize_t[::1] codes,
                      double gamma, int kernel, double[:, ::1] class_row_sums,
                      double[::1] row_sq_sums, int threads):
    """One streaming pass: class_row_sums (n, C) and row_sq_sums (n,)."""
    cdef Status status
    cdef Py_ssize_t n = X.shape[0], n_classes = class_row_sums.shape[1]
    require(codes.shape[0] == n, "kernel_sums_into", "codes", "of length n")
    require(class_row_sums.shape[0] == n, "kernel_sums_into", "class_row_sums",
            "of shape (n, n_classes)")
    require(row_sq_sums.shape[0] == n, "kernel_sums_into", "row_sq_sums", "of length n")
    with nogil:
        status = kernel_sums_into(&X[0, 0], n, X.shape[1], &codes[0], n_classes,
                                  gamma, kernel, &class_row_sums[0, 0], &row_sq_sums[0],
                                  threads)
    check_status(status, "kernel_sums_into")


def _gram_upper_into(const floating[:, ::1] P, floating[:, ::1] G):
    """Upper triangle of G (c, c) += PᵀP for P (b, c), both C-contiguous and of one
    dtype, by one BLAS syrk without the interpreter lock (BLAS threads as set around
    the call)."""
    cdef Status status
    require(G.shape[0] == P.shape[1] and G.shape[1] == P.shape[1], "gram_upper_into", "G",
            "of shape (c, c), P's columns")
    if P.shape[0] == 0 or P.shape[1] == 0:
        return
    with nogil:
        status = gram_upper_into(&P[0, 0], P.shape[0], P.shape[1], &G[0, 0])
    check_status(status, "gram_upper_into")


def _symmetric_eigh_into(const floating[:, ::1] A, floating[::1] w, floating[:, ::1] Z):
    """w (n,) ascending and Z (n, n), whose row j is the unit eigenvector of w[j], for
    the symmetric A (n, n) of which the lower triangle is read; LAPACK's ?syevd
    without the interpreter lock (BLAS threads as set around the call)."""
    cdef Status status
    cdef Py_ssize_t n = A.shape[0]
    require(A.shape[1] == n, "symmetric_eigh_into", "A", "square, of shape (n, n)")
    require(w.shape[0] == n, "symmetric_eigh_into", "w", "of length n, A's order")
    require(Z.shape[0] == n and Z.shape[1] == n, "symmetric_eigh_into", "Z",
            "of A's shape (n, n)")
    if n == 0:
        return
    require(<const void*>&Z[0, 0] != <const void*>&A[0, 0], "symmetric_eigh_into", "Z",
            "an array other than A")
    with nogil:
        status = symmetric_eigh_into(&A[0, 0], n, &w[0], &Z[0, 0])
    check_status(status, "symmetric_eigh_into")


def _cholesky_inverse_into(const floating[:, ::1] W, floating[:, ::1] T):
    """T (n, n) = L⁻ᵀ, upper triangular, for the Cholesky factor W = LLᵀ of the
    symmetric W (n, n), of which the upper triangle is read; LAPACK's ?potrf and ?trtri
    without the interpreter lock (BLAS threads as set around the call). Returns 0, or
    1 when W is not numerically positive definite (?potrf), 2 when L is singular
    (?trtri); T is then undefined."""
    cdef Status status
    cdef int outcome = 0
    cdef Py_ssize_t n = W.shape[0]
    require(W.shape[1] == n, "cholesky_inverse_into", "W", "square, of shape (n, n)")
    require(T.shape[0] == n and T.shape[1] == n, "cholesky_inverse_into", "T",
            "of W's shape (n, n)")
    if n == 0:
        return 0
    require(<const void*>&T[0, 0] != <const void*>&W[0, 0], "cholesky_inverse_into", "T",
            "an array other than W")
    with nogil:
        status = cholesky_inverse_into(&W[0, 0], n, &T[0, 0], &outcome)
    check_status(status, "cholesky_inverse_into")
    return outcome


# -- blocked Cholesky factorisation and rank-k update (kernelselect.utils._lapack) ------
# In place on a column-major array with its leading dimension, so that no block is
# copied: each ?potrf and ?syrk call gets an order of at most BLOCK_ORDER once the
# problem's order exceeds BLOCKED_MIN_ORDER (the threaded OpenBLAS ?syrk, which its
# ?potrf calls, faults at large orders; utils._lapack has the measurements).

cdef enum:
    BLOCKED_MIN_ORDER = 8192
    BLOCK_ORDER = 4096


cdef inline void _syrk(char* uplo, char* trans, int* n, int* k, floating* alpha,
                       floating* A, int* lda, floating* beta, floating* C,
                       int* ldc) noexcept nogil:
    if floating is double:
        dsyrk(uplo, trans, n, k, alpha, A, lda, beta, C, ldc)
    else:
        ssyrk(uplo, trans, n, k, alpha, A, lda, beta, C, ldc)


cdef inline void _trsm(char* side, char* uplo, char* ta, char* diag, int* m, int* n,
                       floating* alpha, floating* A, int* lda, floating* B,
                       int* ldb) noexcept nogil:
    if floating is double:
        dtrsm(side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb)
    else:
        strsm(side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb)


cdef void _syrk_blocks(char uplo, char trans, int p, int k, floating alpha,
                       const floating* Q, int ldq, floating* C, int ldc,
                       int block) noexcept nogil:
    """The ``uplo`` triangle of C (p, p) += alpha·QQᵀ (trans 'N', Q (p, k)) or alpha·QᵀQ
    (trans 'T', Q (k, p)): ?syrk on diagonal blocks of ``block`` columns, ?gemm off them
    (column-major, leading dimensions ldq and ldc)."""
    cdef floating one = 1.0
    cdef int k0 = 0, kb, r
    cdef Py_ssize_t step = 1 if trans == b'N' else ldq    # from one column of C to the next
    # column-major C_off (rows × kb) += alpha·Q_rows·Q_kᵀ is, in the row-major terms of
    # the one gemm (_common), C_offᵀ (kb × rows) += alpha·op(Q_k)·op(Q_rows)
    cdef bint by_rows = trans == b'N'
    cdef floating* Qk
    while k0 < p:
        kb = block if p - k0 > block else p - k0
        Qk = <floating*>Q + k0 * step
        _syrk(&uplo, &trans, &kb, &k, &alpha, Qk, &ldq, &one,
              C + k0 + <Py_ssize_t>k0 * ldc, &ldc)
        if uplo == b'L':                 # the rows below the diagonal block
            r = p - k0 - kb
            if r > 0:
                gemm(by_rows, not by_rows, kb, r, k, alpha, Qk, ldq, Qk + kb * step, ldq,
                     one, C + (k0 + kb) + <Py_ssize_t>k0 * ldc, ldc)
        elif k0 > 0:                     # the rows above it
            gemm(by_rows, not by_rows, kb, k0, k, alpha, Qk, ldq, Q, ldq,
                 one, C + <Py_ssize_t>k0 * ldc, ldc)
        k0 += kb


cdef int _potrf_blocks(char uplo, int n, floating* A, int lda, int block) noexcept nogil:
    """Right-looking blocked Cholesky factorisation of the ``uplo`` triangle of the
    column-major A (n, n), in place (Golub & Van Loan, Matrix Computations, §4.2.9);
    LAPACK's info (the order of the first leading minor that is not positive)."""
    cdef char side_l = b'L', side_r = b'R', tn = b'N', tt = b'T', nonunit = b'N'
    cdef char lo = b'L', up = b'U'
    cdef floating one = 1.0
    cdef int j0 = 0, b, rest, info = 0
    cdef floating* D
    while j0 < n:
        b = block if n - j0 > block else n - j0
        D = A + j0 + <Py_ssize_t>j0 * lda
        _potrf(&uplo, &b, D, &lda, &info)
        if info != 0:
            return j0 + info
        rest = n - j0 - b
        if rest > 0:
            if uplo == b'L':             # L21 = A21 L11⁻ᵀ, then A22 −= L21 L21ᵀ
                _trsm(&side_r, &lo, &tt, &nonunit, &rest, &b, &one, D, &lda, D + b, &lda)
                _syrk_blocks(lo, tn, rest, b, <floating>-1.0, D + b, lda,
                             D + b + <Py_ssize_t>b * lda, lda, block)
            else:                        # U12 = U11⁻ᵀ A12, then A22 −= U12ᵀ U12
                _trsm(&side_l, &up, &tt, &nonunit, &b, &rest, &one, D, &lda,
                      D + <Py_ssize_t>b * lda, &lda)
                _syrk_blocks(up, tt, rest, b, <floating>-1.0, D + <Py_ssize_t>b * lda, lda,
                             D + b + <Py_ssize_t>b * lda, lda, block)
        j0 += b
    return 0


cdef inline int _potrf_any(char uplo, int n, floating* A, int lda) noexcept nogil:
    """?potrf, blocked beyond BLOCKED_MIN_ORDER; LAPACK's info."""
    cdef int info = 0
    if n > BLOCKED_MIN_ORDER:
        return _potrf_blocks(uplo, n, A, lda, BLOCK_ORDER)
    _potrf(&uplo, &n, A, &lda, &info)
    return info


cdef Status cholesky_factor_into(floating* A, Py_ssize_t n, bint lower, Py_ssize_t block,
                                 int* info) noexcept nogil:
    # Row-major A is column-major Aᵀ = A: its lower triangle is BLAS's upper one, and
    # A = LLᵀ (L lower, row-major) is Aᵀ = UᵀU with U = Lᵀ (upper, column-major).
    cdef char uplo = b'U' if lower else b'L'
    cdef Py_ssize_t i, j
    info[0] = 0
    if n < 0:
        return status_bad_argument(b"n", b">= 0")
    if n > BLAS_INT_MAX:
        return status_overflow(b"n")
    if block < 0:
        return status_bad_argument(b"block", b">= 0 (0 for the default)")
    if n == 0:
        return status_ok()
    for i in range(n):                   # the triangle read: row i, columns ≤ i (lower)
        for j in range(i + 1 if lower else n - i):
            if not isfinite(A[i * n + (j if lower else i + j)]):
                return status_bad_argument(b"A", b"finite (the triangle factored holds "
                                                 b"NaN or infinity)")
    if block == 0:
        info[0] = _potrf_any(uplo, <int>n, A, <int>n)
    else:
        info[0] = _potrf_blocks(uplo, <int>n, A, <int>n,
                                <int>(block if block < n else n))
    if info[0] < 0:
        return status_bad_argument(b"an argument of ?potrf", b"valid (LAPACK info < 0)")
    return status_ok()


cdef Status gram_update_into(const floating* P, Py_ssize_t rows, Py_ssize_t cols,
                             floating alpha, bint lower, Py_ssize_t block,
                             floating* G) noexcept nogil:
    # Row-major P (rows, cols) is column-major Pᵀ (cols, rows): PᵀP is BLAS's
    # (Pᵀ)(Pᵀ)ᵀ, trans 'N'; G's row-major lower triangle is BLAS's upper one.
    cdef char uplo = b'U' if lower else b'L'
    cdef char plain = b'N'
    if rows < 0 or cols < 0:
        return status_bad_argument(b"the number of rows", b">= 0")
    if rows > BLAS_INT_MAX:
        return status_overflow(b"rows")
    if cols > BLAS_INT_MAX:
        return status_overflow(b"cols")
    if block < 0:
        return status_bad_argument(b"block", b">= 0 (0 for the default)")
    if rows == 0 or cols == 0:
        return status_ok()
    if block == 0:
        block = BLOCK_ORDER if cols > BLOCKED_MIN_ORDER else cols
    _syrk_blocks(uplo, plain, <int>cols, <int>rows, alpha, P, <int>cols, G, <int>cols,
                 <int>(block if block < cols else cols))
    return status_ok()


def _cholesky_factor_into(floating[:, ::1] A, bint lower, Py_ssize_t block):
    """The Cholesky factor of the symmetric A (n, n), C-contiguous, in place in its lower
    (A = LLᵀ) or upper (A = UᵀU) triangle; the other strict triangle untouched. ?potrf
    on diagonal blocks of ``block`` columns (0: one ?potrf call up to order 8192, blocks
    of 4096 beyond), without the interpreter lock (BLAS threads as set around the
    call). Returns LAPACK's info: 0, or the order of the first leading minor that is
    not positive definite."""
    cdef Status status
    cdef int info = 0
    cdef Py_ssize_t n = A.shape[0]
    require(A.shape[1] == n, "cholesky_factor_into", "A", "square, of shape (n, n)")
    if n == 0:
        return 0
    with nogil:
        status = cholesky_factor_into(&A[0, 0], n, lower, block, &info)
    check_status(status, "cholesky_factor_into")
    return info


def _gram_update_into(const floating[:, ::1] P, floating[:, ::1] G, floating alpha,
                      bint lower, Py_ssize_t block):
    """The lower or upper triangle of G (c, c) += alpha·PᵀP for P (b, c), both
    C-contiguous and of one dtype, in place; ?syrk on diagonal blocks of ``block``
    columns and ?gemm off them (0: one ?syrk call up to order 8192, blocks of 4096
    beyond), without the interpreter lock (BLAS threads as set around the call); the
    other strict triangle untouched."""
    cdef Status status
    require(G.shape[0] == P.shape[1] and G.shape[1] == P.shape[1], "gram_update_into", "G",
            "of shape (c, c), P's columns")
    if P.shape[0] == 0 or P.shape[1] == 0:
        return
    with nogil:
        status = gram_update_into(&P[0, 0], P.shape[0], P.shape[1], alpha, lower, block,
                                  &G[0, 0])
    check_status(status, "gram_update_into")


# ---------------------------------------------------------------------------
# Triangular solves and products with a factor stored in one precision and vectors in
# float64 (the Nyström preconditioner's float32 factors inside a float64 iteration)
# ---------------------------------------------------------------------------

cdef inline double _row_dot(const floating* a, const double* x, Py_ssize_t n) noexcept nogil:
    """Σ_k a[k]·x[k] in float64, four partial sums in a fixed order (the same bits on any
    thread count or caller)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t k = 0
    while k + 4 <= n:
        s0 = s0 + <double>a[k] * x[k]
        s1 = s1 + <double>a[k + 1] * x[k + 1]
        s2 = s2 + <double>a[k + 2] * x[k + 2]
        s3 = s3 + <double>a[k + 3] * x[k + 3]
        k = k + 4
    while k < n:
        s0 = s0 + <double>a[k] * x[k]
        k = k + 1
    return (s0 + s1) + (s2 + s3)


cdef inline void _row_axpy(const floating* a, double c, double* y,
                           Py_ssize_t n) noexcept nogil:
    """y[k] += c·a[k] in float64."""
    cdef Py_ssize_t k
    for k in range(n):
        y[k] = y[k] + c * <double>a[k]


cdef Status triangular_apply_into(const floating* M, Py_ssize_t m, const double* diag,
                                  bint lower, bint trans, bint solve, double scale,
                                  double* B, Py_ssize_t t) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef double* b
    cdef double xi
    if m < 0 or t < 0:
        return status_bad_argument(b"m and t", b">= 0")
    for i in range(m):
        if not isfinite(diag[i]) or (solve and diag[i] == 0.0):
            return status_bad_argument(b"diag", b"finite (and nonzero to solve)")
    for k in range(t):
        b = B + k * m
        if scale != 1.0:
            for i in range(m):
                b[i] = b[i] * scale
        if solve and not trans:
            if lower:                     # forward: x_i = (b_i − Σ_{j<i} M_ij x_j)/d_i
                for i in range(m):
                    b[i] = (b[i] - _row_dot(M + i * m, b, i)) / diag[i]
            else:                         # backward over the row's upper part
                for i in range(m - 1, -1, -1):
                    b[i] = (b[i] - _row_dot(M + i * m + i + 1, b + i + 1, m - 1 - i)) / diag[i]
        elif solve:
            if lower:                     # Mᵀ upper: backward, row i spreads x_i
                for i in range(m - 1, -1, -1):
                    b[i] = b[i] / diag[i]
                    _row_axpy(M + i * m, -b[i], b, i)
            else:                         # Mᵀ lower: forward
                for i in range(m):
                    b[i] = b[i] / diag[i]
                    _row_axpy(M + i * m + i + 1, -b[i], b + i + 1, m - 1 - i)
        elif not trans:
            if lower:                     # y_i = d_i x_i + Σ_{j<i} M_ij x_j, i descending
                for i in range(m - 1, -1, -1):
                    b[i] = diag[i] * b[i] + _row_dot(M + i * m, b, i)
            else:                         # i ascending
                for i in range(m):
                    b[i] = diag[i] * b[i] + _row_dot(M + i * m + i + 1, b + i + 1, m - 1 - i)
        else:
            if lower:                     # y_j += M_ij x_i for j < i, i ascending
                for i in range(m):
                    xi = b[i]
                    b[i] = diag[i] * xi
                    _row_axpy(M + i * m, xi, b, i)
            else:                         # j > i, i descending
                for i in range(m - 1, -1, -1):
                    xi = b[i]
                    b[i] = diag[i] * xi
                    _row_axpy(M + i * m + i + 1, xi, b + i + 1, m - 1 - i)
    return status_ok()


def _triangular_apply_into(const floating[:, ::1] M, const double[::1] diag, bint lower,
                           bint trans, bint solve, double scale, double[:, ::1] B):
    """B[k] := op(M̃)⁻¹(scale·B[k]) (``solve``) or op(M̃)(scale·B[k]) for every row k of
    B (t, m), in float64, where M̃ is the lower (``lower``) or upper triangle of the
    C-contiguous M (m, m), float32 or float64, with ``diag`` in place of its diagonal,
    and op(M̃) = M̃ᵀ when ``trans``; the other triangle and M's diagonal are not read.
    Each row of M is read once per right-hand side, in row order."""
    cdef Status status
    cdef Py_ssize_t m = M.shape[0], t = B.shape[0]
    require(M.shape[1] == m, "triangular_apply_into", "M", "square, of shape (m, m)")
    require(diag.shape[0] == m, "triangular_apply_into", "diag", "of shape (m,)")
    require(B.shape[1] == m, "triangular_apply_into", "B", "of shape (t, m)")
    if m == 0 or t == 0:
        return
    with nogil:
        status = triangular_apply_into(&M[0, 0], m, &diag[0], lower, trans, solve, scale,
                                       &B[0, 0], t)
    check_status(status, "triangular_apply_into")
