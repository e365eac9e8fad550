# What a compiled kernel reports, for `cimport kernelselect._status`.
#
# Every nogil entry point of kernelselect's .pxd files returns a Status. Its code is
# OK, or says why the outputs are incomplete; the other fields say enough to write the
# error message: the bytes of the allocation that failed (NO_MEMORY), or the argument
# at fault and the rule it breaks (BAD_ARGUMENT, OVERFLOW), as static C strings that a
# nogil caller may print. check_status turns a Status into the matching Python
# exception; call it, with the GIL, after the nogil block.
#
# Nothing here is a module at run time: cimporting it adds no import.

cdef enum StatusCode:
    OK = 0
    NO_MEMORY = 1       # a work buffer could not be allocated
    BAD_ARGUMENT = 2    # an argument is outside its domain (e.g. an unknown kernel code)
    OVERFLOW = 3        # a size does not fit the 32-bit integers BLAS takes
    NOT_CONVERGED = 4   # an iterative LAPACK routine reported that it did not converge

ctypedef struct Status:
    StatusCode code
    size_t nbytes           # NO_MEMORY: bytes requested by the failed allocation(s)
    const char* argument    # BAD_ARGUMENT, OVERFLOW: the argument's name;
                            # NOT_CONVERGED: the routine's name
    const char* rule        # BAD_ARGUMENT, OVERFLOW: what the argument must satisfy


cdef inline Status status_ok() noexcept nogil:
    return Status(OK, 0, NULL, NULL)


cdef inline Status status_no_memory(size_t nbytes) noexcept nogil:
    return Status(NO_MEMORY, nbytes, NULL, NULL)


cdef inline Status status_bad_argument(const char* argument, const char* rule) noexcept nogil:
    return Status(BAD_ARGUMENT, 0, argument, rule)


cdef inline Status status_overflow(const char* argument) noexcept nogil:
    return Status(OVERFLOW, 0, argument, b"below 2**31 (a BLAS dimension)")


cdef inline Status status_not_converged(const char* routine) noexcept nogil:
    return Status(NOT_CONVERGED, 0, routine, NULL)


cdef inline int check_status(Status status, str function) except -1:
    """Raise the exception a non-OK ``status`` of ``function`` stands for.

    NO_MEMORY: MemoryError with the size; BAD_ARGUMENT: ValueError naming the argument
    and its rule; OVERFLOW: OverflowError naming the argument; NOT_CONVERGED:
    numpy.linalg.LinAlgError (a ValueError) naming the routine.
    """
    cdef double mib = <double>status.nbytes / 1048576.0
    if status.code == OK:
        return 0
    if status.code == NO_MEMORY:
        raise MemoryError(
            f"{function}: could not allocate {status.nbytes} bytes "
            f"({mib:.1f} MiB) of work buffers"
        )
    argument = status.argument.decode() if status.argument != NULL else "an argument"
    if status.code == NOT_CONVERGED:
        from numpy.linalg import LinAlgError
        raise LinAlgError(f"{function}: LAPACK's {argument} did not converge")
    rule = status.rule.decode() if status.rule != NULL else "valid"
    if status.code == OVERFLOW:
        raise OverflowError(f"{function}: {argument} must be {rule}")
    return require(False, function, argument, rule)


cdef inline int require(bint holds, str function, str argument, str rule) except -1:
    """ValueError "{function}: {argument} must be {rule}" unless ``holds``; for the
    checks the Python bindings make on their memoryviews before taking pointers."""
    if not holds:
        raise ValueError(f"{function}: {argument} must be {rule}")
    return 0
