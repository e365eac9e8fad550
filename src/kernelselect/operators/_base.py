"""The operator protocol every kernel-matrix stand-in implements.

An operator ``A`` stands in for the kernel matrix ``K`` of one kernel (one γ) on
the training points. Criteria are written once over two capabilities:

*Power moments* (every operator, the streaming exact one included)
    ``power_quadratic(r, P)`` = Pᵀ A^r P for probe columns P, ``power_trace(r)`` =
    tr A^r and ``diagonal()`` = diag A. KTA, CKTA, FSM, MMD and SM (φ(t) = t^r) need
    nothing else.

*Spectral forms* (operators that know an eigendecomposition)
    With eigenvalues λ_i, orthonormal eigenvectors q_i (i < rank) and the
    complement of the eigenvectors at eigenvalue 0 (docs/references.md, "Functions of
    a stand-in with a known eigendecomposition"):

    - aᵀ g(A) b = Σ_i g(λ_i) ⟨a, q_i⟩⟨q_i, b⟩ + g(0)(aᵀb − Σ_i ⟨a, q_i⟩⟨q_i, b⟩)
    - tr h(A)   = Σ_i h(λ_i) + (n − rank) h(0)
    - diag g(A) = Σ_i g(λ_i) q_i² + g(0)(1 − Σ_i q_i²)
    - g(A) b    = Σ_i g(λ_i) q_i ⟨q_i, b⟩ + g(0)(b − Σ_i q_i ⟨q_i, b⟩)

    A scalar function ``g`` maps an array of eigenvalues of shape (r,) to shape
    (r,) or, for a whole α path at once, (r, L); results then gain a trailing
    axis of length L.

Operators that use only part of the data (the Song–Xu grid uses n′ ≤ n points)
expose ``indices``: the original rows they act on, in operator order. Probes are
given in the original order and pass through :meth:`KernelOperator.restrict`.
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

from ..utils._kernel_family import Kernel
from ..primitives._kernel_ops import Points, checked_kernel
from ..utils._resources import check_allocation
from .._typing import Gammas, PreparedState, RandomState, RowFunction, SpectralFunction

__all__ = ["Approximation", "Parameterised", "Capabilities", "KernelOperator",
           "ExplicitBasisOperator", "LazyBasisOperator", "PointsCache", "RidgeFunction",
           "evaluate_at"]


class RidgeFunction:
    """A spectral function of K_α = K + αI for a path of ridges α, with its name.

    ``kind="resolvent"``: g(λ) = (λ + α)^(−p), i.e. g(K) = K_α^(−p).
    ``kind="smoother"``:  g(λ) = (λ/(λ + α))^p, i.e. g(K) = (K K_α⁻¹)^p = (I − αK_α⁻¹)^p.
    ``kind="complement"``: g(λ) = (α/(λ + α))^p, i.e. g(K) = (αK_α⁻¹)^p = (I − K K_α⁻¹)^p;
    it lies in (0, 1] for every α > 0 and λ ≥ 0, so forms built from it stay finite
    for ridges far outside the kernel's scale (α = 1e-300 or 1e300), where α·K_α⁻¹
    written as a product would overflow or underflow.
    ``scale`` (complement only; one positive number per α, default 1) divides the
    base before the power: g(λ) = (α/(s_α(λ + α)))^p, for forms whose value does not
    depend on a common factor of g (GCV, the leave-one-out residuals) and whose
    terms would otherwise underflow.

    Called on eigenvalues (r,) it returns the (r, L) table every spectral operator
    uses. Because it also says *what* it is, an operator that holds K itself can
    evaluate the forms from a Cholesky factorisation of K_α and the explicit inverse
    instead of an eigendecomposition (:class:`~kernelselect.operators.dense.DenseOperator`).
    """

    __slots__ = ("kind", "alphas", "power", "scale")

    def __init__(self, kind: str, alphas: npt.ArrayLike, power: int = 1,
                 scale: npt.ArrayLike | None = None) -> None:
        if kind not in ("resolvent", "smoother", "complement"):
            raise ValueError(
                f"kind must be 'resolvent', 'smoother' or 'complement', got {kind!r}.")
        if power not in (1, 2):
            raise ValueError(f"power must be 1 or 2, got {power!r}.")
        self.kind = kind
        self.alphas = np.atleast_1d(np.asarray(alphas, dtype=np.float64))
        self.power = power
        self.scale: np.ndarray | None = None if scale is None else np.broadcast_to(
            np.asarray(scale, dtype=np.float64), self.alphas.shape).copy()
        if self.scale is not None and kind != "complement":
            raise ValueError("scale applies to kind='complement' only.")

    def __call__(self, lam: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            return self._evaluate(lam)

    def _evaluate(self, values: np.ndarray) -> np.ndarray:
        lam = np.asarray(values, dtype=np.float64)[:, None]
        a = self.alphas[None, :]
        if self.kind == "resolvent":
            base = 1.0 / (lam + a)
        elif self.kind == "smoother":
            base = lam / (lam + a)
        else:
            base = a / (lam + a)
            if self.scale is not None:
                base = base / self.scale[None, :]
        return base ** self.power

    def factor(self, j: int) -> float:
        """α_j / s_j: the multiplier of K_α⁻¹ in the complement form at the j-th α."""
        a = float(self.alphas[j])
        return a if self.scale is None else a / float(self.scale[j])

    def __repr__(self) -> str:
        return f"RidgeFunction({self.kind!r}, alphas={self.alphas.tolist()}, power={self.power})"


def _centred(y: npt.ArrayLike) -> np.ndarray:
    """y − mean(y), centred twice so that its sum is zero to rounding."""
    values = np.asarray(y, dtype=np.float64)
    yc = values - np.mean(values)
    return yc - yc.mean()


def evaluate_at(g: SpectralFunction, lam: npt.ArrayLike) -> np.ndarray:
    """g evaluated at eigenvalues ``lam`` as a float array of shape (r,) or (r, L)."""
    return np.asarray(g(np.asarray(lam, dtype=np.float64)), dtype=np.float64)


class KernelOperator:
    """Base class: a stand-in for the kernel matrix of one kernel on n points.

    Attributes
    ----------
    n : int
        Number of points the operator acts on (n′ ≤ n for grid operators).
    indices : ndarray of int or None
        Original rows used, in operator order; ``None`` means all, unpermuted.
    spectral : bool
        Whether the spectral capability is available.
    details : dict
        Facts a result should report (landmarks, rank, n′, D, h, ...).
    build_time : float
        Seconds its recipe spent on it, when it was built with others from shared
        passes (the share of one operator); 0 otherwise.
    path_rows : int
        Rows of the per-α arrays (rows × L for an α path of L values) a criterion's
        forms hold at once: n here; a streamed operator reduces its rows block by
        block, so a block's. The criteria cut a long α path into pieces by it
        (:func:`kernelselect.criteria._base.alpha_chunks`).
    """

    name = "operator"
    spectral = False

    @property
    def path_rows(self) -> int:
        return self.n

    def __init__(self, n: int, indices: npt.ArrayLike | None = None) -> None:
        self.n = int(n)
        self.indices: np.ndarray | None = None if indices is None else np.asarray(indices, dtype=np.intp)
        self.details: dict[str, Any] = {}
        self.build_time = 0.0

    # -- probes ---------------------------------------------------------------
    def restrict(self, v: npt.ArrayLike) -> np.ndarray:
        """Probe(s) in the original order → the operator's order (rows)."""
        v = np.asarray(v, dtype=np.float64)
        return v if self.indices is None else v[self.indices]

    # -- power moments ----------------------------------------------------------
    def power_quadratic(self, r: int, P: npt.ArrayLike) -> np.ndarray:
        """Pᵀ A^r P for probe columns ``P`` of shape (n, m) (operator order)."""
        raise NotImplementedError

    def power_trace(self, r: int) -> float:
        """tr A^r for a non-negative integer r."""
        raise NotImplementedError

    def diagonal(self) -> np.ndarray:
        """diag A, shape (n,)."""
        raise NotImplementedError

    # -- spectral forms ---------------------------------------------------------
    @property
    def eigenvalues(self) -> np.ndarray:
        """Eigenvalues with (possibly) non-zero weight, shape (rank,)."""
        raise NotImplementedError

    def project(self, P: npt.ArrayLike) -> np.ndarray:
        """Coefficients ⟨q_i, p⟩ of probe columns P (n, m) → (rank, m), maybe complex."""
        raise NotImplementedError

    def _spectral_terms(self, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(coefficients of the probe columns P, the eigenvalues they go with, how many
        times each term counts or None for once): what :meth:`quadratic` sums. An
        operator that stores half of a symmetric spectrum returns that half with its
        multiplicities."""
        return self.project(P), self.eigenvalues, None

    def quadratic(self, g: SpectralFunction, P: npt.ArrayLike,
                  Q: npt.ArrayLike | None = None) -> np.ndarray:
        """Pᵀ g(A) Q, shape (m_P, m_Q) or (m_P, m_Q, L)."""
        Q = P if Q is None else Q
        P = np.asarray(P, dtype=np.float64).reshape(self.n, -1)
        Q = np.asarray(Q, dtype=np.float64).reshape(self.n, -1)
        cp, lam, w = self._spectral_terms(P)
        cq = cp if Q is P else self._spectral_terms(Q)[0]
        if w is not None:                  # Σ_i w_i g(λ_i) conj(cp_ia) cq_ib: weight one side
            cq = w[:, None] * cq
        gl = evaluate_at(g, lam)
        if gl.ndim == 1:
            weighted = np.real(np.conj(cp).T @ (gl[:, None] * cq))
        else:
            # Σ_i g_il conj(cp_ia) cq_ib as one matrix product: (m_P, r) @ (r, m_Q·L)
            r, mq, L = cq.shape[0], cq.shape[1], gl.shape[1]
            scaled = (cq[:, :, None] * gl[:, None, :]).reshape(r, mq * L)
            weighted = np.real(np.conj(cp).T @ scaled).reshape(cp.shape[1], mq, L)
        if self._basis_is_complete():
            return weighted
        g0 = evaluate_at(g, np.zeros(1))[0]
        rest = self._complement_products(P, Q, cp, cq)       # Pᵀ(I − QQᵀ)Q
        if gl.ndim == 1:
            return weighted + g0 * rest
        return weighted + rest[:, :, None] * g0[None, None, :]

    def _complement_products(self, P: np.ndarray, Q: np.ndarray, cp: np.ndarray,
                             cq: np.ndarray) -> np.ndarray:
        """Pᵀ(I − QQᵀ)Q from the probes and their coefficients cp = QᵀP, cq = QᵀQ (the
        difference PᵀQ − cpᵀcq; an operator holding its basis may form it from the
        residual vectors instead, which keeps it accurate when the probes lie almost
        in span(Q))."""
        return P.T @ Q - np.real(np.conj(cp).T @ cq)

    def _basis_is_complete(self) -> bool:
        """Whether the eigenvectors span all of Rⁿ. Then the complement term
        g(0)(I − QQᵀ) of the spectral forms is zero and is left out: computed, it is
        rounding multiplied by g(0), which is α^(−p) for a resolvent (10^(6p) on the
        default α path)."""
        return False

    def trace(self, h: SpectralFunction) -> float | np.ndarray:
        """tr h(A): a float, or shape (L,)."""
        lam = self.eigenvalues
        hl = evaluate_at(h, lam)
        h0 = evaluate_at(h, np.zeros(1))[0]
        return hl.sum(axis=0) + (self.n - lam.shape[0]) * h0

    def diagonal_function(self, g: SpectralFunction) -> np.ndarray:
        """diag g(A), shape (n,) or (n, L)."""
        raise NotImplementedError

    def apply_function(self, g: SpectralFunction, B: npt.ArrayLike) -> np.ndarray:
        """g(A) B for columns B (n, m) → (n, m) or (n, m, L)."""
        raise NotImplementedError

    def block_function(self, g: SpectralFunction, rows: npt.ArrayLike) -> np.ndarray:
        """g(A)[rows][:, rows], the principal block on ``rows`` (operator order):
        shape (b, b, L) for a path of L ridge values, (b, b) otherwise.

        Needed by the k-fold criteria (the held-out residuals of a fold come from the
        fold's block of the inverse). Only operators that hold the whole kernel matrix
        provide it (capability ``"blocks"``): a block of a low-rank stand-in would be an
        n/k × n/k array on a path meant to avoid n²-sized memory.
        """
        raise NotImplementedError(f"{self.name} operators do not provide principal blocks "
                                  "of g(A); use the exact kernel matrix.")

    def reduce_rows(self, g: SpectralFunction | None, B: npt.ArrayLike,
                    func: RowFunction) -> np.ndarray:
        """Σ over row blocks of ``func(B_b, (g(A)B)_b, (diag g(A))_b)``.

        For criteria whose value is a sum over points of a function of per-row
        quantities (the leave-one-out residuals of ELOO, Σ_{i∈class} A_ii): ``func``
        must be additive over rows and return an array of fixed shape. ``g=None``
        asks for diag A only (``func`` then receives ``None`` for the product). An
        in-memory operator passes all rows at once; a streaming one passes blocks
        of rows (possibly on other machines), so ``func`` must not keep state.
        """
        B = np.asarray(B, dtype=np.float64).reshape(self.n, -1)
        if g is None:
            return func(B, None, self.diagonal())
        return func(B, self.apply_function(g, B), self.diagonal_function(g))

    # -- centred forms ----------------------------------------------------------
    def centred_terms(self, y: npt.ArrayLike) -> tuple[float, float]:
        """(y_cᵀ A y_c, ‖HAH‖_F²) with y_c = y − ȳ1 and H = I − 11ᵀ/n.

        Spectral operators (A = QΛQᵀ on its range): with c = Qᵀ1 and the r × r matrix
        M = QᵀHQ = I − ccᵀ/n, ‖HAH‖_F² = ‖Λ^{1/2} M Λ^{1/2}‖_F² and
        y_cᵀAy_c = Σ λ_i (q_iᵀy_c)². The centring acts on the eigenbasis (entries of
        order one), so nothing cancels between terms of order n² when A is close to a
        constant matrix (a Gaussian kernel at small γ·d²); this keeps the centred
        alignment accurate down to γ·d² of about 10⁻¹⁴.

        Others (power moments only): ‖HAH‖_F² = ‖A‖_F² − (2/n)‖A1‖² + (1ᵀA1)²/n²,
        NaN when it falls below 10⁻¹² ‖A‖_F², the rounding of its three terms.
        """
        yc = _centred(y)
        ones = np.ones(self.n)
        if self.spectral:
            lam = np.clip(np.asarray(self.eigenvalues, dtype=np.float64), 0.0, None)
            coef = self.project(np.stack([ones, yc], axis=1))
            c1, cy = coef[:, 0], coef[:, 1]
            M = np.eye(lam.size) - np.real(np.outer(c1, np.conj(c1))) / self.n
            root = np.sqrt(lam)
            G = root[:, None] * M * root[None, :]
            return float(np.real(np.sum(lam * np.abs(cy) ** 2))), float(np.sum(G * G))
        M1 = self.power_quadratic(1, np.stack([ones, yc], axis=1))
        total, ycky = M1[0, 0], M1[1, 1]
        row_sq = self.power_quadratic(2, ones[:, None])[0, 0]
        fro_sq = self.power_trace(2)
        kc_sq = fro_sq - 2.0 / self.n * row_sq + total ** 2 / self.n ** 2
        if kc_sq <= 1e-12 * fro_sq:
            kc_sq = np.nan              # below the rounding of the three terms
        return float(ycky), float(kc_sq)

    # -- power moments from the spectrum (used by spectral operators) -----------
    def _spectral_power_quadratic(self, r: int, P: npt.ArrayLike) -> np.ndarray:
        return self.quadratic(lambda lam: lam ** r, P)

    def _spectral_power_trace(self, r: int) -> float:
        return float(self.trace(lambda lam: lam ** r))


class ExplicitBasisOperator(KernelOperator):
    """An operator given by eigenvalues λ (r,) and an orthonormal basis Q (n, r).

    Dense (Q square), Nyström and random-feature operators are of this kind; the
    complement of span(Q) carries eigenvalue 0.
    """

    spectral = True

    def __init__(self, eigenvalues: npt.ArrayLike, basis: npt.ArrayLike,
                 indices: npt.ArrayLike | None = None) -> None:
        basis = np.asarray(basis, dtype=np.float64)
        super().__init__(basis.shape[0], indices)
        self._lam = np.asarray(eigenvalues, dtype=np.float64)
        self._q = basis

    @property
    def eigenvalues(self) -> np.ndarray:
        return self._lam

    @property
    def basis(self) -> np.ndarray:
        return self._q

    def project(self, P: npt.ArrayLike) -> np.ndarray:
        return self._q.T @ np.asarray(P, dtype=np.float64).reshape(self.n, -1)

    def power_quadratic(self, r: int, P: npt.ArrayLike) -> np.ndarray:
        return self._spectral_power_quadratic(r, P)

    def power_trace(self, r: int) -> float:
        return self._spectral_power_trace(r)

    def diagonal(self) -> np.ndarray:
        return (self._q ** 2) @ self._lam

    def _basis_is_complete(self) -> bool:
        return self._q.shape[1] == self.n

    def diagonal_function(self, g: SpectralFunction) -> np.ndarray:
        gl = evaluate_at(g, self._lam)
        q2 = self._q ** 2
        if self._basis_is_complete():
            return q2 @ gl
        g0 = evaluate_at(g, np.zeros(1))[0]
        rest = 1.0 - q2.sum(axis=1)
        if gl.ndim == 1:
            return q2 @ gl + g0 * rest
        return q2 @ gl + rest[:, None] * g0[None, :]

    def apply_function(self, g: SpectralFunction, B: npt.ArrayLike) -> np.ndarray:
        B = np.asarray(B, dtype=np.float64).reshape(self.n, -1)
        check_function_output(self.n, B.shape[1], np.size(getattr(g, "alphas", 1)))
        c = self._q.T @ B                                   # (r, m)
        gl = evaluate_at(g, self._lam)
        if gl.ndim == 1:
            out = self._q @ (gl[:, None] * c)
        else:
            r, m, L = c.shape[0], c.shape[1], gl.shape[1]
            out = (self._q @ (c[:, :, None] * gl[:, None, :]).reshape(r, m * L)).reshape(
                self.n, m, L)
        if self._basis_is_complete():
            return out
        g0 = evaluate_at(g, np.zeros(1))[0]
        resid = B - self._q @ c
        if gl.ndim == 1:
            return out + g0 * resid
        return out + resid[:, :, None] * g0[None, None, :]


class LazyBasisOperator(ExplicitBasisOperator):
    """An :class:`ExplicitBasisOperator` whose eigenpairs are computed on first need,
    by :meth:`_eigenpairs` (cached by the subclass): the dense operator and the
    low-rank factor operator, which answer some requests without them."""

    def _eigenpairs(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    @property
    def _lam(self) -> np.ndarray:  # type: ignore[override]
        return self._eigenpairs()[0]

    @property
    def _q(self) -> np.ndarray:  # type: ignore[override]
        return self._eigenpairs()[1]


#: (n, m, L) float64 arrays alive at once in ``apply_function`` over an α path (the
#: product, its combination with the residual and the caller's copy)
_FUNCTION_TEMPORARIES = 3


def check_function_output(n: int, columns: int, n_alphas: int) -> None:
    """Refuse, through the memory guard, g(A)B for ``columns`` columns B over an α path
    of ``n_alphas`` values when its (n, columns, n_alphas) result and temporaries
    would exceed the limit (a fitted machine keeps one coefficient vector per α)."""
    check_allocation(8.0 * _FUNCTION_TEMPORARIES * n * max(columns, 1) * max(n_alphas, 1),
                     f"g(K)B for {columns} column(s) over a path of {n_alphas} ridge values "
                     f"on n = {n} points (an (n, {columns}, {n_alphas}) array)",
                     "pass fewer alphas at a time")


@dataclass(frozen=True)
class Capabilities:
    """What an approximation can do, declared once by the approximation itself.

    Attributes
    ----------
    criteria : frozenset of str
        The capability tags its operators offer to criteria (``Criterion.needs``):
        ``"moments"``, ``"spectral"``, ``"blocks"``, ``"random_mcm"``, …
    grid : bool
        :meth:`Approximation.build_all` builds a whole γ grid from shared passes over
        in-memory rows (drivers then call it instead of :meth:`~Approximation.build`
        per γ, unless :meth:`~Approximation.prefers_per_gamma` says otherwise).
    dask : bool
        ``build_all`` also runs on a Dask row source, X staying in its chunks.
    fit : bool
        A kernel machine can be trained on its operators (:meth:`Approximation.machine`).
    """

    criteria: frozenset[str]
    grid: bool = False
    dask: bool = False
    fit: bool = False


class PointsCache:
    """The points of the last in-memory X an approximation built on, conditioned for
    the compiled kernels (:class:`~kernelselect.primitives._kernel_ops.Points`) on the first
    build and reused while the same array comes back: the drivers hand every γ of a
    grid the array they prepared, so X is checked, translated and copied once per data
    set, not per γ. Another array is conditioned anew."""

    __slots__ = ("_points",)

    def __init__(self) -> None:
        self._points: Points | None = None

    def __call__(self, X: Any, kernel: Kernel) -> Points:
        points = self._points
        if points is None or points.source is not X or points.kernel is not kernel:
            points = self._points = Points(X, kernel)
        return points


class Parameterised:
    """An object whose constructor arguments are its parameters (scikit-learn's
    protocol): :meth:`get_params`, :meth:`set_params`, equality of parameters, a
    ``repr`` that shows the ones that differ from their defaults, so that
    ``sklearn.base.clone`` copies it. The base of :class:`Approximation` (a stand-in
    for the kernel matrix) and of the machines' fitting recipes
    (:class:`~kernelselect.solvers.MachineRecipe`)."""

    def selection_refusal(self) -> str:
        """Why this object cannot be the ``approximation`` of a selection (one that is
        not an :class:`Approximation`)."""
        return (f"approximation must be a name or an Approximation instance, got "
                f"{self!r}.")

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """The parameter names: the keyword arguments of ``__init__``."""
        init = cls.__init__
        if init is object.__init__:
            return []
        params = inspect.signature(init).parameters.values()
        return [p.name for p in params if p.name != "self"
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters as a dict (scikit-learn's protocol).

        Parameters
        ----------
        deep : bool, default=True
            Also list the parameters of parameters that have ``get_params``, as
            ``name__sub``.
        """
        out: dict[str, Any] = {}
        for key in self._get_param_names():
            try:
                value = getattr(self, key)
            except AttributeError:
                raise AttributeError(
                    f"{type(self).__name__}.__init__ takes {key!r} but does not store it as "
                    f"self.{key}; every constructor argument must be kept under its own name "
                    "(scikit-learn's convention) for get_params and clone to work."
                ) from None
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params: Any) -> Parameterised:
        """Set constructor parameters (``name`` or ``name__sub``); returns self."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            head, delim, sub = key.partition("__")
            if head not in valid:
                raise ValueError(
                    f"{type(self).__name__} has no parameter {head!r}; valid parameters: "
                    f"{', '.join(self._get_param_names()) or '(none)'}."
                )
            if delim:
                nested.setdefault(head, {})[sub] = value
            else:
                setattr(self, head, value)
                valid[head] = value
        for head, sub_params in nested.items():
            valid[head].set_params(**sub_params)
        return self

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        mine, theirs = self.get_params(deep=False), other.get_params(deep=False)
        return mine.keys() == theirs.keys() and all(
            _same_value(mine[k], theirs[k]) for k in mine)

    def __hash__(self) -> int:
        # equal objects have the same type; parameters may be unhashable (arrays)
        return hash(type(self))

    def __repr__(self) -> str:
        """Like scikit-learn: only the parameters that differ from their defaults."""
        defaults: dict[str, Any] = {}
        if type(self).__init__ is not object.__init__:
            defaults = {p.name: p.default for p in
                        inspect.signature(type(self).__init__).parameters.values()}
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items()
                         if k not in defaults or not _same_value(v, defaults[k]))
        return f"{type(self).__name__}({args})"


class Approximation(Parameterised):
    """A recipe that builds a :class:`KernelOperator` for one kernel.

    Subclasses (``Exact``, ``Nystroem``, ``RFF``, ``MCM``, ``RandomMCM``, ...) hold
    scikit-learn style parameters (plain attributes set in ``__init__``) and
    implement :meth:`build`. Randomised recipes should draw their randomness once
    per ``prepare`` call (e.g. standard-normal frequencies, landmark indices) and
    reuse it for every γ, so that a criterion curve over γ is smooth (common random
    numbers) and reproducible for a fixed ``random_state``.

    The protocol a driver uses, and nothing else: :attr:`label`, :attr:`capabilities`
    (with :attr:`provides`), :meth:`configured`, :meth:`rescaled`,
    :meth:`check_resources`, :meth:`prepare` (its state is a small frozen dataclass
    of the approximation's own, or None), :meth:`build`, :meth:`build_all`,
    :meth:`prefers_per_gamma` and :meth:`machine`. A driver never asks which class
    an approximation is.

    ``prepare`` receives X once per data set, as the public entry point checked it;
    ``build`` receives that same array for every γ (with a positive γ, a kernel name
    or :class:`~kernelselect.utils._kernel_family.Kernel` and a thread count) and does not
    check or copy it again.
    """

    name = "approximation"
    #: capability tags the built operators offer (see ``Criterion.needs``)
    provides: frozenset[str] = frozenset({"moments", "spectral"})

    @property
    def label(self) -> str:
        """The name results, plots and messages show for this approximation."""
        return self.name

    @property
    def capabilities(self) -> Capabilities:
        """What this recipe can do (:class:`Capabilities`); by default only its
        ``provides`` tags: one operator per γ, in memory, no machine."""
        return Capabilities(frozenset(self.provides))

    def configure(self, needs: Iterable[str]) -> None:
        """Told, before :meth:`prepare`, the set of capability tags the criteria of
        one call need; recipes with a choice of operator (``Exact``) pick from it.

        It may record the choice on ``self``; drivers call it through
        :meth:`configured`, which leaves the caller's instance untouched."""
        return None

    def configured(self, needs: Iterable[str]) -> Approximation:
        """An instance told ``needs`` (see :meth:`configure`): ``self`` when the
        recipe has no choice to make, else a shallow copy, so that an instance given
        by the caller (and its clones) keeps the parameters it was built with."""
        if type(self).configure is Approximation.configure:
            return self
        other = copy.copy(self)
        other.configure(needs)
        return other

    def rescaled(self, transform: Callable[[np.ndarray], np.ndarray]) -> Approximation:
        """The recipe for data that the caller maps through ``transform`` (e.g.
        ``standardize=True``) before building: points it holds in X's units (user
        landmarks) go through the same map. ``self`` when it holds none; otherwise a
        shallow copy, leaving the caller's instance untouched."""
        return self

    def prepare(self, X: np.ndarray, y: np.ndarray | None, *, kernel: str,
                random_state: RandomState, workers: int | None) -> PreparedState:
        """Draw whatever is shared by every γ; returns the recipe's state (or None)."""
        return None

    def check_resources(self, n: int, d: int) -> Any:
        """Raise ``ValueError`` when working on n points of d features would allocate
        more than the limit of :func:`kernelselect.set_config` (checked by ``prepare``
        too; callers that will build later call it first, before any long work)."""
        return None

    def build(self, X: np.ndarray, y: np.ndarray | None, gamma: float, *, kernel: str,
              state: PreparedState, workers: int | None) -> KernelOperator:
        """The operator for kernel parameter ``gamma`` (``state`` from :meth:`prepare`)."""
        raise NotImplementedError

    def _build_start(self, X: Any, y: Any, gamma: float, kernel: str | Kernel, state: Any,
                     workers: int | None) -> tuple[Kernel, float, Any]:
        """(the kernel family, γ checked positive, the state) that :meth:`build` starts
        from; called without the state of :meth:`prepare`, it prepares one (with no
        random state). γ is checked by the primitives' ``checked_kernel``."""
        family, gamma = checked_kernel(kernel, gamma, per_feature=False)
        if state is None:
            state = self.prepare(X, y, kernel=family, random_state=None, workers=workers)
        return family, gamma, state

    def build_all(self, rows: Any, y: np.ndarray | None, gammas: Gammas, *,
                  kernel: str, state: PreparedState) -> Sequence[KernelOperator] | None:
        """Operators for every γ of a grid from shared passes over ``rows`` (an
        :class:`~kernelselect.operators._row_passes.ArrayRows` or a Dask row source),
        or None when this recipe builds one γ at a time (see :attr:`capabilities`)."""
        return None

    def prefers_per_gamma(self, n: int, d: int) -> bool:
        """Whether in-memory data of n × d is better served by :meth:`build` one γ at a
        time than by :meth:`build_all` (a recipe with both)."""
        return False

    def machine(self, exact_solver: str | None = None, n_alphas: int = 1
                ) -> tuple[Approximation, str | None]:
        """(the approximation whose operator a kernel machine is solved on, the solver
        strategy it uses or None): ``self`` by default; ``ValueError`` saying why when
        its operators cannot train a machine (:attr:`Capabilities.fit` is False). The
        machines reach it through their fitting recipe
        (:class:`~kernelselect.solvers.OperatorRecipe`)."""
        if not self.capabilities.fit:
            raise ValueError(self.refusal())
        return self, None

    def refusal(self) -> str:
        """Why a kernel machine cannot be trained with this recipe."""
        return f"approximation {self!r} has no solver; use 'exact', 'nystrom' or 'rff'."


def _same_value(a: Any, b: Any) -> bool:
    """Parameter equality that also compares arrays (by shape and contents)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.dtype == b.dtype and np.array_equal(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False
