"""Stand-ins for the kernel matrix, one module per approximation.

Approximations are recipes (:class:`~kernelselect.operators._base.Approximation`)
with scikit-learn style parameters; the strings ``"exact"``, ``"nystrom"``,
``"rff"``, ``"mcm"`` and ``"random_mcm"`` mean the recipe with its defaults.
"""

from __future__ import annotations

import importlib

from ._base import (Approximation, ExplicitBasisOperator, KernelOperator, Parameterised,
                    RidgeFunction)

__all__ = [
    "Approximation",
    "Parameterised",
    "KernelOperator",
    "ExplicitBasisOperator",
    "RidgeFunction",
    "approximation_names",
    "get_approximation",
]

# name → (module, class) of the approximations, imported on first use.
_LAZY = {
    "exact": ("dense", "Exact"),
    "mcm": ("mcm", "MCM"),
    "random_mcm": ("random_mcm", "RandomMCM"),
    "nystrom": ("nystrom", "Nystroem"),
    "rff": ("rff", "RFF"),
}
_CLASSES: dict[str, type[Approximation]] = {}


def _resolve(name: str) -> type[Approximation]:
    if name in _CLASSES:
        return _CLASSES[name]
    module, attr = _LAZY[name]
    mod = importlib.import_module(f"{__name__}.{module}")
    cls = getattr(mod, attr)
    _CLASSES[name] = cls
    return cls


def approximation_names() -> list[str]:
    """Names of the approximations that :func:`get_approximation` accepts.

    The same names are accepted by ``select_kernel(approximation=...)`` and
    ``kernelselect select --approximation``.

    Returns
    -------
    list of str
        Each name means the recipe with its default parameters.

    Examples
    --------
    >>> from kernelselect.operators import approximation_names
    >>> approximation_names()
    ['exact', 'mcm', 'random_mcm', 'nystrom', 'rff']
    """
    return list(_LAZY)


def get_approximation(approximation: str | Approximation | type[Approximation]) -> Approximation:
    """An :class:`Approximation` instance from a name (its defaults) or an instance."""
    if isinstance(approximation, Approximation):
        return approximation
    if isinstance(approximation, type) and issubclass(approximation, Approximation):
        return approximation()
    if isinstance(approximation, str):
        key = approximation.strip().lower().replace("-", "_")
        if key in ("nystroem",):
            key = "nystrom"
        valid = approximation_names()
        if key in valid:
            return _resolve(key)()
        raise ValueError(
            f"approximation={approximation!r} is not a known approximation; use one of "
            f"{', '.join(valid)} (or an instance such as kernelselect.Nystroem(n_landmarks=200))."
        )
    if isinstance(approximation, Parameterised):   # a machines' fitting recipe
        raise TypeError(approximation.selection_refusal())
    raise TypeError(
        f"approximation must be a name or an Approximation instance, got {approximation!r}."
    )
