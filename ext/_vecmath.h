/*
 * In-place elementwise cos / exp loops for the compiled kernels.
 *
 * API (all functions are static inline, nogil-safe, no allocation):
 *
 *   ks_cos_shift_scale_f64(double *x, const double *shift, ptrdiff_t n, double scale)
 *   ks_cos_shift_scale_f32(float  *x, const float  *shift, ptrdiff_t n, float  scale)
 *       x[k] <- scale * cos(x[k] + shift[k]),  k = 0 .. n-1
 *       (the random Fourier feature map: x holds x_i . w_k, shift holds b_k)
 *
 *   ks_cos_scale_f64(double *x, ptrdiff_t n, double scale)
 *   ks_cos_scale_f32(float  *x, ptrdiff_t n, float  scale)
 *       x[k] <- scale * cos(x[k])
 *
 *   ks_exp_neg_scaled_f64(double *x, ptrdiff_t n, double gamma)
 *   ks_exp_neg_scaled_f32(float  *x, ptrdiff_t n, float  gamma)
 *       x[k] <- exp(-gamma * x[k])
 *       (radial kernels: x holds squared Euclidean or L1 distances)
 *
 *   const char *ks_vecmath_backend(void)   "libmvec" or "scalar"
 *
 * x and shift must not overlap.  Any n >= 0 is fine; no alignment is required.
 *
 * From Cython:
 *
 *   cdef extern from "_vecmath.h" nogil:
 *       void ks_exp_neg_scaled_f64(double *x, Py_ssize_t n, double gamma)
 *
 * (the build puts ext/ on the include path and links libmvec when it is used).
 *
 * Backends.  When the build defines KS_HAVE_LIBMVEC (meson sets it after checking
 * that a program using this header links against glibc's libmvec), cos/exp are
 * redeclared with the OpenMP "declare simd notinbranch" attribute, so gcc
 * vectorises the loops with glibc's vector variants (_ZGV*_cos, _ZGV*_exp).
 * This does NOT need -ffast-math (which would also link crtfastmath.o and switch
 * the whole process to flush-to-zero), and IEEE semantics of everything else
 * are kept.  On x86-64 the loops are compiled for SSE2, AVX2 and AVX-512 and the
 * widest one the CPU supports is picked at load time (gcc target_clones).
 * glibc documents its vector variants to within 4 ulp; measured here over
 * |t| <= 1e4: cos 3.5 ulp (double), 2.4 ulp (float).  Without libmvec the
 * loops call the scalar libm functions (correctly rounded to ~0.5 ulp).
 * The vector variant chosen depends on the CPU, so the last bits of a result may
 * differ between machines (never between thread counts); building with
 * -DKS_NO_LIBMVEC (e.g. CFLAGS) forces the scalar loops.
 *
 * Determinism.  A given element's result must not depend on where it sits in
 * the array (otherwise chunking, and so the thread count, could change bits).
 * The vector loops therefore only ever see lengths that are a multiple of
 * KS_VEC_BLOCK; the tail is copied into a zero-padded block and processed by
 * the same loop, so every element goes through the same vector variant.
 */
#ifndef KERNELSELECT_VECMATH_H
#define KERNELSELECT_VECMATH_H

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Elements per vector block: a multiple of every vector width used (2..16). */
#define KS_VEC_BLOCK 16

#if defined(KS_HAVE_LIBMVEC) && !defined(KS_NO_LIBMVEC) && defined(__GNUC__) && !defined(__clang__)
#define KS_USE_LIBMVEC 1
extern double cos(double) __attribute__((simd("notinbranch")));
extern float cosf(float) __attribute__((simd("notinbranch")));
extern double exp(double) __attribute__((simd("notinbranch")));
extern float expf(float) __attribute__((simd("notinbranch")));
#if defined(__x86_64__)
#define KS_VEC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KS_VEC_CLONES
#endif
#define KS_SIMD_LOOP _Pragma("omp simd")
#else
#define KS_USE_LIBMVEC 0
#define KS_VEC_CLONES
#define KS_SIMD_LOOP
#endif

static inline const char *ks_vecmath_backend(void)
{
    return KS_USE_LIBMVEC ? "libmvec" : "scalar";
}

/* ---- loop bodies: n is a multiple of KS_VEC_BLOCK when KS_USE_LIBMVEC ---- */

KS_VEC_CLONES static void
ks__cos_body_f64(double *restrict x, const double *restrict shift, ptrdiff_t n,
                 double scale)
{
    KS_SIMD_LOOP
    for (ptrdiff_t k = 0; k < n; k++)
        x[k] = scale * cos(x[k] + shift[k]);
}

KS_VEC_CLONES static void
ks__cos_body_f32(float *restrict x, const float *restrict shift, ptrdiff_t n,
                 float scale)
{
    KS_SIMD_LOOP
    for (ptrdiff_t k = 0; k < n; k++)
        x[k] = scale * cosf(x[k] + shift[k]);
}

KS_VEC_CLONES static void
ks__cos_scale_body_f64(double *restrict x, ptrdiff_t n, double scale)
{
    KS_SIMD_LOOP
    for (ptrdiff_t k = 0; k < n; k++)
        x[k] = scale * cos(x[k]);
}

KS_VEC_CLONES static void
ks__cos_scale_body_f32(float *restrict x, ptrdiff_t n, float scale)
{
    KS_SIMD_LOOP
    for (ptrdiff_t k = 0; k < n; k++)
        x[k] = scale * cosf(x[k]);
}

KS_VEC_CLONES static void
ks__exp_body_f64(double *restrict x, ptrdiff_t n, double gamma)
{
    KS_SIMD_LOOP
    for (ptrdiff_t k = 0; k < n; k++)
        x[k] = exp(-gamma * x[k]);
}

KS_VEC_CLONES static void
ks__exp_body_f32(float *restrict x, ptrdiff_t n, float gamma)
{
    KS_SIMD_LOOP
    for (ptrdiff_t k = 0; k < n; k++)
        x[k] = expf(-gamma * x[k]);
}

/* ---- public loops ---- */

static inline void
ks_cos_shift_scale_f64(double *x, const double *shift, ptrdiff_t n, double scale)
{
#if KS_USE_LIBMVEC
    ptrdiff_t nb = n - n % KS_VEC_BLOCK, r = n - nb;
    ks__cos_body_f64(x, shift, nb, scale);
    if (r > 0) {
        double bx[KS_VEC_BLOCK] = {0}, bs[KS_VEC_BLOCK] = {0};
        memcpy(bx, x + nb, (size_t)r * sizeof(double));
        memcpy(bs, shift + nb, (size_t)r * sizeof(double));
        ks__cos_body_f64(bx, bs, KS_VEC_BLOCK, scale);
        memcpy(x + nb, bx, (size_t)r * sizeof(double));
    }
#else
    ks__cos_body_f64(x, shift, n, scale);
#endif
}

static inline void
ks_cos_shift_scale_f32(float *x, const float *shift, ptrdiff_t n, float scale)
{
#if KS_USE_LIBMVEC
    ptrdiff_t nb = n - n % KS_VEC_BLOCK, r = n - nb;
    ks__cos_body_f32(x, shift, nb, scale);
    if (r > 0) {
        float bx[KS_VEC_BLOCK] = {0}, bs[KS_VEC_BLOCK] = {0};
        memcpy(bx, x + nb, (size_t)r * sizeof(float));
        memcpy(bs, shift + nb, (size_t)r * sizeof(float));
        ks__cos_body_f32(bx, bs, KS_VEC_BLOCK, scale);
        memcpy(x + nb, bx, (size_t)r * sizeof(float));
    }
#else
    ks__cos_body_f32(x, shift, n, scale);
#endif
}

static inline void
ks_cos_scale_f64(double *x, ptrdiff_t n, double scale)
{
#if KS_USE_LIBMVEC
    ptrdiff_t nb = n - n % KS_VEC_BLOCK, r = n - nb;
    ks__cos_scale_body_f64(x, nb, scale);
    if (r > 0) {
        double bx[KS_VEC_BLOCK] = {0};
        memcpy(bx, x + nb, (size_t)r * sizeof(double));
        ks__cos_scale_body_f64(bx, KS_VEC_BLOCK, scale);
        memcpy(x + nb, bx, (size_t)r * sizeof(double));
    }
#else
    ks__cos_scale_body_f64(x, n, scale);
#endif
}

static inline void
ks_cos_scale_f32(float *x, ptrdiff_t n, float scale)
{
#if KS_USE_LIBMVEC
    ptrdiff_t nb = n - n % KS_VEC_BLOCK, r = n - nb;
    ks__cos_scale_body_f32(x, nb, scale);
    if (r > 0) {
        float bx[KS_VEC_BLOCK] = {0};
        memcpy(bx, x + nb, (size_t)r * sizeof(float));
        ks__cos_scale_body_f32(bx, KS_VEC_BLOCK, scale);
        memcpy(x + nb, bx, (size_t)r * sizeof(float));
    }
#else
    ks__cos_scale_body_f32(x, n, scale);
#endif
}

static inline void
ks_exp_neg_scaled_f64(double *x, ptrdiff_t n, double gamma)
{
#if KS_USE_LIBMVEC
    ptrdiff_t nb = n - n % KS_VEC_BLOCK, r = n - nb;
    ks__exp_body_f64(x, nb, gamma);
    if (r > 0) {
        double bx[KS_VEC_BLOCK] = {0};
        memcpy(bx, x + nb, (size_t)r * sizeof(double));
        ks__exp_body_f64(bx, KS_VEC_BLOCK, gamma);
        memcpy(x + nb, bx, (size_t)r * sizeof(double));
    }
#else
    ks__exp_body_f64(x, n, gamma);
#endif
}

static inline void
ks_exp_neg_scaled_f32(float *x, ptrdiff_t n, float gamma)
{
#if KS_USE_LIBMVEC
    ptrdiff_t nb = n - n % KS_VEC_BLOCK, r = n - nb;
    ks__exp_body_f32(x, nb, gamma);
    if (r > 0) {
        float bx[KS_VEC_BLOCK] = {0};
        memcpy(bx, x + nb, (size_t)r * sizeof(float));
        ks__exp_body_f32(bx, KS_VEC_BLOCK, gamma);
        memcpy(x + nb, bx, (size_t)r * sizeof(float));
    }
#else
    ks__exp_body_f32(x, n, gamma);
#endif
}

#endif /* KERNELSELECT_VECMATH_H */
