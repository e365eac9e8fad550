"""Exact kernel matrix: dense eigendecomposition or streaming (never holding K)."""

import numpy as np
import scipy.linalg

from .._validation import check_positive_int, check_workers
from ._base import Approximation, ExplicitBasisOperator
from ._lowrank import small_blas

__all__ = ["Exact", "DenseOperator"]


class DenseOperator(ExplicitBasisOperator):
    """K itself, diagonalised by a dense symmetric eigendecomposition (O(n³), O(n²))."""

    name = "dense"

    def __init__(self, K):
        K = np.asarray(K, dtype=np.float64)
        K = 0.5 * (K + K.T)
        with small_blas(float(K.shape[0]) ** 3):
            lam, Q = scipy.linalg.eigh(K, driver="evd")
        super().__init__(lam, Q)
        self.details = {"method": "dense"}

    def power_quadratic(self, r, P):
        # Pᵀ K^r P by repeated products with the eigen-basis (exact, any r ≥ 0).
        P = np.asarray(P, dtype=np.float64).reshape(self.n, -1)
        c = self._q.T @ P
        return c.T @ (self._lam[:, None] ** r * c)

    def diagonal_function(self, g):
        # The basis is complete: no complement term.
        from ._base import evaluate_at

        return (self._q ** 2) @ evaluate_at(g, self._lam)


class Exact(Approximation):
    """The exact kernel matrix.

    Parameters
    ----------
    method : {"auto", "dense", "streaming"}, default="auto"
        ``"dense"`` forms K (n×n) and its eigendecomposition: every criterion, O(n³)
        time, O(n²) memory — the reference, for n up to a few thousand.
        ``"streaming"`` never holds K: blocked kernel sums and matrix–vector products
        (O(n²d) time per pass, O(n) memory) give the power-moment criteria (kta, ckta,
        fsm, mmd, sm) at any n. ``"auto"`` streams when every requested criterion
        needs only moments, and goes dense otherwise.
    max_dense : int, default=8000
        Largest n for the dense method; beyond it the call is refused with a message
        naming the alternatives (about 0.5 GB for K at n = 8000, plus the eigenvectors).
    """

    name = "exact"

    def __init__(self, method="auto", max_dense=8000):
        self.method = method
        self.max_dense = max_dense
        self._needs = None

    @property
    def provides(self):
        if self.method == "streaming":
            return frozenset({"moments"})
        return frozenset({"moments", "spectral"})

    @property
    def label(self):
        return "exact" if self.method != "streaming" else "Exact(method='streaming')"

    def configure(self, needs):
        self._needs = frozenset(needs)

    def _resolved_method(self):
        if self.method not in ("auto", "dense", "streaming"):
            raise ValueError(
                f"method must be 'auto', 'dense' or 'streaming', got {self.method!r}."
            )
        if self.method != "auto":
            return self.method
        if self._needs is not None and self._needs <= {"moments"}:
            return "streaming"
        return "dense"

    def prepare(self, X, y, *, kernel, random_state, workers):
        method = self._resolved_method()
        check_positive_int(self.max_dense, "max_dense")
        n = X.shape[0]
        if method == "dense" and n > self.max_dense:
            raise ValueError(
                f"the exact dense criteria hold the {n}×{n} kernel matrix and its "
                f"eigendecomposition; n={n} exceeds max_dense={self.max_dense}. Use "
                "Exact(method='streaming') for the moment criteria (kta, ckta, fsm, mmd, "
                "sm), an approximation (approximation='nystrom', 'rff' or 'mcm'), or "
                "raise Exact(max_dense=...)."
            )
        return {"method": method}

    def build(self, X, y, gamma, *, kernel, state, workers):
        method = state["method"] if state else self._resolved_method()
        if method == "streaming":
            from .streaming import StreamingOperator

            return StreamingOperator(X, gamma, kernel=kernel, workers=workers)
        from .. import lowlevel

        K = lowlevel.kernel_block(X, X, gamma, kernel=kernel, workers=workers)
        return DenseOperator(K)
