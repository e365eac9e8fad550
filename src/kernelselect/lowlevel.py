"""The stable low-level API: validated thin wrappers over the compiled kernels.

Every function checks its inputs (raising ``ValueError`` that names the argument),
converts non-contiguous or other-dtype arrays, and then calls a ``nogil`` OpenMP
kernel. ``workers`` is the thread count (None: OpenMP's default, honouring
``OMP_NUM_THREADS``; -1: all cores).

Cython users can ``cimport`` the kernels themselves from ``kernelselect._mcm``,
``kernelselect._rff`` and ``kernelselect._kernels`` (the .pxd files ship with the
package).
"""

from ._columns import labeled_rff_column, rff_features, song_xu_column
from ._kernel_ops import kernel_block, kernel_matvec, kernel_sums

__all__ = [
    "song_xu_column",
    "labeled_rff_column",
    "rff_features",
    "kernel_block",
    "kernel_matvec",
    "kernel_sums",
]
