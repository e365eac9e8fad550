"""The Nyström machine for large n: its recipe :class:`NystroemPCG` and its fit.

A machine fitted with ``approximation=NystroemPCG(...)`` (or chosen by
``approximation="auto"`` beyond the exact path's reach) is ridge regression on the
Nyström feature map of m centres drawn uniformly from the training rows, solved by
preconditioned conjugate gradients over streamed passes
(:mod:`kernelselect.solvers._pcg`): O(m²) memory and O(n·m) time per iteration, K(X,
centres) never held, on in-memory or row-chunked Dask input. It predicts
f(x) = k(x, centres)β + b from its m centres alone.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._loo import fit_nystrom_loo, intercept_forms, loo_affordable
from ._pcg import (DEFAULT_MAX_ITER, DEFAULT_TOL, NystromMachine, sample_rows,
                           check_dask_solver_memory, check_precision, check_solver_memory,
                           check_tol,
                           choose_centres,
                           choose_sample, fit_nystrom_pcg, largest_centres,
                           largest_dask_centres)
from ._rows import aligned_chunks
from ._checkpoint import CGCheckpoint, check_checkpoint, default_checkpoint
from ._exact import check_alphas
from ._recipe import MachineRecipe
from ..utils._progress import check_progress
from ..utils._resources import memory_fit_limit
from ..utils._threads import block_threads
from .._typing import RandomState
from ..utils._validation import (check_bool, check_positive, check_positive_int,
                                 check_random_state)
from .. import _policy as _rules
# the centres rule and its thresholds (kernelselect._policy, with their studies) keep
# their names here
from .._policy import DEFF_FACTOR, GROWTH, MAX_CENTRES, MIN_CENTRES, deff_centres, rule_centres

__all__ = ["NystroemPCG", "fit_pcg_machine", "auto_centres", "rule_centres", "memory_centres",
           "deff_centres"]


def memory_centres(n: int, d: int, t: int = 1, workers: int | None = None,
                   chunks: tuple[int, ...] | None = None, m: int = MAX_CENTRES) -> int:
    """The most centres (at least 1) the automatic choice's budget allows: in memory the
    whole solve (:func:`~kernelselect.solvers._pcg.nystrom_pcg_bytes`) within
    :func:`~kernelselect.utils._resources.memory_fit_limit`; on a Dask X with
    row ``chunks``, the client's part (the m × m factors) and each task's (one chunk's
    pass): :func:`~kernelselect.solvers._pcg.largest_dask_centres`."""
    if chunks is None:
        return max(1, largest_centres(n, d, t, block_threads(float(n) * m, workers),
                                      memory_fit_limit()))
    return max(1, largest_dask_centres(n, max(aligned_chunks(chunks)), d, t))


def auto_centres(n: int, d_eff: float | None = None, d: int | None = None, t: int = 1,
                 workers: int | None = None, chunks: tuple[int, ...] | None = None) -> int:
    """m for n rows (module notes): :func:`rule_centres`, and, when the number of
    features d is given, at most :func:`memory_centres`."""
    m = _rules.rule_centres(n, d_eff)
    if d is not None:
        m = min(m, memory_centres(n, d, t, workers, chunks, m))
    return m


class NystroemPCG(MachineRecipe):
    """Fit a kernel machine on m Nyström centres by preconditioned conjugate gradients.

    A recipe for the machines (:class:`~kernelselect.KernelRidgeRegressor`,
    :class:`~kernelselect.LSSVMClassifier`, :func:`~kernelselect.fit_krr`,
    :func:`~kernelselect.fit_lssvm`), not a stand-in for selection.

    Parameters
    ----------
    n_centres : int or None, default=None
        m, the centres (uniformly drawn training rows); None: the rule of
        ``approximation="auto"`` (:func:`auto_centres`).
    sample_per_centre : float or None, default=None
        Rows drawn for the preconditioner besides the centres, per centre (0: the
        centres alone, the FALKON preconditioner). None: the automatic rule
        (:func:`kernelselect._policy.sample_per_centre`), between 1 and 8 by the
        sample's cost against the iterations it saves: 8 where m is small next to √n
        (at 10⁶ rows and 8021 centres), 1 where m is large (2·10⁵ rows, 2·10⁴
        centres), and with many features no more than m/(4d) (the rows' values stay
        within a quarter of the m × m factor's bytes). ``details["sample_rows"]``
        records the rows drawn.
    tol : float, default=1e-7
        Stop when the relative residuals of the normal equations and of the
        preconditioned system are at most ``tol``, a number in [0, 1). A fit that stops
        above it (``max_iter`` reached, or the residual no longer falling) warns with
        :class:`~kernelselect.ConvergenceWarning`.
    max_iter : int, default=100
        At most this many conjugate-gradient iterations.
    progress : bool or float, default=False
        Progress lines during long fits (as ``select_kernel``'s ``progress``).
    loo_alphas : array-like or None, default=None
        Candidate ridges. When given, and where the route is affordable (n·m² within
        :data:`~kernelselect.solvers._loo.LOO_FLOPS` and m × m arrays within the memory
        limit), the machine is solved for all of them and the fitting α at once by one
        eigendecomposition and keeps the candidate whose exact leave-one-out error on
        this model is smallest (:mod:`kernelselect.solvers._loo`); the model has that one
        α (``details["alpha"]``, the errors in ``details["loo"]``). Beyond, the fitting α
        by conjugate gradients.
    loo_intercept : bool, default=False
        With ``loo_alphas``, on the leave-one-out route, also choose the constant term:
        the machine's own form (none, or the training mean of the targets for
        ``KernelRidgeRegressor(fit_intercept="mean")``) or an unpenalised bias (the
        LSSVM's), whichever candidate has the smaller exact leave-one-out error
        (``details["intercept_form"]``, both forms' errors in ``details["loo_forms"]``).
        Where both forms together exceed the route's budget, the machine's own form.
    checkpoint : str or os.PathLike or None, default=None
        A file where the conjugate-gradient solve (not the leave-one-out route) saves its state as it goes (atomically:
        a temporary file moved over the path), so that a fit interrupted (a killed
        process, a lost worker) and started again with the same data, centres
        (``random_state``), γ and α continues from the saved iteration and ends where an
        uninterrupted fit would. A converged solve removes it; one stopped by
        ``max_iter`` keeps it, to be continued with a larger ``max_iter``. A path
        holding any other file is refused, never overwritten. With several α, the i-th
        (from 0) after the first saves to the path with ``-alpha<i>`` before its
        extension.
    checkpoint_every : int, default=1
        Save after every this many iterations (a save writes four m × t arrays, little
        next to an iteration's n·m kernel values).
    resume : bool, default=True
        Continue from ``checkpoint`` when it holds a solve of the same system, and
        refuse one of another system; False: start over and replace it.
    precision : {"auto", "float64", "float32"}, default="auto"
        The preconditioner's two m × m factors. The model, the passes and the iteration
        are float64 whatever it is; float32 factors only precondition, in half the
        memory and about half the time. "auto": float32 beyond 8192 centres when K_mm's
        factor shows no direction that float32 rounding decides (every pivot at least
        twice the float32 jitter m·2⁻²³), else float64 (module notes of
        :mod:`kernelselect.solvers._pcg`, "Factors in float32");
        ``details["factors"]`` records the precision used.

    Notes
    -----
    The model is kernel ridge regression (or the LSSVM with its unpenalised bias) on the
    feature map φ(x) = T⁻ᵀk(centres, x), TᵀT = K(centres, centres) + δI, i.e. with K
    replaced by the Nyström matrix K_nm(K_mm + δI)⁻¹K_mn (Rudi, Camoriano & Rosasco,
    NeurIPS 2015); the preconditioner follows Rudi, Carratino & Rosasco (NeurIPS 2017).
    Memory: one m × m array (8m² bytes, 3.2 GB at m = 2·10⁴; 4m² with float32 factors)
    plus the passes' buffers, checked by the memory guard before anything is allocated
    ("auto" is checked as float64, which it may fall back to).
    """

    name = "nystrom-pcg"
    dask = True                                  # streams row-chunked Dask input

    def __init__(self, n_centres: int | None = None, sample_per_centre: float | None = None,
                 tol: float = DEFAULT_TOL, max_iter: int = DEFAULT_MAX_ITER,
                 progress: bool | float = False, loo_alphas: Any = None,
                 loo_intercept: bool = False, checkpoint: Any = None,
                 checkpoint_every: int = 1, resume: bool = True,
                 precision: str = "auto") -> None:
        self.n_centres = n_centres
        self.sample_per_centre = sample_per_centre
        self.tol = tol
        self.max_iter = max_iter
        self.progress = progress
        self.loo_alphas = loo_alphas
        self.loo_intercept = loo_intercept
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.resume = resume
        self.precision = precision

    def checked(self) -> tuple[int | None, float | None, float, int, bool | float]:
        """The parameters, validated: (n_centres, sample_per_centre, tol, max_iter,
        progress)."""
        m = None if self.n_centres is None else check_positive_int(self.n_centres, "n_centres")
        q = (None if self.sample_per_centre is None else
             check_positive(self.sample_per_centre, "sample_per_centre", allow_zero=True))
        tol = check_tol(self.tol)
        return m, q, tol, check_positive_int(self.max_iter, "max_iter"), check_progress(
            self.progress)

    def checkpoints(self, count: int) -> list[CGCheckpoint | None]:
        """One checkpoint per α of ``count`` (``checkpoint``, then ``-alpha<i>`` before
        the extension; without ``checkpoint``, the path of an enclosing
        :func:`~kernelselect.solvers._checkpoint.checkpoint_to`), or Nones; validated."""
        path = check_checkpoint(self.checkpoint if self.checkpoint is not None
                                else default_checkpoint())
        if path is None:
            return [None] * count
        every = check_positive_int(self.checkpoint_every, "checkpoint_every")
        resume = check_bool(self.resume, "resume")
        root, ext = os.path.splitext(path)
        return [CGCheckpoint(path if i == 0 else f"{root}-alpha{i}{ext}", every=every,
                             resume=resume) for i in range(count)]

    def checked_loo_alphas(self) -> np.ndarray | None:
        """``loo_alphas`` validated: None, or the positive finite candidates, ascending."""
        if self.loo_alphas is None:
            return None
        return np.unique(check_alphas(self.loo_alphas, "loo_alphas"))

    def centres_for(self, n: int, d_eff: float | None = None) -> int:
        """m for n training rows: ``n_centres`` (at most n), else the automatic rule."""
        m = self.checked()[0]
        return min(n, m) if m is not None else auto_centres(n, d_eff)

    def check_resources(self, n: int, d: int, t: int = 1, workers: int | None = None,
                        d_eff: float | None = None) -> Any:
        """The memory guard on the whole solve in memory
        (:func:`~kernelselect.solvers._pcg.check_solver_memory`)."""
        m = self.centres_for(n, d_eff)
        return check_solver_memory(n, m, d, t, block_threads(float(n) * m, workers),
                                   check_precision(self.precision))

    def check_dask_resources(self, n: int, chunks: tuple[int, ...], d: int, t: int = 1,
                             d_eff: float | None = None) -> None:
        """The memory guard on a fit on a Dask X of row ``chunks``: the client's part
        and one task's (:func:`~kernelselect.solvers._pcg.check_dask_solver_memory`)."""
        m = self.centres_for(n, d_eff)
        check_dask_solver_memory(n, max(aligned_chunks(chunks)), m, d, t,
                                 check_precision(self.precision))

    def fit_machine(self, X: Any, Y: Any, gamma: float, alphas: np.ndarray, *, kernel: str,
                    bias: bool, random_state: RandomState = None,
                    workers: int | None = None, centred: bool = False) -> NystromMachine:
        """The machine on X (n, d) and Y (n, t) for every α (:func:`fit_pcg_machine`);
        ``centred``: Y was centred by its training mean (``fit_intercept="mean"``)."""
        return fit_pcg_machine(X, Y, gamma, alphas, self, kernel=kernel, bias=bias,
                               random_state=random_state, workers=workers, centred=centred)


def fit_pcg_machine(X: Any, Y: Any, gamma: float, alphas: np.ndarray, recipe: NystroemPCG, *,
                    kernel: str, bias: bool, random_state: RandomState = None,
                    workers: int | None = None, d_eff: float | None = None,
                    centred: bool = False) -> NystromMachine:
    """Fit the machine of ``recipe`` for every α of ``alphas`` (validated by the caller).

    X : ndarray of shape (n, d) (float64, C-contiguous) or a row-chunked Dask array;
    Y : ndarray of shape (n, t) or a Dask array chunked like X's rows. The centres are
    drawn once (``random_state``) and shared by every α; ``coef`` has shape (m, t, L).
    ``details`` holds, per α, the iterations, the residual reached and whether ``tol``
    was met, and the centres m. ``centred``: Y was centred by its mean (the leave-one-out
    refits that mean without each row).
    """
    m_param, q_per, tol, max_iter, progress = recipe.checked()
    precision = check_precision(recipe.precision)
    candidates = recipe.checked_loo_alphas()
    saves = recipe.checkpoints(len(alphas))
    n, d = (int(v) for v in X.shape)
    m = recipe.centres_for(n, d_eff)
    rng = check_random_state(random_state)
    centres = choose_centres(n, m, rng)
    rule = "n_centres" if m_param is not None else "auto"
    if candidates is not None:
        candidates = np.unique(np.concatenate([candidates, np.asarray(alphas, dtype=np.float64)]))
        t, L = int(Y.shape[1]), candidates.size
        own = intercept_forms(bias, centred, False)
        forms = intercept_forms(bias, centred, check_bool(recipe.loo_intercept, "loo_intercept"))
        if len(forms) > 1 and not loo_affordable(n, m, d, t, L, forms):
            forms, form_rule = own, "given (both forms beyond budget)"
        else:
            form_rule = "leave-one-out" if len(forms) > 1 else "given"
        if loo_affordable(n, m, d, t, L, forms):
            model = fit_nystrom_loo(X, Y, gamma, candidates, centres=centres, kernel=kernel,
                                    forms=forms, workers=workers)
            model.details.update(n_support=m, sample_rows=0, centres_rule=rule,
                                 alpha_rule="leave-one-out", intercept_rule=form_rule)
            return model
    q = sample_rows(n, m, d) if q_per is None else int(round(q_per * m))
    sample = choose_sample(n, centres, q, rng) if q else None
    fits = [fit_nystrom_pcg(X, Y, gamma, float(a), centres=centres, sample=sample,
                            kernel=kernel, bias=bias, tol=tol, max_iter=max_iter,
                            workers=workers, progress=progress, checkpoint=save,
                            precision=precision)
            for a, save in zip(alphas, saves)]
    coef = np.concatenate([f.coef for f in fits], axis=2)
    intercept = np.concatenate([f.intercept for f in fits], axis=1)
    per_alpha = [f.details for f in fits]
    details: dict[str, Any] = {
        "method": "nystrom-pcg", "n_support": int(centres.size), "n_centres": int(centres.size),
        "sample_rows": int(0 if sample is None else sample.size),
        "sample_rule": "auto" if q_per is None else "sample_per_centre",
        "iterations": [d["iterations"] for d in per_alpha],
        "residual": [d["residual"] for d in per_alpha],
        "converged": [d["converged"] for d in per_alpha], "tol": tol, "max_iter": max_iter,
        "direct": [d["direct"] for d in per_alpha],
        "jitter": [d["jitter"] for d in per_alpha], "passes": [d["passes"] for d in per_alpha],
        "factors": [d["factors"] for d in per_alpha],
        "resumed_from": [d["resumed_from"] for d in per_alpha],
        "seconds": [d["seconds"] for d in per_alpha],
        "rss": [d["rss"] for d in per_alpha], "gcv": [d["gcv"] for d in per_alpha],
        "effective_dimension": [d["effective_dimension"] for d in per_alpha],
        "centres_rule": rule,
        "alpha_rule": "given" if candidates is None else "given (leave-one-out beyond budget)",
        "intercept_form": intercept_forms(bias, centred, False)[0],
        "intercept_rule": ("given (leave-one-out beyond budget)"
                           if candidates is not None and recipe.loo_intercept
                           else "given")}
    first = fits[0]
    return NystromMachine(support=first.support, support_indices=centres, coef=coef,
                          intercept=intercept, alphas=np.asarray(alphas, dtype=np.float64),
                          gamma=gamma, kernel=kernel, method="nystrom-pcg", details=details,
                          conditioning=first.conditioning)
