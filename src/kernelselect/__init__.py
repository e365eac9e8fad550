"""kernelselect: fast kernel selection for kernel machines.

Selection criteria evaluated on structured stand-ins for the kernel matrix
(FFT-diagonalised multilevel circulant matrices, Nyström factors, random
features) and exact criteria computed by streaming over the kernel matrix.
"""

import importlib
from typing import TYPE_CHECKING, Any

from .utils._config import config_context, get_config, reset_config, set_config
from ._version import __version__

if TYPE_CHECKING:  # what the names below resolve to, for type checkers and IDEs
    from . import criteria, datasets, di, fft, kernels, lowlevel, models, operators
    from . import selection
    from .primitives._show_config import show_config
    from .models._cv import ProportionalNystroem, cross_validate_grid, nystrom_cv_setting
    from .di.transformers import DINystroem, DIRandomFourierFeatures
    from .selection._policy import GridEdgeWarning
    from .utils._warnings import ApproximationWarning, ConvergenceWarning
    from .criteria import CRITERIA, Criterion, get_criterion, register_criterion
    from .models import (KernelRidgeRegressor, KernelSelectionClassifier, KernelSelectionCV,
                         KernelSelectionRegressor, LSSVMClassifier, Standardizer, fit_krr,
                         fit_lssvm)
    from .solvers._nystroem_pcg import NystroemPCG
    from .operators.dense import Exact
    from .operators.mcm import MCM
    from .operators.nystrom import Nystroem
    from .operators.random_mcm import RandomMCM
    from .operators.rff import RFF
    from .selection import SelectionResult, select_kernel

# The public names are resolved on first access (PEP 562): `import kernelselect` loads
# neither the compiled extensions nor SciPy (whose BLAS the extensions link against),
# scikit-learn, pandas or matplotlib; `from kernelselect import X`, `kernelselect.X`,
# `dir(kernelselect)` and `from kernelselect import *` work as if they were imported.
# name → the module (relative to this package) that defines it.
_LAZY = {
    "show_config": "primitives._show_config",
    "select_kernel": "selection",
    "SelectionResult": "selection",
    "GridEdgeWarning": "selection._policy",
    "ConvergenceWarning": "utils._warnings",
    "ApproximationWarning": "utils._warnings",
    "Exact": "operators.dense",
    "Nystroem": "operators.nystrom",
    "RFF": "operators.rff",
    "NystroemPCG": "solvers._nystroem_pcg",
    "MCM": "operators.mcm",
    "RandomMCM": "operators.random_mcm",
    "Criterion": "criteria",
    "CRITERIA": "criteria",
    "get_criterion": "criteria",
    "register_criterion": "criteria",
    "cross_validate_grid": "models._cv",
    "nystrom_cv_setting": "models._cv",
    "ProportionalNystroem": "models._cv",
    "KernelRidgeRegressor": "models",
    "KernelSelectionCV": "models",
    "KernelSelectionClassifier": "models",
    "KernelSelectionRegressor": "models",
    "Standardizer": "models",
    "LSSVMClassifier": "models",
    "fit_krr": "models",
    "fit_lssvm": "models",
    "DIRandomFourierFeatures": "di.transformers",
    "DINystroem": "di.transformers",
}

# Public submodules, imported on first access as attributes (`kernelselect.criteria`).
#: former public names → their replacements (resolved with a FutureWarning)
_RENAMED = {"paper004_grid": "nystrom_cv_setting"}

_SUBMODULES = frozenset({
    "criteria", "datasets", "di", "fft", "kernels", "lowlevel", "models", "operators",
    "selection",
})

__all__ = [
    "__version__",
    "show_config",
    "set_config",
    "get_config",
    "reset_config",
    "config_context",
    "select_kernel",
    "SelectionResult",
    "GridEdgeWarning",
    "ConvergenceWarning",
    "ApproximationWarning",
    "Exact",
    "Nystroem",
    "RFF",
    "NystroemPCG",
    "MCM",
    "RandomMCM",
    "Criterion",
    "CRITERIA",
    "get_criterion",
    "register_criterion",
    "criteria",
    "datasets",
    "di",
    "fft",
    "lowlevel",
    "DIRandomFourierFeatures",
    "DINystroem",
    "fit_lssvm",
    "fit_krr",
    "cross_validate_grid",
    "nystrom_cv_setting",
    "ProportionalNystroem",
    "LSSVMClassifier",
    "KernelRidgeRegressor",
    "KernelSelectionCV",
    "KernelSelectionClassifier",
    "KernelSelectionRegressor",
    "Standardizer",
]


# Hidden from type checkers, so that they see exactly the names imported above and
# report a misspelt `kernelselect.X` instead of typing it as Any.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        if name in _LAZY:
            value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
            globals()[name] = value
            return value
        if name in _SUBMODULES:
            return importlib.import_module(f".{name}", __name__)
        if name in _RENAMED:
            from .utils._warnings import renamed_attribute
            return renamed_attribute(__name__, name, _RENAMED,
                                     {_RENAMED[name]: __getattr__(_RENAMED[name])})
        raise AttributeError(f"module 'kernelselect' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | _SUBMODULES)
