"""Streaming Nyström and random-feature operators: a whole γ grid from row blocks.

The low-rank stand-ins K̃ = VVᵀ of :mod:`~kernelselect.operators.nystrom` and
:mod:`~kernelselect.operators.rff` have V = F T, where F (n × c) is a feature block
(Nyström: C = K(X, Z) for c landmarks Z; random features: Z) and T (c × k′) a small
map (Nyström: U_k Σ_k^{−1/2} from W = K(Z, Z) = UΣUᵀ; random features: I). Every
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
"""

from __future__ import annotations

import concurrent.futures
import os
from collections import deque
from typing import Any, Callable, Iterator, Protocol, Sequence, Union

import numpy as np
import numpy.typing as npt
import scipy.linalg

from .._threads import blas_for_flops, one_blas_thread
from .._typing import RowFunction, SpectralFunction
from ._base import KernelOperator, evaluate_at

__all__ = [
    "LandmarkFeatures",
    "FourierFeatures",
    "ArrayRows",
    "StreamingLowRankOperator",
    "RowsPending",
    "Transform",
    "build_operators",
    "evaluate_grid",
    "block_rows",
]


class FeatureMap(Protocol):
    """Feature blocks for every γ of a grid from one shared block per row block
    (:class:`LandmarkFeatures`, :class:`FourierFeatures`)."""

    width: int

    def shared(self, Xb: npt.ArrayLike) -> np.ndarray: ...

    def block(self, S: np.ndarray, i: int, out: np.ndarray,
              chain: list[Any] | None = None) -> np.ndarray: ...


#: One row-reduction request: (operator, key, (g, B, func)).
Request = tuple["StreamingLowRankOperator", Any,
                tuple[Union[SpectralFunction, None], npt.ArrayLike, RowFunction]]

#: exp(−2γS) is formed as exp(−γS)² at most this many times in a row
SQUARINGS = 3
#: entries of one feature block (b·c); 2¹⁸ doubles = 2 MB keeps a block in L2/L3
BLOCK_ENTRIES = 1 << 18
#: eigenvalues of VᵀV below this fraction of the largest are rounding noise
#: (eigh of a c × c Gram matrix is accurate to about c·ε·λ_max)
EIGEN_TOL = 1e-13
#: targets with at most this many distinct values are projected through their class
#: indicators (multiclass criteria such as DI need them), others through [y 1]
MAX_CLASSES = 64
#: |g(λ) − g(0)| at or below this fraction of max|g| contributes nothing to a row form
ROW_TOL = 1e-15


def block_rows(width: int) -> int:
    """Rows per block for feature blocks of ``width`` columns (at least 64)."""
    return max(64, BLOCK_ENTRIES // max(int(width), 1))


class LandmarkFeatures:
    """Nyström feature blocks C_b = K(X_b, Z) for every γ from one distance block.

    Gaussian: S_b = ‖x − z‖² = ‖x‖² + ‖z‖² − 2x·z (one GEMM, after centring X and Z
    on the landmark mean, which leaves distances unchanged and reduces cancellation;
    clamped at 0); Laplacian: S_b = ‖x − z‖₁. Then C_b = exp(−γ S_b) per γ.
    """

    def __init__(self, Z: npt.ArrayLike, gammas: npt.ArrayLike, kernel: str) -> None:
        self.kernel = kernel
        self.gammas = np.asarray(gammas, dtype=np.float64)
        Z = np.ascontiguousarray(Z, dtype=np.float64)
        self.width = Z.shape[0]
        if kernel == "gaussian":
            self.centre = Z.mean(axis=0)
            self.Z = np.ascontiguousarray(Z - self.centre)
            self.z_sq = np.einsum("ij,ij->i", self.Z, self.Z)
        else:
            self.Z = Z

    def shared(self, Xb: npt.ArrayLike) -> np.ndarray:
        Xb = np.asarray(Xb, dtype=np.float64)
        if self.kernel == "gaussian":
            Xc = Xb - self.centre
            S = Xc @ self.Z.T
            S *= -2.0
            S += np.einsum("ij,ij->i", Xc, Xc)[:, None]
            S += self.z_sq[None, :]
            np.maximum(S, 0.0, out=S)
            return S
        from scipy.spatial.distance import cdist

        return cdist(Xb, self.Z, "cityblock")

    def block(self, S: np.ndarray, i: int, out: np.ndarray,
              chain: list[Any] | None = None) -> np.ndarray:
        """exp(−γ_i S) into ``out``. ``chain`` = [index, squarings] says which γ ``out``
        holds (updated here; one per caller and buffer). When γ_i = 2γ_index (the default
        grid doubles γ), ``out`` is squared instead: exp(−2γS) = exp(−γS)², one
        multiplication instead of an exponential per entry. Each squaring doubles the
        relative rounding error, so a fresh exponential is taken after SQUARINGS of them
        (error ≤ 2^SQUARINGS·ε)."""
        g = self.gammas
        if chain is not None and chain[0] == i - 1 and i > 0 and g[i] == 2.0 * g[i - 1] \
                and chain[1] < SQUARINGS:
            np.multiply(out, out, out=out)
            chain[0], chain[1] = i, chain[1] + 1
            return out
        np.multiply(S, -g[i], out=out)
        if chain is not None:
            chain[0], chain[1] = i, 0
        return np.exp(out, out=out)


class FourierFeatures:
    """Random Fourier feature blocks z(x) = √(2/D) cos(s_γ W₀ᵀx + b) for every γ from
    one projection block X_b W₀ (s_γ = √(2γ) Gaussian, γ Laplacian; Rahimi & Recht 2007)."""

    def __init__(self, W0: npt.ArrayLike, b: npt.ArrayLike, gammas: npt.ArrayLike,
                 kernel: str) -> None:
        self.W0 = np.ascontiguousarray(W0, dtype=np.float64)
        self.b = np.asarray(b, dtype=np.float64)
        self.width = self.W0.shape[1]
        g = np.asarray(gammas, dtype=np.float64)
        self.scales = np.sqrt(2.0 * g) if kernel == "gaussian" else g
        self.norm = np.sqrt(2.0 / self.width)

    def shared(self, Xb: npt.ArrayLike) -> np.ndarray:
        return np.asarray(Xb, dtype=np.float64) @ self.W0

    def block(self, S: np.ndarray, i: int, out: np.ndarray,
              chain: list[Any] | None = None) -> np.ndarray:
        np.multiply(S, self.scales[i], out=out)
        out += self.b[None, :]
        np.cos(out, out=out)
        out *= self.norm
        return out


# ---------------------------------------------------------------------------
# per-block work (shared by the in-process pool and the Dask graph)
# ---------------------------------------------------------------------------


def _sub_blocks(n: int, rows: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, rows):
        yield start, min(start + rows, n)


def probe_basis(yb: npt.ArrayLike, values: np.ndarray | None) -> np.ndarray:
    """Rows of the probe basis Y: [y 1], or the class indicators when ``values`` (the
    distinct values of y, few of them) is given; y and 1 lie in the span of either."""
    yb = np.asarray(yb, dtype=np.float64)
    if values is None:
        return np.stack([yb, np.ones_like(yb)], axis=1)
    return (yb[:, None] == values[None, :]).astype(np.float64)


def first_pass(fmap: FeatureMap, Xb: np.ndarray, yb: np.ndarray, values: np.ndarray | None,
               rotations: Sequence[np.ndarray | None]) -> list[np.ndarray]:
    """Statistics of one block of rows for every γ: the list [G_0, …, H_0, …] with
    G = PᵀP and H = PᵀY for P = F A (``rotations[i]`` = A, or None for A = I) and
    the probe basis Y (:func:`probe_basis`).

    Long blocks are cut into sub-blocks of :func:`block_rows` rows, so the
    temporaries stay O(b·c).
    """
    ng = _n_gammas(fmap)
    G: list[Any] = [None] * ng
    H: list[Any] = [None] * ng
    rows = block_rows(fmap.width)
    for a, b in _sub_blocks(Xb.shape[0], rows):
        S = fmap.shared(Xb[a:b])
        F = np.empty_like(S)
        Yb = probe_basis(yb[a:b], values)
        chain: list[Any] = [None, 0]
        for i in range(ng):
            fmap.block(S, i, F, chain)
            P = F if rotations[i] is None else F @ rotations[i]
            g, h = P.T @ P, P.T @ Yb                # PᵀP is a symmetric (syrk) product
            G[i] = g if G[i] is None else G[i] + g
            H[i] = h if H[i] is None else H[i] + h
    return G + H


def _n_gammas(fmap: Any) -> int:
    return (fmap.gammas if hasattr(fmap, "gammas") else fmap.scales).size


def second_pass(fmap: FeatureMap, Xb: np.ndarray, yb: np.ndarray, values: np.ndarray | None,
                plan: list[tuple[int, np.ndarray, list[Any]]]) -> list[np.ndarray]:
    """Row reductions of one block: one array per request of ``plan``.

    ``plan`` is a list of (γ index, M_u, requests) with requests
    (coef, cB, dgl, g0, func) as prepared by :func:`_plan`.
    """
    out: list[Any] = [None] * sum(len(reqs) for _, _, reqs in plan)
    rows = block_rows(fmap.width)
    for a, b in _sub_blocks(Xb.shape[0], rows):
        S = fmap.shared(Xb[a:b])
        F = np.empty_like(S)
        Yb = probe_basis(yb[a:b], values)
        slot = 0
        chain: list[Any] = [None, 0]
        for i, Mu, reqs in plan:
            fmap.block(S, i, F, chain)
            Qb = F @ Mu
            Q2 = Qb * Qb
            for coef, cB, dgl, g0, func in reqs:
                Bb = Yb @ coef
                dg = g0 + Q2 @ dgl
                if cB is None:
                    gB = None
                elif dgl.ndim == 1:
                    gB = g0 * Bb + Qb @ (dgl[:, None] * cB)
                else:
                    r, m, L = cB.shape[0], cB.shape[1], dgl.shape[1]
                    gB = (Qb @ (cB[:, :, None] * dgl[:, None, :]).reshape(r, m * L)
                          ).reshape(b - a, m, L)
                    gB += Bb[:, :, None] * g0[None, None, :]
                part = np.asarray(func(Bb, gB, dg), dtype=np.float64)
                out[slot] = part if out[slot] is None else out[slot] + part
                slot += 1
    return out


def add_parts(a: list[np.ndarray], b: list[np.ndarray]) -> list[np.ndarray]:
    """Element-wise sum of two lists of arrays (a tree-reduction step)."""
    return [x + y for x, y in zip(a, b)]


# ---------------------------------------------------------------------------
# the in-process row source
# ---------------------------------------------------------------------------


def default_threads() -> int:
    """Threads of the in-process passes: OMP_NUM_THREADS when set; else the cores this
    process may run on, less those other processes keep busy.

    The others' share is the 1-minute load average less one (this process may be part
    of it), rounded down: on a machine already running more processes than cores a
    second thread finds no free core, so it only adds overhead (measured at n = 10⁶ on
    2 cores under a load of 6–9: 1.03× the wall time and 1.26× the CPU of one thread,
    1.16× the wall time with one more busy process; docs/streaming.md). The thread
    count never changes a result (block sums are added in block order).
    """
    from .._validation import check_workers

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        usable = os.cpu_count() or 1
    threads = max(1, min(check_workers(None), usable))
    if os.environ.get("OMP_NUM_THREADS"):
        return threads
    try:
        others = int(max(os.getloadavg()[0] - 1.0, 0.0))
    except (AttributeError, OSError):  # pragma: no cover - no load average
        others = 0
    return max(1, min(threads, usable - others))




class ArrayRows:
    """X and y in memory, passed in fixed row blocks.

    Blocks are processed by ``threads`` Python threads (the BLAS calls and the
    ``exp``/``cos`` ufuncs release the GIL), each running single-threaded BLAS, and
    their results are summed in block order, so the result does not depend on the
    number of threads. A thread that waits sleeps on a queue instead of spinning,
    and a slow thread simply takes fewer blocks: a busy core elsewhere costs its
    share of the machine, not a barrier at every BLAS call.
    """

    def __init__(self, X: np.ndarray, y: npt.ArrayLike, threads: int | None = None,
                 rows: int | None = None) -> None:
        self.X = X
        self.y = np.asarray(y, dtype=np.float64)
        self.n = X.shape[0]
        self.threads = default_threads() if threads is None else max(1, int(threads))
        self.rows = rows
        self.passes = 0

    def _blocks(self, width: int) -> list[tuple[int, int]]:
        rows = self.rows or 8 * block_rows(width)
        return list(_sub_blocks(self.n, rows))

    def reduce(self, fn: Callable[..., list[np.ndarray]], fmap: FeatureMap,
               *args: Any) -> list[np.ndarray]:
        """Σ over row blocks of ``fn(fmap, X_b, y_b, *args)`` (lists of arrays)."""
        self.passes += 1
        blocks = self._blocks(fmap.width)

        def work(ab: tuple[int, int]) -> list[np.ndarray]:
            a, b = ab
            return fn(fmap, self.X[a:b], self.y[a:b], *args)

        total: list[np.ndarray] | None = None
        with one_blas_thread():
            if self.threads == 1 or len(blocks) == 1:
                for ab in blocks:
                    part = work(ab)
                    total = part if total is None else add_parts(total, part)
                assert total is not None          # there is at least one block
                return total
            with concurrent.futures.ThreadPoolExecutor(self.threads) as pool:
                window: deque[concurrent.futures.Future[list[np.ndarray]]] = deque()
                it = iter(blocks)
                for ab in it:
                    window.append(pool.submit(work, ab))
                    if len(window) >= 2 * self.threads:
                        break
                while window:
                    part = window.popleft().result()
                    total = part if total is None else add_parts(total, part)
                    for ab in it:
                        window.append(pool.submit(work, ab))
                        break
        assert total is not None
        return total

    def gather(self, idx: npt.ArrayLike) -> np.ndarray:
        return np.asarray(self.X[np.asarray(idx)], dtype=np.float64)


# ---------------------------------------------------------------------------
# operators
# ---------------------------------------------------------------------------


class RowsPending(Exception):
    """Raised by :meth:`StreamingLowRankOperator.reduce_rows` while a grid evaluation
    collects the row reductions of every γ for one shared pass (:func:`evaluate_grid`)."""


class _Family:
    """What the operators of one grid share: the row source, the feature map and the
    pending row reductions."""

    def __init__(self, rows: Any, fmap: FeatureMap | None, y: np.ndarray) -> None:
        self.rows = rows
        self.fmap = fmap
        values = np.unique(y)
        self.values = values if values.size <= MAX_CLASSES else None
        self.Y = probe_basis(y, self.values)       # in memory, for probe coefficients
        self.gram = self.Y.T @ self.Y
        self.pending: list[Any] = []          # requests, as the family's run takes them

    def coefficients(self, P: npt.ArrayLike) -> np.ndarray:
        """coef (m_Y, m) with P = Y·coef; ValueError when P is outside span(Y)."""
        P = np.asarray(P, dtype=np.float64).reshape(self.Y.shape[0], -1)
        coef = np.linalg.solve(self.gram, self.Y.T @ P)
        resid = P - self.Y @ coef
        scale = max(float(np.max(np.abs(P), initial=0.0)), 1e-300)
        if float(np.max(np.abs(resid), initial=0.0)) > 1e-9 * scale:
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
        super().__init__(family.Y.shape[0])
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
                lam, R = scipy.linalg.eigh(0.5 * (VtV + VtV.T), driver="evd")
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
    def _prepare_rows(self, g: SpectralFunction | None, B: npt.ArrayLike, func: RowFunction
                      ) -> tuple[Any, np.ndarray, np.ndarray | None, np.ndarray, Any, RowFunction]:
        coef = self._family.coefficients(B)
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
        request: Request = (self, key, (g, B, func))
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
        self._family.run([(self, key, (g, B, grab))],
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
    from .._resources import check_allocation

    threads = getattr(rows, "threads", None) or 1
    block = 8 * block_rows(width) * width
    values = np.unique(np.asarray(y))
    m = values.size if values.size <= MAX_CLASSES else 2
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
    ops = []
    for i, T in enumerate(transforms):
        op = StreamingLowRankOperator(family, i, parts[i], parts[ng + i], T, name)
        op.details = dict(details[i], effective_rank=op.effective_rank, method="streaming")
        ops.append(op)
    return ops


def evaluate_grid(ops: Sequence[StreamingLowRankOperator], tasks: Sequence[Any],
                  evaluate: Callable[[int, StreamingLowRankOperator, Any], object]) -> None:
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
