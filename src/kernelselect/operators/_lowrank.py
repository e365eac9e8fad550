"""Eigenpairs of VVᵀ for a tall factor V (n × k, n ≫ k)."""

import contextlib

import numpy as np
import scipy.linalg

__all__ = ["factor_spectrum", "small_blas"]

_CONTROLLER = None
SMALL_FLOPS = 2e7


def small_blas(flops):
    """Run BLAS/LAPACK on one thread for problems below ~2·10⁷ flops.

    Threaded BLAS gains nothing there, and on a busy machine its spinning threads
    made an 80×200 SVD take seconds instead of milliseconds (measured).
    """
    global _CONTROLLER
    if flops >= SMALL_FLOPS:
        return contextlib.nullcontext()
    try:
        if _CONTROLLER is None:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER = ThreadpoolController()
        return _CONTROLLER.limit(limits=1, user_api="blas")
    except Exception:  # pragma: no cover - threadpoolctl missing or unusable
        return contextlib.nullcontext()


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
    n, k = V.shape
    if k == 0:
        return np.zeros(0), V
    with small_blas(float(n) * k * min(n, k)):
        return _factor_spectrum(V)


def _factor_spectrum(V):
    n, k = V.shape
    if n <= k:
        # wide factor: VVᵀ is the small matrix; its eigh is exact enough (no squaring)
        lam, Q = scipy.linalg.eigh(V @ V.T, driver="evd")
        order = np.argsort(lam)[::-1]
        return np.clip(lam[order], 0.0, None), Q[:, order]
    qr = _cholesky_qr2(V)
    if qr is None:
        Q, s, _ = scipy.linalg.svd(V, full_matrices=False, lapack_driver="gesdd")
        return s ** 2, Q
    Q, R = qr
    U, s, _ = scipy.linalg.svd(R, lapack_driver="gesdd")
    return s ** 2, Q @ U
