"""The Nyström leave-one-out error under the ARD kernel and its gradient: the
factor at one γ vector in memory (:func:`nystrom_factor`, the α path of
:func:`loo_path_nystrom`), and three passes over row blocks: no n × m array is held, and the same pass functions run on X
in memory (:class:`~kernelselect.operators._row_passes.ArrayRows`, blocks on Python
threads) or per chunk of a Dask array (:class:`kernelselect._dask.DaskRows`).

The residuals and their adjoint are those of :mod:`._base`. Everything
per row follows from the row's landmark features C_b = K(X̃_b, Z̃), Ψ_b = C_b·TP and
a few k × k statistics of the passes before:

1. VᵀV and Vᵀ[Y 1] for V_b = C_b T (T = U_kΣ_k^{−1/2} from W alone): with
   VᵀV = PSPᵀ they fix αK̃_α⁻¹ = I − Ψ diag(1/(s + α)) Ψᵀ, ρ̂, ŝ and the bias b;
2. the residuals e and their weights ŵ, û per row, and Ψᵀ(ŵ∘M̂Ψ), ρ̂ᵀ(ŵ∘M̂Ψ), ΨᵀÛ,
   ρ̂ᵀÛ, âᵀΨ, Σe² and Σŵ(M̂²)_ii;
3. ĜΨ per row, hence H_b = (ĜΨ_b(TP)ᵀ) ∘ C_b and its distance contractions with
   X̃_b and Z̃, ΨᵀĜΨ, (CU_dropped)ᵀĜΨ and Σ â∘M̂û.

Each pass recomputes C_b (O(b·m·d) and b·m exponentials), so an evaluation costs
about 15·n·m² flops against 11·n·m² with C held in memory; memory is O(b·m + m²).

The stand-in with fixed landmarks Z
-----------------------------------
K̃ = C F Cᵀ, C = K(X, Z) (n × m), W = K(Z, Z) = UΣUᵀ, F = W_k⁺ = Σ_{i kept} u_i u_iᵀ/σ_i
with the kept eigenvalues of :func:`kernelselect.operators.nystrom.nystroem_transform`
(the k largest above ``eigen_floor``·σ_max). With V = C U_k Σ_k^{−1/2}, VᵀV = PSPᵀ and
Ψ = VP (K̃ = ΨΨᵀ, ΨᵀΨ = S): αK̃_α⁻¹ = I − Ψ diag(1/(s + α)) Ψᵀ, so every quantity of
the residuals costs O(nk) after the O(nm² ) factor (the Woodbury form of the library's
low-rank operator). The derivative of K̃ follows from dC and dW:

    tr(Ĝ dK̃) = 2 Σ_ij (Ĝ C F)_ij dC_ij + tr(B dW),   B = U (Φ ∘ (Uᵀ Cᵀ Ĝ C U)) Uᵀ,

where Φ holds the divided differences of f(σ) = 1/σ on the kept eigenvalues and 0 on
the dropped ones (Daleckii–Krein): Φ_ij = −1/(σ_iσ_j) for i, j kept, 1/(σ_i(σ_i − σ_j))
for i kept and j dropped, 0 for both dropped. This is the exact derivative of the
stand-in the library builds (the same floor, the same kept set) wherever the kept set
does not change. Ĝ C F = (ĜΨ)(T P)ᵀ with T = U_kΣ_k^{−1/2}, and ĜΨ takes O(nk²), so a
gradient costs O(nm² + nmd): both contractions are GEMMs (:func:`distance_contraction`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..operators._row_passes import ArrayRows
from ..operators.nystrom import landmark_eigenpairs
from ..primitives._kernel_ops import symmetric_eigh_unchecked
from ..utils._kernel_family import Kernel
from ..utils._threads import blas_for_flops
from ._base import EvaluationError, LooState, distance_contraction, gaussian_block, loo_residuals

__all__ = ["ArdLandmarks", "press_nystrom_rows", "press_nystrom", "NystromFactor",
           "nystrom_factor", "loo_path_nystrom"]


class ArdLandmarks:
    """The per-evaluation plan the row passes read (``width`` = m for the row
    source's block size): the landmarks Z̃ and row transform (x − centre)·√γ, the
    Nyström transform TP, the statistics of the earlier passes, the target layout."""

    def __init__(self, Z: np.ndarray, gamma: np.ndarray, centre: np.ndarray, n: int,
                 n_classes: int | None) -> None:
        self.gamma = gamma
        self.centre = np.asarray(centre, dtype=np.float64)
        self.Zs = Kernel.ARD.points(Z - self.centre, gamma)[0]
        self.width = int(self.Zs.shape[0])
        self.n = int(n)
        self.n_classes = n_classes
        self.stats: dict[str, Any] = {}

    def targets(self, yb: np.ndarray) -> np.ndarray:
        """Y_b (b, t): a target matrix as given, class codes as one-vs-rest ±1 columns
        (``n_classes`` ≥ 3), else one column."""
        yb = np.asarray(yb, dtype=np.float64)
        if yb.ndim == 2:
            return yb
        if self.n_classes is not None and self.n_classes >= 3:
            return np.where(yb[:, None] == np.arange(self.n_classes)[None, :], 1.0, -1.0)
        return yb[:, None]

    def features(self, Xb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(X̃_b, C_b = K(X̃_b, Z̃))."""
        Xs = Kernel.ARD.points(np.asarray(Xb, dtype=np.float64) - self.centre, self.gamma)[0]
        return Xs, gaussian_block(Xs, self.Zs, 1)

    def residual_rows(self, C: np.ndarray, Yb: np.ndarray) -> dict[str, np.ndarray]:
        """Ψ_b, ρ̂_b, â_b, diag M̂ and the residuals of a block (pass 2 and 3)."""
        st = self.stats
        Psi = C @ st["TP"]
        D = st["D"]
        PD = Psi * D[None, :]
        rho = 1.0 - PD @ st["Psi1"]
        M0Y = Yb - PD @ st["PsiY"]
        a = M0Y - rho[:, None] * st["b"][None, :]
        m = 1.0 - np.einsum("ij,ij->i", PD, Psi) - rho * rho / st["s"]
        return {"Psi": Psi, "rho": rho, "a": a, "m": m}


def _landmark_transform(W: np.ndarray, rank: int, eigen_floor: float
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(σ, U, kept, T = U_kΣ_k^{−1/2}) of the landmark Gram matrix W: its eigenpairs
    largest first and those the library's Nyström stand-in keeps
    (:func:`~kernelselect.operators.nystrom.landmark_eigenpairs`), the dropped ones
    for the derivative in W."""
    sig, U, keep = landmark_eigenpairs(W, rank, eigen_floor)
    return sig, U, keep, U[:, keep] / np.sqrt(sig[keep])


def _gram_eigenbasis(Gm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(s, P) with VᵀV = P diag(s) Pᵀ (``Gm`` = VᵀV symmetrised, s clipped at 0), by the
    library's compiled eigensolver."""
    s, P = symmetric_eigh_unchecked(0.5 * (Gm + Gm.T))
    return np.clip(s, 0.0, None), P


def _pass_gram(plan: ArdLandmarks, Xb: np.ndarray, yb: np.ndarray) -> list[np.ndarray]:
    _, C = plan.features(Xb)
    V = C @ plan.stats["T"]          # V_b first: Tᵀ(CᵀC)T would square C's rounding error
    Yb = plan.targets(yb)
    B = np.column_stack([Yb, np.ones(Yb.shape[0])])
    return [V.T @ V, V.T @ B, B.sum(axis=0)]


def _weights(plan: ArdLandmarks, rows: dict[str, np.ndarray], Yb: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(e, ŵ, û, M̂Ψ) of a block; raises EvaluationError on a non-positive M̂_ii."""
    st = plan.stats
    if not np.all(rows["m"] > 0):
        raise EvaluationError("a leave-one-out denominator is not positive")
    nt = plan.n * Yb.shape[1]
    e = rows["a"] / rows["m"][:, None]
    u = 2.0 * e / (rows["m"][:, None] * nt)
    w = 2.0 * np.sum(e * e, axis=1) / (rows["m"] * nt)
    MPsi = rows["Psi"] * st["alphaD"][None, :] - np.outer(rows["rho"], st["rhoPsi"] / st["s"])
    return e, w, u, MPsi


def _block(plan: ArdLandmarks, Xb: np.ndarray, yb: np.ndarray) -> dict[str, np.ndarray]:
    """Everything per row of a block that passes 2 and 3 share: X̃_b, C_b, Y_b, Ψ_b, ρ̂_b,
    â_b, diag M̂, the residuals e and weights ŵ, û, M̂Ψ_b and Y1_b = ŵ∘M̂Ψ_b."""
    Xs, C = plan.features(Xb)
    Yb = plan.targets(yb)
    rows = plan.residual_rows(C, Yb)
    e, w, u, MPsi = _weights(plan, rows, Yb)
    rows.update(Xs=Xs, C=C, Y=Yb, e=e, w=w, u=u, Y1=w[:, None] * MPsi)
    return rows


def _pass_weights(plan: ArdLandmarks, Xb: np.ndarray, yb: np.ndarray) -> list[np.ndarray]:
    st = plan.stats
    rows = _block(plan, Xb, yb)
    Psi, rho, Yb, e, w, u, Y1 = (rows[k] for k in ("Psi", "rho", "Y", "e", "w", "u", "Y1"))
    # (M̂²)_ii from M̂₀² = I − Ψ diag((s + 2α)/(s + α)²) Ψᵀ and the rank-one part
    M0rho = rho - (Psi * st["D"][None, :]) @ st["rhoPsi"]
    diag_M2 = (1.0 - np.einsum("ij,ij->i", Psi * st["sq"][None, :], Psi)
               - 2.0 * rho * M0rho / st["s"] + rho ** 2 * st["rho2"] / st["s"] ** 2)
    if Yb.shape[1] == 1:
        wrong = np.sum(Yb[:, 0] * (Yb[:, 0] - e[:, 0]) <= 0.0)
    else:
        wrong = np.sum(np.argmax(Yb - e, axis=1) != np.argmax(Yb, axis=1))
    return [Psi.T @ Y1, rho @ Y1, Psi.T @ u, rho @ u, rows["a"].T @ Psi,
            np.array([np.sum(e * e), w @ diag_M2, float(wrong)])]


def _pass_gradient(plan: ArdLandmarks, Xb: np.ndarray, yb: np.ndarray) -> list[np.ndarray]:
    st = plan.stats
    rows = _block(plan, Xb, yb)
    Xs, C, Psi, rho, a, u, Y1 = (rows[k] for k in ("Xs", "C", "Psi", "rho", "a", "u", "Y1"))
    D = st["D"]
    MY1 = Y1 - (Psi * D[None, :]) @ st["PsiY1"] - np.outer(rho, st["rhoY1"] / st["s"])
    Pu = u - (Psi * D[None, :]) @ st["PsiU"] - np.outer(rho, st["rhoU"] / st["s"])
    GPsi = MY1 - 0.5 * (a @ st["PuPsi"] + Pu @ st["aPsi"])
    H = GPsi @ st["TP"].T
    H *= C
    rsum = H.sum(axis=1)
    HZ = H @ plan.Zs
    out = [(Xs * Xs).T @ rsum, H.sum(axis=0), np.einsum("ik,ik->k", Xs, HZ),
           Psi.T @ GPsi, np.array([np.sum(a * Pu)])]
    if st["dropped"].size:
        out.append((C @ st["Ud"]).T @ GPsi)
    return out


def press_nystrom_rows(rows: Any, Z: np.ndarray, gamma: np.ndarray, alpha: float,
                       centre: np.ndarray, n_classes: int | None = None,
                       rank: int | None = None, eigen_floor: float = 1e-8,
                       grad: bool = True, out: dict[str, Any] | None = None
                       ) -> tuple[float, np.ndarray | None]:
    """Mean squared LOO residual of the LSSVM on the Nyström stand-in with landmarks Z
    (unscaled points) under the ARD kernel γ, and its gradient in (log γ, log α), from
    passes over ``rows`` (a row source with ``reduce`` and ``n``; its y is the target:
    ±1 or real, class codes with ``n_classes`` ≥ 3, or a target matrix in memory).
    ``centre`` is subtracted from every row first (the kernel is unchanged). ``out``
    receives the held-out error rate of ±1 / one-vs-rest targets (``"error_rate"``).
    """
    n, m = int(rows.n), Z.shape[0]
    rank = m if rank is None else rank
    plan = ArdLandmarks(Z, gamma, centre, n, n_classes)
    W = gaussian_block(plan.Zs, plan.Zs, 1)
    W = 0.5 * (W + W.T)
    sig, U, keep, T = _landmark_transform(W, rank, eigen_floor)
    dropped = np.setdiff1d(np.arange(m), keep)
    plan.stats["T"] = T
    Gm, VtB, sumB = rows.reduce(_pass_gram, plan)
    s, P = _gram_eigenbasis(Gm)
    TP = T @ P
    PsiB = P.T @ VtB                                    # Ψᵀ[Y 1]
    t = PsiB.shape[1] - 1
    D = 1.0 / (s + alpha)
    Psi1, PsiY = PsiB[:, t], PsiB[:, :t]
    s_hat = float(n - Psi1 @ (D * Psi1))
    if not (np.isfinite(s_hat) and s_hat > 0):
        raise EvaluationError("1ᵀ(αK̃_α⁻¹)1 is not positive")
    b = (sumB[:t] - (D * Psi1) @ PsiY) / s_hat
    plan.stats.update(TP=TP, D=D, Psi1=Psi1, PsiY=PsiY, b=b, s=s_hat,
                      alphaD=alpha * D, rhoPsi=alpha * D * Psi1,
                      sq=(s + 2 * alpha) * D * D,
                      rho2=float(n - 2 * Psi1 @ (D * Psi1) + Psi1 @ (D * s * D * Psi1)))
    PsiY1, rhoY1, PsiU, rhoU, aPsi, sums = rows.reduce(_pass_weights, plan)
    value = float(sums[0]) / (n * t)
    if not np.isfinite(value):
        raise EvaluationError("the leave-one-out residuals are not finite")
    if out is not None:
        out["error_rate"] = float(sums[2]) / n
    if not grad:
        return value, None
    PuPsi = PsiU.T * (alpha * D)[None, :] - np.outer(rhoU, plan.stats["rhoPsi"] / s_hat)
    plan.stats.update(PsiY1=PsiY1, rhoY1=rhoY1, PsiU=PsiU, rhoU=rhoU, aPsi=aPsi,
                      PuPsi=PuPsi, dropped=dropped, Ud=U[:, dropped])
    parts = rows.reduce(_pass_gradient, plan)
    xx_r, csum, x_hz, PsiGPsi, aPu = parts[:5]
    Zs = plan.Zs
    c = 2.0 * (xx_r + (Zs * Zs).T @ csum - 2.0 * x_hz)
    half = np.sqrt(sig[keep])
    core = P @ (0.5 * (PsiGPsi + PsiGPsi.T)) @ P.T
    X_U = np.zeros((m, m))
    X_U[np.ix_(keep, keep)] = -(half[:, None] * core * half[None, :]) / np.outer(sig[keep],
                                                                                sig[keep])
    if dropped.size:
        S_dk = (parts[5] @ P.T) * half[None, :]
        phi = 1.0 / (sig[keep][None, :] * (sig[keep][None, :] - sig[dropped][:, None]))
        X_U[np.ix_(dropped, keep)] = phi * S_dk
        X_U[np.ix_(keep, dropped)] = (phi * S_dk).T
    Bw = U @ X_U @ U.T
    Bw *= W
    c += distance_contraction(Bw, Zs, Zs, symmetric=True)
    gradient = np.empty(Z.shape[1] + 1)
    gradient[:-1] = -c / alpha
    gradient[-1] = float(sums[1]) - float(aPu[0])
    return value, gradient


def press_nystrom(Xs: np.ndarray, Zs: np.ndarray, landmarks: np.ndarray | None, Y: np.ndarray,
                  alpha: float, rank: int | None = None, eigen_floor: float = 1e-8,
                  grad: bool = True, workers: int | None = None,
                  out: dict[str, Any] | None = None) -> tuple[float, np.ndarray | None]:
    """:func:`press_nystrom_rows` on arrays in memory: the features already scaled
    (``Xs`` = X·diag(√γ), ``Zs`` the landmarks scaled alike; the gradient is the same
    in log γ), targets Y (n, t). ``landmarks`` (their rows in X) is accepted for
    symmetry with the exact forms and not needed."""
    del landmarks
    rows = ArrayRows(np.asarray(Xs, dtype=np.float64), np.asarray(Y, dtype=np.float64),
                     threads=workers)
    return press_nystrom_rows(rows, np.asarray(Zs, dtype=np.float64), np.ones(Xs.shape[1]),
                              alpha, np.asarray(Xs).mean(axis=0), rank=rank,
                              eigen_floor=eigen_floor, grad=grad, out=out)


# --------------------------------------------------------------------------- in memory


@dataclass
class NystromFactor:
    """The pieces of K̃ = ΨΨᵀ at one γ vector: C, W's eigenpairs (descending), the kept
    indices, Ψ (n, k) and s = diag ΨᵀΨ, and TP (m, k) with Ψ = C·TP."""

    C: np.ndarray
    W: np.ndarray
    sigma: np.ndarray
    U: np.ndarray
    keep: np.ndarray
    Psi: np.ndarray
    s: np.ndarray
    TP: np.ndarray
    P: np.ndarray


def nystrom_factor(Xs: np.ndarray, Zs: np.ndarray, landmarks: np.ndarray | None, rank: int,
                   eigen_floor: float, workers: int | None = None) -> NystromFactor:
    """C = K(X̃, Z̃), W = K(Z̃, Z̃) (read from C when the landmarks are rows of X, as the
    library's Nyström does), the kept eigenpairs of W as
    :func:`~kernelselect.operators.nystrom.nystroem_transform` keeps them, and the
    Gram eigenbasis Ψ = V P of V = C U_kΣ_k^{−1/2}."""
    C = gaussian_block(Xs, Zs, workers)
    W = C[landmarks] if landmarks is not None else gaussian_block(Zs, Zs, workers)
    W = 0.5 * (W + W.T)
    sig, U, keep, T = _landmark_transform(W, rank, eigen_floor)
    n, m, k = C.shape[0], W.shape[0], keep.size
    with blas_for_flops(float(n) * m * k):
        V = C @ T
        s, P = _gram_eigenbasis(V.T @ V)
        Psi = V @ P
    return NystromFactor(C, W, sig, U, keep, Psi, s, T @ P, P)


def _nystrom_loo(F: NystromFactor, Y: np.ndarray, alpha: float) -> LooState:
    Psi, D = F.Psi, 1.0 / (F.s + alpha)
    B = np.column_stack([Y, np.ones(Y.shape[0])])
    R = B - Psi @ (D[:, None] * (Psi.T @ B))          # αK̃_α⁻¹ [Y 1]
    diag = 1.0 - (Psi * Psi) @ D
    return loo_residuals(R[:, :-1], R[:, -1].copy(), diag)


def loo_path_nystrom(F: NystromFactor, Y: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """The mean squared LOO residual for every α of a path from one factor (O(nkt)
    per α): the inner α path of a per-γ search."""
    out = np.full(alphas.size, np.inf)
    for j, a in enumerate(np.asarray(alphas, dtype=np.float64)):
        try:
            out[j] = _nystrom_loo(F, Y, float(a)).value
        except EvaluationError:
            pass
    return out


