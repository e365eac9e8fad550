# Streaming cross-kernel products for prediction, for `cimport kernelselect._predict`.
# Conventions as in _kernels.pxd (pointers then sizes; inputs, parameters, outputs,
# threads; a kernelselect._status Status returned).
#
# out (n_new, m) = K(X_new, X_train) @ C (n_train, m), all float64 C-contiguous,
# without holding K(X_new, X_train): blocks of PREDICT_ROWS rows of new points, one
# block per OpenMP task, each formed in a per-thread buffer (kernel_block_into) and
# multiplied by C (dgemm). BLAS is called from inside the parallel loop: the caller
# limits BLAS to one thread. Every output row is computed by one thread in a fixed
# order, so the result does not depend on the number of threads.

from kernelselect._status cimport Status

cdef Status cross_kernel_matvec_into(
        const double* X_new, Py_ssize_t n_new,        # IN  (n_new, d)
        const double* X_train, Py_ssize_t n_train,    # IN  (n_train, d)
        Py_ssize_t d,
        const double* C, Py_ssize_t m,                # IN  (n_train, m)
        double gamma, int kernel,
        double* out,                                  # OUT (n_new, m)
        int threads) noexcept nogil

# out (n_new, m) = exp(-gamma D) @ C for precomputed distances D (n_new, n_train),
# same blocking and contract as above.
cdef Status distance_kernel_matvec_into(
        const double* D, Py_ssize_t n_new, Py_ssize_t n_train,   # IN  (n_new, n_train)
        const double* C, Py_ssize_t m,                           # IN  (n_train, m)
        double gamma,
        double* out,                                             # OUT (n_new, m)
        int threads) noexcept nogil
