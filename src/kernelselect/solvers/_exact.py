"""Solvers for least-squares SVM (with bias) and kernel ridge regression (no bias).

Both machines need solutions of K_α u = z with K_α = K + αI (the ridge α is added to
the kernel matrix; docs/references.md, "Conventions"). The LSSVM of Ding &
Liao, "Nyström approximate model selection for LSSVM", PAKDD 2012, eqs. 4–9) solves
K_α ρ = 1 and K_α ν = y and sets

    b = 1ᵀν / 1ᵀρ,   a = ν − ρ b,   f(x) = Σ_i a_i κ(x, x_i) + b.

(Ding & Liao (PAKDD 2012)'s Algorithm 1 prints b = 1ᵀy/1ᵀρ in step 5; eq. 9 and the bordered
system give 1ᵀν/1ᵀρ, which is what is used here.) Kernel ridge regression is the
same without the bias row: a = K_α⁻¹ y, f(x) = Σ_i a_i κ(x, x_i), as scikit-learn's
KernelRidge.

Fitting builds the operator of the approximation for one γ, as the selection does
(``approximation.build``), and solves on it for the whole α path at once:

- exact: :class:`~kernelselect.operators.dense.DenseOperator` gives K_α⁻¹[1, Y]
  (``apply_function`` with a :class:`~kernelselect.operators.RidgeFunction`) by its
  ``exact_solver`` strategy: "cholesky" (one factorisation per α), "eigh" (one
  eigendecomposition) or "tridiagonal" (one reduction K = QTQᵀ, O(n) per α); the
  model is the dual form above, predicting with the true kernel;
- Nyström and random features:
  :class:`~kernelselect.operators._lowrank.LowRankOperator`, K̃ = VVᵀ. The machine
  is the model on the feature map φ whose Gram matrix K̃ is, f(x) = φ(x)ᵀw + b, with
  w from the ridge problem min ‖Vw + b1 − y‖² + α‖w‖² (b unpenalised for the
  LSSVM) solved through a backward-stable QR and SVD of V in k dimensions
  (:func:`~kernelselect.operators._lowrank.ridge_weights`). On the training points
  it is the LSSVM / KRR on K̃ — the model the criteria score — and it extends to
  new points by the feature map: random features z(x), or the Nyström map
  φ(x) = Tᵀk(landmarks, x) (V = K(X, landmarks)·T), so a Nyström model predicts
  from its c landmarks and the c coefficients β = Tw alone. (The dual a = K̃_α⁻¹y
  of the same fit, evaluated with the true kernel κ(x, X)a as Ding & Liao (PAKDD 2012) and earlier
  versions did, is a different model: the part of y outside range(V) enters a
  divided by α and is amplified by κ, so at small α its test error grows like 1/α.)
- the Song–Xu multilevel circulant (Ding et al., TNNLS 2020) is a
  stand-in for grid cells, not for the training points, so the machines do not train
  on it (:func:`check_machine` says why).

Prediction evaluates the kernel between new points and the support points (the
training points, or the Nyström landmarks) in blocks of rows
(:func:`cross_kernel_matvec`), so the full test × train matrix is never held;
random-feature models predict in their primal form z(x)ᵀw + b.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .. import _predict, lowlevel
from ..utils._dask import is_dask_array
from ..primitives._kernel_ops import condition
from ..kernels import Kernel
from ..utils._validation import check_random_state
from ..operators import KernelOperator, RidgeFunction, get_approximation
from ..operators._base import check_function_output
from ..operators._lowrank import LowRankOperator
from ..operators.dense import MACHINE_SOLVERS, DenseOperator, _triangle_norms
from .._policy import JACKKNIFE_PLUS_MAX_N
from ..operators.mcm import MCM_MACHINE_REFUSAL  # noqa: F401  (its home; named here too)
from ..utils._validation import check_grid, check_matrix
from ..utils._threads import (SMALL_BLOCK, block_threads, block_workers,  # noqa: F401
                              one_blas_thread)
from ..utils._threads import blas_for_flops as small_blas
from .._typing import PreparedState, RandomState
from ._recipe import MachineRecipe

if TYPE_CHECKING:
    from ..operators import Approximation

__all__ = [
    "EXACT_SOLVERS",
    "dual_solution",
    "cross_kernel_matvec",
    "check_alphas",
    "block_workers",
    "KernelMachine",
    "fit_kernel_machine",
    "check_machine",
    "machine_recipe",
    "resolve_machine",
    "OperatorRecipe",
]

#: the strategies of the exact operator that fitting accepts as ``exact_solver``
EXACT_SOLVERS = MACHINE_SOLVERS


def check_alphas(alphas: Any, name: str = "alpha") -> np.ndarray:
    """A 1-D float array of finite α > 0 (a scalar becomes shape (1,))."""
    return check_grid(alphas, name, " (the ridge added to K)")


def dual_solution(operator: KernelOperator, Y: np.ndarray, alphas: np.ndarray, bias: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Dual coefficients (and intercepts) for every α from the operator's resolvent.

    Parameters
    ----------
    operator : KernelOperator
        The (stand-in for the) kernel matrix K of one γ; its ``apply_function`` with
        ``RidgeFunction("resolvent", alphas)`` gives K_α⁻¹ for the whole path.
    Y : ndarray of shape (n, t)
        Targets (t outputs; ±1 columns for classification), in the operator's order.
    alphas : ndarray of shape (L,)
    bias : bool
        LSSVM with bias (Ding & Liao, PAKDD 2012, eqs. 8–9) or kernel ridge regression.

    Returns
    -------
    coef : ndarray of shape (n, t, L)
        a = ν − ρb (bias) or a = K_α⁻¹y.
    intercept : ndarray of shape (t, L)
        b = 1ᵀν/1ᵀρ, zeros without bias.
    """
    Y = np.asarray(Y, dtype=np.float64)
    Y = Y[:, None] if Y.ndim == 1 else Y
    if Y.shape[0] != operator.n:
        raise ValueError(f"Y has {Y.shape[0]} rows, the operator acts on {operator.n}.")
    alphas = check_alphas(alphas)
    t = Y.shape[1]
    check_function_output(operator.n, t + int(bias), alphas.size)    # before any solve
    resolvent = RidgeFunction("resolvent", alphas)
    if not bias:
        coef = operator.apply_function(resolvent, Y)
        return coef, np.zeros((t, alphas.size))
    U = operator.apply_function(resolvent, np.column_stack([np.ones(operator.n), Y]))
    rho, nu = U[:, :1, :], U[:, 1:, :]
    denom = rho.sum(axis=0)                                      # 1ᵀρ, (1, L)
    if np.any(denom == 0.0) or not np.all(np.isfinite(denom)):
        raise np.linalg.LinAlgError(
            "1ᵀK_α⁻¹1 is zero or not finite: the LSSVM bias is undefined for this kernel "
            "stand-in and α (an indefinite approximation); increase α."
        )
    b = nu.sum(axis=0) / denom                                   # (t, L)
    coef = nu - rho * b[None, :, :]
    return coef, b


def cross_kernel_matvec(X_new: np.ndarray, X_train: np.ndarray, coef: np.ndarray,
                        gamma: Any, kernel: str = "gaussian", workers: int | None = None,
                        block_bytes: float | None = None) -> np.ndarray:
    """K(X_new, X_train) @ coef without holding the full cross-kernel matrix.

    Parameters
    ----------
    X_new : ndarray of shape (n_new, d)
    X_train : ndarray of shape (n_train, d)
    coef : ndarray of shape (n_train,) or (n_train, ...)
    gamma : float, or array of shape (d,) for ``kernel="ard"``
    kernel : {"gaussian", "laplacian", "ard"}
        ``"ard"``: the Gaussian kernel with γ = 1 on X·diag(√γ) (scaled copies of both
        sets, O((n_new + n_train)d) against the product's O(n_new n_train d)).
    workers : int or None
        Threads (None: OpenMP default; -1: all cores).
    block_bytes : int or None
        None: the compiled streaming kernel (``kernelselect._predict``): an OpenMP
        loop over blocks of 64 new points, each block K(X_new[rows], X_train) formed
        in a per-thread buffer and multiplied by ``coef`` (BLAS on one thread
        inside), the result independent of the number of threads. An int: the
        Python fallback, blocks of ``block_bytes / (8 n_train)`` rows through
        :func:`kernelselect.lowlevel.kernel_block`.

    Returns
    -------
    out : ndarray of shape (n_new,) + coef.shape[1:], float64

    Notes
    -----
    O(n_new d n_train) time; extra memory threads × 64 × n_train doubles (compiled)
    or one block (fallback) plus the output. The data are centred on the training
    mean first (Gaussian; K is unchanged) as :func:`kernelselect.lowlevel.kernel_block`
    does, for accuracy of ‖x‖² + ‖z‖² − 2x·z.
    """
    family = Kernel.of(kernel)
    X_new, gamma_compiled = family.points(X_new, gamma)
    X_train, _ = family.points(X_train, gamma)
    gamma, kernel = gamma_compiled, family.compiled
    coef = np.asarray(coef, dtype=np.float64)
    n_new, n_train = X_new.shape[0], X_train.shape[0]
    if coef.shape[0] != n_train:
        raise ValueError(f"coef has {coef.shape[0]} rows but X_train has {n_train}.")
    C2 = np.ascontiguousarray(coef.reshape(n_train, -1))
    out = np.zeros((n_new, C2.shape[1]))
    if n_new and C2.shape[1]:
        if block_bytes is None:
            _compiled_cross_matvec(X_new, X_train, C2, gamma, kernel, workers, out)
        else:
            rows = max(1, int(block_bytes // (8 * max(n_train, 1))))
            for start in range(0, n_new, rows):
                stop = min(n_new, start + rows)
                K = lowlevel.kernel_block(X_new[start:stop], X_train, gamma, kernel=kernel,
                                          workers=block_workers((stop - start) * n_train, workers))
                np.matmul(K, C2, out=out[start:stop])
    return out.reshape((n_new,) + coef.shape[1:])


def _compiled_cross_matvec(X_new: np.ndarray, X_train: np.ndarray, C: np.ndarray, gamma: float,
                           kernel: str, workers: int | None, out: np.ndarray) -> None:
    family = Kernel.of(kernel, per_feature=False)
    Xn = check_matrix(X_new, "X_new", dtype=np.float64)
    Xt = check_matrix(X_train, "X_train", dtype=np.float64)
    if Xn.shape[1] != Xt.shape[1]:
        raise ValueError(f"X_new has {Xn.shape[1]} features but X_train has {Xt.shape[1]}.")
    threads = block_threads(Xn.shape[0] * Xt.shape[0], workers)
    (Xn, Xt), g = condition([Xn, Xt], gamma, family)
    with one_blas_thread():
        _predict._cross_kernel_matvec_into(Xn, Xt, C, g, family.code, out, threads)


class KernelMachine:
    """A fitted LSSVM / KRR: f(x) = Σ_i a_i κ(x, s_i) + b over its support points s_i
    (or z(x)ᵀw + b for RFF).

    Attributes
    ----------
    support : ndarray of shape (n_support, d) or None
        The points the kernel is evaluated against: all training points (exact), or
        the landmarks (Nyström). None for random features.
    support_indices : ndarray of int or None
        Their rows in the training set; None when they are not training rows
        (k-means landmarks) or there are none (random features).
    coef : ndarray of shape (n_support, t, L)
        Coefficients per output and α: the dual a (exact) or β = Tw on the landmarks
        (Nyström, see the module notes); None for RFF.
    weights : ndarray of shape (D, t, L) or None
        Primal weights w of a random-feature model.
    intercept : ndarray of shape (t, L)
    alphas : ndarray of shape (L,)
    gamma, kernel, method, details
    conditioning : Conditioning or None
        The conditioning of the streamed passes the machine predicts by (the Nyström
        conjugate-gradient machine, :class:`~kernelselect.solvers._pcg.NystromMachine`,
        which predicts on row-chunked Dask input too); None for the others.
    """

    #: the conditioning of the streamed passes it predicts by, else None (above)
    conditioning: Any = None

    def __init__(self, *, support: np.ndarray | None, support_indices: np.ndarray | None,
                 coef: np.ndarray | None, intercept: np.ndarray, alphas: np.ndarray,
                 gamma: float | np.ndarray, kernel: str, method: str,
                 weights: np.ndarray | None = None,
                 features: tuple[Any, Any] | None = None,
                 details: dict[str, Any] | None = None) -> None:
        self.support = support
        self.support_indices = support_indices
        self.coef = coef
        self.intercept = intercept
        self.alphas = alphas
        self.gamma = gamma
        self.kernel = kernel
        self.method = method
        self.weights = weights
        self._features = features
        self.details = details or {}

    def decision_function(self, X: npt.ArrayLike, workers: int | None = None) -> np.ndarray:
        """f(X) of shape (n_new, t, L)."""
        X = np.asarray(X, dtype=np.float64)
        if self.weights is not None:
            assert self._features is not None    # a primal model keeps its feature map
            approx, state = self._features
            D = self.weights.shape[0]
            family = Kernel.of(self.kernel)
            Xs, gamma = family.points(X, self.gamma)
            Z = approx.features(Xs, gamma, kernel=family.compiled, state=state,
                                workers=block_workers(X.shape[0] * D, workers))
            t, L = self.weights.shape[1:]
            with small_blas(float(X.shape[0]) * D * t * L):
                out = (Z @ self.weights.reshape(D, -1)).reshape(X.shape[0], t, L)
        else:
            assert self.support is not None and self.coef is not None   # a dual model
            with small_blas(float(X.shape[0]) * self.support.shape[0] * self.coef[0].size):
                out = cross_kernel_matvec(X, self.support, self.coef, self.gamma, self.kernel,
                                          workers)
        return out + self.intercept[None, :, :]


def resolve_machine(approximation: Any) -> Approximation | MachineRecipe:
    """What ``approximation`` names for a machine: a :class:`MachineRecipe` (an
    instance, or a class made with its defaults) as given, anything else as
    :func:`kernelselect.operators.get_approximation`."""
    if isinstance(approximation, MachineRecipe):
        return approximation
    if isinstance(approximation, type) and issubclass(approximation, MachineRecipe):
        return approximation()
    return get_approximation(approximation)


def machine_recipe(approximation: Any, exact_solver: str | None = None,
                   state: PreparedState = None) -> MachineRecipe:
    """The :class:`MachineRecipe` a machine is fitted with: a recipe as given, an
    :class:`~kernelselect.operators.Approximation` (or its name) as the
    :class:`OperatorRecipe` that builds its operator and solves on it."""
    resolved = resolve_machine(approximation)
    if isinstance(resolved, MachineRecipe):
        return resolved
    return OperatorRecipe(resolved, exact_solver=exact_solver, state=state)


def check_machine(approximation: str | Approximation | MachineRecipe, n: int, d: int
                  ) -> Approximation | MachineRecipe:
    """The approximation or recipe a machine on n points of d features would use
    (:func:`resolve_machine`), after refusing (``ValueError``) one that cannot train a
    machine (the Song–Xu MCM, :meth:`Approximation.refusal` says why) or would exceed
    the memory limit. Cheap: nothing is drawn or allocated, so a caller can check a
    final refit before a long selection."""
    resolved = resolve_machine(approximation)
    machine_recipe(resolved).check_resources(n, d)
    return resolved


class OperatorRecipe(MachineRecipe):
    """The recipe of an :class:`~kernelselect.operators.Approximation`: build its
    operator for the machine's γ and solve on it for the whole α path (module notes).

    Parameters
    ----------
    approximation : Approximation
    exact_solver : {"cholesky", "eigh", "tridiagonal"} or None, default=None
        The strategy of the exact operator (:func:`fit_kernel_machine`).
    state : object or None, default=None
        A prepared state of the approximation (skips ``prepare``).
    """

    def __init__(self, approximation: Approximation, exact_solver: str | None = None,
                 state: PreparedState = None) -> None:
        self.approximation = approximation
        self.exact_solver = exact_solver
        self.state = state

    @property
    def name(self) -> str:  # type: ignore[override]
        """The approximation's name."""
        return self.approximation.name

    @property
    def label(self) -> str:
        """The approximation's label."""
        return self.approximation.label

    def prepare(self, X: Any, y: Any, *, kernel: str, random_state: RandomState,
                workers: int | None) -> Any:
        """The approximation's state for one training set (:meth:`Approximation.prepare`),
        for ``state`` of :func:`fit_kernel_machine`."""
        return self.approximation.prepare(X, y, kernel=kernel, random_state=random_state,
                                          workers=workers)

    def check_resources(self, n: int, d: int, t: int = 1, workers: int | None = None,
                        d_eff: float | None = None) -> Any:
        """:meth:`Approximation.machine` (a ``ValueError`` saying why from one that
        cannot train a machine) and its recipe's memory guard on n × d; the exact
        recipe of a machine always holds K."""
        recipe, _ = self.approximation.machine()
        return recipe.check_resources(n, d)

    def fit_machine(self, X: Any, Y: Any, gamma: float, alphas: np.ndarray, *, kernel: str,
                    bias: bool, random_state: RandomState = None,
                    workers: int | None = None, centred: bool = False,
                    loo: bool = False) -> KernelMachine:
        """Build the operator of the approximation's machine recipe for γ and solve
        (:func:`dual_solution`, or the feature map of a low-rank operator). With ``loo``
        an exact machine also records, from the same factorisation, what its
        leave-one-out needs at the first α: ``details["leave_one_out"]``, the diagonal of
        K_α⁻¹ and u = K_α⁻¹1."""
        Y2 = np.asarray(Y, dtype=np.float64)
        Y2 = Y2[:, None] if Y2.ndim == 1 else Y2
        approx, solver = self.approximation.machine(self.exact_solver, alphas.size)
        state = self.state
        if state is None or solver is not None:      # the exact state only says "dense"
            fresh = approx.prepare(X, Y2[:, 0], kernel=kernel,
                                   random_state=check_random_state(random_state),
                                   workers=workers)
            # an equal state given (the same method) keeps the points it conditioned
            state = state if state == fresh else fresh
        with small_blas(float(X.shape[0]) ** 3):
            try:
                op = approx.build(X, Y2[:, 0], gamma, kernel=kernel, state=state,
                                  workers=block_workers(X.shape[0] ** 2, workers))
                if isinstance(op, LowRankOperator):
                    return _low_rank_machine(op, Y2, alphas, bias, gamma, kernel, approx, state)
                if isinstance(op, DenseOperator):
                    op.on_singular = "raise"          # a singular K + αI is the caller's to fix
                coef, intercept = dual_solution(op, Y2, alphas, bias)
                details: dict[str, Any] = {"method": solver, "n_support": int(X.shape[0])}
                if loo and isinstance(op, DenseOperator):
                    details["leave_one_out"] = _loo_parts(op, float(alphas[0]))
            except np.linalg.LinAlgError as exc:
                raise ValueError(_singular_message(X, gamma, alphas, exc)) from exc
        assert solver is not None                    # exact: the dense operator's strategy
        return KernelMachine(support=X, support_indices=np.arange(X.shape[0]), coef=coef,
                             intercept=intercept, alphas=alphas, gamma=gamma, kernel=kernel,
                             method=solver, details=details)


def _loo_parts(op: DenseOperator, alpha: float) -> dict[str, np.ndarray]:
    """u = K_α⁻¹1 and diag(K_α⁻¹) from the factorisation the fit's solves used (the
    diagonal last: it uses the factor up); up to :data:`~kernelselect._policy.
    JACKKNIFE_PLUS_MAX_N` rows also "inverse", L⁻¹ lower triangular (K_α = LLᵀ; the
    upper triangle not cleaned), for the jackknife+ and the predictive standard
    deviation, which the estimator takes out of the details at once."""
    u = op.apply_function(RidgeFunction("resolvent", [alpha]), np.ones((op.n, 1)))[:, 0, 0]
    found = op.resolvent_inverse_factor(alpha) if op.n <= JACKKNIFE_PLUS_MAX_N else None
    if found is None:
        return {"u": u, "diag": op.resolvent_diagonal(alpha)}
    inv, lower = found
    diag = _triangle_norms(inv, lower)
    return {"u": u, "diag": diag, "inverse": inv if lower else inv.T}


def _singular_message(X: np.ndarray, gamma: float, alphas: np.ndarray, exc: Exception) -> str:
    """Why K + αI could not be solved, and what to change."""
    n = X.shape[0]
    duplicates = n - np.unique(X, axis=0).shape[0] if n <= 200_000 else 0
    shown = ", ".join(f"{a:g}" for a in np.asarray(alphas).ravel()[:4])
    cause = (f"X has {duplicates} duplicate row(s), which make K singular, so nothing but "
             "alpha keeps K + alpha*I invertible" if duplicates else
             "K is numerically singular at this gamma")
    return (f"cannot solve with K + alpha*I at gamma={gamma:g}, alpha={shown} ({exc}): "
            f"{cause}; use a larger alpha (at least about 1e-10 relative to the kernel's "
            f"diagonal of 1){' or drop the duplicate rows' if duplicates else ''}.")


def fit_kernel_machine(X: np.ndarray, Y: np.ndarray, gamma: Any, alphas: Any, *,
                       kernel: str = "gaussian", bias: bool = True,
                       approximation: str | Approximation | MachineRecipe = "exact",
                       random_state: RandomState = None, workers: int | None = None,
                       state: PreparedState = None, exact_solver: str | None = None,
                       centred: bool = False, loo: bool = False) -> KernelMachine:
    """Solve an LSSVM (``bias=True``) or kernel ridge regression for a path of α.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Training inputs (validated by the caller).
    Y : ndarray of shape (n,) or (n, t)
        Targets (±1 columns for classification).
    gamma : float
    alphas : float or array-like of shape (L,)
        Ridge values; K + αI (α = μ of Ding & Liao (PAKDD 2012)).
    kernel : {"gaussian", "laplacian"}
    bias : bool
    approximation : str, Approximation or MachineRecipe
        "exact" (K itself, solved as ``exact_solver`` says), "nystrom" or "rff"
        (ridge regression on the feature map of K̃ = VVᵀ in k dimensions, see the
        module notes), or an instance of these; or a :class:`MachineRecipe`
        (:class:`~kernelselect.NystroemPCG`, the
        Nyström machine by conjugate gradients, which also takes a row-chunked Dask
        X and Y). "mcm" is refused (see
        :func:`check_machine`): its circulant stand-in selects kernels but does not
        train a model.
    random_state : int, Generator or None
        Landmarks / frequencies / dropped grid points.
    state : dict or None
        A prepared state of the approximation (skips ``prepare``).
    exact_solver : {"cholesky", "eigh", "tridiagonal"} or None
        The strategy of the exact operator (``Exact(dense_solver=...)``): one
        Cholesky per α, one eigendecomposition for the path, or one tridiagonal
        reduction for the path; None → Cholesky for a single α, tridiagonal for a
        path. Ignored by the other approximations.
    centred : bool
        Y was centred by its training mean (``KernelRidgeRegressor(fit_intercept=
        "mean")``): a recipe that scores its model by leave-one-out refits that mean
        without each row too. The others ignore it.
    loo : bool
        An exact machine also records what its leave-one-out needs, from the fit's own
        factorisation (:meth:`OperatorRecipe.fit_machine`); the others ignore it.

    Returns
    -------
    KernelMachine
    """
    kernel = Kernel.of(kernel)
    if kernel.per_feature:
        return _fit_per_feature_machine(X, Y, gamma, alphas, kernel, bias=bias,
                                        approximation=approximation,
                                        random_state=random_state, workers=workers,
                                        state=state, exact_solver=exact_solver,
                                        centred=centred, loo=loo)
    alphas = check_alphas(alphas)
    recipe = machine_recipe(approximation, exact_solver=exact_solver, state=state)
    # a Dask X is fitted by a recipe that streams it, which checks the client's and each
    # task's memory itself
    if not is_dask_array(X):
        recipe.check_resources(*np.shape(X))
    Y2 = Y if is_dask_array(Y) else np.asarray(Y, dtype=np.float64)
    extra = {"loo": True} if loo and isinstance(recipe, OperatorRecipe) else {}
    return recipe.fit_machine(X, Y2[:, None] if Y2.ndim == 1 else Y2, gamma, alphas,
                              kernel=kernel, bias=bias, random_state=random_state,
                              workers=workers, centred=centred, **extra)


def _low_rank_machine(op: LowRankOperator, Y: np.ndarray, alphas: np.ndarray, bias: bool,
                      gamma: float, kernel: str, approx: Approximation, state: PreparedState
                      ) -> KernelMachine:
    """The ridge machine on a low-rank operator's feature map (module notes): random
    features keep w; a Nyström model keeps its landmarks and β = Tw."""
    V = op.factor
    weights, intercept = op.ridge(Y, alphas, bias)
    details: dict[str, Any] = {"rank": int(V.shape[1])}
    if op.landmarks is None:                     # random features: K̃ = ZZᵀ
        details.update(method="rff", n_support=0)
        return KernelMachine(support=None, support_indices=None, coef=None,
                             intercept=intercept, alphas=alphas, gamma=gamma, kernel=kernel,
                             method="rff", weights=weights, features=(approx, state),
                             details=details)
    points, indices, T = op.landmarks
    k, t, L = weights.shape
    with small_blas(float(T.shape[0]) * k * t * L):
        coef = (T @ weights.reshape(k, t * L)).reshape(T.shape[0], t, L)
    # the map T (c, k) of φ(x) = Tᵀk(landmarks, x): the leave-one-out leverages need it
    details.update(method="nystrom", n_support=int(points.shape[0]), landmark_map=T)
    return KernelMachine(support=np.ascontiguousarray(points, dtype=np.float64),
                         support_indices=indices, coef=coef, intercept=intercept,
                         alphas=alphas, gamma=gamma, kernel=kernel, method="nystrom",
                         details=details)


def _fit_per_feature_machine(X: np.ndarray, Y: np.ndarray, gamma: Any, alphas: Any,
                             kernel: Kernel, **options: Any) -> KernelMachine:
    """A per-feature kernel (γ of shape (d,), checked by the caller): the machine of its
    compiled family fitted on its points (:meth:`Kernel.points`, X·diag(√γ) with γ = 1);
    it keeps the unscaled support, γ and the kernel, so that it predicts through the
    per-feature kernel (the cross-kernel product scales new points, random features scale
    their frequencies: z(x·diag(√γ); √2·W₀) = z(x; √(2γ)·W₀))."""
    g = gamma
    lazy = is_dask_array(X)                     # a Dask X stays lazy (the Nyström machine)
    Xs, g1 = (X * np.sqrt(g), 1.0) if lazy else kernel.points(X, g)
    machine = fit_kernel_machine(Xs, Y, g1, alphas, kernel=kernel.compiled, **options)
    if machine.support is not None:
        if lazy:
            machine.support = machine.support / np.sqrt(g)
        else:
            machine.support = (X if machine.support_indices is None
                               else X[machine.support_indices])
    machine.gamma, machine.kernel = g, kernel
    return machine
