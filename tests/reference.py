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
# selection criteria on an explicit matrix A (K, the Nyström K̃ = C W_k⁺ Cᵀ, or
# the random-feature ZZᵀ), straight from the formulas of docs/criteria.md
# ---------------------------------------------------------------------------


def crit_ree(A, y, alpha):
    """(α/n) yᵀ(A + αI)⁻¹y."""
    n = A.shape[0]
    return alpha / n * y @ np.linalg.solve(A + alpha * np.eye(n), y)


def crit_ipe(A, y, alpha, sigma):
    """(α²/n) yᵀ(A + αI)⁻²y + (σ²/n) tr(A²(A + αI)⁻²)."""
    n = A.shape[0]
    Ki = np.linalg.inv(A + alpha * np.eye(n))
    return alpha ** 2 / n * y @ Ki @ Ki @ y + sigma ** 2 / n * np.trace(A @ A @ Ki @ Ki)


def crit_c1(A, y, alpha, sigma):
    """(α²/n) yᵀ(A + αI)⁻²y + (σ²/n) tr(A(A + αI)⁻¹)."""
    n = A.shape[0]
    Ki = np.linalg.inv(A + alpha * np.eye(n))
    return alpha ** 2 / n * y @ Ki @ Ki @ y + sigma ** 2 / n * np.trace(A @ Ki)


def crit_gcv(A, y, alpha):
    """n‖(I − S)y‖² / tr(I − S)², S = A(A + αI)⁻¹."""
    n = A.shape[0]
    S = A @ np.linalg.inv(A + alpha * np.eye(n))
    r = y - S @ y
    return n * (r @ r) / np.trace(np.eye(n) - S) ** 2


def lssvm_bordered_matrix(A, alpha):
    """P = [[A + αI, 1], [1ᵀ, 0]], the LSSVM-with-bias system matrix."""
    n = A.shape[0]
    P = np.zeros((n + 1, n + 1))
    P[:n, :n] = A + alpha * np.eye(n)
    P[:n, n] = 1.0
    P[n, :n] = 1.0
    return P


def lssvm_solve(A, y, alpha):
    """Dual coefficients a and bias b of the LSSVM: P [a; b] = [y; 0]."""
    n = A.shape[0]
    sol = np.linalg.solve(lssvm_bordered_matrix(A, alpha), np.r_[y, 0.0])
    return sol[:n], sol[n]


def krr_solve(A, y, alpha):
    """Dual coefficients of kernel ridge regression: (A + αI) a = y."""
    return np.linalg.solve(A + alpha * np.eye(A.shape[0]), y)


def krr_mean_solve(A, y, alpha):
    """Kernel ridge regression of the centred target: a = (A + αI)⁻¹(y − ȳ1), b = ȳ."""
    mean = np.mean(y)
    return krr_solve(A, y - mean, alpha), mean


def crit_eloo_residuals(A, y, alpha):
    """LOO residuals of the LSSVM with bias from the bordered system P⁻¹."""
    n = A.shape[0]
    Pi = np.linalg.inv(lssvm_bordered_matrix(A, alpha))
    sol = Pi @ np.concatenate([y, [0.0]])
    return sol[:n] / np.diag(Pi)[:n]


def crit_eloo(A, y, alpha, loss):
    e = crit_eloo_residuals(A, y, alpha)
    if loss == "squared":
        return np.mean(e ** 2)
    return np.mean(y * (y - e) <= 0)


def loo_lssvm_bruteforce(A, y, alpha):
    """LOO residuals y_i − f₋ᵢ(x_i) by retraining the LSSVM n times."""
    n = A.shape[0]
    out = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        m = n - 1
        P = np.zeros((m + 1, m + 1))
        P[:m, :m] = A[np.ix_(keep, keep)] + alpha * np.eye(m)
        P[:m, m] = 1.0
        P[m, :m] = 1.0
        sol = np.linalg.solve(P, np.concatenate([y[keep], [0.0]]))
        f = A[i, keep] @ sol[:m] + sol[m]
        out[i] = y[i] - f
    return out


def loo_ovr_bruteforce(A, labels, alpha):
    """One-vs-rest LSSVM leave-one-out by refitting: (error rate, residuals (n, C)).

    For each i, C LSSVMs (one per class, ±1 targets) are trained on the other n − 1
    points; the prediction is the class of the largest decision value at x_i.
    """
    classes = np.unique(labels)
    Y = np.where(labels[:, None] == classes[None, :], 1.0, -1.0)
    n, C = Y.shape
    E = np.empty((n, C))
    wrong = 0
    for i in range(n):
        keep = np.arange(n) != i
        f = np.empty(C)
        for c in range(C):
            a, b = lssvm_solve(A[np.ix_(keep, keep)], Y[keep, c], alpha)
            f[c] = A[i, keep] @ a + b
        E[i] = Y[i] - f
        wrong += classes[np.argmax(f)] != labels[i]
    return wrong / n, E


def kfold_lssvm_bruteforce(A, Y, alpha, fold_of):
    """k-fold held-out residuals Y_B − f₋B(x_B) by refitting the LSSVM with bias on
    every training fold; Y (n, t) target columns, fold_of (n,) fold of each point."""
    E = np.empty_like(Y, dtype=float)
    for f in np.unique(fold_of):
        test, keep = fold_of == f, fold_of != f
        for c in range(Y.shape[1]):
            a, b = lssvm_solve(A[np.ix_(keep, keep)], Y[keep, c], alpha)
            E[test, c] = Y[test, c] - (A[np.ix_(test, keep)] @ a + b)
    return E


def crit_kta(A, y):
    """⟨A, yyᵀ⟩_F / (‖A‖_F ‖yyᵀ‖_F)."""
    Y = np.outer(y, y)
    return np.sum(A * Y) / (np.linalg.norm(A) * np.linalg.norm(Y))


def crit_ckta(A, y):
    """⟨HAH, H yyᵀ H⟩_F / (‖HAH‖_F ‖H yyᵀ H‖_F), H = I − 11ᵀ/n."""
    n = A.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    Ac = H @ A @ H
    Yc = H @ np.outer(y, y) @ H
    return np.sum(Ac * Yc) / (np.linalg.norm(Ac) * np.linalg.norm(Yc))


def _features(A):
    """Rows φ_i with φ_iᵀφ_j = A_ij (A symmetric PSD up to rounding)."""
    lam, Q = np.linalg.eigh(0.5 * (A + A.T))
    return Q * np.sqrt(np.clip(lam, 0.0, None))


def crit_fsm(A, y):
    """(s₊ + s₋)/‖m₊ − m₋‖ with explicit feature vectors; s² sample variance (n−1)."""
    F = _features(A)
    pos, neg = F[y > 0], F[y <= 0]
    mp, mn = pos.mean(axis=0), neg.mean(axis=0)
    sp = np.sqrt(np.sum((pos - mp) ** 2) / (len(pos) - 1)) if len(pos) > 1 else 0.0
    sn = np.sqrt(np.sum((neg - mn) ** 2) / (len(neg) - 1)) if len(neg) > 1 else 0.0
    return (sp + sn) / np.linalg.norm(mp - mn)


def crit_mmd(A, y):
    """‖m₊ − m₋‖² in feature space."""
    F = _features(A)
    return np.sum((F[y > 0].mean(axis=0) - F[y <= 0].mean(axis=0)) ** 2)


def crit_sm(A, y, r=3, h=None):
    """(1/n) ȳᵀφ(N)ȳ, N = A/1ᵀA1, ȳ_i = n/n₊ or −n/n₋; φ = tʳ or the hinge at h."""
    n = A.shape[0]
    pos = y > 0
    ybar = np.where(pos, n / pos.sum(), -n / (~pos).sum())
    N = A / A.sum()
    if h is None:
        return ybar @ np.linalg.matrix_power(N, r) @ ybar / n
    lam, Q = np.linalg.eigh(N)
    c = Q.T @ ybar
    keep = lam > h
    return np.sum(lam[keep] * c[keep] ** 2) / n


def crit_er(A, y, alpha, t=None, c=1.0):
    """(α²/n) yᵀ(A + αI)⁻²y + c·Σ_{i>t}λ_i/Σ_{i≤t}λ_i, λ = eigvalsh(A) in decreasing
    order with negative values set to 0; t = ⌈√n⌉ by default."""
    n = A.shape[0]
    t = int(np.ceil(np.sqrt(n))) if t is None else t
    t = min(t, n - 1)
    lam = np.sort(np.maximum(np.linalg.eigvalsh(A), 0.0))[::-1]
    R = np.linalg.inv(A + alpha * np.eye(n))
    fit = alpha ** 2 / n * y @ R @ R @ y
    return fit + c * lam[t:].sum() / lam[:t].sum()


def nystroem_matrix(X, landmarks, gamma, kernel, rank, eigen_floor):
    """K̃ = C W_k⁺ Cᵀ with the k largest eigenvalues of W above eigen_floor·σ_max."""
    C = kernel_matrix(X, X[landmarks], gamma, kernel)
    W = kernel_matrix(X[landmarks], X[landmarks], gamma, kernel)
    sig, U = np.linalg.eigh(W)
    order = np.argsort(sig)[::-1]
    sig, U = sig[order], U[:, order]
    keep = np.flatnonzero(sig > eigen_floor * sig[0])[:rank]
    Wk_pinv = U[:, keep] @ np.diag(1.0 / sig[keep]) @ U[:, keep].T
    return C @ Wk_pinv @ C.T


# randomised labelled MCM criteria (paper 000) on explicit matrices
# ---------------------------------------------------------------------------


def lifted_gram(column):
    """A = UUᴴ for U = circ_(n, D)[column], explicitly (Π × Π, Π = nD)."""
    U = multilevel_circulant(np.asarray(column, dtype=float))
    return U @ U.conj().T


def circulant_spectrum(column):
    """s = |FFT₂(u)|² of the first column u (n × D) of U: the eigenvalues of UUᴴ
    (U = (1/Π) Φᴴ diag(FFT₂ u) Φ is normal), on the 2-D frequency grid."""
    return np.abs(np.fft.fft2(np.asarray(column, dtype=float))) ** 2


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
    slots) and the loss: mean e² ("squared") or mean [y(y − e) ≤ 0] (otherwise).
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


def _mp_gaussian(A, B, g):
    """exp(−g‖a − b‖²) for every row a of A and b of B (lists of mpmath rows), in the
    working precision of the caller's ``mpmath.workdps``."""
    import mpmath

    return [[mpmath.exp(-g * mpmath.fsum((ai - bi) ** 2 for ai, bi in zip(a, b))) for b in B]
            for a in A]


def _mp_rows(A):
    """The rows of a float64 array as lists of mpmath numbers (exact conversions)."""
    import mpmath

    return [[mpmath.mpf(float(v)) for v in row] for row in np.asarray(A, dtype=float)]


def mp_kdi(X, R, Y, gamma, rho, dps=60):
    """KDI = tr((GᵀCG + ρB)⁻¹ GᵀCYYᵀCG), G = K(X, R), B = K(R, R) (Gaussian), in
    ``dps``-digit arithmetic (mpmath) from the float64 inputs, which convert exactly:
    the value of the formula itself, also where B is too ill-conditioned for float64."""
    import mpmath

    with mpmath.workdps(dps):
        X, R = _mp_rows(X), _mp_rows(R)
        Y = np.asarray(Y, dtype=float).reshape(len(X), -1)
        g, rho = mpmath.mpf(float(gamma)), mpmath.mpf(float(rho))
        n, J, L = len(X), len(R), Y.shape[1]

        G = _mp_gaussian(X, R, g)
        Gc = mpmath.matrix(n, J)
        for j in range(J):
            mean = mpmath.fsum(G[i][j] for i in range(n)) / n
            for i in range(n):
                Gc[i, j] = G[i][j] - mean
        Yc = mpmath.matrix(n, L)
        for c in range(L):
            col = [mpmath.mpf(float(v)) for v in Y[:, c]]
            mean = mpmath.fsum(col) / n
            for i in range(n):
                Yc[i, c] = col[i] - mean
        S = Gc.T * Gc + rho * mpmath.matrix(_mp_gaussian(R, R, g))
        M = Gc.T * Yc
        total = mpmath.mpf(0)
        for c in range(L):
            m = mpmath.matrix([M[i, c] for i in range(J)])
            a = mpmath.lu_solve(S, m)
            total += mpmath.fsum(m[i] * a[i] for i in range(J))
        return float(total)


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


# Nyström samplers (paper 002, Sec. V) on explicit matrices
# ---------------------------------------------------------------------------


def column_norm_probabilities(X, gamma, kernel="gaussian"):
    """p_i = ‖K_{:,i}‖² / ‖K‖_F² from the explicit K."""
    K = kernel_matrix(X, X, gamma, kernel)
    sq = (K ** 2).sum(axis=0)
    return sq / sq.sum()


def ridge_leverage(K, lam):
    """ℓ_i(λ) = (K (K + λI)⁻¹)_ii."""
    return np.diag(K @ np.linalg.inv(K + lam * np.eye(K.shape[0])))


def ridge_leverage_nystroem(K, pilot, lam):
    """(K − K_{:,S}(K_SS + λI)⁻¹K_{S,:})_ii / λ."""
    C = K[:, pilot]
    W = K[np.ix_(pilot, pilot)]
    return np.diag(K - C @ np.linalg.inv(W + lam * np.eye(len(pilot))) @ C.T) / lam


def modified_nystroem_matrix(X, landmarks, gamma, kernel="gaussian"):
    """C (C⁺ K (C⁺)ᵀ) Cᵀ, C = K(X, X_I)."""
    K = kernel_matrix(X, X, gamma, kernel)
    C = K[:, landmarks]
    Cp = np.linalg.pinv(C)
    return C @ (Cp @ K @ Cp.T) @ C.T


def optimal_rank_k(X, gamma, k, kernel="gaussian"):
    """The best rank-k approximation U_k Λ_k U_kᵀ of K."""
    K = kernel_matrix(X, X, gamma, kernel)
    lam, U = np.linalg.eigh(K)
    order = np.argsort(lam)[::-1][:k]
    return (U[:, order] * lam[order]) @ U[:, order].T


def nystroem_points_matrix(X, Z, gamma, kernel="gaussian"):
    """K(X, Z) K(Z, Z)⁺ K(Z, X) for landmark points Z."""
    C = kernel_matrix(X, Z, gamma, kernel)
    return C @ np.linalg.pinv(kernel_matrix(Z, Z, gamma, kernel)) @ C.T


# ---------------------------------------------------------------------------
# high-precision references for the machines (mpmath, from the float64 inputs,
# which convert exactly): the answer of the formula itself at any conditioning
# ---------------------------------------------------------------------------


def nystroem_map(X, Z, gamma, kernel="gaussian", eigen_floor=1e-8):
    """(V, T) with T = U_k Σ_k^{-1/2} from W = K(Z, Z) (eigenvalues above
    eigen_floor·σ_max) and V = K(X, Z) T: the Nyström features of X."""
    W = kernel_matrix(Z, Z, gamma, kernel)
    sig, U = np.linalg.eigh(0.5 * (W + W.T))
    keep = sig > eigen_floor * sig.max()
    T = U[:, keep] / np.sqrt(sig[keep])
    return kernel_matrix(X, Z, gamma, kernel) @ T, T


def mp_machine(K, y, alpha, bias, dps=50):
    """(a, b) of [K + αI, 1; 1ᵀ, 0][a; b] = [y; 0] (bias) or (K + αI)a = y, solved in
    ``dps``-digit arithmetic."""
    import mpmath

    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    with mpmath.workdps(dps):
        m = n + int(bias)
        P = mpmath.matrix(m, m)
        for i in range(n):
            for j in range(n):
                P[i, j] = mpmath.mpf(float(K[i, j]))
            P[i, i] += mpmath.mpf(float(alpha))
            if bias:
                P[i, n] = P[n, i] = 1
        rhs = mpmath.matrix([mpmath.mpf(float(v)) for v in y] + [0] * int(bias))
        sol = mpmath.lu_solve(P, rhs)
        return np.array([float(sol[i]) for i in range(n)]), (float(sol[n]) if bias else 0.0)


def mp_ridge(V, y, alpha, bias, dps=50):
    """(w, b) minimising ‖Vw + b1 − y‖² + α‖w‖² (b = 0 without ``bias``): the normal
    equations of the centred problem, (V_cᵀV_c + αI)w = V_cᵀy_c, b = ȳ − μᵀw, solved
    in ``dps``-digit arithmetic (their squared condition number costs nothing there)."""
    import mpmath

    V = np.asarray(V, dtype=float)
    n, k = V.shape
    with mpmath.workdps(dps):
        Vm = mpmath.matrix(V.tolist())
        ym = mpmath.matrix([mpmath.mpf(float(v)) for v in y])
        mu = [mpmath.mpf(0)] * k
        ybar = mpmath.mpf(0)
        if bias:
            mu = [mpmath.fsum(Vm[i, j] for i in range(n)) / n for j in range(k)]
            ybar = mpmath.fsum(ym) / n
            for i in range(n):
                for j in range(k):
                    Vm[i, j] -= mu[j]
                ym[i] -= ybar
        G = Vm.T * Vm
        for j in range(k):
            G[j, j] += mpmath.mpf(float(alpha))
        w = mpmath.lu_solve(G, Vm.T * ym)
        b = ybar - mpmath.fsum(mu[j] * w[j] for j in range(k))
        return np.array([float(v) for v in w]), float(b)


# ---------------------------------------------------------------------------
# Nyström ridge regression on a feature map (the large-m solver's model)
# ---------------------------------------------------------------------------


def nystrom_ridge(X, Y, Z, gamma, alpha, bias, jitter=0.0, kernel="gaussian"):
    """Ridge regression on the Nyström features, solved by least squares.

    φ(x) = Λ^(−1/2)Uᵀk(Z, x) with K(Z, Z) + jitter·I = UΛUᵀ (φ(x)ᵀφ(x′) is the Nyström
    kernel k(x, Z)(K_mm + jitter·I)⁻¹k(Z, x′)); minimise ‖Φw + b1 − Y‖² + α‖w‖² (b = 0
    without bias) as the stacked least-squares problem [Φ 1; √αI 0][w; b] ≈ [Y; 0],
    solved by numpy's SVD-based lstsq, which never forms ΦᵀΦ (stable at small α).
    Returns a function X_new ↦ f(X_new) of shape (n_new, t).
    """
    Y = np.asarray(Y, dtype=float).reshape(len(X), -1)
    lam, U = np.linalg.eigh(kernel_matrix(Z, Z, gamma, kernel) + jitter * np.eye(len(Z)))
    proj = U / np.sqrt(lam)
    Phi = kernel_matrix(X, Z, gamma, kernel) @ proj
    n, m = Phi.shape
    A = np.vstack([Phi, np.sqrt(alpha) * np.eye(m)])
    if bias:
        A = np.column_stack([A, np.r_[np.ones(n), np.zeros(m)]])
    sol = np.linalg.lstsq(A, np.vstack([Y, np.zeros((m, Y.shape[1]))]), rcond=None)[0]
    w, b = sol[:m], (sol[m] if bias else np.zeros(Y.shape[1]))
    return lambda X_new: kernel_matrix(X_new, Z, gamma, kernel) @ proj @ w + b


# ---------------------------------------------------------------------------
# per-feature (ARD) Gaussian kernel
# ---------------------------------------------------------------------------


def ard_kernel_matrix(X, Z, gamma):
    """K_ij = exp(−Σ_k γ_k (x_ik − z_jk)²) by explicit pairwise differences."""
    X = np.asarray(X, dtype=float)
    Z = np.asarray(Z, dtype=float)
    diff = X[:, None, :] - Z[None, :, :]
    return np.exp(-np.sum(np.asarray(gamma, dtype=float) * diff ** 2, axis=2))


def ard_nystroem_matrix(X, landmarks, gamma, rank, eigen_floor):
    """K̃ = C W_k⁺ Cᵀ of the ARD kernel, the k largest eigenvalues of W above
    eigen_floor·σ_max kept (as nystroem_matrix)."""
    C = ard_kernel_matrix(X, X[landmarks], gamma)
    W = ard_kernel_matrix(X[landmarks], X[landmarks], gamma)
    sig, U = np.linalg.eigh(W)
    order = np.argsort(sig)[::-1]
    sig, U = sig[order], U[:, order]
    keep = np.flatnonzero(sig > eigen_floor * sig[0])[:rank]
    return C @ U[:, keep] @ np.diag(1.0 / sig[keep]) @ U[:, keep].T @ C.T


def lssvm_heldout_mse(A, Y, alpha, fold_of=None):
    """Mean squared held-out residual of the LSSVM with bias over the columns of Y,
    by refitting: leave-one-out (fold_of None) or the given folds."""
    Y = np.asarray(Y, dtype=float).reshape(A.shape[0], -1)
    n = A.shape[0]
    folds = np.arange(n) if fold_of is None else np.asarray(fold_of)
    E = np.empty_like(Y)
    for f in np.unique(folds):
        test, keep = folds == f, folds != f
        for c in range(Y.shape[1]):
            a, b = lssvm_solve(A[np.ix_(keep, keep)], Y[keep, c], alpha)
            E[test, c] = Y[test, c] - (A[np.ix_(test, keep)] @ a + b)
    return float(np.mean(E ** 2))


def gp_evidence(A, Y, alpha):
    """Negative log evidence per point, averaged over the columns of Y, of the model
    y_c − ȳ_c ~ N(0, σ²(A + αI)) with σ² at its maximiser σ̂² = q_c/n: the Gaussian
    log density written out (slogdet and a dense solve)."""
    Y = np.asarray(Y, dtype=float).reshape(A.shape[0], -1)
    n = A.shape[0]
    Ka = A + alpha * np.eye(n)
    sign, logdet = np.linalg.slogdet(Ka)
    assert sign > 0
    out = []
    for c in range(Y.shape[1]):
        y = Y[:, c] - Y[:, c].mean()
        q = float(y @ np.linalg.solve(Ka, y))
        s2 = q / n
        out.append(0.5 * (n * np.log(2 * np.pi * s2) + logdet + q / s2) / n)
    return float(np.mean(out))


def mp_nystrom_fit(X, Y, Z, gamma, alpha, bias, jitter=0.0, spread_draws=0, seed=0,
                   dps=50):
    """Fitted values at X of :func:`nystrom_ridge` (Gaussian kernel) in ``dps``-digit
    arithmetic, and how far they move when the kernel values are rounded to float64.

    The model is f = Cc + b with C = K(X, Z), W = K(Z, Z) + jitter·I, minimising
    ‖Cc + b1 − Y‖² + α·cᵀWc (the features Φ = CT⁻¹ with W = TᵀT and w = Tc give the same
    f), solved by the centred normal equations (C_cᵀC_c + αW)c = C_cᵀy_c, b = ȳ − μᵀc,
    whose squared condition number costs nothing at ``dps`` digits.

    ``spread`` is the largest change of f over ``spread_draws`` refits whose kernel
    entries carry random relative errors of a float64 evaluation, |δK_ij|/K_ij ≤
    2⁻⁵²·(1 + γ(‖x_i‖² + ‖z_j‖²)) (the rounding of the squared distance, amplified by
    the exponential). It is the accuracy any float64 solver can promise on this draw:
    tiny for well-conditioned centres, large when W is nearly singular.
    Returns (fitted of shape (n, t), spread).
    """
    import mpmath

    X, Y, Z = _float_rows(X, Y, Z)
    n, m, t = len(X), len(Z), Y.shape[1]
    rng = np.random.default_rng(seed)
    with mpmath.workdps(dps):
        C0, W0 = _mp_blocks(X, Z, gamma, jitter)

        def fit(C, W):
            Cm = mpmath.matrix(C)
            ym = mpmath.matrix(Y.tolist())
            mu = [mpmath.fsum(Cm[i, j] for i in range(n)) / n if bias else 0 for j in range(m)]
            ybar = [mpmath.fsum(ym[i, k] for i in range(n)) / n if bias else 0 for k in range(t)]
            Cc = mpmath.matrix(n, m)
            yc = mpmath.matrix(n, t)
            for i in range(n):
                for j in range(m):
                    Cc[i, j] = Cm[i, j] - mu[j]
                for k in range(t):
                    yc[i, k] = ym[i, k] - ybar[k]
            A = Cc.T * Cc + mpmath.mpf(float(alpha)) * mpmath.matrix(W)
            c = mpmath.inverse(A) * (Cc.T * yc)
            b = [ybar[k] - mpmath.fsum(mu[j] * c[j, k] for j in range(m)) for k in range(t)]
            F = Cm * c
            return np.array([[float(F[i, k] + b[k]) for k in range(t)] for i in range(n)])

        fitted = fit(C0, W0)
        spread = _mp_spread(fit, fitted, C0, W0, X, Z, gamma, spread_draws, rng)
    return fitted, spread


def _float_rows(X, Y, Z):
    """X, Y (as columns) and Z as float64 arrays."""
    X = np.asarray(X, dtype=float)
    return X, np.asarray(Y, dtype=float).reshape(len(X), -1), np.asarray(Z, dtype=float)


def _mp_blocks(X, Z, gamma, jitter):
    """K(X, Z) and K(Z, Z) + jitter·I (Gaussian) as mpmath lists, in the caller's
    precision."""
    import mpmath

    g = mpmath.mpf(float(gamma))
    Xm, Zm = _mp_rows(X), _mp_rows(Z)
    C0, W0 = _mp_gaussian(Xm, Zm, g), _mp_gaussian(Zm, Zm, g)
    for j in range(len(Zm)):
        W0[j][j] += mpmath.mpf(float(jitter))
    return C0, W0


def _mp_spread(evaluate, value, C0, W0, X, Z, gamma, draws, rng):
    """The largest change of ``evaluate(C, W)`` from ``value`` over ``draws`` roundings
    of the kernel blocks (:func:`_mp_rounded`)."""
    spread = 0.0
    for _ in range(draws):
        C, W = _mp_rounded(C0, W0, X, Z, gamma, rng)
        spread = max(spread, float(np.max(np.abs(evaluate(C, W) - value))))
    return spread


def _mp_rounded(C0, W0, X, Z, gamma, rng):
    """K(X, Z) and K(Z, Z) (mpmath lists C0, W0) with the random relative errors of a
    float64 evaluation, |δK_ij|/K_ij ≤ 2⁻⁵²·(1 + γ(‖x_i‖² + ‖z_j‖²)), W kept symmetric."""
    import mpmath

    eps = np.finfo(float).eps
    n, m = len(X), len(Z)
    sq_x, sq_z = np.sum(X ** 2, axis=1), np.sum(Z ** 2, axis=1)
    rel_c = eps * (1 + gamma * (sq_x[:, None] + sq_z[None, :])) * rng.uniform(-1, 1, (n, m))
    rel_w = eps * (1 + gamma * (sq_z[:, None] + sq_z[None, :])) * rng.uniform(-1, 1, (m, m))
    rel_w = np.triu(rel_w) + np.triu(rel_w, 1).T
    C = [[C0[i][j] * (1 + mpmath.mpf(float(rel_c[i, j]))) for j in range(m)] for i in range(n)]
    W = [[W0[i][j] * (1 + mpmath.mpf(float(rel_w[i, j]))) for j in range(m)] for i in range(m)]
    return C, W


def mp_nystrom_loo(X, Y, Z, gamma, alpha, bias, jitter=0.0, spread_draws=0, seed=0, dps=50):
    """Mean squared leave-one-out residual of :func:`nystrom_ridge` (Gaussian kernel,
    ``bias`` True, False or "mean" as in :func:`nystrom_ridge_loo`) per output,
    refitting without each row in ``dps``-digit arithmetic, and how far it moves when
    the kernel values are rounded to float64.

    The model is :func:`mp_nystrom_fit`'s, f = k(x, Z)c + b: its centred normal
    equations (C_cᵀC_c + αW)c = C_cᵀy_c, W = K(Z, Z) + jitter·I, are solved on the
    other rows and evaluated at the row left out; with ``bias="mean"`` only y is centred
    (by the mean of the other rows, added back), C is not. ``spread`` is the largest change of
    the result over ``spread_draws`` evaluations whose kernel entries carry the random
    relative errors of :func:`mp_nystrom_fit`. The arbiter where two float64
    computations on a nearly singular K(Z, Z) disagree in their last digits.
    Returns (mse of shape (t,), spread)."""
    import mpmath

    X, Y, Z = _float_rows(X, Y, Z)
    n, m, t = len(X), len(Z), Y.shape[1]
    rng = np.random.default_rng(seed)
    with mpmath.workdps(dps):
        C0, W0 = _mp_blocks(X, Z, gamma, jitter)
        Ym = _mp_rows(Y)

        def loo(C, W):
            W = mpmath.matrix(W)
            E = np.empty((n, t))
            for i in range(n):
                keep = [r for r in range(n) if r != i]
                mu = [mpmath.fsum(C[r][j] for r in keep) / (n - 1) if bias is True else 0
                      for j in range(m)]
                ybar = [mpmath.fsum(Ym[r][k] for r in keep) / (n - 1) if bias else 0
                        for k in range(t)]
                Cc = mpmath.matrix([[C[r][j] - mu[j] for j in range(m)] for r in keep])
                yc = mpmath.matrix([[Ym[r][k] - ybar[k] for k in range(t)] for r in keep])
                c = mpmath.inverse(Cc.T * Cc + mpmath.mpf(float(alpha)) * W) * (Cc.T * yc)
                for k in range(t):
                    f = ybar[k] + mpmath.fsum((C[i][j] - mu[j]) * c[j, k] for j in range(m))
                    E[i, k] = float(Ym[i][k] - f)
            return np.mean(E ** 2, axis=0)

        mse = loo(C0, W0)
        spread = _mp_spread(loo, mse, C0, W0, X, Z, gamma, spread_draws, rng)
    return mse, spread


def nystrom_ridge_loo(X, Y, Z, gamma, alpha, bias, jitter=0.0, kernel="gaussian",
                      rows=None):
    """Mean squared leave-one-out residual of :func:`nystrom_ridge` per output, by
    refitting without each row in turn (the centres Z and the jitter fixed); with
    ``rows``, the squared residuals of those rows only, shape (len(rows), t) squeezed.
    ``bias="mean"``: no bias, the targets centred by their mean, which is taken again
    without each row (f = ȳ₋ᵢ + ridge of y − ȳ₋ᵢ)."""
    Y = np.asarray(Y, dtype=float).reshape(len(X), -1)
    which = np.arange(len(X)) if rows is None else np.asarray(rows)
    E = np.empty((which.size, Y.shape[1]))
    for k, i in enumerate(which):
        keep = np.arange(len(X)) != i
        if isinstance(bias, str) and bias == "mean":
            ybar = Y[keep].mean(axis=0)
            f = nystrom_ridge(X[keep], Y[keep] - ybar, Z, gamma, alpha, False, jitter, kernel)
            E[k] = Y[i] - ybar - f(X[i:i + 1])[0]
            continue
        f = nystrom_ridge(X[keep], Y[keep], Z, gamma, alpha, bias, jitter, kernel)
        E[k] = Y[i] - f(X[i:i + 1])[0]
    if rows is not None:
        return np.squeeze(E ** 2)
    return np.mean(E ** 2, axis=0)


def mp_pcg_residual(X, Y, Z, gamma, alpha, bias, jitter, beta, dps=50):
    """‖ΦᵀCy − (ΦᵀCΦ + αI)w‖ / ‖ΦᵀCy‖ per output of the Nyström machine (Gaussian
    kernel, Φ = K(X, Z)T⁻¹ with TᵀT = K(Z, Z) + jitter·I, w = Tβ, C the centring matrix
    with a bias, else I) in ``dps``-digit arithmetic from the float64 inputs. Written
    through β, res = T⁻ᵀ[K_zx C(y − K_xz β) − α(K_zz + jitter·I)β], so that only the
    triangular solve with T meets the conditioning of K(Z, Z)."""
    import mpmath

    with mpmath.workdps(dps):
        C0, W0 = _mp_blocks(X, Z, gamma, jitter)
        n = len(C0)
        Kxz, W = mpmath.matrix(C0), mpmath.matrix(W0)
        T = mpmath.cholesky(W).T                       # upper: TᵀT = W
        a = mpmath.mpf(float(alpha))
        out = []
        for c in range(np.shape(Y)[1]):
            y = mpmath.matrix([mpmath.mpf(float(v)) for v in np.asarray(Y)[:, c]])
            b = mpmath.matrix([mpmath.mpf(float(v)) for v in np.asarray(beta)[:, c]])
            r = y - Kxz * b
            if bias:
                r = r - mpmath.fsum(r) / n * mpmath.matrix([1] * n)
                yc = y - mpmath.fsum(y) / n * mpmath.matrix([1] * n)
            else:
                yc = y
            inner = Kxz.T * r - a * (W * b)
            rhs = Kxz.T * yc
            res = mpmath.lu_solve(T.T, inner)
            top = mpmath.lu_solve(T.T, rhs)
            out.append(float(mpmath.norm(res) / mpmath.norm(top)))
    return np.array(out)
