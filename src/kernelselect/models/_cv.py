"""k-fold cross-validation of LSSVM / KRR over a (γ, α) grid, exact or approximate.

For every γ and fold the training kernel is factorised once — a tridiagonal
reduction K = QTQᵀ of the fold's exact kernel matrix, or the thin SVD of the fold's
Nyström factor (Ding & Liao, PAKDD 2012, Alg. 2 with Alg. 1 inside) —
and every α of the grid is solved from that factorisation. Held-out points are
predicted by the fold's model: the true kernel against the fold's training points
(exact), or the Nyström feature map, i.e. the kernel against the fold's landmarks
(see :mod:`kernelselect.solvers._exact`; the held-out error is then that of the model the
fold's criterion would score, at every α).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .. import _predict
from ..selection import SelectionResult
from ..utils._labels import decide, encode_labels
from ..solvers import check_alphas, check_machine, fit_kernel_machine, machine_recipe
from ..utils._progress import check_progress, progress_iter
from ..utils._threads import block_threads, one_blas_thread
from ..kernels import Kernel
from ..utils._validation import (
    check_grid,
    check_matrix,
    check_positive_int,
    check_random_state,
    check_vector,
)
from .._typing import RandomState
from ..utils._warnings import renamed_attribute
# a stand-in, so it lives with the others; its name stays importable here
from ..operators.nystrom import ProportionalNystroem  # noqa: F401

if TYPE_CHECKING:
    from ..operators import Approximation
    from ..selection import SelectionResult

__all__ = [
    "cross_validate_grid",
    "make_folds",
    "nystrom_cv_setting",
    "ProportionalNystroem",
    "CV_GAMMAS",
    "CV_ALPHAS",
]

#: former names, importable with a FutureWarning: old name → its replacement
RENAMED = {"paper004_grid": "nystrom_cv_setting", "PAPER_004_GAMMAS": "CV_GAMMAS",
           "PAPER_004_ALPHAS": "CV_ALPHAS"}

#: the default γ grid of cross_validate_grid, γ ∈ 2^{−15, −13, …, 9} (13 values; Ding &
#: Liao, PAKDD 2012, Sect. 6.2)
CV_GAMMAS = 2.0 ** np.arange(-15, 10, 2)
#: the default α grid of cross_validate_grid, α ∈ 2^{−15, −13, …, 5} (11 values; the
#: LSSVM ridge μ = α of Ding & Liao, PAKDD 2012, Sect. 6.2)
CV_ALPHAS = 2.0 ** np.arange(-15, 6, 2)




def nystrom_cv_setting() -> dict[str, Any]:
    """Keyword arguments of :func:`cross_validate_grid` for approximate cross-validation.

    The model-selection setting of Ding & Liao (PAKDD 2012, Section 6.2): Nyström
    factors that grow with each training fold, on a grid of odd powers of two.

    Returns
    -------
    dict
        ``gammas`` (13 values 2^{−15}, …, 2^9), ``alphas`` (11 values 2^{−15}, …, 2^5;
        α = μ for the LSSVM) and ``approximation`` = ProportionalNystroem(0.1, 0.5)
        (c = 0.1n, k = 0.5c per training fold).
    """
    return {"gammas": CV_GAMMAS.copy(), "alphas": CV_ALPHAS.copy(),
            "approximation": ProportionalNystroem(0.1, 0.5)}


def make_folds(y: np.ndarray, cv: Any = 5, stratify: bool = True,
               random_state: RandomState = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """k-fold (train, test) index pairs.

    Parameters
    ----------
    y : ndarray of shape (n,)
    cv : int, iterable of (train, test) pairs, or an object with ``split(X, y)``
        An int k ≥ 2 gives k folds of near-equal size from one random permutation;
        with ``stratify`` each class is dealt across the folds in turn, so that
        every fold keeps the class proportions (±1).
    stratify : bool
    random_state : int, Generator or None

    Returns
    -------
    list of (train, test) int arrays
    """
    n = y.shape[0]
    if hasattr(cv, "split") and not isinstance(cv, (str, bytes)):
        return [(np.asarray(a), np.asarray(b)) for a, b in cv.split(np.zeros((n, 1)), y)]
    if not isinstance(cv, (int, np.integer)) or isinstance(cv, bool):
        message = (f"cv must be an int ≥ 2, a splitter with split(X, y), or (train, test) "
                   f"pairs of index arrays; got {cv!r}.")
        if isinstance(cv, (str, bytes)):
            raise TypeError(message)
        try:
            pairs: Any = cv                   # anything iterable, checked below
            folds = [(np.asarray(a), np.asarray(b)) for a, b in pairs]
        except (TypeError, ValueError):
            raise TypeError(message) from None
        if not folds:
            raise ValueError("cv holds no (train, test) pairs.")
        for a, b in folds:
            for idx in (a, b):
                if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
                    raise TypeError(message)
                if idx.min() < 0 or idx.max() >= n:
                    raise ValueError(f"cv indices must lie in [0, {n}); got {idx.min()}..{idx.max()}.")
        return [(a.astype(np.intp), b.astype(np.intp)) for a, b in folds]
    k = check_positive_int(cv, "cv", minimum=2)
    if k > n:
        raise ValueError(f"cv={k} folds need at least {k} samples, got n={n}.")
    rng = check_random_state(random_state)
    fold_of = np.empty(n, dtype=np.intp)
    if stratify:
        strata = encode_labels(y, "y", squeeze="none", min_classes=1)
        codes = strata.codes
        smallest = np.bincount(codes).min()
        if smallest < k:
            raise ValueError(
                f"cv={k} stratified folds need at least {k} members per class; the smallest "
                f"class has {smallest}. Lower cv."
            )
        offset = 0
        for c in range(strata.n_classes):
            members = rng.permutation(np.flatnonzero(codes == c))
            fold_of[members] = (offset + np.arange(members.size)) % k
            offset += members.size
    else:
        perm = rng.permutation(n)
        fold_of[perm] = np.arange(n) % k
    idx = np.arange(n)
    return [(idx[fold_of != f], idx[fold_of == f]) for f in range(k)]


def machine_targets(y: np.ndarray, classification: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """(Y (n, t), classes or None): ±1 columns (one for binary, one per class for
    one-vs-rest; :meth:`kernelselect.utils._labels.LabelCodes.columns`) or the real targets."""
    if not classification:
        return (y[:, None] if y.ndim == 1 else y), None
    enc = encode_labels(y, "y", squeeze="none")
    return enc.columns(), enc.classes


#: largest held-out × training block whose distances are kept for a whole γ sweep
#: (2²² entries = 32 MB); beyond it the held-out points stream through the
#: prediction kernel for every γ
DISTANCE_CACHE_ENTRIES = 2**22


def _held_out_distances(X_va: np.ndarray, X_tr: np.ndarray, kernel: str) -> np.ndarray | None:
    """‖x − z‖² (Gaussian) between held-out and training points, or None.

    Kept per fold so that each γ costs one exponentiation and one product instead of
    a new kernel block; only for Gaussian kernels and blocks up to
    DISTANCE_CACHE_ENTRIES entries. Computed after centring on the training mean
    (distances unchanged), clamped at 0.
    """
    if Kernel.of(kernel).power != 2 or X_va.shape[0] * X_tr.shape[0] > DISTANCE_CACHE_ENTRIES:
        return None
    center = X_tr.mean(axis=0)
    A, B = X_va - center, X_tr - center
    D = np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :]
    D -= 2.0 * (A @ B.T)
    np.maximum(D, 0.0, out=D)
    return D


def _distance_predict(dist: np.ndarray, gamma: float, coef: np.ndarray,
                      workers: int | None) -> np.ndarray:
    """exp(−γ D) @ coef (n_va, t, L) through the compiled streaming kernel."""
    C = np.ascontiguousarray(coef.reshape(coef.shape[0], -1))
    out = np.empty((dist.shape[0], C.shape[1]))
    threads = block_threads(dist.size, workers)
    with one_blas_thread():
        _predict._distance_kernel_matvec_into(dist, C, gamma, out, threads)
    return out.reshape((dist.shape[0],) + coef.shape[1:])


def cross_validate_grid(X: npt.ArrayLike, y: npt.ArrayLike, *,
                        gammas: npt.ArrayLike | None = None,
                        alphas: npt.ArrayLike | None = None, kernel: str = "gaussian",
                        machine: str = "lssvm", loss: str | None = None,
                        approximation: str | Approximation = "exact", cv: Any = 5,
                        random_state: RandomState = None,
                        workers: int | None = None, center: bool = False,
                        progress: bool | float = False) -> SelectionResult:
    """k-fold cross-validation error of LSSVM / KRR over a (γ, α) grid.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (``loss="error"``) or real targets (``loss="mse"``).
    gammas, alphas : array-like of positive floats or None
        The grid; None → Ding & Liao (PAKDD 2012)'s grid (γ ∈ 2^{−15,−13,…,9}, α ∈ 2^{−15,−13,…,5}).
    kernel : {"gaussian", "laplacian"}
    machine : {"lssvm", "krr"}
        LSSVM with bias (Ding & Liao, PAKDD 2012) or kernel ridge regression without bias.
    loss : {"error", "mse"} or None
        Misclassification rate (binary by sign, multi-class by one-vs-rest argmax)
        or mean squared error; None → "error" for the LSSVM, "mse" for KRR.
    approximation : str or Approximation
        "exact" (one tridiagonal reduction of each fold's kernel matrix, every α from
        it by an O(n) tridiagonal solve),
        "nystrom" (ridge regression on each fold's Nyström features) or an instance
        such as ``ProportionalNystroem(0.1, 0.5)`` (Ding & Liao (PAKDD 2012): c = 0.1n, k = 0.5c); "rff"
        works too ("mcm" is refused: it does not train a model, see
        :func:`kernelselect.solvers._exact.check_machine`).
    cv : int, splitter or (train, test) pairs
        An int gives k folds, stratified by class for ``loss="error"``.
    random_state : int, Generator or None
        Folds and the approximation's draws (landmarks drawn once per fold, reused
        for every γ).
    workers : int or None
    center : bool, default=False
        Regression only: solve every fold for its targets minus their training-fold
        mean and add that mean back to the held-out predictions — the machine of
        ``KernelRidgeRegressor(fit_intercept="mean")``.
    progress : bool or float, default=False
        As :func:`kernelselect.select_kernel`'s ``progress``, counting folds.

    Returns
    -------
    SelectionResult
        ``curves["cv"]`` (n_gammas, n_alphas): mean held-out loss over the folds
        (minimise); ``details["fold_losses"]`` (n_folds, n_gammas, n_alphas),
        ``details["folds"]`` the (train, test) indices; ``timings`` per γ.

    Notes
    -----
    Cost per γ and fold: exact 4n_tr³/3 (one tridiagonal reduction) + O(n_tr² L);
    Nyström O(n_tr c d + c³ + n_tr k²) + O(k² L) for L values of α, plus
    O(n_va n_tr d) for the held-out predictions (exact; Nyström O(n_va c d)).
    """
    X = check_matrix(X, "X", dtype=np.float64, min_rows=2)
    y = check_vector(y, "y", n=X.shape[0], dtype=np.float64)
    return _cross_validate(X, y, gammas=gammas, alphas=alphas, kernel=kernel,
                           machine=machine, loss=loss, approximation=approximation, cv=cv,
                           random_state=random_state, workers=workers, center=center,
                           progress=progress)


def _cross_validate(X: np.ndarray, y: np.ndarray, *, gammas: npt.ArrayLike | None,
                    alphas: npt.ArrayLike | None, kernel: str, machine: str,
                    loss: str | None, approximation: str | Approximation, cv: Any,
                    random_state: RandomState, workers: int | None, center: bool,
                    progress: bool | float) -> SelectionResult:
    """:func:`cross_validate_grid` on X (n, d) float64 and y (n,) float64 checked by
    the caller. Each fold's rows are taken once: its training and held-out blocks are
    the same arrays for every γ, so an operator conditions them (centring, scaling)
    on the first γ and reuses them."""
    kernel = Kernel.of(kernel, per_feature=False).value
    if machine not in ("lssvm", "krr"):
        raise ValueError(f"machine must be 'lssvm' (with bias) or 'krr' (no bias), got {machine!r}.")
    loss = loss if loss is not None else ("error" if machine == "lssvm" else "mse")
    if loss not in ("error", "mse"):
        raise ValueError(f"loss must be 'error' or 'mse', got {loss!r}.")
    classification = loss == "error"
    if center and classification:
        raise ValueError("center=True centres a real target; it does not apply to "
                         "loss='error' (class labels). Pass center=False.")
    gammas = check_grid(CV_GAMMAS if gammas is None else gammas, "gammas")
    alphas = check_alphas(CV_ALPHAS if alphas is None else alphas, "alphas")
    Y, classes = machine_targets(y, classification)
    if not classification and np.ptp(y) == 0:
        raise ValueError("y is constant; there is nothing to regress.")
    approx = check_machine(approximation, *X.shape)
    fitting = machine_recipe(approx)
    rng = check_random_state(random_state)
    folds = make_folds(y, cv, stratify=classification, random_state=rng)
    bias = machine == "lssvm"
    # each fold's blocks, taken once: (X_tr, Y_tr, X_va) with the fold's prepared state
    blocks = [(X[tr], Y[tr], X[va]) for tr, va in folds]
    states = []
    for X_tr, Y_tr, _ in blocks:
        states.append(fitting.prepare(X_tr, Y_tr[:, 0], kernel=kernel, random_state=rng,
                                     workers=workers))
    losses = np.empty((len(folds), gammas.size, alphas.size))
    timings = np.zeros(gammas.size)
    steps = progress_iter(enumerate(folds), len(folds), check_progress(progress),
                          desc="cross-validation", unit="fold")
    for f, (tr, va) in steps:
        t0 = time.perf_counter()
        X_tr, Y_tr, X_va = blocks[f]
        dist = _held_out_distances(X_va, X_tr, kernel)
        setup = time.perf_counter() - t0
        for i, gamma in enumerate(gammas):
            t0 = time.perf_counter()
            offset = Y_tr.mean(axis=0) if center else np.zeros(Y.shape[1])
            model = fit_kernel_machine(X_tr, Y_tr - offset, float(gamma), alphas,
                                       kernel=kernel, bias=bias, approximation=approx,
                                       state=states[f], workers=workers)
            if dist is not None and model.coef is not None and model.support_indices is not None:
                # the support points are rows of the fold's training set (all of them,
                # or the Nyström landmarks): their distances are in the cache
                idx = model.support_indices
                D = dist if idx.size == dist.shape[1] else np.ascontiguousarray(dist[:, idx])
                F = _distance_predict(D, float(gamma), model.coef, workers)
                F += model.intercept[None, :, :]
            else:
                F = model.decision_function(X_va, workers=workers)   # (n_va, t, L)
            F += offset[None, :, None]
            if classification:
                assert classes is not None      # machine_targets gives them
                losses[f, i] = np.mean(decide(F, classes) != y[va][:, None], axis=0)
            else:
                losses[f, i] = np.mean((F - Y[va][:, :, None]) ** 2, axis=(0, 1))
            timings[i] += time.perf_counter() - t0 + setup / gammas.size
    details = {"kernel": kernel, "n": X.shape[0], "d": X.shape[1], "machine": machine,
               "center": bool(center), "loss": loss, "approximation": fitting.label,
               "approximation_params": approx.get_params(), "n_folds": len(folds),
               "fold_losses": losses, "folds": folds}
    return SelectionResult(gammas, alphas, {"cv": losses.mean(axis=0)}, {"cv": "min"},
                           timings, details)


if not TYPE_CHECKING:
    def __getattr__(name: str) -> Any:
        return renamed_attribute(__name__, name, RENAMED, globals())
