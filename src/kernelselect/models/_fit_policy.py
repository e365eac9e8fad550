"""How the fitted machines solve when left to ``approximation="auto"``.

The thresholds and the centres rule are set in :mod:`kernelselect._policy`, each with
the study that set it; this module measures what they read (the effective-dimension
pilot, the memory guard) and builds the recipe.

* **Exact up to** :data:`EXACT_FIT_MAX_N` rows: K + αI by one Cholesky factorisation,
  the reference model. Its cost grows as n³/3 flops and n² doubles: at n = 5000 the
  exact fit took 14 s on this project's 2-core test machine under load (a 200 MB
  matrix), against 3 s for the Nyström machine with 500 centres and the same test
  error within 1 %; at n = 10⁴ it took 50 s against 8–11 s (the user guide's
  "Fitting at any n" page gives the measurements).
* **Beyond, the Nyström machine** (:class:`~kernelselect.solvers._nystroem_pcg.NystroemPCG`)
  with m centres from :func:`auto_centres` (defined beside the machine, in
  :mod:`kernelselect.solvers._nystroem_pcg`):

      m = max(⌈√n·ln n⌉, ⌈d_eff·max(3, ln d_eff)⌉), within [MIN_CENTRES, MAX_CENTRES], ≤ n,

  and at most what the memory guard allows (beyond, an :class:`ApproximationWarning`
  names the cap and how to lift it). √n·ln n is the number of uniformly drawn centres
  with which Nyström kernel ridge regression keeps the exact estimator's learning
  rate at the ridge λ ≍ 1/√n (Rudi, Camoriano & Rosasco, NeurIPS 2015, Theorem 1 and
  its corollary); d_eff = Σ μᵢ/(μᵢ + α), the effective dimension at the machine's
  (γ, α), counts the directions the ridge leaves in the model, and a Nyström model of
  rank m cannot fit more than m of them. d_eff·ln d_eff is the ridge-leverage sampling
  rate (Musco & Musco, NeurIPS 2017) with constant 1, :func:`deff_centres`; three
  times d_eff is its floor, measured on protein at n = 2·10⁴ (d_eff = 1228) and cadata
  at n = 10⁴ with α chosen on the final model (the user guide's "The choice of m");
  on cadata at n = 3000, γ = 1, α = 3 (d_eff = 349) 3·d_eff left the test error 5.7 %
  above the exact fit's and d_eff·ln d_eff 2.5 % (``studies/bare_machine_gap.py``
  measures the bare machine at n ≥ 5001).
  The selection measures d_eff on its last Nyström level when that level settled the
  choice (d_eff at most half its landmarks); otherwise the refit, and a machine fitted
  on its own, measure it at their own (γ, α) by :func:`measure_effective_dimension`.
  What the fitted model lost is reported (:func:`fit_gap`: the machines'
  ``approximation_gap_``, ``details["refit"]["approximation_gap"]`` of a selection).
* **The refit's α**: the selection's candidates are re-scored on the final model by
  its exact leave-one-out error where n·m² is affordable
  (:mod:`kernelselect.solvers._loo`); beyond, the selected α. For the default
  regressor the same leave-one-out also chooses the constant term: the training mean
  of y with the rest left to the kernel, or an unpenalised bias.
"""

from __future__ import annotations

from typing import Any

from .. import _policy as _rules
# the rules' thresholds (kernelselect._policy, each with its study) keep their names here
from .._policy import (EXACT_FIT_MAX_N, EXACT_SHORTCUT, GROW_CAPTURED, GROW_ROUNDS,
                       GROW_SLACK, MAX_CENTRES, MIN_CENTRES, PILOT_MAX, PILOT_SATURATION,
                       rule_centres)
from ..solvers._nystroem_pcg import NystroemPCG, auto_centres, memory_centres
from ..utils._threads import blas_for_flops
from ..utils._warnings import ApproximationWarning, warn_user
from ..operators import Approximation, get_approximation
from ..solvers import MachineRecipe, machine_recipe, resolve_machine

__all__ = ["EXACT_FIT_MAX_N", "MIN_CENTRES", "MAX_CENTRES", "PCG_NAMES", "auto_centres",
           "pilot_effective_dimension", "measure_effective_dimension",
           "machine_approximation", "centres_rule", "describe_fit", "fit_gap",
           "grown_recipe"]

#: the names that select the Nyström machine solved by conjugate gradients
PCG_NAMES = ("nystrom_pcg", "nystroem_pcg", "pcg", "falkon")


def pilot_effective_dimension(X: Any, gamma: Any, alpha: float, kernel: str,
                              random_state: Any = None) -> float:
    """d_eff = tr K(K + αI)⁻¹ = Σ μᵢ/(μᵢ + α), estimated from m₀ uniformly drawn rows
    (:func:`measure_effective_dimension`, whose first value this is)."""
    return measure_effective_dimension(X, gamma, alpha, kernel, random_state)[0]


def measure_effective_dimension(X: Any, gamma: Any, alpha: float, kernel: str,
                                random_state: Any = None) -> tuple[float, int]:
    """(d_eff, m₀): the effective dimension Σ μᵢ/(μᵢ + α) of K at (γ, α), estimated from
    the eigenvalues of K(Z₀, Z₀) on m₀ uniformly drawn rows, scaled by n/m₀.

    The scaled eigenvalues are the Nyström estimate of K's leading spectrum, so the
    estimate is d_eff of the subsample's kernel matrix at the ridge α·m₀/n: both are
    estimates of the same quantity of the kernel's integral operator at λ = α/n,
    tr C(C + λ)⁻¹, and the subsample's is close when m₀ well exceeds it (Rudi,
    Camoriano & Rosasco, NeurIPS 2015, Prop. 1 and its proof). It cannot exceed m₀ and
    falls short of the full d_eff well before it nears m₀ (on cadata at n = 6000,
    γ = 0.1, α = 0.006: 432 from 1348 rows, 587 from 4000, 643 exactly), so while it
    exceeds :data:`PILOT_SATURATION`·m₀ the rows are drawn again, at least twice and
    six estimates as many, up to min(n, :data:`PILOT_MAX`, what the memory limit allows
    for three m₀ × m₀ arrays); m₀ starts at min(n, 2⌈√n·ln n⌉) within that cap. Where
    m₀ = n the value is exact; otherwise it tends to be low (the fitted model's own tr S,
    a lower bound, corrects it: :func:`grown_recipe`). X in memory or a row-chunked Dask
    array (only the m₀ rows are read); ``kernel="ard"`` takes γ of shape (d,).
    Cost: O(m₀³) per draw.
    """
    import numpy as np

    from ..utils._validation import check_random_state

    from ..utils._config import max_bytes

    n = int(X.shape[0])
    m0, top = _rules.pilot_rows(n, max_bytes())
    rng = check_random_state(random_state)
    while True:
        d_eff = _pilot_estimate(X, gamma, alpha, kernel, m0, rng)
        grown = _rules.pilot_regrow(m0, top, d_eff)
        if grown is None:
            return d_eff, m0
        m0 = grown


def _pilot_estimate(X: Any, gamma: Any, alpha: float, kernel: str, m0: int,
                    rng: Any) -> float:
    """Σ λ/(λ + α) over the eigenvalues λ of (n/m₀)·K(Z₀, Z₀), Z₀ m₀ uniform rows."""
    import numpy as np

    from .. import lowlevel
    from ..kernels import Kernel
    from ..utils._dask import compute, is_dask_array
    from ..solvers._pcg import choose_centres

    n = int(X.shape[0])
    idx = choose_centres(n, m0, rng)
    Z = np.asarray(compute(X[idx]) if is_dask_array(X) else X[idx], dtype=np.float64)
    family = Kernel.of(kernel)
    Z, gamma = family.points(Z, gamma)
    kernel = family.compiled
    with blas_for_flops(4.0 * m0 ** 3):
        mu = np.linalg.eigvalsh(lowlevel.kernel_block(Z, Z, float(gamma), kernel=kernel))
    lam = np.clip(mu, 0.0, None) * (n / m0)
    return float(np.sum(lam / (lam + alpha)))


def machine_approximation(approximation: Any, n: int, d: int, t: int = 1,
                          d_eff: float | None = None, workers: int | None = None,
                          in_memory: bool = True, chunks: tuple[int, ...] | None = None,
                          loo_alphas: Any = None, loo_intercept: bool = False, *,
                          X: Any = None, gamma: Any = None, alphas: Any = None,
                          kernel: str = "gaussian", random_state: Any = None,
                          warn: bool = True) -> Approximation | MachineRecipe:
    """The recipe a machine on n rows of d features (t outputs) is fitted with.

    ``"auto"``: :class:`~kernelselect.operators.Exact` up to :data:`EXACT_FIT_MAX_N`
    rows, else :class:`NystroemPCG` with :func:`auto_centres` (``d_eff``: the effective
    dimension at the chosen (γ, α), when the selection measured it; ``loo_alphas``: its
    candidate ridges; ``loo_intercept``: the leave-one-out also chooses the constant
    term). Without ``d_eff`` but with the training rows ``X`` and the machine's own
    ``gamma`` and ``alphas``, d_eff is measured at γ and the smallest α
    (:func:`measure_effective_dimension`, ``random_state``), so that a machine fitted
    without a selection gets the centres its own (γ, α) need. Where the memory guard
    allows fewer centres than the rule asks for, an :class:`ApproximationWarning` says
    so and how to get the larger model (``warn=False``: not yet, for a check ahead of
    the selection, whose refit warns with the rule at its measured d_eff).
    ``"nystrom-pcg"`` (or ``"pcg"``, ``"falkon"``): ``NystroemPCG()``. Anything else as
    :func:`kernelselect.operators.get_approximation`.
    Where a machine's own d_eff asks for all n rows as centres, n is within
    :data:`EXACT_SHORTCUT` times the exact limit and the exact machine fits in memory,
    ``"auto"`` is exact (a Nyström model on every row is the exact one, at a higher
    cost: 263 s against 7 s for the exact fit on cadata at n = 5001, γ = 1, α = 0.005).
    ``in_memory=False`` (a Dask X of row ``chunks``, never gathered): ``"auto"`` is the
    Nyström machine at every n, its centres within what the client's and each task's
    memory allow.
    """
    if isinstance(approximation, str):
        key = approximation.strip().lower().replace("-", "_")
        if key == "auto":
            if _rules.fit_exact(n, in_memory):
                return get_approximation("exact")
            pilot_rows = None
            if d_eff is None and X is not None and gamma is not None and alphas is not None:
                import numpy as np

                d_eff, pilot_rows = measure_effective_dimension(
                    X, gamma, float(np.min(alphas)), kernel, random_state)
            if (pilot_rows is not None and _rules.exact_shortcut(n, d_eff, in_memory)
                    and _exact_fits(n, d)):
                return get_approximation("exact")      # m = n: the Nyström model is K
            m = auto_centres(n, d_eff, d, t, workers, None if in_memory else chunks or (n,))
            recipe = NystroemPCG(n_centres=m, loo_alphas=loo_alphas, loo_intercept=loo_intercept)
            asked = _rules.rule_centres(n, d_eff)
            recipe.fit_policy = {"n_centres_asked": asked, "effective_dimension": d_eff,
                                  "pilot_rows": pilot_rows,
                                  "centres_rule": "memory cap" if m < asked else "rule"}
            if m < asked and warn:
                _warn_capped(n, m, asked, d_eff, in_memory)
            return recipe
        if key in PCG_NAMES:
            return NystroemPCG()
    return resolve_machine(approximation)


def _exact_fits(n: int, d: int) -> bool:
    """Whether the exact machine's memory guard allows n rows (``Exact().machine()``)."""
    try:
        get_approximation("exact").machine()[0].check_resources(n, d)
    except ValueError:
        return False
    return True


def _warn_capped(n: int, m: int, asked: int, d_eff: float | None, in_memory: bool) -> None:
    """The :class:`ApproximationWarning` of a Nyström machine held below its rule."""
    from ..utils._resources import memory_fit_limit

    why = "" if d_eff is None else f" (the effective dimension at this γ and α is about {d_eff:.0f})"
    if in_memory:
        where = (f"the budget of an automatically sized in-memory fit, "
                 f"{memory_fit_limit() / 2**20:.0f} MiB, allows no more")
        budget, last = "this budget", "fit on a row-chunked Dask array"
    else:
        where = "the Dask client's budget or each task's memory allows no more"
        budget, last = "the client's budget", "use smaller row chunks"
    ways = (f"raise the limit (kernelselect.set_config(max_bytes=...), which is also "
            f"{budget} once set), give the centres yourself "
            f"(approximation=NystroemPCG(n_centres=...)), or {last}")
    warn_user(
        f"approximation='auto' fits the Nyström machine on n={n} rows with {m} centres, "
        f"fewer than the {asked} its rule asks for{why}: {where}. The fitted model may be "
        f"less accurate than the exact one. For a larger model {ways}.",
        ApproximationWarning)


def grown_recipe(recipe: Any, gap: dict[str, Any] | None, n: int, d: int, t: int = 1,
                 workers: int | None = None, chunks: tuple[int, ...] | None = None
                 ) -> Any:
    """The recipe to fit again with, or None: when the fitted model of a machine that
    measured d_eff at its own (γ, α) holds less than :data:`GROW_CAPTURED` of it
    (``gap["captured"]``, :func:`fit_gap`), a copy with twice the centres, within n,
    :data:`MAX_CENTRES` and the memory guard, at most :data:`GROW_ROUNDS` times; where
    it holds more than the pilot measured (the pilot fell short: the model's tr S is
    a lower bound of d_eff), a copy with the rule's centres at that tr S when they
    exceed :data:`GROW_SLACK` times the present ones. The
    share is measured, not assumed: uniform centres need more than d_eff·ln d_eff
    where the leverage of the rows is uneven. Where no more centres are allowed, an
    :class:`ApproximationWarning` gives the share and the ways to a larger model."""
    import copy

    policy = machine_recipe(recipe).fit_policy
    if (gap is None or policy is None or policy.get("pilot_rows") is None
            or gap["captured"] is None):
        return None
    rounds = int(policy.get("rounds", 0))
    m_now = int(recipe.n_centres)
    if gap["captured"] >= _rules.GROW_CAPTURED:
        # tr S of the Nyström model is at most the exact d_eff: above the pilot's
        # estimate it is the better one, and the rule is applied to it
        want = _rules.rule_centres(n, gap["model_effective_dimension"])
        if want <= _rules.GROW_SLACK * m_now or rounds >= _rules.GROW_ROUNDS:
            return None
    else:
        want = 2 * m_now
    cap = min(n, _rules.MAX_CENTRES, memory_centres(n, d, t, workers, chunks))
    m = min(cap, want)
    if gap["captured"] >= _rules.GROW_CAPTURED and m <= m_now:
        return None
    if m <= m_now or rounds >= _rules.GROW_ROUNDS:
        if m_now < n and policy["centres_rule"] != "memory cap":
            warn_user(
                f"approximation='auto' fits the Nyström machine on n={n} rows with {m_now} "
                f"centres; its model holds {100 * gap['captured']:.0f} % of the effective "
                f"dimension at this γ and α (about {policy['effective_dimension']:.0f}), "
                f"and {'the memory limit allows' if m <= m_now else 'the rule stops at'} "
                f"no more centres. For a larger model give the centres yourself "
                f"(approximation=NystroemPCG(n_centres=...)), raise the memory limit "
                f"(kernelselect.set_config(max_bytes=...)), or fit on a row-chunked Dask "
                f"array.", ApproximationWarning)
        return None
    grown = copy.copy(recipe)
    grown.n_centres = m
    grown.fit_policy = dict(policy, rounds=rounds + 1,
                             n_centres_asked=max(int(policy["n_centres_asked"]), m))
    return grown


def fit_gap(recipe: Any, details: dict[str, Any], alphas: Any = None
            ) -> dict[str, Any] | None:
    """How far the automatic Nyström model may be from the exact one, for a model fitted
    by a recipe of :func:`machine_approximation` ("auto" beyond the exact limit), else
    None: ``n_centres`` used and ``n_centres_asked`` by the rule, ``centres_rule``
    ("rule" or "memory cap"), ``effective_dimension`` of K at (γ, α) (measured by the
    pilot, whose rows are ``pilot_rows``, or by the selection: then ``pilot_rows`` is
    None), ``model_effective_dimension`` tr S of the fitted Nyström model (at the
    smallest of ``alphas``, the α d_eff is measured at; the first without them),
    ``captured`` = ``model_effective_dimension`` / ``effective_dimension``, and
    ``rounds``, the refits with more centres (:func:`grown_recipe`).

    Because the Nyström matrix K̃ satisfies K̃ ≼ K, every eigenvalue of K̃ is at most the
    matching one of K, and tr K̃(K̃ + αI)⁻¹ ≤ tr K(K + αI)⁻¹: ``captured`` ≤ 1 up to the
    pilot's error, and 1 − ``captured`` is the share of the exact model's effective
    directions the fitted model lacks.
    """
    policy = machine_recipe(recipe).fit_policy
    if policy is None or details.get("method") != "nystrom-pcg":
        return None
    tr = details.get("effective_dimension")
    if isinstance(tr, list):                         # an α path: the smallest α's
        import numpy as np

        tr = tr[int(np.argmin(alphas)) if alphas is not None and len(tr) > 1 else 0]
    # With a bias the solver's d_eff is already that of the centred features, the
    # directions the coefficients fit (the constant one belongs to the bias).
    tr_k = None if tr is None else float(tr)
    d_eff = policy["effective_dimension"]
    return dict(policy, rounds=int(policy.get("rounds", 0)),
                n_centres=int(details["n_centres"]) if "n_centres" in details
                else int(details.get("n_support", 0)),
                model_effective_dimension=tr_k,
                captured=None if tr_k is None or not d_eff else tr_k / d_eff)


def centres_rule(recipe: Any, n: int, d_eff: float | None) -> str:
    """How the automatic recipe's m was set: "rule" (:func:`rule_centres`) or "memory
    cap" (the memory guard allowed fewer centres than the rule asks for)."""
    return "memory cap" if recipe.n_centres < _rules.rule_centres(n, d_eff) else "rule"


def describe_fit(details: dict[str, Any]) -> dict[str, Any]:
    """What a fitted machine reports of how it was solved: ``approximation`` (the
    method), ``n_centres`` (support points of a Nyström model, else None),
    ``n_iter`` and ``residual`` (the conjugate-gradient solve's, else None),
    ``approximation_gap`` (:func:`fit_gap`, else None)."""
    method = details.get("method")
    centres = details.get("n_centres", details.get("n_support") if method == "nystrom" else None)
    iters = details.get("iterations")
    residual = details.get("residual")
    if isinstance(iters, list):             # an α path: the first α's
        iters, residual = iters[0], residual[0] if residual is not None else None
    return {"approximation": "exact" if method in ("cholesky", "eigh", "tridiagonal")
            else method,
            "approximation_gap": details.get("approximation_gap"),
            "n_centres": None if centres is None else int(centres),
            "n_iter": None if iters is None else int(iters),
            "residual": None if residual is None else float(max(residual))}
