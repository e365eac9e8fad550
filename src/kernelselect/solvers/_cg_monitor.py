"""Where a conjugate-gradient solve is and how long it has left.

After each iteration k the solve reports its relative residual r_k (the largest over
its output columns) against the tolerance. The residual of conjugate gradients falls
roughly geometrically, so the iterations left are estimated from its mean decrease per
iteration so far,

    ρ = (log r_s − log r_k)/(k − s),        iterations left ≈ log(r_k/tol)/ρ,

s the iteration this run started from (0, or the iteration a checkpoint resumed), at
most ``max_iter − k``, and ``max_iter − k`` itself while the residual has not fallen
(ρ ≤ 0) or the tolerance is 0. The time left is that count times the mean time of this
run's iterations. Both are estimates: conjugate gradients converge faster once the
spectrum's outliers are resolved, so the count usually falls faster than it predicts.

The record (:class:`CGStep`) goes to a callback when one is given and, with
``progress`` (as :func:`kernelselect.select_kernel`'s), to a bar or low-rate lines on
stderr (:class:`kernelselect.utils._progress.ProgressBar`); with neither, nothing is
computed beyond a clock read.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..utils._progress import ProgressBar

__all__ = ["CGStep", "CGMonitor", "iterations_left"]


@dataclass(frozen=True)
class CGStep:
    """One iteration of a conjugate-gradient solve, as reported.

    Attributes
    ----------
    iteration : int
        Iterations done (counting those before a resumed checkpoint).
    residual : float
        The stopping rule's relative residual after it, the largest over the outputs.
    tol : float
        The tolerance it is compared with.
    seconds : float
        Seconds since this run's first iteration began.
    iterations_left : float
        Estimated iterations to reach ``tol`` (module notes), at most ``max_iter`` less
        those done.
    seconds_left : float
        ``iterations_left`` times the mean seconds per iteration of this run.
    """

    iteration: int
    residual: float
    tol: float
    seconds: float
    iterations_left: float
    seconds_left: float


def iterations_left(start: tuple[int, float], now: tuple[int, float], tol: float,
                    max_iter: int) -> float:
    """Estimated iterations from ``now`` = (k, r_k) to a residual of ``tol``, from the
    mean decrease of log r per iteration since ``start`` = (s, r_s) (module notes); at
    most ``max_iter − k``, never negative."""
    (s, r_s), (k, r_k) = start, now
    most = float(max(0, max_iter - k))
    if r_k <= tol:
        return 0.0
    if k <= s or tol <= 0.0 or not (r_s > 0.0 and r_k > 0.0):
        return most
    rate = (math.log(r_s) - math.log(r_k)) / (k - s)
    if not rate > 0.0:
        return most
    return min(most, float(math.ceil(math.log(r_k / tol) / rate)))


class CGMonitor:
    """Reports each iteration of one solve (module notes).

    Parameters
    ----------
    progress : bool or float
        As ``select_kernel``'s ``progress`` (checked by the caller).
    tol : float
    max_iter : int
    callback : callable or None
        Called with a :class:`CGStep` after each iteration; an exception it raises
        (a KeyboardInterrupt, say) ends the solve.
    desc : str
        The bar's or lines' name.
    """

    def __init__(self, progress: bool | float, tol: float, max_iter: int,
                 callback: Callable[[CGStep], None] | None = None,
                 desc: str = "Nyström conjugate gradients") -> None:
        self.tol, self.max_iter, self.callback = tol, max_iter, callback
        self.active = progress is not False or callback is not None
        self._bar = ProgressBar(progress, desc=desc, unit="iterations")
        self._start = (0, 1.0)
        self._clock = time.perf_counter()

    def start(self, iteration: int, residual: np.ndarray) -> None:
        """The solve begins at ``iteration`` (0, or a resumed checkpoint's) with
        ``residual``."""
        if not self.active:
            return
        self._start = (int(iteration), float(np.max(residual, initial=0.0)))
        self._bar.extend(self.max_iter)
        self._bar.update(int(iteration))
        # until this run's first iteration, no time per iteration is known (the mean
        # over the count would credit a resumed checkpoint's iterations to this run)
        self._bar.status(f"residual {self._start[1]:.2g} (tol {self.tol:.2g})"
                         + (", resumed from a checkpoint" if iteration else ""))
        self._clock = time.perf_counter()

    def step(self, iteration: int, residual: np.ndarray) -> None:
        """Report the iteration just done."""
        if not self.active:
            return
        r = float(np.max(residual, initial=0.0))
        seconds = time.perf_counter() - self._clock
        left = iterations_left(self._start, (iteration, r), self.tol, self.max_iter)
        done_here = iteration - self._start[0]
        seconds_left = left * seconds / done_here if done_here > 0 else math.inf
        record = CGStep(iteration=int(iteration), residual=r, tol=self.tol, seconds=seconds,
                        iterations_left=left, seconds_left=seconds_left)
        self._bar.update(1)
        said = f"residual {r:.2g} (tol {self.tol:.2g})"
        if math.isfinite(seconds_left):       # counted down until the next iteration
            self._bar.countdown(lambda time_left: f"{said}, about {left:.0f} iterations, "
                                f"{time_left} left", seconds_left)
        else:
            self._bar.status(said)
        if self.callback is not None:
            self.callback(record)

    def close(self) -> None:
        """End the bar or lines."""
        self._bar.close()
