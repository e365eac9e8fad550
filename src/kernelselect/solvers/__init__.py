"""Solvers of the kernel machines: the exact ones and the Nyström conjugate-gradient engine.

A machine is fitted by solving (K + αI)a = y (kernel ridge regression) or the bordered
LSSVM system for one γ and a path of ridges α. The modules here do that and nothing
else; the estimators that call them live in :mod:`kernelselect.models`.

- ``_exact``: the solvers on an approximation's operator (dense Cholesky, eigh, the
  tridiagonal path, low-rank features) and the fitted :class:`KernelMachine`;
- ``_rows``: the streamed row passes K(X, Z)ᵀ(…) of the Nyström machine, in memory or
  over Dask chunks;
- ``_pcg``: Nyström ridge regression and the LSSVM solved by preconditioned conjugate
  gradients;
- ``_loo``: the same model solved for a path of α by one eigendecomposition, with its
  exact leave-one-out error;
- ``_nystroem_pcg``: :class:`~kernelselect.NystroemPCG`, the recipe a machine is fitted
  with beyond the exact path's reach, and its rule for the number of centres.
"""
