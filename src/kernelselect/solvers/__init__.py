"""Solvers of the kernel machines: the exact ones and the Nyström conjugate-gradient engine.

A machine is fitted by solving (K + αI)a = y (kernel ridge regression) or the bordered
LSSVM system for one γ and a path of ridges α. The modules here do that and nothing
else; the estimators that call them live in :mod:`kernelselect.models`.

- ``_recipe``: the machine protocol, :class:`MachineRecipe`: what the machines call on
  the recipe they are fitted with, and what they read of a fitted model;
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

from ._recipe import FITTED_PROTOCOL, MACHINE_PROTOCOL, MachineRecipe
from ._exact import (KernelMachine, OperatorRecipe, check_alphas, check_machine,
                     fit_kernel_machine, machine_recipe, resolve_machine)
from ._nystroem_pcg import NystroemPCG

__all__ = ["MachineRecipe", "OperatorRecipe", "MACHINE_PROTOCOL", "FITTED_PROTOCOL",
           "KernelMachine", "NystroemPCG", "check_alphas", "check_machine",
           "fit_kernel_machine", "machine_recipe", "resolve_machine"]
