"""DI training: mini-batch Adam ascent on the RFDI / NysDI objectives with the
decay-on-saturation schedule of Al et al. (Sect. 5.1)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import numpy.typing as npt

from ..utils._resources import check_allocation
from ..utils._validation import (check_bool, check_matrix, check_positive, check_positive_int,
                           check_random_state)
from .._typing import RandomState
from ..kernels import sample_frequencies, scale_frequencies
from .objectives import (_check_kernel_parameters, _check_targets, _class_codes, _indicator,
                         nysdi, rfdi)


# --------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------
@dataclass
class TrainingHistory:
    """What a DI training run did.

    Attributes
    ----------
    objective : list of float
        Per epoch, the mean of the mini-batch objectives (evaluated before each
        step, as the optimiser sees them).
    learning_rate : list of float
        Learning rate used in each epoch.
    decays : list of int
        Epochs (0-based) after which the learning rate was multiplied by ``decay``.
    stop_reason : str
        "no improvement after decay", "max_epochs" or "min_learning_rate".
    n_batches : int
        Mini-batches per epoch.
    batch_size : int
    time : float
        Wall-clock seconds of the whole run.
    """

    objective: list[float] = field(default_factory=list)
    learning_rate: list[float] = field(default_factory=list)
    decays: list[int] = field(default_factory=list)
    stop_reason: str = ""
    n_batches: int = 0
    batch_size: int = 0
    time: float = 0.0

    @property
    def n_epochs(self) -> int:
        return len(self.objective)


def default_batch_size(n_components: int) -> int:
    """1000, or 2J when J > 500 (paper Sect. 5.1: keep batches larger than J)."""
    return 2 * n_components if n_components > 500 else 1000


def _prepare_targets(y: npt.ArrayLike, task: str, n: int
                     ) -> tuple[Callable[[np.ndarray], np.ndarray], int]:
    """A function batch-indices → target matrix of that batch, and L."""
    if task == "classification":
        codes, classes = _class_codes(y)
        if codes.shape[0] != n:
            raise ValueError(f"y has {codes.shape[0]} entries but X has {n} rows; they must match.")
        L = classes.shape[0]
        return (lambda idx: _indicator(codes[idx], L)), L
    if task == "regression":
        Y = _check_targets(y, n, name="y")
        return (lambda idx: Y[idx]), Y.shape[1]
    raise ValueError(f"task={task!r} is not known; use 'classification' or 'regression'.")


def _adam_ascent(params: list[np.ndarray],
                 value_and_grad: Callable[[np.ndarray], tuple[float, tuple[np.ndarray, ...]]],
                 n: int, batch_size: int, rng: np.random.Generator, *, learning_rate: float,
                 max_epochs: int, tol: float, patience: int, decay: float,
                 min_learning_rate: float, progress: bool, desc: str) -> TrainingHistory:
    """Mini-batch Adam ascent with the paper's decay-on-saturation schedule.

    Each epoch visits ⌊n / batch_size⌋ disjoint mini-batches of a fresh random
    permutation (one batch of all n when n < batch_size) and records m_t, the
    mean mini-batch objective. The epoch *improves* when
    m_t > best + tol·|best| (best = the largest earlier epoch mean). An epoch
    that does not improve means the objective has saturated: the learning rate
    is multiplied by ``decay``, unless the previous epoch already ended with a
    decay — then that decay brought no improvement and training stops. It also
    stops at ``max_epochs`` or when the learning rate falls below
    ``min_learning_rate``. Adam: β₁ = 0.9, β₂ = 0.999, ε = 1e-8 (Kingma & Ba);
    the moment estimates carry over across decays.
    """
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    hist = TrainingHistory()
    bs = min(batch_size, n)
    n_batches = max(1, n // bs)
    hist.n_batches, hist.batch_size = n_batches, bs
    lr, best, stale, decayed, step = learning_rate, -np.inf, 0, False, 0
    bar = None
    if progress:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            raise ImportError(
                "progress=True needs tqdm; install it with `pip install tqdm` "
                "or pass progress=False."
            ) from None
        bar = tqdm(total=max_epochs, desc=desc, leave=False)
    t0 = time.perf_counter()
    hist.stop_reason = "max_epochs"
    try:
        for epoch in range(max_epochs):
            perm = rng.permutation(n)
            total = 0.0
            for k in range(n_batches):
                idx = perm[k * bs:(k + 1) * bs]
                value, grads = value_and_grad(idx)
                total += value
                step += 1
                c1, c2 = 1.0 - beta1 ** step, 1.0 - beta2 ** step
                for p, g, mk, vk in zip(params, grads, m, v):
                    mk *= beta1
                    mk += (1.0 - beta1) * g
                    vk *= beta2
                    vk += (1.0 - beta2) * (g * g)
                    p += (lr / c1) * mk / (np.sqrt(vk / c2) + eps)
            mean = total / n_batches
            hist.objective.append(mean)
            hist.learning_rate.append(lr)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(objective=f"{mean:.5g}", lr=f"{lr:.1e}")
            if best == -np.inf or mean > best + tol * abs(best):
                best, stale, decayed = mean, 0, False
                continue
            stale += 1
            if stale < patience:
                continue
            if decayed:
                hist.stop_reason = "no improvement after decay"
                break
            lr *= decay
            hist.decays.append(epoch)
            stale, decayed = 0, True
            if lr < min_learning_rate:
                hist.stop_reason = "min_learning_rate"
                break
    finally:
        if bar is not None:
            bar.close()
    hist.time = time.perf_counter() - t0
    return hist


@dataclass(frozen=True)
class _Training:
    """The checked inputs of one DI training run and its schedule: what
    :func:`train_rfdi` and :func:`train_nysdi` share (they differ only in the
    parameters they move and the objective they climb)."""

    X: np.ndarray
    n_components: int
    gamma: float
    rho: float
    batch_size: int
    targets: Callable[[np.ndarray], np.ndarray]
    rng: np.random.Generator
    schedule: dict[str, Any]

    def ascend(self, params: list[np.ndarray],
               value_and_grad: Callable[[np.ndarray], tuple[float, tuple[np.ndarray, ...]]],
               desc: str) -> TrainingHistory:
        """Mini-batch Adam ascent of ``params`` (moved in place) on the objective of a
        batch of row indices (see :func:`_adam_ascent`)."""
        return _adam_ascent(params, value_and_grad, self.X.shape[0], self.batch_size, self.rng,
                            desc=desc, **self.schedule)


def _training_setup(X: npt.ArrayLike, y: npt.ArrayLike, n_components: int, gamma: float,
                    rho: float, task: str, batch_size: int | None, learning_rate: float,
                    max_epochs: int, tol: float, patience: int, decay: float,
                    min_learning_rate: float, progress: bool, random_state: RandomState, *,
                    components_from_rows: bool = False) -> _Training:
    """Check the arguments the two trainers share, in their order; with
    ``components_from_rows`` (landmarks drawn from the rows of X) also J ≤ n."""
    X = check_matrix(X, "X", dtype=np.float64, min_rows=2)
    J = check_positive_int(n_components, "n_components")
    gamma, rho = _check_kernel_parameters(gamma, rho)
    batch = default_batch_size(J) if batch_size is None else check_positive_int(
        batch_size, "batch_size", minimum=2)
    targets, n_targets = _prepare_targets(y, task, X.shape[0])
    b = min(batch, X.shape[0])
    # per batch: K(batch, landmarks) or features (b × J) and its gradient pieces; the
    # J × J system, its factor and the Adam moments of the J landmarks
    check_allocation(8.0 * (4.0 * b * J + 4.0 * J * J + 3.0 * J * X.shape[1] + b * n_targets),
                     f"DI training with n_components={J} (batches of {b} × {J} and "
                     f"{J} × {J} systems)", "use fewer components")
    schedule = dict(
        learning_rate=check_positive(learning_rate, "learning_rate"),
        max_epochs=check_positive_int(max_epochs, "max_epochs"),
        tol=check_positive(tol, "tol", allow_zero=True),
        patience=check_positive_int(patience, "patience"),
        decay=check_positive(decay, "decay"),
    )
    if not schedule["decay"] < 1:
        raise ValueError(f"decay must be in (0, 1), got {decay!r}.")
    schedule.update(min_learning_rate=min_learning_rate,
                    progress=check_bool(progress, "progress"))
    if components_from_rows and J > X.shape[0]:
        raise ValueError(
            f"n_components={J} exceeds the {X.shape[0]} samples the landmarks are drawn "
            "from; use n_components ≤ n_samples."
        )
    return _Training(X, J, gamma, rho, batch, targets, check_random_state(random_state),
                     schedule)


def train_rfdi(X: npt.ArrayLike, y: npt.ArrayLike, n_components: int = 100, gamma: float = 1.0,
               rho: float = 1e-4, *, task: str = "classification",
               batch_size: int | None = None, learning_rate: float = 1e-2,
               max_epochs: int = 200, tol: float = 1e-3, patience: int = 3, decay: float = 0.1,
               min_learning_rate: float = 1e-7, random_state: RandomState = None,
               progress: bool = False, workers: int | None = None
               ) -> tuple[np.ndarray, np.ndarray, TrainingHistory]:
    """Learn random Fourier features by maximising RFDI (paper Algorithm 2).

    Initialisation from the Gaussian kernel's spectral density: W ~ N(0, 2γ I),
    b ~ U[0, 2π]; then mini-batch Adam ascent on :func:`rfdi` with the schedule of
    :func:`_adam_ascent` (paper Sect. 5.1: learning rate 1e-2, ×0.1 on saturation,
    stop when a decay brings no improvement).

    Parameters
    ----------
    X : array-like of shape (n, d)
    y : array-like of shape (n,) or (n, L)
        Class labels (task="classification"; one-hot with unit-norm columns per
        mini-batch) or regression targets.
    n_components : int ≥ 1
        J.
    gamma : float > 0
        Gaussian kernel exp(−γ‖x − x′‖²) of the initial features.
    rho : float > 0
    batch_size : int or None
        None → 1000, or 2J when J > 500.
    learning_rate, max_epochs, tol, patience, decay, min_learning_rate
        Schedule: Adam from ``learning_rate``; the rate is multiplied by ``decay``
        after ``patience`` epochs whose mean mini-batch objective does not beat the
        best epoch mean by a relative ``tol``; stop when a decay brings no
        improvement (see ``_adam_ascent``).
    random_state : None, int or numpy Generator
        Draws the initial (W, b) and the mini-batch permutations; the result is
        reproducible for a given seed (thread count aside: BLAS sums may round
        differently).
    progress : bool
        Show a tqdm progress bar over epochs.
    workers : int or None
        Threads of the compiled feature / kernel-block kernels.

    Returns
    -------
    W : ndarray of shape (d, J)
    b : ndarray of shape (J,)
    history : TrainingHistory
    """
    run = _training_setup(X, y, n_components, gamma, rho, task, batch_size, learning_rate,
                          max_epochs, tol, patience, decay, min_learning_rate, progress,
                          random_state)
    W0, b = sample_frequencies("gaussian", run.X.shape[1], run.n_components, run.rng)
    W = scale_frequencies(W0, run.gamma)

    def value_and_grad(idx: np.ndarray) -> tuple[float, tuple[np.ndarray, ...]]:
        value, gW, gb = rfdi(run.X[idx], run.targets(idx), W, b, run.rho, workers=workers)
        return value, (gW, gb)

    hist = run.ascend([W, b], value_and_grad, "RFDI")
    return W, b, hist


def train_nysdi(X: npt.ArrayLike, y: npt.ArrayLike, n_components: int = 100, gamma: float = 1.0,
                rho: float = 1e-4, *, task: str = "classification",
                batch_size: int | None = None, learning_rate: float = 1e-2,
                max_epochs: int = 200, tol: float = 1e-3, patience: int = 3, decay: float = 0.1,
                min_learning_rate: float = 1e-7, random_state: RandomState = None,
                progress: bool = False, workers: int | None = None
                ) -> tuple[np.ndarray, np.ndarray, TrainingHistory]:
    """Learn Nyström landmarks by maximising NysDI (paper Algorithm 1).

    The J landmarks start as a uniformly random subset of the rows of X (without
    replacement, so J ≤ n); then mini-batch Adam ascent on :func:`nysdi` with the
    schedule of :func:`train_rfdi`. Parameters as for :func:`train_rfdi`.

    Returns
    -------
    landmarks : ndarray of shape (J, d)
    indices : ndarray of shape (J,)
        Rows of X the landmarks started from.
    history : TrainingHistory
    """
    run = _training_setup(X, y, n_components, gamma, rho, task, batch_size, learning_rate,
                          max_epochs, tol, patience, decay, min_learning_rate, progress,
                          random_state, components_from_rows=True)
    indices = np.sort(run.rng.choice(run.X.shape[0], size=run.n_components, replace=False))
    R = run.X[indices].copy()

    def value_and_grad(idx: np.ndarray) -> tuple[float, tuple[np.ndarray, ...]]:
        value, gR = nysdi(run.X[idx], run.targets(idx), R, run.gamma, run.rho, workers=workers)
        return value, (gR,)

    hist = run.ascend([R], value_and_grad, "NysDI")
    return R, indices, hist
