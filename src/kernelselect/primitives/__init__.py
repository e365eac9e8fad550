"""The validated wrappers over the compiled kernels: kernel blocks, streamed products
and sums (``_kernel_ops``), circulant and random-feature columns (``_columns``), the
Song–Xu grid (``_grid``), and the build report ``show_config`` (``_show_config``).

Private: the stable public face of these wrappers is :mod:`kernelselect.lowlevel`;
the compiled extension modules themselves stay at the package root
(``kernelselect._kernels``, ``_rff``, ``_mcm``, ``_predict``, ``_nystrom_passes``,
``_openmp_info``), where ``cimport kernelselect.<module>`` finds them. Importing this
package imports none of its modules.
"""
