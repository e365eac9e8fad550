"""How the fitted machines solve when left to ``approximation="auto"``.

* **Exact up to** :data:`EXACT_FIT_MAX_N` rows: K + αI by one Cholesky factorisation,
  the reference model.
* **Beyond, the Nyström machine** (:class:`~kernelselect._nystrom_machine.NystroemPCG`)
  with m centres, m from :func:`auto_centres`.
"""

from __future__ import annotations

import math

__all__ = ["EXACT_FIT_MAX_N", "MIN_CENTRES", "MAX_CENTRES", "auto_centres"]

#: the exact dense fit is used up to this many rows
EXACT_FIT_MAX_N = 5000
#: fewest and most centres the automatic rule gives
MIN_CENTRES = 500
MAX_CENTRES = 20_000
#: centres per √n·log n
GROWTH = 1.0


def auto_centres(n: int, d_eff: float | None = None) -> int:
    """m for n rows (at most n): see the module notes."""
    m = GROWTH * math.sqrt(n) * math.log(n)
    return int(min(n, MAX_CENTRES, max(MIN_CENTRES, math.ceil(m))))
