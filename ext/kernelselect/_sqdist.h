/*
 * Squared Euclidean distances of one row to points held transposed, for the Gaussian
 * kernels with few features (no BLAS call, no packing, no cancellation).
 *
 * API (static inline, nogil-safe, no allocation):
 *
 *   void ks_sq_dist_row_f64(const double *x, const double *ZT, ptrdiff_t ldzt,
 *                           ptrdiff_t nz, ptrdiff_t d, double *row)
 *   void ks_sq_dist_row_f32(... float ...)
 *
 *       row[j] = sum_k (ZT[k * ldzt + j] - x[k])^2,   j = 0 .. nz-1,
 *
 *   summed over k = 0 .. d-1 in increasing order; d must be at most KS_SQ_DIST_MAX_D.
 *
 * Why: the distances of a pass's 16-row sub-block to a tile of 512 centres went
 * through BLAS gemm with k = d (10 features), which packs the centres and zeroes the
 * output on every call, and the expansion ||x||^2 + ||z||^2 - 2 x.z then needed a
 * second loop that recomputed near-duplicate pairs. With d this small the differences
 * themselves cost no more (the exp and the products dominate), are never negative, are
 * exactly 0 for identical points, and lose nothing to cancellation: on every row a
 * centre at alpha/n = 1e-10 the conjugate gradients converged where the expansion
 * without fused multiply-adds left them stalled above their tolerance.
 *
 * Determinism: the loop body only ever sees whole blocks of KS_SQ_DIST_BLOCK columns;
 * the tail is copied into a zero-padded block and goes through the same body, so an
 * entry's value does not depend on where its column sits (as in _vecmath.h).
 */
#ifndef KERNELSELECT_SQDIST_H
#define KERNELSELECT_SQDIST_H

#include <stddef.h>
#include <string.h>

#include "_vecmath.h"

/* Most features the direct sum handles (the transposed tile of 512 centres,
 * 512 * 32 doubles = 128 KiB, stays in a core's L2); beyond, the callers use gemm. */
#define KS_SQ_DIST_MAX_D 32
/* Columns a block of the body holds in registers: eight independent sums of 8 doubles
 * (AVX-512), so that the additions' latency no longer sets the pace (with 16 columns
 * the body took twice as long). A multiple of KS_VEC_BLOCK and a divisor of the
 * passes' 512-centre tiles. */
#define KS_SQ_DIST_BLOCK 64

/* Each feature's term is a subtraction and a fused multiply-add where the clone's
 * target has one (the AVX-512 clone; the build's c11 otherwise keeps a multiply and an
 * add): two operations instead of three, and the square is rounded once.  The bits
 * then depend on the clone picked at load time, as libmvec's do (_vecmath.h), never on
 * the thread count or the column's position. */
#if defined(__GNUC__) && !defined(__clang__)
#define KS_SQ_DIST_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define KS_SQ_DIST_CONTRACT
#endif

#define KS__SQ_DIST_BODY(NAME, T)                                                     \
KS_VEC_CLONES KS_SQ_DIST_CONTRACT static void                                         \
NAME(const T *restrict x, const T *restrict ZT, ptrdiff_t ldzt, ptrdiff_t n,          \
     ptrdiff_t d, T *restrict row)                                                    \
{                                                                                     \
    for (ptrdiff_t j0 = 0; j0 < n; j0 += KS_SQ_DIST_BLOCK) {                          \
        T acc[KS_SQ_DIST_BLOCK];                                                      \
        for (int l = 0; l < KS_SQ_DIST_BLOCK; l++)                                    \
            acc[l] = 0;                                                               \
        for (ptrdiff_t k = 0; k < d; k++) {                                           \
            const T xk = x[k];                                                        \
            const T *restrict zk = ZT + k * ldzt + j0;                                \
            KS_SIMD_LOOP                                                              \
            for (int l = 0; l < KS_SQ_DIST_BLOCK; l++) {                              \
                const T u = zk[l] - xk;                                               \
                acc[l] += u * u;                                                      \
            }                                                                         \
        }                                                                             \
        for (int l = 0; l < KS_SQ_DIST_BLOCK; l++)                                    \
            row[j0 + l] = acc[l];                                                     \
    }                                                                                 \
}

KS__SQ_DIST_BODY(ks__sq_dist_body_f64, double)
KS__SQ_DIST_BODY(ks__sq_dist_body_f32, float)

#define KS__SQ_DIST_ROW(NAME, BODY, T)                                                \
static inline void                                                                    \
NAME(const T *x, const T *ZT, ptrdiff_t ldzt, ptrdiff_t nz, ptrdiff_t d, T *row)      \
{                                                                                     \
    ptrdiff_t nb = nz - nz % KS_SQ_DIST_BLOCK, r = nz - nb;                           \
    if (nb > 0)                                                                       \
        BODY(x, ZT, ldzt, nb, d, row);                                                \
    if (r > 0) {                                                                      \
        T zt[KS_SQ_DIST_MAX_D * KS_SQ_DIST_BLOCK], out[KS_SQ_DIST_BLOCK];             \
        memset(zt, 0, (size_t)d * KS_SQ_DIST_BLOCK * sizeof(T));                      \
        for (ptrdiff_t k = 0; k < d; k++)                                             \
            memcpy(zt + k * KS_SQ_DIST_BLOCK, ZT + k * ldzt + nb,                     \
                   (size_t)r * sizeof(T));                                            \
        BODY(x, zt, KS_SQ_DIST_BLOCK, KS_SQ_DIST_BLOCK, d, out);                      \
        memcpy(row + nb, out, (size_t)r * sizeof(T));                                 \
    }                                                                                 \
}

KS__SQ_DIST_ROW(ks_sq_dist_row_f64, ks__sq_dist_body_f64, double)
KS__SQ_DIST_ROW(ks_sq_dist_row_f32, ks__sq_dist_body_f32, float)

#endif
