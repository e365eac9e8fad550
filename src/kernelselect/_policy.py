"""Every automatic rule of the library, each with the study that set it.

What ``"auto"`` (and a left-out grid) means is decided here and nowhere else: which
stand-in for the kernel matrix a selection starts on and how its Nyström levels grow,
which criterion the defaults use, the γ and α grids, the exact limits of the selection
and of the fitted machines, the centres of the Nyström machine and the rows its
preconditioner samples, the effective-dimension pilot, the constant term of the refit,
the kernel of ``kernel="auto"``, the exact limits of the per-feature search and of the
jackknife+ interval.

The rules are pure: thresholds, and functions of sizes (n rows, m landmarks or
centres), the task, a measured effective dimension or a memory cap. What they read is
measured where the data are (the pilot of :mod:`kernelselect.models._fit_policy`, the
memory guard of :mod:`kernelselect.solvers._pcg`, the levels' spectra of
:mod:`kernelselect.selection._policy`); those modules import their thresholds from
here, under the names they always had.

Every study named here lives in the repository's ``studies/`` folder, its tables in
``studies/results/``; ``docs/defaults.md`` and the user guide's pages "Fitting at any
n", "One bandwidth per feature (ARD)" and "Probabilities and prediction intervals"
quote their numbers. A rule that no study measured says so.

This module imports nothing from the package, so that every layer may read it.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    # the selection's grids and criterion
    "GAMMA_EXPONENTS", "ALPHA_EXPONENTS", "alpha_path", "ALPHA_SELECTING", "KFOLD_MAX_N",
    "FALLBACK_CRITERIA", "default_criterion", "criterion_reason",
    # the stand-in of approximation="auto" and its levels
    "EXACT_MAX_N", "START_LANDMARKS", "STABLE_STEPS", "DEFF_FRACTION", "MAX_LANDMARKS",
    "LAST_LEVEL", "GATHER_BELOW", "WINDOW", "EXTEND_STEPS", "MAX_EXTENSIONS",
    "SUBSAMPLE_ROWS", "selection_start", "next_level", "level_settled", "coarse_rows",
    # the fitted machine of approximation="auto"
    "EXACT_FIT_MAX_N", "EXACT_SHORTCUT", "fit_exact", "exact_shortcut",
    "MIN_CENTRES", "MAX_CENTRES", "GROWTH", "DEFF_FACTOR", "deff_centres", "rule_centres",
    "PILOT_MAX", "PILOT_SATURATION", "pilot_rows", "pilot_regrow",
    "GROW_CAPTURED", "GROW_ROUNDS", "GROW_SLACK",
    "SAMPLE_MIN_PER_CENTRE", "SAMPLE_MAX_PER_CENTRE", "SAMPLE_ITERATION_POWER",
    "SAMPLE_BALANCE", "SAMPLE_BYTES_SHARE", "sample_per_centre",
    # the constant term
    "LOO_FLOPS", "intercept_forms", "no_intercept_kfold", "criterion_without_intercept",
    # the kernel, the per-feature search, the intervals
    "kernel_for_task", "ARD_EXACT_MAX_N", "ARD_MAX_LANDMARKS", "ARD_KFOLD_MAX_N",
    "ARD_EVIDENCE_MAX_N", "ARD_AUTO_MAX_N", "ARD_CRITERIA", "ARD_GUARD_MAX_N",
    "ARD_EVIDENCE_SUBSAMPLE", "JACKKNIFE_PLUS_MAX_N", "LOO_EXACT_MAX_N",
]


# =========================================================================== selection
# --------------------------------------------------------------------------- grids

#: γ = γ₀·2^k for these k around the median heuristic γ₀ (15 values): the grid of the
#: selection studies (``studies/selection_quality.py``; the 5-fold CV reference of
#: ``studies/defaults_quality.py`` searches the same 15 γ), which grows at an edge the
#: best point lies on (:data:`EXTEND_STEPS`)
GAMMA_EXPONENTS = np.arange(-7, 8)

#: α = n·10^k for these k (half-decades from 10⁻⁶ to 1, 13 values): the per-sample ridge
#: μ = α/n from near-interpolation to the mean of K's spectrum (tr K = n for the
#: Gaussian and Laplacian kernels). The reference of ``studies/defaults_quality.py``
#: searches n·10^k, k = −6…0 (``studies/results/defaults_quality.md``); how much the
#: ridge level decides which criteria select well is ``studies/mu_sensitivity.py``.
ALPHA_EXPONENTS = np.arange(-6.0, 0.25, 0.5)


def alpha_path(n: int) -> np.ndarray:
    """The automatic α path n·10^k, k in :data:`ALPHA_EXPONENTS`."""
    return float(n) * 10.0 ** ALPHA_EXPONENTS


#: criteria that estimate the test error, so that their minimum over α is a choice of
#: α; the others (regularised training errors, alignments) keep the single α = 1 by
#: default, as their minimum over α is no choice of it (how the ridge level decides the
#: γ they choose: ``studies/mu_sensitivity.py``, ``studies/results/mu_sensitivity``)
ALPHA_SELECTING = frozenset({"eloo", "eloo_error_rate", "gcv", "eloo_multiclass", "ekfold",
                             "ekfold_error_rate", "ekfold_multiclass"})

# --------------------------------------------------------------------------- criterion

#: the defaults use 5-fold cross-validation in closed form (``ekfold``) up to this n on
#: the exact kernel matrix, leave-one-out beyond: on small sets leave-one-out picked
#: near-interpolating ridges that 5-fold CV avoids (servo, 83 rows: +0.0564 NMSE behind
#: CV with leave-one-out, −0.0081 with the closed-form 5-fold;
#: ``studies/defaults_quality.py`` and ``studies/defaults_rules.py``, tables in
#: ``studies/results/defaults_quality.md`` and ``defaults_rules.md``)
KFOLD_MAX_N = 400

#: the default criterion on an approximation that computes neither the k-fold nor the
#: leave-one-out error (capability tag → criterion): of the randomised circulant's
#: criteria, the one whose γ-curve follows its exact counterpart (KTA) best, median
#: Spearman ρ 0.98 over 10 binary sets, where its leave-one-out form random_eloo
#: scores 0.06 (``studies/random_mcm_spearman.py``,
#: ``studies/results/random_mcm_spearman.md``)
FALLBACK_CRITERIA = {"random_mcm": "random_kta_row_2g"}


def default_criterion(task: str, n: int | None = None, blocks: bool = False,
                      provides: frozenset[str] | None = None) -> tuple[str, dict]:
    """(criterion name, parameters) of ``criterion="auto"`` for a task on n points.

    ``blocks``: whether the approximation holds the whole kernel matrix (so that the
    k-fold criteria can run); ``provides``: its capabilities, when known — without
    "spectral" (no leave-one-out error) the criterion of :data:`FALLBACK_CRITERIA` for
    the capability it has. Otherwise the closed-form 5-fold error up to
    :data:`KFOLD_MAX_N` rows on the exact matrix, leave-one-out beyond; the squared
    loss (PRESS) for binary labels and real targets, the one-vs-rest error rate with a
    PRESS tie-break (``loss="hybrid"``) for C ≥ 3 classes. The squared loss: the 0-1
    leave-one-out error scored −0.79 pp against 5-fold CV on 28 binary sets (ringnorm
    18 points behind), the defaults +0.13 pp (``studies/defaults_quality.py``,
    ``studies/results/defaults_quality.md``)."""
    if provides is not None and "spectral" not in provides and "blocks" not in provides:
        for tag, name in FALLBACK_CRITERIA.items():
            if tag in provides:
                return name, {}
    kfold = blocks and n is not None and n <= KFOLD_MAX_N
    if task == "multiclass":
        return ("ekfold_multiclass" if kfold else "eloo_multiclass"), {"loss": "hybrid"}
    return ("ekfold" if kfold else "eloo"), {"loss": "squared"}


def criterion_reason(name: str, n: int | None = None) -> str:
    """Why :func:`default_criterion` chose ``name`` (for a selection's details)."""
    if name in FALLBACK_CRITERIA.values():
        return (f"{name}: the approximation computes neither the k-fold nor the "
                "leave-one-out error; its criterion that follows the exact one best")
    if name.startswith("ekfold"):
        return f"{name}: closed-form 5-fold cross-validation on the exact matrix, n={n} ≤ {KFOLD_MAX_N}"
    return f"{name}: closed-form leave-one-out error (n={n}, or no exact matrix)"


# --------------------------------------------------------------------------- stand-in

#: the selection uses the exact kernel matrix up to this n: there it costs no more
#: than the Nyström levels would (``studies/auto_levels.py``,
#: ``studies/results/auto_levels.md``; the defaults' numbers beyond it in
#: ``docs/defaults.md``)
EXACT_MAX_N = 400
#: landmarks of the first Nyström level, which evaluates the whole grid; 200 scored
#: +0.14 pp / −0.02 pp / +0.0012 NMSE at 3.5 times the time (``studies/auto_levels.py``,
#: ``studies/results/auto_levels.md``)
START_LANDMARKS = 100
#: two levels agree when their best points lie within this many grid steps on each
#: axis (γ steps are factors of 2, α steps half-decades); exact agreement with ±2
#: windows took twice the time for no better choice (``studies/auto_levels.py``)
STABLE_STEPS = 1
#: a Nyström level is large enough when its best point's effective dimension
#: Σ λ/(λ + α) is at most this fraction of its landmarks (None: no such check).
#: Without the check the multi-class and regression means fell to −0.11 pp and +0.0031
#: NMSE; with 1/4, +0.08 pp and +0.0008 at 3.5 times the time
#: (``studies/auto_levels.py``, ``studies/results/auto_levels.md``)
DEFF_FRACTION: float | None = 0.5
#: largest Nyström level: a level costs about 2nm² per γ; on cadata at n = 10⁴ one of
#: 1600 landmarks took 33 s per γ against 6.7 s at 800, for the choice the 800-level
#: had made (``studies/auto_levels.py``, ``studies/speed_profile.py``)
MAX_LANDMARKS = 800
#: the level after one whose double would exceed n/2 landmarks: "exact" (the exact
#: kernel matrix on the window) or "half" (a last Nyström level of min(n/2,
#: MAX_LANDMARKS) landmarks). "half" was 1.1–6× faster but chose larger ridges
#: (+0.0084 NMSE with 400 < n ≤ 1000; ``studies/speed_exact_region.py``,
#: ``studies/results/speed_exact_region.md``)
LAST_LEVEL = "exact"
#: Dask input with fewer rows than this is gathered into memory by
#: ``approximation="auto"``: below it the levels may reach the exact kernel matrix (a
#: consequence of :data:`EXACT_MAX_N` and :data:`MAX_LANDMARKS`, not a measurement)
GATHER_BELOW = 4 * MAX_LANDMARKS
#: half-width (in γ steps) of the window a level after the first starts from (and of
#: the rows an α extension evaluates). Skipping the previous best's neighbours where
#: the levels below bound them away would have kept another γ 10 times in 56 skips, to
#: save 6 s of 40.6 s (``studies/speed_windows.py``, ``studies/results/speed_windows.md``)
WINDOW = 1
#: values added beyond an automatic grid's edge per extension, and extensions per axis
#: (set by hand: two extensions of four steps take γ 2⁸ beyond the grid; no study)
EXTEND_STEPS = 4
MAX_EXTENSIONS = 2


#: the coarse levels of ``approximation="auto"`` (the whole first grid and every level
#: below the last) run on this many uniformly drawn rows when n is more than twice it;
#: the last level, which decides, runs on all rows. The default criteria are means over
#: rows: for Gaussian held-out residuals the relative standard error of the mean
#: squared residual is √(2/r), 1 % at r = 2·10⁴ rows, so the subsample places the
#: minimum to within the grid's resolution and the last level, on every row, resolves
#: what lies below it (``studies/multi_fidelity.py``,
#: ``studies/results/multi_fidelity.md``)
SUBSAMPLE_ROWS = 20_000


def coarse_rows(n: int) -> int | None:
    """Rows the coarse levels of a selection on n rows run on (:data:`SUBSAMPLE_ROWS`
    when n > 2·:data:`SUBSAMPLE_ROWS`), or None: all n. The coarse levels climb to
    :data:`MAX_LANDMARKS`/2 at most; the level after the last of them runs on all rows
    (the same landmarks where the subsample settled, to confirm it; twice them where it
    did not). The per-sample ridge α/n carries from the subsample to all rows (α = r·μ
    there, n·μ here): the α path is n·10^k on every row count, so a point keeps its
    exponent k."""
    return SUBSAMPLE_ROWS if n > 2 * SUBSAMPLE_ROWS else None


def selection_start(n: int, spectral: bool) -> tuple[bool, str]:
    """(exact, reason): whether ``approximation="auto"`` starts on the exact kernel
    matrix for n points (n ≤ :data:`EXACT_MAX_N`, or criteria of the kernel's moments
    alone, which stream it), else on the nested Nyström levels; ``spectral`` says
    whether a criterion needs more than the moments."""
    if not spectral:
        return True, "moment criteria only: the exact kernel matrix, streamed"
    if n <= EXACT_MAX_N:
        return True, (f"n={n} ≤ {EXACT_MAX_N}: the exact kernel matrix costs "
                      "no more than the Nyström levels would")
    return False, f"n={n} > {EXACT_MAX_N}: Nyström levels with nested landmarks"


def next_level(m: int, n: int, top: int = MAX_LANDMARKS) -> tuple[str, int, bool, str | None]:
    """(kind, landmarks, last, why it stops) of the level after one of m landmarks on
    n points: kind "nystrom" (twice the landmarks; with :data:`LAST_LEVEL` = "half" a
    last level of min(n/2, :data:`MAX_LANDMARKS`) once the double would exceed n/2),
    "exact" (the exact window, once the double would exceed n/2 landmarks: at that size
    a Nyström level costs as much as the exact matrix) or "stop" (beyond ``top``,
    :data:`MAX_LANDMARKS` unless the coarse levels stop lower, or no larger last
    level)."""
    m_next = 2 * m
    if 2 * m_next > n and LAST_LEVEL == "half":
        m_next = min(n // 2, MAX_LANDMARKS)
        if m_next <= m:
            return "stop", m_next, True, (f"next level {2 * m} > n/2 and m = {m} ≥ "
                                          f"min(n/2, MAX_LANDMARKS)")
        return "nystrom", m_next, True, None
    if 2 * m_next > n:
        return "exact", m_next, False, None
    if m_next > top:
        return "stop", m_next, False, (
            f"next level {m_next} > MAX_LANDMARKS={MAX_LANDMARKS}" if top == MAX_LANDMARKS
            else f"next level {m_next} runs on all rows")
    return "nystrom", m_next, False, None


def level_settled(d_eff: float, m: int) -> bool:
    """Whether a level of m landmarks that agrees with the one before holds enough
    directions for the model chosen: d_eff ≤ :data:`DEFF_FRACTION`·m (always, when
    the check is off). A Nyström model with m ≳ d_eff landmarks predicts as the exact
    one (Bach, COLT 2013; Rudi, Camoriano & Rosasco, NeurIPS 2015)."""
    return DEFF_FRACTION is None or d_eff <= DEFF_FRACTION * m


# =========================================================================== machines

#: the fitted machine of ``approximation="auto"`` is exact up to this many rows: at
#: n = 5000 the exact fit took 14 s against 3 s for the Nyström machine with the same
#: test error within 1 % (``studies/fit_default.py``, ``studies/results/fit_default.md``,
#: the user guide's "Fitting at any n")
EXACT_FIT_MAX_N = 5000
#: up to this many times EXACT_FIT_MAX_N rows a machine whose own d_eff asks for every
#: row as a centre is fitted exactly (263 s against 7 s for the exact fit on cadata at
#: n = 5001, γ = 1, α = 0.005; ``studies/bare_machine_gap.py``,
#: ``studies/results/bare_machine_gap.md``)
EXACT_SHORTCUT = 2


def fit_exact(n: int, in_memory: bool = True) -> bool:
    """Whether ``approximation="auto"`` fits a machine on n rows exactly: in memory and
    n ≤ :data:`EXACT_FIT_MAX_N` (row-chunked Dask input is never gathered: the Nyström
    machine at every n)."""
    return in_memory and n <= EXACT_FIT_MAX_N


def exact_shortcut(n: int, d_eff: float | None, in_memory: bool = True) -> bool:
    """Whether a machine that measured its own ``d_eff`` beyond the exact limit is
    fitted exactly all the same: its rule asks for all n rows as centres
    (:func:`rule_centres`) and n ≤ :data:`EXACT_SHORTCUT`·:data:`EXACT_FIT_MAX_N`
    (the caller checks that the exact machine fits in memory)."""
    return (in_memory and rule_centres(n, d_eff) >= n
            and n <= EXACT_SHORTCUT * EXACT_FIT_MAX_N)


# --------------------------------------------------------------------------- centres

#: fewest and most centres the automatic rule gives: on cadata at n = 5000 the test
#: error was 1.042 times the exact model's with 250 centres, 1.007 with 500
#: (``studies/fit_centres.py``, ``studies/results/fit_centres.md``); the m × m array of
#: both factors holds 8m² bytes, 3.2 GB at 20 000 (the user guide's "Fitting at any n"),
#: so that an in-memory fit whose m is chosen automatically is further held to its own
#: budget, 1.5 GiB unless the limit was set (about 1.4·10⁴ centres;
#: :data:`kernelselect.utils._resources.MEMORY_FIT_BYTES`)
MIN_CENTRES = 500
MAX_CENTRES = 20_000
#: centres per √n·ln n (Rudi, Camoriano & Rosasco, NeurIPS 2015, Theorem 1; constant 1
#: as measured by ``studies/fit_centres.py``)
GROWTH = 1.0
#: fewest centres per unit of effective dimension: on protein at n = 2·10⁴
#: (d_eff = 1228) the test error was 1.030 times the exact model's at 2·d_eff, 1.005 at
#: 3·d_eff and 0.994 at 4·d_eff (``studies/fit_loo.py``, ``studies/results/fit_loo.md``;
#: the user guide's "The choice of m")
DEFF_FACTOR = 3.0


def deff_centres(d_eff: float) -> float:
    """The centres the effective dimension alone asks for: d_eff·max(3, ln d_eff).

    Sampling m = O(d_eff·log d_eff) centres by their ridge leverage scores gives a
    Nyström matrix within a constant factor of K's error at the ridge (Musco & Musco,
    NeurIPS 2017, Theorem 3; Rudi, Camoriano & Rosasco, NeurIPS 2015, Theorem 2 for
    the learning rate). The centres here are uniform, whose guarantee needs more (the
    largest leverage in place of the mean), so the leverage rate with constant 1 is a
    floor; at least :data:`DEFF_FACTOR`·d_eff, measured to keep the test error within
    a few per cent of the exact model's (``studies/fit_loo.py``,
    ``studies/bare_machine_gap.py``)."""
    return d_eff * max(DEFF_FACTOR, math.log(max(d_eff, 1.0)))


def rule_centres(n: int, d_eff: float | None = None) -> int:
    """m for n rows by the rule alone: max(√n·ln n, d_eff·max(3, ln d_eff))
    (:func:`deff_centres`) within [:data:`MIN_CENTRES`, :data:`MAX_CENTRES`], at most
    n. The memory guard may allow fewer
    (:func:`kernelselect.solvers._nystroem_pcg.auto_centres`)."""
    m = GROWTH * math.sqrt(n) * math.log(max(n, 2))
    if d_eff is not None and math.isfinite(d_eff):
        m = max(m, deff_centres(d_eff))
    return int(min(n, MAX_CENTRES, max(MIN_CENTRES, math.ceil(m))))


#: sampled rows per centre of the preconditioner's estimate of ΦᵀΦ/n (module notes of
#: :mod:`kernelselect.solvers._pcg`): at least this many (q = m: the iterations were
#: 0.31–0.39 of the centres alone's at α/n = 3·10⁻⁷ and 10⁻⁶, m = 2000 and 5000,
#: ``studies/fit_sample.py``, ``studies/results/fit_sample.md``)…
SAMPLE_MIN_PER_CENTRE = 1.0
#: …and at most this many: the largest ratio that study measured at both m (at m = 2000
#: the time still fell at 16, ``studies/results/fit_sample.md``)
SAMPLE_MAX_PER_CENTRE = 8.0
#: the iterations fell as (r/m)^(−SAMPLE_ITERATION_POWER) with r = m + q sampled rows
#: (172, 80, 61, 44, 31, 21 at r/m = 1, 1.5, 2, 3, 5, 9 with m = 2000; 161, 69, 50, 33,
#: 22, 14 with m = 5000; powers 0.71–0.86 from r = 2m to 9m;
#: ``studies/results/fit_sample.md``)
SAMPLE_ITERATION_POWER = 0.8
#: SAMPLE_ITERATION_POWER·I·2^(p−1)·c, with I = 55 iterations at r = 2m (the study's
#: 50–61; 32 and 92 in ``studies/results/fit_scale.md`` at 2·10⁵ and 10⁶ rows) and
#: c = 150 dgemm flops for the time of one kernel value in a pass (5.3 ns against
#: 36.4 GFLOP/s at 2·10⁵ rows, 2.6–3.1 ns in the study's passes)
SAMPLE_BALANCE = 6000.0
#: the sampled rows' values (q·d doubles, held at once where a Dask client gathers them)
#: are at most this share of the m × m factor's bytes, so that they cost the model no
#: centres that the memory guard would otherwise allow (a bound, not a measurement)
SAMPLE_BYTES_SHARE = 0.25


def sample_per_centre(n: int, m: int, d: int | None = None) -> float:
    """q/m, the rows sampled for the preconditioner besides the m centres, per centre.

    The q rows cost 2qm² flops (their features and Gram), each iteration n·m kernel
    values, and the iterations fell as r^(−p), r = m + q, p =
    :data:`SAMPLE_ITERATION_POWER` (``studies/results/fit_sample.md``). With x = r/m,
    the fit's time (2x − 1)·m³ + I·(2/x)^p·n·m·c (in flops; I iterations at x = 2, c
    flops for a kernel value) is smallest where

        x^(1+p) = p·I·2^(p−1)·c·n/m² = :data:`SAMPLE_BALANCE`·n/m²,

    so q/m = x − 1, within [:data:`SAMPLE_MIN_PER_CENTRE`,
    :data:`SAMPLE_MAX_PER_CENTRE`]: the cap where m is small next to √n (10⁶ rows and
    8021 centres: the sample costs about half an iteration per m rows there), the
    floor where m is large (2·10⁵ rows and 2·10⁴ centres: m rows cost about 20
    iterations, and x = 1.94). Given the number of features d, q·d is also at most
    :data:`SAMPLE_BYTES_SHARE`·m² above the floor (many features: the rows' values would
    otherwise crowd centres out of the memory budget)."""
    x = (SAMPLE_BALANCE * n / max(m, 1) ** 2) ** (1.0 / (1.0 + SAMPLE_ITERATION_POWER))
    ratio = min(SAMPLE_MAX_PER_CENTRE, x - 1.0)
    if d is not None:
        ratio = min(ratio, SAMPLE_BYTES_SHARE * m / max(d, 1))
    return float(max(SAMPLE_MIN_PER_CENTRE, ratio))


# --------------------------------------------------------------------------- pilot

#: most rows of the pilot estimate of the effective dimension (three 4000 × 4000
#: arrays: 384 MB; on cadata at n = 6000 the pilot of 4000 rows measured 587 of the
#: exact 643, ``studies/bare_machine_gap.py``; ``studies/fit_centres.py`` compares the
#: pilot with the selection's own estimate)
PILOT_MAX = 4000
#: the pilot is trusted while its estimate is at most this fraction of its rows; beyond,
#: it is drawn again with more rows (432 from 1348 rows against 643 exact on cadata at
#: n = 6000, γ = 0.1; ``studies/bare_machine_gap.py``)
PILOT_SATURATION = 1.0 / 6.0


def pilot_rows(n: int, max_bytes: float) -> tuple[int, int]:
    """(m₀, top): the pilot's first rows min(top, 2⌈√n·ln n⌉) and the most it may
    draw, min(n, :data:`PILOT_MAX`, the rows whose three m₀ × m₀ arrays fit in
    ``max_bytes``)."""
    top = int(max(1, min(n, PILOT_MAX, math.isqrt(int(max_bytes // 24)))))
    m0 = int(min(top, 2 * math.ceil(math.sqrt(n) * math.log(max(n, 2)))))
    return m0, top


def pilot_regrow(m0: int, top: int, d_eff: float) -> int | None:
    """The pilot's next rows after an estimate ``d_eff`` from m₀ rows, or None when it
    is trusted (d_eff ≤ :data:`PILOT_SATURATION`·m₀) or can grow no more: at least
    twice, and six estimates as many, within ``top``."""
    if m0 >= top or d_eff <= PILOT_SATURATION * m0:
        return None
    return int(min(top, max(2 * m0, math.ceil(d_eff / PILOT_SATURATION))))


#: a machine that measured its own d_eff is refitted with twice the centres while its
#: model holds less than this share of it (``studies/bare_machine_gap.py``) …
GROW_CAPTURED = 0.95
#: … at most this many times; and refitted where the rule at the model's own tr S
#: (a lower bound of d_eff) asks for more than this factor times its centres. With
#: them the cases of ``studies/bare_machine_gap.py`` at n = 5001–20 000 came within
#: 1.4 % of the exact fit's test error (``studies/results/bare_machine_gap.md``)
GROW_ROUNDS = 2
GROW_SLACK = 1.1


# =========================================================================== constant term

#: the refit of an automatic Nyström machine re-scores the selection's ridges (and, for
#: the default regressor, the constant term) by its exact leave-one-out error up to
#: this many flops (n·m² per form; ``studies/fit_loo.py``, ``studies/results/fit_loo.md``)
LOO_FLOPS = 2e12


def intercept_forms(bias: bool, centred: bool, choose: bool) -> tuple[str, ...]:
    """The forms of the constant term a fit scores: the machine's own ("bias" with the
    bias, "mean" for targets the caller centred, else "none"), then "bias" when
    ``choose`` — the default regressor lets the final model's leave-one-out choose
    between ȳ with the rest left to the kernel and an unpenalised bias
    (``studies/fit_intercept.py``, ``studies/results/fit_intercept.md``)."""
    own = "bias" if bias else "mean" if centred else "none"
    return (own, "bias") if choose and own != "bias" else (own,)


def no_intercept_kfold(n: int, distributed: bool, auto_approximation: bool) -> bool:
    """Whether the defaults would score a selection of n rows by the exact k-fold
    error (n ≤ :data:`KFOLD_MAX_N`, in memory, ``approximation="auto"``): then a
    regressor without intercept is scored by its own k-fold error
    (:func:`criterion_without_intercept`)."""
    return n <= KFOLD_MAX_N and not distributed and auto_approximation


def criterion_without_intercept(kfold: bool) -> tuple[str, str]:
    """(criterion, reason) of ``criterion="auto"`` for kernel ridge regression without
    intercept, which the LSSVM's closed forms do not score: its own k-fold error
    (``"cv"``) where ``kfold`` (:func:`no_intercept_kfold`), else generalised
    cross-validation, its rotation-invariant leave-one-out error (Golub, Heath &
    Wahba, Technometrics 21, 1979). The same split as :data:`KFOLD_MAX_N`; no study of
    its own (``gcv`` is the default criteria's PRESS for this machine)."""
    if kfold:
        return "cv", ("cv: k-fold cross-validation of kernel ridge regression without "
                      "intercept, the estimator's fit_intercept=False")
    return "gcv", ("gcv: generalised cross-validation of kernel ridge regression "
                   "without intercept, the estimator's fit_intercept=False")


# =========================================================================== kernel

def kernel_for_task(task: str | None, n: int | None = None,
                    approximation: str | None = None,
                    criterion: str | None = None) -> tuple[str, str]:
    """(kernel, reason) of ``kernel="auto"`` for a target of ``task`` (None: y has
    several columns) on ``n`` rows with the stand-in ``approximation`` (its name; None:
    not known): the per-feature kernel for a real target, the isotropic Gaussian
    kernel for class labels and target matrices. On real targets the per-feature search
    lowered the test error of the isotropic defaults on both halves of the study's sets
    (geometric-mean NMSE ratio 0.82 and 0.35); on class labels it changed the LSSVM's
    accuracy by +0.09 and −0.03 points for about 6 times the time
    (``studies/ard_quality.py``, ``studies/results/ard_quality.md``).

    A real target keeps the isotropic kernel beyond :data:`ARD_AUTO_MAX_N` rows (what
    the studies measured), with a stand-in the per-feature search does not run on
    (anything but ``"auto"``, ``"exact"`` and ``"nystrom"``) and with a ``criterion``
    (its name; None: the default) it does not optimise (one of :data:`ARD_CRITERIA`
    only). Dask input on which this rule chooses the per-feature kernel is gathered
    into memory (at most :data:`ARD_AUTO_MAX_N` rows), so that every door gives the
    in-memory answer."""
    if task is None:
        return "gaussian", "y has several columns: the isotropic Gaussian kernel"
    if task != "regression":
        return "gaussian", (f"{task} labels: the isotropic Gaussian kernel "
                            "(kernel='auto'; per-feature bandwidths did not raise the accuracy)")
    if n is not None and n > ARD_AUTO_MAX_N:
        return "gaussian", (f"a real target on n = {n} > {ARD_AUTO_MAX_N} rows: the isotropic "
                            "Gaussian kernel (kernel='auto'; the per-feature search was "
                            f"measured up to {ARD_AUTO_MAX_N} rows)")
    if approximation is not None and approximation not in ("auto", "exact", "nystrom"):
        return "gaussian", (f"a real target with approximation={approximation!r}: the "
                            "isotropic Gaussian kernel (kernel='auto'; the per-feature "
                            "search runs on the exact matrix or a Nyström stand-in)")
    if criterion is not None and criterion not in ARD_CRITERIA:
        return "gaussian", (f"a real target with criterion={criterion!r}: the isotropic "
                            "Gaussian kernel (kernel='auto'; the per-feature search "
                            "optimises the held-out error or the evidence only)")
    return "ard", "a real target: one γ per feature (kernel='auto')"


#: the criteria the per-feature search optimises (``"auto"``: the evidence or the
#: held-out error, :data:`ARD_EVIDENCE_MAX_N`); the criteria of ``studies/ard_quality.py``
ARD_CRITERIA = frozenset({"auto", "eloo", "eloo_multiclass", "ekfold", "ekfold_multiclass"})


#: the per-feature search runs on the exact kernel matrix (about 2n³ flops per
#: gradient) up to this n, as the isotropic defaults (:data:`EXACT_MAX_N`); beyond, on
#: a Nyström stand-in of at most :data:`ARD_MAX_LANDMARKS` landmarks: at n = 1000 one
#: gradient took 1.43 s exact and 0.48 s with 200 landmarks (one thread, a busy
#: machine); the search's quality within these limits: ``studies/ard_quality.py``,
#: ``studies/results/ard_quality.md`` (the user guide's "One bandwidth per feature")
ARD_EXACT_MAX_N = EXACT_MAX_N
ARD_MAX_LANDMARKS = 200
#: the per-feature search scores by its closed-form 5-fold error up to this n, as the
#: isotropic defaults (:data:`KFOLD_MAX_N`, ``studies/defaults_quality.py``), by
#: leave-one-out beyond; ``studies/ard_quality.py`` measured the search with it
ARD_KFOLD_MAX_N = KFOLD_MAX_N
#: for a real target, the per-feature search maximises the Gaussian-process evidence on
#: the exact matrix up to this n (``objective="auto"``): on the 16 regression sets of
#: ``studies/ard_quality.py`` (training halves of at most 1000 rows) its test NMSE was
#: 0.50 times isotropic CV's, the held-out-error search's 0.64
#: (``studies/results/ard_quality.md``)
ARD_EVIDENCE_MAX_N = 1000
#: ``kernel="auto"`` chooses the per-feature kernel for a real target up to this n and
#: keeps the isotropic Gaussian kernel beyond (:func:`kernel_for_task`): the largest
#: training set the per-feature rules were measured on. Up to 1000 rows (the evidence,
#: ``studies/ard_quality.py``, ``studies/results/ard_quality.md``) and beyond (the
#: evidence of :data:`ARD_EVIDENCE_SUBSAMPLE` rows confirmed on all rows,
#: ``studies/ard_scale.py --fitted``, ``studies/results/ard_scale_10k.md``: test NMSE
#: against the isotropic default's at n_train = 3000 a median 0.846 over 9 sets, worst
#: 1.057 (protein), in a median 2.08 times its time; at 10⁴ 0.581, geometric mean, worst
#: set 1.000, in 0.92 times its time, median)
ARD_AUTO_MAX_N = 10_000
#: the nested guard of the per-feature search runs up to this n (each fold reruns the
#: search; the study's sets reach 1000 rows, ``studies/ard_quality.py``)
ARD_GUARD_MAX_N = 1000
#: beyond :data:`ARD_EVIDENCE_MAX_N` rows, a real target's per-feature search maximises
#: the evidence on this many random rows (exact matrix) and keeps its choice only where
#: the Nyström leave-one-out error on all rows, on the isotropic selection's landmarks,
#: is below the isotropic choice's. At n_train = 10⁴ (cadata, pol, protein; cpu_act
#: 6192) its test NMSE was 0.581 times the isotropic default's (geometric mean, worst
#: set 1.000; as prototyped in the study 0.573 in 2.1 times the isotropic default's
#: time, median, worst 3.2); leave-one-out on 200 Nyström landmarks, the previous
#: objective: 1.051, worst 4.30 (cpu_act)
#: (``studies/ard_scale.py --fitted``, ``studies/results/ard_scale_10k.md``)
ARD_EVIDENCE_SUBSAMPLE = 1000


# =========================================================================== intervals

#: the largest exact machine whose jackknife+ interval is offered, and which
#: ``predict_interval(method="auto")`` uses (its n × n factor is held: 8·n² bytes,
#: 128 MB at this size; coverage measured by ``studies/uncertainty_quality.py``,
#: ``studies/results/uncertainty_quality.md``)
JACKKNIFE_PLUS_MAX_N = 4000

#: the largest conjugate-gradient machine whose leave-one-out residuals (predict_proba,
#: predict_interval) are the closed form, two passes of 4·n·k² flops for k centres (at
#: n = 2·10⁵, k = 5459: 491.9 s after a 119.9 s fit); beyond, the training residuals scaled
#: by 1/(1 − d_eff/n), generalised cross-validation's form, one pass of n·k·d flops
#: (4.3 s there). The 90 % jackknife coverage of the two differed by 0.0003 (synthetic,
#: d = 10) and 0.0008 (protein) at n = 2·10⁴ and by 0.0001 at 2·10⁵ (synthetic)
#: (``studies/uncertainty_quality.py``, ``studies/results/uncertainty_quality.md``)
LOO_EXACT_MAX_N = 100_000
