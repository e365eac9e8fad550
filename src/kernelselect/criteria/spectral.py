"""Criteria on the spectrum of K: the spectral measure (high-degree and hinge forms)
and the eigenvalue ratio paired with the training residual."""

from __future__ import annotations

import numbers
from typing import Any, Mapping

import numpy as np

from ..utils._validation import check_positive, check_positive_int
from ..operators._base import KernelOperator
from ._base import _inv, _quad, _real_param, _ybar_signed


def sm(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray, r: int = 3,
       h: float | None = None) -> float | np.ndarray:
    """Spectral measure (Li et al., IJCAI 2018): (1/n) ȳᵀ φ(N) ȳ, N = K/(1ᵀK1), ȳ_i = n/n₊ or −n/n₋.

    High-degree form φ(t) = tʳ (default r = 3, an integer in [1, 16]):
    (1/n) ȳᵀKʳȳ / (1ᵀK1)ʳ, power moments only. Hinge form (``h`` given, in [0, 1)): φ(t) = t for t > h, 0 otherwise, i.e.
    (1/n) Σ_{λ_i(N) > h} λ_i ⟨ȳ, q_i⟩², which needs the spectral forms. Maximise.
    """
    yv = operator.restrict(y)
    n = operator.n
    ybar = _ybar_signed(yv, float(n))
    ones = np.ones(n)
    total = operator.power_quadratic(1, ones[:, None])[0, 0]
    if h is not None:
        hh = float(h)

        def phi(lam: np.ndarray) -> np.ndarray:
            t = lam / total
            return np.where(t > hh, t, 0.0)

        return _quad(operator, phi, ybar) / n
    r = int(r)
    if r < 1:
        raise ValueError(f"r must be an integer ≥ 1, got {r!r}.")
    return operator.power_quadratic(r, ybar[:, None])[0, 0] / total ** r / n


def _sm_needs(params: Mapping[str, Any]) -> str:
    return "moments" if params.get("h") is None else "spectral"


#: largest degree r of the spectral measure's high-degree form φ(t) = tʳ
SM_MAX_DEGREE = 16


def _check_sm(criterion: str, params: dict[str, Any]) -> dict[str, Any]:
    """r: an integer in [1, SM_MAX_DEGREE]; h: None or a threshold in [0, 1)."""
    r, h = params.get("r"), params.get("h")
    if isinstance(r, (bool, np.bool_)) or not isinstance(r, numbers.Integral):
        raise TypeError(f"criterion {criterion!r}: r must be an integer, got {r!r}.")
    if not 1 <= int(r) <= SM_MAX_DEGREE:
        raise ValueError(
            f"criterion {criterion!r}: r must be an integer in [1, {SM_MAX_DEGREE}] (the "
            f"degree of φ(t) = tʳ; higher powers of K leave the float64 range), got {r!r}."
        )
    if h is not None:
        hv = _real_param(criterion, "h", h)
        if not (np.isfinite(hv) and 0.0 <= hv < 1.0):
            raise ValueError(
                f"criterion {criterion!r}: h must be None (the high-degree form) or a "
                f"threshold in [0, 1) on the eigenvalues of K/1ᵀK1, which lie in [0, 1]; "
                f"got {h!r}."
            )
        h = hv
    return {**params, "r": int(r), "h": h}


def eigenvalue_ratio(lam: np.ndarray, n: int, t: int) -> float:
    """ER(A, t) = Σ_{i>t} λ_i / Σ_{i≤t} λ_i over the eigenvalues of A in decreasing order.

    ``lam`` are the eigenvalues an operator carries (its other n − len(lam) eigenvalues
    are 0); negative values (rounding, or an indefinite stand-in) count as 0. NaN when
    the t leading eigenvalues sum to 0.
    """
    lam = np.sort(np.clip(np.asarray(lam, dtype=np.float64), 0.0, None))[::-1]
    if not 1 <= t < n:
        raise ValueError(f"t must be an integer with 1 ≤ t < n = {n}, got t={t!r}; "
                         "give a smaller number of leading eigenvalues.")
    main = float(lam[:t].sum())
    tail = float(lam[t:].sum())
    return tail / main if main > 0 else np.nan


def er(operator: KernelOperator, y: np.ndarray, alphas: np.ndarray, t: int | None = None,
       c: float = 1.0) -> float | np.ndarray:
    """Eigenvalue-ratio criterion (after Liu & Liao, AAAI 2015). Minimise.

    ER(K, t) = Σ_{i>t} λ_i / Σ_{i≤t} λ_i, the ratio of the tail of the spectrum of K
    (eigenvalues in decreasing order) to its t leading eigenvalues: small when the
    kernel concentrates on few directions. Alone it always prefers the widest kernel
    (K → 11ᵀ has ER → 0), so the criterion pairs it with the data fit of the
    regularised least-squares machine the bound is for:

        C_ER(K) = (α²/n) yᵀK_α⁻²y + c · ER(K, t),

    the first term being the mean squared training residual of KRR, ‖y − K K_α⁻¹y‖²/n.
    The two parameters are explicit: ``t`` leading eigenvalues (default ⌈√n⌉) and the
    trade-off ``c`` ≥ 0 (default 1). Liu & Liao define ER as this ratio and select by
    minimising a bound built on it; the exact form of their bound and their choice of
    t could not be consulted here, so this is the closest defined form, documented as
    such in docs/criteria.md. Needs the eigenvalues (O(n³) on the dense operator, as
    Li et al. (IJCAI 2018)'s Table 1 states for ER); on a low-rank stand-in the eigenvalues past
    its rank are 0.
    """
    yv = operator.restrict(y)
    n = operator.n
    tt = int(np.ceil(np.sqrt(n))) if t is None else check_positive_int(t, "t")
    cc = check_positive(c, "c", allow_zero=True)
    ratio = eigenvalue_ratio(operator.eigenvalues, n, min(tt, n - 1) if t is None else tt)
    fit = alphas ** 2 / n * _quad(operator, _inv(alphas, 2), yv)
    return fit + cc * ratio
