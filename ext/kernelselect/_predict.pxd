# Streaming cross-kernel products for prediction, for cimport by other Cython code.
#
# out (n_new, m) = K(X_new, X_train) @ C (n_train, m), all float64 C-contiguous,
# without holding K(X_new, X_train): blocks of PREDICT_ROWS rows of new points, one
# block per OpenMP task, each formed in a per-thread buffer (ks_kernel_block) and
# multiplied by C (dgemm). BLAS is called from inside the parallel loop: the caller
# limits BLAS to one thread. Returns 0, or the ks_kernel_block status / 1 when a
# buffer could not be allocated. Every output row is computed by one thread in a
# fixed order, so the result does not depend on the number of threads.

cdef int ks_cross_kernel_matvec(const double* X_new, Py_ssize_t n_new,
                                const double* X_train, Py_ssize_t n_train,
                                Py_ssize_t d, const double* C, Py_ssize_t m,
                                double gamma, int kernel, double* out,
                                int threads) noexcept nogil

# out (n_new, m) = exp(-gamma D) @ C for precomputed distances D (n_new, n_train),
# same blocking and contract as above.
cdef int ks_distance_kernel_matvec(const double* D, Py_ssize_t n_new, Py_ssize_t n_train,
                                   double gamma, const double* C, Py_ssize_t m,
                                   double* out, int threads) noexcept nogil
