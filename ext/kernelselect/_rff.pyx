# cython: language_level=3
"""Random Fourier feature columns: gemm, bias, cos and scaling fused per row chunk.

For a chunk of rows, ``out_chunk = X_chunk · W + b`` is one BLAS gemm (with the
bias rows preloaded and beta = 1); while the chunk is still in cache the same
thread applies ``cos`` (vectorised, see ``_vecmath.h``) and the scale.
"""

from cython cimport floating
from cython.parallel cimport prange

from kernelselect._common cimport (BLAS_INT_MAX, clamp_threads, cos_scale, gemm,
                                   ks_vecmath_backend)
from kernelselect._status cimport (OK, Status, check_status, require, status_bad_argument,
                                   status_ok, status_overflow)

# About this many output entries per chunk (128 kB in float64): the chunk, its X rows
# and W stay in L2 between gemm and cos.
cdef enum:
    CHUNK_ENTRIES = 16384
    MAX_CHUNK_ROWS = 1024


cdef Py_ssize_t rff_chunk_rows(Py_ssize_t D) noexcept nogil:
    cdef Py_ssize_t rows = CHUNK_ENTRIES // D if D > 0 else MAX_CHUNK_ROWS
    if rows < 1:
        rows = 1
    if rows > MAX_CHUNK_ROWS:
        rows = MAX_CHUNK_ROWS
    return rows


cdef void _rff_chunk(const floating *X, const floating *W, const floating *b,
                     const floating *row_scale, floating scale, floating *out,
                     int rows, int d, int D) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef floating s
    # Preload every row with b, then out = X W + out (beta = 1).
    for i in range(rows):
        for k in range(D):
            out[i * D + k] = b[k]
    gemm(False, False, rows, D, d, 1, X, d if d > 0 else 1, W, D, 1, out, D)
    # One vector cos pass over the whole chunk, then the per-row scale.
    if row_scale != NULL:
        cos_scale(out, <Py_ssize_t>rows * D, 1)
        for i in range(rows):
            s = scale * row_scale[i]
            for k in range(D):
                out[i * D + k] *= s
    else:
        cos_scale(out, <Py_ssize_t>rows * D, scale)


cdef Status rff_columns_into(const floating* X, Py_ssize_t n, Py_ssize_t d,
                             const floating* W, Py_ssize_t D,
                             const floating* b,
                             const floating* row_scale,
                             floating scale,
                             floating* out,
                             int threads) noexcept nogil:
    cdef Py_ssize_t rows, n_chunks, c, start
    if n < 0 or d < 0 or D < 0:
        return status_bad_argument(b"n, d and D", b">= 0")
    if d > BLAS_INT_MAX:
        return status_overflow(b"d")
    if D > BLAS_INT_MAX:
        return status_overflow(b"D")
    if n == 0 or D == 0:
        return status_ok()
    rows = rff_chunk_rows(D)
    n_chunks = (n + rows - 1) // rows
    threads = clamp_threads(threads, n_chunks)
    for c in prange(n_chunks, schedule='static', num_threads=threads, nogil=True):
        start = c * rows
        _rff_chunk(X + start * d, W, b, row_scale + start if row_scale != NULL else NULL,
                   scale, out + start * D,
                   <int>(rows if start + rows <= n else n - start), <int>d, <int>D)
    return status_ok()


def _rff_columns_into(const floating[:, ::1] X, const floating[:, ::1] W,
                      const floating[::1] b, const floating[::1] row_scale, double scale,
                      floating[:, ::1] out, int threads):
    """Python binding of rff_columns_into (see the .pxd); an empty row_scale means 1.
    Used by kernelselect.primitives._columns, which validates the inputs."""
    cdef Status status
    cdef Py_ssize_t n = X.shape[0], D = W.shape[1]
    require(W.shape[0] == X.shape[1], "rff_columns_into", "W", "of shape (d, D), X's d")
    require(b.shape[0] == D, "rff_columns_into", "b", "of length D")
    require(row_scale.shape[0] in (0, n), "rff_columns_into", "row_scale", "of length 0 or n")
    require(out.shape[0] == n and out.shape[1] == D, "rff_columns_into", "out",
            "of shape (n, D)")
    with nogil:
        status = rff_columns_into(&X[0, 0], n, X.shape[1], &W[0, 0], D, &b[0],
                                  &row_scale[0] if row_scale.shape[0] else NULL,
                                  <floating>scale, &out[0, 0], threads)
    check_status(status, "rff_columns_into")


def vecmath_backend():
    """``"libmvec"`` when cos/exp loops use glibc's vector math, else ``"scalar"``."""
    return ks_vecmath_backend().decode()
