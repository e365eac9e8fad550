# cython: language_level=3
"""Streamed passes over the Nyström block K(X, Z) of n rows and m centres.

Three passes, each reading X once in fixed blocks of PASS_ROWS rows and never
holding more of K(X, Z) than one block of rows (PASS_ROWS × m per thread):

- normal:  out (m, t) = K(X, Z)ᵀ (K(X, Z) V)     for V (m, t)
- cross:   out (m, t) = K(X, Z)ᵀ Y               for Y (n, t)
- apply:   out (n, t) = K(X, Z) V                for V (m, t)

A block's rows are first shifted and scaled into a per-thread buffer,
x ↦ (x − shift)·scale (the centring and power-of-two rescaling that keep
‖x‖² + ‖z‖² − 2x·z accurate, done here so that X is never copied), then its kernel
values are formed tile by tile (PASS_COLS centres a tile, ks_kernel_block on one
thread) into a per-thread buffer, multiplied by V tile by tile (BLAS gemm) and,
for the normal and cross passes, multiplied back by the transposed tiles into an
(m, t) partial sum.

Determinism: the row blocks are dealt into at most MAX_GROUPS contiguous groups,
a number fixed by n alone; each group accumulates its own partial in block order
and the partials are added in group order after the parallel loop, so 1 and N
threads give the same bits. Groups are scheduled dynamically so that a thread that
loses its core on a busy machine does not hold the others up.
"""

from cython.parallel cimport prange
from libc.stdlib cimport free, malloc
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dgemm

from kernelselect._kernels cimport ks_kernel_block

cdef extern from "_openmp_helpers.h":
    int ks_omp_thread_num() noexcept nogil


cdef enum:
    PASS_ROWS = 64      # rows of X per block
    PASS_COLS = 512     # centres per kernel tile
    MAX_GROUPS = 32     # partial sums of the normal / cross passes


cdef Py_ssize_t ks_pass_groups(Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t n_blocks = (n + PASS_ROWS - 1) // PASS_ROWS
    return n_blocks if n_blocks < MAX_GROUPS else MAX_GROUPS


cdef void _shift_rows(const double* X, Py_ssize_t bi, Py_ssize_t d, const double* shift,
                      double scale, double* out) noexcept nogil:
    cdef Py_ssize_t i, k
    for i in range(bi):
        for k in range(d):
            out[i * d + k] = (X[i * d + k] - shift[k]) * scale


cdef int _kernel_rows(const double* xb, Py_ssize_t bi, const double* Z, Py_ssize_t m,
                      Py_ssize_t d, double gamma, int kernel, double* T) noexcept nogil:
    """T holds K(xb, Z) as consecutive tiles: the tile of centres j0 … j0+bj is a
    contiguous (bi, bj) row-major array at T + PASS_ROWS·j0."""
    cdef Py_ssize_t j0 = 0, bj
    cdef int status
    while j0 < m:
        bj = min(<Py_ssize_t>PASS_COLS, m - j0)
        status = ks_kernel_block(xb, bi, Z + j0 * d, bj, d, gamma, kernel,
                                 T + PASS_ROWS * j0, 1)
        if status != 0:
            return status
        j0 = j0 + bj
    return 0


cdef void _times_v(const double* T, Py_ssize_t bi, Py_ssize_t m, const double* V,
                   Py_ssize_t t, double* U) noexcept nogil:
    """U (bi, t) = K(xb, Z) V over the tiles of T, in tile order."""
    cdef Py_ssize_t j0 = 0, bj
    cdef char no = b'N'
    cdef int it = <int>t, ib = <int>bi, ij
    cdef double one = 1.0, zero = 0.0
    cdef double beta = 0.0
    while j0 < m:
        bj = min(<Py_ssize_t>PASS_COLS, m - j0)
        ij = <int>bj
        # column-major Uᵀ (t, bi) (+)= Vᵀ[:, tile] (t, bj) · tileᵀ (bj, bi)
        dgemm(&no, &no, &it, &ib, &ij, &one, <double*>(V + j0 * t), &it,
              <double*>(T + PASS_ROWS * j0), &ij, &beta, U, &it)
        beta = 1.0
        j0 = j0 + bj


cdef void _add_transposed(const double* T, Py_ssize_t bi, Py_ssize_t m, const double* U,
                          Py_ssize_t t, double* P) noexcept nogil:
    """P (m, t) += K(xb, Z)ᵀ U for U (bi, t), tile by tile."""
    cdef Py_ssize_t j0 = 0, bj
    cdef char no = b'N', tr = b'T'
    cdef int it = <int>t, ib = <int>bi, ij
    cdef double one = 1.0
    while j0 < m:
        bj = min(<Py_ssize_t>PASS_COLS, m - j0)
        ij = <int>bj
        # column-major Pᵀ[:, tile] (t, bj) += Uᵀ (t, bi) · tile (bi, bj)
        dgemm(&no, &tr, &it, &ij, &ib, &one, <double*>U, &it,
              <double*>(T + PASS_ROWS * j0), &ij, &one, P + j0 * t, &it)
        j0 = j0 + bj


cdef int ks_nystrom_pass(int mode, const double* X, Py_ssize_t n, Py_ssize_t d,
                         const double* shift, double scale,
                         const double* Z, Py_ssize_t m,
                         const double* V, Py_ssize_t t,
                         double gamma, int kernel,
                         double* out, double* partials, int threads) noexcept nogil:
    cdef Py_ssize_t n_blocks = (n + PASS_ROWS - 1) // PASS_ROWS
    cdef Py_ssize_t n_groups = ks_pass_groups(n)
    cdef Py_ssize_t n_units = n_blocks if mode == 2 else n_groups
    cdef Py_ssize_t per_thread = PASS_ROWS * (d + m + t)
    cdef Py_ssize_t unit, g, blk, b0, b1, i0, bi, k
    cdef int status = 0
    cdef double* buffers
    cdef double* xb
    cdef double* T
    cdef double* U
    cdef double* P
    cdef int* errors
    if kernel != 0 and kernel != 1:
        return 2
    if mode < 0 or mode > 2:
        return 3
    if mode != 2:
        memset(out, 0, m * t * sizeof(double))
    if n_units == 0 or t == 0 or m == 0:
        if mode == 2:
            memset(out, 0, n * t * sizeof(double))
        return 0
    if threads > n_units:
        threads = <int>n_units
    if threads < 1:
        threads = 1
    buffers = <double*>malloc(<size_t>threads * per_thread * sizeof(double))
    errors = <int*>malloc(n_units * sizeof(int))
    if buffers == NULL or errors == NULL:
        free(buffers)
        free(errors)
        return 1
    for unit in prange(n_units, nogil=True, schedule='dynamic', num_threads=threads):
        xb = buffers + ks_omp_thread_num() * per_thread
        T = xb + PASS_ROWS * d
        U = T + PASS_ROWS * m
        errors[unit] = 0
        if mode == 2:
            b0 = unit
            b1 = unit + 1
        else:
            b0 = unit * n_blocks // n_groups
            b1 = (unit + 1) * n_blocks // n_groups
            P = partials + unit * m * t
            memset(P, 0, m * t * sizeof(double))
        for blk in range(b0, b1):
            i0 = blk * PASS_ROWS
            bi = min(<Py_ssize_t>PASS_ROWS, n - i0)
            _shift_rows(X + i0 * d, bi, d, shift, scale, xb)
            errors[unit] = _kernel_rows(xb, bi, Z, m, d, gamma, kernel, T)
            if errors[unit] != 0:
                break
            if mode == 0:
                _times_v(T, bi, m, V, t, U)
                _add_transposed(T, bi, m, U, t, P)
            elif mode == 1:
                _add_transposed(T, bi, m, V + i0 * t, t, P)
            else:
                _times_v(T, bi, m, V, t, out + i0 * t)
    for unit in range(n_units):
        if errors[unit] != 0:
            status = errors[unit]
            break
    if status == 0 and mode != 2:
        for g in range(n_groups):
            P = partials + g * m * t
            for k in range(m * t):
                out[k] = out[k] + P[k]
    free(buffers)
    free(errors)
    return status


# ---------------------------------------------------------------------------
# Python entry points (inputs validated and converted by kernelselect._nystrom_pcg)
# ---------------------------------------------------------------------------

def pass_groups(Py_ssize_t n):
    """Partial sums a normal or cross pass over n rows keeps (≤ MAX_GROUPS)."""
    return ks_pass_groups(n)


def pass_buffer_entries(Py_ssize_t d, Py_ssize_t m, Py_ssize_t t):
    """Doubles of work buffer one thread of a pass holds."""
    return PASS_ROWS * (d + m + t)


def nystrom_pass_into(int mode, const double[:, ::1] X, const double[::1] shift,
                      double scale, const double[:, ::1] Z, const double[:, ::1] V,
                      double gamma, int kernel, double[:, ::1] out,
                      double[:, :, ::1] partials, int threads):
    """One pass (mode 0 normal, 1 cross, 2 apply); call with BLAS limited to one
    thread. ``partials`` has shape (pass_groups(n), m, t) (modes 0 and 1)."""
    cdef int status
    cdef double* P = &partials[0, 0, 0] if partials.shape[0] > 0 else NULL
    cdef const double* Vp = &V[0, 0] if V.shape[0] > 0 else NULL
    cdef double* op = &out[0, 0] if out.shape[0] > 0 else NULL
    cdef const double* Xp = &X[0, 0] if X.shape[0] > 0 else NULL
    with nogil:
        status = ks_nystrom_pass(mode, Xp, X.shape[0], X.shape[1], &shift[0], scale,
                                 &Z[0, 0], Z.shape[0], Vp, V.shape[1], gamma, kernel,
                                 op, P, threads)
    if status == 1:
        raise MemoryError("could not allocate the Nyström pass work buffers")
    if status != 0:
        raise ValueError(f"Nyström pass failed with status {status}")
