"""How the fitted machines solve when left to ``approximation="auto"``.

* **Exact up to** :data:`EXACT_FIT_MAX_N` rows: K + αI by one Cholesky factorisation,
  the reference model. Its cost grows as n³/3 flops and n² doubles: at n = 5000 the
  exact fit took 14 s on this project's 2-core test machine under load (a 200 MB
  matrix), against 3 s for the Nyström machine with 500 centres and the same test
  error within 1 %; at n = 10⁴ it took 50 s against 8–11 s (the user guide's
  "Fitting at any n" page gives the measurements).
* **Beyond, the Nyström machine** (:class:`~kernelselect._nystrom_machine.NystroemPCG`)
  with m centres from :func:`auto_centres` (defined beside the machine, in
  :mod:`kernelselect._nystrom_machine`):

      m = max(⌈√n·ln n⌉, ⌈3·d_eff⌉), within [MIN_CENTRES, MAX_CENTRES], ≤ n,

  and at most what the memory guard allows. √n·ln n is the number of uniformly
  drawn centres with which Nyström kernel ridge regression keeps the exact
  estimator's learning rate at the ridge λ ≍ 1/√n (Rudi, Camoriano & Rosasco,
  NeurIPS 2015, Theorem 1 and its corollary); d_eff = Σ μᵢ/(μᵢ + α), the effective
  dimension at the selected (γ, α), counts the directions the ridge leaves in the
  model, and a Nyström model of rank m cannot fit more than m of them — three times
  d_eff leaves room for the sampling (the same theorem's m ≳ N(λ)·log n with the log
  replaced by a constant factor). The factor was measured (the user guide's "The
  choice of m"): with α chosen on the final model, protein at n = 2·10⁴ (d_eff = 1228)
  came within 3.0 % of the exact model's test error at 2·d_eff, 0.5 % at 3·d_eff and
  −0.6 % at 4·d_eff; cadata at n = 10⁴ within 0.3 % at 2·d_eff and −0.2 % at 3·d_eff.
  The selection measures d_eff on its last Nyström level when that level settled the
  choice (d_eff at most half its landmarks); otherwise the refit estimates it by
  :func:`pilot_effective_dimension`.
* **The refit's α**: the selection's candidates are re-scored on the final model by
  its exact leave-one-out error where n·m² is affordable
  (:mod:`kernelselect.models._nystrom_loo`); beyond, the selected α. For the default
  regressor the same leave-one-out also chooses the constant term: the training mean
  of y with the rest left to the kernel, or an unpenalised bias.
"""

from __future__ import annotations

import math
from typing import Any

from ._nystrom_machine import MAX_CENTRES, MIN_CENTRES, NystroemPCG, auto_centres, rule_centres
from ..utils._threads import blas_for_flops
from ..operators import get_approximation
from ..operators._base import Approximation

__all__ = ["EXACT_FIT_MAX_N", "MIN_CENTRES", "MAX_CENTRES", "PCG_NAMES", "auto_centres",
           "pilot_effective_dimension", "machine_approximation", "centres_rule",
           "describe_fit"]

#: the exact dense fit is used up to this many rows
EXACT_FIT_MAX_N = 5000
#: the names that select the Nyström machine solved by conjugate gradients
PCG_NAMES = ("nystrom_pcg", "nystroem_pcg", "pcg", "falkon")


#: most centres of the pilot estimate of the effective dimension
PILOT_MAX = 4000


def pilot_effective_dimension(X: Any, gamma: Any, alpha: float, kernel: str,
                              random_state: Any = None) -> float:
    """d_eff = Σ μ/(μ + α) over K's eigenvalues, estimated from m₀ uniformly drawn rows:
    the eigenvalues of K(Z₀, Z₀) scaled by n/m₀ (the Nyström estimate of K's leading
    spectrum), m₀ = min(n, 2⌈√n·ln n⌉, :data:`PILOT_MAX`). It cannot exceed m₀, so a
    value near m₀ means "at least". X in memory or a row-chunked Dask array (only the
    m₀ rows are read); ``kernel="ard"`` takes γ of shape (d,)."""
    import numpy as np

    from .. import lowlevel
    from ..utils._dask import compute, is_dask_array
    from ._nystrom_pcg import choose_centres
    from ..utils._validation import check_random_state
    from ..kernels import ard_scale

    n = int(X.shape[0])
    m0 = int(min(n, 2 * math.ceil(math.sqrt(n) * math.log(max(n, 2))), PILOT_MAX))
    idx = choose_centres(n, m0, check_random_state(random_state))
    Z = np.asarray(compute(X[idx]) if is_dask_array(X) else X[idx], dtype=np.float64)
    if kernel == "ard":
        Z, gamma, kernel = ard_scale(Z, gamma), 1.0, "gaussian"
    with blas_for_flops(4.0 * m0 ** 3):
        mu = np.linalg.eigvalsh(lowlevel.kernel_block(Z, Z, float(gamma), kernel=kernel))
    lam = np.clip(mu, 0.0, None) * (n / m0)
    return float(np.sum(lam / (lam + alpha)))


def machine_approximation(approximation: Any, n: int, d: int, t: int = 1,
                          d_eff: float | None = None, workers: int | None = None,
                          in_memory: bool = True, chunks: tuple[int, ...] | None = None,
                          loo_alphas: Any = None, loo_intercept: bool = False) -> Approximation:
    """The recipe a machine on n rows of d features (t outputs) is fitted with.

    ``"auto"``: :class:`~kernelselect.operators.Exact` up to :data:`EXACT_FIT_MAX_N`
    rows, else :class:`NystroemPCG` with :func:`auto_centres` (``d_eff``: the effective
    dimension at the chosen (γ, α), when the selection measured it; ``loo_alphas``: its
    candidate ridges; ``loo_intercept``: the leave-one-out also chooses the constant
    term). ``"nystrom-pcg"`` (or ``"pcg"``, ``"falkon"``): ``NystroemPCG()``.
    Anything else as :func:`kernelselect.operators.get_approximation`.
    ``in_memory=False`` (a Dask X of row ``chunks``, never gathered): ``"auto"`` is the
    Nyström machine at every n, its centres within what the client's and each task's
    memory allow.
    """
    if isinstance(approximation, str):
        key = approximation.strip().lower().replace("-", "_")
        if key == "auto":
            if in_memory and n <= EXACT_FIT_MAX_N:
                return get_approximation("exact")
            m = auto_centres(n, d_eff, d, t, workers, None if in_memory else chunks or (n,))
            return NystroemPCG(n_centres=m, loo_alphas=loo_alphas, loo_intercept=loo_intercept)
        if key in PCG_NAMES:
            return NystroemPCG()
    return get_approximation(approximation)


def centres_rule(recipe: Any, n: int, d_eff: float | None) -> str:
    """How the automatic recipe's m was set: "rule" (:func:`rule_centres`) or "memory
    cap" (the memory guard allowed fewer centres than the rule asks for)."""
    return "memory cap" if recipe.n_centres < rule_centres(n, d_eff) else "rule"


def describe_fit(details: dict[str, Any]) -> dict[str, Any]:
    """What a fitted machine reports of how it was solved: ``approximation`` (the
    method), ``n_centres`` (support points of a Nyström model, else None),
    ``n_iter`` and ``residual`` (the conjugate-gradient solve's, else None)."""
    method = details.get("method")
    centres = details.get("n_centres", details.get("n_support") if method == "nystrom" else None)
    iters = details.get("iterations")
    residual = details.get("residual")
    if isinstance(iters, list):             # an α path: the first α's
        iters, residual = iters[0], residual[0] if residual is not None else None
    return {"approximation": "exact" if method in ("cholesky", "eigh", "tridiagonal")
            else method,
            "n_centres": None if centres is None else int(centres),
            "n_iter": None if iters is None else int(iters),
            "residual": None if residual is None else float(max(residual))}
