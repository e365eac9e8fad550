# Song–Xu multilevel circulant columns, for `cimport kernelselect._mcm`.
# Conventions as in _kernels.pxd (pointers then sizes; inputs, parameters, outputs,
# threads; a kernelselect._status Status returned).
#
# song_xu_factors_into fills, for each level s < p, the 1-D column of length m[s]
#     f_s[0] = 1,  f_s[i] = sum over the set {i, m_s - i} of e_s(j),  i >= 1,
# with e_s(j) = exp(-gamma (j h_s)^2) (kernel 0, Gaussian) or exp(-gamma j h_s)
# (kernel 1, Laplacian), into `factors` (length sum(m), level after level).
# song_xu_column_into writes the p-level column u = f_0 (x) f_1 (x) ... (x) f_{p-1}
# (C order, length prod(m)) into `out` with `threads` OpenMP threads.
# m (p,) holds grid sizes >= 1, h (p,) spacings > 0.

from kernelselect._status cimport Status

cdef Status song_xu_factors_into(const Py_ssize_t* m,     # IN  (p,)
                                 const double* h,         # IN  (p,)
                                 Py_ssize_t p,
                                 double gamma, int kernel,
                                 double* factors          # OUT (sum(m),)
                                 ) noexcept nogil

cdef Status song_xu_column_into(const Py_ssize_t* m,      # IN  (p,)
                                const double* h,          # IN  (p,)
                                Py_ssize_t p,
                                double gamma, int kernel,
                                double* out,              # OUT (prod(m),)
                                int threads) noexcept nogil
