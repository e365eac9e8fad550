"""Song–Xu multilevel circulant stand-in for the kernel matrix on real data.

Paper: Ding, Liao et al., "Approximate kernel selection via matrix
approximation" (TNNLS 2020), Alg. 1 and 2, after Song & Xu (2010). On a grid
m ∈ N^p with spacing h the kernel matrix of grid points is approximated by
U = circ_m[u] with u_i = Σ_{j ∈ D_i} κ(‖(j_s h_s)_s‖), D_{i,s} = {0} if i_s = 0
else the set {i_s, m_s − i_s}. U is symmetric and diagonalised by the p-level
DFT Φ: U = (1/Π) Φᴴ diag(λ) Φ with λ = FFT_p(u) real.

Real data are placed on the grid by :mod:`kernelselect._grid` (n′ = Π m ≤ n
points, recursive principal splits, least-squares spacing).
"""

import numpy as np
import scipy.fft

from .._grid import choose_grid, fit_spacing, grid_order
from .._validation import check_kernel, check_matrix, check_positive, check_positive_int, check_random_state
from ._base import Approximation, KernelOperator, evaluate_at

__all__ = ["MCM", "MCMOperator"]


def _song_xu_column(m, h, gamma, kernel, workers):
    try:
        from ..lowlevel import song_xu_column
    except ImportError:  # compiled column not built: separable numpy form
        return _song_xu_column_numpy(m, h, gamma, kernel)
    return song_xu_column(m, h, gamma, kernel=kernel, workers=workers)


def _song_xu_column_numpy(m, h, gamma, kernel):
    """The Song–Xu column as an outer product of per-level columns.

    Both kernels factor over levels (Gaussian: exp(−γ Σ_s (j_s h_s)²);
    Laplacian, ℓ1 distance: exp(−γ Σ_s |j_s h_s|)), and so does the sum over
    D_i = D_{i,0} × … × D_{i,p−1}; hence u = ⊗_s c_s with
    c_s[i] = Σ_{j ∈ D_{i,s}} κ_1(j h_s).
    """
    out = np.ones(())
    for ms, hs in zip(m, h):
        i = np.arange(ms, dtype=np.float64)
        mirror = ms - i
        if kernel == "gaussian":
            near = np.exp(-gamma * (i * hs) ** 2)
            far = np.exp(-gamma * (mirror * hs) ** 2)
        else:
            near = np.exp(-gamma * i * hs)
            far = np.exp(-gamma * mirror * hs)
        # D_{i,s} is a set: i = 0 has {0}; i = m/2 has one element
        far[(i == 0) | (mirror == i)] = 0.0
        out = np.multiply.outer(out, near + far)
    return np.ascontiguousarray(out, dtype=np.float64)


class MCMOperator(KernelOperator):
    """U = circ_m[u] on the n′ grid points, diagonalised by the p-level FFT.

    Eigenpairs: λ_j = (FFT_p u)_j (real, u is even) and the orthonormal Fourier
    vectors q_j(i) = exp(2πi Σ_s i_s j_s / m_s) / √Π. The projection of a real
    probe p laid on the grid is ⟨q_j, p⟩ = (FFT_p p)_j / √Π.

    Parameters
    ----------
    column : ndarray of shape m
        First column u of U.
    indices : ndarray of int, shape (Π m,)
        Original rows in grid (C) order.
    workers : int or None
        Threads for the FFTs.
    clip_negative : bool, default False
        Replace U by its nearest positive semi-definite matrix in Frobenius
        norm, (1/Π) Φᴴ diag(max(λ, 0)) Φ (still circulant).
    """

    name = "mcm"
    spectral = True

    def __init__(self, column, indices=None, workers=None, clip_negative=False):
        column = np.asarray(column, dtype=np.float64)
        super().__init__(column.size, indices)
        self.shape = column.shape
        self.column = column
        self._workers = workers
        self._axes = tuple(range(column.ndim))
        self._lam = np.real(scipy.fft.fftn(column, workers=workers)).ravel()
        self.min_eigenvalue = float(self._lam.min())
        if clip_negative:
            np.maximum(self._lam, 0.0, out=self._lam)

    @property
    def eigenvalues(self):
        return self._lam

    def _grid(self, P):
        P = np.asarray(P, dtype=np.float64).reshape(self.n, -1)
        return P.reshape(self.shape + (P.shape[1],)), P.shape[1]

    def project(self, P):
        G, k = self._grid(P)
        F = scipy.fft.fftn(G, axes=self._axes, workers=self._workers)
        return F.reshape(self.n, k) / np.sqrt(self.n)

    def power_quadratic(self, r, P):
        return self._spectral_power_quadratic(r, P)

    def power_trace(self, r):
        return self._spectral_power_trace(r)

    def diagonal(self):
        return np.full(self.n, float(self._lam.mean()))

    def diagonal_function(self, g):
        """diag g(U) = (1/Π) Σ_j g(λ_j) on every entry (U is circulant)."""
        gl = evaluate_at(g, self._lam)
        mean = gl.mean(axis=0)
        if gl.ndim == 1:
            return np.full(self.n, float(mean))
        return np.broadcast_to(mean, (self.n, mean.shape[0])).copy()

    def apply_function(self, g, B):
        """g(U) B = IFFT_p(g(λ) ∘ FFT_p B), columns of B in grid order."""
        G, k = self._grid(B)
        F = scipy.fft.fftn(G, axes=self._axes, workers=self._workers).reshape(self.n, k)
        gl = evaluate_at(g, self._lam)
        if gl.ndim == 1:
            H = (gl[:, None] * F).reshape(self.shape + (k,))
            return np.real(scipy.fft.ifftn(H, axes=self._axes, workers=self._workers)).reshape(self.n, k)
        L = gl.shape[1]
        H = (gl[:, None, :] * F[:, :, None]).reshape(self.shape + (k, L))
        out = scipy.fft.ifftn(H, axes=self._axes, workers=self._workers)
        return np.real(out).reshape(self.n, k, L)


class MCM(Approximation):
    """Song–Xu multilevel circulant approximation on real data (paper 002, Alg. 1).

    ``prepare`` (once per data set) chooses the grid, drops points if n does not
    factor well, orders the points along principal directions and fits the
    spacing h; ``build`` (per γ) computes the column u and its FFT. Only γ
    changes between builds, so the grid and h are shared by every candidate.

    Parameters
    ----------
    levels : int or None, default None
        p, the number of circulant levels. None picks min(3, d, ⌊log₂ n⌋).
    max_ratio : float, default 2.0
        Sides of the grid differ by at most this factor (see
        :func:`kernelselect._grid.choose_grid`); n′ is the largest such Π m ≤ n.
    n_pairs : int, default 4096
        Random point pairs for the least-squares fit of h.
    periodic : bool, default False
        Fit h against the plain grid index difference |i_s − j_s| (False, the
        relation assumed by H4 of paper 002 and tuned in its experiments) or
        against the torus distance min(k_s, m_s − k_s) (True).
    spacing : array-like of shape (p,), optional
        Use this h instead of fitting one.
    clip_negative : bool, default False
        Zero the negative eigenvalues of U (its nearest positive semi-definite
        circulant). The Song–Xu column sums only the images {i_s, m_s − i_s},
        so U is indefinite whenever the kernel has not decayed within half the
        grid (small γ): on standardised real data its most negative eigenvalue
        reaches −10² … −10³ at γ = γ_median/8, and criteria with 1/(λ + α)
        then change sign or blow up. ``details["min_eigenvalue"]`` reports the
        unclipped minimum either way.

    Notes
    -----
    Points dropped when n′ < n are chosen uniformly at random with
    ``random_state`` (the fit of h uses the same generator), so a fixed seed
    gives the same grid. The operator's ``indices`` hold the original rows in
    grid order; ``details`` reports m, h, n′, p and the dropped count.
    """

    name = "mcm"

    def __init__(self, levels=None, max_ratio=2.0, n_pairs=4096, periodic=False, spacing=None,
                 clip_negative=False):
        self.levels = levels
        self.clip_negative = clip_negative
        self.max_ratio = max_ratio
        self.n_pairs = n_pairs
        self.periodic = periodic
        self.spacing = spacing

    def prepare(self, X, y=None, *, kernel="gaussian", random_state=None, workers=None):
        X = check_matrix(X, "X", dtype=np.float64)
        n, d = X.shape
        if self.levels is None:
            p = max(1, min(3, d, int(np.floor(np.log2(max(n, 2))))))
        else:
            p = check_positive_int(self.levels, "levels")
            if p > d:
                raise ValueError(
                    f"levels={p} exceeds the number of features d={d}: each level splits "
                    f"along its own principal direction; use levels ≤ {d}."
                )
        check_positive_int(self.n_pairs, "n_pairs")
        rng = check_random_state(random_state)
        m, n_used = choose_grid(n, p, self.max_ratio)
        if n_used < n:
            keep = np.sort(rng.choice(n, size=n_used, replace=False))
        else:
            keep = np.arange(n)
        order = keep[grid_order(X[keep], m)]
        if self.spacing is None:
            h = fit_spacing(X[order], m, n_pairs=self.n_pairs, periodic=self.periodic, random_state=rng)
        else:
            h = np.asarray(self.spacing, dtype=np.float64).ravel()
            if h.shape != (p,) or not np.all(np.isfinite(h)) or np.any(h <= 0):
                raise ValueError(f"spacing must hold {p} finite positive numbers (one per level), got {self.spacing!r}.")
        dropped = np.setdiff1d(np.arange(n), keep)
        return {"m": m, "h": h, "order": order, "dropped": dropped, "n": n}

    def build(self, X, y, gamma, *, kernel="gaussian", state=None, workers=None):
        kernel = check_kernel(kernel)
        gamma = check_positive(gamma, "gamma")
        if state is None:
            state = self.prepare(X, y, kernel=kernel, random_state=None, workers=workers)
        u = _song_xu_column(state["m"], state["h"], gamma, kernel, workers)
        op = MCMOperator(u, indices=state["order"], workers=workers,
                         clip_negative=bool(self.clip_negative))
        op.details = {
            "m": tuple(state["m"]),
            "h": state["h"].copy(),
            "n_used": int(op.n),
            "levels": len(state["m"]),
            "dropped": int(state["dropped"].size),
            "dropped_rows": state["dropped"].copy(),
            "min_eigenvalue": op.min_eigenvalue,
            "clipped": bool(self.clip_negative),
        }
        return op
