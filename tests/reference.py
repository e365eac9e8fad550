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
# discriminant information (paper 001: DI, KDI, KDCA)
# ---------------------------------------------------------------------------


def centering_matrix(n):
    """C = I − 11ᵀ/n, explicitly."""
    return np.eye(n) - np.ones((n, n)) / n


def dense_di(F, Y, rho):
    """DI = tr((FᵀCF + ρI)⁻¹ FᵀCYYᵀCF) with F (n, J), explicit C and inverse."""
    F = np.asarray(F, dtype=float)
    Y = np.asarray(Y, dtype=float).reshape(F.shape[0], -1)
    C = centering_matrix(F.shape[0])
    S = F.T @ C @ F + rho * np.eye(F.shape[1])
    return float(np.trace(np.linalg.inv(S) @ F.T @ C @ Y @ Y.T @ C @ F))


def dense_kdi(G, B, Y, rho):
    """KDI = tr((GᵀCG + ρB)⁻¹ GᵀCYYᵀCG), explicit C and inverse."""
    G = np.asarray(G, dtype=float)
    Y = np.asarray(Y, dtype=float).reshape(G.shape[0], -1)
    C = centering_matrix(G.shape[0])
    S = G.T @ C @ G + rho * np.asarray(B, dtype=float)
    return float(np.trace(np.linalg.inv(S) @ G.T @ C @ Y @ Y.T @ C @ G))


def kdca_optimum(K, Y, rho):
    """Optimum of kernel DCA (paper eq. 3) with K_B = K̄YYᵀK̄, K̄ = CKC.

    max tr(AᵀK_B A) s.t. Aᵀ(K̄² + ρK̄)A = I is the sum of the generalised
    eigenvalues of (K_B, K̄² + ρK̄) on the range of K̄: tr((K̄² + ρK̄)⁺ K_B).
    """
    K = np.asarray(K, dtype=float)
    Y = np.asarray(Y, dtype=float).reshape(K.shape[0], -1)
    C = centering_matrix(K.shape[0])
    Kb = C @ K @ C
    KB = Kb @ Y @ Y.T @ Kb
    return float(np.trace(np.linalg.pinv(Kb @ Kb + rho * Kb, hermitian=True) @ KB))


def one_hot_unit_columns(labels):
    """Y_ic = 1/√n_c when label_i is the c-th sorted class, by loops."""
    labels = np.asarray(labels)
    classes = sorted(set(labels.tolist()))
    Y = np.zeros((labels.shape[0], len(classes)))
    for c, cls in enumerate(classes):
        members = [i for i in range(labels.shape[0]) if labels[i] == cls]
        for i in members:
            Y[i, c] = 1.0 / np.sqrt(len(members))
    return Y
