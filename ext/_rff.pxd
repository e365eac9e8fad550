# Random Fourier feature columns, for `cimport kernelselect._rff`.
#
# rff_columns fills out[i, k] = scale * row_scale[i] * cos(X[i, :] . W[:, k] + b[k])
# (row_scale of length 0 means row_scale[i] = 1).  X (n, d), W (d, D), out (n, D),
# all C-contiguous, float32 or float64 alike.  Rows are processed in fixed-size
# chunks under an OpenMP static schedule with `n_threads` threads; each chunk's
# X_chunk . W is one BLAS gemm call, so the caller must keep BLAS single-threaded
# (threadpoolctl) around the call.  Results do not depend on n_threads.
# Returns 0, or -1 when the shapes disagree (nothing is written then).

from cython cimport floating

cdef int rff_columns(const floating[:, ::1] X,      # IN  (n, d)
                     const floating[:, ::1] W,      # IN  (d, D)
                     const floating[::1] b,         # IN  (D,)
                     const floating[::1] row_scale, # IN  (n,) or (0,)
                     floating scale,
                     floating[:, ::1] out,          # OUT (n, D)
                     int n_threads) noexcept nogil

# Rows per chunk for D output columns (depends on D only, never on threads).
cdef Py_ssize_t rff_chunk_rows(Py_ssize_t D) noexcept nogil
