# cython: language_level=3
"""First column of the Song–Xu multilevel circulant matrix, as a Kronecker product.

Both radial kernels factorise over coordinates (exp(-γ‖x‖²) = Π_s exp(-γ x_s²),
exp(-γ‖x‖₁) = Π_s exp(-γ|x_s|)), so the sum over the Cartesian product of the index
sets D_{i,s} in Song & Xu's Alg. 1 factorises level by level, and the column is the
outer product of p short 1-D columns.
"""

from cython.parallel cimport prange
from libc.math cimport exp
from libc.stdlib cimport malloc, free

cdef enum:
    CHUNK_ROWS = 2048    # rows of the last level per parallel chunk


cdef inline double _radial_1d(double dist, double gamma, int kernel) noexcept nogil:
    if kernel == 0:
        return exp(-gamma * dist * dist)
    return exp(-gamma * dist)


cdef void _factors(const Py_ssize_t *m, const double *h, Py_ssize_t p,
                   double gamma, int kernel, double *factors) noexcept nogil:
    cdef Py_ssize_t s, i, ms, off = 0
    for s in range(p):
        ms = m[s]
        factors[off] = 1.0
        for i in range(1, ms):
            factors[off + i] = _radial_1d(i * h[s], gamma, kernel)
            # D_{i,s} is the set {i, m_s - i}: one element when i = m_s - i.
            if 2 * i != ms:
                factors[off + i] += _radial_1d((ms - i) * h[s], gamma, kernel)
        off += ms


cdef int _check(const Py_ssize_t[::1] m, const double[::1] h, int kernel,
                Py_ssize_t *n, Py_ssize_t *total) noexcept nogil:
    cdef Py_ssize_t p = m.shape[0], s
    if p < 1 or h.shape[0] != p or kernel < 0 or kernel > 1:
        return -1
    n[0] = 1
    total[0] = 0
    for s in range(p):
        if m[s] < 1 or not (h[s] > 0):
            return -1
        n[0] *= m[s]
        total[0] += m[s]
    return 0


cdef int song_xu_factors(const Py_ssize_t[::1] m, const double[::1] h,
                         double gamma, int kernel, double[::1] factors) noexcept nogil:
    cdef Py_ssize_t n, total
    if _check(m, h, kernel, &n, &total) != 0 or factors.shape[0] != total:
        return -1
    _factors(&m[0], &h[0], m.shape[0], gamma, kernel, &factors[0])
    return 0


cdef int song_xu_fill(const Py_ssize_t[::1] m, const double[::1] h,
                      double gamma, int kernel, double[::1] out,
                      int n_threads) noexcept nogil:
    cdef Py_ssize_t p = m.shape[0], s, n, total
    cdef Py_ssize_t last, n_rows, n_chunks, c, r, r0, r1, rem, j
    cdef Py_ssize_t *offsets
    cdef double *fac
    cdef double pre
    if _check(m, h, kernel, &n, &total) != 0 or out.shape[0] != n:
        return -1
    fac = <double *>malloc(total * sizeof(double))
    offsets = <Py_ssize_t *>malloc(p * sizeof(Py_ssize_t))
    if fac == NULL or offsets == NULL:
        free(fac)
        free(offsets)
        return -2
    _factors(&m[0], &h[0], p, gamma, kernel, fac)
    offsets[0] = 0
    for s in range(1, p):
        offsets[s] = offsets[s - 1] + m[s - 1]
    # out viewed as (n_rows, last): row r is the multi-index of the first p-1 levels.
    last = m[p - 1]
    n_rows = n // last
    n_chunks = (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS
    if n_threads < 1:
        n_threads = 1
    if n_threads > n_chunks:
        n_threads = <int>n_chunks
    for c in prange(n_chunks, schedule='static', num_threads=n_threads, nogil=True):
        r0 = c * CHUNK_ROWS
        r1 = r0 + CHUNK_ROWS
        if r1 > n_rows:
            r1 = n_rows
        for r in range(r0, r1):
            rem = r
            pre = 1.0
            s = p - 2
            while s >= 0:
                pre = pre * fac[offsets[s] + rem % m[s]]
                rem = rem // m[s]
                s = s - 1
            for j in range(last):
                out[r * last + j] = pre * fac[offsets[p - 1] + j]
    free(fac)
    free(offsets)
    return 0


def _song_xu_column(const Py_ssize_t[::1] m, const double[::1] h, double gamma,
                    int kernel, double[::1] out, int n_threads):
    """Validated-input entry point used by ``kernelselect._columns`` (see the .pxd)."""
    cdef int status
    with nogil:
        status = song_xu_fill(m, h, gamma, kernel, out, n_threads)
    if status == -2:
        raise MemoryError("song_xu_fill: out of memory")
    if status != 0:
        raise ValueError("song_xu_fill: inconsistent arguments")
    return out


def _song_xu_factors(const Py_ssize_t[::1] m, const double[::1] h, double gamma,
                     int kernel, double[::1] factors):
    """Validated-input entry point: the p 1-D factor columns, concatenated."""
    cdef int status
    with nogil:
        status = song_xu_factors(m, h, gamma, kernel, factors)
    if status != 0:
        raise ValueError("song_xu_factors: inconsistent arguments")
    return factors
