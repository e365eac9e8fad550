"""Kernel selection criteria, each written once over the operator protocol.

A criterion is evaluated on a :class:`~kernelselect.operators._base.KernelOperator`
``A`` (the kernel matrix K, or a stand-in for it) and a target vector ``y``, for a
whole path of ridge values α at once. The ridge is added to the kernel matrix:
K_α = K + αI; paper 002 writes μl, paper 004 writes μ (docs/references.md names the
papers and maps their parameters).

Criteria that need only *power moments* (Pᵀ Aʳ P, tr Aʳ, diag A) run on every
operator, the streaming exact one included; the others need the *spectral forms*
(aᵀ g(A) b, tr h(A), diag g(A), g(A) b) and run on every operator that knows an
eigendecomposition. Label conventions: a target with exactly two distinct values is
a binary problem and is encoded as ±1 (the larger value → +1, see
:func:`encode_binary`); "binary" criteria require two classes.

Availability (exact = dense eigh or streaming; the streaming exact operator has the
moments only; the random_* criteria of :mod:`kernelselect.random_criteria` need the
randomised circulant operator, and ``di``/``kdi`` (:mod:`kernelselect.di`) the spectral forms):

=========  =========  ==========  =====  =======  =====  =======  ======  ===========
criterion  direction  needs       exact  stream.  mcm    nystrom  rff     labels
=========  =========  ==========  =====  =======  =====  =======  ======  ===========
ree        min        spectral    yes    no       yes    yes      yes     any
ipe        min        spectral    yes    no       yes    yes      yes     any
c1         min        spectral    yes    no       yes    yes      yes     any
gcv        min        spectral    yes    no       yes    yes      yes     any
eloo       min        spectral    yes    no       yes    yes      yes     any
kta        max        moments     yes    yes      yes    yes      yes     any
ckta       max        moments     yes    yes      yes    yes      yes     any
fsm        min        moments     yes    yes      yes    yes      yes     binary
mmd        max        moments     yes    yes      yes    yes      yes     binary
sm         max        moments     yes    yes      yes    yes      yes     binary
er         min        spectral    yes    no       yes    yes      yes     any
=========  =========  ==========  =====  =======  =====  =======  ======  ===========

``sm`` with the hinge form (``h=`` given) needs the spectral forms.
``eloo_multiclass`` (min, spectral, every spectral operator) is the one-vs-rest form
of ``eloo`` for C ≥ 2 classes: it receives one-vs-rest ±1 columns (n, C).
:func:`approximations_for` answers the question for the approximations that are
installed; ``docs/criteria.md`` holds the same table with the formulas.
"""

import numbers
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping, Optional

import numpy as np

from . import random_criteria as _rc
from ._validation import check_positive, check_positive_int
from .di import operator_di
from .operators import approximation_names, get_approximation
from .operators._base import RidgeFunction

__all__ = [
    "Criterion",
    "CRITERIA",
    "register_criterion",
    "unregister_criterion",
    "get_criterion",
    "criterion_names",
    "approximations_for",
    "check_compatible",
    "encode_binary",
    "one_vs_rest",
    "evaluate_criterion",
]

DIRECTIONS = ("min", "max")
LABEL_KINDS = ("binary", "multiclass", "any")


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
    labels : {"binary", "multiclass", "any"}
        "binary": y must have exactly two classes (encoded ±1). "multiclass": the
        criterion receives one-vs-rest ±1 columns (n, C) built from the class labels
        (:func:`one_vs_rest`).
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
    func: Callable
    params: Mapping = field(default_factory=dict)
    description: str = ""
    needs_for: Optional[Callable] = None
    check_params: Optional[Callable] = None

    def __post_init__(self):
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {self.direction!r}.")
        if self.labels not in LABEL_KINDS:
            raise ValueError(f"labels must be one of {LABEL_KINDS}, got {self.labels!r}.")
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def requirement(self, params=None):
        """The capability tag needed with these parameters."""
        if self.needs_for is not None:
            return self.needs_for({**self.params, **(params or {})})
        return self.needs

    def resolve_params(self, params):
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

    def __call__(self, operator, y, alphas=(1.0,), **params):
        """Values for every α: array of shape (len(alphas),)."""
        return evaluate_criterion(self, operator, y, alphas, **params)


def register_criterion(criterion: "Criterion", *, replace: bool = False) -> "Criterion":
    """Add a third-party :class:`Criterion` to :data:`CRITERIA` (``replace=True`` to
    overwrite an entry of the same name).

    The criteria of the library are declared once, with their metadata, in the
    registry at the end of this module, and are all present as soon as
    :mod:`kernelselect` is imported. A criterion added here is then available by its
    name everywhere a name is accepted (:func:`kernelselect.select_kernel`,
    :class:`kernelselect.KernelSelectionCV`, the command line) on the approximations
    whose ``provides`` set holds its ``needs`` tag. Example::

        def trace_ratio(operator, y, alphas):
            return operator.power_trace(1) / operator.n      # mean of diag K

        register_criterion(Criterion("trace_ratio", "max", "moments", "any", False,
                                     trace_ratio, description="tr K / n"))
        select_kernel(X, y, criterion="trace_ratio")
    """
    if not isinstance(criterion, Criterion):
        raise TypeError(f"register_criterion expects a Criterion, got {type(criterion).__name__}.")
    name = criterion.name.lower()
    if name in _REGISTRY and not replace:
        raise ValueError(f"a criterion named {name!r} is already registered.")
    _REGISTRY[name] = criterion
    return criterion


def unregister_criterion(name: str) -> Optional["Criterion"]:
    """Remove a criterion from the registry; returns it (None when absent)."""
    return _REGISTRY.pop(str(name).strip().lower(), None)


def criterion_names() -> list[str]:
    """Sorted names of the registered criteria."""
    return sorted(_REGISTRY)


def get_criterion(name: "str | Criterion") -> "Criterion":
    """The registered :class:`Criterion` called ``name`` (case-insensitive)."""
    if isinstance(name, Criterion):
        return name
    if not isinstance(name, str):
        raise TypeError(f"criterion must be a name (str), got {name!r}.")
    key = name.strip().lower()
    if key not in _REGISTRY:
        raise ValueError(
            f"criterion={name!r} is not a known criterion; use one of "
            f"{', '.join(criterion_names())}."
        )
    return _REGISTRY[key]


def approximations_for(criterion, params=None):
    """Names of the known approximations (with default parameters) that can compute
    ``criterion``."""
    crit = get_criterion(criterion)
    tag = crit.requirement(params)
    out = []
    for name in approximation_names():
        if tag in get_approximation(name).provides:
            out.append(name)
    return out


def check_compatible(criterion, approximation, params=None):
    """Raise ``ValueError`` when ``approximation`` cannot compute ``criterion``."""
    crit = get_criterion(criterion)
    tag = crit.requirement(params)
    if tag not in approximation.provides:
        can = approximations_for(crit, params)
        label = getattr(approximation, "label", None) or type(approximation).__name__
        raise ValueError(
            f"criterion {crit.name!r} cannot be computed with approximation {label!r} "
            f"(it needs {tag!r}, which {label!r} does not provide); use one of "
            f"{', '.join(can) if can else '(none installed)'}."
        )


def encode_binary(y, criterion=None):
    """Two-valued y → ±1 floats (larger value → +1); raises when y has one class.

    Returns ``(y_pm, classes)``. More than two values raise as well: the binary
    criteria need exactly two classes.
    """
    y = np.asarray(y, dtype=np.float64)
    classes = np.unique(y)
    who = f" (criterion {criterion!r} needs two classes)" if criterion else ""
    if classes.size < 2:
        raise ValueError(
            f"y has a single class ({np.asarray(classes[0]).tolist()!r} for all {y.size} samples){who}; "
            "give labels of two classes."
        )
    if classes.size > 2:
        raise ValueError(
            f"y has {classes.size} distinct values{who}; binary criteria need exactly two "
            "classes (use a one-vs-rest encoding for multiclass data)."
        )
    return np.where(y == classes[1], 1.0, -1.0), classes


def evaluate_criterion(criterion, operator, y, alphas=(1.0,), **params):
    """Evaluate one criterion on one operator for every α: array (len(alphas),)."""
    crit = get_criterion(criterion)
    full = crit.resolve_params(params)
    tag = crit.requirement(full)
    if tag == "spectral" and not operator.spectral:
        raise ValueError(
            f"criterion {crit.name!r} needs the spectral forms, which the "
            f"{operator.name!r} operator does not provide."
        )
    alphas = np.atleast_1d(np.asarray(alphas, dtype=np.float64))
    if crit.labels == "multiclass":
        y = one_vs_rest(y)
    else:
        y = np.asarray(y, dtype=np.float64)
    if crit.labels == "binary":
        y, _ = encode_binary(y, crit.name)
    # A criterion undefined at a kernel (0/0, e.g. CKTA when K is constant) is NaN
    # there; the driver skips NaN when it picks the best kernel.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        out = np.asarray(crit.func(operator, y, alphas, **full), dtype=np.float64)
    return np.broadcast_to(out, alphas.shape).copy() if out.ndim == 0 else out.reshape(alphas.shape)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _inv(alphas, power=1):
    """g(λ) = (λ + α)^(−power) for every α: (r,) → (r, L), i.e. K_α^(−power)."""
    return RidgeFunction("resolvent", alphas, power)


def _hat(alphas, power=1):
    """g(λ) = (λ/(λ + α))^power for every α, i.e. (K K_α⁻¹)^power."""
    return RidgeFunction("smoother", alphas, power)


def _comp(alphas, power=1, scale=None):
    """g(λ) = (α/(λ + α))^power for every α, i.e. (αK_α⁻¹)^power = (I − S)^power.

    The error criteria are written with this bounded function (values in (0, 1])
    instead of α^p·K_α^(−p): the same numbers, but no overflow or 0·∞ when α is far
    below or above the kernel's eigenvalues. ``scale`` (per α) divides it further,
    for ratios whose terms would underflow (:func:`_unit_complement`).
    """
    return RidgeFunction("complement", alphas, power, scale)


def _unit_complement(operator, alphas):
    """(tr αK_α⁻¹, s) with s = tr(αK_α⁻¹)/n per α (1 where that is 0 or not finite).

    (αK_α⁻¹)/s has mean eigenvalue 1, so forms that are ratios of homogeneous terms
    (GCV, the leave-one-out residuals) keep their terms in range even at α = 1e-300,
    where αK_α⁻¹ itself is of order 10⁻²⁹⁰ and its square underflows.
    """
    tr = np.atleast_1d(np.asarray(operator.trace(_comp(alphas)), dtype=np.float64))
    s = tr / operator.n
    return tr, np.where(np.isfinite(s) & (s > 0), s, 1.0)


def _quad(operator, g, p):
    """pᵀ g(A) p for one probe → shape (L,) (or scalar)."""
    return operator.quadratic(g, p[:, None])[0, 0]


def _sigma(y, sigma):
    return 0.01 * float(np.std(y)) if sigma is None else float(sigma)


def _class_indicators(yv):
    pos = (yv > 0).astype(np.float64)
    return pos, 1.0 - pos


def _ybar_signed(yv, scale):
    """ȳ_i = scale/n₊ for the positive class and −scale/n₋ for the negative one."""
    pos, neg = _class_indicators(yv)
    n_pos, n_neg = pos.sum(), neg.sum()
    return scale * (pos / n_pos - neg / n_neg)


# ---------------------------------------------------------------------------
# spectral criteria
# ---------------------------------------------------------------------------


def ree(operator, y, alphas):
    """C_ree = (α/n) yᵀ K_α⁻¹ y: the regularised training error (paper 002, eq. 1).

    Evaluated as (1/n) yᵀ(αK_α⁻¹)y, a quadratic form of g(λ) = α/(λ + α) ∈ (0, 1];
    minimise.
    """
    yv = operator.restrict(y)
    return _quad(operator, _comp(alphas), yv) / operator.n


def ipe(operator, y, alphas, sigma=None):
    """C_ipe = (α²/n) yᵀK_α⁻²y + (σ²/n) tr(K² K_α⁻²) (paper 002, eq. 2).

    σ defaults to 0.01·std(y), as in the paper's experiments; a given σ must be a
    finite number ≥ 0 in the units of y. Minimise.
    """
    yv = operator.restrict(y)
    s = _sigma(yv, sigma)
    n = operator.n
    bias = _quad(operator, _comp(alphas, 2), yv) / n          # (α²/n) yᵀK_α⁻²y
    var = operator.trace(_hat(alphas, 2))
    return bias + s ** 2 / n * var


def c1(operator, y, alphas, sigma=None):
    """C1 = (α²/n) yᵀK_α⁻²y + (σ²/n) tr(K K_α⁻¹): effective-dimension criterion
    (paper 000, eq. 4, exact form). σ defaults to 0.01·std(y). Minimise."""
    yv = operator.restrict(y)
    s = _sigma(yv, sigma)
    n = operator.n
    bias = _quad(operator, _comp(alphas, 2), yv) / n          # (α²/n) yᵀK_α⁻²y
    dof = operator.trace(_hat(alphas, 1))
    return bias + s ** 2 / n * dof


def gcv(operator, y, alphas):
    """GCV = n‖(I − S)y‖² / tr(I − S)², S = K K_α⁻¹ (Golub, Heath & Wahba 1979).

    With I − S = α K_α⁻¹ this is n yᵀK_α⁻²y / (tr K_α⁻¹)²; it is evaluated with
    I − S itself (eigenvalues α/(λ + α) ∈ (0, 1]), so that no power of α or of
    K_α⁻¹ over- or underflows. Minimise.
    """
    yv = operator.restrict(y)
    tr, s = _unit_complement(operator, alphas)
    num = _quad(operator, _comp(alphas, 2, s), yv)           # yᵀ(I − S)²y / s²
    return operator.n * num / (tr / s) ** 2


def _loo_sums(operator, Y, alphas, row_sums):
    """Σ over points of ``row_sums(Y_rows, e_rows)`` for the LOO residuals e of the
    LSSVM with bias, target columns Y (n, t); e_rows has shape (m, t, L).

    P = [[K_α, 1], [1ᵀ, 0]] is shared by every column: with ρ = K_α⁻¹1 and
    ν_c = K_α⁻¹y_c, b_c = 1ᵀν_c / 1ᵀρ, a_c = ν_c − ρ b_c and
    (P⁻¹)_ii = (K_α⁻¹)_ii − ρ_i² / 1ᵀρ, the residual of point i for column c is
    e_ic = a_ic / (P⁻¹)_ii (Cawley & Talbot 2003; one diagonal for all columns,
    as in Cawley 2006 for one-vs-rest problems). e is unchanged when K_α⁻¹ is replaced
    by αK_α⁻¹/s (a and (P⁻¹)_ii both scale by α/s), which is what is evaluated: its
    eigenvalues stay in range at any α. The sums go through ``operator.reduce_rows``,
    so a streaming operator never holds an n-vector.
    """
    n, t = Y.shape
    g = _comp(alphas, 1, _unit_complement(operator, alphas)[1])   # αK_α⁻¹/s: same e
    B = np.concatenate([Y, np.ones((n, 1))], axis=1)
    S = operator.quadratic(g, B)                         # [Y 1]ᵀ αK_α⁻¹/s [Y 1], (t+1, t+1, L)
    s11 = S[t, t]                                        # ∝ 1ᵀK_α⁻¹1
    b = S[t, :t] / s11[None, :]                          # 1ᵀK_α⁻¹y_c / 1ᵀK_α⁻¹1, (t, L)

    def residuals(Bb, gB, dg):
        ky, k1 = gB[:, :t, :], gB[:, t, :]
        # may run in a worker thread of a streaming pass (error states are per thread)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            e = (ky - k1[:, None, :] * b[None, :, :]) / (dg - k1 ** 2
                                                         / s11[None, :])[:, None, :]
            return row_sums(Bb[:, :t], e)

    return operator.reduce_rows(g, B, residuals)


LOO_LOSSES = ("auto", "squared", "error_rate", "hybrid")


def _loo_loss(sums, n, loss):
    """From (Σ 0-1 errors, Σ squared residuals / columns) (2, L): the error rate, or
    with ``"hybrid"`` the error rate plus s / (n(1 + s)), s the mean squared residual.
    The added term lies in [0, 1/n), below the step 1/n of the error rate, so it
    orders kernels by error rate first and breaks ties (and plateaus) by the smooth
    PRESS."""
    rate = sums[0] / n
    if loss == "error_rate":
        return rate
    s = sums[1] / n
    return rate + s / (n * (1.0 + s))


def eloo(operator, y, alphas, loss="auto"):
    """Closed-form leave-one-out error of the LSSVM with bias (Cawley & Talbot 2003).

    P = [[K_α, 1], [1ᵀ, 0]], [a; b] = P⁻¹[y; 0]: b = 1ᵀK_α⁻¹y / 1ᵀK_α⁻¹1 and
    a = K_α⁻¹(y − b1). The LOO residual of point i is e_i = a_i / (P⁻¹)_ii with
    (P⁻¹)_ii = (K_α⁻¹)_ii − (K_α⁻¹1)_i² / (1ᵀK_α⁻¹1).

    ``loss="squared"``: mean e_i² (PRESS/n; regression); ``"error_rate"``: mean of
    [y_i(y_i − e_i) ≤ 0] (classification, the LOO prediction is y_i − e_i);
    ``"hybrid"``: the error rate with ties broken by PRESS, rate + s/(n(1 + s)),
    s = mean e_i²; ``"auto"``: error rate when y is ±1, squared otherwise. Minimise.

    e_i is unchanged when K_α⁻¹ is replaced by αK_α⁻¹ (a and (P⁻¹)_ii both scale by
    α), which is what is evaluated: its eigenvalues α/(λ + α) lie in (0, 1].
    """
    yv = operator.restrict(y)
    if loss == "auto":
        loss = "error_rate" if np.all(np.abs(yv) == 1.0) else "squared"

    def sums(Yb, e):
        yb, e = Yb[:, 0], e[:, 0, :]
        wrong = np.sum(yb[:, None] * (yb[:, None] - e) <= 0.0, axis=0)
        return np.stack([wrong.astype(np.float64), np.sum(e ** 2, axis=0)])

    out = _loo_sums(operator, yv[:, None], alphas, sums)
    if loss == "squared":
        return out[1] / operator.n
    return _loo_loss(out, operator.n, loss)


def eloo_multiclass(operator, Y, alphas, loss="error_rate"):
    """Closed-form leave-one-out error of the one-vs-rest LSSVM (Cawley 2006).

    Y (n, C) holds ±1 one-vs-rest targets (+1 in the column of the sample's class).
    All C machines share the bordered matrix P, so one diagonal of P⁻¹ gives every
    residual e_ic (see :func:`_loo_residuals`); the LOO decision values are
    y_ic − e_ic and the LOO prediction is their argmax.

    ``loss="error_rate"``: mean [argmax_c (y_ic − e_ic) ≠ class_i]; ``"hybrid"``: that
    rate with ties broken by the mean squared residual over all columns (as in
    :func:`eloo`); ``"squared"``: mean e_ic². Minimise.
    """
    Yv = operator.restrict(Y)
    if Yv.ndim != 2 or Yv.shape[1] < 2:
        raise ValueError("eloo_multiclass needs one-vs-rest targets of shape (n, C), C ≥ 2.")
    C = Yv.shape[1]

    def sums(Yb, E):
        wrong = np.argmax(Yb[:, :, None] - E, axis=1) != np.argmax(Yb, axis=1)[:, None]
        return np.stack([np.sum(wrong, axis=0).astype(np.float64),
                         np.sum(E ** 2, axis=(0, 1)) / C])

    out = _loo_sums(operator, Yv, alphas, sums)
    if loss == "squared":
        return out[1] / operator.n
    return _loo_loss(out, operator.n, "error_rate" if loss == "auto" else loss)


def one_vs_rest(y):
    """Class labels (n,) → ±1 one-vs-rest columns (n, C), classes in sorted order;
    a 2-D ±1 array is returned as it is."""
    arr = np.asarray(y)
    if arr.ndim == 2:
        Y = np.asarray(arr, dtype=np.float64)
        if not np.all(np.abs(Y) == 1.0):
            raise ValueError("one-vs-rest targets must hold only -1 and +1.")
        return Y
    classes, codes = np.unique(arr, return_inverse=True)
    if classes.size < 2:
        raise ValueError("y has a single class; eloo_multiclass needs two or more.")
    Y = -np.ones((arr.shape[0], classes.size))
    Y[np.arange(arr.shape[0]), codes] = 1.0
    return Y


# ---------------------------------------------------------------------------
# moment criteria
# ---------------------------------------------------------------------------


def kta(operator, y, alphas):
    """Kernel–target alignment ⟨K, yyᵀ⟩/(‖K‖_F ‖yyᵀ‖_F) = yᵀKy / (‖y‖² ‖K‖_F)
    (Cristianini et al., NIPS 2001). For ±1 labels ‖y‖² = n and this is yᵀKy/(n‖K‖_F);
    dividing by ‖y‖² keeps it invariant to the scale of y. Maximise."""
    yv = operator.restrict(y)
    yky = operator.power_quadratic(1, yv[:, None])[0, 0]
    fro = np.sqrt(operator.power_trace(2))
    return yky / (float(yv @ yv) * fro)


def ckta(operator, y, alphas):
    """Centred alignment ⟨K_c, y_c y_cᵀ⟩ / (‖K_c‖_F ‖y_c‖²), K_c = HKH
    (Cortes, Mohri & Rostamizadeh 2010).

    ⟨K_c, y_c y_cᵀ⟩ = y_cᵀ K y_c. The operators form the centred matrix itself
    (``KernelOperator.centred_terms``: dense HKH by blocks; eigenbasis operators the
    centred basis; MCM the spectrum without its zero frequency), which keeps CKTA
    accurate when K is close to a constant matrix (small γ·d²), where the centred
    kernel is small but well defined. The streaming exact operator has power moments
    only, ‖K_c‖_F² = ‖K‖_F² − (2/n)‖K1‖² + (1ᵀK1)²/n², and gives NaN when that falls
    below 10⁻¹²‖K‖_F² (the rounding of its terms). NaN too when K_c vanishes.
    Maximise.
    """
    yv = operator.restrict(y)
    yc = yv - yv.mean()
    ycky, kc_sq = operator.centred_terms(yv)
    if not kc_sq > 0:
        # the centred kernel vanishes (to rounding): CKTA is undefined
        return np.nan
    return ycky / (np.sqrt(kc_sq) * float(yc @ yc))


def _diagonal_sums(Bb, _, diag):
    return diag @ Bb


#: relative rounding level below which FSM's differences of kernel sums carry no digits
FSM_ROUNDING = 1e-13


def fsm(operator, y, alphas):
    """Feature space measure (Nguyen & Ho 2007): (s₊ + s₋) / ‖m₊ − m₋‖.

    m_± are the class means in feature space and s_±² = Σ_{i∈±}‖φ(x_i) − m_±‖²/(n_± − 1)
    the sample variances; all from diag K and the class-block sums S_ab = 1_aᵀK1_b
    (+inf when the class means coincide):
    Σ_{i∈±}‖φ(x_i) − m_±‖² = Σ_{i∈±}K_ii − S_±±/n_±, ‖m₊ − m₋‖² =
    S₊₊/n₊² + S₋₋/n₋² − 2S₊₋/(n₊n₋) (evaluated as ȳᵀKȳ with ȳ = 1₊/n₊ − 1₋/n₋,
    which does not cancel). A class of one point has s = 0. NaN when the scatters lie
    within the rounding of their terms (a numerically constant K). Minimise.
    """
    yv = operator.restrict(y)
    pos, neg = _class_indicators(yv)
    n_pos, n_neg = pos.sum(), neg.sum()
    B = np.stack([pos, neg], axis=1)
    S = operator.power_quadratic(1, B)
    d_pos, d_neg = operator.reduce_rows(None, B, _diagonal_sums)     # Σ_{i∈±} K_ii
    scatter_pos = d_pos - S[0, 0] / n_pos
    scatter_neg = d_neg - S[1, 1] / n_neg
    if scatter_pos + scatter_neg <= FSM_ROUNDING * (abs(d_pos) + abs(d_neg)):
        # both within-class scatters lie inside the rounding of their two terms (K is
        # numerically constant on each class, e.g. a rank-one stand-in at tiny γ): the
        # ratio is not determined, rather than 0 (which would be "best")
        return np.nan
    s_pos = np.sqrt(max(scatter_pos, 0.0) / (n_pos - 1)) if n_pos > 1 else 0.0
    s_neg = np.sqrt(max(scatter_neg, 0.0) / (n_neg - 1)) if n_neg > 1 else 0.0
    # ‖m₊ − m₋‖² = ȳᵀKȳ, ȳ = 1₊/n₊ − 1₋/n₋: one quadratic form of the difference probe
    # instead of S₊₊/n₊² + S₋₋/n₋² − 2S₊₋/(n₊n₋), whose terms cancel when K is close to
    # a constant matrix
    gap_sq = float(operator.power_quadratic(1, _ybar_signed(yv, 1.0)[:, None])[0, 0])
    if gap_sq <= FSM_ROUNDING * (S[0, 0] / n_pos ** 2 + S[1, 1] / n_neg ** 2):
        # coinciding class means: no separation at all (+inf), undefined if no spread either
        return np.inf if s_pos + s_neg > 0 else np.nan
    return (s_pos + s_neg) / np.sqrt(gap_sq)


def mmd(operator, y, alphas):
    """Biased maximum mean discrepancy ȳᵀKȳ = ‖m₊ − m₋‖², ȳ_i = 1/n₊ or −1/n₋
    (Gretton et al. 2007; paper 003 shows it is a special case of SM). Maximise."""
    ybar = _ybar_signed(operator.restrict(y), 1.0)
    return operator.power_quadratic(1, ybar[:, None])[0, 0]


def sm(operator, y, alphas, r=3, h=None):
    """Spectral measure (paper 003): (1/n) ȳᵀ φ(N) ȳ, N = K/(1ᵀK1), ȳ_i = n/n₊ or −n/n₋.

    High-degree form φ(t) = tʳ (default r = 3, an integer in [1, 16]):
    (1/n) ȳᵀKʳȳ / (1ᵀK1)ʳ, power moments only. Hinge form (``h`` given, in [0, 1)): φ(t) = t for t > h, 0 otherwise, i.e.
    (1/n) Σ_{λ_i(N) > h} λ_i ⟨ȳ, q_i⟩², which needs the spectral forms. Maximise.
    """
    yv = operator.restrict(y)
    n = operator.n
    ybar = _ybar_signed(yv, float(n))
    ones = np.ones(n)
    total = operator.power_quadratic(1, ones[:, None])[0, 0]
    if h is not None:
        hh = float(h)

        def phi(lam):
            t = lam / total
            return np.where(t > hh, t, 0.0)

        return _quad(operator, phi, ybar) / n
    r = int(r)
    if r < 1:
        raise ValueError(f"r must be an integer ≥ 1, got {r!r}.")
    return operator.power_quadratic(r, ybar[:, None])[0, 0] / total ** r / n


def _sm_needs(params):
    return "moments" if params.get("h") is None else "spectral"


#: largest degree r of the spectral measure's high-degree form φ(t) = tʳ
SM_MAX_DEGREE = 16


def _real_param(criterion, name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"criterion {criterion!r}: {name} must be a real number, got {value!r}.")
    return float(value)


def _check_sigma(criterion, params):
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


def _check_sm(criterion, params):
    """r: an integer in [1, SM_MAX_DEGREE]; h: None or a threshold in [0, 1)."""
    r, h = params.get("r"), params.get("h")
    if isinstance(r, (bool, np.bool_)) or not isinstance(r, numbers.Integral):
        raise TypeError(f"criterion {criterion!r}: r must be an integer, got {r!r}.")
    if not 1 <= int(r) <= SM_MAX_DEGREE:
        raise ValueError(
            f"criterion {criterion!r}: r must be an integer in [1, {SM_MAX_DEGREE}] (the "
            f"degree of φ(t) = tʳ; higher powers of K leave the float64 range), got {r!r}."
        )
    if h is not None:
        hv = _real_param(criterion, "h", h)
        if not (np.isfinite(hv) and 0.0 <= hv < 1.0):
            raise ValueError(
                f"criterion {criterion!r}: h must be None (the high-degree form) or a "
                f"threshold in [0, 1) on the eigenvalues of K/1ᵀK1, which lie in [0, 1]; "
                f"got {h!r}."
            )
        h = hv
    return {**params, "r": int(r), "h": h}


def _check_loss(criterion, params):
    loss = params.get("loss")
    if loss not in LOO_LOSSES:
        raise ValueError(
            f"criterion {criterion!r}: loss must be 'auto', 'squared', 'error_rate' or "
            f"'hybrid', got {loss!r}."
        )
    return params




# ---------------------------------------------------------------------------
# eigenvalue ratio (spectral; self-contained addition)
# ---------------------------------------------------------------------------


def eigenvalue_ratio(lam, n, t):
    """ER(A, t) = Σ_{i>t} λ_i / Σ_{i≤t} λ_i over the eigenvalues of A in decreasing order.

    ``lam`` are the eigenvalues an operator carries (its other n − len(lam) eigenvalues
    are 0); negative values (rounding, or an indefinite stand-in) count as 0. NaN when
    the t leading eigenvalues sum to 0.
    """
    lam = np.sort(np.clip(np.asarray(lam, dtype=np.float64), 0.0, None))[::-1]
    if not 1 <= t < n:
        raise ValueError(f"t must be an integer with 1 ≤ t < n = {n}, got t={t!r}; "
                         "give a smaller number of leading eigenvalues.")
    main = float(lam[:t].sum())
    tail = float(lam[t:].sum())
    return tail / main if main > 0 else np.nan


def er(operator, y, alphas, t=None, c=1.0):
    """Eigenvalue-ratio criterion (after Liu & Liao, AAAI 2015). Minimise.

    ER(K, t) = Σ_{i>t} λ_i / Σ_{i≤t} λ_i, the ratio of the tail of the spectrum of K
    (eigenvalues in decreasing order) to its t leading eigenvalues: small when the
    kernel concentrates on few directions. Alone it always prefers the widest kernel
    (K → 11ᵀ has ER → 0), so the criterion pairs it with the data fit of the
    regularised least-squares machine the bound is for:

        C_ER(K) = (α²/n) yᵀK_α⁻²y + c · ER(K, t),

    the first term being the mean squared training residual of KRR, ‖y − K K_α⁻¹y‖²/n.
    The two parameters are explicit: ``t`` leading eigenvalues (default ⌈√n⌉) and the
    trade-off ``c`` ≥ 0 (default 1). Liu & Liao define ER as this ratio and select by
    minimising a bound built on it; the exact form of their bound and their choice of
    t could not be consulted here, so this is the closest defined form, documented as
    such in docs/criteria.md. Needs the eigenvalues (O(n³) on the dense operator, as
    paper 003's Table 1 states for ER); on a low-rank stand-in the eigenvalues past
    its rank are 0.
    """
    yv = operator.restrict(y)
    n = operator.n
    tt = int(np.ceil(np.sqrt(n))) if t is None else check_positive_int(t, "t")
    cc = check_positive(c, "c", allow_zero=True)
    ratio = eigenvalue_ratio(operator.eigenvalues, n, min(tt, n - 1) if t is None else tt)
    fit = alphas ** 2 / n * _quad(operator, _inv(alphas, 2), yv)
    return fit + cc * ratio


# ---------------------------------------------------------------------------
# the registry: every criterion of the library, declared once with its metadata
# ---------------------------------------------------------------------------

_REGISTRY = {c.name: c for c in (
    Criterion("ree", "min", "spectral", "any", True, ree, {},
              "regularised training error (α/n) yᵀK_α⁻¹y (paper 002)"),
    Criterion("ipe", "min", "spectral", "any", True, ipe, {"sigma": None},
              "in-sample prediction error (α²/n)yᵀK_α⁻²y + (σ²/n)tr(K²K_α⁻²) (paper 002)",
              check_params=_check_sigma),
    Criterion("c1", "min", "spectral", "any", True, c1, {"sigma": None},
              "effective dimension (α²/n)yᵀK_α⁻²y + (σ²/n)tr(KK_α⁻¹) (paper 000)",
              check_params=_check_sigma),
    Criterion("kta", "max", "moments", "any", False, kta, {},
              "kernel-target alignment yᵀKy/(‖y‖²‖K‖_F) (Cristianini et al.)"),
    Criterion("ckta", "max", "moments", "any", False, ckta, {},
              "centred kernel-target alignment (Cortes et al.)"),
    Criterion("fsm", "min", "moments", "binary", False, fsm, {},
              "feature space measure (s₊+s₋)/‖m₊−m₋‖ (Nguyen & Ho)"),
    Criterion("mmd", "max", "moments", "binary", False, mmd, {},
              "biased MMD ȳᵀKȳ, ȳ = ±1/n_± (Gretton et al.)"),
    Criterion("sm", "max", "moments", "binary", False, sm, {"r": 3, "h": None},
              "spectral measure (1/n)ȳᵀφ(N)ȳ, N = K/1ᵀK1 (paper 003)", _sm_needs,
              check_params=_check_sm),
    Criterion("eloo", "min", "spectral", "any", True, eloo, {"loss": "auto"},
              "closed-form leave-one-out error of the LSSVM (Cawley & Talbot)",
              check_params=_check_loss),
    Criterion("eloo_multiclass", "min", "spectral", "multiclass", True, eloo_multiclass,
              {"loss": "error_rate"},
              "closed-form leave-one-out error of the one-vs-rest LSSVM (Cawley 2006)",
              check_params=_check_loss),
    Criterion("gcv", "min", "spectral", "any", True, gcv, {},
              "generalised cross-validation n‖(I−S)y‖²/tr(I−S)² (Golub et al.)"),
    Criterion("er", "min", "spectral", "any", True, er, {"t": None, "c": 1.0},
              "eigenvalue ratio: (α²/n)yᵀK_α⁻²y + c·Σ_{i>t}λ_i/Σ_{i≤t}λ_i (after Liu & Liao "
              "2015)"),
    # randomised labelled circulant (needs the RandomMCM operator)
    Criterion("random_c1", "min", "random_mcm", "any", True, _rc.random_c1, {},
              "Π/(s₀+α)² + Σ s_j/(s_j+α) (Ding et al., AAAI 2018, eq. 4)"),
    Criterion("random_kta", "max", "random_mcm", "any", False, _rc.random_kta, {},
              "s₀ / (Π Σ s_j) (Ding et al., AAAI 2018, eq. 5)"),
    Criterion("random_mmd", "max", "random_mcm", "binary", False, _rc.random_mmd, {},
              "s̄₀ with class-weighted ȳ (Ding et al., AAAI 2018)"),
    Criterion("random_eloo", "min", "random_mcm", "any", True, _rc.random_eloo, {"loss": "auto"},
              "LSSVM ELOO with ÛÛᴴ on the nD lifted points (built on Ding et al., AAAI 2018, "
              "eq. 6)"),
    Criterion("random_kta_row", "max", "random_mcm", "any", False, _rc.random_kta_row, {},
              "‖Z̃ᵀy‖² / (n‖Z̃ᵀZ̃‖_F): zero row of s, KTA(Z)"),
    Criterion("random_kta_row_2g", "max", "random_mcm", "any", False, _rc.random_kta_row_2g, {},
              "‖Z̃_γᵀy‖² / (n‖Z̃_2γᵀ1‖): zero rows at γ and 2γ"),
    Criterion("random_mmd_row", "max", "random_mcm", "binary", False, _rc.random_mmd_row, {},
              "‖Z̃ᵀȳ‖²: zero row of s̄"),
    Criterion("random_c1_rff", "min", "random_mcm", "any", True, _rc.random_c1_rff,
              {"sigma": None}, "C1 of Z̃Z̃ᵀ from the D × D Gram matrix"),
    # discriminant information (spectral forms of the operator)
    Criterion("di", "max", "spectral", "any", False, operator_di, {"rho": 1e-4, "task": "auto"},
              "discriminant information tr((FᵀCF+ρI)⁻¹FᵀCYYᵀCF) of the features of A = FFᵀ "
              "(Al et al., eq. 6/7)"),
    Criterion("kdi", "max", "spectral", "any", False, operator_di, {"rho": 1e-4, "task": "auto"},
              "kernel discriminant information tr((GᵀCG+ρB)⁻¹GᵀCYYᵀCG) of Nyström landmarks "
              "(Al et al., eq. 9); equals di on A"),
)}
CRITERIA = MappingProxyType(_REGISTRY)
"""Read-only mapping name → :class:`Criterion`: the criteria of the library (complete
at import) and any added with :func:`register_criterion`."""
