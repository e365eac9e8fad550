# Building blocks shared by the compiled kernels (inline; not installed, not a module
# at run time): the one row-major gemm (and syrk) over scipy's BLAS, the one thread clamp, the
# OpenMP thread number, the vector exp / cos loops of _vecmath.h and the squared
# distances of _sqdist.h.

from cython cimport floating
from scipy.linalg.cython_blas cimport dgemm, dgemv, dsyrk, sgemm, sgemv, ssyrk

# the check of BLAS's 32-bit dimensions and the per-thread work of a parallel loop
from libc.stdlib cimport free, malloc
from kernelselect._status cimport OK, Status, status_no_memory, status_ok, status_overflow

cdef extern from "_openmp_helpers.h":
    int ks_omp_thread_num() noexcept nogil

cdef extern from "_vecmath.h" nogil:
    void ks_exp_neg_scaled_f64(double *x, Py_ssize_t n, double gamma)
    void ks_exp_neg_scaled_f32(float *x, Py_ssize_t n, float gamma)
    void ks_cos_scale_f64(double *x, Py_ssize_t n, double scale)
    void ks_cos_scale_f32(float *x, Py_ssize_t n, float scale)
    const char *ks_vecmath_backend()

cdef extern from "_sqdist.h" nogil:
    int KS_SQ_DIST_MAX_D
    void ks_sq_dist_row_f64(const double *x, const double *ZT, Py_ssize_t ldzt,
                            Py_ssize_t nz, Py_ssize_t d, double *row)
    void ks_sq_dist_row_f32(const float *x, const float *ZT, Py_ssize_t ldzt,
                            Py_ssize_t nz, Py_ssize_t d, float *row)

cdef enum:
    BLAS_INT_MAX = 2147483647   # BLAS dimensions are C ints


cdef inline floating* transposed_copy(const floating* X, Py_ssize_t n,
                                     Py_ssize_t d) noexcept nogil:
    """A malloc'd (d, n) copy of the (n, d) array X (free it), or NULL."""
    cdef floating* XT = <floating*>malloc(n * d * sizeof(floating) + 1)
    cdef Py_ssize_t i, k
    if XT != NULL:
        for i in range(n):
            for k in range(d):
                XT[k * n + i] = X[i * d + k]
    return XT


cdef inline void sq_dist_row(floating* row, const floating* x, const floating* ZT,
                             Py_ssize_t ldzt, Py_ssize_t nz, Py_ssize_t d) noexcept nogil:
    """row[j] = ‖x − z_j‖² = Σ_k (z_jk − x_k)² for nz points given transposed
    (ZT[k·ldzt + j]), d ≤ KS_SQ_DIST_MAX_D (_sqdist.h): never negative, exactly 0 for
    identical points."""
    if floating is double:
        ks_sq_dist_row_f64(x, ZT, ldzt, nz, d, row)
    else:
        ks_sq_dist_row_f32(x, ZT, ldzt, nz, d, row)


cdef inline void gemm(bint trans_a, bint trans_b, int m, int n, int k, floating alpha,
                      const floating* A, int lda, const floating* B, int ldb,
                      floating beta, floating* C, int ldc) noexcept nogil:
    """Row-major C (m, n) = alpha op(A) op(B) + beta C, op = transpose where asked.

    A is stored (m, k) row-major with leading dimension lda, or (k, m) when trans_a;
    likewise B (k, n) or (n, k). BLAS is column-major, where the same memory holds
    the transposes, so this computes C^T = op(B)^T op(A)^T: B goes first.
    """
    cdef char ta = b'T' if trans_b else b'N'
    cdef char tb = b'T' if trans_a else b'N'
    if floating is double:
        dgemm(&ta, &tb, &n, &m, &k, &alpha, <double*>B, &ldb, <double*>A, &lda,
              &beta, C, &ldc)
    else:
        sgemm(&ta, &tb, &n, &m, &k, &alpha, <float*>B, &ldb, <float*>A, &lda,
              &beta, C, &ldc)


cdef inline void gemv(bint trans_a, int m, int k, floating alpha, const floating* A,
                      int lda, const floating* x, floating beta, floating* y) noexcept nogil:
    """Row-major y = alpha op(A) x + beta y for A stored (m, k) row-major with leading
    dimension lda: op(A) = A (y has m entries) or Aᵀ (y has k entries).

    gemm's one-column case, which gemm would first pack as a matrix product; gemv reads
    A once. Its rounding is not gemm's, and for op(A) = A an entry's can depend on its
    row's place in the call (BLAS unrolls rows): use it only where the rows a call
    takes are fixed (the passes' blocks), not where a caller's chunks set them.
    """
    cdef char ta = b'N' if trans_a else b'T'
    cdef int one = 1
    cdef Py_ssize_t i
    if m <= 0 or k <= 0:
        return
    if beta == 0:                    # y may hold anything (NaN): not every BLAS's gemv
        for i in range(k if trans_a else m):   # ignores it when beta = 0, as gemm does
            y[i] = 0
    if floating is double:
        dgemv(&ta, &k, &m, &alpha, <double*>A, &lda, <double*>x, &one, &beta, y, &one)
    else:
        sgemv(&ta, &k, &m, &alpha, <float*>A, &lda, <float*>x, &one, &beta, y, &one)


cdef inline void syrk_upper(int n, int k, floating alpha, const floating* A, int lda,
                            floating beta, floating* C, int ldc) noexcept nogil:
    """Row-major upper triangle of C (n, n) = alpha AᵀA + beta C, for A (k, n) row-major
    with leading dimension lda; the strict lower triangle is not touched.

    Column-major BLAS sees A as Aᵀ (n, k) and C's upper triangle as its lower one,
    hence uplo 'L', trans 'N'.
    """
    cdef char uplo = b'L'
    cdef char trans = b'N'
    if floating is double:
        dsyrk(&uplo, &trans, &n, &k, &alpha, <double*>A, &lda, &beta, C, &ldc)
    else:
        ssyrk(&uplo, &trans, &n, &k, &alpha, <float*>A, &lda, &beta, C, &ldc)


cdef inline int clamp_threads(int threads, Py_ssize_t units) noexcept nogil:
    """The OpenMP team size for ``units`` units of parallel work: at most one thread
    per unit (each thread costs the runtime a stack), at least one."""
    if threads > units:
        threads = <int>units
    if threads < 1:
        threads = 1
    return threads


cdef inline Status blas_dims(Py_ssize_t a, const char* a_name, Py_ssize_t b,
                             const char* b_name) noexcept nogil:
    """OVERFLOW naming the first of two BLAS dimensions, a then b, that does not fit
    BLAS's 32-bit int; else OK."""
    if a > BLAS_INT_MAX:
        return status_overflow(a_name)
    if b > BLAS_INT_MAX:
        return status_overflow(b_name)
    return status_ok()


cdef inline Status alloc_thread_work(int threads, Py_ssize_t per_thread, Py_ssize_t units,
                                     double** buffers, Status** statuses) noexcept nogil:
    """The work of a parallel loop over ``units`` units on ``threads`` threads: a buffer
    of ``per_thread`` doubles for each thread (thread i's at buffers[0] + i * per_thread)
    and one Status per unit. NO_MEMORY with the bytes of both, and nothing held, when
    either allocation fails. Release with :func:`release_thread_work`."""
    cdef size_t nbytes = <size_t>threads * per_thread * sizeof(double)
    buffers[0] = <double*>malloc(nbytes)
    statuses[0] = <Status*>malloc(units * sizeof(Status))
    if buffers[0] == NULL or statuses[0] == NULL:
        free(buffers[0])
        free(statuses[0])
        return status_no_memory(nbytes + units * sizeof(Status))
    return status_ok()


cdef inline Status release_thread_work(double* buffers, Status* statuses,
                                       Py_ssize_t units) noexcept nogil:
    """Free the work of :func:`alloc_thread_work`; returns the status of the first unit
    (in unit order, whatever the thread count) that did not end OK, else OK."""
    cdef Py_ssize_t unit
    cdef Status status = status_ok()
    for unit in range(units):
        if statuses[unit].code != OK:
            status = statuses[unit]
            break
    free(buffers)
    free(statuses)
    return status


cdef inline void exp_neg_scaled(floating* a, Py_ssize_t size, floating gamma) noexcept nogil:
    """a[k] <- exp(-gamma * a[k]) for distances a; exp(-gamma * 0) is exactly 1."""
    if floating is double:
        ks_exp_neg_scaled_f64(a, size, gamma)
    else:
        ks_exp_neg_scaled_f32(a, size, gamma)


cdef inline void cos_scale(floating* a, Py_ssize_t size, floating scale) noexcept nogil:
    """a[k] <- scale * cos(a[k])."""
    if floating is double:
        ks_cos_scale_f64(a, size, scale)
    else:
        ks_cos_scale_f32(a, size, scale)
