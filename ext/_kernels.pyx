from scipy.linalg.cython_blas cimport dgemm
cdef double _placeholder__kernels(double x) noexcept nogil:
    return x
