# Kernel-matrix primitives, for `cimport kernelselect._kernels`.
#
# Conventions of every kernelselect .pxd: C-contiguous (row-major) arrays passed as
# pointers followed by their sizes, inputs first, then parameters, then outputs, then
# the OpenMP team size `threads`; `noexcept nogil`; a Status returned
# (kernelselect._status: OK, or why the outputs are incomplete). Functions that write
# into caller-owned outputs end in `_into`.
#
# `kernel` is 0 for the Gaussian kernel exp(-gamma ||x - z||^2) and 1 for the
# Laplacian kernel exp(-gamma ||x - z||_1). Sizes passed to BLAS (d, nz, m) must be
# below 2**31 (else OVERFLOW).
#
# The Gaussian kernels call BLAS (scipy.linalg.cython_blas) from inside their parallel
# loop, so the caller should limit BLAS to one thread around them (threadpoolctl).
# For accuracy of the ||x||^2 + ||z||^2 - 2 x.z expansion, centre the data first (the
# kernel values do not change under a common translation).

from cython cimport floating

from kernelselect._status cimport Status

# K[i, j] = kappa(X[i], Z[j]).
cdef Status kernel_block_into(const floating* X, Py_ssize_t nx,   # IN  (nx, d)
                              const floating* Z, Py_ssize_t nz,   # IN  (nz, d)
                              Py_ssize_t d,
                              double gamma, int kernel,
                              floating* K,                        # OUT (nx, nz)
                              int threads) noexcept nogil

# Y = K(X, X) @ V without holding K.
cdef Status kernel_matvec_into(const floating* X,                 # IN  (n, d)
                               Py_ssize_t n, Py_ssize_t d,
                               const floating* V, Py_ssize_t m,   # IN  (n, m)
                               double gamma, int kernel,
                               floating* Y,                       # OUT (n, m)
                               int threads) noexcept nogil

# One streaming pass over K(X, X):
#   class_row_sums[i, c] = sum over j with codes[j] == c of K[i, j]   (n, n_classes)
#   row_sq_sums[i]       = sum over j of K[i, j]^2                     (n,)
# codes (n,) in [0, n_classes). Both outputs are overwritten; each row is summed in a
# fixed order, so the result does not depend on the number of threads.
cdef Status kernel_sums_into(const floating* X,                   # IN  (n, d)
                             Py_ssize_t n, Py_ssize_t d,
                             const Py_ssize_t* codes,             # IN  (n,)
                             Py_ssize_t n_classes,
                             double gamma, int kernel,
                             double* class_row_sums,              # OUT (n, n_classes)
                             double* row_sq_sums,                 # OUT (n,)
                             int threads) noexcept nogil

# The upper triangle of G += PᵀP (one BLAS syrk; G's strict lower triangle untouched).
cdef Status gram_upper_into(const floating* P,                    # IN  (rows, cols)
                            Py_ssize_t rows, Py_ssize_t cols,
                            floating* G) noexcept nogil         # IN/OUT (cols, cols)

# The eigenvalues w (ascending) and unit eigenvectors of the symmetric A, by LAPACK's
# divide-and-conquer ?syevd (scipy.linalg.cython_lapack), the driver and workspace of
# scipy.linalg.eigh(A, driver="evd"), whose result it reproduces bit for bit: A's
# lower triangle (A[i, j], i >= j) is read, row j of Z is the eigenvector of w[j].
# BAD_ARGUMENT for a non-finite entry of that triangle, NOT_CONVERGED when ?syevd
# reports info > 0. BLAS threads as set around the call.
cdef Status symmetric_eigh_into(const floating* A,                # IN  (n, n)
                                Py_ssize_t n,
                                floating* w,                      # OUT (n,)
                                floating* Z) noexcept nogil       # OUT (n, n), not A

# T = L⁻ᵀ (upper triangular; the strictly lower part zeroed) for the Cholesky factor
# W = LLᵀ of the symmetric W, by LAPACK's ?potrf and ?trtri (scipy.linalg.cython_lapack),
# the bits of scipy.linalg.lapack.dpotrf(W, lower=1, clean=1) then dtrtri(L, lower=1),
# transposed. W's upper triangle is read. outcome: 0, or 1 when W is not numerically
# positive definite, 2 when L is singular (T undefined then). BAD_ARGUMENT for a
# non-finite entry of that triangle. BLAS threads as set around the call.
cdef Status cholesky_inverse_into(const floating* W,              # IN  (n, n)
                                  Py_ssize_t n,
                                  floating* T,                    # OUT (n, n), not W
                                  int* outcome) noexcept nogil    # OUT

# The Cholesky factor of the symmetric A in place: its lower triangle (A[i, j], i >= j)
# replaced by L with A = LLᵀ (``lower``), or its upper one by U with A = UᵀU; the other
# strict triangle untouched. Only that triangle is read. By LAPACK's ?potrf
# (scipy.linalg.cython_lapack) on diagonal blocks of ``block`` columns, ?trsm and the
# blocked update of gram_update_into between them (right-looking); block 0 is one ?potrf
# call up to order 8192 (its bits) and blocks of 4096 beyond: the threaded ?syrk of
# OpenBLAS 0.3.30/0.3.31, which its ?potrf calls, faults above about 7600 rows per
# thread. info: LAPACK's, 0 or the order of the first leading minor that is not
# positive definite. BAD_ARGUMENT for a non-finite entry of the triangle read. BLAS
# threads as set around the call.
cdef Status cholesky_factor_into(floating* A,                     # IN/OUT (n, n)
                                 Py_ssize_t n, bint lower,
                                 Py_ssize_t block,
                                 int* info) noexcept nogil        # OUT

# The lower (``lower``) or upper triangle of G += alpha·PᵀP, the other strict triangle
# untouched: ?syrk on diagonal blocks of ``block`` columns, ?gemm off them; block 0 is
# one ?syrk call up to order 8192 and blocks of 4096 beyond (as cholesky_factor_into).
# BLAS threads as set around the call.
cdef Status gram_update_into(const floating* P,                   # IN  (rows, cols)
                             Py_ssize_t rows, Py_ssize_t cols,
                             floating alpha, bint lower,
                             Py_ssize_t block,
                             floating* G) noexcept nogil         # IN/OUT (cols, cols)

# B[k] := op(M̃)⁻¹(scale·B[k]) (solve) or op(M̃)(scale·B[k]) for each of the t rows of
# B (t, m), in float64: M̃ the lower or upper triangle of the row-major M (m, m) with
# diag (float64) in place of its diagonal, op(M̃) = M̃ᵀ with trans; the other triangle
# and M's diagonal are not read. A float32 factor inside a float64 iteration: the
# operator is then exactly linear in B up to float64 rounding. One thread, no BLAS.
# BAD_ARGUMENT for a non-finite diag entry, or a zero one to solve.
cdef Status triangular_apply_into(const floating* M,               # IN  (m, m)
                                  Py_ssize_t m,
                                  const double* diag,               # IN  (m,)
                                  bint lower, bint trans, bint solve,
                                  double scale,
                                  double* B,                        # IN/OUT (t, m)
                                  Py_ssize_t t) noexcept nogil
