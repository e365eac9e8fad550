"""Cholesky factorisations and symmetric rank-k updates of large matrices, in blocks.

The threaded ?syrk of OpenBLAS 0.3.30 and 0.3.31 (the BLAS in the scipy 1.17 and
numpy 2.3 wheels) ends the process with a segmentation fault at large output orders n
(measured on two threads unless said): n = 15 500 with 1024 columns faulted, 15 000
did not; at 20 000, 256 columns faulted and 128 did not; three threads faulted at
24 000 and four did not at 20 000; one thread never did. Its ?potrf calls that ?syrk
with wide panels, so a 16 000 × 16 000 Cholesky factorisation on two threads faulted
(``scipy.linalg.lapack.dpotrf`` and ``numpy.linalg.cholesky`` alike). ?syr2k faulted
at 20 000 with 1024 columns, not with 256 (LAPACK's ?sytrd, behind eigh, passes 32);
?gemm, ?trsm, ?trtri and ?lauum did not fault, at 20 000 and 30 000.

So no ?potrf or ?syrk call here is given an order above :data:`DIRECT_MAX`. Larger
problems run as the right-looking blocked algorithm (Golub & Van Loan, *Matrix
Computations*, 4th ed., §4.2.9): for each block column of :data:`BLOCK` columns,
?potrf of its diagonal block, ?trsm of the panel below it, and the update of the
trailing matrix by ?syrk on its diagonal blocks and ?gemm below them. The flops are
those of the one call (n³/3 for the factorisation, n²k for the update), the threads
those the caller sets (``blas_for_flops``). The blocks are worked on where they lie,
through the array's leading dimension, so nothing is copied (compiled, without the
interpreter lock: ``cholesky_factor_into`` and ``gram_update_into`` of
``kernelselect._kernels``, also for a cimport). A problem of order at most DIRECT_MAX
is one LAPACK or BLAS call, with the bits it always had.

Only the named triangle (and the diagonal) is read and written: the callers keep
another factor in the other triangle.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.linalg import blas, lapack

from .. import _kernels

__all__ = ["DIRECT_MAX", "BLOCK", "cholesky_in_place", "syrk_in_place", "upper_cholesky",
           "zero_strict_triangle", "mirror_triangle", "gram"]

#: the largest order handed to one ?potrf or ?syrk call (about half the smallest order
#: that faulted on two threads, 15 500)
DIRECT_MAX = 8192

#: columns per block of the blocked algorithms
BLOCK = 4096


def cholesky_in_place(A: np.ndarray, lower: bool, clean: bool = False) -> int:
    """Cholesky factorisation of the named triangle of the square A (float64 or float32),
    in place:
    lower, A = LLᵀ with L in the lower triangle; upper, A = UᵀU with U in the upper
    triangle. The other strict triangle is left as it was, or zeroed with ``clean``.

    Returns LAPACK's info: 0, or i > 0 when the leading minor of order i is not
    positive definite (the factorisation then stopped; A holds partial results).
    """
    n = A.shape[0]
    if n <= DIRECT_MAX:
        potrf = lapack.spotrf if A.dtype == np.float32 else lapack.dpotrf
        c, info = potrf(A, lower=int(lower), clean=int(clean), overwrite_a=1)
        if not np.shares_memory(c, A):
            A[...] = c
        return int(info)
    V, lower_v, copied = _c_ordered(A, lower)
    info = int(_kernels._cholesky_factor_into(V, lower_v, BLOCK))
    if clean:
        zero_strict_triangle(V, upper=lower_v)
    if copied:
        A[...] = V
    return info


def upper_cholesky(G: np.ndarray) -> np.ndarray:
    """R, upper triangular with zeros below, such that G = RᵀR (G is not modified):
    ``scipy.linalg.cholesky(G, lower=False)``, whose bits it has up to order DIRECT_MAX,
    blocked beyond. Raises ``LinAlgError`` when G is not numerically positive
    definite."""
    if G.shape[0] <= DIRECT_MAX:
        return scipy.linalg.cholesky(G, lower=False, check_finite=False)
    R = np.array(G, dtype=np.float64, order="F")
    info = cholesky_in_place(R, lower=False, clean=True)
    if info != 0:
        raise np.linalg.LinAlgError(
            f"{info}-th leading minor of the array is not positive definite")
    return R


def gram(A: np.ndarray) -> np.ndarray:
    """AᵀA (d × d, symmetric, A's float dtype) for A of shape (k, d): numpy's ``A.T @ A``,
    whose bits it has up to d = DIRECT_MAX, and beyond it the blocked update of the
    lower triangle mirrored to the upper one (numpy's product of a matrix with its own
    transpose is one ?syrk call, which faults at large orders)."""
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[1] <= DIRECT_MAX or A.dtype not in (np.float32, np.float64):
        return A.T @ A
    d = A.shape[1]
    G = np.zeros((d, d), dtype=A.dtype)
    _kernels._gram_update_into(np.ascontiguousarray(A), G, A.dtype.type(1.0), True, BLOCK)
    mirror_triangle(G, upper_to_lower=False)
    return G


def syrk_in_place(C: np.ndarray, P: np.ndarray, alpha: float = 1.0,
                  lower: bool = True) -> None:
    """C := C + α·PPᵀ on the named triangle of the square C (n × n, float64 or float32,
    P of its dtype), in place; P of shape (n, k). The other strict triangle is left as
    it was."""
    n = C.shape[0]
    if n <= DIRECT_MAX:
        syrk = blas.ssyrk if C.dtype == np.float32 else blas.dsyrk
        out = syrk(alpha, P, beta=1.0, c=C, trans=0, lower=int(lower), overwrite_c=1)
        if not np.shares_memory(out, C):
            C[...] = out
        return
    # PPᵀ is symmetric: Cᵀ takes the same update
    V, lower_v, copied = _c_ordered(C, lower)
    # the compiled update adds α·QᵀQ for a C-ordered Q (k, n): Q = Pᵀ, a view of a
    # Fortran-ordered P
    Q = np.ascontiguousarray(np.asarray(P, dtype=C.dtype).T)
    _kernels._gram_update_into(Q, V, float(alpha), lower_v, BLOCK)
    if copied:
        C[...] = V


def _c_ordered(A: np.ndarray, lower: bool) -> tuple[np.ndarray, bool, bool]:
    """(a C-ordered array holding A's named triangle, which triangle of it that is,
    whether it is a copy for the caller to write back): A itself; the transpose of a
    Fortran-ordered A, whose other triangle it is; else a copy."""
    if A.flags.c_contiguous:
        return A, lower, False
    if A.flags.f_contiguous:
        return A.T, not lower, False
    return np.ascontiguousarray(A), lower, True


def mirror_triangle(F: np.ndarray, upper_to_lower: bool, block: int = 512) -> None:
    """Copy one strict triangle of the square F onto the other in place, by blocks of
    ``block`` columns (no n × n index arrays)."""
    m = F.shape[0]
    for j0 in range(0, m, block):
        j1 = min(m, j0 + block)
        diagonal = F[j0:j1, j0:j1]
        if upper_to_lower:
            F[j0:j1, :j0] = F[:j0, j0:j1].T
            idx = np.tril_indices(j1 - j0, -1)
        else:
            F[:j0, j0:j1] = F[j0:j1, :j0].T
            idx = np.triu_indices(j1 - j0, 1)
        diagonal[idx] = diagonal.T[idx]


def zero_strict_triangle(V: np.ndarray, upper: bool) -> None:
    """Zero the strict upper (or lower) triangle of the square V in place, by blocks of
    rows (no n × n index or mask arrays)."""
    n = V.shape[0]
    for i0 in range(0, n, BLOCK):
        i1 = min(n, i0 + BLOCK)
        if upper:
            V[i0:i1, i1:] = 0.0
            V[i0:i1, i0:i1] = np.tril(V[i0:i1, i0:i1])
        else:
            V[i0:i1, :i0] = 0.0
            V[i0:i1, i0:i1] = np.triu(V[i0:i1, i0:i1])


def triangular_apply(F: np.ndarray, diag: np.ndarray, lower: bool, trans: bool,
                     solve: bool, scale: float, B: np.ndarray) -> np.ndarray:
    """B := op(F̃)⁻¹(scale·B) (``solve``) or op(F̃)(scale·B), in place and in float64,
    for the named triangle F̃ of the Fortran-ordered square F (float32 or float64) with
    ``diag`` (float64) in place of its diagonal, op(F̃) = F̃ᵀ with ``trans``; B
    Fortran-ordered float64 (m, t). F's diagonal and other triangle are not read.

    The arithmetic is float64 whatever F's dtype, so a float32 factor acts as an exactly
    linear operator up to float64 rounding (``dtrsm`` / ``dtrmm`` would need a float64
    copy of F). Returns B."""
    # Fᵀ is C-ordered; F's lower triangle is the transpose of Fᵀ's upper one
    _kernels._triangular_apply_into(F.T, np.ascontiguousarray(diag, dtype=np.float64),
                                    not lower, not trans, solve, float(scale), B.T)
    return B
