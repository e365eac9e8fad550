# cython: language_level=3
"""OpenMP facts about the compiled kernels."""

cdef extern from "_openmp_helpers.h":
    int ks_openmp_enabled() nogil
    int ks_omp_max_threads() nogil
    int ks_omp_num_procs() nogil


def openmp_enabled():
    """True when the extension modules were compiled with OpenMP."""
    return bool(ks_openmp_enabled())


def omp_max_threads():
    """OpenMP's default team size (honours ``OMP_NUM_THREADS``); 1 without OpenMP."""
    return ks_omp_max_threads()


def omp_num_procs():
    """Processors OpenMP sees; 1 without OpenMP."""
    return ks_omp_num_procs()
