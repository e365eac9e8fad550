"""Exact kernel matrix: dense (Cholesky factors or eigendecomposition) or streaming
(never holding K)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence, TypeGuard

import numpy as np
import numpy.typing as npt
import scipy.linalg

from .._typing import Gammas, RandomState, SpectralFunction

from ..primitives._kernel_ops import block_unchecked
from ..utils._resources import check_allocation
from ..utils._validation import check_positive_int
from ._base import (
    check_function_output,
    _centred,
    Approximation,
    Capabilities,
    ExplicitBasisOperator,
    KernelOperator,
    LazyBasisOperator,
    PointsCache,
    RidgeFunction,
    evaluate_at,
)
from ..utils._threads import interruptible, team
from ._lowrank import shifted_cholesky, small_blas
from ._row_passes import ArrayRows
from .streaming import StreamingOperator
from .streaming_exact import build_exact_grid
from ._tridiagonal import TridiagonalReduction

__all__ = ["Exact", "ExactState", "DenseOperator", "DENSE_SOLVERS", "MACHINE_SOLVERS"]


def _symmetrise_from(A: np.ndarray, lower: bool, block: int = 512) -> np.ndarray:
    """Copy the lower (or upper) triangle of A onto the other one, in place, by blocks
    (LAPACK's dpotri writes only one triangle)."""
    if not lower:
        A = A.T
    n = A.shape[0]
    for i in range(0, n, block):
        j = min(i + block, n)
        diag = A[i:j, i:j]
        diag[...] = np.tril(diag) + np.tril(diag, -1).T
        A[i:j, j:] = A[j:, i:j].T
    return A if lower else A.T


#: the strategies of the dense operator for forms in K + αI
DENSE_SOLVERS = ("auto", "eigh", "cholesky", "tridiagonal")
#: the strategies a kernel machine on the exact matrix accepts (:meth:`Exact.machine`)
MACHINE_SOLVERS = ("cholesky", "eigh", "tridiagonal")


def _ridge_combine(g: RidgeFunction, B: np.ndarray, R: np.ndarray,
                   again: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """g(K)B (n, m, L) from R = K_α⁻¹B (n, m, L) and ``again``, which applies K_α⁻¹ to
    the slice of each α: K_α⁻², (α/s)K_α⁻¹ and its square, K K_α⁻¹ = I − αK_α⁻¹ and
    its square, as solves."""
    if g.kind == "resolvent":
        return R if g.power == 1 else again(R)
    if g.kind == "complement":
        f = np.array([g.factor(j) for j in range(g.alphas.size)])
        C = R * f                                                # (α/s)K_α⁻¹B
        return C if g.power == 1 else again(C) * f
    S = B[:, :, None] - g.alphas * R                             # K K_α⁻¹ B
    return S if g.power == 1 else S - g.alphas * again(S)


class DenseOperator(LazyBasisOperator):
    """K itself (n×n), with every form evaluated as cheaply as the request allows.

    * Power moments come from K directly: Pᵀ Kʳ P by ⌈r/2⌉ products with K,
      tr K, ‖K‖_F² = tr K² and diag K (O(n²) each, no factorisation).
    * Forms in K_α = K + αI at a few ridges (:class:`RidgeFunction`: K_α⁻¹, K_α⁻²,
      K K_α⁻¹, (K K_α⁻¹)², αK_α⁻¹, (αK_α⁻¹)²) come from one Cholesky factorisation of K_α per α
      (n³/3 flops) and, when a diagonal, trace or Frobenius norm is asked, the
      explicit inverse from it (2n³/3 more): tr K_α⁻² = ‖K_α⁻¹‖_F²,
      tr K K_α⁻¹ = n − α tr K_α⁻¹, tr (K K_α⁻¹)² = n − 2α tr K_α⁻¹ + α²‖K_α⁻¹‖_F².
    * Anything else — a path of more than ``max_ridge_alphas`` ridges, another
      spectral function, the eigenvalues — uses one symmetric eigendecomposition
      K = QΛQᵀ (about 4.5× the flops of one Cholesky inverse), computed once and then
      used for every later request.

    Solves g(K)B (``apply_function``, ``quadratic``: all that fitting a kernel machine
    and the criterion REE need) may instead take one strategy for the whole α
    path: ``solver="cholesky"`` (one factorisation per α, n³/3 flops each) or
    ``solver="tridiagonal"`` (one reduction K = QTQᵀ, 4n³/3 flops, then O(n) per α
    and column, :class:`~kernelselect.operators._tridiagonal.TridiagonalReduction`).
    Neither gives the entries of K_α⁻¹ cheaply, so diagonals and traces (IPE, C1, GCV,
    ELOO, the k-fold criteria) and the eigenvalues (ER, whose fit term then reuses
    them) follow the rules above.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix. Only its lower triangle is read: the factorisations read
        nothing else, and products with K mirror it onto the upper triangle first
        (once, on first need), so every form sees the same symmetric matrix.
    solver : {"auto", "eigh", "cholesky", "tridiagonal"}, default="auto"
        ``"eigh"`` evaluates every form through the eigendecomposition;
        ``"cholesky"`` and ``"tridiagonal"`` serve solves for any number of α by that
        strategy.
    max_ridge_alphas : int, default=3
        Largest α path whose diagonals and traces come from Cholesky inverses (each α
        holds one n×n inverse), and whose Cholesky factors are kept for reuse.
    copy : bool, default=True
        False: K is the caller's to give away (it is mirrored in place).
    on_singular : {"eigh", "raise"}, default="eigh"
        When the factorisation of a strategy fails (K + αI numerically singular or
        indefinite, α below the rounding of K's spectrum): evaluate by the
        eigendecomposition, whose eigenvalues are clipped at 0 (the selection's
        choice), or raise ``numpy.linalg.LinAlgError`` (fitting a machine, which
        then says which α and why).
    """

    name = "dense"

    def __init__(self, K: npt.ArrayLike, solver: str = "auto", max_ridge_alphas: int = 3,
                 copy: bool = True, on_singular: str = "eigh") -> None:
        KernelOperator.__init__(self, np.shape(K)[0])
        self._K = (np.array(K, dtype=np.float64, copy=True) if copy
                   else np.asarray(K, dtype=np.float64))
        self._mirrored = False
        if solver not in DENSE_SOLVERS:
            raise ValueError(f"solver must be one of {', '.join(map(repr, DENSE_SOLVERS))}, "
                             f"got {solver!r}.")
        if on_singular not in ("eigh", "raise"):
            raise ValueError(f"on_singular must be 'eigh' or 'raise', got {on_singular!r}.")
        self.solver = solver
        self.on_singular = on_singular
        self.max_ridge_alphas = int(max_ridge_alphas)
        self._eig: tuple[np.ndarray, np.ndarray] | None = None
        self._ridge: dict[float, dict[str, Any]] = {}         # α → {"factor": (c, lower)} and, once needed, "inverse"
        self._tri: TridiagonalReduction | None = None
        self.details = {"method": "dense"}

    def _full(self) -> np.ndarray:
        """K with its lower triangle mirrored onto the upper one (in place, once)."""
        if not self._mirrored:
            _symmetrise_from(self._K, lower=True)
            self._mirrored = True
        return self._K

    # -- the eigendecomposition, on first need ------------------------------------
    def _eigenpairs(self) -> tuple[np.ndarray, np.ndarray]:
        if self._eig is None:
            # numpy's eigh is LAPACK's dsyevd (scipy's driver="evd") called without the
            # GIL, so that Ctrl-C reaches the caller while it runs (interruptible)
            with small_blas(float(self.n) ** 3):
                lam, Q = interruptible(4.0 * float(self.n) ** 3, np.linalg.eigh, self._K)
            # K is positive semi-definite: negative eigenvalues are rounding (of size
            # n·ε·λ_max) and are taken as 0, so that K + αI stays positive at any α > 0
            self._eig = (np.clip(lam, 0.0, None), Q)
            self.details["factorisation"] = "eigh"
        return self._eig

    # -- solves with K + αI: Cholesky factors or one tridiagonal reduction -----------
    def _route(self, g: SpectralFunction | None, solves: bool = False) -> str | None:
        """How ``g`` is served: ``"cholesky"`` (factors of K + αI), ``"tridiagonal"``
        (one reduction K = QTQᵀ) or None (the eigendecomposition).

        ``solves``: the form needs only solves g(K)B (``apply_function``,
        ``quadratic``), which the explicit strategies ``"cholesky"`` and
        ``"tridiagonal"`` serve for any number of α. Diagonals, traces and blocks
        (the entries of K_α⁻¹) take Cholesky inverses for at most
        ``max_ridge_alphas`` α, else the eigendecomposition.
        """
        if self._eig is not None or self.solver == "eigh" or not isinstance(g, RidgeFunction):
            return None
        if solves and self.solver in ("cholesky", "tridiagonal"):
            if self.solver == "tridiagonal" and all(float(a) in self._ridge for a in g.alphas):
                return "cholesky"          # factors a trace already made: reuse them
            return self.solver
        if g.alphas.size > self.max_ridge_alphas:
            return None
        try:
            for a in g.alphas:
                self._factor(float(a))
        except np.linalg.LinAlgError:
            # K + αI not numerically positive definite (α below the rounding of K's
            # spectrum): the eigendecomposition handles it.
            return None
        return "cholesky"

    def _use_ridge(self, g: SpectralFunction | None) -> TypeGuard[RidgeFunction]:
        """Whether the entries of g(K) come from Cholesky inverses rather than eigenpairs."""
        return self._route(g) == "cholesky"

    def _cholesky(self, a: float) -> tuple[np.ndarray, bool]:
        """The Cholesky factor of K + αI, raising ``LinAlgError`` when it fails."""
        if not a > 0:
            raise np.linalg.LinAlgError("α ≤ 0")
        c, lower = shifted_cholesky(self._K, a)
        if not np.all(np.isfinite(np.diagonal(c))):
            raise np.linalg.LinAlgError("non-finite Cholesky factor")
        return c, lower

    def _factor(self, a: float) -> dict[str, Any]:
        entry = self._ridge.get(a)
        if entry is None:
            entry = self._ridge[a] = {"factor": self._cholesky(a)}
            self.details["factorisation"] = "cholesky"
        return entry

    def _inverse(self, a: float) -> np.ndarray:
        entry = self._factor(a)
        if "inverse" not in entry:
            c, lower = entry.pop("factor")
            with small_blas(2.0 * float(self.n) ** 3 / 3):
                inv, info = scipy.linalg.lapack.dpotri(c, lower=lower, overwrite_c=True)
            if info != 0:
                raise np.linalg.LinAlgError(f"dpotri failed (info={info})")
            entry["inverse"] = _symmetrise_from(inv, lower)
        return entry["inverse"]

    def _solver_at(self, a: float, keep: bool) -> Callable[[np.ndarray], np.ndarray]:
        """B ↦ K_α⁻¹B from the cached factor or inverse (``keep``) or a factor used once
        (a long explicit Cholesky path holds one n × n factor at a time)."""
        entry = self._factor(a) if keep or a in self._ridge else {"factor": self._cholesky(a)}
        if "inverse" in entry:
            return lambda B: entry["inverse"] @ B
        return lambda B: scipy.linalg.cho_solve(entry["factor"], B, check_finite=False)

    def _tridiagonal(self) -> TridiagonalReduction:
        if self._tri is None:
            self._tri = TridiagonalReduction(self._full())
            self.details["factorisation"] = "tridiagonal"
        return self._tri

    def _ridge_apply(self, g: RidgeFunction, B: np.ndarray, route: str = "cholesky"
                     ) -> np.ndarray:
        """g(K) B for a RidgeFunction: (n, m) → (n, m, L), by the strategy ``route``;
        when its factorisation fails, by the eigendecomposition (``on_singular="eigh"``)
        or not at all (``"raise"``)."""
        try:
            return self._ridge_solve(g, B, route)
        except np.linalg.LinAlgError:
            if self.on_singular == "raise":
                raise
        self.details["fallback"] = "eigh"
        return ExplicitBasisOperator.apply_function(self, g, B)

    def _ridge_solve(self, g: RidgeFunction, B: np.ndarray, route: str) -> np.ndarray:
        if route == "tridiagonal":
            tri = self._tridiagonal()
            return _ridge_combine(g, B, tri.solve(B, g.alphas),
                                  lambda R: tri.solve_each(R, g.alphas))
        out = np.empty(B.shape + (g.alphas.size,))
        keep = g.alphas.size <= self.max_ridge_alphas
        for j, a in enumerate(g.alphas):
            one = RidgeFunction(g.kind, g.alphas[j:j + 1], g.power,
                                None if g.scale is None else g.scale[j:j + 1])
            solve = self._solver_at(float(a), keep)
            out[:, :, j] = _ridge_combine(one, B, solve(B)[:, :, None],
                                          lambda R: solve(R[:, :, 0])[:, :, None])[:, :, 0]
        return out

    # -- spectral forms -------------------------------------------------------------
    def quadratic(self, g: SpectralFunction, P: npt.ArrayLike,
                  Q: npt.ArrayLike | None = None) -> np.ndarray:
        route = self._route(g, solves=True)
        if route is None:
            return super().quadratic(g, P, Q)
        assert isinstance(g, RidgeFunction)
        P = np.asarray(P, dtype=np.float64).reshape(self.n, -1)
        Q = P if Q is None else np.asarray(Q, dtype=np.float64).reshape(self.n, -1)
        if g.power == 2 and Q is P:
            # Pᵀ M² P = (MP)ᵀ(MP) for the symmetric M = K_α⁻¹ or K K_α⁻¹
            half = self._ridge_apply(RidgeFunction(g.kind, g.alphas, 1, g.scale), P, route)
            return np.einsum("nil,njl->ijl", half, half)
        return np.einsum("ni,njl->ijl", P, self._ridge_apply(g, Q, route))

    def trace(self, h: SpectralFunction) -> float | np.ndarray:
        if not self._use_ridge(h):
            return super().trace(h)
        out = np.empty(h.alphas.size)
        for j, a in enumerate(h.alphas):
            inv = self._inverse(float(a))
            if h.kind == "complement":
                ainv = h.factor(j) * inv                         # (α/s)K_α⁻¹
                out[j] = (float(np.trace(ainv)) if h.power == 1
                          else float(np.einsum("ij,ij->", ainv, ainv)))
                continue
            if h.kind == "resolvent":
                out[j] = (float(np.trace(inv)) if h.power == 1
                          else float(np.einsum("ij,ij->", inv, inv)))
                continue
            ainv = a * inv                       # smoother = I − αK_α⁻¹, from the bounded αK_α⁻¹
            t1 = float(np.trace(ainv))
            out[j] = (self.n - t1 if h.power == 1
                      else self.n - 2 * t1 + float(np.einsum("ij,ij->", ainv, ainv)))
        return out

    def resolvent_diagonal(self, alpha: float) -> np.ndarray:
        """diag((K + αI)⁻¹) after solves at α: from their Cholesky factor K + αI = LLᵀ by
        its triangular inverse, (K + αI)⁻¹_ii = ‖L⁻¹e_i‖², n³/3 flops where a second
        factorisation and the inverse would cost 2n³/3 (what a fitted machine's
        leave-one-out needs, Cawley & Talbot 2004). The factor is used up: a later solve
        at α factors again. Other strategies: :meth:`diagonal_function`."""
        found = self.resolvent_inverse_factor(alpha)
        if found is None:
            return self.diagonal_function(RidgeFunction("resolvent", [alpha]))[:, 0]
        return _triangle_norms(*found)

    def resolvent_inverse_factor(self, alpha: float) -> tuple[np.ndarray, bool] | None:
        """``(L⁻¹, lower)`` after solves at α that kept their Cholesky factor K + αI = LLᵀ
        (``lower``; UᵀU and U⁻¹ otherwise), by its triangular inverse (n³/3 flops), in
        the factor's memory: (K + αI)⁻¹ = L⁻ᵀL⁻¹. The other triangle holds what the
        factor's did. None when the solves kept no factor. The factor is used up."""
        entry = self._ridge.get(alpha)
        if (not self._use_ridge(RidgeFunction("resolvent", [alpha])) or entry is None
                or "factor" not in entry):
            return None
        c, lower = self._ridge.pop(alpha)["factor"]
        with small_blas(float(self.n) ** 3 / 3):
            inv, info = scipy.linalg.lapack.dtrtri(c, lower=int(lower), overwrite_c=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"dtrtri failed (info={info})")
        return inv, bool(lower)

    def diagonal_function(self, g: SpectralFunction) -> np.ndarray:
        if not self._use_ridge(g):
            return super().diagonal_function(g)
        out = np.empty((self.n, g.alphas.size))
        for j, a in enumerate(g.alphas):
            inv = self._inverse(float(a))
            if g.kind == "complement":
                ainv = g.factor(j) * inv
                out[:, j] = (np.diagonal(ainv).copy() if g.power == 1
                             else np.einsum("ij,ij->i", ainv, ainv))
                continue
            if g.kind == "resolvent":
                out[:, j] = (np.diagonal(inv).copy() if g.power == 1
                             else np.einsum("ij,ij->i", inv, inv))
                continue
            ainv = a * inv
            d1 = np.diagonal(ainv)
            out[:, j] = (1.0 - d1 if g.power == 1
                         else 1.0 - 2 * d1 + np.einsum("ij,ij->i", ainv, ainv))
        return out

    def block_function(self, g: SpectralFunction, rows: npt.ArrayLike) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.intp)
        if self._use_ridge(g):                    # g(K) applied to the columns e_rows
            return self._ridge_apply(g, np.eye(self.n)[:, rows])[rows]
        Qb = self._q[rows]                                      # (b, n)
        gl = evaluate_at(g, self._lam)
        if gl.ndim == 1:
            return (Qb * gl[None, :]) @ Qb.T
        out = np.empty((rows.size, rows.size, gl.shape[1]))
        with small_blas(float(rows.size) ** 2 * self.n * gl.shape[1]):
            for j in range(gl.shape[1]):
                out[:, :, j] = (Qb * gl[None, :, j]) @ Qb.T
        return out

    def apply_function(self, g: SpectralFunction, B: npt.ArrayLike) -> np.ndarray:
        route = self._route(g, solves=True)
        if route is None:
            return super().apply_function(g, B)
        assert isinstance(g, RidgeFunction)
        B = np.asarray(B, dtype=np.float64).reshape(self.n, -1)
        check_function_output(self.n, B.shape[1], g.alphas.size)
        return self._ridge_apply(g, B, route)

    def _basis_is_complete(self) -> bool:
        return True                               # the eigenvectors of K itself

    # -- centred forms from K itself ----------------------------------------------------
    def centred_terms(self, y: npt.ArrayLike, block: int = 512) -> tuple[float, float]:
        """HKH formed in blocks of rows (K_ij − r_i − r_j + m, r = K1/n, m = 1ᵀK1/n²):
        each entry is computed once from K, so ‖HKH‖_F² keeps the accuracy of K's
        entries instead of cancelling three terms of order n² (no eigendecomposition)."""
        K = self._full()
        r = K.mean(axis=1)
        m = r.mean()
        yc = _centred(y)
        ycky = 0.0
        kc_sq = 0.0
        for i in range(0, self.n, block):
            j = min(self.n, i + block)
            Kc = K[i:j] - r[i:j, None] - r[None, :] + m
            kc_sq += float(np.einsum("ij,ij->", Kc, Kc))
            ycky += float(yc[i:j] @ (Kc @ yc))
        return ycky, kc_sq

    # -- power moments, from K itself -------------------------------------------------
    def power_quadratic(self, r: int, P: npt.ArrayLike) -> np.ndarray:
        r = int(r)
        if r < 0:
            raise ValueError(f"r must be a non-negative integer, got {r!r}.")
        P = np.asarray(P, dtype=np.float64).reshape(self.n, -1)
        if self._eig is not None:
            c = self._q.T @ P
            return c.T @ (self._lam[:, None] ** r * c)
        H = P
        for _ in range(r // 2):
            H = self._full() @ H
        return H.T @ (self._full() @ H) if r % 2 else H.T @ H

    def power_trace(self, r: int) -> float:
        r = int(r)
        if r == 0:
            return float(self.n)
        if r == 1:
            return float(np.trace(self._K))
        if r == 2 and self._eig is None:
            K = self._full()
            return float(np.einsum("ij,ij->", K, K))
        return self._spectral_power_trace(r)

    def diagonal(self) -> np.ndarray:
        return np.diagonal(self._K).copy()


@dataclass(frozen=True)
class ExactState:
    """What :meth:`Exact.prepare` fixes for a data set.

    Attributes
    ----------
    method : {"dense", "streaming"}
        The operator every γ gets.
    points : PointsCache
        X conditioned for the compiled kernel on the first build, reused for every γ.
    """

    method: str
    points: PointsCache = field(default_factory=PointsCache, compare=False, repr=False)


class Exact(Approximation):
    """The exact kernel matrix.

    Parameters
    ----------
    method : {"auto", "dense", "streaming"}, default="auto"
        ``"dense"`` forms K (n×n): every criterion, O(n³) time (Cholesky factors of
        K + αI or one eigendecomposition, see ``dense_solver``), O(n²) memory — the
        reference, for n up to a few thousand.
        ``"streaming"`` never holds K: blocked kernel sums and matrix–vector products
        (O(n²d) time per pass, O(n) memory) give the power-moment criteria (kta, ckta,
        fsm, mmd, sm) at any n. ``"auto"`` streams when every requested criterion
        needs only moments, and goes dense otherwise.
    max_dense : int, default=8000
        Largest n for the dense method; beyond it the call is refused with a message
        naming the alternatives (about 0.5 GB for K at n = 8000, plus the eigenvectors).
    dense_solver : {"auto", "eigh", "cholesky", "tridiagonal"}, default="auto"
        How the dense method evaluates the forms in K + αI (ree, ipe, c1, gcv, eloo).
        ``"auto"``: a Cholesky factorisation (and inverse) per α when at most three α
        are asked — about 4.5× fewer flops than an eigendecomposition at one α — and
        one eigendecomposition for longer α paths, whose cost is then shared by every
        α. ``"eigh"``: always the eigendecomposition. ``"cholesky"`` /
        ``"tridiagonal"``: solves by that strategy for any α path (one factorisation
        per α / one tridiagonal reduction), which serves the criterion that needs
        solves only (ree); the others need the entries of K_α⁻¹ or the eigenvalues
        and follow ``"auto"``. See :class:`DenseOperator`.
    """

    name = "exact"

    #: set on the copy :meth:`machine` returns: its refusals name the machines' alternatives
    _machine: bool = False

    def __init__(self, method: str = "auto", max_dense: int = 8000,
                 dense_solver: str = "auto") -> None:
        self.method = method
        self.max_dense = max_dense
        self.dense_solver = dense_solver
        self._needs: frozenset[str] | None = None

    # a property where the base class has a plain attribute: it follows ``method``
    @property
    def provides(self) -> frozenset[str]:  # type: ignore[override]
        """Capability tags of the built operators: ``{"moments"}`` for
        ``method="streaming"``, ``{"moments", "spectral", "blocks"}`` otherwise."""
        if self.method == "streaming":
            return frozenset({"moments"})
        return frozenset({"moments", "spectral", "blocks"})

    @property
    def label(self) -> str:
        """The name results and plots show for this approximation."""
        return "exact" if self.method != "streaming" else "Exact(method='streaming')"

    @property
    def capabilities(self) -> Capabilities:
        """The streaming method builds a whole grid from shared passes, in memory or
        on Dask input (``"auto"`` streams when the criteria need only moments); the
        dense method holds K, one γ at a time; machines hold K."""
        method = self.method if self.method != "auto" or self._needs is None \
            else self._resolved_method()
        streams = method in ("auto", "streaming")
        return Capabilities(self.provides, grid=method == "streaming", dask=streams,
                            fit=True)

    def configure(self, needs: Iterable[str]) -> None:
        self._needs = frozenset(needs)

    def _resolved_method(self) -> str:
        if self.method not in ("auto", "dense", "streaming"):
            raise ValueError(
                f"method must be 'auto', 'dense' or 'streaming', got {self.method!r}."
            )
        if self.method != "auto":
            return self.method
        if self._needs is not None and self._needs <= {"moments"}:
            return "streaming"
        return "dense"

    def check_resources(self, n: int, d: int, method: str | None = None) -> None:
        """The dense method holds K, a factor of K + αI and eigenvectors: four n × n
        float64 arrays, refused above ``max_dense`` points or the memory limit."""
        method = self._resolved_method() if method is None else method
        check_positive_int(self.max_dense, "max_dense")
        if method != "dense":
            return
        if self._machine:                        # a fitted machine, not the criteria
            what = "the exact machine holds"
            alternatives = ("approximation='auto' (the Nyström machine by conjugate "
                            "gradients beyond the exact limit), NystroemPCG(n_centres=...), "
                            "approximation='nystrom' or 'rff'")
        else:
            what = "the exact dense criteria hold"
            alternatives = ("Exact(method='streaming') for the moment criteria (kta, ckta, "
                            "fsm, mmd, sm), an approximation (approximation='nystrom', 'rff' "
                            "or 'mcm')")
        if n > self.max_dense:
            raise ValueError(
                f"{what} the {n}×{n} kernel matrix and its factorisation; n={n} exceeds "
                f"max_dense={self.max_dense}. Use {alternatives}, or raise "
                f"Exact(max_dense=...)."
            )
        check_allocation(4 * 8.0 * n * n,
                         f"the exact dense kernel matrix at n={n} (K, a factor of K + αI, "
                         "eigenvectors and their squares, four n × n float64 arrays)",
                         f"use {alternatives}")

    def prepare(self, X: np.ndarray, y: np.ndarray | None, *, kernel: str,
                random_state: RandomState, workers: int | None) -> ExactState:
        method = self._resolved_method()
        if self.dense_solver not in DENSE_SOLVERS:
            raise ValueError(
                f"dense_solver must be one of {', '.join(map(repr, DENSE_SOLVERS))}, got "
                f"{self.dense_solver!r}."
            )
        n, d = X.shape
        self.check_resources(n, d, method=method)
        return ExactState(method)

    def build_all(self, rows: Any, y: np.ndarray | None, gammas: Gammas, *,
                  kernel: str, state: ExactState | None) -> Sequence[KernelOperator] | None:
        """With the streaming method: one operator per γ whose power moments come from
        passes over the tiles of X shared by the whole grid
        (:mod:`~kernelselect.operators.streaming_exact`); None for the dense method."""
        method = state.method if state is not None else self._resolved_method()
        if method == "streaming":
            return build_exact_grid(rows, y, gammas, kernel=kernel)
        if not isinstance(rows, ArrayRows):
            raise ValueError(
                "approximation='exact' with criteria that need the spectral forms holds the "
                "n × n kernel matrix and does not run on Dask arrays; use "
                "Exact(method='streaming') with the moment criteria (kta, ckta, fsm, mmd, "
                "sm), 'nystrom' (uniform landmarks) or 'rff', or pass numpy arrays.")
        return None

    def build(self, X: np.ndarray, y: np.ndarray | None, gamma: float, *, kernel: str,
              state: ExactState | None, workers: int | None) -> KernelOperator:
        family, gamma, state = self._build_start(X, y, gamma, kernel, state, workers)
        points = state.points(X, family)
        if state.method == "streaming":
            return StreamingOperator(points, gamma, kernel=family, workers=workers)
        K = block_unchecked(points.data, points.data, points.gamma(gamma), family,
                            team(workers))
        return DenseOperator(K, solver=self.dense_solver, copy=False)

    def machine(self, exact_solver: str | None = None, n_alphas: int = 1
                ) -> tuple[Exact, str]:
        """A machine always holds K (``method="dense"``) and solves by ``exact_solver``:
        None → one Cholesky factorisation for a single α, the tridiagonal reduction for
        a path (:class:`DenseOperator`)."""
        method = exact_solver or ("cholesky" if n_alphas == 1 else "tridiagonal")
        if method not in MACHINE_SOLVERS:
            raise ValueError(
                f"exact_solver must be 'cholesky', 'eigh' or 'tridiagonal', got {method!r}."
            )
        dense = copy.copy(self)
        dense.set_params(method="dense", dense_solver=method)
        dense._machine = True
        return dense, method


def _triangle_norms(T: np.ndarray, lower: bool, block: int = 256) -> np.ndarray:
    """Squared norms of the columns (``lower``) or rows (upper) of the triangle of T, the
    other triangle ignored (a Cholesky factor's holds what K held), by blocks of
    ``block`` columns or rows."""
    n = T.shape[0]
    out = np.empty(n)
    for j0 in range(0, n, block):
        j1 = min(n, j0 + block)
        if lower:
            B = np.tril(T[j0:, j0:j1])
            out[j0:j1] = np.einsum("ij,ij->j", B, B)
        else:
            B = np.triu(T[j0:j1, j0:])
            out[j0:j1] = np.einsum("ij,ij->i", B, B)
    return out
