"""Streaming Nyström and random-feature operators: a whole γ grid from row blocks.

The low-rank stand-ins K̃ = VVᵀ of :mod:`~kernelselect.operators.nystrom` and
:mod:`~kernelselect.operators.rff` have V = F T, where F (n × c) is a feature block
(Nyström: C = K(X, Z) for c landmarks Z; random features: Z) and T (c × k′) a small
map (Nyström: U_k Σ_k^{−1/2} from W = K(Z, Z) = UΣUᵀ, or L⁻ᵀ from W = LLᵀ where W is
well conditioned (:func:`~kernelselect.operators.nystrom._cholesky_transform`);
random features: I). Every
spectral form the criteria use is a function of small statistics and of rows of F:

*First pass* (one read of X for every γ of the grid). Per row block X_b the shared
block S_b is formed once (Nyström: squared distances ‖x − z‖² or L1 distances to the
landmarks; random features: the projections X_b W₀) and, for each γ, the feature
block F_b = f_γ(S_b) (an ``exp`` or ``cos`` per entry) adds F_bᵀF_b to G_γ = FᵀF
(c × c) and F_bᵀY_b to H_γ = FᵀY (c × m) for a probe basis Y (below).

*Spectrum* (per γ, c × c work). VᵀV = TᵀG_γT = RΛRᵀ (eigh) gives the non-zero
eigenvalues λ of K̃ and the eigenvectors Q = V R Λ^{−1/2} = F M with
M = T R Λ^{−1/2}; so Qᵀp = M ᵀFᵀp and QᵀY = Λ^{−1/2}RᵀTᵀH_γ without any n × c
array. Every probe the criteria use (y, 1, centred y, class indicators, ȳ) lies in
the span of a small probe basis Y ([y 1], or the class indicators when y takes at
most 64 values) and is projected through its coefficients in that basis.

*Second pass* (only for criteria that need per-row quantities, such as the
leave-one-out diagonal of ELOO). Rows of Q are Q_b = F_b M; with the spectral
calculus of :mod:`~kernelselect.operators._base`,
diag g(K̃)_i = g(0) + Σ_j (g(λ_j) − g(0)) q_ij² and
(g(K̃)B)_i = g(0) B_i + Σ_j (g(λ_j) − g(0)) q_ij ⟨q_j, B⟩. Requests from every γ and
every criterion are served by one more read of X (:func:`evaluate_grid`).

Memory beyond X and y: O(b·c) per thread for a row block of b rows and
O(n_γ·c²) for the statistics; no n × c array. Cost per γ: n·c function
evaluations and n·c² flops (the symmetric Gram product) in the first pass, n·c
function evaluations and 2n·c·k flops (F_b M) in the second.

The feature maps live in :mod:`~kernelselect.operators._feature_maps`, the per-block
passes and the in-process row source in :mod:`~kernelselect.operators._row_passes`;
their names are re-exported here.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, Union

import numpy as np
import numpy.typing as npt

from ..primitives._kernel_ops import symmetric_eigh_unchecked
from ..utils._resources import check_allocation
from ..utils._threads import blas_for_flops, map_in_threads
from .._typing import RowFunction, SpectralFunction
from ._base import KernelOperator, evaluate_at
from ._feature_maps import (
    BLOCK_ENTRIES,
    SQUARINGS,
    FeatureMap,
    FourierFeatures,
    LandmarkFeatures,
    block_rows,
)
from ._row_passes import (
    MAX_CLASSES,
    ArrayRows,
    add_parts,
    default_threads,
    first_pass,
    probe_basis,
    probe_values,
    second_pass,
)

__all__ = [
    "LandmarkFeatures",
    "FourierFeatures",
    "FeatureMap",
    "ArrayRows",
    "StreamingLowRankOperator",
    "RowsPending",
    "Transform",
    "build_operators",
    "evaluate_grid",
    "check_streaming_memory",
    "block_rows",
    "default_threads",
    "probe_basis",
    "probe_values",
    "first_pass",
    "second_pass",
    "add_parts",
    "BLOCK_ENTRIES",
    "SQUARINGS",
    "MAX_CLASSES",
    "EIGEN_TOL",
    "ROW_TOL",
]


#: One row-reduction request: (operator, key, (g, coef, func)), the probes B = Y·coef
#: held by their coefficients in the probe basis (m_Y × k), not by their n rows.
Request = tuple["StreamingLowRankOperator", Any,
                tuple[Union[SpectralFunction, None], np.ndarray, RowFunction]]

#: rows per block when probes are projected on the probe basis (_Family.coefficients)
PROJECTION_ROWS = 2**16
#: eigenvalues of VᵀV below this fraction of the largest are rounding noise
#: (eigh of a c × c Gram matrix is accurate to about c·ε·λ_max)
EIGEN_TOL = 1e-13
#: |g(λ) − g(0)| at or below this fraction of max|g| contributes nothing to a row form
ROW_TOL = 1e-15



class RowsPending(Exception):
    """Raised by :meth:`StreamingLowRankOperator.reduce_rows` while a grid evaluation
    collects the row reductions of every γ for one shared pass (:func:`evaluate_grid`)."""


class _Family:
    """What the operators of one grid share: the row source, the feature map and the
    pending row reductions."""

    def __init__(self, rows: Any, fmap: FeatureMap | None, y: np.ndarray) -> None:
        self.rows = rows
        self.fmap = fmap
        self.y = y
        self.values = probe_values(y)
        self.n = int(np.shape(y)[0])
        self.gram = sum(Yb.T @ Yb for Yb in (probe_basis(y[a:b], self.values)
                                             for a, b in self._blocks()))
        self.pending: list[Any] = []          # requests, as the family's run takes them

    def basis_rows(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of the probe basis Y (n, m_Y), made when needed rather than
        kept: a selection keeps the operators of every grid it built, and n·m_Y floats
        per grid would add up to gigabytes at 10⁷ rows."""
        return probe_basis(self.y[start:stop], self.values)

    def _blocks(self) -> list[tuple[int, int]]:
        return [(a, min(a + PROJECTION_ROWS, self.n)) for a in range(0, self.n, PROJECTION_ROWS)]

    def coefficients(self, P: npt.ArrayLike) -> np.ndarray:
        """coef (m_Y, m) with P = Y·coef; ValueError when P is outside span(Y).

        YᵀP and the residual P − Y·coef are taken over blocks of
        :data:`PROJECTION_ROWS` rows, as the Gram matrix YᵀY is, so that no n-row
        temporary is made (one block for smaller n: the single product as before)."""
        P = np.asarray(P, dtype=np.float64).reshape(self.n, -1)
        blocks = self._blocks()
        YtP = sum(self.basis_rows(a, b).T @ P[a:b] for a, b in blocks)
        coef = np.linalg.solve(self.gram, YtP)
        scale = max(float(np.max(np.abs(P), initial=0.0)), 1e-300)
        resid = max((float(np.max(np.abs(P[a:b] - self.basis_rows(a, b) @ coef), initial=0.0))
                     for a, b in blocks), default=0.0)
        if resid > 1e-9 * scale:
            raise ValueError(
                "the streaming operator projects probes in the span of y, 1 and the class "
                "indicators only; build an in-memory operator (Approximation.build) for "
                "other probes."
            )
        return coef

    def run(self, requests: list[Any], rows: Any = None) -> None:
        """Serve (operator, key, (g, B, func)) requests in one pass over the rows."""
        by_gamma: dict[int, list[Request]] = {}
        for op, key, req in requests:
            by_gamma.setdefault(op.index, []).append((op, key, req))
        plan: list[tuple[int, np.ndarray, list[Any]]] = []
        slots: list[tuple[StreamingLowRankOperator, Any]] = []
        for i, items in by_gamma.items():
            op = items[0][0]
            prepared = [op._prepare_rows(*req) for _, _, req in items]
            keep = np.zeros(op.eigenvalues.size, dtype=bool)
            for k_, *_ in prepared:
                keep |= k_
            Mu = np.ascontiguousarray(op._M[:, keep])
            reqs = []
            for (_, coef, cB, dgl, g0, func), (o, key, _) in zip(prepared, items):
                reqs.append((coef, None if cB is None else cB[keep], dgl[keep], g0, func))
                slots.append((o, key))
            plan.append((i, Mu, reqs))
        parts = (rows or self.rows).reduce(second_pass, self.fmap, self.values, plan)
        for (op, key), value in zip(slots, parts):
            op._answers[key] = value


class Transform:
    """How the statistics of one γ map to V = F T.

    The first pass accumulates the Gram matrix of P = F A (``rotation`` A, None for
    the identity); VᵀV = postᵀ(PᵀP)post with ``post`` a matrix, a vector (a diagonal)
    or None (the identity), and T = A·post. Nyström with a well-conditioned W
    uses A = I, post = T = U_kΣ_k^{−1/2}. With an ill-conditioned W (σ_max/σ_min > 10⁴
    among the kept eigenvalues) the rounding error of FᵀF, about ε‖F‖², would be
    amplified by σ_max/σ_min in TᵀFᵀFT; accumulating the Gram matrix of the rotated
    block F U_k (A = U_k, post = Σ_k^{−1/2}) keeps its error relative to each
    direction, as the in-memory factor V = C T does.
    """

    __slots__ = ("rotation", "post", "T")

    def __init__(self, rotation: np.ndarray | None = None, post: np.ndarray | None = None,
                 T: np.ndarray | None = None) -> None:
        self.rotation, self.post, self.T = rotation, post, T


class StreamingLowRankOperator(KernelOperator):
    """K̃ = VVᵀ, V = F T, known through FᵀF, FᵀY and passes over the rows.

    Spectral operator: eigenvalues λ (descending) and projections Qᵀp of probes in
    span(Y) come from the statistics; row forms go through :meth:`reduce_rows`
    (one more pass over X, shared by every γ of a grid evaluation).
    """

    spectral = True

    def __init__(self, family: _Family, index: int, G: np.ndarray, H: np.ndarray,
                 transform: Transform, name: str) -> None:
        super().__init__(family.n)
        self.name = name
        self._family = family
        self.index = index
        post, T = transform.post, transform.T
        G = 0.5 * (G + G.T)
        if post is None:
            VtV, VtY = G, H
        elif post.ndim == 1:                                     # a diagonal scaling
            VtV, VtY = G * post[:, None] * post[None, :], H * post[:, None]
        else:
            VtV, VtY = post.T @ G @ post, post.T @ H
        if VtV.shape[0] == 0:
            lam, R = np.zeros(0), np.zeros((0, 0))
        else:
            with blas_for_flops(float(VtV.shape[0]) ** 3):
                lam, R = symmetric_eigh_unchecked(0.5 * (VtV + VtV.T))
        order = np.argsort(lam)[::-1]
        lam, R = lam[order], R[:, order]
        top = max(float(lam[0]), 0.0) if lam.size else 0.0
        keep = lam > EIGEN_TOL * top
        lam, R = lam[keep], R[:, keep]
        root = np.sqrt(lam)
        self._lam = lam
        RS = R / root
        self._M = RS if T is None else T @ RS                   # Q = F M
        self._QtY = RS.T @ VtY                                   # QᵀY, (r, m_Y)
        self._answers: dict[Any, np.ndarray] = {}
        self._scope: Any = None
        self._cursor = 0
        self.collect = False
        self.effective_rank = int(VtV.shape[0])

    @property
    def path_rows(self) -> int:
        """Rows one reduction holds (a block of :func:`block_rows` rows): the α path is
        served whole by one pass over the rows, not one pass per piece of it."""
        fmap = self._family.fmap
        return self.n if fmap is None else min(self.n, block_rows(fmap.width))

    # -- spectral forms ---------------------------------------------------------
    @property
    def eigenvalues(self) -> np.ndarray:
        return self._lam

    def project(self, P: npt.ArrayLike) -> np.ndarray:
        return self._QtY @ self._family.coefficients(P)

    def power_quadratic(self, r: int, P: npt.ArrayLike) -> np.ndarray:
        return self._spectral_power_quadratic(r, P)

    def power_trace(self, r: int) -> float:
        return self._spectral_power_trace(r)

    # -- row forms ----------------------------------------------------------------
    def _prepare_rows(self, g: SpectralFunction | None, coef: np.ndarray, func: RowFunction
                      ) -> tuple[Any, np.ndarray, np.ndarray | None, np.ndarray, Any, RowFunction]:
        lam = self._lam
        if g is None:                                        # diag K̃ only
            gl, g0, cB = lam, 0.0, None
        else:
            gl = evaluate_at(g, lam)
            g0 = evaluate_at(g, np.zeros(1))[0]
            cB = self._QtY @ coef
        dgl = gl - g0 if np.ndim(gl) == 1 else gl - np.asarray(g0)[None, :]
        scale = max(float(np.max(np.abs(gl), initial=0.0)),
                    float(np.max(np.abs(g0), initial=0.0)), 1e-300)
        big = np.abs(dgl) > ROW_TOL * scale
        keep = big if big.ndim == 1 else big.any(axis=1)
        return keep, coef, cB, dgl, g0, func

    def reduce_rows(self, g: SpectralFunction | None, B: npt.ArrayLike,
                    func: RowFunction) -> np.ndarray:
        key = (self._scope, self._cursor)
        self._cursor += 1
        if key in self._answers:
            return self._answers[key]
        request: Request = (self, key, (g, self._family.coefficients(B), func))
        if self.collect:
            self._family.pending.append(request)
            raise RowsPending(key)
        self._family.run([request])
        return self._answers[key]

    def _rows_collected(self, g: SpectralFunction | None, B: np.ndarray
                        ) -> tuple[np.ndarray | None, np.ndarray]:
        """(g(K̃)B, diag g(K̃)) as n-row arrays, by a sequential pass (in memory only)."""
        rows = self._family.rows
        if not isinstance(rows, ArrayRows):
            raise TypeError("per-row arrays of a distributed operator are not gathered; "
                            "criteria reduce rows with reduce_rows instead.")
        parts: list[tuple[np.ndarray | None, np.ndarray]] = []

        def grab(Bb: np.ndarray, gB: np.ndarray | None, dg: np.ndarray) -> np.ndarray:
            parts.append((gB, dg))
            return np.zeros(1)

        key = ("collect", len(self._answers))
        self._family.run([(self, key, (g, self._family.coefficients(B), grab))],
                         rows=ArrayRows(rows.X, rows.y, threads=1, rows=rows.rows))
        gBs = [p[0] for p in parts]
        return (None if gBs[0] is None else np.concatenate([gb for gb in gBs if gb is not None])
                ), np.concatenate(
            [p[1] for p in parts])

    def diagonal(self) -> np.ndarray:
        return self._rows_collected(None, np.ones((self.n, 1)))[1]

    def diagonal_function(self, g: SpectralFunction) -> np.ndarray:
        return self._rows_collected(g, np.ones((self.n, 1)))[1]

    def apply_function(self, g: SpectralFunction, B: npt.ArrayLike) -> np.ndarray:
        B = np.asarray(B, dtype=np.float64).reshape(self.n, -1)
        out = self._rows_collected(g, B)[0]
        assert out is not None                      # g is given
        return out


def check_streaming_memory(rows: Any, y: npt.ArrayLike | None, width: int, n_gammas: int,
                           what: str, hint: str) -> None:
    """The memory guard for one streamed grid, before anything of that size is made:
    blocks in flight, the c × c statistics and transforms of every γ, the probe basis
    (held by the caller, n × m)."""
    threads = getattr(rows, "threads", None) or 1
    block = 8 * block_rows(width) * width
    values = probe_values(np.asarray(y))
    m = 2 if values is None else values.size
    check_allocation(8.0 * (4 * threads * block + 4 * n_gammas * width * width
                            + (m + 3) * rows.n),
                     f"{what} streamed for {n_gammas} kernels at n={rows.n} (row blocks and "
                     f"{n_gammas} statistics of {width} × {width})", hint)


def build_operators(rows: Any, fmap: FeatureMap, y: npt.ArrayLike | None,
                    transforms: Sequence[Transform], name: str,
                    details: Sequence[dict[str, Any]]) -> list[StreamingLowRankOperator]:
    """One first pass over ``rows``; an operator per γ (``transforms[i]`` a
    :class:`Transform`)."""
    family = _Family(rows, fmap, np.asarray(y, dtype=np.float64))
    parts = rows.reduce(first_pass, fmap, family.values, [t.rotation for t in transforms])
    ng = len(transforms)
    _check_features_finite(fmap, parts[:ng], name)

    def operator(i: int) -> StreamingLowRankOperator:
        op = StreamingLowRankOperator(family, i, parts[i], parts[ng + i], transforms[i], name)
        op.details = dict(details[i], effective_rank=op.effective_rank, method="streaming")
        return op

    # one eigendecomposition per γ, on the row source's threads (it releases the
    # interpreter lock)
    return map_in_threads(operator, range(ng), getattr(rows, "threads", None) or 1)


def _check_features_finite(fmap: FeatureMap, grams: Sequence[np.ndarray | None],
                           name: str) -> None:
    """ValueError naming ``gammas`` when a γ's feature blocks held NaN or ±∞, which
    reach the diagonal of its Gram matrix (finite X and γ do it only by overflow: the
    random-feature phases s_γ·W₀ᵀx beyond float64)."""
    bad = [float(g) for g, G in zip(fmap.gammas, grams)
           if G is not None and not np.all(np.isfinite(np.diagonal(G)))]
    if bad:
        shown = ", ".join(f"{g:.3g}" for g in bad[:5]) + (", …" if len(bad) > 5 else "")
        raise ValueError(
            f"gammas: the {name} features are not finite at γ = {shown} for this X (the "
            "products of γ with the values of X overflow float64); use smaller gammas, or "
            "rescale X (standardize=True).")


def evaluate_grid(ops: Sequence[Any], tasks: Sequence[Any],
                  evaluate: Callable[[int, Any, Any], object]) -> None:
    """Call ``evaluate(i, op, task)`` for every operator and task; row reductions
    requested by any call are collected and served by one shared pass over the rows,
    then those calls are repeated (criteria are deterministic and cheap once the
    passes are done)."""
    todo = [(i, t) for i in range(len(ops)) for t in tasks]
    for op in ops:
        op.collect = True
    family = ops[0]._family if ops else None
    try:
        while todo:
            retry = []
            for i, t in todo:
                ops[i]._scope, ops[i]._cursor = t, 0
                try:
                    evaluate(i, ops[i], t)
                except RowsPending:
                    retry.append((i, t))
            if retry:
                assert family is not None
                pending, family.pending = family.pending, []
                family.run(pending)
            todo = retry
    finally:
        for op in ops:
            op.collect = False
            op._scope = None
