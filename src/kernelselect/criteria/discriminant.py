"""Discriminant information (DI) of a kernel operator's stand-in: the ``"di"`` and
``"kdi"`` selection criteria (Al et al., "Discriminant information based kernel
learning", docs/references.md, eq. 6/7 and 9).

The objectives on fixed features and landmarks (DI, KDI, RFDI, NysDI), their
gradients and the training of DI feature maps are in :mod:`kernelselect.di`; this
module holds only what the criteria registry evaluates, so that the registry does not
depend on them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..utils._labels import encode_labels, unit_indicators
from ..utils._validation import check_positive
from ..operators._base import KernelOperator
from ._base import check_operator

__all__ = ["operator_di"]


def _centred(A: np.ndarray) -> np.ndarray:
    """C A with C = I − 11ᵀ/n, without forming C: centred twice, so that 1ᵀCA is zero
    to rounding (the DI form below drops 1ᵀȲ)."""
    A = A - A.mean(axis=0)
    return A - A.mean(axis=0)


def _operator_targets(y: np.ndarray, task: str) -> np.ndarray:
    """Target matrix from the (restricted) criterion target y: (n, L). A 2-D y is the
    target matrix itself (``select_kernel`` encodes it, the criterion taking
    ``labels="matrix"``); a 1-D y follows ``task``."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 2:
        return y
    if task == "auto":
        values = np.unique(y)
        integer = np.all(values == np.round(values))
        task = "classification" if values.size == 2 or (integer and values.size <= 50) \
            else "regression"
    if task == "classification":
        enc = encode_labels(y, "y", squeeze="any",
                            who=" (DI measures class separation; use task='regression' for "
                                "real targets)")
        return unit_indicators(enc.codes, enc.n_classes)
    if task == "regression":
        return y.reshape(y.shape[0], -1)
    raise ValueError(f"task={task!r} is not known; use 'auto', 'classification' or 'regression'.")


def operator_di(operator: KernelOperator, y: npt.ArrayLike, alphas: Any = None, rho: float = 1e-4,
                task: str = "auto") -> float:
    """DI of the kernel stand-in A of a spectral operator (criteria registry "di"/"kdi").

    DI depends on a feature map F only through A = FFᵀ:
    DI = tr(Ȳᵀ A_c (A_c + ρI)⁻¹ Ȳ), A_c = CAC, Ȳ = CY (push-through identity on
    tr((FᵀCF + ρI)⁻¹FᵀCYYᵀCF)). With g(A) = A(A + ρI)⁻¹, its complement
    h(A) = I − g(A) = ρ(A + ρI)⁻¹ and the centring written as a rank-one correction
    (Sherman–Morrison on the intercept direction 1; 1ᵀȲ = 0)::

        DI = tr(Ȳᵀ g(A) Ȳ) + ‖1ᵀ h(A) Ȳ‖² / 1ᵀ h(A) 1,

    two quadratic forms with the probes Ȳ and [Ȳ, 1] (O(rank·L) after the operator's
    factorisation). The intercept terms are written with h, whose eigenvalues
    ρ/(λ + ρ) lie in (0, 1]: written with g, as n − 1ᵀg(A)1 and 1ᵀg(A)Ȳ, they are
    differences of numbers of order n that cancel to order ρ when 1 lies almost in
    the range of A (wide kernels, small ρ). On the random-feature operator A = ZZᵀ
    this is DI(Z) (paper eq. 7); on the Nyström operator A = G B⁻¹ Gᵀ =
    (GB^{-1/2})(GB^{-1/2})ᵀ it is the KDI of its landmarks (paper eq. 9; exactly when
    no eigenvalue of B is dropped); on the exact kernel matrix it is the kernel DCA
    optimum (paper eq. 3).

    Parameters
    ----------
    operator : KernelOperator with the spectral forms
    y : ndarray of shape (n,) or (n, L)
        Labels or targets in the original row order, or the target matrix Y itself
        (2-D: used as given, ``task`` ignored). ``select_kernel`` passes the matrix:
        the unit-norm class indicator columns for class labels (the one-hot of
        :func:`encode_targets`), the target column(s) for a real target, following its
        own ``task``.
    alphas : ignored
        DI does not depend on the ridge α of the kernel machine; ρ is its own ridge.
    rho : float > 0, default 1e-4
    task : {"auto", "classification", "regression"}
        For a 1-D y: "auto" is classification (one-hot, unit-norm columns) when y has
        two distinct values or at most 50 distinct integer values, regression
        otherwise.
    """
    check_operator(operator, "operator_di")
    rho = check_positive(rho, "rho")
    Y = _operator_targets(operator.restrict(y), task)
    n, L = Y.shape
    Yc = _centred(Y)
    probes = np.column_stack([Yc, np.ones(n)])

    def g(lam: np.ndarray) -> np.ndarray:
        lam = np.maximum(lam, 0.0)
        return lam / (lam + rho)

    def h(lam: np.ndarray) -> np.ndarray:
        return rho / (np.maximum(lam, 0.0) + rho)

    fit = np.asarray(operator.quadratic(g, Yc), dtype=np.float64)
    Q = np.asarray(operator.quadratic(h, probes), dtype=np.float64)
    cross = Q[L, :L]
    return float(np.trace(fit) + cross @ cross / Q[L, L])
