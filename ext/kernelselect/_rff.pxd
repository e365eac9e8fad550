# Random Fourier feature columns, for `cimport kernelselect._rff`.
# Conventions as in _kernels.pxd (pointers then sizes; inputs, parameters, outputs,
# threads; a kernelselect._status Status returned).
#
# rff_columns_into fills out[i, k] = scale * row_scale[i] * cos(X[i, :] . W[:, k] + b[k])
# (row_scale NULL means row_scale[i] = 1). X (n, d), W (d, D), b (D,), row_scale (n,),
# out (n, D), all C-contiguous, float32 or float64 alike; d and D below 2**31.
# Rows are processed in fixed-size chunks under an OpenMP static schedule with
# `threads` threads; each chunk's X_chunk . W is one BLAS gemm call, so the caller
# must keep BLAS single-threaded (threadpoolctl) around the call. Results do not
# depend on `threads`.

from cython cimport floating

from kernelselect._status cimport Status

cdef Status rff_columns_into(const floating* X,                  # IN  (n, d)
                             Py_ssize_t n, Py_ssize_t d,
                             const floating* W, Py_ssize_t D,    # IN  (d, D)
                             const floating* b,                  # IN  (D,)
                             const floating* row_scale,          # IN  (n,) or NULL
                             floating scale,
                             floating* out,                      # OUT (n, D)
                             int threads) noexcept nogil

# Rows per chunk for D output columns (depends on D only, never on threads).
cdef Py_ssize_t rff_chunk_rows(Py_ssize_t D) noexcept nogil
