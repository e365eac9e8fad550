# Kernel-matrix primitives for cimport by other Cython code.
#
# All kernels are ``noexcept nogil`` and work on C-contiguous (row-major) arrays
# passed as pointers. ``kernel`` is 0 for the Gaussian kernel exp(-gamma ||x - z||^2)
# and 1 for the Laplacian kernel exp(-gamma ||x - z||_1). ``threads`` is the
# OpenMP team size. They return 0 on success, KS_ERR_NOMEM when a work buffer
# could not be allocated (outputs are then incomplete) and KS_ERR_KERNEL for an
# unknown kernel code.
#
# The Gaussian kernels call BLAS (scipy.linalg.cython_blas); ks_kernel_matvec and
# ks_kernel_sums call it from inside their parallel loop, so the caller should
# limit BLAS to one thread around them (threadpoolctl). For accuracy of the
# ||x||^2 + ||z||^2 - 2 x.z expansion, centre the data first (the kernel values
# do not change under a common translation).

from cython cimport floating

cdef enum:
    KS_OK = 0
    KS_ERR_NOMEM = 1
    KS_ERR_KERNEL = 2

# K[i, j] = kappa(X[i], Z[j]); X (nx, d), Z (nz, d), K (nx, nz).
cdef int ks_kernel_block(const floating* X, Py_ssize_t nx,
                         const floating* Z, Py_ssize_t nz, Py_ssize_t d,
                         double gamma, int kernel, floating* K,
                         int threads) noexcept nogil

# Y = K(X, X) @ V without holding K; X (n, d), V and Y (n, m), Y overwritten.
cdef int ks_kernel_matvec(const floating* X, Py_ssize_t n, Py_ssize_t d,
                          const floating* V, Py_ssize_t m,
                          double gamma, int kernel, floating* Y,
                          int threads) noexcept nogil

# One streaming pass over K(X, X):
#   class_row_sums[i, c] = sum over j with codes[j] == c of K[i, j]   (n, n_classes)
#   row_sq_sums[i]       = sum over j of K[i, j]^2                     (n,)
# Both are overwritten; each row is summed in a fixed order, so the result does
# not depend on the number of threads.
cdef int ks_kernel_sums(const floating* X, Py_ssize_t n, Py_ssize_t d,
                        const Py_ssize_t* codes, Py_ssize_t n_classes,
                        double gamma, int kernel,
                        double* class_row_sums, double* row_sq_sums,
                        int threads) noexcept nogil
