"""kernelselect: fast kernel selection for kernel machines.

Selection criteria evaluated on structured stand-ins for the kernel matrix
(FFT-diagonalised multilevel circulant matrices, Nyström factors, random
features) and exact criteria computed by streaming over the kernel matrix.
"""

from ._config import show_config
from ._version import __version__
from ._di_transformers import DINystroem, DIRandomFourierFeatures
from . import di

__all__ = ["__version__", "show_config", "di", "DIRandomFourierFeatures", "DINystroem"]
