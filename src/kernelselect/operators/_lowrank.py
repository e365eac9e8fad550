"""Eigenpairs of VVᵀ for a tall factor V (n × k, n ≫ k)."""

import numpy as np
import scipy.linalg

__all__ = ["factor_spectrum"]


def _cholesky_qr2(V):
    """V = QR by two rounds of Cholesky QR (Yamamoto et al. 2015); None when V is too
    ill-conditioned for it (Cholesky breaks down or QᵀQ is visibly not I)."""
    R = None
    Q = V
    for _ in range(2):
        G = Q.T @ Q
        try:
            Ri = scipy.linalg.cholesky(G, lower=False, check_finite=False)
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(Ri)) or np.min(np.abs(np.diag(Ri))) == 0.0:
            return None
        Q = scipy.linalg.solve_triangular(Ri, Q.T, trans="T", lower=False,
                                          check_finite=False).T
        R = Ri if R is None else Ri @ R
    k = V.shape[1]
    if np.max(np.abs(Q.T @ Q - np.eye(k))) > 1e-12 * max(k, 1):
        return None
    return Q, R


def factor_spectrum(V):
    """Eigenvalues s² (descending) and orthonormal eigenvectors (n, k) of VVᵀ.

    Thin SVD of V by Cholesky QR2 followed by the SVD of the small triangular factor
    (BLAS-3 only, ≈ 6nk² flops), falling back to LAPACK gesdd when V is too
    ill-conditioned for Cholesky QR.
    """
    V = np.asarray(V, dtype=np.float64)
    if V.shape[1] == 0:
        return np.zeros(0), V
    qr = _cholesky_qr2(V) if V.shape[0] >= V.shape[1] else None
    if qr is None:
        Q, s, _ = scipy.linalg.svd(V, full_matrices=False, lapack_driver="gesdd")
        return s ** 2, Q
    Q, R = qr
    U, s, _ = scipy.linalg.svd(R, lapack_driver="gesdd")
    return s ** 2, Q @ U
