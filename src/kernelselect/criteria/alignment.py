"""Alignment and class separation in feature space: kernel-target alignment (plain and
centred), the feature space measure and the maximum mean discrepancy. All use the
power moments only, run on every operator and do not depend on the ridge α."""

from __future__ import annotations

import numpy as np

from ..operators._base import KernelOperator

from ._base import _class_indicators, _ybar_signed


def kta(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """Kernel–target alignment ⟨K, yyᵀ⟩/(‖K‖_F ‖yyᵀ‖_F) = yᵀKy / (‖y‖² ‖K‖_F)
    (Cristianini et al., NIPS 2001). For ±1 labels ‖y‖² = n and this is yᵀKy/(n‖K‖_F);
    dividing by ‖y‖² keeps it invariant to the scale of y. Maximise."""
    yv = operator.restrict(y)
    yky = operator.power_quadratic(1, yv[:, None])[0, 0]
    fro = np.sqrt(operator.power_trace(2))
    return yky / (float(yv @ yv) * fro)


def ckta(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """Centred alignment ⟨K_c, y_c y_cᵀ⟩ / (‖K_c‖_F ‖y_c‖²), K_c = HKH
    (Cortes, Mohri & Rostamizadeh 2010).

    ⟨K_c, y_c y_cᵀ⟩ = y_cᵀ K y_c. The operators form the centred matrix itself
    (``KernelOperator.centred_terms``: dense HKH by blocks; eigenbasis operators the
    centred basis; MCM the spectrum without its zero frequency), which keeps CKTA
    accurate when K is close to a constant matrix (small γ·d²), where the centred
    kernel is small but well defined. The streaming exact operator has power moments
    only, ‖K_c‖_F² = ‖K‖_F² − (2/n)‖K1‖² + (1ᵀK1)²/n², and gives NaN when that falls
    below 10⁻¹²‖K‖_F² (the rounding of its terms). NaN too when K_c vanishes.
    Maximise.
    """
    yv = operator.restrict(y)
    yc = yv - yv.mean()
    ycky, kc_sq = operator.centred_terms(yv)
    if not kc_sq > 0:
        # the centred kernel vanishes (to rounding): CKTA is undefined
        return np.nan
    return ycky / (np.sqrt(kc_sq) * float(yc @ yc))


def _diagonal_sums(Bb: np.ndarray, _: np.ndarray | None, diag: np.ndarray) -> np.ndarray:
    return diag @ Bb


#: relative rounding level below which FSM's differences of kernel sums carry no digits
FSM_ROUNDING = 1e-13


def fsm(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """Feature space measure (Nguyen & Ho 2007): (s₊ + s₋) / ‖m₊ − m₋‖.

    m_± are the class means in feature space and s_±² = Σ_{i∈±}‖φ(x_i) − m_±‖²/(n_± − 1)
    the sample variances; all from diag K and the class-block sums S_ab = 1_aᵀK1_b
    (+inf when the class means coincide):
    Σ_{i∈±}‖φ(x_i) − m_±‖² = Σ_{i∈±}K_ii − S_±±/n_±, ‖m₊ − m₋‖² =
    S₊₊/n₊² + S₋₋/n₋² − 2S₊₋/(n₊n₋) (evaluated as ȳᵀKȳ with ȳ = 1₊/n₊ − 1₋/n₋,
    which does not cancel). A class of one point has s = 0. NaN when the scatters lie
    within the rounding of their terms (a numerically constant K). Minimise.
    """
    yv = operator.restrict(y)
    pos, neg = _class_indicators(yv)
    n_pos, n_neg = pos.sum(), neg.sum()
    B = np.stack([pos, neg], axis=1)
    S = operator.power_quadratic(1, B)
    d_pos, d_neg = operator.reduce_rows(None, B, _diagonal_sums)     # Σ_{i∈±} K_ii
    scatter_pos = d_pos - S[0, 0] / n_pos
    scatter_neg = d_neg - S[1, 1] / n_neg
    if scatter_pos + scatter_neg <= FSM_ROUNDING * (abs(d_pos) + abs(d_neg)):
        # both within-class scatters lie inside the rounding of their two terms (K is
        # numerically constant on each class, e.g. a rank-one stand-in at tiny γ): the
        # ratio is not determined, rather than 0 (which would be "best")
        return np.nan
    s_pos = np.sqrt(max(scatter_pos, 0.0) / (n_pos - 1)) if n_pos > 1 else 0.0
    s_neg = np.sqrt(max(scatter_neg, 0.0) / (n_neg - 1)) if n_neg > 1 else 0.0
    # ‖m₊ − m₋‖² = ȳᵀKȳ, ȳ = 1₊/n₊ − 1₋/n₋: one quadratic form of the difference probe
    # instead of S₊₊/n₊² + S₋₋/n₋² − 2S₊₋/(n₊n₋), whose terms cancel when K is close to
    # a constant matrix
    gap_sq = float(operator.power_quadratic(1, _ybar_signed(yv, 1.0)[:, None])[0, 0])
    if gap_sq <= FSM_ROUNDING * (S[0, 0] / n_pos ** 2 + S[1, 1] / n_neg ** 2):
        # coinciding class means: no separation at all (+inf), undefined if no spread either
        return np.inf if s_pos + s_neg > 0 else np.nan
    return (s_pos + s_neg) / np.sqrt(gap_sq)


def mmd(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """Biased maximum mean discrepancy ȳᵀKȳ = ‖m₊ − m₋‖², ȳ_i = 1/n₊ or −1/n₋
    (Gretton et al. 2007; Li et al. (IJCAI 2018) shows it is a special case of SM). Maximise."""
    ybar = _ybar_signed(operator.restrict(y), 1.0)
    return operator.power_quadratic(1, ybar[:, None])[0, 0]
