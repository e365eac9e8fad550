# Song–Xu multilevel circulant columns, for `cimport kernelselect._mcm`.
#
# song_xu_factors fills, for each level s, the 1-D column of length m[s]
#     f_s[0] = 1,  f_s[i] = sum over the set {i, m_s - i} of e_s(j),  i >= 1,
# with e_s(j) = exp(-gamma (j h_s)^2) (kernel 0, Gaussian) or exp(-gamma j h_s)
# (kernel 1, Laplacian), into `factors` (length sum(m), level after level).
# song_xu_fill writes the p-level column u = f_0 (x) f_1 (x) ... (x) f_{p-1}
# (C order, length prod(m)) into `out` with `n_threads` OpenMP threads.
# Both return 0, -1 for inconsistent arguments, -2 when memory runs out.

cdef int song_xu_factors(const Py_ssize_t[::1] m,   # IN  (p,) grid sizes, each >= 1
                         const double[::1] h,       # IN  (p,) spacings, > 0
                         double gamma, int kernel,
                         double[::1] factors        # OUT (sum(m),)
                         ) noexcept nogil

cdef int song_xu_fill(const Py_ssize_t[::1] m,      # IN  (p,)
                      const double[::1] h,          # IN  (p,)
                      double gamma, int kernel,
                      double[::1] out,              # OUT (prod(m),)
                      int n_threads) noexcept nogil
