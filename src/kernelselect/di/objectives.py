"""DI objectives: the target matrix, the discriminant information of fixed features
(DI, paper eq. 6) and of Nyström landmarks (KDI, eq. 9) and the mini-batch objectives
RFDI (eq. 7) and NysDI (eq. 10) with their gradients. DI of a kernel operator's
stand-in (the ``"di"`` / ``"kdi"`` selection criteria) is
:func:`kernelselect.criteria.discriminant.operator_di`, re-exported here."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.linalg

from ..primitives._columns import rff_features
from ..primitives._kernel_ops import kernel_block
from ..utils._kernel_family import Kernel
from ..utils._labels import encode_labels, unit_indicators
from ..utils._validation import check_matrix, check_positive, check_vector
from ..criteria.discriminant import operator_di
from ..operators._lowrank import svd_coordinates


# --------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------
def _class_codes(y: npt.ArrayLike, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """Integer class codes 0..L-1 and the sorted labels; ≥ 2 classes required."""
    enc = encode_labels(y, name, squeeze="any",
                        who=" (DI measures class separation; use task='regression' for real "
                            "targets)")
    return enc.codes, enc.classes


def _indicator(codes: np.ndarray, n_classes: int) -> np.ndarray:
    """One-hot matrix (n, L) with unit-norm columns (empty classes give zero columns)."""
    return unit_indicators(codes, n_classes)


def encode_targets(y: npt.ArrayLike, task: str = "classification") -> np.ndarray:
    """The target matrix Y of the DI criteria.

    Parameters
    ----------
    y : array-like of shape (n,) or (n, L)
        Class labels (any sortable values) for ``task="classification"``; real
        targets for ``task="regression"`` (one column per output).
    task : {"classification", "regression"}

    Returns
    -------
    Y : ndarray of shape (n, L), float64
        Classification: one-hot with columns scaled to unit norm, ``Y_ic = 1/√n_c``
        (L = number of classes, in sorted label order) — the paper's choice, under
        which FᵀCYYᵀCF is the between-class scatter S_B. Regression: the targets.
    """
    if task == "classification":
        codes, classes = _class_codes(y)
        return _indicator(codes, classes.shape[0])
    if task == "regression":
        return _check_targets(y, None)
    raise ValueError(f"task={task!r} is not known; use 'classification' or 'regression'.")


def _check_targets(Y: npt.ArrayLike, n: int | None, name: str = "Y") -> np.ndarray:
    arr = np.asarray(Y)
    if arr.ndim == 1:
        arr = check_vector(arr, name, n=n).reshape(-1, 1)
    else:
        arr = check_matrix(arr, name, dtype=np.float64)
        if n is not None and arr.shape[0] != n:
            raise ValueError(
                f"{name} has {arr.shape[0]} rows but the features have {n}; they must match."
            )
    if arr.shape[0] < 2:
        raise ValueError(f"{name} needs at least 2 samples, got {arr.shape[0]}.")
    return arr


def _check_rho(rho: Any) -> float:
    return check_positive(rho, "rho")


def _check_kernel_parameters(gamma: Any, rho: Any) -> tuple[float, float]:
    """(γ, ρ) checked: γ of the Gaussian kernel exp(−γ‖x − x′‖²) (its check,
    :meth:`Kernel.check_gamma`) and the ridge ρ, each a finite float > 0. The one γ
    check of the DI doors, :func:`nysdi` and the training of :func:`train_rfdi` /
    :func:`train_nysdi`."""
    return Kernel.GAUSSIAN.check_gamma(gamma), _check_rho(rho)


def _centre(A: np.ndarray) -> np.ndarray:
    """A − 1 mean(A): the product C A with C = I − 11ᵀ/n, without forming C."""
    return A - A.mean(axis=0)


def _gaussian_block(X: np.ndarray, Z: np.ndarray, gamma: float,
                    workers: int | None = None) -> np.ndarray:
    """K(X, Z) for the Gaussian kernel, shape (n_x, n_z) (compiled ``kernel_block``)."""
    return kernel_block(X, Z, gamma, kernel="gaussian", workers=workers)


def _rff_map(X: np.ndarray, W: np.ndarray, b: np.ndarray,
             workers: int | None = None) -> np.ndarray:
    """√(2/J) cos(XW + b), shape (n, J) (compiled, fused GEMM + cos)."""
    return rff_features(X, W, b, workers=workers)


# --------------------------------------------------------------------------------------
# criteria on fixed features
# --------------------------------------------------------------------------------------
def _di_core(Fc: np.ndarray, Yc: np.ndarray, rho: float, B: np.ndarray | None = None
             ) -> tuple[float, np.ndarray]:
    """(value, A): A = S⁻¹M with S = FcᵀFc + ρ(B or I), M = FcᵀYc, and the value
    tr(MᵀA), solved as the regularised least-squares problem they are the normal
    equations of.

    A minimises ‖Yc − FcA‖² + ρ tr(AᵀBA). Without B, with the thin SVD
    Fc = Q diag(s) Pᵀ and c = QᵀYc: A = P diag(s/(s² + ρ)) c and
    value = Σ_i s_i²/(s_i² + ρ) ‖c_i‖². With B = LLᵀ (eigenvalues clipped at 0), it is
    the least-squares problem of the stacked matrix M = [Fc; √ρ Lᵀ] against [Yc; 0]:
    with M = Q diag(σ) Wᵀ and c = Qᵀ[Yc; 0], A = W diag(1/σ) c (minimum norm: the
    directions with σ below (n + J)·ε·σ_max, where B and Fc vanish together, e.g.
    duplicated landmarks, are left out) and value = Σ_i ‖c_i‖². The eigenvalues of B
    are known only to J·ε·λ_max; those below are raised to it (set to 0 they would
    take the ridge away from directions where Fc is rounding noise too, which then
    count in full). Neither form builds S, whose condition number is that of Fc
    squared: the SVD comes from a backward-stable QR and a J × J SVD
    (:func:`~kernelselect.operators._lowrank.svd_coordinates`), so the value stays
    accurate at small ρ and for wide kernels.
    """
    if B is None:
        s, P, c = svd_coordinates(Fc, Yc)
        with np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
            fit = np.where(s > 0, s * s / (s * s + rho), 0.0)
            filt = np.where(s > 0, s / (s * s + rho), 0.0)
        return float(np.sum(fit[:, None] * c * c)), P @ (filt[:, None] * c)
    J = B.shape[0]
    lam, U = scipy.linalg.eigh(0.5 * (B + B.T), check_finite=False)
    floor = J * np.finfo(float).eps * max(float(lam[-1]) if lam.size else 0.0, 0.0)
    root = U * np.sqrt(np.maximum(lam, floor))                        # B ≈ root rootᵀ
    M = np.vstack([Fc, np.sqrt(rho) * root.T])
    s, P, c = svd_coordinates(M, np.vstack([Yc, np.zeros((J, Yc.shape[1]))]))
    keep = s > max(M.shape) * np.finfo(float).eps * (s[0] if s.size else 0.0)
    c = c[keep]
    return float(np.sum(c * c)), P[:, keep] @ (c / s[keep, None])


def _di_and_feature_gradient(Fc: np.ndarray, Yc: np.ndarray, rho: float,
                              B: np.ndarray | None = None
                              ) -> tuple[float, np.ndarray, np.ndarray]:
    """(value, A, Γ_F) of the DI objective tr(S⁻¹MMᵀ) at centred features Fc, with
    (value, A) from :func:`_di_core` and its gradient with respect to the
    features (as they enter M = FᵀCY and S = FᵀCF + ρ(B or I); the ρB part is the
    caller's)::

        Γ_F = 2 (Y_c − F_c A) Aᵀ          (n × J),

    derived in the Notes of :func:`rfdi` (Γ_Z there, Γ_G in :func:`nysdi`).
    """
    value, A = _di_core(Fc, Yc, rho, B=B)
    grad = (Yc - Fc @ A) @ A.T
    grad *= 2.0
    return value, A, grad


def _check_features_matrix(A: npt.ArrayLike, name: str, d: int, axis: int) -> np.ndarray:
    """A parameter matrix whose ``axis`` runs over the d features of X (W: axis 0,
    landmarks: axis 1), as float64."""
    A = check_matrix(A, name, dtype=np.float64)
    if A.shape[axis] != d:
        layout = f"(n_features, J) = ({d}, J)" if axis == 0 else f"(J, n_features) = (J, {d})"
        raise ValueError(f"{name} must have shape {layout} to match X, got {A.shape}.")
    return A


def di_criterion(F: npt.ArrayLike, Y: npt.ArrayLike, rho: float = 1e-4) -> float:
    """Discriminant information of a fixed feature map (Al et al., equation 6).

    DI = tr((FᵀCF + ρI)⁻¹ FᵀCYYᵀCF), C = I − 11ᵀ/n, maximised.

    Parameters
    ----------
    F : array-like of shape (n, J)
        Features of the n samples (the transpose of the paper's J×N map), e.g.
        random Fourier features √(2/J) cos(XW + b) or Nyström features.
    Y : array-like of shape (n,) or (n, L)
        Target matrix (see :func:`encode_targets`).
    rho : float > 0
        Ridge ρ.

    Returns
    -------
    float
        DI ≥ 0. It equals ‖CY‖_F² minus the minimal regularised least-squares
        error of CY on CF (paper eq. 5), so DI < ‖CY‖_F², which is L − 1 for
        unit-norm indicator columns.

    Notes
    -----
    O(nJ² + nJL + J³) time, O(J² + nJ) memory.
    """
    F = check_matrix(F, "F", dtype=np.float64)
    Y = _check_targets(Y, F.shape[0])
    rho = _check_rho(rho)
    value, _ = _di_core(_centre(F), _centre(Y), rho)
    return value


def kdi_criterion(G: npt.ArrayLike, B: npt.ArrayLike, Y: npt.ArrayLike,
                  rho: float = 1e-4) -> float:
    """Kernel discriminant information of Nyström landmarks (Al et al., equation 9).

    KDI = tr((GᵀCG + ρB)⁻¹ GᵀCYYᵀCG), maximised.

    Parameters
    ----------
    G : array-like of shape (n, J)
        K(X, X_r): kernel between the n samples and the J landmarks.
    B : array-like of shape (J, J)
        K(X_r, X_r): kernel among the landmarks (symmetric positive semi-definite).
    Y : array-like of shape (n,) or (n, L)
        Target matrix (see :func:`encode_targets`).
    rho : float > 0

    Returns
    -------
    float

    Notes
    -----
    KDI is the DI of the Nyström features G B^{-1/2} (substitute F = G B^{-1/2}
    and factor B^{1/2} out of the inverse), computed without B^{-1/2}.
    With landmarks = X (G = B = K, K positive definite), KDI equals the optimum of
    kernel DCA (paper eq. 3, K_B = K̄YYᵀK̄, K̄ = CKC): the sum of its generalised
    eigenvalues, tr((K̄² + ρK̄)⁺ K̄YYᵀK̄) = tr(ȲᵀK̄(K̄ + ρI)⁻¹Ȳ), Ȳ = CY.
    """
    G = check_matrix(G, "G", dtype=np.float64)
    B = check_matrix(B, "B", dtype=np.float64)
    J = G.shape[1]
    if B.shape != (J, J):
        raise ValueError(f"B must have shape ({J}, {J}) to match G's {J} columns, got {B.shape}.")
    Y = _check_targets(Y, G.shape[0])
    rho = _check_rho(rho)
    value, _ = _di_core(_centre(G), _centre(Y), rho, B=0.5 * (B + B.T))
    return value


# --------------------------------------------------------------------------------------
# objectives with gradients
# --------------------------------------------------------------------------------------
def _check_params_rff(X: npt.ArrayLike, Y: npt.ArrayLike, W: npt.ArrayLike, b: npt.ArrayLike,
                      rho: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    X = check_matrix(X, "X", dtype=np.float64, min_rows=2)
    W = _check_features_matrix(W, "W", X.shape[1], axis=0)
    J = W.shape[1]
    b = check_vector(b, "b")
    if b.shape[0] != J:
        raise ValueError(f"b must have J = {J} entries (one per column of W), got {b.shape[0]}.")
    Y = _check_targets(Y, X.shape[0])
    return X, _centre(Y), W, b, _check_rho(rho)


def rfdi(X: npt.ArrayLike, Y: npt.ArrayLike, W: npt.ArrayLike, b: npt.ArrayLike,
         rho: float = 1e-4, *, workers: int | None = None
         ) -> tuple[float, np.ndarray, np.ndarray]:
    """RFDI objective of random Fourier features and its gradient (Al et al., equation 7).

    With Z = s cos(XW + 1bᵀ), s = √(2/J), S = ZᵀCZ + ρI and M = ZᵀCY::

        RFDI(W, b) = tr(S⁻¹ M Mᵀ).

    Parameters
    ----------
    X : array-like of shape (n, d)
        A mini-batch of samples (n = N_b ≥ 2).
    Y : array-like of shape (n,) or (n, L)
        Its target matrix (see :func:`encode_targets`).
    W : array-like of shape (d, J)
        Frequencies (one column per feature).
    b : array-like of shape (J,)
        Phases.
    rho : float > 0, default 1e-4
    workers : int or None
        Threads of the compiled feature kernel (None: OpenMP default, -1: all).

    Returns
    -------
    value : float
    grad_W : ndarray of shape (d, J)
    grad_b : ndarray of shape (J,)

    Notes
    -----
    Derivation (matrix calculus; Z_c = CZ, Y_c = CY, A = S⁻¹M, J×L).
    d tr(S⁻¹MMᵀ) = 2 tr(Aᵀ dM) − tr(A Aᵀ dS), with dM = dZᵀ Y_c and
    dS = dZᵀ Z_c + Z_cᵀ dZ (C is symmetric and idempotent), so::

        ∂RFDI/∂Z = 2 (Y_c − Z_c A) Aᵀ =: Γ_Z          (n × J)

    — the ridge residual Y_c − Z_c A of paper eq. (5), times Aᵀ. Through
    Z = s cos(U), U = XW + 1bᵀ, with Γ_U = −s sin(U) ∘ Γ_Z::

        ∂RFDI/∂W = Xᵀ Γ_U,     ∂RFDI/∂b = Γ_Uᵀ 1.

    Cost: GEMMs XW and XᵀΓ_U (O(ndJ)), Z_cᵀZ_c (O(nJ²)), the L-column products
    (O(nJL)), a J×J Cholesky (O(J³)); O(nJ) memory, no n×n array. Z and
    s·sin(U) = s·cos(XW + 1(b − π/2)ᵀ) come from the compiled fused GEMM + cos
    kernel ``lowlevel.rff_features``.
    """
    X, Yc, W, b, rho = _check_params_rff(X, Y, W, b, rho)
    # fused GEMM + vectorised cos; with s = √(2/J), s·sin(U) = s·cos(XW + b − π/2)
    Zc = _rff_map(X, W, b, workers)
    SinU = _rff_map(X, W, b - 0.5 * np.pi, workers)
    Zc -= Zc.mean(axis=0)
    value, _, GZ = _di_and_feature_gradient(Zc, Yc, rho)
    np.negative(GZ, out=GZ)
    SinU *= GZ                       # Γ_U = −s sin(U) ∘ Γ_Z
    grad_W = X.T @ SinU
    grad_b = SinU.sum(axis=0)
    return value, grad_W, grad_b


def _check_params_nys(X: npt.ArrayLike, Y: npt.ArrayLike, landmarks: npt.ArrayLike, gamma: Any,
                      rho: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    X = check_matrix(X, "X", dtype=np.float64, min_rows=2)
    R = _check_features_matrix(landmarks, "landmarks", X.shape[1], axis=1)
    Y = _check_targets(Y, X.shape[0])
    gamma, rho = _check_kernel_parameters(gamma, rho)
    return X, _centre(Y), R, gamma, rho


def nysdi(X: npt.ArrayLike, Y: npt.ArrayLike, landmarks: npt.ArrayLike, gamma: float,
          rho: float = 1e-4, *, workers: int | None = None) -> tuple[float, np.ndarray]:
    """NysDI objective of Nyström landmarks and its gradient (Al et al., equation 10).

    Gaussian kernel k(x, r) = exp(−γ‖x − r‖²). With G = K(X, X_r) (n×J),
    B = K(X_r, X_r) (J×J), S = GᵀCG + ρB, M = GᵀCY::

        NysDI(X_r) = tr(S⁻¹ M Mᵀ).

    Parameters
    ----------
    X, Y, rho, workers
        As for :func:`rfdi`: a mini-batch (n ≥ 2), its target matrix, the ridge ρ and
        the threads of the compiled kernel block.
    landmarks : array-like of shape (J, d)
        The representative points X_r (rows r_j).
    gamma : float > 0

    Returns
    -------
    value : float
    grad_landmarks : ndarray of shape (J, d)

    Notes
    -----
    Derivation (G_c = CG, Y_c = CY, A = S⁻¹M). As for :func:`rfdi`,
    d tr(S⁻¹MMᵀ) = 2 tr(Aᵀ dM) − tr(AAᵀ dS) with dM = dGᵀY_c and
    dS = dGᵀG_c + G_cᵀdG + ρ dB, hence::

        Γ_G = ∂/∂G = 2 (Y_c − G_c A) Aᵀ,    Γ_B = ∂/∂B = −ρ A Aᵀ (symmetric).

    For the Gaussian kernel ∂k(x, r)/∂r = 2γ k(x, r)(x − r). Row r_j enters
    column j of G and row and column j of B, so with P = Γ_G ∘ G and
    Q = Γ_B ∘ B::

        ∂/∂r_j = 2γ Σ_i P_ij (x_i − r_j) + 4γ Σ_l Q_jl (r_l − r_j)
        ∂/∂X_r = 2γ (PᵀX − diag(Pᵀ1) X_r) + 4γ (Q X_r − diag(Q1) X_r).

    Cost O(nJd + nJ² + J³), O(nJ) memory, no n×n array.
    """
    X, Yc, R, gamma, rho = _check_params_nys(X, Y, landmarks, gamma, rho)
    G = _gaussian_block(X, R, gamma, workers)
    B = _gaussian_block(R, R, gamma, workers)
    B = 0.5 * (B + B.T)
    Gc = G - G.mean(axis=0)
    value, A, P = _di_and_feature_gradient(Gc, Yc, rho, B=B)
    P *= G                            # Γ_G ∘ G
    Q = A @ A.T
    Q *= -rho
    Q *= B                            # Γ_B ∘ B
    grad = 2.0 * gamma * (P.T @ X - P.sum(axis=0)[:, None] * R)
    grad += 4.0 * gamma * (Q @ R - Q.sum(axis=1)[:, None] * R)
    return value, grad
