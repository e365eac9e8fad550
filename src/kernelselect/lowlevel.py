"""The stable low-level API: validated thin wrappers over the compiled kernels.

Every function checks its inputs (raising ``ValueError`` that names the argument),
converts non-contiguous or other-dtype arrays, and then calls a ``nogil`` OpenMP
kernel. ``workers`` is the thread count (None: OpenMP's default, honouring
``OMP_NUM_THREADS``; -1: all cores).

Cython users can ``cimport`` the kernels themselves from ``kernelselect._mcm``,
``kernelselect._rff`` and ``kernelselect._kernels`` (the .pxd files ship with the
package).

The grid pieces of the Song–Xu MCM on real data (pure Python/numpy) are here
too: ``choose_grid`` (grid shape m and the n′ it uses), ``grid_order``
(assignment of points to cells by recursive principal-direction splits) and
``fit_spacing`` (least-squares fit of the spacing h).
"""

from .primitives._columns import labeled_rff_column, rff_features, song_xu_column
from .primitives._grid import choose_grid, fit_spacing, grid_order
from .primitives._kernel_ops import kernel_block, kernel_matvec, kernel_sums

__all__ = [
    "song_xu_column",
    "labeled_rff_column",
    "rff_features",
    "kernel_block",
    "kernel_matvec",
    "kernel_sums",
    "choose_grid",
    "grid_order",
    "fit_spacing",
]
