"""Criteria on the randomised labelled multilevel circulant matrix (Ding et al., AAAI 2018).

Paper: Ding, Liao et al., "Randomized kernel selection with spectra of
multilevel circulant matrices" (AAAI 2018). Notation: û_ik = (√2/D) cos(x_iᵀw_k + b_k) (n × D), u = y ∘ û (rows scaled by the
labels), v = FFT₂(u), s = |v|² (the eigenvalues of UUᴴ), Π = nD, and the ridge
α = μ·n of the paper's μ. Φ1_Π = Π e₀, so every probe of the all-ones vector
reads only the zero coefficient s₀ = |Σ u|².

Every criterion has the signature ``func(op, y, alphas, **params)`` with ``op``
a :class:`kernelselect.operators.random_mcm.RandomMCMOperator`, ``y`` of shape
(n,) in the original order and ``alphas`` of shape (L,); it returns an array of
shape (L,). :data:`RANDOM_CRITERIA` maps names to functions; each is declared
with its direction in :data:`kernelselect.criteria.CRITERIA`.

Paper forms: ``random_c1`` (eq. 4), ``random_kta`` (eq. 5), ``random_mmd`` (the
MMD variant after eq. 5), ``random_eloo`` (built on eq. 6, defined below).
Estimators from more of the spectrum: ``random_kta_row``, ``random_kta_row_2g``,
``random_mmd_row``, ``random_c1_rff``.

Why the paper forms are noisy: s₀ = (Σ_k c_k)² with c_k = Σ_i u_ik, and each
c_k = ⟨y, Z̃[:, k]⟩/√D has mean zero over the phase b_k. So s₀ is the square of
one sum of D independent zero-mean terms: E[s₀] = yᵀKy/D, but its relative
standard deviation stays ≈ √2 whatever D is (a χ²₁ variable). The
data-frequency-zero row sums the squares instead, Σ_j s[0, j] = D Σ_k c_k² =
‖Z̃ᵀy‖², an unbiased estimate of yᵀKy with relative error O(1/√D).

Notes
-----
Measured (docs/criteria.md, "How closely the randomised stand-ins follow their
exact criteria"): Spearman ρ between each estimator's
γ-curve and the exact criterion's curve on the dense K, Gaussian kernel, D = 100,
α = 1, standardised X, 15 γ = γ₀·2^k (k = −7..7, γ₀ = 1/median‖x_i − x_j‖²),
5 seeds, on breast_cancer, heart, ionosphere, wdbc, australian,
liver_disorders, haberman, german_numer, fourclass, ratsch_breast_cancer:

==================  ==========  =========  ===============  ======================
estimator           exact       median ρ   range of means   seed std (typical)
==================  ==========  =========  ===============  ======================
random_kta          KTA         0.26       −0.23 … 0.65     0.3–0.66
random_kta_row      KTA         0.93       0.64 … 0.98      0.02–0.15
random_kta_row_2g   KTA         0.98       0.88 … 0.99      ≤ 0.08
random_mmd          MMD-B       0.54       0.43 … 0.72      0.1–0.3
random_mmd_row      MMD-B       0.98       0.96 … 0.99      ≤ 0.02
random_c1           C1(K)       −0.71      −0.94 … −0.17    0.02–0.63
random_c1_rff       C1(K)       0.47       −0.48 … 0.89     ≤ 0.09
random_eloo         ELOO        0.06       −0.57 … 0.59     0.13–0.55
==================  ==========  =========  ===============  ======================

The row-power estimators follow their exact criteria; the s₀-only paper forms
do not (random_c1 is anti-correlated with C1(K): its first term Π/(s₀ + α)²
has no α² or σ² weight and s₀ is noisy). random_eloo depends on the arbitrary
order of the points along the data axis of the circulant and does not follow
the exact ELOO.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Union

import numpy as np
import numpy.typing as npt

from ..utils._labels import numeric_labels
from ..utils._validation import check_grid, check_positive
from ._base import _ybar_signed, encode_binary

if TYPE_CHECKING:
    from ..operators.random_mcm import RandomMCMOperator
    from ..operators.streaming_random_mcm import StreamingRandomMCMOperator

    #: The operators these criteria read: the column in memory, or its streamed sums.
    RandomOperator = Union[RandomMCMOperator, StreamingRandomMCMOperator]

__all__ = [
    "RANDOM_CRITERIA",
    "class_weighted_labels",
    "random_c1",
    "random_kta",
    "random_mmd",
    "random_eloo",
    "random_kta_row",
    "random_kta_row_2g",
    "random_mmd_row",
    "random_c1_rff",
]


def _alphas(alphas: npt.ArrayLike) -> np.ndarray:
    return check_grid(np.ravel(alphas), "alphas", " (the ridge added to K)")


def _labels(op: RandomOperator, y: npt.ArrayLike) -> np.ndarray:
    return numeric_labels(y, "y", op.n)


def class_weighted_labels(y: npt.ArrayLike) -> np.ndarray:
    """ȳ_i = 1/n₊ for the larger label, −1/n₋ for the smaller (MMD-B weights).

    Raises ValueError unless y holds exactly two distinct values.
    """
    y_pm, _ = encode_binary(y)
    return _ybar_signed(y_pm, 1.0)


# ---------------------------------------------------------------------------
# the paper's forms
# ---------------------------------------------------------------------------


def random_c1(op: RandomOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """C1(v) = Π/(s₀ + α)² + Σ_j s_j/(s_j + α), the randomised C1. Minimise.

    Equation 4 of Ding et al. (AAAI 2018) reads (1/Π) 1ᵀ Φᴴ diag(1/(s_j + α)²) Φ 1 + Σ_j s_j/(s_j + α) with
    α = μl; since Φ1 = Π e₀ the first term is Π/(s₀ + α)². In matrix form it is
    1ᵀ(A + αI)⁻²1 + tr(A(A + αI)⁻¹) for A = UUᴴ on the Π grid points, the
    labelled analogue of C1(K) = (α²/n) yᵀK_α⁻²y + (σ²/n) tr(K K_α⁻¹) with
    the weights α² and σ² dropped as in the paper. Needs the spectrum: one real
    FFT₂ (half spectrum, see ``RandomMCMOperator.half_spectrum``), then O(nD)
    per α.

    Notes
    -----
    Median Spearman ρ with C1(K) (σ = 0.01·std y) over 10 binary sets: −0.71
    (module Notes).
    """
    a = _alphas(alphas)
    ell = _labels(op, y)
    s0 = op.half_spectrum(ell)[0][0, 0]
    bias = op.size / (s0 + a) ** 2
    dof = np.array([op.spectral_sum(_smoother(al), ell) for al in a])
    return bias + dof


def random_kta(op: RandomOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """C2(v) = KTA(v) = s₀ / (Π Σ_j s_j), the randomised alignment. Maximise.

    Equation 5 of Ding et al. (AAAI 2018) is (Φ1)ᴴ diag(s) Φ1 / (Π³ Σ_j s_j) = Π² s₀ / (Π³ Σ_j s_j), and
    Σ_j s_j = Π‖u‖² by Parseval, so no FFT is needed: one pass over u.
    Independent of α (the value is repeated over ``alphas``).

    Notes
    -----
    Median Spearman ρ with KTA(K) over 10 binary sets: 0.26, seed std up to
    0.66 (module Notes).
    """
    a = _alphas(alphas)
    ell = _labels(op, y)
    value = op.zero_coefficient(ell) / (op.size * op.total_power(ell))
    return np.full(a.shape, value)


def random_mmd(op: RandomOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """MMD(v̄) = s̄₀: the coefficient s₀ computed with ȳ in place of y. Maximise.

    As defined after equation 5 of Ding et al. (AAAI 2018): ȳ_i = 1/n₊ or −1/n₋; the paper's (1/Π²)(Φ1)ᴴ diag(s̄)(Φ1) = s̄₀ =
    (Σ_ik ȳ_i û_ik)². Binary labels only. Independent of α.

    Notes
    -----
    Median Spearman ρ with MMD-B over 10 binary sets: 0.54 (module Notes).
    """
    a = _alphas(alphas)
    ybar = class_weighted_labels(_labels(op, y))
    return np.full(a.shape, op.zero_coefficient(ybar))


def _smoother(al: float) -> Callable[[np.ndarray], np.ndarray]:
    """s ↦ s/(s + α) at one α."""
    return lambda s: s / (s + al)


def _resolvent(al: float) -> Callable[[np.ndarray], np.ndarray]:
    """s ↦ 1/(s + α) at one α."""
    return lambda s: 1.0 / (s + al)


def _loss_kind(y: np.ndarray, loss: str) -> str:
    if loss == "auto":
        vals = np.unique(y)
        return "error_rate" if vals.size == 2 and set(vals.tolist()) == {-1.0, 1.0} else "squared"
    if loss not in ("squared", "error_rate"):
        raise ValueError(f"loss={loss!r} is not known; use 'auto', 'squared' or 'error_rate'.")
    if loss == "error_rate" and not set(np.unique(y).tolist()) <= {-1.0, 1.0}:
        raise ValueError("loss='error_rate' needs labels in {-1, +1}; map the classes to ±1 first.")
    return loss


def random_eloo(op: RandomOperator, y: np.ndarray, alphas: np.ndarray,
                loss: str = "auto") -> float | np.ndarray:
    """C3(v̂), approximate efficient leave-one-out error on the unlabelled MCM. Minimise.

    Ding et al. (AAAI 2018) gives only the ingredient (eq. 6): with the unlabelled Û (y_i := 1,
    column û) and Â = ÛÛᴴ, (Â + αI)⁻¹1 = (1/Π)Φᴴ diag(1/(ŝ_j + α)) Φ1. The
    criterion is defined here as the exact ELOO of the LSSVM with bias
    (Cawley & Talbot 2010; :func:`kernelselect.criteria.eloo`) with Â as the
    kernel matrix of the Π = nD lifted points, each point i repeated on its D
    slots with target y_i, i.e. y_L = y ⊗ 1_D:

        P = [[Â + αI, 1], [1ᵀ, 0]],  [a; b] = P⁻¹[y_L; 0],
        e_(i,k) = a_(i,k) / (P⁻¹)_(i,k),(i,k).

    Â is circulant and 1 is its eigenvector (eigenvalue ŝ₀), which makes every
    piece closed-form:

    - (Â + αI)⁻¹1 = 1/(ŝ₀ + α) (eq. 6), 1ᵀ(Â + αI)⁻¹1 = Π/(ŝ₀ + α), so b = mean(y);
    - a = (Â + αI)⁻¹(y_L − b1); FFT₂(y_L − b1) is D·FFT_n(y − b) on the column
      of feature frequency 0 and zero elsewhere, hence a_(i,k) = a_i with
      a = IFFT_n(FFT_n(y − ȳ) / (ŝ[:, 0] + α)), a 1-level solve;
    - (P⁻¹)_jj = (1/Π)Σ_j 1/(ŝ_j + α) − 1/(Π(ŝ₀ + α)) = (1/Π) Σ_{j≠0} 1/(ŝ_j + α),
      the same for every slot.

    So e_i = a_i / d(α) with d(α) = (1/Π) Σ_{j≠0} 1/(ŝ_j + α), identical on a
    point's D slots, and the criterion is the mean over points of e_i²
    (``loss='squared'``, regression) or of [y_i (y_i − e_i) ≤ 0]
    (``'error_rate'``, classification with ±1 labels; y_i − e_i is the LOO
    prediction), as the exact ``eloo``. ``loss='auto'`` picks 'error_rate' for ±1
    labels, else 'squared'. Cost: one real FFT₂ of û, then O(nD) and one FFT_n
    per α.

    Notes
    -----
    Median Spearman ρ with the exact ELOO error rate over 10 binary sets: 0.06
    (module Notes).
    """
    a_ = _alphas(alphas)
    ell = _labels(op, y)
    kind = _loss_kind(ell, loss)
    s_half, _ = op.half_spectrum(None)                             # ŝ, feature freq. 0..D/2
    s0 = s_half[0, 0]
    total = np.array([op.spectral_sum(_resolvent(al)) for al in a_])
    d = (total - 1.0 / (s0 + a_)) / op.size
    F = np.fft.fft(ell - ell.mean())
    coef = np.fft.ifft(F[:, None] / (s_half[:, 0][:, None] + a_[None, :]), axis=0).real  # (n, L)
    e = coef / d[None, :]
    if kind == "squared":
        return np.mean(e ** 2, axis=0)
    return np.mean(ell[:, None] * (ell[:, None] - e) <= 0, axis=0).astype(np.float64)


# ---------------------------------------------------------------------------
# estimators from more of the spectrum
# ---------------------------------------------------------------------------


def _kta_numerator(op: RandomOperator, ell: np.ndarray) -> float:
    """‖Z̃ᵀy‖² = Σ_j s[0, j], an unbiased estimate of yᵀKy."""
    return op.zero_row_power(ell)


def random_kta_row(op: RandomOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """KTA(Z) = ‖Z̃ᵀy‖² / (n ‖Z̃ᵀZ̃‖_F), the direct random-feature alignment. Maximise.

    Derivation: the data-frequency-zero row of s sums to
    Σ_j s[0, j] = D ‖uᵀ1‖² = ‖Z̃ᵀy‖² (Parseval over the feature axis, with
    u = y ∘ Z̃/√D), which is yᵀK̃y for K̃ = Z̃Z̃ᵀ; the denominator is ‖K̃‖_F =
    ‖Z̃ᵀZ̃‖_F from the D × D Gram matrix. This is KTA of the random-feature
    Gram matrix, the "KTA(Z)" of Ding et al. (AAAI 2018)'s second experiment (scaled by the
    constant 2/D there). Cost O(nD²). Independent of α.

    ‖K̃‖_F² is biased upwards: E(z̃_iᵀz̃_j)² = κ_ij² + O(1/D), which
    adds O(n²/D) and matters when the kernel is narrow; see
    :func:`random_kta_row_2g`.

    Notes
    -----
    Median Spearman ρ with KTA(K) over 10 binary sets: 0.93 (0.64 on
    liver_disorders).
    """
    a = _alphas(alphas)
    ell = _labels(op, y)
    fro = np.linalg.norm(op.feature_gram())
    return np.full(a.shape, _kta_numerator(op, ell) / (op.n * fro))


def random_kta_row_2g(op: RandomOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """‖Z̃_γᵀy‖² / (n ‖Z̃_{2γ}ᵀ1‖), KTA with both parts unbiased and O(nD). Maximise.

    Derivation: for the Gaussian exp(−γ‖δ‖²) and the Laplacian exp(−γ‖δ‖₁),
    κ_γ(δ)² = κ_{2γ}(δ), so ‖K_γ‖_F² = Σ_ij κ_{2γ}(x_i, x_j) = 1ᵀK_{2γ}1. Its
    unbiased random-feature estimate is the data-frequency-zero row power of the
    *unlabelled* MCM at 2γ, ‖Z̃_{2γ}ᵀ1‖², with Z̃_{2γ} built from the same
    standard draws (W scaled for 2γ). The numerator is the row power at γ,
    ‖Z̃_γᵀy‖² (see :func:`random_kta_row`). No D × D Gram, no FFT: two passes
    over n × D arrays. Independent of α.

    Notes
    -----
    Median Spearman ρ with KTA(K) over 10 binary sets: 0.98 (lowest 0.88),
    the best KTA estimator measured.
    """
    a = _alphas(alphas)
    ell = _labels(op, y)
    c = op.doubled_column_sums()
    fro_sq = op.n_features * float(np.dot(c, c))
    return np.full(a.shape, _kta_numerator(op, ell) / (op.n * np.sqrt(fro_sq)))


def random_mmd_row(op: RandomOperator, y: np.ndarray, alphas: np.ndarray) -> float | np.ndarray:
    """‖Z̃ᵀȳ‖² = Σ_j s̄[0, j], the row-power estimate of MMD-B ȳᵀKȳ. Maximise.

    Derivation as for :func:`random_kta_row` with ȳ (1/n₊, −1/n₋) in place of y:
    the row sums D Σ_k c̄_k² with c̄_k = ⟨ȳ, Z̃[:, k]⟩/√D, and
    E‖Z̃ᵀȳ‖² = ȳᵀKȳ exactly (E z̃_iᵀz̃_j = κ_ij, the diagonal included).
    Binary labels only. Cost O(nD). Independent of α.

    Notes
    -----
    Median Spearman ρ with MMD-B over 10 binary sets: 0.98 (lowest 0.96).
    """
    a = _alphas(alphas)
    ybar = class_weighted_labels(_labels(op, y))
    return np.full(a.shape, op.zero_row_power(ybar))


def random_c1_rff(op: RandomOperator, y: np.ndarray, alphas: np.ndarray,
                  sigma: float | None = None) -> float | np.ndarray:
    """C1 of the random-feature Gram matrix K̃ = Z̃Z̃ᵀ. Minimise.

    (α²/n) yᵀ(K̃ + αI)⁻²y + (σ²/n) tr(K̃(K̃ + αI)⁻¹) with the eigenpairs of
    K̃ from the D × D Gram matrix Z̃ᵀZ̃ = V diag(λ) Vᵀ: K̃ has eigenvalues λ_k
    and eigenvectors Q = Z̃V/√λ (eigenvalues below 10⁻¹² λ_max are dropped;
    the complement has eigenvalue 0), so with c = Qᵀy = VᵀZ̃ᵀy/√λ,
    yᵀ(K̃ + αI)⁻²y = Σ_k c_k²/(λ_k + α)² + (‖y‖² − Σ_k c_k²)/α² and
    tr(K̃(K̃ + αI)⁻¹) = Σ_k λ_k/(λ_k + α). It uses the whole spectrum of the
    same random features as the MCM instead of s₀. Cost O(nD²).

    Parameters
    ----------
    sigma : float, optional
        Noise level σ; default 0.01·std(y) (the experimental choice for C_ipe of
        Ding et al., IEEE TNNLS 2020).

    Notes
    -----
    Median Spearman ρ with C1(K) over 10 binary sets: 0.47 (−0.48 … 0.89).
    K̃ has rank ≤ D = 100 while K is close to full rank at large γ; the
    complement of span(Z̃) enters with eigenvalue 0.
    """
    a = _alphas(alphas)
    ell = _labels(op, y)
    if sigma is None:
        sigma = 0.01 * float(np.std(ell))
    else:
        sigma = check_positive(sigma, "sigma", allow_zero=True)
    lam, V = np.linalg.eigh(op.feature_gram())                     # Z̃ᵀZ̃ = V diag(λ) Vᵀ
    keep = lam > 1e-12 * max(float(lam.max()), np.finfo(float).tiny)
    lam, V = lam[keep], V[:, keep]
    c = (V.T @ op.feature_projection(ell)) / np.sqrt(lam)           # c = Qᵀy, Q = Z̃V/√λ
    rest = max(float(ell @ ell - c @ c), 0.0)
    quad = np.sum(c[:, None] ** 2 / (lam[:, None] + a[None, :]) ** 2, axis=0) + rest / a ** 2
    tr = np.sum(lam[:, None] / (lam[:, None] + a[None, :]), axis=0)
    n = op.n
    return (a ** 2 / n) * quad + (sigma ** 2 / n) * tr


RANDOM_CRITERIA = {
    "random_c1": random_c1,
    "random_kta": random_kta,
    "random_mmd": random_mmd,
    "random_eloo": random_eloo,
    "random_kta_row": random_kta_row,
    "random_kta_row_2g": random_kta_row_2g,
    "random_mmd_row": random_mmd_row,
    "random_c1_rff": random_c1_rff,
}
"""Name → criterion function; their directions and other metadata are in
:data:`kernelselect.criteria.CRITERIA`."""
