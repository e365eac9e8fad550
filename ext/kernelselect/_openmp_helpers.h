/* Thread-count helpers that compile with and without OpenMP. */
#ifndef KERNELSELECT_OPENMP_HELPERS_H
#define KERNELSELECT_OPENMP_HELPERS_H

#ifdef _OPENMP
#include <omp.h>
static int ks_openmp_enabled(void) { return 1; }
static int ks_omp_max_threads(void) { return omp_get_max_threads(); }
static int ks_omp_num_procs(void) { return omp_get_num_procs(); }
static int ks_omp_thread_num(void) { return omp_get_thread_num(); }
#else
static int ks_openmp_enabled(void) { return 0; }
static int ks_omp_max_threads(void) { return 1; }
static int ks_omp_num_procs(void) { return 1; }
static int ks_omp_thread_num(void) { return 0; }
#endif

#endif
