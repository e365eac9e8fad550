"""The randomised labelled MCM streamed: every γ of a grid from one read of X.

:class:`~kernelselect.operators.random_mcm.RandomMCMOperator` holds the column
û_ik = (√2/D) cos(x_iᵀw_k + b_k) (n × D) for one γ. Most of the criteria of
:mod:`kernelselect.criteria.random_mcm` use only small sums over its rows. With the
random features Z̃ = √D û (rows z_i, w_k = s_γ w⁰_k as in
:func:`~kernelselect.operators.random_mcm.scaled_frequencies`) and a label vector ℓ
in the span of a probe basis Y (ℓ = Y a; Y = [y 1], or the class indicators when y
takes few values, as for the streamed Nyström operators):

- Σ_ik u_ik = 1ᵀZ̃ᵀℓ/√D, so s₀ = (1ᵀH a)²/D with H = Z̃ᵀY (D × m);
- Σ_j s_j = Π‖u‖² = n Σ_i ℓ_i²‖z_i‖² = n aᵀN a with N = Yᵀ diag(‖z_i‖²) Y (m × m);
- Σ_j s[0, j] = ‖Z̃ᵀℓ‖² = ‖H a‖²;
- Z̃ᵀZ̃ = G (D × D) for the random-feature Gram forms (``random_kta_row``,
  ``random_c1_rff``);
- Σ_i û_ik at 2γ (``random_kta_row_2g``) = 1ᵀ column of H at 2γ, over √D.

One pass over the row blocks forms the projections X_b W⁰ once per block and, for
each γ, Z̃_b = √(2/D) cos(s_γ X_b W⁰ + b) (:class:`FourierFeatures`), adding Z̃_bᵀY_b,
Y_bᵀ diag(‖z_i‖²) Y_b and, for the γ whose criteria ask for it, Z̃_bᵀZ̃_b.
Statistics are collected on first use: the criteria of a whole grid ask for them
while :func:`~kernelselect.operators.streaming_lowrank.evaluate_grid` runs, and one
pass then serves all of them. Memory beyond X and y: O(b·D) per thread and
O(n_γ·(D·m + m²)) (plus D² per γ whose Gram matrix is asked for).

``random_c1`` and ``random_eloo`` need the whole 2-D FFT of the n × D column (the
FFT along the data axis mixes every row), which does not reduce to sums over row
blocks: in memory they build the column for their γ (as
:class:`~kernelselect.operators.random_mcm.RandomMCMOperator` does); on Dask input
they are refused with a message naming them.
"""

from __future__ import annotations

from typing import Any, Callable, NoReturn, Sequence

import numpy as np
import numpy.typing as npt

from ..utils._kernel_family import Kernel
from .._typing import Gammas
from ..utils._labels import numeric_labels
from ..utils._lapack import gram as gram_of
from ._base import Approximation, KernelOperator
from ._feature_maps import FeatureMap, FourierFeatures, block_rows
from ._row_passes import ArrayRows, _sub_blocks, probe_basis
from .streaming_lowrank import RowsPending, _Family, check_streaming_memory


__all__ = ["StreamingRandomMCMOperator", "build_random_mcm", "mcm_pass"]

#: the criteria that need the full 2-D FFT of the column (not streamable)
FFT_CRITERIA = ("random_c1", "random_eloo")
#: the criteria computed from the streamed statistics
STREAMED_CRITERIA = ("random_kta", "random_mmd", "random_kta_row", "random_kta_row_2g",
                     "random_mmd_row", "random_c1_rff")


def mcm_pass(fmap: FeatureMap, Xb: np.ndarray, yb: np.ndarray, values: np.ndarray | None,
             plan: Sequence[tuple[int, bool, bool]]) -> list[np.ndarray] | None:
    """Statistics of one block of rows: for each (index, norms, gram) of ``plan`` the
    arrays Z̃ᵀY, then Yᵀdiag(‖z_i‖²)Y when ``norms``, then Z̃ᵀZ̃ when ``gram``, for the
    features of ``fmap``'s γ number ``index`` (a flat list, in plan order)."""
    out: list[np.ndarray] | None = None
    rows = block_rows(fmap.width)
    for a, b in _sub_blocks(Xb.shape[0], rows):
        S = fmap.shared(Xb[a:b])
        F = np.empty((S.shape[0], fmap.width))
        Yb = probe_basis(yb[a:b], values)
        parts: list[np.ndarray] = []
        for i, norms, gram in plan:
            fmap.block(S, i, F)
            parts.append(F.T @ Yb)
            if norms:
                sq = np.einsum("ij,ij->i", F, F)
                parts.append(Yb.T @ (sq[:, None] * Yb))
            if gram:
                parts.append(gram_of(F))
        out = parts if out is None else [x + p for x, p in zip(out, parts)]
    return out


class _MCMFamily(_Family):
    """The operators of one grid: the row source, the standard draws and the
    statistics computed so far (per γ index: "base" = (H, N), "gram" = G,
    "doubled" = H at 2γ)."""

    def __init__(self, rows: Any, y: np.ndarray, gammas: npt.ArrayLike, W0: np.ndarray,
                 b: np.ndarray, kernel: Kernel, approx: Approximation, state: Any
                 ) -> None:
        super().__init__(rows, None, y)
        self.gammas = np.asarray(gammas, dtype=np.float64)
        self.W0, self.b, self.kernel = W0, b, kernel
        self.approx, self.state = approx, state
        self.stats: dict[tuple[int, str], Any] = {}
        self.dense: dict[int, Any] = {}

    def have(self, i: int, kind: str) -> bool:
        return (i, kind) in self.stats

    def run(self, requests: list[Any], rows: Any = None) -> None:
        """One pass computing every statistic asked for in ``requests`` ((operator,
        kind) pairs), and the base statistics of every γ not yet done."""
        wanted = {(op.index, kind) for op, kind in requests}
        wanted |= {(i, "base") for i in range(self.gammas.size)}
        wanted = {w for w in wanted if w not in self.stats}
        if not wanted:
            return
        values: list[float] = []                       # the γ of the pass, distinct
        plan: dict[int, list[bool]] = {}

        def slot(gamma: float) -> int:
            for j, v in enumerate(values):
                if v == gamma:
                    return j
            values.append(gamma)
            plan[len(values) - 1] = [False, False]
            return len(values) - 1

        for i, kind in sorted(wanted):
            g = float(self.gammas[i]) * (2.0 if kind == "doubled" else 1.0)
            j = slot(g)
            if kind == "base":
                plan[j][0] = True
            elif kind == "gram":
                plan[j][1] = True
        fmap = FourierFeatures(self.W0, self.b, values, self.kernel)
        order = [(j, plan[j][0], plan[j][1]) for j in range(len(values))]
        parts = iter((rows or self.rows).reduce(mcm_pass, fmap, self.values, order))
        by_gamma: dict[float, tuple[Any, Any, Any]] = {}
        for j, norms, gram in order:
            H = next(parts)
            N = next(parts) if norms else None
            G = next(parts) if gram else None
            by_gamma[values[j]] = (H, N, G)
        for i, kind in wanted:
            g = self.gammas[i]
            if kind == "base":
                H, N, _ = by_gamma[g]
                self.stats[(i, "base")] = (H, N)
            elif kind == "gram":
                self.stats[(i, "gram")] = by_gamma[g][2]
            else:
                self.stats[(i, "doubled")] = by_gamma[2.0 * g][0]


class StreamingRandomMCMOperator(KernelOperator):
    """The randomised labelled MCM of one γ, known through streamed row sums.

    Offers what the ``random_*`` criteria use: :meth:`zero_coefficient`,
    :meth:`total_power`, :meth:`zero_row_power`, :meth:`feature_gram`,
    :meth:`feature_projection`, :meth:`doubled_column_sums` from the statistics
    (module docstring), and :meth:`half_spectrum` / :meth:`spectral_sum` for
    in-memory rows only. Labels must lie in the span of the probe basis (y, 1, ȳ and
    the class indicators do).
    """

    name = "random_mcm"
    spectral = False

    def __init__(self, family: _MCMFamily, index: int, n_features: int) -> None:
        super().__init__(family.n)
        self._family = family
        self.index = index
        self.gamma = float(family.gammas[index])
        self.kernel = family.kernel
        self.n_features = int(n_features)
        self.size = self.n * self.n_features
        self.collect = False
        self._scope: Any = None
        self._cursor = 0

    # -- statistics -----------------------------------------------------------------
    def _stat(self, kind: str) -> Any:
        fam = self._family
        if not fam.have(self.index, kind):
            request = (self, kind)
            if self.collect:
                fam.pending.append(request)
                raise RowsPending(kind)
            fam.run([request])
        return fam.stats[(self.index, kind)]

    def _coef(self, labels: npt.ArrayLike | None) -> np.ndarray:
        if labels is None:
            return self._family.coefficients(np.ones(self.n))
        return self._family.coefficients(numeric_labels(labels, "labels", self.n))

    def feature_projection(self, labels: npt.ArrayLike | None = None) -> np.ndarray:
        """Z̃ᵀℓ (D,), from H = Z̃ᵀY; ℓ = 1 when ``labels`` is None."""
        H, _ = self._stat("base")
        return (H @ self._coef(labels))[:, 0]

    def zero_coefficient(self, labels: npt.ArrayLike | None = None) -> float:
        """s₀ = |Σ_ik u_ik|² = (1ᵀZ̃ᵀℓ)²/D."""
        return float(np.sum(self.feature_projection(labels)) ** 2 / self.n_features)

    def total_power(self, labels: npt.ArrayLike | None = None) -> float:
        """Σ_j s_j = Π‖u‖² = n Σ_i ℓ_i²‖z_i‖² = n aᵀN a."""
        _, N = self._stat("base")
        a = self._coef(labels)[:, 0]
        return float(self.n * (a @ N @ a))

    def zero_row_power(self, labels: npt.ArrayLike | None = None) -> float:
        """Σ_j s[0, j] = ‖Z̃ᵀℓ‖²."""
        c = self.feature_projection(labels)
        return float(c @ c)

    def feature_gram(self) -> np.ndarray:
        """Z̃ᵀZ̃ (D × D), accumulated over the row blocks."""
        G = self._stat("gram")
        return 0.5 * (G + G.T)

    def doubled_column_sums(self) -> np.ndarray:
        """Σ_i û_ik for the kernel at 2γ (same draws), shape (D,)."""
        H2 = self._stat("doubled")
        return (H2 @ self._coef(None))[:, 0] / np.sqrt(self.n_features)

    # -- the full spectrum: in memory only --------------------------------------------
    def _dense(self) -> Any:
        fam = self._family
        if not isinstance(fam.rows, ArrayRows):
            raise ValueError(
                "approximation='random_mcm' streams on Dask input for "
                f"{', '.join(STREAMED_CRITERIA)} only; {' and '.join(FFT_CRITERIA)} need the "
                "2-D FFT of the whole n × D column (the FFT along the data axis mixes every "
                "row), which does not reduce to sums over row blocks. Use one of those "
                "criteria, or pass numpy arrays.")
        if self.index not in fam.dense:
            # the grid's state: X is checked once there (RandomMCM.prepare), not per γ
            fam.dense = {self.index: fam.approx.build(fam.rows.X, fam.rows.y, self.gamma,
                                                      kernel=self.kernel, state=fam.state,
                                                      workers=fam.rows.threads)}
        return fam.dense[self.index]

    def half_spectrum(self, labels: npt.ArrayLike | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`RandomMCMOperator.half_spectrum` (builds the column; in memory only)."""
        return self._dense().half_spectrum(labels)

    def spectral_sum(self, f: Callable[[np.ndarray], np.ndarray],
                     labels: npt.ArrayLike | None = None) -> float:
        """As :meth:`RandomMCMOperator.spectral_sum` (in memory only)."""
        return self._dense().spectral_sum(f, labels)

    # -- protocol ------------------------------------------------------------------------
    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            "the randomised labelled MCM is not a stand-in for K on the n points; only the "
            "random_* criteria apply to it. Use approximation='rff' or 'nystrom' for the "
            "others.")

    power_quadratic = power_trace = diagonal = project = _refuse
    quadratic = trace = diagonal_function = apply_function = reduce_rows = _refuse


def build_random_mcm(rows: Any, y: npt.ArrayLike | None, gammas: Gammas, *,
                     kernel: str | Kernel, state: Any, approx: Approximation
                     ) -> list[StreamingRandomMCMOperator]:
    """Operators for every γ of a grid; their statistics come from one shared pass
    over ``rows`` when the criteria first ask for them. ``approx`` and ``state`` (its
    ``prepare``) build the in-memory column of a γ when a criterion needs its full
    spectrum."""
    W0, b, family = state.W0, state.b, Kernel.of(kernel, per_feature=False)
    D = W0.shape[1]
    if state.kernel is not family:
        raise ValueError(
            f"the frequencies were drawn for kernel={state.kernel.value!r}, not "
            f"{family.value!r}; call prepare again with kernel={family.value!r}.")
    check_streaming_memory(rows, y, D, 2 * len(gammas), f"RandomMCM with n_features={D}",
                           "use fewer random features")
    grid = _MCMFamily(rows, np.asarray(y, dtype=np.float64), gammas, W0, b, family,
                      approx, state)
    ops = []
    for i in range(len(gammas)):
        op = StreamingRandomMCMOperator(grid, i, D)
        op.details = {"n_features": D, "size": op.size, "method": "streaming"}
        ops.append(op)
    return ops
