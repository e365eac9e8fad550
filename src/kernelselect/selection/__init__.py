"""Kernel selection: :func:`select_kernel` and what it returns.

The driver (``_driver``: plan, run, report) sits on the rules it follows when left
to its defaults (``_policy``), the search machinery (``_search``), the result and its
plots (``_result``, ``_plotting``) and the per-feature (ARD) selection (``_ard_select``,
over the objectives and search of :mod:`kernelselect.ard`).
"""

from ._ard_select import ArdSelectionResult
from ._driver import default_gammas, select_kernel
from ._driver import standardize_columns  # noqa: F401  (the user guide's standardisation)
from ._result import SearchLevel, SelectionResult

__all__ = ["select_kernel", "SelectionResult", "ArdSelectionResult", "SearchLevel",
           "default_gammas"]
