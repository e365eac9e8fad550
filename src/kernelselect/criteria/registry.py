"""The criteria registry: every criterion of the library declared once, literally,
with its metadata (complete as soon as :mod:`kernelselect` is imported), and the
functions that look criteria up, add third-party ones and evaluate them."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping, Optional

import numpy as np
import numpy.typing as npt

from ..operators import Approximation, KernelOperator, approximation_names, get_approximation
from . import random_mcm as _rc
from ._base import Criterion, _check_sigma, evaluate
from .alignment import ckta, fsm, kta, mmd
from .discriminant import operator_di
from .error import _check_loss, c1, eloo, eloo_error_rate, eloo_multiclass, gcv, ipe, ree
from .kfold import _check_kfold, ekfold, ekfold_error_rate, ekfold_multiclass
from .spectral import _check_sm, _sm_needs, er, sm


def register_criterion(criterion: "Criterion", *, replace: bool = False) -> "Criterion":
    """Add a third-party :class:`Criterion` to :data:`CRITERIA`.

    ``replace=True`` overwrites an entry of the same name.

    The criteria of the library are declared once, with their metadata, in the
    literal registry at the end of :mod:`kernelselect.criteria.registry`, and are all present as soon as
    :mod:`kernelselect` is imported. A criterion added here is then available by its
    name everywhere a name is accepted (:func:`kernelselect.select_kernel`,
    :class:`kernelselect.KernelSelectionCV`, the command line) on the approximations
    whose ``provides`` set holds its ``needs`` tag. Example::

        def trace_ratio(operator, y, alphas):
            return operator.power_trace(1) / operator.n      # mean of diag K

        register_criterion(Criterion("trace_ratio", "max", "moments", "any", False,
                                     trace_ratio, description="tr K / n"))
        select_kernel(X, y, criterion="trace_ratio")
    """
    if not isinstance(criterion, Criterion):
        raise TypeError(f"register_criterion expects a Criterion, got {type(criterion).__name__}.")
    name = criterion.name.lower()
    if name in _REGISTRY and not replace:
        raise ValueError(f"a criterion named {name!r} is already registered.")
    _REGISTRY[name] = criterion
    return criterion


def unregister_criterion(name: str) -> Optional["Criterion"]:
    """Remove a criterion from the registry; returns it (None when absent)."""
    return _REGISTRY.pop(str(name).strip().lower(), None)


def criterion_names() -> list[str]:
    """Sorted names of the registered criteria."""
    return sorted(_REGISTRY)


def get_criterion(name: "str | Criterion") -> "Criterion":
    """The registered :class:`Criterion` called ``name`` (case-insensitive)."""
    if isinstance(name, Criterion):
        return name
    if not isinstance(name, str):
        raise TypeError(f"criterion must be a name (str), got {name!r}.")
    key = name.strip().lower()
    if key == "auto":
        raise ValueError(
            "criterion='auto' stands alone: it is the default criterion for the task "
            "(kernelselect._policy.default_criterion) and cannot be listed with "
            "others or evaluated on an operator; give 'auto' alone, or name the criteria.")
    if key not in _REGISTRY:
        raise ValueError(
            f"criterion={name!r} is not a known criterion; use one of "
            f"{', '.join(criterion_names())}; 'auto' (the default criterion for the task); "
            "or, with KernelSelectionCV, 'cv' (k-fold cross-validation by refitting the "
            "machine)."
        )
    return _REGISTRY[key]


def approximations_for(criterion: str | Criterion, params: Mapping[str, Any] | None = None
                       ) -> list[str]:
    """Names of the known approximations that can compute ``criterion``.

    Each approximation is taken with its default parameters."""
    crit = get_criterion(criterion)
    tag = crit.requirement(params)
    out = []
    for name in approximation_names():
        if tag in get_approximation(name).provides:
            out.append(name)
    return out


def check_compatible(criterion: str | Criterion, approximation: Approximation,
                     params: Mapping[str, Any] | None = None) -> None:
    """Raise ``ValueError`` when ``approximation`` cannot compute ``criterion``."""
    crit = get_criterion(criterion)
    approximation = get_approximation(approximation)   # a name, or TypeError naming it
    tag = crit.requirement(params)
    if tag not in approximation.provides:
        can = approximations_for(crit, params)
        label = approximation.label
        others = [c.name for c in _REGISTRY.values()
                  if c.requirement(None) in approximation.provides]
        raise ValueError(
            f"criterion {crit.name!r} cannot be computed with approximation {label!r} "
            f"(it needs {tag!r}, which {label!r} does not provide); use one of "
            f"{', '.join(can) if can else '(none installed)'} (approximation=), or keep "
            f"{label!r} with criterion= one of {', '.join(others) if others else '(none)'}."
        )


def evaluate_criterion(criterion: str | Criterion, operator: KernelOperator, y: npt.ArrayLike,
                       alphas: npt.ArrayLike = (1.0,), **params: Any) -> np.ndarray:
    """Evaluate one criterion on one operator for every α.

    ``criterion`` is a name or a :class:`Criterion`; returns an array (len(alphas),)."""
    crit = get_criterion(criterion)
    return evaluate(crit, operator, y, alphas, **params)


# ---------------------------------------------------------------------------
# the registry: every criterion of the library, declared once with its metadata
# ---------------------------------------------------------------------------

def _random_mcm(name: str, direction: str, labels: str, alpha_dependent: bool,
                params: dict[str, Any], description: str) -> Criterion:
    """A criterion of the randomised labelled circulant: it needs the ``RandomMCM``
    operator and is computed by the function
    :data:`~kernelselect.criteria.random_mcm.RANDOM_CRITERIA` holds under its name."""
    return Criterion(name, direction, "random_mcm", labels, alpha_dependent,
                     _rc.RANDOM_CRITERIA[name], params, description)


_REGISTRY = {c.name: c for c in (
    Criterion("ree", "min", "spectral", "any", True, ree, {},
              "regularised training error (α/n) yᵀK_α⁻¹y (Ding et al., TNNLS 2020)"),
    Criterion("ipe", "min", "spectral", "any", True, ipe, {"sigma": None},
              "in-sample prediction error (α²/n)yᵀK_α⁻²y + (σ²/n)tr(K²K_α⁻²) (Ding et al., TNNLS 2020)",
              check_params=_check_sigma),
    Criterion("c1", "min", "spectral", "any", True, c1, {"sigma": None},
              "effective dimension (α²/n)yᵀK_α⁻²y + (σ²/n)tr(KK_α⁻¹) (Ding et al., AAAI 2018)",
              check_params=_check_sigma),
    Criterion("kta", "max", "moments", "any", False, kta, {},
              "kernel-target alignment yᵀKy/(‖y‖²‖K‖_F) (Cristianini et al.)"),
    Criterion("ckta", "max", "moments", "any", False, ckta, {},
              "centred kernel-target alignment (Cortes et al.)"),
    Criterion("fsm", "min", "moments", "binary", False, fsm, {},
              "feature space measure (s₊+s₋)/‖m₊−m₋‖ (Nguyen & Ho)"),
    Criterion("mmd", "max", "moments", "binary", False, mmd, {},
              "biased MMD ȳᵀKȳ, ȳ = ±1/n_± (Gretton et al.)"),
    Criterion("sm", "max", "moments", "binary", False, sm, {"r": 3, "h": None},
              "spectral measure (1/n)ȳᵀφ(N)ȳ, N = K/1ᵀK1 (Li et al., IJCAI 2018)", _sm_needs,
              check_params=_check_sm),
    # the leave-one-out and k-fold errors of the LSSVM: each name has one loss
    Criterion("eloo", "min", "spectral", "any", True, eloo, {"loss": "squared"},
              "closed-form leave-one-out error of the LSSVM, squared loss (PRESS; Cawley & "
              "Talbot)", check_params=_check_loss),
    Criterion("eloo_error_rate", "min", "spectral", "binary", True, eloo_error_rate, {},
              "closed-form leave-one-out error rate (0-1 loss) of the LSSVM (Cawley & "
              "Talbot)"),
    Criterion("eloo_multiclass", "min", "spectral", "multiclass", True, eloo_multiclass,
              {"loss": "hybrid"},
              "closed-form leave-one-out error rate of the one-vs-rest LSSVM, PRESS "
              "tie-break (Cawley 2006)", check_params=_check_loss),
    Criterion("ekfold", "min", "blocks", "any", True, ekfold,
              {"folds": 5, "seed": 0, "loss": "squared"},
              "closed-form k-fold cross-validation error of the LSSVM, squared loss (An, "
              "Liu & Venkatesh 2007)", check_params=_check_kfold),
    Criterion("ekfold_error_rate", "min", "blocks", "binary", True, ekfold_error_rate,
              {"folds": 5, "seed": 0},
              "closed-form k-fold cross-validation error rate (0-1 loss) of the LSSVM",
              check_params=_check_kfold),
    Criterion("ekfold_multiclass", "min", "blocks", "multiclass", True, ekfold_multiclass,
              {"folds": 5, "seed": 0, "loss": "hybrid"},
              "closed-form k-fold cross-validation error rate of the one-vs-rest LSSVM, PRESS "
              "tie-break", check_params=_check_kfold),
    Criterion("gcv", "min", "spectral", "any", True, gcv, {},
              "generalised cross-validation n‖(I−S)y‖²/tr(I−S)² (Golub et al.)"),
    Criterion("er", "min", "spectral", "any", True, er, {"t": None, "c": 1.0},
              "eigenvalue ratio: (α²/n)yᵀK_α⁻²y + c·Σ_{i>t}λ_i/Σ_{i≤t}λ_i (after Liu & Liao "
              "2015)"),
    # randomised labelled circulant (needs the RandomMCM operator)
    _random_mcm("random_c1", "min", "any", True, {},
                "Π/(s₀+α)² + Σ s_j/(s_j+α) (Ding et al., AAAI 2018, eq. 4)"),
    _random_mcm("random_kta", "max", "any", False, {},
                "s₀ / (Π Σ s_j) (Ding et al., AAAI 2018, eq. 5)"),
    _random_mcm("random_mmd", "max", "binary", False, {},
                "s̄₀ with class-weighted ȳ (Ding et al., AAAI 2018)"),
    _random_mcm("random_eloo", "min", "any", True, {"loss": "auto"},
                "LSSVM ELOO with ÛÛᴴ on the nD lifted points (built on Ding et al., AAAI "
                "2018, eq. 6)"),
    _random_mcm("random_kta_row", "max", "any", False, {},
                "‖Z̃ᵀy‖² / (n‖Z̃ᵀZ̃‖_F): zero row of s, KTA(Z)"),
    _random_mcm("random_kta_row_2g", "max", "any", False, {},
                "‖Z̃_γᵀy‖² / (n‖Z̃_2γᵀ1‖): zero rows at γ and 2γ"),
    _random_mcm("random_mmd_row", "max", "binary", False, {},
                "‖Z̃ᵀȳ‖²: zero row of s̄"),
    _random_mcm("random_c1_rff", "min", "any", True, {"sigma": None},
                "C1 of Z̃Z̃ᵀ from the D × D Gram matrix"),
    # discriminant information (spectral forms of the operator)
    Criterion("di", "max", "spectral", "matrix", False, operator_di, {"rho": 1e-4, "task": "auto"},
              "discriminant information tr((FᵀCF+ρI)⁻¹FᵀCYYᵀCF) of the features of A = FFᵀ "
              "(Al et al., eq. 6/7)"),
    Criterion("kdi", "max", "spectral", "matrix", False, operator_di, {"rho": 1e-4, "task": "auto"},
              "kernel discriminant information tr((GᵀCG+ρB)⁻¹GᵀCYYᵀCG) of Nyström landmarks "
              "(Al et al., eq. 9); equals di on A"),
)}
CRITERIA = MappingProxyType(_REGISTRY)
"""Read-only mapping name → :class:`Criterion`: the criteria of the library (complete
at import) and any added with :func:`register_criterion`."""
