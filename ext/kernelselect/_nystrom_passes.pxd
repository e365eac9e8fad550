# Streamed passes over the Nyström block K(X, Z), for cimport by other Cython code.
#
# mode 0 (normal): out (m, t) = K(X, Z)^T (K(X, Z) V), V (m, t)
# mode 1 (cross):  out (m, t) = K(X, Z)^T V,           V (n, t)
# mode 2 (apply):  out (n, t) = K(X, Z) V,             V (m, t)
#
# X (n, d) rows are used as (x - shift) * scale; Z (m, d) must already be shifted
# and scaled alike. All arrays float64, C-contiguous. ``partials`` holds
# ks_pass_groups(n) * m * t doubles (modes 0 and 1; unused by mode 2). K(X, Z) is
# formed one block of rows at a time in per-thread buffers and never held whole;
# BLAS is called from inside the OpenMP loop, so the caller limits BLAS to one
# thread. Results do not depend on the number of threads. Returns 0, 1 when a
# buffer could not be allocated, 2 for an unknown kernel code, 3 for an unknown mode.

cdef int ks_nystrom_pass(int mode, const double* X, Py_ssize_t n, Py_ssize_t d,
                         const double* shift, double scale,
                         const double* Z, Py_ssize_t m,
                         const double* V, Py_ssize_t t,
                         double gamma, int kernel,
                         double* out, double* partials, int threads) noexcept nogil

# Number of partial sums of a normal or cross pass over n rows (fixed by n alone).
cdef Py_ssize_t ks_pass_groups(Py_ssize_t n) noexcept nogil
