"""Randomised labelled multilevel circulant matrix (Ding et al., AAAI 2018).

Paper: Ding, Liao et al., "Randomized kernel selection with spectra of
multilevel circulant matrices" (AAAI 2018). With D random frequencies w_k drawn
from the kernel's spectral density and phases b_k ~ U[0, 2π], each point gets
the circulant C(x_i) = (√2/D) circ[cos(x_iᵀw_k + b_k)]_k, and the labelled
2-level circulant U of order (n, D) has first column

    u_ik = y_i û_ik,   û_ik = (√2/D) cos(x_iᵀw_k + b_k)      (an n × D array).

U = (1/Π) Φᴴ diag(v) Φ with v = FFT₂(u) complex (U is normal, not symmetric),
Π = nD, and UUᴴ has the eigenvalues s = |v|². The criteria of the paper and the
better estimators built from the same arrays live in
:mod:`kernelselect.criteria.random_mcm`.

In terms of the random Fourier features z̃_ik = √(2/D) cos(x_iᵀw_k + b_k)
(E[z̃_iᵀz̃_j] = κ(x_i, x_j)), û = Z̃/√D.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NoReturn, Sequence

import numpy as np
import numpy.typing as npt

from .. import fft as _fft
from ..primitives._columns import rff_unchecked
from ..utils._dask import is_dask_array
from ..utils._kernel_family import Kernel
from ..utils._labels import numeric_labels
from ..utils._lapack import gram
from ..utils._resources import check_allocation
from ..utils._threads import team
from ..kernels import sample_frequencies
from ..utils._validation import check_matrix, check_positive_int, check_random_state
from .._typing import Gammas, RandomState
from ._base import Approximation, Capabilities, KernelOperator
from .streaming_random_mcm import build_random_mcm

__all__ = ["RandomMCM", "RandomMCMOperator", "RandomMCMState"]


@dataclass(frozen=True)
class RandomMCMState:
    """What :meth:`RandomMCM.prepare` draws once and every γ scales.

    Attributes
    ----------
    W0 : ndarray of shape (d, D)
        Standard draws of the kernel's spectral density.
    b : ndarray of shape (D,)
        Phases on [0, 2π).
    kernel : Kernel
        The kernel the draws are for.
    given, checked : ndarray or None
        The X ``prepare`` was given and its checked float64 copy (None on Dask input):
        ``build`` handed that same array uses the copy without checking X again.
    """

    W0: np.ndarray
    b: np.ndarray
    kernel: Kernel
    given: Any = None
    checked: np.ndarray | None = None


def scaled_frequencies(W0: np.ndarray, gamma: float, kernel: str | Kernel) -> np.ndarray:
    """Frequencies of the kernel with parameter γ from standard samples W0.

    Gaussian exp(−γ‖δ‖²): w ~ N(0, 2γ I), so W = √(2γ) W0 with W0 standard
    normal. Laplacian exp(−γ‖δ‖₁): w_j ~ Cauchy(0, γ), so W = γ W0 with W0
    standard Cauchy.
    """
    return Kernel.of(kernel, per_feature=False).frequency_scale(gamma) * W0


def _checked_X(X: Any, state: RandomMCMState) -> np.ndarray:
    """X as checked by ``prepare`` when it is the array ``prepare`` was given (the
    driver's grid: one check per grid, not per γ); any other X is checked here."""
    if state.checked is not None and X is state.given:
        return state.checked
    return check_matrix(X, "X", dtype=np.float64)


class RandomMCMOperator(KernelOperator):
    """The arrays behind the randomised labelled MCM for one kernel.

    The operator keeps the unlabelled column û (n × D); a labelled column for
    any label vector ℓ is ℓ_i û_ik. Spectra s = |FFT₂(ℓ ∘ û)|² are computed on
    demand and cached per label vector. It is not a stand-in for K in the
    power-moment or spectral protocol (UUᴴ lives on nD points), so only the
    ``random_*`` criteria apply to it.

    Attributes
    ----------
    unlabeled : ndarray of shape (n, D)
        û.
    n_features : int
        D.
    size : int
        Π = nD.
    """

    name = "random_mcm"
    spectral = False

    def __init__(self, unlabeled: npt.ArrayLike, *, X: np.ndarray | None = None,
                 W0: np.ndarray | None = None, b: np.ndarray | None = None,
                 gamma: float | None = None, kernel: str | Kernel = "gaussian",
                 workers: int | None = None) -> None:
        unlabeled = np.asarray(unlabeled, dtype=np.float64)
        super().__init__(unlabeled.shape[0])
        self.unlabeled = unlabeled
        self.n_features = unlabeled.shape[1]
        self.size = unlabeled.size
        self._X, self._W0, self._b = X, W0, b
        self.gamma, self.kernel = gamma, Kernel.of(kernel, per_feature=False)
        self._workers = workers
        self._cache: dict[bytes | str | None, Any] = {}

    # -- arrays ------------------------------------------------------------------
    def _labels(self, labels: npt.ArrayLike | None) -> np.ndarray | None:
        if labels is None:
            return None
        return numeric_labels(labels, "labels", self.n)

    def column(self, labels: npt.ArrayLike | None = None) -> np.ndarray:
        """u = ℓ ∘ û (rows scaled by the labels), shape (n, D); None: û."""
        ell = self._labels(labels)
        return self.unlabeled if ell is None else self.unlabeled * ell[:, None]

    def features(self) -> np.ndarray:
        """Random Fourier features Z̃ = √D û, shape (n, D), E[Z̃Z̃ᵀ] = K."""
        return np.sqrt(self.n_features) * self.unlabeled

    def half_spectrum(self, labels: npt.ArrayLike | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
        """s on the feature frequencies 0..⌊D/2⌋ and their multiplicities.

        u is real, so s[j₁, j₂] = s[−j₁, −j₂]: the columns j₂ = 0..⌊D/2⌋ of the
        real FFT (``rfft2``) carry the whole spectrum, column j₂ standing for
        itself and D − j₂. Σ_j f(s_j) = Σ_{j₁, j₂} weight[j₂] f(s_half[j₁, j₂]).
        Half the memory and work of the full FFT₂; cached per label vector.

        Returns
        -------
        s_half : ndarray of shape (n, ⌊D/2⌋ + 1)
        weight : ndarray of shape (⌊D/2⌋ + 1,), entries 1 or 2
        """
        ell = self._labels(labels)
        key = None if ell is None else ell.tobytes()
        if key not in self._cache:
            v = _fft.rfftn(self.column(ell), workers=self._workers)
            # column j₂ stands for j₂ and D − j₂ (weight 2) unless it is its own mirror
            weight = np.asarray(_fft.rfftn_multiplicity(self.unlabeled.shape)[0], dtype=np.float64)
            self._cache[key] = (v.real ** 2 + v.imag ** 2, weight)
        return self._cache[key]

    def spectral_sum(self, f: Callable[[np.ndarray], np.ndarray],
                     labels: npt.ArrayLike | None = None) -> float:
        """Σ_j f(s_j) over the whole spectrum, for an elementwise f, from the half spectrum."""
        s_half, weight = self.half_spectrum(labels)
        return float(np.sum(f(s_half) @ weight))

    def zero_coefficient(self, labels: npt.ArrayLike | None = None) -> float:
        """s₀ = |Σ_ik u_ik|², no FFT needed."""
        return float(np.sum(self.column(labels)) ** 2)

    def total_power(self, labels: npt.ArrayLike | None = None) -> float:
        """Σ_j s_j = Π ‖u‖² (Parseval), no FFT needed."""
        return float(self.size * np.sum(self.column(labels) ** 2))

    def zero_row_power(self, labels: npt.ArrayLike | None = None) -> float:
        """Σ_j s[0, j] = D ‖uᵀ1‖² = ‖Z̃ᵀℓ‖², no FFT needed.

        The data-frequency-zero row of the spectrum is the 1-D power spectrum
        over features of the column sums c_k = Σ_i u_ik; by Parseval its sum is
        D Σ_k c_k², and c_k = ⟨ℓ, Z̃[:, k]⟩/√D.
        """
        c = self.column(labels).sum(axis=0)
        return float(self.n_features * np.dot(c, c))

    def feature_gram(self) -> np.ndarray:
        """Z̃ᵀZ̃ (D × D), the Gram matrix of the random features."""
        Z = self.features()
        return gram(Z)

    def feature_projection(self, labels: npt.ArrayLike | None = None) -> np.ndarray:
        """Z̃ᵀℓ (D,); ℓ = 1 when ``labels`` is None."""
        ell = self._labels(labels)
        Z = self.features()
        return Z.sum(axis=0) if ell is None else Z.T @ ell

    def doubled_column_sums(self) -> np.ndarray:
        """Σ_i û_ik for the kernel at 2γ (the same draws), shape (D,)."""
        return self.doubled_unlabeled().sum(axis=0)

    def doubled_unlabeled(self) -> np.ndarray:
        """û for the kernel κ² (γ → 2γ; the same standard samples), shape (n, D).

        Both kernels satisfy κ_γ(δ)² = κ_{2γ}(δ), so ‖K_γ‖_F² = 1ᵀK_{2γ}1.
        """
        if "doubled" not in self._cache:
            if self._X is None or self._W0 is None or self._b is None or self.gamma is None:
                raise ValueError("this operator was built without X; the doubled-γ features are unavailable.")
            W = np.ascontiguousarray(scaled_frequencies(self._W0, 2.0 * self.gamma,
                                                        self.kernel), dtype=self._X.dtype)
            # self._X was checked when the operator was built
            self._cache["doubled"] = _column(self._X, W, self._b, self._workers)
        return self._cache["doubled"]

    # -- protocol ----------------------------------------------------------------
    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            "the randomised labelled MCM is not a stand-in for K on the n points; only the "
            "random_* criteria (random_c1, random_kta, random_mmd, random_eloo and their "
            "variants) apply to it. Use approximation='rff' or 'nystrom' for the others."
        )

    power_quadratic = power_trace = diagonal = project = _refuse
    quadratic = trace = diagonal_function = apply_function = _refuse


class RandomMCM(Approximation):
    """Randomised labelled multilevel circulant approximation (Ding et al., AAAI 2018).

    ``prepare`` draws the standard frequencies W0 (d × D: standard normal for
    the Gaussian kernel, standard Cauchy for the Laplacian) and phases
    b ~ U[0, 2π] once; ``build`` scales W0 for the requested γ (see
    :func:`scaled_frequencies`) and computes û. Reusing the same draws for every
    γ (common random numbers) makes criterion curves over γ smooth.

    X is checked (finite, 2-D) and cast to float64 once, by ``prepare``; ``build``
    handed that same array again (as the selection drivers do for every γ of a grid)
    uses the checked copy and builds the column without checking X anew. Any other
    array is checked by ``build``.

    Parameters
    ----------
    n_features : int, default 100
        D, the number of random frequencies (the second circulant level).
    random_state : None, int or numpy Generator
        Seed for the draws; used when ``prepare`` is given no random_state.
    """

    name = "random_mcm"
    provides = frozenset({"random_mcm"})

    def __init__(self, n_features: int = 100, random_state: RandomState = None) -> None:
        self.n_features = n_features
        self.random_state = random_state

    def check_resources(self, n: int, d: int) -> int:
        D = check_positive_int(self.n_features, "n_features")
        # û (n × D), its labelled copy, the doubled-γ features and the half-spectrum
        # FFT (n × (D/2 + 1) complex, plus its squared magnitudes)
        check_allocation(8.0 * (3.0 * n * D + 3.0 * n * (D // 2 + 1) + d * D),
                         f"RandomMCM with n_features={D} at n={n} (columns {n} × {D} and "
                         "their 2-D FFT)", "use fewer random features")
        return D

    @property
    def capabilities(self) -> Capabilities:
        """Its own criteria tag; a whole grid from shared row statistics, in memory (see
        :meth:`prefers_per_gamma`) or on Dask input; no machine."""
        return Capabilities(frozenset(self.provides), grid=True, dask=True, fit=False)

    def refusal(self) -> str:
        return ("approximation='random_mcm' has no solver: its circulant lives on the nD "
                "lifted points, not on the training points; use 'exact', 'nystrom' or 'rff'.")

    def prepare(self, X: Any, y: npt.ArrayLike | None = None, *,
                kernel: str = "gaussian", random_state: RandomState = None,
                workers: int | None = None) -> RandomMCMState:
        given = X
        if not is_dask_array(X):            # Dask input is checked by select_kernel
            X = check_matrix(X, "X", dtype=np.float64)
        family = Kernel.of(kernel, per_feature=False)
        D = check_positive_int(self.n_features, "n_features")   # the columns: in build
        d = X.shape[1]
        rng = check_random_state(self.random_state if random_state is None else random_state)
        W0, b = sample_frequencies(family, d, D, rng)    # checked by the memory guard
        if is_dask_array(X):
            return RandomMCMState(W0, b, family)
        # X checked (and cast) once for the whole grid: build() takes this array when it
        # is handed the same X again, instead of checking it per γ
        return RandomMCMState(W0, b, family, given, X)

    #: in-memory data whose per-γ columns (see :meth:`check_resources`) fit in this many
    #: bytes is evaluated one γ at a time, which is faster there (compiled column
    #: builder: 0.071 s against 0.22 s streamed at n = 10⁴, 0.99 s against 1.57 s at
    #: n = 10⁵, ten γ, one thread); beyond, the shared-pass path bounds the memory
    #: (0.38 GB against 2.6 GB at n = 10⁶, and less CPU there)
    in_memory_max_bytes = 2 ** 30

    def prefers_per_gamma(self, n: int, d: int) -> bool:
        """Whether in-memory data of n × d is better served one γ at a time."""
        D = int(self.n_features)
        return 8.0 * (3.0 * n * D + 3.0 * n * (D // 2 + 1)) <= self.in_memory_max_bytes

    def build_all(self, rows: Any, y: npt.ArrayLike | None, gammas: Gammas, *,
                  kernel: str, state: RandomMCMState) -> Sequence[KernelOperator]:
        """Operators for every γ of a grid whose statistics come from one shared pass
        over ``rows`` (:mod:`~kernelselect.operators.streaming_random_mcm`)."""
        return build_random_mcm(rows, y, gammas, kernel=kernel, state=state, approx=self)

    def build(self, X: npt.ArrayLike, y: npt.ArrayLike | None, gamma: float, *,
              kernel: str = "gaussian", state: RandomMCMState | None = None,
              workers: int | None = None) -> RandomMCMOperator:
        family, gamma, state = self._build_start(X, y, gamma, kernel, state, workers)
        X = _checked_X(X, state)
        self.check_resources(*X.shape)
        if state.kernel is not family:
            raise ValueError(
                f"the frequencies were drawn for kernel={state.kernel.value!r}, not "
                f"{family.value!r}; call prepare again with kernel={family.value!r}."
            )
        W = np.ascontiguousarray(scaled_frequencies(state.W0, gamma, family), dtype=X.dtype)
        u_hat = _column(X, W, state.b, workers)
        op = RandomMCMOperator(u_hat, X=X, W0=state.W0, b=state.b, gamma=gamma,
                               kernel=family, workers=workers)
        op.details = {"n_features": op.n_features, "size": op.size}
        return op


def _column(X: np.ndarray, W: np.ndarray, b: np.ndarray, workers: int | None) -> np.ndarray:
    """û = (√2/D) cos(XW + b) for a checked X and the frequencies of one γ (the memory
    for it checked by :meth:`RandomMCM.check_resources`)."""
    return rff_unchecked(X, W, np.ascontiguousarray(b, dtype=X.dtype),
                         float(np.sqrt(2.0) / W.shape[1]), team(workers))
