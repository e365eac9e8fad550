cdef double _placeholder__rff(double x) noexcept nogil
