"""Kernel selection criteria, each written once over the operator protocol.

A criterion is evaluated on a :class:`~kernelselect.operators._base.KernelOperator`
``A`` (the kernel matrix K, or a stand-in for it) and a target vector ``y``, for a
whole path of ridge values α at once. The ridge is added to the kernel matrix:
K_α = K + αI; Ding et al. (TNNLS 2020) write μl, Ding & Liao (PAKDD 2012) write μ (docs/references.md names the
papers and maps their parameters).

Criteria that need only *power moments* (Pᵀ Aʳ P, tr Aʳ, diag A) run on every
operator, the streaming exact one included; the others need the *spectral forms*
(aᵀ g(A) b, tr h(A), diag g(A), g(A) b) and run on every operator that knows an
eigendecomposition. Label conventions: a target with exactly two distinct values is
a binary problem and is encoded as ±1 (the larger value → +1, see
:func:`encode_binary`); "binary" criteria require two classes.

Availability (exact = dense eigh or streaming; the streaming exact operator has the
moments only; the random_* criteria of :mod:`kernelselect.criteria.random_mcm` need the
randomised circulant operator, and ``di``/``kdi`` (:mod:`~kernelselect.criteria.discriminant`)
the spectral forms):

=========  =========  ==========  =====  =======  =====  =======  ======  ===========
criterion  direction  needs       exact  stream.  mcm    nystrom  rff     labels
=========  =========  ==========  =====  =======  =====  =======  ======  ===========
ree        min        spectral    yes    no       yes    yes      yes     any
ipe        min        spectral    yes    no       yes    yes      yes     any
c1         min        spectral    yes    no       yes    yes      yes     any
gcv        min        spectral    yes    no       yes    yes      yes     any
eloo       min        spectral    yes    no       yes    yes      yes     any
kta        max        moments     yes    yes      yes    yes      yes     any
ckta       max        moments     yes    yes      yes    yes      yes     any
fsm        min        moments     yes    yes      yes    yes      yes     binary
mmd        max        moments     yes    yes      yes    yes      yes     binary
sm         max        moments     yes    yes      yes    yes      yes     binary
er         min        spectral    yes    no       yes    yes      yes     any
=========  =========  ==========  =====  =======  =====  =======  ======  ===========

``sm`` with the hinge form (``h=`` given) needs the spectral forms.
``eloo`` is the leave-one-out error with the squared loss (PRESS) for every target;
``eloo_error_rate`` (min, spectral, binary) is the same with the 0-1 loss.
``eloo_multiclass`` (min, spectral, every spectral operator) is the one-vs-rest form
of ``eloo`` for C ≥ 2 classes (error rate, PRESS tie-break): it receives one-vs-rest
±1 columns (n, C). ``ekfold``, ``ekfold_error_rate`` and ``ekfold_multiclass`` (min)
are their k-fold forms; they need principal blocks of K_α⁻¹ (capability
``"blocks"``), which only the dense exact operator provides.
:func:`approximations_for` answers the question for the approximations that are
installed; ``docs/criteria.md`` holds the same table with the formulas.

Layout: :mod:`~kernelselect.criteria._base` (the :class:`Criterion` record, label
encodings, the ridge functions the formulas share), one module per family —
:mod:`~kernelselect.criteria.error` (ridge-path error estimates: ree, ipe, c1, gcv,
eloo, eloo_multiclass), :mod:`~kernelselect.criteria.kfold` (their k-fold forms
ekfold, ekfold_multiclass), :mod:`~kernelselect.criteria.alignment` (alignment and class
separation in feature space: kta, ckta, fsm, mmd),
:mod:`~kernelselect.criteria.spectral` (sm, er),
:mod:`~kernelselect.criteria.random_mcm` (the randomised circulant estimators),
:mod:`~kernelselect.criteria.discriminant` (di and kdi, the discriminant information of
the stand-in; they take a target matrix, ``labels="matrix"``) — and
:mod:`~kernelselect.criteria.registry`, the literal registry of them all with
:func:`register_criterion` for third parties.
"""

from . import alignment, discriminant, error, kfold, random_mcm, registry, spectral
from ..utils._labels import one_vs_rest
from ._base import DIRECTIONS, LABEL_KINDS, Criterion, encode_binary
from .alignment import FSM_ROUNDING, ckta, fsm, kta, mmd
from .error import LOO_LOSSES, c1, eloo, eloo_multiclass, gcv, ipe, ree
from .kfold import ekfold, ekfold_multiclass, fold_labels
from .registry import (
    CRITERIA,
    approximations_for,
    check_compatible,
    criterion_names,
    evaluate_criterion,
    get_criterion,
    register_criterion,
    unregister_criterion,
)
from .spectral import SM_MAX_DEGREE, eigenvalue_ratio, er, sm

__all__ = [
    "Criterion",
    "CRITERIA",
    "register_criterion",
    "unregister_criterion",
    "get_criterion",
    "criterion_names",
    "approximations_for",
    "check_compatible",
    "encode_binary",
    "one_vs_rest",
    "evaluate_criterion",
]
