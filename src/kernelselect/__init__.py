"""kernelselect: fast kernel selection for kernel machines.

Selection criteria evaluated on structured stand-ins for the kernel matrix
(FFT-diagonalised multilevel circulant matrices, Nyström factors, random
features) and exact criteria computed by streaming over the kernel matrix.
"""

from . import criteria, datasets, di, fft, lowlevel
from ._config import show_config
from ._di_transformers import DINystroem, DIRandomFourierFeatures
from ._version import __version__
from .criteria import CRITERIA, Criterion, get_criterion, register_criterion
from .operators.dense import Exact
from .operators.mcm import MCM
from .operators.nystrom import Nystroem
from .operators.random_mcm import RandomMCM
from .operators.rff import RFF
from .models import (
    KernelRidgeRegressor,
    KernelSelectionCV,
    LSSVMClassifier,
    ProportionalNystroem,
    cross_validate_grid,
    fit_krr,
    fit_lssvm,
    paper004_grid,
)
from .selection import SelectionResult, select_kernel

__all__ = [
    "__version__",
    "show_config",
    "select_kernel",
    "SelectionResult",
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
