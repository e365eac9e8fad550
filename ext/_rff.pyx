# cython: language_level=3
"""Random Fourier feature columns: gemm, bias, cos and scaling fused per row chunk.

For a chunk of rows, ``out_chunk = X_chunk · W + b`` is one BLAS gemm (with the
bias rows preloaded and beta = 1); while the chunk is still in cache the same
thread applies ``cos`` (vectorised, see ``_vecmath.h``) and the scale.
"""

from cython cimport floating
from cython.parallel cimport prange
from scipy.linalg.cython_blas cimport dgemm, sgemm

cdef extern from "_vecmath.h" nogil:
    void ks_cos_shift_scale_f64(double *x, const double *shift, Py_ssize_t n, double scale)
    void ks_cos_shift_scale_f32(float *x, const float *shift, Py_ssize_t n, float scale)
    void ks_cos_scale_f64(double *x, Py_ssize_t n, double scale)
    void ks_cos_scale_f32(float *x, Py_ssize_t n, float scale)
    const char *ks_vecmath_backend()

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
                     const floating *row_scale, bint has_row_scale, floating scale,
                     floating *out,
                     int rows, int d, int D) noexcept nogil:
    cdef char no_trans = b'N'
    cdef floating one = 1
    cdef int ldx = d if d > 0 else 1
    cdef Py_ssize_t i, k, total = <Py_ssize_t>rows * D
    cdef floating s
    # Preload every row with b, then out <- W^T X^T + out in column-major terms,
    # which is out = X W + b in row-major terms.
    for i in range(rows):
        for k in range(D):
            out[i * D + k] = b[k]
    if floating is double:
        dgemm(&no_trans, &no_trans, &D, &rows, &d, &one, <double *>W, &D,
              <double *>X, &ldx, &one, out, &D)
    else:
        sgemm(&no_trans, &no_trans, &D, &rows, &d, &one, <float *>W, &D,
              <float *>X, &ldx, &one, out, &D)
    # One vector cos pass over the whole chunk, then the per-row scale.
    if has_row_scale:
        if floating is double:
            ks_cos_scale_f64(out, total, 1.0)
        else:
            ks_cos_scale_f32(out, total, 1.0)
        for i in range(rows):
            s = scale * row_scale[i]
            for k in range(D):
                out[i * D + k] *= s
    else:
        if floating is double:
            ks_cos_scale_f64(out, total, scale)
        else:
            ks_cos_scale_f32(out, total, scale)


cdef int rff_columns(const floating[:, ::1] X,
                     const floating[:, ::1] W,
                     const floating[::1] b,
                     const floating[::1] row_scale,
                     floating scale,
                     floating[:, ::1] out,
                     int n_threads) noexcept nogil:
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], D = W.shape[1]
    cdef Py_ssize_t rows, n_chunks, c, start
    cdef bint has_row_scale = row_scale.shape[0] != 0
    if (W.shape[0] != d or b.shape[0] != D or out.shape[0] != n or out.shape[1] != D
            or (has_row_scale and row_scale.shape[0] != n)):
        return -1
    if n == 0 or D == 0:
        return 0
    if d > 2147483647 or D > 2147483647:
        return -1
    rows = rff_chunk_rows(D)
    n_chunks = (n + rows - 1) // rows
    if n_threads < 1:
        n_threads = 1
    if n_threads > n_chunks:
        n_threads = <int>n_chunks
    for c in prange(n_chunks, schedule='static', num_threads=n_threads, nogil=True):
        start = c * rows
        _rff_chunk(&X[0, 0] + start * d, &W[0, 0], &b[0],
                   &row_scale[0] + start if has_row_scale else NULL, has_row_scale,
                   scale, &out[0, 0] + start * D,
                   <int>(rows if start + rows <= n else n - start), <int>d, <int>D)
    return 0


def _rff_columns(floating[:, ::1] X, floating[:, ::1] W, floating[::1] b,
                 floating[::1] row_scale, double scale, floating[:, ::1] out,
                 int n_threads):
    """Validated-input entry point used by ``kernelselect._columns`` (see the .pxd)."""
    cdef int status
    with nogil:
        status = rff_columns(X, W, b, row_scale, <floating>scale, out, n_threads)
    if status != 0:
        raise ValueError("rff_columns: inconsistent shapes")
    return out


def vecmath_backend():
    """``"libmvec"`` when cos/exp loops use glibc's vector math, else ``"scalar"``."""
    return ks_vecmath_backend().decode()
