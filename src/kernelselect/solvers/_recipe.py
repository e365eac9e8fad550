"""The machine protocol: what the machines call on a fitting recipe.

A kernel machine (:func:`~kernelselect.fit_krr`, :func:`~kernelselect.fit_lssvm`, the
estimators of :mod:`kernelselect.models`) is fitted with a :class:`MachineRecipe`. The
members below are the whole protocol; the machines never ask which class a recipe is,
nor probe it for a member:

- :attr:`MachineRecipe.name` and :attr:`MachineRecipe.label`: the name results and
  messages show;
- :meth:`MachineRecipe.prepare`: what every γ of one training set shares, or None;
- :attr:`MachineRecipe.dask`: whether it fits a row-chunked Dask X without gathering it;
- :attr:`MachineRecipe.fit_policy`: how ``approximation="auto"`` sized it, else None;
- :attr:`MachineRecipe.loo_alphas` and :attr:`MachineRecipe.loo_intercept`: the
  leave-one-out choice of α and of the intercept form, if the recipe makes one;
- :meth:`MachineRecipe.check_resources` and :meth:`MachineRecipe.check_dask_resources`:
  the memory guard before anything is drawn or allocated;
- :meth:`MachineRecipe.fit_machine`: the fitted
  :class:`~kernelselect.solvers._exact.KernelMachine` for a path of ridges;
- :meth:`MachineRecipe.rescaled`: the recipe for data a selection estimator
  standardises first (as :meth:`kernelselect.operators.Approximation.rescaled`).

A fitted machine declares :attr:`~kernelselect.solvers._exact.KernelMachine.conditioning`:
the conditioning of the streamed passes it predicts by (the Nyström conjugate-gradient
machine, which predicts on Dask input too), None for the others.

An :class:`~kernelselect.operators.Approximation` (a stand-in for the kernel matrix, which
the selection evaluates criteria on) is not a recipe; :func:`machine_recipe` hands the
machines the recipe that builds its operator and solves on it
(:class:`~kernelselect.solvers._exact.OperatorRecipe`). A recipe is not an approximation:
given to the selection it is refused (:meth:`MachineRecipe.selection_refusal`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._typing import RandomState
from ..operators import Parameterised

__all__ = ["MachineRecipe", "MACHINE_PROTOCOL", "FITTED_PROTOCOL"]


class MachineRecipe(Parameterised):
    """A recipe a kernel machine is fitted with (the machine protocol, module notes).

    Subclasses hold scikit-learn style parameters (plain attributes set in
    ``__init__``; :class:`~kernelselect.operators.Parameterised` gives ``get_params``,
    ``set_params``, equality and ``repr``) and implement :meth:`check_resources` and
    :meth:`fit_machine`.
    """

    #: the name results and messages show
    name: str = "recipe"
    #: fits a row-chunked Dask X without gathering it (then :meth:`check_dask_resources`
    #: guards the client's and each task's memory)
    dask: bool = False
    #: how ``approximation="auto"`` sized this recipe
    #: (:func:`kernelselect.models._fit_policy.machine_approximation`), else None
    fit_policy: dict[str, Any] | None = None
    #: the leave-one-out options: candidate ridges the recipe chooses α from by the exact
    #: leave-one-out error of its model, and whether it also chooses the constant term
    #: (None and False: it solves at the machine's α with the machine's own intercept)
    loo_alphas: Any = None
    loo_intercept: bool = False

    @property
    def label(self) -> str:
        """The name results and messages show (:attr:`name`)."""
        return self.name

    def prepare(self, X: Any, y: Any, *, kernel: str, random_state: RandomState,
                workers: int | None) -> Any:
        """What every γ of one training set shares (the state ``fit_machine`` starts
        from), or None: nothing (a recipe that draws its own randomness per fit)."""
        return None

    def check_resources(self, n: int, d: int, t: int = 1, workers: int | None = None,
                        d_eff: float | None = None) -> Any:
        """Raise ``ValueError`` when fitting n rows of d features (t outputs) in memory
        would allocate more than the limit of :func:`kernelselect.set_config`."""
        raise NotImplementedError

    def check_dask_resources(self, n: int, chunks: tuple[int, ...], d: int, t: int = 1,
                             d_eff: float | None = None) -> None:
        """The memory guard on a fit on a Dask X of row ``chunks``; ``ValueError`` from
        a recipe that fits in memory only (:attr:`dask` is False)."""
        raise ValueError(f"{self!r} fits X in memory only, not a Dask array.")

    def fit_machine(self, X: Any, Y: Any, gamma: float, alphas: np.ndarray, *, kernel: str,
                    bias: bool, random_state: RandomState = None,
                    workers: int | None = None, centred: bool = False) -> Any:
        """The :class:`~kernelselect.solvers._exact.KernelMachine` (it is built on this
        protocol, hence not named in the signature) on X (n, d) and Y (n, t) for every α
        of ``alphas`` (validated by the caller): the LSSVM with its unpenalised bias
        (``bias``) or kernel ridge regression; ``centred``: Y was centred by its training
        mean (``fit_intercept="mean"``)."""
        raise NotImplementedError

    def rescaled(self, transform: Any) -> MachineRecipe:
        """The recipe for data the caller maps through ``transform`` first (a selection
        estimator's ``standardize=True``): ``self``, since a recipe holds no points in
        X's units (it draws its centres from the rows it is given)."""
        return self

    def selection_refusal(self) -> str:
        """Why this recipe cannot be the ``approximation`` of a selection."""
        return (f"{self!r} is a fitting recipe for the machines (KernelRidgeRegressor, "
                "LSSVMClassifier, fit_krr, fit_lssvm), not a stand-in for the kernel "
                "matrix: the selection evaluates no criterion with it. Select with "
                "approximation='exact', 'nystrom' or 'rff' (or 'auto'), and pass the recipe "
                "to the machine that is fitted afterwards.")


#: the members the machines call on a recipe (the architecture test refuses a
#: getattr/hasattr probe of any of them)
MACHINE_PROTOCOL = frozenset({"label", "prepare", "dask", "fit_policy", "loo_alphas",
                              "loo_intercept", "check_resources", "check_dask_resources",
                              "fit_machine", "selection_refusal", "rescaled"})
#: the members the machines read of a fitted model beyond its parameters
FITTED_PROTOCOL = frozenset({"conditioning"})
