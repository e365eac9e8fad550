cdef double _placeholder__kernels(double x) noexcept nogil
