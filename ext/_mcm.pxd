cdef double _placeholder__mcm(double x) noexcept nogil
