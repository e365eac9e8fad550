"""The kernels as a typed value, made once from the name a user gives.

Three kernels, all with κ(x, x) = 1:

- Gaussian     κ(x, x′) = exp(−γ‖x − x′‖²); spectral density N(0, 2γI);
- Laplacian    κ(x, x′) = exp(−γ‖x − x′‖₁); spectral density Π_j Cauchy(0, γ);
- per-feature  κ(x, x′) = exp(−Σ_k γ_k (x_k − x′_k)²), γ ∈ ℝ^d, γ_k > 0 (automatic
  relevance determination, Rasmussen & Williams 2006, §5.1); spectral density
  N(0, 2 diag γ). It is the Gaussian kernel with γ = 1 on the scaled points
  x·diag(√γ), which is how the compiled code evaluates it (:meth:`Kernel.points`).

Everything that depends on the kernel — the shape of γ and its check, the family the
compiled code runs and its code, the power of the distance that γ multiplies, whether
the compiled kernel gains accuracy from a common translation of the points, the scaling
of the points and of the random-feature frequencies, the derivative of K in log γ — is
a property of its :class:`Kernel`. A public entry point turns the user's argument into a
``Kernel`` once (:meth:`Kernel.of`) and the code below it receives that value instead of
comparing names. The public face of this module is :mod:`kernelselect.kernels`.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np
import numpy.typing as npt

from ._resources import check_allocation
from ._validation import KERNEL_CODES, check_kernel, check_positive

__all__ = ["Kernel", "kernel_or_auto"]


class Kernel(str, enum.Enum):
    """A kernel: ``Kernel.GAUSSIAN``, ``Kernel.LAPLACIAN`` or ``Kernel.ARD``.

    A ``Kernel`` is the string of its name as well (``Kernel.ARD == "ard"``), so it can
    be passed wherever a kernel name is accepted.

    Examples
    --------
    >>> from kernelselect.kernels import Kernel
    >>> k = Kernel.of("RBF")
    >>> k, k.power, k.frequency_scale(2.0)
    (<Kernel.GAUSSIAN: 'gaussian'>, 2, 2.0)
    >>> a = Kernel.of("ard")
    >>> a.per_feature, a.compiled, a.check_gamma(0.5, n_features=2)
    (True, <Kernel.GAUSSIAN: 'gaussian'>, array([0.5, 0.5]))
    """

    GAUSSIAN = "gaussian"
    LAPLACIAN = "laplacian"
    ARD = "ard"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    # ------------------------------------------------------------------ the parse
    @classmethod
    def of(cls, kernel: Any, *, per_feature: bool = True) -> Kernel:
        """The kernel named by ``kernel``: a name (case and surrounding spaces ignored,
        ``"rbf"`` for the Gaussian) or a ``Kernel``, which passes through.

        ``per_feature=False`` is for the paths that take a single γ: ``"ard"`` then
        raises a ``ValueError`` naming the entry points that take it. An unknown name
        raises a ``ValueError`` listing the accepted ones. ``"auto"`` is not a kernel
        (the selection's policy chooses one): see :func:`kernel_or_auto`."""
        if isinstance(kernel, cls):
            family = kernel
        elif isinstance(kernel, str) and kernel in _FAMILY_OF_NAME:
            family = _FAMILY_OF_NAME[kernel]
        elif not per_feature:              # the error lists the one-γ kernels only
            family = cls(check_kernel(kernel))
            if isinstance(kernel, str):    # a one-γ kernel: looked up from now on
                _FAMILY_OF_NAME[kernel] = family
        else:
            family = _parse(kernel, ())
            if isinstance(kernel, str):    # checked once per spelling, then looked up
                _FAMILY_OF_NAME[kernel] = family
        if family is Kernel.ARD and not per_feature:
            check_kernel(family.value)     # the message naming where the kernel is taken
        return family

    # ------------------------------------------------------------------ γ
    @property
    def per_feature(self) -> bool:
        """Whether γ has one value per feature, shape (d,), rather than being a scalar."""
        return self is Kernel.ARD

    def check_gamma(self, gamma: Any, n_features: int | None = None,
                    name: str = "gamma") -> Any:
        """γ checked for this kernel: a finite float > 0, or for the per-feature kernel a
        float64 array of shape (n_features,) of finite values > 0 (a scalar is spread
        over every feature). ``TypeError``/``ValueError`` naming ``name``.

        ``n_features=None`` with the per-feature kernel takes a 1-D γ of any length."""
        if not self.per_feature:
            return check_positive(gamma, name)
        try:
            g = np.asarray(gamma, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a positive number or an array of one positive "
                            f"number per feature for kernel='ard', got {gamma!r}.") from None
        if g.ndim == 0 and n_features is not None:
            g = np.full(n_features, float(g))
        if g.ndim != 1 or (n_features is not None and g.shape != (n_features,)):
            want = "(n_features,)" if n_features is None else f"({n_features},)"
            raise ValueError(f"{name} has shape {g.shape}; kernel='ard' takes one value per "
                             f"feature, shape {want} (or a scalar for all features).")
        if not np.all(np.isfinite(g)) or np.any(g <= 0):
            k = int(np.flatnonzero(~(np.isfinite(g) & (g > 0)))[0])
            raise ValueError(f"{name}[{k}] = {g[k]!r}: every per-feature γ must be finite "
                             "and > 0 (a feature without influence has a small γ, not 0).")
        return g

    def default_gamma(self, n_features: int) -> Any:
        """γ = 1/d (scikit-learn's ``gamma=None``): a float, or that value for every
        feature (shape (d,)) for the per-feature kernel."""
        g = 1.0 / n_features
        return np.full(n_features, g) if self.per_feature else g

    # ------------------------------------------------------------------ the compiled family
    @property
    def compiled(self) -> Kernel:
        """The family the compiled kernels evaluate for this kernel: itself, or the
        Gaussian for the per-feature kernel (on the points of :meth:`points`)."""
        return Kernel.GAUSSIAN if self is Kernel.ARD else self

    @property
    def code(self) -> int:
        """The code of :attr:`compiled` in the compiled kernels."""
        return KERNEL_CODES[self.compiled.value]

    @property
    def power(self) -> int:
        """p in κ = exp(−γ d(x, x′)) with d = ‖x − x′‖_p^p for :attr:`compiled`: 2 for
        the Gaussian, 1 for the Laplacian. Scaling the points by s scales d by s^p, so
        γ·s^p keeps K."""
        return 2 if self.compiled is Kernel.GAUSSIAN else 1

    @property
    def translates(self) -> bool:
        """Whether the compiled kernel is more accurate on translated points: the
        Gaussian forms ‖x‖² + ‖z‖² − 2x·z, whose cancellation shrinks when the points
        are centred (K is unchanged by a common translation); the Laplacian sums
        abs(x_j − z_j) directly."""
        return self.compiled is Kernel.GAUSSIAN

    def points(self, X: npt.ArrayLike, gamma: Any) -> tuple[Any, Any]:
        """(X′, γ′) such that :attr:`compiled` on X′ with γ′ is this kernel on X with γ.

        The per-feature kernel: (X·diag(√γ), 1.0), since Σ_k γ_k (x_k − x′_k)² =
        ‖x·diag(√γ) − x′·diag(√γ)‖². The copy is O(nd), the cheapest correct route
        beside a kernel block's O(n_x n_z d); float32 stays float32, anything else
        becomes float64. Otherwise (X, γ) unchanged. γ is taken as checked
        (:meth:`check_gamma`)."""
        if not self.per_feature:
            return X, gamma
        X = np.asarray(X)
        dtype = np.float32 if X.dtype == np.float32 else np.float64
        scale = np.sqrt(np.asarray(gamma, dtype=np.float64))
        return np.ascontiguousarray(X.astype(np.float64, copy=False) * scale, dtype=dtype), 1.0

    # ------------------------------------------------------------------ random features
    def frequency_scale(self, gamma: float) -> float:
        """s_γ with frequencies w = s_γ w⁰ from standard draws w⁰ for a scalar γ:
        √(2γ) (Gaussian, w ~ N(0, 2γI)) or γ (Laplacian, w_j ~ Cauchy(0, γ))."""
        if self.compiled is Kernel.GAUSSIAN:
            return float(np.sqrt(2.0 * gamma))
        return float(gamma)

    def standard_frequencies(self, rng: np.random.Generator, shape: tuple[int, int]
                             ) -> np.ndarray:
        """Standard draws w⁰ of the spectral density: normal (Gaussian, per-feature) or
        Cauchy (Laplacian) entries."""
        if self.compiled is Kernel.GAUSSIAN:
            return rng.standard_normal(shape)
        return rng.standard_cauchy(shape)

    def scale_frequencies(self, W0: npt.ArrayLike, gamma: Any) -> np.ndarray:
        """Frequencies for γ from standard draws W0 (d, D) (Rahimi & Recht 2007):
        √(2γ)·W0 (Gaussian, w ~ N(0, 2γI)), γ·W0 (Laplacian, w_j ~ Cauchy(0, γ)), or
        row k scaled by √(2γ_k) (per-feature, w ~ N(0, 2 diag γ)). γ is taken as
        checked."""
        W0 = np.asarray(W0, dtype=np.float64)
        if self.per_feature:
            return np.sqrt(2.0 * np.asarray(gamma, dtype=np.float64))[:, None] * W0
        if self is Kernel.GAUSSIAN:
            return np.sqrt(2.0 * gamma) * W0
        return float(gamma) * W0

    # ------------------------------------------------------------------ derivative
    def log_gamma_derivative(self, X: npt.ArrayLike, Z: npt.ArrayLike, gamma: Any,
                             K: npt.ArrayLike | None = None) -> np.ndarray:
        """∂K/∂log γ for the block K_ij = κ(x_i, z_j), from the formula.

        With κ = exp(−γ d(x, z)), ∂κ/∂log γ = γ ∂κ/∂γ = −γ d(x, z) κ: shape (n, m) for
        the Gaussian (d = ‖x − z‖²) and the Laplacian (d = ‖x − z‖₁). The per-feature
        kernel κ = exp(−Σ_k γ_k (x_k − z_k)²) has one derivative per feature,
        ∂κ/∂log γ_k = −γ_k (x_k − z_k)² κ: shape (d, n, m). A gradient search over
        θ = log γ uses these (Rasmussen & Williams 2006, §5.4.1).

        ``K`` is the block if it is already at hand (else it is formed here, densely, in
        float64). This is the dense form, O(n m d) memory for the per-feature kernel
        (checked against the memory guard); γ is taken as checked."""
        X = np.asarray(X, dtype=np.float64)
        Z = np.asarray(Z, dtype=np.float64)
        n, m, d = X.shape[0], Z.shape[0], X.shape[1]
        blocks = d if self.per_feature else 1
        check_allocation(8.0 * (blocks + 2) * n * m,
                         f"the derivative of the {n} × {m} kernel block in log γ",
                         "take the derivative on fewer rows at a time")
        diff = X[:, None, :] - Z[None, :, :]                       # (n, m, d)
        if self.per_feature:
            g = np.asarray(gamma, dtype=np.float64)
            terms = np.moveaxis(g * diff ** 2, -1, 0)              # γ_k (x_k − z_k)²
            K = np.exp(-terms.sum(axis=0)) if K is None else np.asarray(K, np.float64)
            return -terms * K
        dist = np.sum(diff ** 2 if self is Kernel.GAUSSIAN else np.abs(diff), axis=-1)
        K = np.exp(-gamma * dist) if K is None else np.asarray(K, np.float64)
        return -gamma * dist * K


def _parse(kernel: Any, also: tuple[str, ...]) -> Kernel:
    """The kernel named by ``kernel`` (no cache); the error lists ``also`` as well."""
    if isinstance(kernel, str) and kernel.strip().lower() == Kernel.ARD.value:
        return Kernel.ARD
    return Kernel(check_kernel(kernel, also=(Kernel.ARD.value, *also)))


#: the argument that lets the selection's policy choose the kernel
AUTO = "auto"


def kernel_or_auto(kernel: Any) -> Kernel | str:
    """The kernel a user's ``kernel`` argument names, where ``"auto"`` is accepted.

    Returns the string ``"auto"`` (case and spaces ignored: the selection's policy then
    chooses the kernel), or the :class:`Kernel` the argument names (:meth:`Kernel.of`);
    ``ValueError`` listing every accepted name otherwise."""
    if isinstance(kernel, str) and not isinstance(kernel, Kernel) \
            and kernel.strip().lower() == AUTO:
        return AUTO
    if isinstance(kernel, Kernel):
        return kernel
    return _parse(kernel, (AUTO,))


#: the kernel of each spelling already checked by :meth:`Kernel.of`
_FAMILY_OF_NAME: dict[str, Kernel] = {}
