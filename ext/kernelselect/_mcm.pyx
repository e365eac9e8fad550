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

from kernelselect._common cimport clamp_threads
from kernelselect._status cimport (OK, Status, check_status, require, status_bad_argument,
                                   status_no_memory, status_ok)

cdef enum:
    FILL_CHUNK = 65536     # output entries per parallel chunk
    FACTOR_CHUNK = 8192    # factor entries per parallel chunk


cdef inline double _radial_1d(double dist, double gamma, int kernel) noexcept nogil:
    if kernel == 0:
        return exp(-gamma * dist * dist)
    return exp(-gamma * dist)


cdef void _factor_range(double *f, Py_ssize_t ms, double hs, double gamma, int kernel,
                        Py_ssize_t i0, Py_ssize_t i1) noexcept nogil:
    # f[i] = f[m_s - i] = Σ over the set {i, m_s - i} of κ₁(j h_s), for i0 <= i < i1 <= m_s/2 + 1.
    # The set has one element when i = m_s - i.
    cdef Py_ssize_t i
    cdef double v
    for i in range(i0, i1):
        v = _radial_1d(i * hs, gamma, kernel)
        if 2 * i != ms:
            v = v + _radial_1d((ms - i) * hs, gamma, kernel)
        f[i] = v
        f[ms - i] = v


cdef void _factors(const Py_ssize_t *m, const double *h, Py_ssize_t p,
                   double gamma, int kernel, double *factors, int threads) noexcept nogil:
    cdef Py_ssize_t s, ms, half, n_chunks, c, i0, i1, off = 0
    cdef int nt
    for s in range(p):
        ms = m[s]
        factors[off] = 1.0
        half = ms // 2           # indices 1..half determine the rest by symmetry
        n_chunks = (half + FACTOR_CHUNK - 1) // FACTOR_CHUNK
        nt = clamp_threads(threads, n_chunks)
        if nt == 1:
            _factor_range(factors + off, ms, h[s], gamma, kernel, 1, half + 1)
        else:
            for c in prange(n_chunks, schedule='static', num_threads=nt):
                i0 = 1 + c * FACTOR_CHUNK
                i1 = i0 + FACTOR_CHUNK
                if i1 > half + 1:
                    i1 = half + 1
                _factor_range(factors + off, ms, h[s], gamma, kernel, i0, i1)
        off += ms


cdef void _fill_range(const Py_ssize_t *m, Py_ssize_t p, const double *fac,
                      const Py_ssize_t *offsets, double *out,
                      Py_ssize_t e0, Py_ssize_t e1) noexcept nogil:
    # out[e] for e0 <= e < e1: the flat index is (row r of the first p-1 levels,
    # position j in the last level); one product of p-1 factors per row.
    cdef Py_ssize_t last = m[p - 1], e = e0, r, j, j0, j1, rem, s
    cdef const double *flast = fac + offsets[p - 1]
    cdef double pre
    while e < e1:
        r = e // last
        j0 = e - r * last
        j1 = j0 + (e1 - e)
        if j1 > last:
            j1 = last
        rem = r
        pre = 1.0
        s = p - 2
        while s >= 0:
            pre = pre * fac[offsets[s] + rem % m[s]]
            rem = rem // m[s]
            s -= 1
        for j in range(j0, j1):
            out[e + (j - j0)] = pre * flast[j]
        e += j1 - j0


cdef Status _check(const Py_ssize_t* m, const double* h, Py_ssize_t p, int kernel,
                   Py_ssize_t* n, Py_ssize_t* total) noexcept nogil:
    """n = prod(m) and total = sum(m) of valid arguments."""
    cdef Py_ssize_t s
    if p < 1:
        return status_bad_argument(b"p", b">= 1")
    if kernel != 0 and kernel != 1:
        return status_bad_argument(b"kernel", b"0 (Gaussian) or 1 (Laplacian)")
    n[0] = 1
    total[0] = 0
    for s in range(p):
        if m[s] < 1:
            return status_bad_argument(b"m", b">= 1 at every level")
        if not (h[s] > 0):
            return status_bad_argument(b"h", b"> 0 at every level")
        n[0] *= m[s]
        total[0] += m[s]
    return status_ok()


cdef Status song_xu_factors_into(const Py_ssize_t* m, const double* h, Py_ssize_t p,
                                 double gamma, int kernel,
                                 double* factors) noexcept nogil:
    cdef Py_ssize_t n, total
    cdef Status status = _check(m, h, p, kernel, &n, &total)
    if status.code == OK:
        _factors(m, h, p, gamma, kernel, factors, 1)
    return status


cdef Status song_xu_column_into(const Py_ssize_t* m, const double* h, Py_ssize_t p,
                                double gamma, int kernel,
                                double* out,
                                int threads) noexcept nogil:
    cdef Py_ssize_t s, n, total, n_chunks, c, e1
    cdef Py_ssize_t *offsets
    cdef double *fac
    cdef int nt
    cdef Status status = _check(m, h, p, kernel, &n, &total)
    if status.code != OK:
        return status
    fac = <double *>malloc(total * sizeof(double))
    offsets = <Py_ssize_t *>malloc(p * sizeof(Py_ssize_t))
    if fac == NULL or offsets == NULL:
        free(fac)
        free(offsets)
        return status_no_memory(total * sizeof(double) + p * sizeof(Py_ssize_t))
    _factors(m, h, p, gamma, kernel, fac, threads)
    offsets[0] = 0
    for s in range(1, p):
        offsets[s] = offsets[s - 1] + m[s - 1]
    n_chunks = (n + FILL_CHUNK - 1) // FILL_CHUNK
    nt = clamp_threads(threads, n_chunks)
    if nt == 1:
        _fill_range(m, p, fac, offsets, out, 0, n)
    else:
        for c in prange(n_chunks, schedule='static', num_threads=nt):
            e1 = (c + 1) * FILL_CHUNK
            if e1 > n:
                e1 = n
            _fill_range(m, p, fac, offsets, out, c * FILL_CHUNK, e1)
    free(fac)
    free(offsets)
    return status


def _song_xu_column_into(const Py_ssize_t[::1] m, const double[::1] h, double gamma,
                         int kernel, double[::1] out, int threads):
    """Python binding of song_xu_column_into (see the .pxd); used by
    kernelselect.primitives._columns, which validates the inputs."""
    cdef Status status
    cdef Py_ssize_t p = m.shape[0], size = 1, s
    require(h.shape[0] == p, "song_xu_column_into", "h", "of m's length p")
    for s in range(p):
        size *= m[s]
    # (m itself is checked by song_xu_column_into, before anything is written)
    require(out.shape[0] == size or size <= 0, "song_xu_column_into", "out",
            "of length prod(m)")
    with nogil:
        status = song_xu_column_into(&m[0], &h[0], p, gamma, kernel, &out[0], threads)
    check_status(status, "song_xu_column_into")
