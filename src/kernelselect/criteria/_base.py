"""The :class:`Criterion` record, its evaluation, the label encodings and the ridge
functions g(λ) that the criteria's formulas share."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional

import numpy as np
import numpy.typing as npt

from ..utils._labels import encode_labels, one_vs_rest
from ..operators._base import KernelOperator, RidgeFunction

DIRECTIONS = ("min", "max")
LABEL_KINDS = ("binary", "multiclass", "any", "matrix")


@dataclass(frozen=True)
class Criterion:
    """A kernel selection criterion.

    Attributes
    ----------
    name : str
        Registry name (lower case).
    direction : {"min", "max"}
        Whether the best kernel minimises or maximises the criterion.
    needs : str
        The operator capability the formula uses: ``"moments"`` (power moments,
        every operator), ``"spectral"`` (eigen-decomposition forms) or an
        operator-specific tag (e.g. ``"random_mcm"``). An approximation can compute
        the criterion when the tag is in its ``provides`` set.
    labels : {"binary", "multiclass", "any", "matrix"}
        "binary": y must have exactly two classes (encoded ±1). "multiclass": the
        criterion receives one-vs-rest ±1 columns (n, C) built from the class labels
        (:func:`one_vs_rest`). "matrix": ``select_kernel`` hands the criterion a
        target matrix (n, L): for class labels (binary or multi-class) the class
        indicator columns scaled to unit norm (:func:`~kernelselect.utils._labels.unit_indicators`),
        for a real target its column(s) — ``select_kernel`` accepts a real y of shape
        (n, L) when every requested criterion takes "matrix"; called directly, the
        criterion receives y as given.
    alpha_dependent : bool
        Whether the value depends on the ridge α (otherwise it is repeated across α).
    func : callable
        ``func(operator, y, alphas, **params)`` → array of shape (len(alphas),), or a
        scalar for α-independent criteria. ``y`` is in the original row order (the
        criterion restricts it with ``operator.restrict``); binary targets arrive
        encoded as ±1.
    params : mapping
        Default keyword parameters of ``func``.
    description : str
        One line: the formula and its source.
    needs_for : callable or None
        Optional ``needs_for(params) → tag`` when the requirement depends on the
        parameters (the hinge form of ``sm`` needs the spectral forms).
    check_params : callable or None
        Optional ``check_params(name, params) → params``: validates the resolved
        parameters (raising ``ValueError``/``TypeError`` that names the parameter and
        its range) before anything is computed.
    """

    name: str
    direction: str
    needs: str
    labels: str
    alpha_dependent: bool
    func: Callable[..., Any]
    params: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    needs_for: Optional[Callable[[Mapping[str, Any]], str]] = None
    check_params: Optional[Callable[[str, dict[str, Any]], dict[str, Any]]] = None

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {self.direction!r}.")
        if self.labels not in LABEL_KINDS:
            raise ValueError(f"labels must be one of {LABEL_KINDS}, got {self.labels!r}.")
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def requirement(self, params: Mapping[str, Any] | None = None) -> str:
        """The capability tag needed with these parameters."""
        if self.needs_for is not None:
            return self.needs_for({**self.params, **(params or {})})
        return self.needs

    def resolve_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults updated with ``params``; unknown keywords raise ``TypeError``."""
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            valid = ", ".join(sorted(self.params)) or "none"
            raise TypeError(
                f"criterion {self.name!r} got unknown parameter(s) {', '.join(unknown)}; "
                f"its parameters are: {valid}."
            )
        full = {**self.params, **params}
        if self.check_params is not None:
            full = self.check_params(self.name, full)
        return full

    def __call__(self, operator: KernelOperator, y: npt.ArrayLike,
                 alphas: npt.ArrayLike = (1.0,), **params: Any) -> np.ndarray:
        """Values for every α: array of shape (len(alphas),)."""
        return evaluate(self, operator, y, alphas, **params)


def encode_binary(y: npt.ArrayLike, criterion: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Two-valued y → ±1 floats (larger value → +1); raises when y has one class.

    Returns ``(y_pm, classes)``. More than two values raise as well: the binary
    criteria need exactly two classes (:func:`kernelselect.utils._labels.encode_labels`).
    """
    who = f" (criterion {criterion!r} needs two classes)" if criterion else ""
    enc = encode_labels(np.asarray(y, dtype=np.float64), "y", squeeze="none", exactly=2,
                        who=who)
    return enc.signed(), enc.classes


def check_operator(operator: Any, who: str) -> KernelOperator:
    """``operator`` itself, or a ``TypeError`` naming ``who`` when it is not a
    :class:`~kernelselect.operators.KernelOperator`."""
    if not isinstance(operator, KernelOperator):
        raise TypeError(
            f"{who}: operator must be a KernelOperator, built by an approximation "
            "(e.g. Exact().build(X, y, gamma, kernel='gaussian', state=None, "
            f"workers=None)), got {type(operator).__name__} {operator!r:.60}.")
    return operator


def _criterion_values(crit: Criterion, out: np.ndarray, n_alphas: int) -> np.ndarray:
    """A criterion function's result as (n_alphas,) values: a scalar or a single value
    is repeated over α; any other number of values raises, naming the criterion."""
    if out.ndim == 0 or out.size == 1:
        return np.full(n_alphas, out.reshape(()))
    if out.size != n_alphas:
        raise ValueError(
            f"criterion {crit.name!r} returned an array of shape {out.shape} for "
            f"{n_alphas} values of alpha; its function must return shape ({n_alphas},), "
            "one value per alpha in the order given (or a scalar when it does not "
            "depend on alpha).")
    return out.reshape(n_alphas)


def evaluate(crit: Criterion, operator: KernelOperator, y: npt.ArrayLike,
             alphas: npt.ArrayLike = (1.0,), **params: Any) -> np.ndarray:
    """Evaluate the :class:`Criterion` ``crit`` on one operator for every α: array
    (len(alphas),)."""
    check_operator(operator, f"criterion {crit.name!r}")
    full = crit.resolve_params(params)
    tag = crit.requirement(full)
    if tag == "spectral" and not operator.spectral:
        raise ValueError(
            f"criterion {crit.name!r} needs the spectral forms, which the "
            f"{operator.name!r} operator does not provide."
        )
    alphas = np.atleast_1d(np.asarray(alphas, dtype=np.float64))
    if crit.labels == "multiclass":
        y = one_vs_rest(y, who=f" (criterion {crit.name!r} needs two or more classes)")
    else:
        y = np.asarray(y, dtype=np.float64)
    if crit.labels == "binary":
        y, _ = encode_binary(y, crit.name)
    # A criterion undefined at a kernel (0/0, e.g. CKTA when K is constant) is NaN
    # there; the driver skips NaN when it picks the best kernel.
    values = np.empty(alphas.shape)
    for a, b in alpha_chunks(operator.path_rows, alphas.size):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            out = np.asarray(crit.func(operator, y, alphas[a:b], **full), dtype=np.float64)
        values[a:b] = _criterion_values(crit, out, b - a)
    return values


#: bytes of the (n, L) temporaries one piece of an α path may hold per criterion: the
#: forms of a whole path (diagonals, solves) are arrays of n × L, so a long path is
#: evaluated in pieces of about this size (the curves are independent per α)
ALPHA_CHUNK_BYTES = 32 * 2**20
#: assumed (n, L) float64 arrays alive at once in a criterion's forms
_PATH_TEMPORARIES = 8


def alpha_chunks(n: int, n_alphas: int) -> list[tuple[int, int]]:
    """Pieces [a, b) of an α path of ``n_alphas`` values on an operator whose forms
    hold ``n`` rows at once (its ``path_rows``), each of at least 4 values (an explicit
    solver strategy applies to up to 3) and about :data:`ALPHA_CHUNK_BYTES` of
    temporaries; one piece for ordinary paths. A streamed operator serves each piece
    by a pass over the rows, so it is one piece there."""
    per = max(4, ALPHA_CHUNK_BYTES // (8 * _PATH_TEMPORARIES * max(int(n), 1)))
    if n_alphas <= per:
        return [(0, n_alphas)]
    cuts = list(range(0, n_alphas, per))
    if n_alphas - cuts[-1] < 4:               # no short last piece
        cuts.pop()
    return [(a, b) for a, b in zip(cuts, cuts[1:] + [n_alphas])]


def resolve_label_loss(criterion: str, loss: str, y: np.ndarray) -> str:
    """The loss of a held-out-error criterion on one target column y: ``"auto"`` →
    the error rate for ±1 labels, else the squared residual; ``"error_rate"`` and
    ``"hybrid"`` count wrong signs, so they are refused for other values (they would
    return sign-agreement rates of a real target)."""
    labels = bool(np.all(np.abs(y) == 1.0))
    if loss == "auto":
        return "error_rate" if labels else "squared"
    if loss in ("error_rate", "hybrid") and not labels:
        raise ValueError(
            f"{criterion} with loss={loss!r} counts wrong signs of ±1 class labels, but y "
            "holds other values (a real target, or class codes): use loss='squared' for a "
            f"regression target, or criterion '{criterion}_multiclass' for several classes.")
    return loss


def _inv(alphas: np.ndarray, power: int = 1) -> RidgeFunction:
    """g(λ) = (λ + α)^(−power) for every α: (r,) → (r, L), i.e. K_α^(−power)."""
    return RidgeFunction("resolvent", alphas, power)


def _hat(alphas: np.ndarray, power: int = 1) -> RidgeFunction:
    """g(λ) = (λ/(λ + α))^power for every α, i.e. (K K_α⁻¹)^power."""
    return RidgeFunction("smoother", alphas, power)


def _comp(alphas: np.ndarray, power: int = 1, scale: npt.ArrayLike | None = None
          ) -> RidgeFunction:
    """g(λ) = (α/(λ + α))^power for every α, i.e. (αK_α⁻¹)^power = (I − S)^power.

    The error criteria are written with this bounded function (values in (0, 1])
    instead of α^p·K_α^(−p): the same numbers, but no overflow or 0·∞ when α is far
    below or above the kernel's eigenvalues. ``scale`` (per α) divides it further,
    for ratios whose terms would underflow (:func:`_unit_complement`).
    """
    return RidgeFunction("complement", alphas, power, scale)


def _unit_complement(operator: KernelOperator, alphas: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(tr αK_α⁻¹, s) with s = tr(αK_α⁻¹)/n per α (1 where that is 0 or not finite).

    (αK_α⁻¹)/s has mean eigenvalue 1, so forms that are ratios of homogeneous terms
    (GCV, the leave-one-out residuals) keep their terms in range even at α = 1e-300,
    where αK_α⁻¹ itself is of order 10⁻²⁹⁰ and its square underflows.
    """
    tr = np.atleast_1d(np.asarray(operator.trace(_comp(alphas)), dtype=np.float64))
    s = tr / operator.n
    return tr, np.where(np.isfinite(s) & (s > 0), s, 1.0)


def _quad(operator: KernelOperator, g: Callable[[np.ndarray], np.ndarray], p: np.ndarray
          ) -> Any:
    """pᵀ g(A) p for one probe → shape (L,) (or scalar)."""
    return operator.quadratic(g, p[:, None])[0, 0]


def _sigma(y: np.ndarray, sigma: float | None) -> float:
    return 0.01 * float(np.std(y)) if sigma is None else float(sigma)


def _class_indicators(yv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pos = (yv > 0).astype(np.float64)
    return pos, 1.0 - pos


def _ybar_signed(yv: np.ndarray, scale: float) -> np.ndarray:
    """ȳ_i = scale/n₊ for the positive class and −scale/n₋ for the negative one."""
    pos, neg = _class_indicators(yv)
    n_pos, n_neg = pos.sum(), neg.sum()
    return scale * (pos / n_pos - neg / n_neg)


def _real_param(criterion: str, name: str, value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"criterion {criterion!r}: {name} must be a real number, got {value!r}.")
    return float(value)


def _check_sigma(criterion: str, params: dict[str, Any]) -> dict[str, Any]:
    """σ: None (0.01·std(y)) or a finite noise level ≥ 0 in the units of y."""
    sigma = params.get("sigma")
    if sigma is not None:
        s = _real_param(criterion, "sigma", sigma)
        if not (np.isfinite(s) and s >= 0):
            raise ValueError(
                f"criterion {criterion!r}: sigma must be None (0.01·std(y)) or a finite "
                f"noise level ≥ 0 in the units of y, got {sigma!r}."
            )
        params = {**params, "sigma": s}
    return params
