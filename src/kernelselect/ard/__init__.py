"""The per-feature (ARD) Gaussian kernel's objectives and their gradient search.

The kernel is κ(x, x′) = exp(−Σ_k γ_k (x_k − x′_k)²), one γ per feature: the Gaussian
kernel with γ = 1 on the scaled features x·diag(√γ). Its bandwidths are chosen by a
gradient search, so each objective here comes with its analytic gradient in
(log γ₁, …, log γ_d, log α):

- ``_base``: what every objective shares — the closed-form leave-one-out residuals of
  the LSSVM, the adjoint that turns them into a gradient, the Gaussian block of scaled
  features and the distance contraction that applies dK/dlog γ_k;
- ``_exact``: on the exact kernel matrix, the leave-one-out and k-fold held-out errors
  and the negative log evidence of the Gaussian-process model;
- ``_nystrom``: on a Nyström stand-in with fixed landmarks, the leave-one-out error from
  one factor in memory or from passes over row blocks (in memory or over Dask chunks);
- ``_search``: :class:`~._search.ArdProblem` (data, targets, stand-in, objective),
  L-BFGS-B over it and the nested check that guards its choice.

Why a room of its own, between ``criteria`` and ``selection``: the objectives are
criteria of a kernel with d + 1 parameters, written over the library's stand-ins (the
compiled kernel block, Cholesky factorisation and symmetric eigensolver of
:mod:`kernelselect.primitives._kernel_ops`, the Cholesky factor of K + αI of
:mod:`kernelselect.operators._lowrank` where the evidence needs the factor itself, the
eigen-floor rule of :mod:`kernelselect.operators.nystrom`, the row sources of
:mod:`kernelselect.operators._row_passes`, the folds of :mod:`kernelselect.criteria.kfold`),
so they sit above those; and they are not grid criteria of one γ that the registry of
:mod:`kernelselect.criteria` could evaluate, nor a selection: the rules that choose the
start, the stand-in, the objective and the guard — and the result a selection returns —
are the selection's (:mod:`kernelselect.selection._ard_select`), which imports this room.
Nothing here imports the selection, the machines or the estimators.
"""
