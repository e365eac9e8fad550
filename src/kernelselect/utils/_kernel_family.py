"""The kernel families as a typed value, made once from the name a user gives.

Both families are radial with κ(x, x) = 1:

- Gaussian   κ(x, x′) = exp(−γ‖x − x′‖²); spectral density N(0, 2γI);
- Laplacian  κ(x, x′) = exp(−γ‖x − x′‖₁); spectral density Π_j Cauchy(0, γ).

Everything that depends on the family — the code of the compiled kernels, the power of
the distance that γ multiplies, whether the compiled kernel gains accuracy from a
common translation of the points, the scale of the random-feature frequencies — is a
property of its :class:`Kernel`. A public entry point turns the user's string into a
``Kernel`` once (``Kernel.of``, as PyWavelets' ``Wavelet(name)``) and the code below it
receives that value instead of comparing strings.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ._validation import KERNEL_CODES, check_kernel

__all__ = ["Kernel"]


class Kernel(str, enum.Enum):
    """A kernel family: ``Kernel.GAUSSIAN`` or ``Kernel.LAPLACIAN``.

    A ``Kernel`` is the string of its name as well (``Kernel.GAUSSIAN == "gaussian"``),
    so it can be passed wherever a kernel name is accepted.

    Examples
    --------
    >>> from kernelselect.utils._kernel_family import Kernel
    >>> k = Kernel.of("RBF")
    >>> k, k.power, k.frequency_scale(2.0)
    (<Kernel.GAUSSIAN: 'gaussian'>, 2, 2.0)
    """

    GAUSSIAN = "gaussian"
    LAPLACIAN = "laplacian"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def of(cls, kernel: Any) -> Kernel:
        """The family named by ``kernel`` (a name, case and spaces ignored, ``"rbf"`` for
        the Gaussian, or a ``Kernel``); ``ValueError`` listing the known names."""
        if isinstance(kernel, cls):
            return kernel
        if not isinstance(kernel, str):
            return cls(check_kernel(kernel))
        family = _FAMILY_OF_NAME.get(kernel)
        if family is None:                 # checked once per spelling, then looked up
            family = _FAMILY_OF_NAME[kernel] = cls(check_kernel(kernel))
        return family

    @property
    def code(self) -> int:
        """The family's code in the compiled kernels."""
        return KERNEL_CODES[self.value]

    @property
    def power(self) -> int:
        """p in κ = exp(−γ d(x, x′)) with d = ‖x − x′‖_p^p: 2 for the Gaussian, 1 for the
        Laplacian. Scaling the points by s scales d by s^p, so γ·s^p keeps K."""
        return 2 if self is Kernel.GAUSSIAN else 1

    @property
    def translates(self) -> bool:
        """Whether the compiled kernel is more accurate on translated points: the
        Gaussian forms ‖x‖² + ‖z‖² − 2x·z, whose cancellation shrinks when the points
        are centred (K is unchanged by a common translation); the Laplacian sums
        |x_j − z_j| directly."""
        return self is Kernel.GAUSSIAN

    def frequency_scale(self, gamma: float) -> float:
        """s_γ with frequencies w = s_γ w⁰ from standard draws w⁰: √(2γ) (Gaussian,
        w ~ N(0, 2γI)) or γ (Laplacian, w_j ~ Cauchy(0, γ))."""
        return float(np.sqrt(2.0 * gamma)) if self is Kernel.GAUSSIAN else float(gamma)

    def standard_frequencies(self, rng: np.random.Generator, shape: tuple[int, int]
                             ) -> np.ndarray:
        """Standard draws w⁰ of the spectral density: normal (Gaussian) or Cauchy
        (Laplacian) entries."""
        if self is Kernel.GAUSSIAN:
            return rng.standard_normal(shape)
        return rng.standard_cauchy(shape)


#: the family of each spelling already checked by :meth:`Kernel.of`
_FAMILY_OF_NAME: dict[str, Kernel] = {}
