"""Discriminant-information (DI) criteria and DI-trained kernel feature maps.

Source: Al et al., "Discriminant information based kernel learning" (listed in
docs/references.md): eq. (6) DI, eq. (7) RFDI,
eq. (9) KDI, eq. (10) NysDI, Algorithms 1 and 2, Sect. 5.1 (training schedule).

Conventions
-----------
Features are stored sample-major, as everywhere else in kernelselect: a feature
matrix ``F`` has shape (n, J) and is the transpose of the paper's J×N matrix. With
``C = I − 11ᵀ/n`` (never formed: columns are centred instead) and ``Y`` the target
matrix (n, L):

- DI(F)   = tr((FᵀCF + ρI)⁻¹ FᵀCYYᵀCF)                      (paper eq. 6/7)
- KDI     = tr((GᵀCG + ρB)⁻¹ GᵀCYYᵀCG), G = K(X, X_r), B = K(X_r, X_r)   (eq. 9/10)

For classification, ``Y`` is the one-hot class indicator with every column scaled
to unit norm (``Y_ic = 1/√n_c`` when x_i is in class c), which makes FᵀCYYᵀCF the
between-class scatter of the paper; for regression ``Y`` holds the targets. Both
are maximised.

Every evaluation is O(n J² + J³) time and O(n J) memory: one Cholesky factor of a
J×J matrix, no n×n array.

The selection criteria ``"di"`` and ``"kdi"`` of :data:`kernelselect.criteria.CRITERIA`
evaluate :func:`operator_di` (:mod:`kernelselect.criteria.discriminant`), so that
``kernelselect.select_kernel(X, y, criterion="di", approximation="rff")`` or
``criterion="kdi", approximation="nystrom"`` choose γ by maximising DI / KDI; they
receive the target matrix Y above (several real target columns are accepted).

Layout: :mod:`~kernelselect.di.objectives` (the target matrix, DI / KDI of fixed
features, the RFDI / NysDI objectives with their gradients),
:mod:`~kernelselect.di.training` (mini-batch Adam ascent: :func:`train_rfdi`,
:func:`train_nysdi`), :mod:`~kernelselect.di.selection` (:func:`select_gamma_di`, a call
of ``select_kernel`` with the DI criteria) and :mod:`~kernelselect.di.transformers` (the scikit-learn
transformers ``DIRandomFourierFeatures`` and ``DINystroem``, imported on first use of
their names from :mod:`kernelselect`, since they need scikit-learn).
"""

from .objectives import (
    _gaussian_block,
    _rff_map,
    di_criterion,
    encode_targets,
    kdi_criterion,
    nysdi,
    operator_di,
    rfdi,
)
from .selection import select_gamma_di
from .training import TrainingHistory, default_batch_size, train_nysdi, train_rfdi

__all__ = [
    "encode_targets",
    "di_criterion",
    "kdi_criterion",
    "rfdi",
    "nysdi",
    "train_rfdi",
    "train_nysdi",
    "select_gamma_di",
    "operator_di",
    "default_batch_size",
    "TrainingHistory",
]
