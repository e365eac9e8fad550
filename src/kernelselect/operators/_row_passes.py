"""Row passes of the streamed operators: what is computed per block of rows (the
statistics of the first pass, the row reductions of the second, both over a probe
basis) and :class:`ArrayRows`, the in-process row source that runs them over X in
memory (the Dask row source of :mod:`kernelselect.utils._dask` runs the same functions per
chunk).
"""

from __future__ import annotations

import concurrent.futures
from collections import deque
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import numpy.typing as npt

from ..primitives._kernel_ops import gram_upper_add_unchecked
from ..utils._threads import (cancel_passes, check_cancelled, free_cores, one_blas_thread,
                              resume_passes)
from ._feature_maps import FeatureMap, block_rows

__all__ = ["ArrayRows", "MAX_CLASSES", "probe_basis", "probe_values", "first_pass",
           "second_pass", "row_reductions", "add_parts", "default_threads"]

#: targets with at most this many distinct values are projected through their class
#: indicators (multiclass criteria such as DI need them), others through [y 1]
MAX_CLASSES = 64


def probe_values(y: npt.ArrayLike) -> np.ndarray | None:
    """The distinct values of y when there are at most :data:`MAX_CLASSES` of them (the
    probe basis is then their indicators), else None (the basis is [y 1]); None for a
    target matrix y (n, L) as well (the basis is [Y 1])."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 2:
        return None
    values = np.unique(y)
    return values if values.size <= MAX_CLASSES else None


def _sub_blocks(n: int, rows: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, rows):
        yield start, min(start + rows, n)


def _sub_block_features(fmap: FeatureMap, Xb: np.ndarray, yb: np.ndarray,
                        values: np.ndarray | None
                        ) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """A block of rows cut into sub-blocks of :func:`block_rows` rows, so that the
    temporaries stay O(b·c): for each, (its rows, the map's shared part S, a buffer F
    for one γ's features, its probe basis Y_b). An interrupted pass ends between two."""
    for a, b in _sub_blocks(Xb.shape[0], block_rows(fmap.width)):
        check_cancelled()
        S = fmap.shared(Xb[a:b])
        yield b - a, S, np.empty((S.shape[0], fmap.width)), probe_basis(yb[a:b], values)


def probe_basis(yb: npt.ArrayLike, values: np.ndarray | None) -> np.ndarray:
    """Rows of the probe basis Y: [y 1] ([Y 1] for a target matrix), or the class
    indicators when ``values`` (the distinct values of y, few of them) is given; y and
    1 lie in the span of either."""
    yb = np.asarray(yb, dtype=np.float64)
    if values is None:
        return np.column_stack([yb, np.ones(yb.shape[0])])
    return (yb[:, None] == values[None, :]).astype(np.float64)


def first_pass(fmap: FeatureMap, Xb: np.ndarray, yb: np.ndarray, values: np.ndarray | None,
               rotations: Sequence[np.ndarray | None]) -> list[np.ndarray]:
    """Statistics of one block of rows for every γ: the list [G_0, …, H_0, …] with
    G = PᵀP and H = PᵀY for P = F A (``rotations[i]`` = A, or None for A = I) and
    the probe basis Y (:func:`probe_basis`).

    Long blocks are cut into sub-blocks of :func:`block_rows` rows, so the
    temporaries stay O(b·c).
    """
    ng = fmap.gammas.size
    G: list[Any] = [None] * ng
    H: list[Any] = [None] * ng
    for _, S, F, Yb in _sub_block_features(fmap, Xb, yb, values):
        chain: list[Any] = [None, 0]
        for i in range(ng):
            fmap.block(S, i, F, chain)
            rotation = rotations[i]
            P = F if rotation is None else F @ rotation
            if G[i] is None:
                G[i] = np.zeros((P.shape[1], P.shape[1]))
            gram_upper_add_unchecked(np.ascontiguousarray(P), G[i])
            h = P.T @ Yb
            H[i] = h if H[i] is None else H[i] + h
    full: list[Any] = [None if g is None else _symmetric(g) for g in G]   # None: no rows
    return full + H


def _symmetric(upper: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose upper triangle ``upper`` holds."""
    full = np.triu(upper)
    full += np.triu(upper, 1).T
    return full


def second_pass(fmap: FeatureMap, Xb: np.ndarray, yb: np.ndarray, values: np.ndarray | None,
                plan: list[tuple[int, np.ndarray, list[Any]]]) -> list[np.ndarray]:
    """Row reductions of one block: one array per request of ``plan``.

    ``plan`` is a list of (γ index, M_u, requests) with requests
    (coef, cB, dgl, g0, func) as prepared by the family's ``run`` in
    :mod:`kernelselect.operators.streaming_lowrank`.
    """
    out: list[Any] = [None] * sum(len(reqs) for _, _, reqs in plan)
    for _, S, F, Yb in _sub_block_features(fmap, Xb, yb, values):
        slot = 0
        chain: list[Any] = [None, 0]
        for i, Mu, reqs in plan:
            fmap.block(S, i, F, chain)
            Qb = F @ Mu
            for part in row_reductions(Qb, Qb * Qb, Yb, reqs):
                out[slot] = part if out[slot] is None else out[slot] + part
                slot += 1
    return out


def row_reductions(Qb: np.ndarray, Q2: np.ndarray, Yb: np.ndarray,
                   reqs: list[Any]) -> list[np.ndarray]:
    """One γ's requests on one block of rows, from the block of eigenvector rows
    Q_b = F_b M (and Q_b², entrywise) and the probe basis rows Y_b: for each request
    (coef, cB, dgl, g0, func), B_b = Y_b·coef, the diagonal of g(K̃) on these rows
    g0 + Q_b²·dgl, and g(K̃)B on them, handed to ``func``."""
    rows = Qb.shape[0]
    parts = []
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
                  ).reshape(rows, m, L)
            gB += Bb[:, :, None] * g0[None, None, :]
        parts.append(np.asarray(func(Bb, gB, dg), dtype=np.float64))
    return parts


def add_parts(a: list[np.ndarray], b: list[np.ndarray]) -> list[np.ndarray]:
    """Element-wise sum of two lists of arrays (a tree-reduction step)."""
    return [x + y for x, y in zip(a, b)]


# ---------------------------------------------------------------------------
# the in-process row source
# ---------------------------------------------------------------------------


def default_threads() -> int:
    """Threads of the in-process passes: :func:`kernelselect.utils._threads.free_cores` (the
    cores other processes leave free, or OMP_NUM_THREADS). The thread count never
    changes a result (block sums are added in block order)."""
    return free_cores()


#: blocks per in-memory pass, at the least, where n holds that many sub-blocks
MIN_BLOCKS = 8


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
        """Blocks of up to 8 sub-blocks (:func:`block_rows`), and at least
        :data:`MIN_BLOCKS` where n allows whole sub-blocks: a pass of few blocks leaves
        threads idle (one block of 2·10⁴ rows at 100 columns ran on one thread). A
        function of n and the width alone, never of the thread count."""
        sub = block_rows(width)
        rows = self.rows or min(8 * sub, max(sub, -(-self.n // MIN_BLOCKS)))
        return list(_sub_blocks(self.n, rows))

    def reduce(self, fn: Callable[..., list[np.ndarray]], fmap: FeatureMap,
               *args: Any) -> list[np.ndarray]:
        """Σ over row blocks of ``fn(fmap, X_b, y_b, *args)`` (lists of arrays)."""
        self.passes += 1
        blocks = self._blocks(fmap.width)

        def work(ab: tuple[int, int]) -> list[np.ndarray]:
            a, b = ab
            return fn(fmap, self.X[a:b], self.y[a:b], *args)

        resume_passes()
        try:
            return self._reduce(work, blocks)
        except KeyboardInterrupt:
            cancel_passes()                 # the blocks in flight end at their next block
            raise

    def _reduce(self, work: Callable[[tuple[int, int]], list[np.ndarray]],
                blocks: list[tuple[int, int]]) -> list[np.ndarray]:
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
