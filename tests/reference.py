"""Dense reference implementations, written straight from the formulas.

Nothing here is fast or clever: explicit matrices and plain loops, so that the
compiled kernels and the structured operators can be checked against them.
"""

import itertools

import numpy as np

# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------


def radial_value(dist, gamma, kernel, dist_sq=None):
    """κ as a function of the distance ‖x − x′‖ (Gaussian) or ‖x − x′‖₁ (Laplacian)."""
    if kernel == "gaussian":
        return np.exp(-gamma * np.asarray(dist, dtype=float) ** 2)
    if kernel == "laplacian":
        return np.exp(-gamma * np.asarray(dist, dtype=float))
    raise ValueError(kernel)


def kernel_matrix(X, Z, gamma, kernel="gaussian"):
    """K_ij = κ(x_i, z_j) by explicit pairwise differences."""
    X = np.asarray(X, dtype=float)
    Z = np.asarray(Z, dtype=float)
    diff = X[:, None, :] - Z[None, :, :]
    if kernel == "gaussian":
        return np.exp(-gamma * np.sum(diff ** 2, axis=2))
    if kernel == "laplacian":
        return np.exp(-gamma * np.sum(np.abs(diff), axis=2))
    raise ValueError(kernel)


def kernel_sums(X, gamma, kernel="gaussian", labels=None):
    """The streaming reductions from the explicit K: 1ᵀK1, ‖K‖_F², K1, ‖K1‖², class blocks."""
    K = kernel_matrix(X, X, gamma, kernel)
    out = {
        "total": K.sum(),
        "frobenius_sq": np.sum(K * K),
        "row_sums": K.sum(axis=1),
        "row_sums_sq": np.sum(K.sum(axis=1) ** 2),
        "diagonal": np.diag(K).copy(),
    }
    if labels is not None:
        labels = np.asarray(labels)
        classes = np.unique(labels)
        blocks = np.empty((classes.size, classes.size))
        for a, ca in enumerate(classes):
            for b, cb in enumerate(classes):
                blocks[a, b] = K[np.ix_(labels == ca, labels == cb)].sum()
        out["classes"] = classes
        out["block_sums"] = blocks
    return out


# ---------------------------------------------------------------------------
# multilevel circulant matrices
# ---------------------------------------------------------------------------


def multilevel_circulant(column):
    """Explicit p-level circulant matrix with first column ``column`` (shape m).

    Rows and columns are indexed by multi-indices i, j ∈ Π_s [0, m_s) in C order;
    the entry is column[(i − j) mod m].
    """
    column = np.asarray(column)
    m = column.shape
    idx = list(itertools.product(*[range(ms) for ms in m]))
    n = len(idx)
    U = np.empty((n, n), dtype=column.dtype)
    for a, i in enumerate(idx):
        for b, j in enumerate(idx):
            U[a, b] = column[tuple((ii - jj) % ms for ii, jj, ms in zip(i, j, m))]
    return U


def song_xu_column(m, h, gamma, kernel="gaussian"):
    """Song–Xu first column by its definition (paper 002, Alg. 1), plain loops.

    t_i = κ(‖(i_s h_s)_s‖); D_{i,s} = {0} if i_s = 0 else the *set* {i_s, m_s − i_s};
    u_i = Σ over the Cartesian product of the D_{i,s} of t.
    """
    m = tuple(int(v) for v in m)
    h = np.asarray(h, dtype=float)
    out = np.empty(m)
    for i in itertools.product(*[range(ms) for ms in m]):
        sets = [sorted({0}) if i_s == 0 else sorted({i_s, ms - i_s}) for i_s, ms in zip(i, m)]
        total = 0.0
        for j in itertools.product(*sets):
            pos = np.array(j, dtype=float) * h
            if kernel == "gaussian":
                total += np.exp(-gamma * np.sum(pos ** 2))
            else:
                total += np.exp(-gamma * np.sum(np.abs(pos)))
        out[i] = total
    return out


# ---------------------------------------------------------------------------
# random features
# ---------------------------------------------------------------------------


def labeled_rff_column(X, y, W, b):
    """u_ik = (√2/D) y_i cos(x_iᵀW[:, k] + b_k); y=None means y_i = 1."""
    X = np.asarray(X, dtype=float)
    D = W.shape[1]
    yy = np.ones(X.shape[0]) if y is None else np.asarray(y, dtype=float)
    out = np.empty((X.shape[0], D))
    for i in range(X.shape[0]):
        for k in range(D):
            out[i, k] = np.sqrt(2.0) / D * yy[i] * np.cos(X[i] @ W[:, k] + b[k])
    return out


def rff_features(X, W, b):
    """z(x)_k = √(2/D) cos(xᵀW[:, k] + b_k), an (n, D) array."""
    D = W.shape[1]
    return np.sqrt(2.0 / D) * np.cos(np.asarray(X, dtype=float) @ W + b)


# ---------------------------------------------------------------------------
# randomised labelled MCM criteria (paper 000) on explicit matrices
# ---------------------------------------------------------------------------


def lifted_gram(column):
    """A = UUᴴ for U = circ_(n, D)[column], explicitly (Π × Π, Π = nD)."""
    U = multilevel_circulant(np.asarray(column, dtype=float))
    return U @ U.conj().T


def random_c1_dense(column, alpha):
    """1ᵀ(A + αI)⁻²1 + tr(A(A + αI)⁻¹), A = UUᴴ (paper 000 eq. 4)."""
    A = lifted_gram(column)
    Pi = A.shape[0]
    R = np.linalg.inv(A + alpha * np.eye(Pi))
    one = np.ones(Pi)
    return float(np.real(one @ R @ R @ one + np.trace(A @ R)))


def random_kta_dense(column):
    """1ᵀA1 / (Π² tr A), A = UUᴴ (paper 000 eq. 5)."""
    A = lifted_gram(column)
    Pi = A.shape[0]
    one = np.ones(Pi)
    return float(np.real(one @ A @ one) / (Pi ** 2 * np.real(np.trace(A))))


def random_mmd_dense(column_bar):
    """1ᵀĀ1 / Π, Ā = ŪŪᴴ with the class-weighted column."""
    A = lifted_gram(column_bar)
    one = np.ones(A.shape[0])
    return float(np.real(one @ A @ one) / A.shape[0])


def random_eloo_dense(unlabeled, y, alpha, loss):
    """LSSVM ELOO (Cawley & Talbot) with kernel matrix ÛÛᴴ on the lifted points.

    Targets y_L = y ⊗ 1_D; P = [[Â + αI, 1], [1ᵀ, 0]] inverted explicitly;
    e = a / diag(P⁻¹); returns the per-point residuals (checked equal on the D
    slots) and the loss: mean e² or mean [y(y − e) ≤ 0].
    """
    n, D = unlabeled.shape
    A = np.real(lifted_gram(unlabeled))
    Pi = n * D
    P = np.zeros((Pi + 1, Pi + 1))
    P[:Pi, :Pi] = A + alpha * np.eye(Pi)
    P[:Pi, Pi] = 1.0
    P[Pi, :Pi] = 1.0
    Pinv = np.linalg.inv(P)
    sol = Pinv @ np.r_[np.repeat(y, D), 0.0]
    e = (sol[:Pi] / np.diag(Pinv)[:Pi]).reshape(n, D)
    if loss == "squared":
        value = np.mean(e ** 2)
    else:
        value = np.mean(y[:, None] * (y[:, None] - e) <= 0)
    return e, float(value)
