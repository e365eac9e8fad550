"""Nyström kernel ridge regression and the LSSVM with bias, solved by preconditioned
conjugate gradients over streamed passes (the FALKON form).

The model
---------
m centres z_1, …, z_m (rows of X), K_mm = K(Z, Z), K_nm = K(X, Z). With T the upper
Cholesky factor of K_mm + δI (δ a small jitter, below), the feature map
φ(x) = T⁻ᵀk(Z, x) ∈ Rᵐ has φ(x)ᵀφ(x′) = k(x, Z)(K_mm + δI)⁻¹k(Z, x′), the Nyström
kernel. The machine is ridge regression on these features,

    minimise over w, b   ‖Φw + b1 − y‖² + α‖w‖²,     Φ = K_nm T⁻¹ (n × m),

with b = 0 (kernel ridge regression) or an unpenalised b (the LSSVM), and it predicts
f(x) = k(x, Z)β + b with β = T⁻¹w. For δ = 0 this is Nyström kernel ridge regression
(Rudi, Camoriano & Rosasco, NeurIPS 2015): β solves (K_nmᵀK_nm + αK_mm)β = K_nmᵀy,
the exact KRR with K replaced by K_nm K_mm⁺ K_mn. Several outputs (one-vs-rest
columns, several targets) are columns of y, solved together.

The normal equations, in w, are (ΦᵀCΦ + αI)w = ΦᵀCy with C = I without bias and
C = I − 11ᵀ/n with it (then b = ȳ − 1ᵀΦw/n).

The preconditioner (Rudi, Carratino & Rosasco, NeurIPS 2017; Meanti, Carratino,
Rosasco & Rudi, NeurIPS 2020)
-----------------------------
On the centres' own rows Φ is K_mm T⁻¹ ≈ Tᵀ, so when the centres are a uniform sample
of the rows, ΦᵀΦ ≈ (n/m)TTᵀ and ΦᵀΦ + αI ≈ n(TTᵀ/m + λI), λ = α/n (FALKON). With A the
upper Cholesky factor of that matrix divided by n, the substitution w = A⁻¹u/√n gives

    A⁻ᵀ(ΦᵀCΦ/n + λI)A⁻¹ u = A⁻ᵀΦᵀCy/√n,

whose matrix is close to the identity once the centres represent the data, solved by
conjugate gradients. Each iteration is one streamed pass K_nmᵀ(K_nm v)
(:mod:`kernelselect.solvers._rows`; the bias adds a rank-one correction from
s = K_nmᵀ1) and four triangular solves with m × m factors.

The centres' own features under-represent the directions in which K_mm is small:
φ(z_j) ≈ Te_j carries exactly K_mm's spectrum there, while the points between the
centres carry more of those directions. q further uniformly sampled rows S correct
this: A is then the factor of (TTᵀ + Φ_SᵀΦ_S)/(m + q) + λI, the same estimate of ΦᵀΦ/n
from m + q rows instead of m, at the extra cost of K(S, Z) and 2qm² flops. With q = m
the iterations to a residual of 1e-6 fell by about half on cadata and protein
(n = 10⁴, m = 500 and 2000, α/n = 10⁻⁴ … 10⁻⁶: 35 → 21, 96 → 47, 129 → 57, 17 → 11,
47 → 23, 70 → 31; the user guide's page "Fitting at large n" has the measurements).
More rows go on paying where the data have many more rows than the centres: at
α/n = 3·10⁻⁷ with n = 10⁵ and m = 2000 the iterations to 1e-7 were 172, 80, 61, 44 and
31 for q/m = 0, 0.5, 1, 2 and 4 (``studies/results/fit_sample.md``), while an
iteration costs n·m kernel values and m more rows 2m³ flops. The fitted machines take
q/m from :func:`kernelselect._policy.sample_per_centre`, which balances the two costs
(between q = m and q = 8m; :func:`sample_rows`).

With a bias the system is the bias-eliminated one, ΦᵀCΦ + αI, whose Gram is the
centred one; the estimate is centred too: G − ssᵀ/r, s the sum of the r sampled
features (T1 + Φ_Sᵀ1), the Gram of the sampled features less their mean. Without the
centring, wherever the features represent the constant function (every row a centre,
a small α) the preconditioned matrix has an eigenvalue far below the others: the
direction w₁ with Φw₁ ≈ 1, which C annuls and only the ridge keeps. Along it the
right-hand side is small and the solution large, so a residual test passed after one
iteration while the fit missed that component (predictions at new points 2–8 % off a
least-squares solve of the same model at α/n = 10⁻¹⁰, n = 100 … 400).

Stopping rule
-------------
Per output column, two relative residuals, each at most ``tol``:

- of the normal equations in w (with the bias eliminated, the residual of the bordered
  system [ΦᵀΦ + αI, Φᵀ1; 1ᵀΦ, n][w; b] = [Φᵀy; 1ᵀy] with b from its own equation),

      ‖ΦᵀCy − (ΦᵀCΦ + αI)w_k‖ / ‖ΦᵀCy‖,

  read from the conjugate-gradient residual r_k as √n·Aᵀr_k (``residual``);
- of the preconditioned system, ‖r_k‖/‖c‖ (``preconditioned_residual``): with
  u = √n·Aw, ‖u − u*‖ = ‖M⁻¹r_k‖ (M the preconditioned matrix), so this bounds the
  relative error of the solution in the norm √(wᵀ(ΦᵀCΦ + αI)w), which bounds that of
  the fitted values; the first alone does not where Aᵀ is small (directions the ridge
  dominates, √λ), and a small residual there left large errors.

Both are read at every iteration and confirmed on exit by an explicit product (one more
pass): if rounding made the recursive residual drift from the explicit one, the
iteration restarts from the current point with the explicit residual, as long as each
restart at least halves it (otherwise the attainable accuracy is reached). At most
``max_iter`` iterations. The iterations used and the residuals reached are returned,
whether or not ``tol`` was met; a fit that stops above ``tol`` warns
(:class:`~kernelselect.ConvergenceWarning`). ``tol`` is in [0, 1): the zero solution
has relative residual 1. A residual ε bounds the change of the fitted values by
ε‖ΦᵀCy‖/(2√α) (the largest σ/(σ² + α) over the singular values σ of Φ is 1/(2√α)).

Stalls
------
The products are computed through β = T⁻¹A⁻¹u/√n, which the small singular values of
T (those of K_mm) and of A (√λ, along the directions the ridge alone holds, such as
the constant with a bias) stretch, and K_nmᵀCK_nmβ then cancels to a small vector:
its rounding, about 2⁻⁵²‖K_nm‖²‖β‖, returns through T⁻ᵀ and A⁻ᵀ stretched again. With
every row of a 1-D sample of 5 a centre at α/n = 10⁻⁸ with a bias (cond K_mm = 7·10⁷),
|β| reached 10⁷ for unit u, K_nmᵀCK_nmβ was 10⁻⁴ with relative errors of 4·10⁻⁶ to
10⁻⁴, the preconditioned matrix, ≈ I to 10⁻⁵ in exact arithmetic, was applied with
errors of 2·10⁻⁵, and the iteration stalled at a preconditioned residual of 7·10⁻⁶,
its fitted values 3·10⁻⁶ off a 50-digit solve that the rounding of the kernel values
moves by 2·10⁻¹⁰. Such a stall is the accuracy limit of the iteration, not of the
model (the stacked least-squares form [CΦ; √αI] has condition 1.7·10⁴ there). So when
the iteration stalls above ``tol`` before ``max_iter`` and n·m ≤ :data:`DIRECT_ENTRIES`,
the model is solved directly: Φ = K_nm T⁻¹ formed by one prediction pass, centred with
a bias, and w the least-squares solution of [CΦ; √αI] w = [Cy; 0] by Householder QR
(backward stable, no squared condition number), O((n + m)m²) flops; the fitted values
above came within 4·10⁻¹⁰ of the 50-digit ones. Its two residuals are read as the
iteration's, through one more streamed product, so they are what the coefficients
have and may stay at the products' rounding above ``tol`` (2·10⁻⁶ preconditioned
there): the fit then still warns, naming the direct finish; ``details["direct"]``
records the route. A stall on a larger problem is reported as before.

Targets
-------
Each column of Y is divided by a power of two near its largest magnitude (exact, and
the solve is linear in Y), so that sums of squares and residual norms neither overflow
nor underflow (|y| up to the largest float); with a bias it is first shifted by its
midrange, which the bias absorbs, so that K_nmᵀCy = K_nmᵀy − sȳ does not cancel a large
mean. NaN or infinite targets are refused. A column whose right-hand side is zero
(y = 0, or a constant y with a bias) is solved by β = 0 in no iteration, with b its
value.

Jitter
------
δ = 10⁻¹³·tr K_mm (= 10⁻¹³·m, κ(z, z) = 1), multiplied by 100 until the Cholesky
factorisation of K_mm + δI succeeds (duplicate centres or a kernel much wider than the
data make K_mm singular to working precision); likewise a shift of G/r + λI if λ is
below its rounding. The δ used is reported and is part of the model (φ is defined with
K_mm + δI), so the solve and any reference agree. δ is set by the kernel, never by α:
the Nyström kernel k(x, Z)(K_mm + δI)⁻¹k(Z, x′) differs from the kernel's restriction
by at most δ in the directions of K_mm, so its fit differs from the δ = 0 model by a
fraction of about δ/α — 10⁻¹³·m/α, below 10⁻¹² from α/n = 1 up with every row a
centre, where a δ growing with α (10⁻⁴·λm) changed the fit by 0.1 % at α/n = 1 and
entirely at α/n ≥ 10³. Why this size: the kernel values carry rounding of about
2⁻⁵²(1 + γ(‖z‖² + ‖z′‖²)) each, so K_mm's eigenvalues below about m·2⁻⁵² are noise;
rounding in φ is amplified by √cond(K_mm + δI) ≤ √(m/δ) ≈ 3·10⁶, leaving the fitted
values accurate to about 2⁻⁵²·3·10⁶ ≈ 7·10⁻¹⁰ where K_mm is numerically singular (with
δ = m·2⁻⁵², 1.5·10⁻⁸ in theory, and conjugate gradients with a bias failed to converge
on such centres). The cost: at α/n = 10⁻⁹ with every row a centre, the model differs
from exact kernel ridge regression by about 10⁻⁵ relative.

Factors in float32
------------------
T and A enter the iteration only through B = T⁻¹A⁻¹/√n, β = Bu: with the products in
float64 the model is fixed by the products, not by the factors, which may be rounded
as long as B stays one fixed linear map. So with ``precision="float32"`` K_mm is
rounded to float32 and factored with its own jitter δ₃₂ = m·2⁻²³ (its eigenvalues below
that are the rounding of its entries), G and A are formed in float32 (half the flops'
time and half the m × m array), and every solve with them runs in float64 arithmetic on
the float32 entries (:func:`kernelselect.utils._lapack.triangular_apply`), so that B is
linear to float64 rounding. The ridge can then no longer be read as λ in w: each
product adds α(K_mm + δI)β, δ the float64 model's jitter, from one streamed product over
the centres (m² kernel values against the pass's n·m). This is FALKON's β form
(Rudi, Carratino & Rosasco, NeurIPS 2017) written in the solver's split coordinates.

Where K_mm has eigenvalues below δ₃₂ the float32 T flattens them to δ₃₂ while the model
keeps them, and the preconditioned matrix gets eigenvalues near μ/δ₃₂ ≪ 1 there: on
3-dimensional data (m = 300, γ = 0.5, α/n = 10⁻⁶) the iteration had not converged
after 300 iterations where float64 factors needed 147, and with a wide kernel
(γ = 0.0033, d = 10, α/n = 10⁻⁹) its predictions after 300 iterations were 0.14 of
y's spread from float64's after 32 (``studies/results/pcg_float32.md``). A pivot of the factor
(T's diagonal squared) near δ₃₂ marks such a direction, and the pivots tracked the
eigenvalues on those sets (the share of pivots below 10δ₃₂ against that of eigenvalues
below δ₃₂: 0.343 and 0.34, 0.983 and 0.88, 0 and 0 where float32 needed the same 32
iterations). ``precision="auto"`` therefore keeps float32 factors only above
:data:`FLOAT32_MIN_CENTRES` centres (at most 8192: the float64 bits of every smaller
solve) and only when every pivot is at least :data:`FLOAT32_PIVOT_MARGIN`·δ₃₂;
otherwise it factors again in float64, having spent m³/3 float32 flops (30.4 s on one
thread at m = 2·10⁴, where the float64 preconditioner took 636 s in the default fit of
``studies/results/fit_scale.md``). At 2·10⁵ rows with those centres (d = 10, the
default's γ and α) the smallest pivot was 1.31·δ₃₂ and forced float32 factors took 58
iterations against 32.

Memory: one m × m array holds both factors (T in its upper triangle, the strict lower
part of the factor of A in its lower triangle, the two diagonals kept apart and swapped
in for each solve), plus the passes' buffers (:func:`kernelselect.solvers._rows.pass_bytes`);
K_nm is never held.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol

import numpy as np
from scipy.linalg import blas, lapack

from .. import lowlevel
from ..utils._dask import DaskRows, is_dask_array
from ..utils._dask import compute as dask_compute
from ._rows import (APPLY, PART_ROWS, Conditioning, DaskNystromRows, NystromRows,
                            aligned_chunks, dask_predict, pass_bytes, run_pass)
from ._cg_monitor import CGMonitor, CGStep
from ..utils._progress import ProgressBar
from ._checkpoint import CGCheckpoint, CGState, fingerprint
from ..utils._lapack import (cholesky_in_place, mirror_triangle, syrk_in_place,
                             triangular_apply)
from ..utils._resources import check_allocation, dask_client_limit, format_bytes, max_bytes
from ._exact import KernelMachine
from ..kernels import Kernel
from ..utils._threads import blas_for_flops, block_threads
from .. import _policy as _rules
from ..utils._warnings import ConvergenceWarning, warn_user

__all__ = [
    "DEFAULT_TOL",
    "DEFAULT_MAX_ITER",
    "SAMPLE_PER_CENTRE",
    "sample_rows",
    "DIRECT_ENTRIES",
    "FLOAT32_MIN_CENTRES",
    "FLOAT32_PIVOT_MARGIN",
    "NystromPreconditioner",
    "NystromSolution",
    "nystrom_pcg",
    "nystrom_pcg_bytes",
    "factor_bytes",
    "largest_centres",
    "largest_dask_centres",
    "check_dask_solver_memory",
    "nystrom_pcg_client_bytes",
    "nystrom_pcg_task_bytes",
    "check_solver_memory",
    "check_tol",
    "check_precision",
    "target_scale",
    "warn_unconverged",
    "choose_centres",
    "choose_sample",
    "fit_nystrom_pcg",
    "streamed_rows",
    "jitter_for",
    "factor_upper",
    "factor_centres",
    "pivot_ratios",
    "NystromMachine",
]

#: default relative residual of the normal equations at which the iteration stops: at
#: 1e-7 the predictions were within 3e-7 of the converged solve's (n = 2·10⁴, m = 1000,
#: α/n = 10⁻⁶; 5e-6 at 1e-6, for 20 % more iterations), so fits whose data differ in
#: their last bits (a Dask and an in-memory standardisation) predict alike to 1e-6
DEFAULT_TOL = 1e-7
#: default largest number of conjugate-gradient iterations
DEFAULT_MAX_ITER = 100
#: the fewest rows sampled for the preconditioner besides the centres, per centre, of
#: the automatic rule (:func:`kernelselect._policy.sample_per_centre`; module notes)
SAMPLE_PER_CENTRE = _rules.SAMPLE_MIN_PER_CENTRE
#: largest n·m at which a stalled iteration is finished by a direct solve (module notes,
#: "Stalls"): K_nm (8 MiB) and its QR are then cheaper than the passes already run
DIRECT_ENTRIES = 2**20
#: more centres than this and ``precision="auto"`` tries float32 factors (module notes,
#: "Factors in float32"): at or below it every preconditioner keeps its float64 bits
FLOAT32_MIN_CENTRES = 8192
#: float32 factors are kept when every pivot of K_mm + δ₃₂I is at least this many δ₃₂
FLOAT32_PIVOT_MARGIN = 2.0

_EPS = 2.0 ** -52
_EPS32 = 2.0 ** -23
_JITTER_TRACE = 1e-13      # δ₀ = 10⁻¹³·tr K_mm (module notes)
_JITTER_STEPS = 8          # δ grows by 100 per failed factorisation: up to 1e14·δ₀
_MIRROR_BLOCK = 512
_SAMPLE_BLOCK = 2**21      # entries of K(sample rows, centres) formed at a time


class RowPasses(Protocol):
    """What the solver needs of the data: the streamed products of
    :class:`kernelselect.solvers._rows.NystromRows` (in memory) or its Dask form."""

    n: int
    cond: Conditioning
    #: the rows and targets the passes stream (in memory or Dask arrays), read by the
    #: direct finish of a stalled iteration
    X: Any
    Y: Any

    @property
    def passes(self) -> int: ...

    def normal(self, V: np.ndarray) -> np.ndarray: ...

    def cross_targets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


def sample_rows(n: int, m: int, d: int) -> int:
    """q, the rows the automatic rule samples for the preconditioner besides m centres
    of d features (:func:`kernelselect._policy.sample_per_centre`), at most the n − m
    other rows."""
    return int(min(max(n - m, 0), round(_rules.sample_per_centre(n, m, d) * m)))


def factor_bytes(m: int, precision: str = "auto") -> float:
    """Bytes of the m × m array holding the preconditioner's factors: 4m² for float32
    factors, else 8m² ("auto" may factor again in float64, and then holds float64
    factors)."""
    return (4.0 if precision == "float32" else 8.0) * m * m


def nystrom_pcg_bytes(n: int, m: int, d: int, t: int, threads: int,
                      precision: str = "auto") -> float:
    """Bytes a solve with m centres and t outputs allocates: the m × m factors
    (:func:`factor_bytes`), the
    passes' buffers (for t + 1 columns), the iteration's (m, t) vectors, the n × (t + 1)
    right-hand side of the first pass, the centres, the preconditioner's sample rows
    (as many as :func:`sample_rows`) and the blocks of their kernel values."""
    return (factor_bytes(m, precision) + 8.0 * 16 * m * (t + 1) + 8.0 * n * (t + 1)
            + 8.0 * _SAMPLE_BLOCK + 8.0 * (m + sample_rows(n, m, d)) * d
            + pass_bytes(n, m, d, t + 1, threads))


def nystrom_pcg_client_bytes(n: int, m: int, d: int, t: int, precision: str = "auto"
                             ) -> float:
    """Bytes the client of a solve on a row-chunked Dask X allocates: the m × m factors,
    the iteration's (m, t) vectors, the centres and sample rows, the blocks of the
    preconditioner's sample and each pass's gathered (m, t + 1) results, one per part of
    ``PART_ROWS`` rows (the tasks' own memory is :func:`nystrom_pcg_bytes` of a chunk)."""
    parts = -(-n // PART_ROWS)
    return (factor_bytes(m, precision) + 8.0 * 16 * m * (t + 1) + 8.0 * _SAMPLE_BLOCK
            + 8.0 * (2 * m + sample_rows(n, m, d)) * d + 8.0 * parts * m * (t + 1))


def nystrom_pcg_task_bytes(rows: int, m: int, d: int, t: int) -> float:
    """Bytes one task of a solve on a row-chunked Dask X allocates for its chunk of
    ``rows`` rows: the pass's buffers (one thread), the chunk's [1, Y] and the centres,
    the (m, t + 1) vectors and the parts' results it returns."""
    parts = -(-rows // PART_ROWS)
    return (pass_bytes(rows, m, d, t + 1, 1) + 8.0 * rows * (t + 1) + 8.0 * m * d
            + 8.0 * (parts + 2) * m * (t + 1))


def _largest(fits: Callable[[int], bool], n: int) -> int:
    lo, hi = 0, max(1, n)
    while lo < hi:                    # the estimate grows with m: bisect
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def largest_centres(n: int, d: int, t: int, threads: int, limit: float | None = None,
                    precision: str = "auto") -> int:
    """The largest number of centres whose solve fits ``limit`` bytes (default: the
    memory guard's limit), at least 0."""
    limit = float(max_bytes() if limit is None else limit)
    return _largest(lambda m: nystrom_pcg_bytes(n, m, d, t, threads, precision) <= limit, n)


def largest_dask_centres(n: int, rows: int, d: int, t: int, limit: float | None = None,
                         precision: str = "auto") -> int:
    """The largest number of centres whose solve on a Dask X of n rows in chunks of at
    most ``rows`` rows fits ``limit`` bytes on the client (:func:`nystrom_pcg_client_bytes`)
    and in each task (:func:`nystrom_pcg_task_bytes`). Default: the automatic choice's
    budgets, :func:`~kernelselect.utils._resources.dask_client_limit` on the client and
    the guard's limit in each task."""
    client = float(dask_client_limit() if limit is None else limit)
    task = float(max_bytes() if limit is None else limit)
    return _largest(lambda m: nystrom_pcg_client_bytes(n, m, d, t, precision) <= client
                    and nystrom_pcg_task_bytes(rows, m, d, t) <= task, n)


def check_dask_solver_memory(n: int, rows: int, m: int, d: int, t: int,
                             precision: str = "auto") -> None:
    """The memory guard on a solve with m centres on a Dask X (n rows, chunks of at most
    ``rows``): the client's part and one task's, each refused with the largest m that
    fits."""
    fits = largest_dask_centres(n, rows, d, t, max_bytes(), precision)
    hint = f"use at most {fits} centres" if fits >= 1 else "use smaller chunks of rows"
    what = f"a Nyström conjugate-gradient solve with {m} centres ({n} rows, {t} outputs)"
    check_allocation(nystrom_pcg_client_bytes(n, m, d, t, precision),
                     f"the client's part of {what}",
                     hint)
    check_allocation(nystrom_pcg_task_bytes(rows, m, d, t),
                     f"one task of {what} (a chunk of {rows} rows)", hint)


def _mirror(F: np.ndarray, upper_to_lower: bool) -> None:
    """Copy one strict triangle of the square F onto the other, in column blocks."""
    mirror_triangle(F, upper_to_lower, _MIRROR_BLOCK)


def _potrf(F: np.ndarray, lower: bool) -> int:
    """Cholesky factorisation of one triangle of F in place (the other untouched)."""
    with blas_for_flops(F.shape[0] ** 3 / 3.0):
        return cholesky_in_place(F, lower)


def jitter_for(m: int, lam: float | None = None) -> float:
    """δ₀ = 2⁻⁵²·tr K_mm = m·2⁻⁵² (κ(z, z) = 1), the first jitter tried (module notes).

    The jitter is set by the kernel alone: ``lam`` (the ridge α/n) is accepted for
    the callers that pass it and does not enter."""
    return _JITTER_TRACE * m


def factor_upper(F: np.ndarray, diag: np.ndarray, delta: float) -> float:
    """T, the upper Cholesky factor of K_mm + δI, in the upper triangle of F (which holds
    K_mm, Fortran-ordered; ``diag`` a view of its diagonal), δ multiplied by 100 until
    the factorisation succeeds; returns the δ used."""
    for _ in range(_JITTER_STEPS):
        diag[:] = 1.0 + delta                     # κ(z, z) = 1
        if _potrf(F, lower=False) == 0:
            return delta
        _mirror(F, upper_to_lower=False)          # the lower triangle still holds K_mm
        delta *= 100.0
    raise np.linalg.LinAlgError(
        f"K(centres, centres) + δI is not positive definite even with δ = {delta:.3g}; "
        "the centres or gamma are degenerate (check X for non-finite or huge values).")


def factor_centres(cond: Conditioning, jitter: float, single: bool
                   ) -> tuple[np.ndarray, float]:
    """(F, δ used): K_mm + δI factored in place, T in the upper triangle of the
    Fortran-ordered F (K_mm below), float64 from δ = ``jitter`` or float32 from
    δ₃₂ = m·2⁻²³ (K_mm's eigenvalues below it are the rounding of its float32 entries;
    formed in float64 by blocks of rows and rounded, never a float64 m × m array); δ
    multiplied by 100 until the factorisation succeeds (:func:`factor_upper`)."""
    m = cond.centres.shape[0]
    if single:
        K = np.empty((m, m), dtype=np.float32)
        rows = max(1, _SAMPLE_BLOCK // max(m, 1))
        for i0 in range(0, m, rows):
            K[i0:i0 + rows] = lowlevel.kernel_block(cond.centres[i0:i0 + rows], cond.centres,
                                                    cond.gamma, kernel=cond.kernel)
    else:
        K = lowlevel.kernel_block(cond.centres, cond.centres, cond.gamma, kernel=cond.kernel)
    F = K.T                                       # symmetric: a Fortran-ordered view
    used = factor_upper(F, F.reshape(-1, order="F")[:: m + 1],
                        m * _EPS32 if single else jitter)
    return F, used


def pivot_ratios(F: np.ndarray, jitter: float) -> np.ndarray:
    """The pivots of the factorisation held by :func:`factor_centres` (T's diagonal
    squared, in float64) over its jitter: what ``precision="auto"`` reads."""
    return F.reshape(-1, order="F")[:: F.shape[0] + 1].astype(np.float64) ** 2 / jitter


class NystromPreconditioner:
    """The factors T (K_mm + δI = TᵀT) and A (AᵀA = G/r + λI), in one m × m array.

    G estimates ΦᵀΦ·r/n from r sampled rows: the centres themselves (whose features
    are φ(z_j) = T⁻ᵀK_mm e_j ≈ Te_j, so they contribute TTᵀ: FALKON's choice) and,
    when given, q more rows S, which add Φ_SᵀΦ_S (r = m + q; module notes).

    Parameters
    ----------
    cond : Conditioning
        The centres (shifted and scaled) and γ.
    n : int
        Rows of the data.
    alpha : float
        The ridge α; λ = α/n.
    sample : ndarray of shape (q, d) or None
        More rows of X (as they are in X) for the estimate of ΦᵀΦ.
    precision : {"float64", "float32", "auto"}
        The factors' dtype (module notes, "Factors in float32").

    Attributes
    ----------
    jitter : float
        δ, the model's: added to K_mm's diagonal (float64 factors) or in the ridge term
        the iteration adds (float32 factors).
    factor_jitter : float
        The jitter of the factor T (δ with float64 factors, δ₃₂ = m·2⁻²³ or more with
        float32 ones).
    single : bool
        Whether the factors are float32 (``dtype``).
    shift : float
        The shift added to G/r + λI beyond λ (0 unless λ is below its rounding).
    rows : int
        r, the rows the estimate of ΦᵀΦ is made from.
    """

    _F: np.ndarray                # the factors (Fortran-ordered) and a view of its diagonal
    _diag: np.ndarray
    factor_jitter: float
    single: bool
    dtype: np.dtype[Any]

    def __init__(self, cond: Conditioning, n: int, alpha: float,
                 sample: np.ndarray | None = None, centred: bool = False,
                 precision: str = "float64", progress: bool | float = False) -> None:
        m = cond.centres.shape[0]
        q = 0 if sample is None else int(sample.shape[0])
        self.m, self.n, self.alpha, self.rows = m, n, alpha, m + q
        self.centred = bool(centred)
        self._cond = cond
        self._sample = None if not q else np.asarray(sample, dtype=np.float64)
        lam = alpha / n
        # where the set-up is and its time left, by the stages' flops: m³/3 for each
        # factorisation and K_mm's product TTᵀ, 2·rows·m² for each block of sampled rows
        self._bar = ProgressBar(progress, desc="Nyström preconditioner", unit="steps")
        self._cube = float(m) ** 3 / 3.0
        self._bar.extend(1, self._cube, f"factor of the {m} centres' kernel matrix")
        self._plan_estimate()
        try:
            self._factor(precision, lam)
        finally:
            self._bar.close()

    def _factor(self, precision: str, lam: float) -> None:
        """T, then A, in ``precision`` (module notes)."""
        # the model's jitter (module notes, "Jitter"): float64 factors may raise it
        self.jitter = jitter_for(self.m, lam)
        if precision == "float32" or (precision == "auto" and self.m > FLOAT32_MIN_CENTRES):
            self._factor_T(single=True)
            if precision == "auto" and not self._single_suffices():
                self._factor_T(single=False)      # module notes, "Factors in float32"
        else:
            self._factor_T(single=False)
        if not self.single:
            self.jitter = self.factor_jitter
        self._diag_T = self._diag.copy()
        self.shift = self._factor_A(lam)
        self._diag_A = self._diag.copy()
        self._diag[:] = self._diag_T
        self._sample = None

    def _plan_estimate(self) -> None:
        """Plan the estimate's steps on the progress bar: the sampled rows' blocks, then
        TTᵀ and the factor of the estimate."""
        q = 0 if self._sample is None else self._sample.shape[0]
        block = max(1, _SAMPLE_BLOCK // self.m)
        if q:
            self._bar.extend(-(-q // block), 2.0 * block * self.m * self.m,
                             f"{q} sampled rows")
        self._bar.extend(2, self._cube, "factor of the estimate")

    def _factor_T(self, single: bool) -> None:
        """T, in the upper triangle of the Fortran-ordered F, in the factors' dtype."""
        self.single = single
        self.dtype = np.dtype(np.float32 if single else np.float64)
        self._lapack = lapack.get_lapack_funcs(("lauum", "trtri"), dtype=self.dtype)
        self._blas = blas.get_blas_funcs(("trmv", "syr", "trsm"), dtype=self.dtype)
        if hasattr(self, "_F"):                   # a float32 attempt's array goes first
            del self._F, self._diag
            self._bar.extend(1, self._cube, "factor of the centres' kernel matrix again")
        self._F, self.factor_jitter = factor_centres(self._cond, self.jitter, single)
        self._diag = self._F.reshape(-1, order="F")[:: self.m + 1]   # a view of the diagonal
        self._bar.update(1, self._cube, f"factor of the {self.m} centres' kernel matrix")

    def _single_suffices(self) -> bool:
        """Whether float32 factors precondition as float64 ones would: every pivot of
        K_mm + δ₃₂I at least FLOAT32_PIVOT_MARGIN·δ₃₂, so that no direction of K_mm is
        decided by the float32 rounding (module notes)."""
        return bool(np.min(pivot_ratios(self._F, self.factor_jitter), initial=np.inf)
                    >= FLOAT32_PIVOT_MARGIN)

    def _gram(self) -> None:
        """Lower triangle (and diagonal) of F := TTᵀ + Φ_SᵀΦ_S, less ssᵀ/r when
        centred (s the sum of the r sampled features); T stays in the upper triangle,
        its diagonal in ``_diag_T``."""
        F, m = self._F, self.m
        self._diag[:] = self._diag_T
        # the centres' features are the columns of T: their sum is T1
        total = None
        if self.centred:
            with blas_for_flops(float(m) * m):
                total = self._blas[0](F, np.ones(m, dtype=self.dtype), lower=0)
        _mirror(F, upper_to_lower=True)           # lower triangle := Tᵀ
        with blas_for_flops(m ** 3 / 3.0):
            _, info = self._lapack[0](F, lower=1, overwrite_c=1)   # lower := T Tᵀ
        if info != 0:                             # pragma: no cover - LAPACK argument error
            raise np.linalg.LinAlgError(f"?lauum failed with info={info}")
        self._bar.update(1, self._cube, "the centres' part of the estimate")
        if self._sample is not None:
            total = self._add_sample(total)
        if total is not None:                     # the Gram of the centred features
            with blas_for_flops(float(m) * m):
                out = self._blas[1](-1.0 / self.rows, total, a=F, lower=1, overwrite_a=1)
            if not np.shares_memory(out, F):      # pragma: no cover - F is Fortran-ordered
                raise RuntimeError("dsyr did not update the preconditioner in place")

    def _add_sample(self, total: np.ndarray | None) -> np.ndarray | None:
        """Add Φ_SᵀΦ_S to the lower triangle of F (holding TTᵀ) and Φ_Sᵀ1 to ``total``."""
        F, m = self._F, self.m
        assert self._sample is not None
        gram_diag = self._diag.copy()
        rows = max(1, _SAMPLE_BLOCK // m)
        for start in range(0, self._sample.shape[0], rows):
            block = (self._sample[start:start + rows] - self._cond.shift) * self._cond.scale
            Kb = lowlevel.kernel_block(block, self._cond.centres,
                                       self._cond.gamma, kernel=self._cond.kernel)
            if self.single:
                Kb = Kb.astype(np.float32)
            self._diag[:] = self._diag_T
            with blas_for_flops(float(Kb.size) * m):
                Pt = self._blas[2](1.0, F, Kb.T, lower=0, trans_a=1, overwrite_b=1)  # Φ_bᵀ
                self._diag[:] = gram_diag
                syrk_in_place(F, Pt, 1.0, lower=True)
            gram_diag = self._diag.copy()
            if total is not None:
                total += Pt.sum(axis=1)
            self._bar.update(1, 2.0 * rows * m * m,
                             f"sampled rows {min(start + rows, self._sample.shape[0])}"
                             f"/{self._sample.shape[0]}")
        return total

    def _factor_A(self, lam: float) -> float:
        r = self.rows
        extra = 0.0
        for attempt in range(_JITTER_STEPS):
            if attempt:                           # the estimate again, with a shift
                self._plan_estimate()
            self._gram()
            self._diag += r * (lam + extra)       # factor G + rλI = r(G/r + λI)
            info = _potrf(self._F, lower=True)
            self._bar.update(1, self._cube, "factor of the estimate")
            if info == 0:
                return extra
            extra = max(100.0 * extra, r * (_EPS32 if self.single else _EPS))
        raise np.linalg.LinAlgError(
            f"G/r + λI is not positive definite even with a shift of {extra:.3g}.")

    def effective_dimension(self) -> float:
        """Σ g/(g + λ) over the eigenvalues g of G/r, as m − λ‖A⁻¹‖_F² (AᵀA = G/r + λI).

        Inverts A's factor in place (m³/3 flops): the solves with A end here."""
        F, m, lam = self._F, self.m, self.alpha / self.n
        self._diag[:] = self._diag_A
        with blas_for_flops(m ** 3 / 3.0):
            _, info = self._lapack[1](F, lower=1, overwrite_c=1)
        if info != 0:                             # pragma: no cover - A is nonsingular
            raise np.linalg.LinAlgError(f"?trtri failed with info={info}")
        total = 0.0                               # ‖L⁻¹‖_F², lower triangle by column blocks
        for j0 in range(0, m, _MIRROR_BLOCK):
            j1 = min(m, j0 + _MIRROR_BLOCK)
            block = np.tril(F[j0:j1, j0:j1]).astype(np.float64, copy=False)
            total += float(np.sum(block * block))
            below = F[j1:, j0:j1].astype(np.float64, copy=False)
            total += float(np.sum(below * below))
        self._diag[:] = self._diag_T
        self._diag_A = np.full(m, np.nan)         # A is gone: a later solve gives NaN
        return float(m - lam * self.rows * total)

    # The factor of A is stored as L with LLᵀ = G + rλI, so A = Lᵀ/√r.
    def _trsm(self, B: np.ndarray, lower: bool, trans: bool, scale: float) -> np.ndarray:
        if self.single:                   # float32 factors, float64 arithmetic
            diag = self._diag_A if lower else self._diag_T
            return triangular_apply(self._F, diag, lower, trans, True, scale, B)
        if lower:
            self._diag[:] = self._diag_A
        try:
            return blas.dtrsm(scale, self._F, B, lower=int(lower), trans_a=int(trans),
                              overwrite_b=1)
        finally:
            if lower:
                self._diag[:] = self._diag_T

    def solve_T(self, B: np.ndarray) -> np.ndarray:
        """T⁻¹B (B Fortran-ordered (m, t), overwritten)."""
        return self._trsm(B, lower=False, trans=False, scale=1.0)

    def solve_Tt(self, B: np.ndarray) -> np.ndarray:
        """T⁻ᵀB."""
        return self._trsm(B, lower=False, trans=True, scale=1.0)

    def solve_A(self, B: np.ndarray) -> np.ndarray:
        """A⁻¹B = √r L⁻ᵀB."""
        return self._trsm(B, lower=True, trans=True, scale=math.sqrt(self.rows))

    def solve_At(self, B: np.ndarray) -> np.ndarray:
        """A⁻ᵀB = √r L⁻¹B."""
        return self._trsm(B, lower=True, trans=False, scale=math.sqrt(self.rows))

    def times_At(self, B: np.ndarray) -> np.ndarray:
        """AᵀB = LB/√r."""
        if self.single:
            return triangular_apply(self._F, self._diag_A, True, False, False,
                                    1.0 / math.sqrt(self.rows), B)
        self._diag[:] = self._diag_A
        try:
            return blas.dtrmm(1.0 / math.sqrt(self.rows), self._F, B, lower=1, trans_a=0,
                              overwrite_b=1)
        finally:
            self._diag[:] = self._diag_T


@dataclass
class NystromSolution:
    """What :func:`nystrom_pcg` returns.

    Attributes
    ----------
    coef : ndarray of shape (m, t)
        β, with f(x) = k(x, Z)β + b.
    intercept : ndarray of shape (t,)
        b (zeros without bias).
    iterations : int
        Conjugate-gradient iterations used (every output column iterates together).
    residual : ndarray of shape (t,)
        The relative residual of the normal equations reached, per output (explicit).
    preconditioned_residual : ndarray of shape (t,)
        ‖R‖/‖c‖, the relative residual of the preconditioned system reached (module
        notes, "Stopping rule").
    converged : bool
        Whether every residual and preconditioned residual is ≤ tol.
    direct : bool
        Whether a stalled iteration was finished by the direct solve (module notes,
        "Stalls"); the residuals are then the direct solution's, read as the
        iteration's.
    passes : int
        Streamed passes over the data (iterations + the right-hand side + checks).
    jitter, shift : float
        The preconditioner's δ and extra shift.
    tol, max_iter : the stopping rule.
    seconds : dict
        Time of the preconditioner, the right-hand side and the iterations.
    history : ndarray of shape (iterations, t)
        The (recursive) relative residual after each iteration.
    rss : ndarray of shape (t,)
        The residual sum of squares of the fit on the training rows.
    effective_dimension : float
        tr S, S the fit's smoother (the hat matrix) with Φ's Gram estimated as the
        preconditioner's (from the r sampled rows): Σ g/(g + λ) over the eigenvalues
        g of G/r, plus 1 for the bias.
    gcv : ndarray of shape (t,)
        The generalised cross-validation score (RSS/n)/(1 − tr S/n)² of the fit (Golub,
        Heath & Wahba, Technometrics 1979): the rotation-invariant form of the
        leave-one-out mean squared residual that ``eloo`` computes.
    factors : {"float64", "float32"}
        The precision the preconditioner's factors were kept in.
    resumed_from : int
        The iteration a checkpoint's saved state continued from (0: from the start).
    """

    coef: np.ndarray
    intercept: np.ndarray
    iterations: int
    residual: np.ndarray
    converged: bool
    passes: int
    jitter: float
    shift: float
    tol: float
    max_iter: int
    seconds: dict[str, float] = field(default_factory=dict)
    history: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    rss: np.ndarray = field(default_factory=lambda: np.empty(0))
    effective_dimension: float = float("nan")
    gcv: np.ndarray = field(default_factory=lambda: np.empty(0))
    preconditioned_residual: np.ndarray = field(default_factory=lambda: np.empty(0))
    direct: bool = False
    factors: str = "float64"
    resumed_from: int = 0


def _fortran(B: np.ndarray) -> np.ndarray:
    return np.asfortranarray(B, dtype=np.float64)


def _norms(B: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->j", B, B))


def _conjugate_gradients(matvec: Callable[[np.ndarray], np.ndarray], c: np.ndarray,
                         relative: Callable[[np.ndarray], np.ndarray], tol: float,
                         max_iter: int, history: list[np.ndarray], *,
                         state: CGState | None = None,
                         observe: Callable[[int, np.ndarray], None] | None = None,
                         save: Callable[[CGState], None] | None = None
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Conjugate gradients on M u = c, every column independently (its own step sizes)
    but sharing each product M·P; a column stops moving once ``relative`` of its residual
    is ≤ tol. On exit the residual is recomputed explicitly as c − Mu; while it is above
    tol, the iteration restarts from u with it, as long as each restart at least halves
    it. At most ``max_iter`` iterations in all; ``history`` receives the residual after
    every iteration. ``state``: continue from a saved state instead of u = 0;
    ``observe(iterations, residual)`` is called after every iteration, ``save(state)``
    after every iteration that leaves the loop running (:mod:`._checkpoint`). Returns (u,
    the explicit residual c − Mu, its relative size, iterations)."""
    direction: np.ndarray | None = None
    if state is None:
        U = np.zeros_like(c)
        R = c.copy(order="F")
        residual = checked = relative(R)
        iterations = 0
    else:
        U, R, direction, rr = state.U, state.R, state.direction, state.rr
        residual, checked, iterations = state.residual, state.checked, state.iterations
        history.extend(state.history)
    while True:
        active = residual > tol
        if direction is None:
            direction = R.copy(order="F")
            rr = np.einsum("ij,ij->j", R, R)
        if active.any() and iterations < max_iter:
            while iterations < max_iter:
                MP = matvec(direction)
                pMp = np.einsum("ij,ij->j", direction, MP)
                step = np.where(active & (pMp > 0), rr / np.where(pMp > 0, pMp, 1.0), 0.0)
                U += step * direction
                R -= step * MP
                iterations += 1
                residual = relative(R)
                history.append(residual)
                active = residual > tol
                if not active.any():
                    if observe is not None:
                        observe(iterations, residual)
                    break
                rr_new = np.einsum("ij,ij->j", R, R)
                ratio = np.where(rr > 0, rr_new / np.where(rr > 0, rr, 1.0), 0.0)
                direction = R + ratio * direction
                rr = rr_new
                if save is not None:
                    save(CGState(U, R, direction, rr, residual, checked, iterations,
                                 np.array(history, dtype=np.float64).reshape(iterations, -1)))
                if observe is not None:
                    observe(iterations, residual)
        direction = None
        R = c - matvec(U)                              # the explicit residual
        previous, residual = checked, relative(R)
        checked = residual
        open_ = residual > tol
        if (not open_.any() or iterations >= max_iter
                or not np.any(residual[open_] < 0.5 * previous[open_])):
            return U, R, residual, iterations          # met, out of iterations, or stalled


def _monitored(matvec: Callable[[np.ndarray], np.ndarray], c: np.ndarray,
               relative: Callable[[np.ndarray], np.ndarray], tol: float, max_iter: int,
               history: list[np.ndarray], state: CGState | None, monitor: CGMonitor,
               checkpoint: CGCheckpoint | None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """:func:`_conjugate_gradients` from ``state`` (or zero), reporting to ``monitor``
    and saving to ``checkpoint``: on an interruption the latest state is saved; a
    finished solve (converged, or stalled, which resuming would repeat) removes its
    checkpoint, one stopped by ``max_iter`` keeps it."""
    try:
        if monitor.active:
            monitor.start(0 if state is None else state.iterations,
                          relative(c) if state is None else state.residual)
        U, R, residual, iterations = _conjugate_gradients(
            matvec, c, relative, tol, max_iter, history, state=state,
            observe=monitor.step if monitor.active else None,
            save=None if checkpoint is None else checkpoint.offer)
    except BaseException:
        if checkpoint is not None:
            checkpoint.flush()
        raise
    finally:
        monitor.close()
    if checkpoint is not None and (iterations < max_iter or np.all(residual <= tol)):
        checkpoint.remove()
    return U, R, residual, iterations


def _fingerprint(rows: RowPasses, alpha: float, bias: bool, sample: np.ndarray | None,
                 ) -> dict[str, str]:
    """What identifies the system a checkpoint belongs to (:mod:`._checkpoint`) and is
    known before the solve's set-up: the sizes, γ, α, the kernel and bias, digests of
    the centres, of the sample rows and of the targets (in memory)."""
    cond = rows.cond
    Y = rows.Y if isinstance(rows.Y, np.ndarray) else "dask"
    return fingerprint(
        dtype="float64", n=rows.n, d=int(rows.X.shape[1]), m=int(cond.centres.shape[0]),
        gamma=np.asarray(cond.gamma, dtype=np.float64), alpha=float(alpha),
        kernel=cond.kernel, bias=bool(bias), centres=np.asarray(cond.centres),
        sample=np.empty((0, 0)) if sample is None else np.asarray(sample, dtype=np.float64),
        y=Y)


def _fingerprint_solve(P: NystromPreconditioner, KtY: np.ndarray, sums: Any, squares: Any
                       ) -> dict[str, str]:
    """The rest of the fingerprint: the preconditioner's jitter and shift and the
    right-hand side K_nmᵀ[1, y], 1ᵀy, ‖y‖², which depend on every row of X and y (a
    Dask input is fingerprinted by them without another pass)."""
    factors = {"factors": "float32"} if P.single else {}
    return fingerprint(
        t=int(KtY.shape[1]) - 1, jitter=float(P.jitter), shift=float(P.shift), **factors,
        **{"K(X, centres)ᵀ[1, y]": np.asarray(KtY, dtype=np.float64),
           "sum of y": np.asarray(sums, dtype=np.float64),
           "sum of squares of y": np.asarray(squares, dtype=np.float64)})


def nystrom_pcg(rows: RowPasses, alpha: float, *, bias: bool,
                tol: float = DEFAULT_TOL, max_iter: int = DEFAULT_MAX_ITER,
                sample: np.ndarray | None = None,
                progress: bool | float = False,
                constant: np.ndarray | None = None,
                callback: Callable[[CGStep], None] | None = None,
                checkpoint: CGCheckpoint | None = None,
                precision: str = "auto") -> NystromSolution:
    """Solve Nyström KRR / the LSSVM for the targets Y by preconditioned CG.

    Parameters
    ----------
    rows : NystromRows or DaskNystromRows
        The data X, the targets Y (n, t) and the conditioned centres; its passes
        stream K(X, Z).
    alpha : float
        The ridge α > 0.
    bias : bool
        An unpenalised intercept (the LSSVM) or none (kernel ridge regression).
    tol, max_iter
        The stopping rule (module notes).
    sample : ndarray of shape (q, d) or None
        Rows of X besides the centres for the preconditioner's estimate of ΦᵀΦ.
    progress : bool or float
        As ``select_kernel``'s ``progress``: on long fits, the iteration, the residual
        against ``tol`` and the estimated time left (:mod:`._cg_monitor`).
    constant : ndarray of bool of shape (t,) or None
        Which columns of Y are constant (with ``bias``, their β is 0 and b their value,
        exactly, instead of a solve on the rounding of K_nmᵀCy).
    callback : callable or None
        Called with a :class:`~kernelselect.solvers._cg_monitor.CGStep` after every
        iteration.
    checkpoint : CGCheckpoint or None
        Save the iteration's state as it goes and resume from a saved state of the same
        system (:mod:`._checkpoint`).
    precision : {"auto", "float64", "float32"}
        The preconditioner's factors (module notes, "Factors in float32"; "auto":
        float32 above :data:`FLOAT32_MIN_CENTRES` centres where their test passes); the
        model, the products and the iteration are float64 either way.

    Returns
    -------
    NystromSolution
    """
    n, m = rows.n, rows.cond.centres.shape[0]
    lam, sqrt_n = alpha / n, math.sqrt(n)
    if checkpoint is not None:                # refuse another system before the set-up
        early = _fingerprint(rows, alpha, bias, sample)
        checkpoint.check_early(early)
    clock = time.perf_counter()
    P = NystromPreconditioner(rows.cond, n, alpha, sample, centred=bias, precision=precision,
                              progress=progress)
    seconds = {"preconditioner": time.perf_counter() - clock}
    workers = getattr(rows, "workers", None)
    clock = time.perf_counter()
    KtY, sums, squares = rows.cross_targets()         # K_nmᵀ[1, Y], 1ᵀY, ‖Y‖²
    s, rhs = KtY[:, 0], KtY[:, 1:]
    ybar = np.asarray(sums, dtype=np.float64) / n
    # ‖Cy‖²: the spread the fit explains a part of
    spread = np.asarray(squares, dtype=np.float64) - (n * ybar * ybar if bias else 0.0)
    if bias:
        rhs = rhs - np.outer(s, ybar)                 # K_nmᵀ C y
        if constant is not None:                      # Cy = 0 exactly: β = 0, b = ȳ
            rhs[:, np.asarray(constant, dtype=bool)] = 0.0
            spread = np.where(constant, 0.0, spread)
    rhs = rhs.copy(order="F")                     # kept: the solves below overwrite a copy
    with blas_for_flops(4.0 * m * m * rhs.shape[1]):
        c = P.solve_At(P.solve_Tt(rhs.copy(order="F"))) / sqrt_n
        c_norm = _norms(P.times_At(c.copy(order="F")))
    seconds["right-hand side"] = time.perf_counter() - clock

    def matvec(U: np.ndarray) -> np.ndarray:
        """A⁻ᵀ(ΦᵀCΦ/n + λI)A⁻¹U."""
        with blas_for_flops(4.0 * m * m * U.shape[1]):
            V = P.solve_A(U.copy(order="F"))
            beta = P.solve_T(V.copy(order="F")) / sqrt_n
        q = rows.normal(beta)
        if bias:
            q -= np.outer(s, s @ beta) / n
        if P.single:
            q += _ridge_term(rows.cond, P.jitter, alpha, beta, workers)
        with blas_for_flops(4.0 * m * m * U.shape[1]):
            W = P.solve_Tt(_fortran(q)) / sqrt_n
            if not P.single:                  # T exact: T⁻ᵀα(K_mm + δI)β/√n = λV
                W += lam * V
            return P.solve_At(_fortran(W))

    def in_w(R: np.ndarray) -> np.ndarray:
        """The relative residual in w of the CG residual R (‖AᵀR‖/‖Aᵀc‖ per column)."""
        with blas_for_flops(m * m * R.shape[1]):
            norms = _norms(P.times_At(R.copy(order="F")))
        return _ratio(norms, c_norm)

    def relative(R: np.ndarray) -> np.ndarray:
        """The stopping rule's measure: the larger of the residual in w and the
        preconditioned one, ‖R‖/‖c‖ (module notes)."""
        return np.maximum(in_w(R), _ratio(_norms(R), u_norm))

    u_norm = _norms(c)

    clock = time.perf_counter()
    history: list[np.ndarray] = []
    state = None
    if checkpoint is not None:
        state = checkpoint.load(dict(early, **_fingerprint_solve(P, KtY, sums, squares)),
                                (m, int(c.shape[1])))
    U, R, residual, iterations = _monitored(matvec, c, relative, tol, max_iter, history,
                                            state, CGMonitor(progress, tol, max_iter, callback),
                                            checkpoint)
    seconds["iterations"] = time.perf_counter() - clock
    passes = rows.passes
    direct = None
    if (np.any(residual > tol) and iterations < max_iter and n * m <= DIRECT_ENTRIES
            and not P.single):
        clock = time.perf_counter()                       # stalled: the module notes
        direct = _direct_solve(rows, P, alpha, bias, ybar)
        seconds["direct"] = time.perf_counter() - clock
        passes += 1
    if direct is not None:
        W, beta, rss = direct
        # its residuals as the iteration reads them, through the streamed products
        q = rows.normal(beta)
        passes += 1
        if bias:
            q -= np.outer(s, s @ beta) / n
        with blas_for_flops(4.0 * m * m * W.shape[1]):
            rho = P.solve_Tt(_fortran(rhs - q)) - alpha * W      # ΦᵀCy − (ΦᵀCΦ + αI)w
            reached = _ratio(_norms(rho), _norms(P.solve_Tt(_fortran(rhs))))
            pre = _ratio(_norms(P.solve_At(_fortran(rho))) / sqrt_n, u_norm)
        residual = np.maximum(reached, pre)
    else:
        with blas_for_flops(2.0 * m * m * U.shape[1]):
            V = P.solve_A(U.copy(order="F"))              # √n·w
            beta = P.solve_T(V.copy(order="F")) / sqrt_n
        # The fit's residual sum of squares without another pass: with w = A⁻¹u/√n,
        # wᵀΦᵀCy = uᵀc and the explicit residual ρ_w = √n·AᵀR gives wᵀρ_w = uᵀR, so
        # ‖Cy − CΦw‖² = ‖Cy‖² − uᵀc − uᵀR − λ‖A⁻¹u‖².
        if P.single:                          # βᵀα(K_mm + δI)β, one product of the centres
            ridge = np.einsum("ij,ij->j", beta,
                              _ridge_term(rows.cond, P.jitter, alpha, beta, workers))
        else:
            ridge = lam * np.einsum("ij,ij->j", V, V)
        rss = spread - np.einsum("ij,ij->j", U, c) - np.einsum("ij,ij->j", U, R) - ridge
        reached = in_w(R)                                 # before A is inverted in place
        pre = _ratio(_norms(R), u_norm)
    d_eff = P.effective_dimension() + (1.0 if bias else 0.0)
    intercept = ybar - (s @ beta) / n if bias else np.zeros(beta.shape[1])
    t = beta.shape[1]
    return NystromSolution(
        coef=np.ascontiguousarray(beta), intercept=intercept, iterations=iterations,
        residual=reached, converged=bool(np.all(residual <= tol)), passes=passes,
        jitter=P.jitter, shift=P.shift, tol=tol, max_iter=max_iter, seconds=seconds,
        history=np.array(history, dtype=np.float64).reshape(len(history), t), rss=rss,
        effective_dimension=d_eff, gcv=(rss / n) / (1.0 - min(d_eff, n - 1.0) / n) ** 2,
        preconditioned_residual=pre, direct=direct is not None, factors=P.dtype.name,
        resumed_from=0 if state is None else int(state.iterations))


def _ridge_term(cond: Conditioning, jitter: float, alpha: float, beta: np.ndarray,
                workers: int | None) -> np.ndarray:
    """α(K_mm + δI)β, the model's ridge in β, by one streamed product over the centres
    (float64 factors give it as λ√n·w; module notes, "Factors in float32")."""
    Kb = lowlevel.kernel_matvec(cond.centres, beta, cond.gamma, kernel=cond.kernel,
                                workers=workers)
    return alpha * (Kb + jitter * beta)


def _direct_solve(rows: RowPasses, P: NystromPreconditioner, alpha: float, bias: bool,
                  ybar: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same model solved directly, for a stalled iteration on a small problem
    (n·m ≤ :data:`DIRECT_ENTRIES`; module notes, "Stalls"): Φ = K_nm T⁻¹ formed
    by one prediction pass, w the least-squares solution of [CΦ; √αI] w = [Cy; 0] by
    Householder QR. Returns (w, β = T⁻¹w, the residual sum of squares ‖Cy − CΦw‖²)."""
    n, m = rows.n, P.m
    eye = np.eye(m)
    if isinstance(rows, NystromRows):                      # in memory: its own threads
        K = run_pass(APPLY, rows.X, rows.cond, eye, rows.workers)
        Y = rows.Y
    else:
        K, Y = dask_compute(dask_predict(rows.X, rows.cond, eye, np.zeros(m)), rows.Y)
    Y = np.asarray(Y, dtype=np.float64).reshape(n, -1)
    with blas_for_flops(float(n) * m * m):
        Phi = P.solve_Tt(np.asfortranarray(K.T)).T          # K_nm T⁻¹, (n, m)
    if bias:
        Phi = Phi - Phi.mean(axis=0)
        Y = Y - ybar
    stacked = np.vstack([Phi, math.sqrt(alpha) * eye])
    with blas_for_flops(2.0 * (n + m) * m * m):
        Q, Rq = np.linalg.qr(stacked)
        W = np.linalg.solve(Rq, Q[:n].T @ Y) if m else np.zeros((0, Y.shape[1]))
    fitted = Phi @ W
    beta = P.solve_T(W.copy(order="F"))
    return W, beta, np.einsum("ij,ij->j", Y - fitted, Y - fitted)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den per column, 0 where den is 0 (a zero right-hand side is solved by 0)."""
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def refusal_hint(n: int, m: int, d: int, t: int, threads: int, precision: str = "auto"
                 ) -> str:
    """How to fit within the memory limit, naming what dominates the estimate: the
    m × m preconditioner (then the largest m that fits) or the t outputs' vectors and
    pass buffers (then the most outputs that fit at once with these m centres)."""
    limit = max_bytes()
    total = nystrom_pcg_bytes(n, m, d, t, threads, precision)
    outputs = total - nystrom_pcg_bytes(n, m, d, 0, threads, precision)  # the t outputs'
    factors = factor_bytes(m, precision)
    fits = largest_centres(n, d, t, threads, precision=precision)
    centres = f"use at most {fits} centres" if fits >= 1 else ""
    if outputs > factors:
        most = _largest(lambda k: nystrom_pcg_bytes(n, m, d, k, threads, precision) <= limit,
                        t)
        parts = [f"fit at most {most} of the {t} outputs at a time (their vectors and pass "
                 f"buffers take {format_bytes(outputs)} of it, the m × m preconditioner "
                 f"{format_bytes(factors)})" if most >= 1 else
                 f"fit fewer outputs or rows at a time (the {t} outputs' vectors and pass "
                 f"buffers take {format_bytes(outputs)} of it, the m × m preconditioner "
                 f"{format_bytes(factors)})"]
        if centres:
            parts.append(centres)
        return " or ".join(parts)
    if centres:
        return (f"{centres} (the m × m preconditioner, {format_bytes(factors)} at m = {m}, "
                "is most of it)")
    return "use fewer rows or outputs at a time"


def check_solver_memory(n: int, m: int, d: int, t: int, threads: int,
                        precision: str = "auto") -> int:
    """The memory guard on a solve with m centres: refuses with the estimate and the
    largest m that fits."""
    return check_allocation(
        nystrom_pcg_bytes(n, m, d, t, threads, precision),
        f"a Nyström conjugate-gradient solve with {m} centres ({n} rows, {t} outputs)",
        refusal_hint(n, m, d, t, threads, precision))


def choose_centres(n: int, n_centres: int, random_state: np.random.Generator) -> np.ndarray:
    """n_centres distinct rows drawn uniformly (sorted, so the passes read X in order)."""
    if n_centres >= n:
        return np.arange(n)
    return np.sort(random_state.choice(n, size=n_centres, replace=False))


def choose_sample(n: int, centres: np.ndarray, size: int,
                  random_state: np.random.Generator) -> np.ndarray:
    """``size`` distinct rows that are not centres, drawn uniformly (all of them when
    fewer remain), sorted: the preconditioner's extra rows."""
    rest = np.setdiff1d(np.arange(n), centres, assume_unique=True) if n <= 2**26 else None
    if rest is not None:
        if size >= rest.size:
            return rest
        return np.sort(random_state.choice(rest, size=size, replace=False))
    taken = set(centres.tolist())               # huge n: rejection, a few draws per row
    out: set[int] = set()
    while len(out) < size:
        for i in random_state.integers(0, n, size - len(out)).tolist():
            if i not in taken:
                out.add(i)
    return np.array(sorted(out), dtype=np.intp)


def streamed_rows(X: Any, Y: Any, gamma: float, centres: np.ndarray,
                  sample: np.ndarray | None, kernel: str, workers: int | None
                  ) -> tuple[RowPasses, np.ndarray, np.ndarray | None]:
    """The passes over X (in memory or a row-chunked Dask array) with the given centres,
    the centres and the sample rows as they are in X."""
    rows: RowPasses
    if is_dask_array(X):
        Z = DaskRows(X, Y).gather(centres)
        S = None if sample is None else DaskRows(X, Y).gather(sample)
        low, high = dask_compute(X.min(axis=0), X.max(axis=0))
        cond = Conditioning(Z, gamma, kernel, bounds=(low, high))
        rows = DaskNystromRows(X, Y, cond)
    else:
        Z = np.ascontiguousarray(X[centres])
        S = None if sample is None else X[sample]
        cond = Conditioning(Z, gamma, kernel, bounds=(X.min(axis=0), X.max(axis=0)))
        rows = NystromRows(X, Y, cond, workers)
    return rows, Z, S


def fit_nystrom_pcg(X: Any, Y: Any, gamma: float, alpha: float, *,
                    centres: np.ndarray, sample: np.ndarray | None = None,
                    kernel: str = "gaussian", bias: bool = True,
                    tol: float = DEFAULT_TOL, max_iter: int = DEFAULT_MAX_ITER,
                    workers: int | None = None, progress: bool | float = False,
                    callback: Callable[[CGStep], None] | None = None,
                    checkpoint: CGCheckpoint | None = None,
                    precision: str = "auto") -> NystromMachine:
    """Fit Nyström KRR (``bias=False``) or the LSSVM on the given centres by PCG.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64, C-contiguous, or a row-chunked Dask array
        (validated by the caller; a Dask X is never gathered, only its centres are)
    Y : ndarray of shape (n, t), or a Dask array chunked like the rows of X
    gamma, alpha : float
    centres : ndarray of int of shape (m,)
        Rows of X used as centres.
    sample : ndarray of int of shape (q,) or None
        Other rows of X whose features join the centres' in the preconditioner's
        estimate of ΦᵀΦ (:func:`choose_sample`; None: the centres alone, FALKON's form).
    kernel, bias, tol, max_iter, workers, progress, callback, checkpoint, precision
        As :func:`nystrom_pcg` (``workers``: threads of the in-memory passes; a Dask
        pass runs one single-threaded task per chunk).

    Returns
    -------
    NystromMachine
        ``support`` = the centres, ``coef`` = β of shape (m, t, 1), ``method``
        "nystrom-pcg"; ``details`` holds the iterations, residual reached, jitter.
    """
    n, d = X.shape
    m, t = int(centres.size), Y.shape[1]
    tol = check_tol(tol)
    precision = check_precision(precision)
    if checkpoint is not None:
        checkpoint.check_path()                   # refuse a foreign file before any work
    if is_dask_array(X):
        check_dask_solver_memory(n, max(aligned_chunks(tuple(X.chunks[0]))), m, d, t,
                                 precision)
    else:
        check_solver_memory(n, m, d, t, block_threads(float(n) * m, workers), precision)
    shift, scale, constant = target_scale(Y, bias)
    rows, Z, S = streamed_rows(X, (Y - shift) * (1.0 / scale), gamma, centres, sample, kernel,
                               workers)
    sol = nystrom_pcg(rows, alpha, bias=bias, tol=tol, max_iter=max_iter, sample=S,
                      progress=progress, constant=constant, callback=callback,
                      checkpoint=checkpoint, precision=precision)
    sol.coef *= scale
    sol.intercept = sol.intercept * scale + shift   # a constant column: b = its value
    with np.errstate(over="ignore"):          # y near the overflow threshold: inf
        sol.rss *= scale * scale
        sol.gcv *= scale * scale
    if not sol.converged:
        warn_unconverged(sol, m, alpha)
    return NystromMachine(
        support=Z, support_indices=centres, coef=sol.coef[:, :, None],
        intercept=sol.intercept[:, None], alphas=np.array([alpha]), gamma=gamma,
        kernel=kernel, method="nystrom-pcg", details=solution_details(sol, m),
        conditioning=rows.cond)


def check_precision(precision: Any) -> str:
    """``precision`` validated: "auto", "float64" or "float32"."""
    if not isinstance(precision, str) or precision not in ("auto", "float64", "float32"):
        raise ValueError(f'precision must be "auto", "float64" or "float32", got '
                         f"{precision!r}.")
    return precision


def check_tol(tol: Any) -> float:
    """``tol`` validated: a number in [0, 1) (the relative residual of β = 0 is 1, so a
    tolerance of 1 or more would accept it)."""
    value = float(tol) if isinstance(tol, (int, float, np.integer, np.floating)) else math.nan
    if not 0.0 <= value < 1.0:
        raise ValueError(f"tol must be a number in [0, 1) (a relative residual; the "
                         f"default is {DEFAULT_TOL:g}), got {tol!r}.")
    return value


def target_scale(Y: Any, centre: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column of Y (in memory or Dask, one pass over Y): the shift c and the scale s
    of the targets the solve sees, (y − c)/s, and whether the column is constant.

    With ``centre`` (a model with a bias, which the shift only moves) c is the midrange
    (min + max)/2, so that K_nmᵀy and the column sums do not carry a large mean that
    the elimination of the bias would cancel; otherwise 0. s is a power of two near
    max|y − c| (the division is exact), so that sums of squares and residual norms
    neither overflow nor underflow. Both come from the extremes, which any order of
    summation gives alike: a Dask Y and the same Y in memory are shifted to the same
    bits. Refuses a Y with NaN or infinite values."""
    if is_dask_array(Y):
        low, high = dask_compute(Y.min(axis=0), Y.max(axis=0))
    else:
        Y = np.asarray(Y)
        low, high = (Y.min(axis=0), Y.max(axis=0)) if Y.shape[0] else (
            np.zeros(Y.shape[1]), np.zeros(Y.shape[1]))
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        raise ValueError("y (the targets) holds NaN or infinite values; remove or impute "
                         "those rows before fitting.")
    if centre:
        shift = np.where(low == high, low, 0.5 * low + 0.5 * high)
        top = 0.5 * high - 0.5 * low
    else:
        shift = np.zeros_like(low)
        top = np.maximum(np.abs(low), np.abs(high))
    scale = np.where(top > 0, np.exp2(np.floor(np.log2(np.where(top > 0, top, 1.0)))), 1.0)
    return shift, scale, low == high


def warn_unconverged(sol: NystromSolution, m: int, alpha: float) -> None:
    """The ConvergenceWarning of a solve that stopped above its tolerance."""
    worst = float(np.max(np.maximum(sol.residual, sol.preconditioned_residual)))
    cause = (f"max_iter={sol.max_iter} iterations were used" if sol.iterations >= sol.max_iter
             else f"the residual stopped falling after {sol.iterations} iterations "
                  "(the accuracy floating point allows on this problem)")
    if sol.direct:
        cause += ("; the fit was then finished by a direct least-squares solve, whose "
                  "residual read through the same streamed products is their rounding")
    warn_user(f"The Nyström conjugate-gradient solve ({m} centres, alpha={alpha:.3g}) "
              f"stopped at a relative residual of {worst:.2g}, above tol={sol.tol:.3g}: "
              f"{cause}. Raise max_iter, loosen tol, or raise alpha; "
              "details['converged'], ['iterations'] and ['residual'] record it.",
              ConvergenceWarning)


class NystromMachine(KernelMachine):
    """A fitted Nyström machine, f(x) = k(x, centres)β + b: a :class:`KernelMachine`
    whose predictions run the compiled pass over blocks of rows (the one the fit
    streamed with), on in-memory or row-chunked Dask input."""

    def __init__(self, *, conditioning: Conditioning, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.conditioning = conditioning

    def decision_function(self, X: Any, workers: int | None = None) -> Any:
        """f(X) of shape (n_new, t, L); a Dask array for Dask X (its row chunks
        moved to begin at the passes' 64-row blocks, ``_rows.block_chunks``)."""
        assert self.coef is not None
        m, t, L = self.coef.shape
        coef = self.coef.reshape(m, t * L)
        intercept = self.intercept.reshape(t * L)
        if Kernel.of(self.kernel).per_feature:   # fitted on X·diag(√γ) with γ = 1
            X = X * np.sqrt(np.asarray(self.gamma, dtype=np.float64))
        if is_dask_array(X):
            out = dask_predict(X, self.conditioning, coef, intercept)
            return out.reshape(X.shape[0], t, L)
        X = np.ascontiguousarray(X, dtype=np.float64)
        F = run_pass(APPLY, X, self.conditioning, coef, workers) + intercept
        return F.reshape(X.shape[0], t, L)


def solution_details(sol: NystromSolution, m: int) -> dict[str, Any]:
    """What a fitted machine reports of its solve."""
    return {"method": "nystrom-pcg", "n_centres": m, "iterations": sol.iterations,
            "residual": sol.residual.copy(),
            "preconditioned_residual": sol.preconditioned_residual.copy(),
            "converged": sol.converged, "direct": sol.direct, "tol": sol.tol,
            "max_iter": sol.max_iter, "passes": sol.passes, "jitter": sol.jitter,
            "seconds": dict(sol.seconds), "history": sol.history.copy(),
            "rss": sol.rss.copy(), "effective_dimension": sol.effective_dimension,
            "gcv": sol.gcv.copy(), "factors": sol.factors, "resumed_from": sol.resumed_from}
