"""Kernel blocks, streaming kernel-matrix products and streaming kernel sums.

Validated wrappers over the OpenMP kernels of ``kernelselect._kernels``. The kernel
is κ(x, z) = exp(−γ‖x − z‖²) (Gaussian) or exp(−γ‖x − z‖₁) (Laplacian).
``kernel_matvec`` and ``kernel_sums`` walk K(X, X) tile by tile and never hold it:
their memory is O(n·m) (resp. O(n·C)) plus one 128 × 512 tile per thread.

Each public function checks its arguments, conditions the points (:class:`Points`) and
calls an unchecked core (``*_unchecked``), the pattern of SciPy's
``check_finite=False``. The operators condition X once per data set and call the
cores for every γ, so nothing is checked, translated or copied again per γ.
"""

from __future__ import annotations

import math

from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _kernels
from ..utils._kernel_family import Kernel
from ..utils._labels import encode_labels
from ..utils._resources import check_allocation
from ..utils._threads import check_workers, one_blas_thread
from ..utils._validation import (
    check_finite,
    check_matrix,
    real_array,
)

__all__ = ["kernel_block", "kernel_matvec", "kernel_sums", "Points", "checked_kernel",
           "block_unchecked", "condition", "power_of_two", "matvec_unchecked", "sums_unchecked",
           "gram_upper_add_unchecked", "symmetric_eigh_unchecked", "cholesky_inverse_unchecked"]

_INT_MAX = 2**31 - 1
# Data whose largest magnitude leaves [2**-k, 2**k] is rescaled by a power of two
# (exact) before the kernels run, so that squared norms neither overflow nor
# underflow; gamma absorbs the scale.
_SAFE_EXPONENT = {np.dtype(np.float64): 200, np.dtype(np.float32): 24}


def _check_sizes(*arrays: tuple[str, np.ndarray]) -> None:
    for name, arr in arrays:
        if max(arr.shape) > _INT_MAX:
            raise ValueError(
                f"{name} has shape {arr.shape}; each dimension must be below 2**31 "
                "for the BLAS calls."
            )


def _translated(a: np.ndarray, shift: np.ndarray | None) -> np.ndarray:
    """``a − shift`` computed in float64 and stored in ``a``'s dtype (``a`` itself when
    there is no shift)."""
    if shift is None:
        return a
    return np.ascontiguousarray(a.astype(np.float64, copy=False) - shift, dtype=a.dtype)


def _exponent(arrays: list[np.ndarray]) -> int:
    """e with the largest magnitude of ``arrays`` near 2ᵉ when that lies outside the
    safe range of their dtype, else 0."""
    peak = max(float(np.max(np.abs(a))) if a.size else 0.0 for a in arrays)
    if peak > 0:
        exponent = math.frexp(peak)[1]
        if abs(exponent) > _SAFE_EXPONENT[arrays[0].dtype]:
            return exponent
    return 0


def _scaled(a: np.ndarray, exponent: int) -> np.ndarray:
    return a if exponent == 0 else np.ldexp(a, -exponent).astype(a.dtype, copy=False)


def _scaled_gamma(gamma: float, kernel: Kernel, exponent: int) -> float:
    """γ for points scaled by 2⁻ᵉ: γ·2^(p·e), at most the largest float64."""
    if exponent == 0:
        return gamma
    try:
        gamma = math.ldexp(gamma, kernel.power * exponent)
    except OverflowError:
        gamma = float(np.finfo(np.float64).max)
    return min(gamma, float(np.finfo(np.float64).max))


def _condition(arrays: list[np.ndarray], gamma: float, kernel: Kernel
               ) -> tuple[list[np.ndarray], float]:
    """Translate (Gaussian only) and rescale by a power of two; returns (arrays, gamma).

    K depends on the data only through x − z, so a common translation (by the mean of
    the last array) leaves it unchanged; centring shrinks ‖x‖² and with it the
    cancellation in ‖x‖² + ‖z‖² − 2x·z. Scaling every point by 2⁻ᵉ and γ by 2²ᵉ
    (Gaussian) or 2ᵉ (Laplacian) is exact in floating point.
    """
    family = Kernel.of(kernel)
    shift = arrays[-1].mean(axis=0, dtype=np.float64) if family.translates else None
    moved = [_translated(a, shift) for a in arrays]
    exponent = _exponent(moved)
    return [_scaled(a, exponent) for a in moved], _scaled_gamma(gamma, family, exponent)


def power_of_two(arrays: list[np.ndarray], gamma: float, kernel: Kernel | str
                 ) -> tuple[int, float]:
    """(e, γ′) for points already translated: e such that scaling by 2⁻ᵉ brings the
    largest magnitude of ``arrays`` within the safe range of their dtype (0 when it lies
    within it), and γ′ = γ·2^(p·e) for the scaled points (p = 2 Gaussian, 1 Laplacian),
    the step :func:`condition` and :class:`Points` take. The streamed solvers
    (:class:`~kernelselect.solvers._rows.Conditioning`) pass the data's bounds with the
    centres, so that every point they will see is covered."""
    exponent = _exponent(list(arrays))
    return exponent, _scaled_gamma(float(gamma), Kernel.of(kernel), exponent)


#: the conditioning :func:`kernel_block` applies, for the package's other callers
condition = _condition


class Points:
    """Points made ready for the compiled kernels once, for every γ of a grid.

    ``data`` is X translated by its mean (Gaussian kernel) and, when its magnitude is
    extreme, scaled by a power of two (exact; :meth:`gamma` scales γ to match), as
    :func:`kernel_block` does on every call. An operator makes one ``Points`` per data
    set and evaluates K(X, X), K(X, landmarks) or K(X, X)V for any γ from it through
    the unchecked cores, with no check, translation or copy per γ.

    Making it is the check of X: its largest magnitude, computed for the scaling
    anyway, is not finite exactly when X holds NaN or inf, which raises
    ``ValueError`` naming ``name``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        float32 or float64 (anything else is converted to float64 by
        :func:`~kernelselect.utils._validation.check_matrix`).
    kernel : Kernel or str
    name : str, default="X"
        The argument named by the error for non-finite values.
    """

    __slots__ = ("source", "data", "shift", "exponent", "kernel")

    def __init__(self, X: Any, kernel: Kernel | str, name: str = "X") -> None:
        if not (isinstance(X, np.ndarray) and X.ndim == 2 and X.flags.c_contiguous
                and X.dtype in _SAFE_EXPONENT):
            X = check_matrix(X, name)
        self.source = X
        self.kernel = Kernel.of(kernel, per_feature=False)
        self.shift = X.mean(axis=0, dtype=np.float64) if self.kernel.translates else None
        moved = _translated(X, self.shift)
        if X.size and not np.isfinite(np.max(np.abs(moved))):
            check_finite(X, name)
        self.exponent = _exponent([moved])
        self.data = _scaled(moved, self.exponent)

    @property
    def n(self) -> int:
        return int(self.data.shape[0])

    def gamma(self, gamma: float) -> float:
        """γ for the conditioned points (γ itself unless they were scaled)."""
        return _scaled_gamma(float(gamma), self.kernel, self.exponent)

    def take(self, rows: npt.ArrayLike) -> np.ndarray:
        """The conditioned rows ``rows`` (a C-contiguous copy)."""
        return np.ascontiguousarray(self.data[np.asarray(rows)])

    def place(self, P: npt.ArrayLike) -> np.ndarray:
        """Other points (e.g. landmark points that are not rows of X) under the same
        translation and scale, in the dtype of the data."""
        P = np.ascontiguousarray(P, dtype=self.data.dtype)
        return _scaled(_translated(P, self.shift), self.exponent)


def block_unchecked(A: np.ndarray, B: np.ndarray, gamma: float, kernel: Kernel,
                    threads: int) -> np.ndarray:
    """K(A, B) by the compiled kernel, with no check: A and B finite, C-contiguous, of
    one float dtype and conditioned (:class:`Points`), ``gamma`` the conditioned γ > 0,
    ``threads`` ≥ 1. The caller has checked the memory for the (n_a, n_b) result."""
    K = np.empty((A.shape[0], B.shape[0]), dtype=A.dtype)
    with one_blas_thread():
        _kernels._kernel_block_into(A, B, gamma, kernel.code, K, threads)
    return K


def gram_upper_add_unchecked(P: np.ndarray, G: np.ndarray) -> None:
    """The upper triangle of G += PᵀP in place, by one BLAS syrk (half a GEMM's flops)
    that, unlike scipy.linalg.blas.dsyrk, releases the interpreter lock, so that row
    blocks on several Python threads run their Gram updates at once. No check: P (b, c)
    and G (c, c) C-contiguous float64 or float32 of one dtype; G's strict lower
    triangle is left as it was."""
    _kernels._gram_upper_into(P, G)


def symmetric_eigh_unchecked(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(w, U): the eigenvalues w (ascending) and orthonormal eigenvectors U (U[:, j]
    belongs to w[j]) of the symmetric A, of which the lower triangle is read.

    LAPACK's divide-and-conquer ?syevd with the workspace scipy asks for: the same bits
    as ``scipy.linalg.eigh(A, driver="evd")``, whose wrapper holds the interpreter lock
    for the whole call; this one releases it, so that the eigendecompositions of
    several γ run at once on Python threads. No check beyond the compiled one
    (ValueError for a non-finite entry, LinAlgError when ?syevd does not converge):
    A (c, c) float64 or float32; U is F-ordered, as scipy returns it.
    """
    A = np.ascontiguousarray(A)
    w = np.empty(A.shape[0], dtype=A.dtype)
    Z = np.empty(A.shape, dtype=A.dtype)
    _kernels._symmetric_eigh_into(A, w, Z)
    return w, Z.T


def cholesky_inverse_unchecked(W: np.ndarray) -> np.ndarray | None:
    """T = L⁻ᵀ (C-ordered, upper triangular) for the Cholesky factor W = LLᵀ of the
    symmetric W (c, c) float64 or float32, of which the upper triangle is read; None
    when W is not numerically positive definite or L is singular.

    LAPACK's ?potrf then ?trtri: the bits of ``scipy.linalg.lapack.dpotrf(W, lower=1,
    clean=1)`` followed by ``dtrtri(L, lower=1)``, transposed, whose wrappers hold the
    interpreter lock; this one releases it, so that the factorisations of several γ run
    at once on Python threads. ValueError for a non-finite entry.
    """
    W = np.ascontiguousarray(W)
    T = np.empty(W.shape, dtype=W.dtype)
    return T if _kernels._cholesky_inverse_into(W, T) == 0 else None


def checked_kernel(kernel: Kernel | str, gamma: Any, n_features: int | None = None, *,
                   per_feature: bool = True) -> tuple[Kernel, Any]:
    """(the kernel, γ checked for it): the kernel argument parsed (:meth:`Kernel.of`;
    ``per_feature=False`` where one γ is taken) and γ checked by it
    (:meth:`Kernel.check_gamma`: a finite float > 0, or shape (n_features,) for the
    per-feature kernel). The one γ check of the primitives' doors and of an
    approximation's ``build``; ``TypeError``/``ValueError`` naming ``gamma``."""
    family = Kernel.of(kernel, per_feature=per_feature)
    return family, family.check_gamma(gamma, n_features)


def _check_common(arrays: list[Any], gamma: Any, kernel: Kernel | str, workers: int | None
                  ) -> tuple[list[np.ndarray], float, Kernel, int]:
    """The checks every public primitive opens with: the kernel parsed, γ checked for it
    (its shape read from the first array; :func:`checked_kernel`), the arrays and γ
    carried to the compiled family (:meth:`Kernel.points`) and the first array checked
    as ``X``. Returns (arrays, γ, compiled family, threads)."""
    shape = np.shape(arrays[0])
    family, gamma = checked_kernel(kernel, gamma, shape[1] if len(shape) == 2 else 0)
    moved = [family.points(a, gamma) for a in arrays]
    X = check_matrix(moved[0][0], "X")
    threads = check_workers(workers)
    return [X] + [a for a, _ in moved[1:]], moved[0][1], family.compiled, threads


def kernel_block(X: npt.ArrayLike, Z: npt.ArrayLike, gamma: float, kernel: str = "gaussian",
                 workers: int | None = None) -> np.ndarray:
    """The kernel block K(X, Z).

    Parameters
    ----------
    X : array_like of shape (n_x, n_features)
        Rows x_i. float32 input gives float32 output, anything else float64.
    Z : array_like of shape (n_z, n_features)
        Rows z_j (converted to X's dtype).
    gamma : float or array_like of shape (n_features,)
        Kernel parameter γ > 0; one value per feature for ``kernel="ard"``.
    kernel : {"gaussian", "laplacian", "ard"}
        κ(x, z) = exp(−γ‖x − z‖²), exp(−γ‖x − z‖₁) or exp(−Σ_k γ_k (x_k − z_k)²).
    workers : int or None
        Threads (None: OpenMP default; -1: all cores) over fixed chunks of rows.

    Returns
    -------
    K : ndarray of shape (n_x, n_z)
        K[i, j] = κ(x_i, z_j), e.g. the Nyström blocks C = K(X, L) and W = K(L, L).

    Notes
    -----
    Gaussian with at most 32 features, and the Laplacian: each row's distances are
    summed directly, Σ_k (z_jk − x_ik)² or Σ_k abs(z_jk − x_ik), over Z transposed
    once (no cancellation; a subtraction and a fused multiply-add a term where the CPU
    has them), then multiplied by −γ and exponentiated while in cache. Gaussian with more
    features: rows are cut into fixed chunks of about 16384 entries of K; per chunk (in
    parallel) a single-threaded BLAS GEMM writes the dot products into its rows, then
    ‖x_i‖² + ‖z_j‖² − 2x_i·z_j is formed, clamped at 0 and exponentiated (after a common
    centring of X and Z, which leaves K unchanged). O(n_x n_z d) time; results do not
    depend on the thread count. ARD: the Gaussian kernel with γ = 1 on scaled
    copies X·diag(√γ) and Z·diag(√γ) — O((n_x + n_z)d) extra against the block's
    O(n_x n_z d), the fastest correct route (one compiled kernel for both).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelselect.lowlevel import kernel_block
    >>> kernel_block(np.array([[0.0], [1.0]]), np.array([[0.0]]), gamma=1.0).round(4)
    array([[1.    ],
           [0.3679]])
    """
    (X, Z), gamma, kernel, threads = _check_common([X, Z], gamma, kernel, workers)
    Z = check_matrix(Z, "Z", dtype=X.dtype)
    if Z.shape[1] != X.shape[1]:
        raise ValueError(
            f"Z has {Z.shape[1]} features but X has {X.shape[1]}; they must match."
        )
    _check_sizes(("X", X), ("Z", Z))
    check_allocation(float(X.shape[0]) * Z.shape[0] * X.dtype.itemsize,
                     f"the kernel block K(X, Z) of shape ({X.shape[0]}, {Z.shape[0]})",
                     "compute it in blocks of rows, or use kernel_matvec / kernel_sums, "
                     "which stream K")
    (Xc, Zc), g = _condition([X, Z], gamma, kernel)
    return block_unchecked(Xc, Zc, g, kernel, threads)


def _check_V(V: npt.ArrayLike, n: int, dtype: np.dtype[Any]) -> np.ndarray:
    arr = real_array(V, "V")
    if arr.ndim not in (1, 2):
        raise ValueError(f"V must be 1-D of shape (n,) or 2-D of shape (n, m), got shape {arr.shape}.")
    if arr.shape[0] != n:
        raise ValueError(f"V has {arr.shape[0]} rows but X has {n}; they must match.")
    arr = np.ascontiguousarray(arr, dtype=dtype)
    check_finite(arr, "V")
    return arr


def kernel_matvec(X: npt.ArrayLike, V: npt.ArrayLike, gamma: float, kernel: str = "gaussian",
                  workers: int | None = None) -> np.ndarray:
    """The product K(X, X) @ V, streaming: K is never held.

    Parameters
    ----------
    X : array_like of shape (n, n_features)
        float32 input gives float32 output, anything else float64.
    V : array_like of shape (n,) or (n, m)
        Converted to X's dtype.
    gamma : float or array_like of shape (n_features,)
        Kernel parameter γ > 0; one value per feature for ``kernel="ard"`` (the
        Gaussian kernel on the scaled copy X·diag(√γ), as for :func:`kernel_block`).
    kernel : {"gaussian", "laplacian", "ard"}
    workers : int or None
        Threads (None: OpenMP default; -1: all cores).

    Returns
    -------
    Y : ndarray of shape (n,) or (n, m)
        Y = K V with K_ij = κ(x_i, x_j), same shape as V.

    Notes
    -----
    K is walked in tiles of 128 rows × 512 columns; each row block is one unit of
    parallel work and owns its output rows, so the result does not depend on the
    number of threads. O(n² (d + m)) time, O(n m) memory plus one tile per thread.
    BLAS runs single-threaded inside the parallel loop.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelselect.lowlevel import kernel_matvec
    >>> kernel_matvec(np.array([[0.0], [1.0]]), np.ones(2), gamma=1.0).round(4)
    array([1.3679, 1.3679])
    """
    (X,), gamma, kernel, threads = _check_common([X], gamma, kernel, workers)
    n = X.shape[0]
    V_in = real_array(V, "V")                   # no copy of an array yet
    check_allocation(_matvec_bytes(X, V_in), f"the product K V of shape {V_in.shape} (and V "
                     f"in {X.dtype})", "use fewer columns of V at a time")
    V = _check_V(V_in, n, X.dtype)
    _check_sizes(("X", X), ("V", V))
    (Xc,), g = _condition([X], gamma, kernel)
    return matvec_unchecked(Xc, V.reshape(n, -1), g, kernel, threads).reshape(V.shape)


def matvec_unchecked(A: np.ndarray, V: np.ndarray, gamma: float, kernel: Kernel,
                     threads: int) -> np.ndarray:
    """K(A, A) V (n, m) by the compiled streaming kernel, with no check of A, γ or
    ``threads`` (see :func:`block_unchecked`); V finite, (n, m), C-contiguous in A's
    dtype. V of extreme magnitude is scaled by a power of two for the sums and back.
    Raises ``ValueError`` when K V overflows A's dtype."""
    Y = np.zeros(V.shape, dtype=A.dtype)
    if V.shape[1] == 0:
        return Y
    # 0 ≤ K_ij ≤ 1, so |KV| ≤ n max|V|: V is scaled by a power of two (exact) to keep
    # the sums in range, and the scale is put back at the end.
    V2, v_exp = _unit_scale(V)
    with one_blas_thread():
        _kernels._kernel_matvec_into(A, V2, gamma, kernel.code, Y, threads)
    if v_exp:
        with np.errstate(over="ignore"):
            Y = np.ldexp(Y, v_exp).astype(A.dtype, copy=False)
    if not np.all(np.isfinite(Y)):
        raise ValueError(
            f"K V overflows {A.dtype}: V's largest magnitude "
            f"{float(np.max(np.abs(V))):.3g} times row sums of K up to n = {A.shape[0]}; "
            "rescale V."
        )
    return Y


def _matvec_bytes(X: np.ndarray, V: np.ndarray) -> float:
    """Peak bytes of :func:`kernel_matvec`: V converted to X's dtype (when it is not
    already), the product, the rescaled copies of both when V's magnitude is extreme
    (:func:`_unit_scale`), the finiteness mask and the conditioned copy of X."""
    item = X.dtype.itemsize
    size = float(V.size)
    convert = 0.0 if V.dtype == X.dtype and V.flags.c_contiguous else size * item
    extreme = 0.0
    if V.size and V.dtype.kind == "f":
        peak = max(abs(float(V.max())), abs(float(V.min())))
        if np.isfinite(peak) and peak > 0 and abs(math.frexp(peak)[1]) > \
                _SAFE_EXPONENT[X.dtype] // 2:
            extreme = 2.0 * size * item
    return convert + size * item + extreme + size + float(X.nbytes)


def _unit_scale(V: np.ndarray) -> tuple[np.ndarray, int]:
    """(V·2⁻ᵉ, e) with the largest magnitude near 1 when V's exponent is extreme, else (V, 0)."""
    peak = float(np.max(np.abs(V))) if V.size else 0.0
    if peak == 0.0:
        return V, 0
    exponent = math.frexp(peak)[1]
    if abs(exponent) <= _SAFE_EXPONENT[V.dtype] // 2:
        return V, 0
    return np.ascontiguousarray(np.ldexp(V, -exponent), dtype=V.dtype), exponent


def _check_labels(labels: npt.ArrayLike, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(classes, codes) of ``labels`` (:func:`kernelselect.utils._labels.encode_labels`); one
    class is allowed here (its sums are the plain ones)."""
    enc = encode_labels(labels, "labels", n=n, squeeze="any", min_classes=1)
    return enc.classes, enc.codes


def kernel_sums(X: npt.ArrayLike, gamma: float, kernel: str = "gaussian",
                labels: npt.ArrayLike | None = None, workers: int | None = None) -> dict[str, Any]:
    """Sums over the kernel matrix K = K(X, X) in one streaming pass (K never held).

    Parameters
    ----------
    X : array_like of shape (n, n_features)
    gamma : float or array_like of shape (n_features,)
        Kernel parameter γ > 0; one value per feature for ``kernel="ard"`` (the
        Gaussian kernel on the scaled copy X·diag(√γ), as for :func:`kernel_block`).
    kernel : {"gaussian", "laplacian", "ard"}
    labels : array_like of shape (n,), optional
        Class labels of any sortable kind (±1, integers, strings).
    workers : int or None
        Threads (None: OpenMP default; -1: all cores).

    Returns
    -------
    sums : dict
        ``"total"`` 1ᵀK1, ``"frobenius_sq"`` ‖K‖_F², ``"row_sums"`` K1 of shape (n,),
        ``"row_sums_sq"`` ‖K1‖², ``"diagonal"`` diag K of shape (n,) (κ(0) = 1 for these
        kernels); with ``labels`` also ``"classes"`` (sorted unique labels, shape (C,))
        and ``"block_sums"`` of shape (C, C), block_sums[a, b] = Σ_{i∈a, j∈b} K_ij.
        Everything is float64 (accumulated in float64, also for float32 X).

    Notes
    -----
    These are the ingredients of kernel-target alignment, centred alignment, FSM,
    MMD and the separability measures (docs/criteria.md). Each row of K is summed tile by
    tile in column order inside the one row block that owns it, and the per-row
    results are combined in row order, so 1 and N threads agree bit for bit.
    O(n² d) time, O(n C) memory plus one 128 × 512 tile per thread.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelselect.lowlevel import kernel_sums
    >>> s = kernel_sums(np.array([[0.0], [1.0]]), gamma=1.0, labels=["a", "b"])
    >>> round(s["total"], 4), s["block_sums"].round(4).tolist()
    (2.7358, [[1.0, 0.3679], [0.3679, 1.0]])
    """
    (X,), gamma, kernel, threads = _check_common([X], gamma, kernel, workers)
    n = X.shape[0]
    _check_sizes(("X", X))
    if labels is None:
        classes, codes = None, None
        n_classes = 1
    else:
        classes, codes = _check_labels(labels, n)
        n_classes = classes.size
    check_allocation(8.0 * n_classes * (n + n_classes + 4 * threads),
                     f"kernel_sums with {n_classes} distinct labels (an n × C array of "
                     f"per-class row sums, n = {n})",
                     "pass labels with few classes (kernel_sums sums K over class blocks; "
                     "per-sample labels make it an n × n matrix)")
    (Xc,), g = _condition([X], gamma, kernel)
    out = sums_unchecked(Xc, g, kernel, threads, codes, n_classes)
    if classes is not None:
        out["classes"] = classes
    return out


def sums_unchecked(A: np.ndarray, gamma: float, kernel: Kernel, threads: int,
                   codes: np.ndarray | None = None, n_classes: int = 1) -> dict[str, Any]:
    """The sums of :func:`kernel_sums` (without ``"classes"``) by the compiled kernel,
    with no check (see :func:`block_unchecked`); ``codes`` (n,) intp class codes
    0 … ``n_classes`` − 1, or None for the plain sums."""
    n = A.shape[0]
    class_row_sums = np.empty((n, n_classes), dtype=np.float64)
    row_sq_sums = np.empty(n, dtype=np.float64)
    codes_in = np.zeros(n, dtype=np.intp) if codes is None else codes
    with one_blas_thread():
        _kernels._kernel_sums_into(A, codes_in, gamma, kernel.code, class_row_sums,
                                   row_sq_sums, threads)
    row_sums = class_row_sums.sum(axis=1) if n_classes > 1 else class_row_sums[:, 0].copy()
    out: dict[str, Any] = {
        "total": float(np.sum(row_sums)),
        "frobenius_sq": float(np.sum(row_sq_sums)),
        "row_sums": row_sums,
        "row_sums_sq": float(np.sum(row_sums * row_sums)),
        "diagonal": np.ones(n, dtype=np.float64),
    }
    if codes is not None:
        block_sums = np.empty((n_classes, n_classes), dtype=np.float64)
        for a in range(n_classes):
            block_sums[a] = class_row_sums[codes == a].sum(axis=0)
        out["block_sums"] = block_sums
    return out
