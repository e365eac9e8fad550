# Streamed passes over the Nyström block K(X, Z), for `cimport kernelselect._nystrom_passes`.
# Conventions as in _kernels.pxd (pointers then sizes; inputs, parameters, outputs,
# threads; a kernelselect._status Status returned).
#
# mode 0 (normal): out (m, t) = K(X, Z)^T (K(X, Z) V),  V (m, t)
# mode 1 (cross):  out (m, t) = K(X, Z)^T V,            V (n, t)
# mode 2 (apply):  out (n, t) = K(X, Z) V,              V (m, t)
#
# Rows of X are used as (x - shift) * scale; Z must already be shifted and scaled
# alike. All arrays float64, C-contiguous. `partials` holds pass_groups(n) * m * t
# doubles (modes 0 and 1; unused by mode 2). K(X, Z) is formed one block of rows at a
# time in per-thread buffers and never held whole; BLAS is called from inside the
# OpenMP loop, so the caller limits BLAS to one thread. The blocks' contributions are
# summed in a fixed order, so the result does not depend on the number of threads.

from kernelselect._status cimport Status

cdef Status nystrom_pass_into(int mode,
                              const double* X, Py_ssize_t n,    # IN  (n, d)
                              Py_ssize_t d,
                              const double* shift,              # IN  (d,)
                              double scale,
                              const double* Z, Py_ssize_t m,    # IN  (m, d)
                              const double* V, Py_ssize_t t,    # IN  (m, t) or (n, t)
                              double gamma, int kernel,
                              double* out,                      # OUT (m, t) or (n, t)
                              double* partials,                 # work (groups, m, t)
                              int threads) noexcept nogil

# Partial sums a normal or cross pass over n rows keeps (fixed by n alone).
cdef Py_ssize_t pass_groups(Py_ssize_t n) noexcept nogil
