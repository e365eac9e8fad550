"""kernelselect: fast kernel selection for kernel machines.

Selection criteria evaluated on structured stand-ins for the kernel matrix
(FFT-diagonalised multilevel circulant matrices, Nyström factors, random
features) and exact criteria computed by streaming over the kernel matrix.
"""

import importlib
from typing import Any

from . import criteria, datasets, di, fft, lowlevel
from ._config import show_config
from ._cv import ProportionalNystroem, cross_validate_grid, paper004_grid
from ._resources import config_context, get_config, reset_config, set_config
from ._version import __version__
from .criteria import CRITERIA, Criterion, get_criterion, register_criterion
from .operators.dense import Exact
from .operators.mcm import MCM
from .operators.nystrom import Nystroem
from .operators.random_mcm import RandomMCM
from .operators.rff import RFF
from ._policy import GridEdgeWarning
from .selection import SelectionResult, select_kernel

# Names whose modules import scikit-learn are resolved on first access (PEP 562), so
# that `import kernelselect` stays fast and does not need scikit-learn;
# `from kernelselect import KernelSelectionCV` works as usual.
_LAZY = {
    "KernelRidgeRegressor": "models",
    "KernelSelectionCV": "models",
    "LSSVMClassifier": "models",
    "fit_krr": "models",
    "fit_lssvm": "models",
    "DIRandomFourierFeatures": "di.transformers",
    "DINystroem": "di.transformers",
}

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
    "Exact",
    "Nystroem",
    "RFF",
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
    "paper004_grid",
    "ProportionalNystroem",
    "LSSVMClassifier",
    "KernelRidgeRegressor",
    "KernelSelectionCV",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name == "models":
        return importlib.import_module(".models", __name__)
    raise AttributeError(f"module 'kernelselect' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | {"models"})
