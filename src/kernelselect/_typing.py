"""Type aliases used in the annotations of the public API."""

from typing import Any, Callable, Optional, Union

import numpy as np

__all__ = ["RandomState", "SpectralFunction", "PreparedState", "RowFunction"]

#: What ``random_state`` accepts: a seed, a Generator or a SeedSequence (a legacy
#: RandomState is converted to a Generator seeded from it).
RandomState = Union[int, np.integer, np.random.Generator, np.random.SeedSequence,
                    np.random.RandomState, None]

#: A scalar function of the eigenvalues: an array (r,) → (r,), or (r, L) for a path of
#: L ridges (a :class:`~kernelselect.operators._base.RidgeFunction` is one).
SpectralFunction = Callable[[np.ndarray], np.ndarray]

#: What :meth:`Approximation.prepare` draws once per selection, handed to ``build``.
PreparedState = Optional[dict[str, Any]]

#: The per-row-block function of :meth:`KernelOperator.reduce_rows`:
#: (B_b, (g(A)B)_b or None, (diag g(A))_b) → an array of fixed shape.
RowFunction = Callable[[np.ndarray, Optional[np.ndarray], np.ndarray], np.ndarray]
