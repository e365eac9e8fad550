"""kernelselect: fast kernel selection for kernel machines.

Selection criteria evaluated on structured stand-ins for the kernel matrix
(FFT-diagonalised multilevel circulant matrices, Nyström factors, random
features) and exact criteria computed by streaming over the kernel matrix.
"""

from ._config import show_config
from ._version import __version__

__all__ = ["__version__", "show_config"]
