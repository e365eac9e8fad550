"""The exact kernel's power moments for a whole γ grid from shared passes over X.

:class:`~kernelselect.operators.streaming.StreamingOperator` serves one γ with blocked
matrix–vector products, about two passes over the n × n kernel matrix per γ. Here a
pass reads every tile of pairs (X_a, X_b) once, forms its distances once (squared,
after centring X on its mean, or L1) and, for **every γ of the grid**, the kernel tile
E_γ = exp(−γ S_ab) (exp(−2γS) as exp(−γS)² on doubling grids, at most
:data:`~kernelselect.operators._feature_maps.SQUARINGS` times in a row), adding

    V_k,γ[a] += E_γ V_{k−1},γ[b]        (V_0 = Y, the probe basis)

and, in the first pass, ‖K_γ‖_F² += ⟨E_γ, E_γ⟩. After pass k, Yᵀ K^r Y for every
r ≤ 2k is a small product: Yᵀ K^{2j} Y = V_jᵀV_j and Yᵀ K^{2j+1} Y = V_jᵀV_{j+1}.
The moment criteria need r ≤ 2 (kta, ckta, fsm, mmd: one pass for the whole grid)
or r (sm with its degree r: ⌈r/2⌉ passes). Probes y, 1, y − ȳ1, the class indicators
and ȳ lie in the span of [y 1] or of the class indicators (as for the streamed
low-rank operators); Y is an orthonormal basis of that span whose first column is
1/√n (:func:`orthonormal_probes`). Another probe falls back to the single-γ operator.

Every row block a is computed by one thread, over the column blocks b in order, and
written to its own rows; ‖K‖_F² is added in block order. The result is therefore
the same, bit for bit, for any number of threads. Memory: the kernel tiles
(:data:`TILE` × :data:`TILE` per thread) and V_{k−1}, V_k (n × m per γ). Cost per
pass: n² distances (one GEMM) plus, per γ, n² exponentials (fewer on doubling grids)
and 2n²m flops.
"""

from __future__ import annotations

import concurrent.futures
import math
import warnings
from typing import Any, Callable, Iterator, Sequence, Union

import numpy as np
import numpy.typing as npt
from scipy.spatial.distance import cdist

from ..utils import _dask
from ..utils._kernel_family import Kernel
from .._typing import Gammas
from ..utils._lapack import gram
from ..utils._resources import check_allocation
from ..utils._threads import one_blas_thread
from ._base import KernelOperator
from ._feature_maps import exp_block
from ._row_passes import ArrayRows, probe_basis, probe_values
from .streaming import StreamingOperator
from .streaming_lowrank import RowsPending, _Family

__all__ = ["StreamingExactGridOperator", "build_exact_grid", "TILE"]

#: rows and columns of one kernel tile (2 MB of float64)
TILE = 512

#: the probe basis of a family: (distinct values of y or None, kept columns, T)
Basis = tuple[Union[np.ndarray, None], np.ndarray, np.ndarray]


class _TileKernel:
    """Kernel tiles for every γ of a grid from one distance tile."""

    def __init__(self, gammas: npt.ArrayLike, kernel: Kernel) -> None:
        self.gammas = np.asarray(gammas, dtype=np.float64)
        self.kernel = kernel

    def block(self, S: np.ndarray, i: int, out: np.ndarray,
              chain: list[Any] | None = None) -> np.ndarray:
        """exp(−γ_i S) into ``out``, squaring on doubling grids (:func:`exp_block`)."""
        return exp_block(self.gammas, S, i, out, chain)

    def distances(self, A: np.ndarray, a_sq: np.ndarray, B: np.ndarray,
                  b_sq: np.ndarray) -> np.ndarray:
        if self.kernel.power == 2:                  # squared distances, by one GEMM
            S = A @ B.T
            S *= -2.0
            S += a_sq[:, None]
            S += b_sq[None, :]
            return np.maximum(S, 0.0, out=S)
        return np.asarray(cdist(A, B, "cityblock"))


def _row_block(tiles: _TileKernel, A: np.ndarray, a_sq: np.ndarray, B: np.ndarray,
               b_sq: np.ndarray, V: np.ndarray | list[np.ndarray], frobenius: bool
               ) -> tuple[np.ndarray, np.ndarray]:
    """(Σ_b E_γ[A, b] V_γ[b] for every γ, ⟨E_γ, E_γ⟩ over those tiles) for the rows A
    against the rows B in tiles of TILE columns; V is a list of (len(B), m) arrays, one
    per γ, or one array shared by every γ."""
    ng = tiles.gammas.size
    m = (V[0] if isinstance(V, list) else V).shape[1]
    out = np.zeros((ng, A.shape[0], m))
    fro = np.zeros(ng)
    n = B.shape[0]
    for b0 in range(0, n, TILE):
        b1 = min(b0 + TILE, n)
        S = tiles.distances(A, a_sq, B[b0:b1], b_sq[b0:b1])
        E = np.empty_like(S)
        chain: list[Any] = [None, 0]
        for g in range(ng):
            tiles.block(S, g, E, chain)
            out[g] += E @ (V[g] if isinstance(V, list) else V)[b0:b1]
            if frobenius:
                flat = E.reshape(-1)
                fro[g] += flat @ flat
    return out, fro


def orthonormal_probes(y: npt.ArrayLike, values: np.ndarray | None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(keep, T) such that Q = [1 Y][:, keep] T has orthonormal columns, q₁ = 1/√n,
    for the probe basis Y of y (:func:`probe_basis`).

    The moments are contracted with the coefficients of each probe in this basis. With
    the raw basis (class indicators, or [y 1]) a contrast such as ȳ (orthogonal to 1)
    would be read off as a small difference of entries of order n^r when K is close to
    the constant matrix 11ᵀ (small γ); with 1 split off, its products K^r q are
    computed on their own and nothing cancels in the contraction.
    """
    y = np.asarray(y, dtype=np.float64)
    B = np.column_stack([np.ones(len(y)), probe_basis(y, values)])
    R = np.asarray(np.linalg.qr(B, mode="r"))       # mode="r": R alone, an array
    diag = np.abs(np.diag(R))
    # R is min(n, m) × m: with more basis columns than rows (a few points, each its
    # own value of y) the columns past the n-th lie in the span of the others
    keep = np.zeros(B.shape[1], dtype=bool)
    keep[:diag.size] = diag > 1e-10 * diag[0]
    R = np.asarray(np.linalg.qr(B[:, keep], mode="r"))
    return keep, np.linalg.solve(R, np.eye(R.shape[0]))


def probes(y: npt.ArrayLike, values: np.ndarray | None, keep: np.ndarray, T: np.ndarray
           ) -> np.ndarray:
    """Rows of the orthonormal probe basis Q = [1 Y][:, keep] T (:func:`orthonormal_probes`)."""
    y = np.asarray(y, dtype=np.float64)
    return np.asarray(np.column_stack([np.ones(len(y)), probe_basis(y, values)])[:, keep] @ T)


def _moments(prev: np.ndarray, new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(V_{k−1,γ}ᵀV_{k,γ}, V_{k,γ}ᵀV_{k,γ}) stacked over γ; ``prev`` is one array
    shared by every γ (the probe basis, first pass) or (n_γ, n, m)."""
    ng = new.shape[0]
    odd = np.stack([(prev if prev.ndim == 2 else prev[g]).T @ new[g] for g in range(ng)])
    even = np.stack([new[g].T @ new[g] for g in range(ng)])
    return odd, even


class _ExactFamily(_Family):
    """The operators of one grid: centred X, the probe basis, the products V_k of the
    passes done so far and the moments they give."""

    def __init__(self, X: np.ndarray, y: np.ndarray, gammas: npt.ArrayLike, kernel: Kernel,
                 threads: int, workers: int | None) -> None:
        self._probe_basis(y)
        X = np.asarray(X, dtype=np.float64)
        self.X_user: np.ndarray | None = X
        self.workers = workers
        mean = X.mean(axis=0)
        self.X = np.ascontiguousarray(X - mean)
        self.sq = np.einsum("ij,ij->i", self.X, self.X)
        self.gammas = np.asarray(gammas, dtype=np.float64)
        self.kernel = kernel
        self.tiles = _TileKernel(self.gammas, kernel)
        self.threads = max(1, int(threads))
        self.V_prev: Any = None                       # V_{k−1}
        self.V: Any = self.Y                          # V_k
        self.done = 0
        self.moments: dict[int, np.ndarray] = {}       # r → (n_γ, m, m)
        self.frobenius: np.ndarray | None = None
        self.passes = 0
        # for the Gaussian expansion at small γ (StreamingOperator.centred_terms)
        self.spread = float(self.sq.max())
        self.XtY = self.X.T @ self.Y
        self.XtX = self.X.T @ self.X

    def _probe_basis(self, y: np.ndarray) -> None:
        _Family.__init__(self, None, None, y)
        self.keep, self.T = orthonormal_probes(y, self.values)
        self.Y = probes(y, self.values, self.keep, self.T)
        self.gram = self.Y.T @ self.Y

    def basis_rows(self, start: int, stop: int) -> np.ndarray:
        return self.Y[start:stop]

    def run(self, requests: list[Any], rows: Any = None) -> None:
        """Make the passes the requests (operator, number of passes) need."""
        target = max(k for _, k in requests)
        while self.done < target:
            self._pass()

    def _pass(self) -> None:
        n = self.X.shape[0]
        first = self.done == 0
        blocks = [(a, min(a + TILE, n)) for a in range(0, n, TILE)]
        ng, m = self.gammas.size, self.Y.shape[1]
        new = np.empty((ng, n, m))
        fro = np.zeros(ng)
        V = self.V if first else list(self.V)

        def work(ab: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
            a0, a1 = ab
            return _row_block(self.tiles, self.X[a0:a1], self.sq[a0:a1], self.X, self.sq, V,
                              first)

        with one_blas_thread():
            if self.threads == 1 or len(blocks) == 1:
                results: Iterator[Any] = map(work, blocks)
                pool = None
            else:
                pool = concurrent.futures.ThreadPoolExecutor(self.threads)
                results = pool.map(work, blocks)
            try:
                for (a0, a1), (out, part) in zip(blocks, results):   # in block order
                    new[:, a0:a1] = out
                    fro += part
            finally:
                if pool is not None:
                    pool.shutdown()
            k = self.done + 1
            self.moments[2 * k - 1], self.moments[2 * k] = _moments(self.V, new)
        if first:
            self.frobenius = fro
        self.V_prev, self.V = self.V, new
        self.done += 1
        self.passes += 1


# ---------------------------------------------------------------------------
# Dask: a task per pair of row chunks
# ---------------------------------------------------------------------------


def _chunk_rows(x: npt.ArrayLike, mu: np.ndarray, start: int
                ) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    _dask.check_rows_finite(x, range(start, start + x.shape[0]),
                            f", in the chunk of rows {start}..{start + x.shape[0] - 1}")
    x = np.ascontiguousarray(x - mu)
    return x, np.einsum("ij,ij->i", x, x)


def _aligned(a: np.ndarray) -> np.ndarray:
    """``a``, copied where it is not aligned to its item size: an array received from
    another worker may begin anywhere in its message, and numpy then multiplies it
    outside BLAS (AᵀA by another order of sums than syrk's), which would make a
    cluster's moments differ from run to run in their last bits."""
    return np.require(a, np.float64, ["A"])


def _pair_task(tiles: _TileKernel, mu: np.ndarray, xa: npt.ArrayLike, sa: int,
               xb: npt.ArrayLike, sb: int, vb: np.ndarray | None, yb: npt.ArrayLike,
               basis: Basis) -> tuple[np.ndarray, np.ndarray]:
    """Contribution of the column chunk b to the rows of chunk a, for every γ."""
    A, a_sq = _chunk_rows(xa, mu, sa)
    B, b_sq = _chunk_rows(xb, mu, sb)
    if vb is None:                                  # first pass: V_0 = the probe basis
        return _row_block(tiles, A, a_sq, B, b_sq, probes(yb, *basis), True)
    return _row_block(tiles, A, a_sq, B, b_sq, [_aligned(v) for v in vb], False)


def _sum_pairs(*parts: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    out, fro = parts[0]
    out, fro = out.copy(), fro.copy()
    for o, f in parts[1:]:
        out += o
        fro += f
    return out, fro


def _products(pair: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    return pair[0]


def _chunk_stats(mu: np.ndarray, x: npt.ArrayLike, start: int, y: npt.ArrayLike,
                 basis: Basis, prev: np.ndarray | None,
                 pair: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
    """Moments (and, in the first pass, ‖K‖_F² and the centred-X statistics) of one
    row chunk."""
    new, fro = _aligned(pair[0]), pair[1]
    Y = probes(y, *basis)
    odd, even = _moments(Y if prev is None else _aligned(prev), new)
    if prev is not None:
        return [odd, even]
    Xc, sq = _chunk_rows(x, mu, start)
    return [odd, even, fro, Xc.T @ Y, gram(Xc), np.array([sq.max()])]


def _add_stats(*parts: list[np.ndarray]) -> list[np.ndarray]:
    total = [p.copy() for p in parts[0]]
    for part in parts[1:]:
        for i, p in enumerate(part):
            if i == 5:
                np.maximum(total[i], p, out=total[i])   # the largest ‖x_i − x̄‖²
            else:
                total[i] += p
    return total


class _DaskExactFamily(_ExactFamily):
    """The grid family over row-chunked Dask arrays: a pass is a graph of one task per
    pair of chunks (each holds two chunks of X and one of V_{k−1}), sums over the column
    chunks per row chunk, then a tree of the small moments. V_k stays on the workers
    (persisted) for the next pass; X is never gathered."""

    def __init__(self, rows: Any, y: np.ndarray, gammas: npt.ArrayLike, kernel: Kernel) -> None:
        self._probe_basis(y)
        self.rows = rows
        self.gammas = np.asarray(gammas, dtype=np.float64)
        self.kernel = kernel
        self.tiles = _TileKernel(self.gammas, kernel)
        self.mu = np.asarray(_dask._compute(rows.X.mean(axis=0)), dtype=np.float64)
        self.V = None                                  # persisted V_k chunks
        self.done = 0
        self.moments = {}
        self.frobenius = None
        self.passes = 0
        self.X_user = None
        self.workers = None

    def run(self, requests: list[Any], rows: Any = None) -> None:
        """Make the passes the requests need. A pass reads the products V_k the last
        one left on the workers; where a lost worker took part of them with the values
        they were computed from (scattered, so the scheduler cannot run them again),
        the passes start again from the first, at most
        :data:`~kernelselect.utils._dask.LOST_VALUES_RETRIES` times, to the same
        moments."""
        target = max(k for _, k in requests)
        restarts = 0
        while self.done < target:
            try:
                self._pass()
            except _dask.LostSharedValues:
                if restarts == _dask.LOST_VALUES_RETRIES:
                    raise
                restarts += 1
                self.V, self.done = None, 0
                warnings.warn(
                    "a Dask worker was lost with part of the products the exact moments "
                    "keep between passes; the passes start again from the first "
                    f"({restarts} of {_dask.LOST_VALUES_RETRIES})", RuntimeWarning,
                    stacklevel=2)

    def _pass(self) -> None:
        dask, _ = _dask._dask()
        split = _dask.SPLIT_EVERY
        rows = self.rows
        xs = rows.X.to_delayed().ravel()
        ys = rows.y.to_delayed().ravel()
        starts = [int(a) for a in rows.starts]
        first = self.done == 0
        tiles = _dask.shared(self.tiles)            # sent once, not embedded per task
        basis = _dask.shared((self.values, self.keep, self.T))
        pair = dask.delayed(_pair_task, pure=True)
        add = dask.delayed(_sum_pairs, pure=True)

        def tree(parts: list[Any], fn: Callable[..., Any]) -> Any:
            while len(parts) > 1:
                parts = [fn(*parts[i:i + split]) if len(parts[i:i + split]) > 1
                         else parts[i] for i in range(0, len(parts), split)]
            return parts[0]

        prev = self.V
        per_row = []
        for a in range(len(xs)):
            parts = [pair(tiles, self.mu, xs[a], starts[a], xs[b], starts[b],
                          None if first else prev[b], ys[b], basis)
                     for b in range(len(xs))]
            per_row.append(tree(parts, add))
        with _dask.cluster_guard(), one_blas_thread():
            per_row = dask.persist(*per_row)
            stats = [dask.delayed(_chunk_stats, pure=True)(
                self.mu, xs[a], starts[a], ys[a], basis, None if first else prev[a],
                per_row[a]) for a in range(len(xs))]
            total = _dask._compute(tree(stats, dask.delayed(_add_stats, pure=True)))
            self.V = dask.persist(*[dask.delayed(_products, pure=True)(p) for p in per_row])
        k = self.done + 1
        self.moments[2 * k - 1], self.moments[2 * k] = total[0], total[1]
        if first:
            self.frobenius = total[2]
            self.XtY, self.XtX, self.spread = total[3], total[4], float(total[5][0])
        self.done += 1
        self.passes += 1


class StreamingExactGridOperator(KernelOperator):
    """The exact K for one γ of a grid whose power moments come from shared passes
    (module docstring): Pᵀ K^r P for P in the span of the probe basis, tr K^r for
    r ≤ 2 and the centred forms; other probes go to a single-γ
    :class:`~kernelselect.operators.streaming.StreamingOperator`."""

    name = "streaming"
    spectral = False

    def __init__(self, family: _ExactFamily, index: int) -> None:
        super().__init__(family.n)
        self._family = family
        self.index = index
        self.gamma = float(family.gammas[index])
        self.kernel = family.kernel
        self.collect = False
        self._scope = None
        self._cursor = 0
        self._single: StreamingOperator | None = None

    def _after(self, passes: int) -> None:
        fam = self._family
        if fam.done < passes:
            request = (self, passes)
            if self.collect:
                fam.pending.append(request)
                raise RowsPending(passes)
            fam.run([request])

    def _single_gamma(self) -> StreamingOperator:
        if self._single is None:
            fam = self._family
            if fam.X_user is None:
                raise ValueError(
                    "the streamed exact operator on Dask input projects probes in the span "
                    "of y, 1 and the class indicators only (those of the moment criteria).")
            self._single = StreamingOperator(fam.X_user, self.gamma, kernel=self.kernel,
                                             workers=fam.workers)
        return self._single

    def power_quadratic(self, r: int, P: npt.ArrayLike) -> np.ndarray:
        r = int(r)
        if r <= 0:                                  # PᵀP, or the error for a negative r
            return StreamingOperator.power_quadratic(self, r, P)  # type: ignore[arg-type]
        P = np.asarray(P, dtype=np.float64).reshape(self.n, -1)
        try:
            coef = self._family.coefficients(P)
        except ValueError:
            return self._single_gamma().power_quadratic(r, P)
        self._after(math.ceil(r / 2))
        M = self._family.moments[r][self.index]
        M = 0.5 * (M + M.T)
        return np.asarray(coef.T @ M @ coef)

    def power_trace(self, r: int) -> float:
        r = int(r)
        if r == 0 or r == 1:
            return float(self.n)                          # κ(x, x) = 1
        if r == 2:
            self._after(1)
            fro = self._family.frobenius
            assert fro is not None                 # the first pass sets it
            return float(fro[self.index])
        raise ValueError(
            f"tr K^{r} is not available from the streaming exact operator (only r ≤ 2); "
            "use Exact(method='dense') or an approximation.")

    def diagonal(self) -> np.ndarray:
        return np.ones(self.n)

    MOMENT_FLOOR = StreamingOperator.MOMENT_FLOOR

    def centred_terms(self, y: npt.ArrayLike) -> tuple[float, float]:
        """As :meth:`StreamingOperator.centred_terms`, the Gaussian expansion's X_cᵀy_c,
        X_cᵀX_c and max‖x_i − x̄‖² taken from the statistics of the centred X."""
        ycky, kc_sq = KernelOperator.centred_terms(self, y)
        fro_sq = self.power_trace(2)
        if np.isfinite(kc_sq) and kc_sq > self.MOMENT_FLOOR * fro_sq:
            return ycky, kc_sq
        if self.kernel.power != 2:            # the expansion below is the Gaussian's
            return ycky, np.nan
        fam = self._family
        if not 4.0 * self.gamma * fam.spread <= 1e-3:
            return ycky, np.nan
        y = np.asarray(y, dtype=np.float64)
        v = fam.XtY @ fam.coefficients(y - y.mean())[:, 0]
        g = self.gamma
        return 2.0 * g * float(v @ v), 4.0 * g * g * float(np.sum(fam.XtX * fam.XtX))


def build_exact_grid(rows: Any, y: npt.ArrayLike | None, gammas: Gammas, *,
                     kernel: str | Kernel) -> list[StreamingExactGridOperator]:
    """One operator per γ sharing the passes of one family over ``rows`` (in memory:
    an :class:`~kernelselect.operators.streaming_lowrank.ArrayRows`; or Dask rows)."""
    family_kind = Kernel.of(kernel, per_feature=False)
    if isinstance(rows, ArrayRows):
        return _grid_ops(rows.X, y, gammas, kernel=family_kind, threads=rows.threads)
    family = _DaskExactFamily(rows, np.asarray(y, dtype=np.float64), gammas, family_kind)
    return [_operator(family, i) for i in range(len(gammas))]


def _operator(family: _ExactFamily, i: int) -> StreamingExactGridOperator:
    op = StreamingExactGridOperator(family, i)
    op.details = {"method": "streaming"}
    return op


def _grid_ops(X: np.ndarray, y: npt.ArrayLike | None, gammas: Gammas, *,
              kernel: Kernel, threads: int, workers: int | None = None
              ) -> list[StreamingExactGridOperator]:
    n, d = X.shape
    values = probe_values(np.asarray(y))
    m = 2 if values is None else values.size
    g = len(gammas)
    check_allocation(8.0 * (2 * g * n * m + n * (d + m + 2) + 3 * threads * TILE * TILE),
                     f"the exact streamed moments for {g} kernels at n={n} (the products K·Y "
                     f"of {m} probes for every γ and the kernel tiles)",
                     "pass fewer gammas at a time")
    family = _ExactFamily(X, np.asarray(y, dtype=np.float64), gammas, kernel, threads,
                          workers)
    return [_operator(family, i) for i in range(len(gammas))]
