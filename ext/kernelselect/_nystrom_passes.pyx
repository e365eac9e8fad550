# cython: language_level=3
"""Streamed passes over the Nyström block K(X, Z) of n rows and m centres.

Three passes, each reading X once in fixed blocks of PASS_ROWS rows and never
holding more of K(X, Z) than one sub-block of rows (at most PASS_ROWS × m per thread):

- normal:  out (m, t) = K(X, Z)ᵀ (K(X, Z) V)     for V (m, t)
- cross:   out (m, t) = K(X, Z)ᵀ Y               for Y (n, t)
- apply:   out (n, t) = K(X, Z) V                for V (m, t)

A block's rows are first shifted and scaled into a per-thread buffer,
x ↦ (x − shift)·scale (the centring and power-of-two rescaling that keep
‖x‖² + ‖z‖² − 2x·z accurate, done here so that X is never copied). The block is then
taken in sub-blocks of pass_sub_rows(m) rows (64, 32 or 16: as many as keep the
sub-block's kernel values in a core's L2 between their two uses). A sub-block's
kernel values are formed tile by tile (PASS_COLS centres a tile: Gaussian ones with at
most KS_SQ_DIST_MAX_D features from the squared differences of _sqdist.h over the
centres transposed once a pass, the same values as kernel_block_into's; otherwise
kernel_block_into on one thread) into a per-thread buffer, each tile multiplied by V (BLAS gemm)
while it is still in cache, and, for the normal and cross passes, the sub-block is
multiplied back by its transposed tiles into an (m, t) partial sum.

Determinism: the row blocks are dealt into at most MAX_GROUPS contiguous groups,
a number fixed by n alone; each group accumulates its own partial in block order
and the partials are added in group order after the parallel loop, so 1 and N
threads give the same bits (the sub-blocks divide a block and depend on m alone).
Groups are scheduled dynamically so that a thread that loses its core on a busy
machine does not hold the others up.
"""

from cython.parallel cimport prange
from libc.string cimport memset

from libc.stdlib cimport free

from kernelselect._common cimport (KS_SQ_DIST_MAX_D, alloc_thread_work, blas_dims,
                                   clamp_threads, exp_neg_scaled, gemm, gemv,
                                   ks_omp_thread_num, release_thread_work, sq_dist_row,
                                   transposed_copy)
from kernelselect._kernels cimport kernel_block_into
from kernelselect._status cimport (OK, Status, check_status, require, status_bad_argument,
                                   status_no_memory, status_ok)


cdef enum:
    PASS_ROWS = 64      # rows of X per block
    PASS_COLS = 512     # centres per kernel tile
    MAX_GROUPS = 32     # partial sums of the normal / cross passes
    SUB_ROWS_MIN = 16   # fewest rows a kernel tile is formed for
    SUB_ENTRIES = 32768 # kernel values (256 KB) a sub-block keeps while it is reused


cdef Py_ssize_t pass_sub_rows(Py_ssize_t m) noexcept nogil:
    """Rows per sub-block: PASS_ROWS halved (64, 32, 16) while the sub-block's m kernel
    values a row exceed SUB_ENTRIES, so that they stay in a core's L2 between their
    two uses where m allows; never below SUB_ROWS_MIN, where the per-tile set-up of
    the kernel block (centre norms, a thin gemm) costs more than the cache saves."""
    cdef Py_ssize_t r = PASS_ROWS
    while r > SUB_ROWS_MIN and r * m > SUB_ENTRIES:
        r = r // 2
    return r


cdef Py_ssize_t pass_buffer_entries(Py_ssize_t d, Py_ssize_t m, Py_ssize_t t) noexcept nogil:
    """Doubles of work buffer one thread of a pass holds: a block's shifted rows, a
    sub-block's kernel values and its (rows, t) product."""
    return PASS_ROWS * d + pass_sub_rows(m) * (m + t)


cdef Py_ssize_t pass_groups(Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t n_blocks = (n + PASS_ROWS - 1) // PASS_ROWS
    return n_blocks if n_blocks < MAX_GROUPS else MAX_GROUPS


cdef void _shift_rows(const double* X, Py_ssize_t bi, Py_ssize_t d, const double* shift,
                      double scale, double* out) noexcept nogil:
    cdef Py_ssize_t i, k
    for i in range(bi):
        for k in range(d):
            out[i * d + k] = (X[i * d + k] - shift[k]) * scale


cdef Status _kernel_rows(const double* xb, Py_ssize_t bi, const double* Z, Py_ssize_t m,
                         Py_ssize_t d, double gamma, int kernel, const double* ZT,
                         double* T,
                         Py_ssize_t stride, const double* V, Py_ssize_t t,
                         double* U, bint fixed_rows) noexcept nogil:
    """T holds K(xb, Z) as consecutive tiles: the tile of centres j0 … j0+bj is a
    contiguous (bi, bj) row-major array at T + stride·j0. With V, also U (bi, t) =
    K(xb, Z) V, each tile multiplied while it is still in cache, in tile order; by
    gemv when t = 1 and ``fixed_rows`` (the rows are a pass's own sub-block, not an
    output whose bits must not depend on where the caller's chunks begin). With ZT
    (Z transposed, (d, m)), the Gaussian tiles come from sq_dist_row, as
    kernel_block_into's do with few features (the same values)."""
    cdef Py_ssize_t j0 = 0, bj, i
    cdef double beta = 0.0
    cdef Status status = status_ok()
    while j0 < m:
        bj = min(<Py_ssize_t>PASS_COLS, m - j0)
        if ZT != NULL:
            for i in range(bi):
                sq_dist_row(T + stride * j0 + i * bj, xb + i * d, ZT + j0, m, bj, d)
            exp_neg_scaled(T + stride * j0, bi * bj, gamma)
        else:
            status = kernel_block_into(xb, bi, Z + j0 * d, bj, d, gamma, kernel,
                                       T + stride * j0, 1)
        if status.code != OK:
            return status
        if V != NULL and t == 1 and fixed_rows:
            gemv(False, <int>bi, <int>bj, 1.0, T + stride * j0, <int>bj, V + j0, beta, U)
            beta = 1.0
        elif V != NULL:
            gemm(False, False, <int>bi, <int>t, <int>bj, 1.0, T + stride * j0, <int>bj,
                 V + j0 * t, <int>t, beta, U, <int>t)
            beta = 1.0
        j0 = j0 + bj
    return status


cdef void _add_transposed(const double* T, Py_ssize_t bi, Py_ssize_t m, Py_ssize_t stride,
                          const double* U, Py_ssize_t t, double* P) noexcept nogil:
    """P (m, t) += K(xb, Z)ᵀ U for U (bi, t), tile by tile (tiles laid out as by
    _kernel_rows with this stride)."""
    cdef Py_ssize_t j0 = 0, bj
    while j0 < m:
        bj = min(<Py_ssize_t>PASS_COLS, m - j0)
        # P[j0:j0+bj] (bj, t) += tileᵀ (bj, bi) @ U (bi, t)
        if t == 1:
            gemv(True, <int>bi, <int>bj, 1.0, T + stride * j0, <int>bj, U, 1.0, P + j0)
        else:
            gemm(True, False, <int>bj, <int>t, <int>bi, 1.0, T + stride * j0, <int>bj,
                 U, <int>t, 1.0, P + j0 * t, <int>t)
        j0 = j0 + bj


cdef Status _check_sizes(int mode, Py_ssize_t n, Py_ssize_t d, Py_ssize_t m,
                         Py_ssize_t t, int kernel) noexcept nogil:
    if mode < 0 or mode > 2:
        return status_bad_argument(b"mode", b"0 (normal), 1 (cross) or 2 (apply)")
    if kernel != 0 and kernel != 1:
        return status_bad_argument(b"kernel", b"0 (Gaussian) or 1 (Laplacian)")
    if n < 0 or d < 1 or m < 0 or t < 0:
        return status_bad_argument(b"n, d, m and t", b">= 0 (d >= 1)")
    return blas_dims(d, b"d", t, b"t")


cdef Status nystrom_pass_into(int mode,
                              const double* X, Py_ssize_t n,
                              Py_ssize_t d,
                              const double* shift,
                              double scale,
                              const double* Z, Py_ssize_t m,
                              const double* V, Py_ssize_t t,
                              double gamma, int kernel,
                              double* out,
                              double* partials,
                              int threads) noexcept nogil:
    cdef Py_ssize_t n_blocks = (n + PASS_ROWS - 1) // PASS_ROWS
    cdef Py_ssize_t n_groups = pass_groups(n)
    cdef Py_ssize_t n_units = n_blocks if mode == 2 else n_groups
    cdef Py_ssize_t sub = pass_sub_rows(m)
    cdef Py_ssize_t per_thread = pass_buffer_entries(d, m, t)
    cdef Py_ssize_t unit, g, blk, b0, b1, i0, bi, k, s0, sb
    cdef double* buffers
    cdef double* xb
    cdef double* T
    cdef double* U
    cdef double* P = NULL
    cdef double* ZT = NULL
    cdef Status* statuses
    cdef Status status = _check_sizes(mode, n, d, m, t, kernel)
    if status.code != OK:
        return status
    if mode == 2:
        memset(out, 0, n * t * sizeof(double))
    else:
        memset(out, 0, m * t * sizeof(double))
    if n_units == 0 or t == 0 or m == 0:
        return status
    if kernel == 0 and d <= KS_SQ_DIST_MAX_D:    # the centres transposed once a pass
        ZT = transposed_copy(Z, m, d)
        if ZT == NULL:
            return status_no_memory(d * m * sizeof(double) + 1)
    threads = clamp_threads(threads, n_units)
    status = alloc_thread_work(threads, per_thread, n_units, &buffers, &statuses)
    if status.code != OK:
        free(ZT)
        return status
    for unit in prange(n_units, nogil=True, schedule='dynamic', num_threads=threads):
        xb = buffers + ks_omp_thread_num() * per_thread
        T = xb + PASS_ROWS * d
        U = T + sub * m
        statuses[unit] = status_ok()
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
            s0 = 0
            while s0 < bi:
                sb = min(sub, bi - s0)
                if mode == 0:
                    statuses[unit] = _kernel_rows(xb + s0 * d, sb, Z, m, d, gamma, kernel,
                                                  ZT, T, sub, V, t, U, True)
                    if statuses[unit].code != OK:
                        break
                    _add_transposed(T, sb, m, sub, U, t, P)
                elif mode == 1:
                    statuses[unit] = _kernel_rows(xb + s0 * d, sb, Z, m, d, gamma, kernel,
                                                  ZT, T, sub, NULL, t, NULL, False)
                    if statuses[unit].code != OK:
                        break
                    _add_transposed(T, sb, m, sub, V + (i0 + s0) * t, t, P)
                else:
                    statuses[unit] = _kernel_rows(xb + s0 * d, sb, Z, m, d, gamma, kernel,
                                                  ZT, T, sub, V, t, out + (i0 + s0) * t,
                                                  False)
                    if statuses[unit].code != OK:
                        break
                s0 = s0 + sb
            if statuses[unit].code != OK:
                break
    status = release_thread_work(buffers, statuses, n_units)
    free(ZT)
    if status.code == OK and mode != 2:
        for g in range(n_groups):
            P = partials + g * m * t
            for k in range(m * t):
                out[k] = out[k] + P[k]
    return status


# ---------------------------------------------------------------------------
# Python bindings (memoryviews; shapes checked before pointers are taken)
# ---------------------------------------------------------------------------

def _pass_rows():
    """Rows of X per block of a pass (PASS_ROWS): the blocks begin at multiples of it."""
    return PASS_ROWS


def _pass_groups(Py_ssize_t n):
    """Partial sums a normal or cross pass over n rows keeps (at most MAX_GROUPS)."""
    return pass_groups(n)


def _pass_buffer_entries(Py_ssize_t d, Py_ssize_t m, Py_ssize_t t):
    """Doubles of work buffer one thread of a pass holds."""
    return pass_buffer_entries(d, m, t)


def _nystrom_pass_into(int mode, const double[:, ::1] X, const double[::1] shift,
                       double scale, const double[:, ::1] Z, const double[:, ::1] V,
                       double gamma, int kernel, double[:, ::1] out,
                       double[:, :, ::1] partials, int threads):
    """One pass (mode 0 normal, 1 cross, 2 apply); call with BLAS limited to one
    thread. ``partials`` has shape (pass_groups(n), m, t) (modes 0 and 1)."""
    cdef Status status
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], m = Z.shape[0], t = V.shape[1]
    require(Z.shape[1] == d and shift.shape[0] == d, "nystrom_pass_into", "Z and shift",
            "of X's d columns")
    require(V.shape[0] == (n if mode == 1 else m), "nystrom_pass_into", "V",
            "of shape (n, t) (cross) or (m, t)")
    require(out.shape[0] == (n if mode == 2 else m) and out.shape[1] == t,
            "nystrom_pass_into", "out", "of shape (n, t) (apply) or (m, t)")
    require(mode == 2 or (partials.shape[0] >= pass_groups(n) and partials.shape[1] == m
                          and partials.shape[2] == t),
            "nystrom_pass_into", "partials", "of shape (pass_groups(n), m, t)")
    if out.shape[0] == 0 or t == 0:
        return
    if n == 0 or m == 0:
        for i in range(out.shape[0]):
            for j in range(t):
                out[i, j] = 0.0
        return
    with nogil:
        status = nystrom_pass_into(mode, &X[0, 0], n, d, &shift[0], scale, &Z[0, 0], m,
                                   &V[0, 0], t, gamma, kernel, &out[0, 0],
                                   &partials[0, 0, 0] if mode != 2 else NULL, threads)
    check_status(status, "nystrom_pass_into")
