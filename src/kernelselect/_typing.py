"""Type aliases used in the annotations of the public API."""

from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

__all__ = ["RandomState", "SpectralFunction", "PreparedState", "RowFunction", "Gammas"]

#: What ``random_state`` accepts: a seed, a Generator or a SeedSequence (a legacy
#: RandomState is converted to a Generator seeded from it).
RandomState = Union[int, np.integer, np.random.Generator, np.random.SeedSequence,
                    np.random.RandomState, None]

#: A scalar function of the eigenvalues: an array (r,) → (r,), or (r, L) for a path of
#: L ridges (a :class:`~kernelselect.operators._base.RidgeFunction` is one).
SpectralFunction = Callable[[np.ndarray], np.ndarray]

#: What :meth:`Approximation.prepare` fixes once per data set, handed to ``build``: each
#: approximation's own frozen dataclass (``ExactState``, ``NystroemState``, …), or None.
PreparedState = Any

#: A grid of kernel parameters γ (positive floats), as the drivers pass it.
Gammas = Union[Sequence[float], np.ndarray]

#: The per-row-block function of :meth:`KernelOperator.reduce_rows`:
#: (B_b, (g(A)B)_b or None, (diag g(A))_b) → an array of fixed shape.
RowFunction = Callable[[np.ndarray, Optional[np.ndarray], np.ndarray], np.ndarray]
