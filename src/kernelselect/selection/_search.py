"""The machinery of one selection: :class:`Search` evaluates criteria on a (γ, α) grid
with one approximation, :class:`Surface` holds the values and grows at its edges.
The rules that drive them (which grid, which approximation, when to stop) are in
:mod:`kernelselect.selection._policy`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from ..utils._kernel_family import Kernel
from ..utils._progress import ProgressBar
from ._checkpoint import SelectionCheckpoint, params_digest
from ._result import SearchLevel, n_landmarks_of
from ..criteria import evaluate_criterion
from ..operators.streaming_lowrank import ArrayRows, evaluate_grid

if TYPE_CHECKING:
    from ..criteria import Criterion
    from ..operators import Approximation, KernelOperator

__all__ = ["Search", "Surface", "best_index"]


class Search:
    """Everything one selection evaluates with: data, criteria and their targets."""

    def __init__(self, X: Any, y_build: np.ndarray, targets_for: Mapping[str, np.ndarray],
                 crits: Sequence[Criterion], params: Mapping[str, dict[str, Any]], kernel: str,
                 workers: int | None, rng: np.random.Generator, progress: bool | float = False,
                 rows: Any = None) -> None:
        self.X = X
        self.y_build = y_build
        self.targets_for = targets_for        # criterion name → y it receives
        self.crits = crits
        self.params = params
        self.kernel = Kernel.of(kernel, per_feature=False)
        self.workers = workers
        self.rng = rng
        self.progress = progress
        self.rows = rows                      # row source of the streamed operators (Dask)
        self.n_builds = 0
        #: one progress bar over every operator build of the selection (close() ends it)
        self.bar = ProgressBar(progress, desc="kernel selection", unit="operators")
        #: γ → eigenvalues of the operator evaluated there, kept while not None
        self.spectra: dict[float, np.ndarray] | None = None
        #: rows of X drawn from a larger set (the coarse levels), or None: every row
        self.subsample: int | None = None
        #: the evaluations saved so far and where they go (None: no checkpoint)
        self.checkpoint: SelectionCheckpoint | None = None

    @property
    def rows_label(self) -> str:
        """What a level's label adds to name its rows: "" on every row."""
        return "" if self.subsample is None else f" on {self.subsample} rows"

    def on_rows(self, index: np.ndarray, X: np.ndarray) -> Search:
        """The same search on the rows ``index`` (sorted) of X, given in memory as
        ``X`` (gathered from a Dask array by the caller): the targets taken at those
        rows, the progress bar, random numbers and operator count shared."""
        sub = Search.__new__(Search)
        sub.__dict__.update(self.__dict__)
        sub.X, sub.rows = X, None
        sub.y_build = self.y_build[index]
        sub.targets_for = {name: t[index] for name, t in self.targets_for.items()}
        sub.subsample = int(index.size)
        sub.n_builds = 0
        return sub

    def prepare(self, approx: Approximation) -> Any:
        return approx.prepare(self.X, self.y_build, kernel=self.kernel, random_state=self.rng,
                              workers=self.workers)

    def evaluate(self, approx: Approximation, state: Any, gammas: np.ndarray, alphas: np.ndarray,
                 desc: str = "kernel selection"
                 ) -> tuple[dict[str, np.ndarray], np.ndarray, list[dict[str, Any]]]:
        """Curves {name: (len(gammas), len(alphas))}, per-γ seconds, operator details.

        Approximations that build every γ from shared passes over the rows
        (``capabilities.grid``: the streaming Nyström, random features, the exact
        moments) are evaluated that way; the others build one operator per γ. With a
        :attr:`checkpoint`, an operator it holds is read instead of built, and each one
        built is saved.
        """
        gammas = np.asarray(gammas, dtype=np.float64)
        curves = {c.name: np.empty((gammas.size, len(alphas))) for c in self.crits}
        timings = np.empty(gammas.size)
        ops: list[dict[str, Any]] = [{} for _ in range(gammas.size)]
        cost, where = self._plan_builds(approx, gammas.size)   # this grid's builds
        keys = self._keys(approx, gammas, alphas)
        memo = self.checkpoint
        todo, read = [], []
        for i in range(gammas.size):
            saved = None if keys is None or memo is None else memo.get(keys[i])
            if saved is None:
                todo.append(i)
                continue
            read.append(i)
            for name in curves:
                curves[name][i] = saved["curves"][name]
            timings[i], ops[i] = saved["seconds"], saved["details"]
            if self.spectra is not None and saved["spectrum"] is not None:
                self.spectra[float(gammas[i])] = saved["spectrum"]
        if read:                         # the time left at the rate they took when built
            self.bar.update(len(read), cost, f"{where}: read from the checkpoint",
                            seconds=float(np.sum(timings[read])))

        def done(j: int, values: dict[str, np.ndarray], seconds: float,
                 details: dict[str, Any], op: KernelOperator) -> None:
            i = todo[j]
            for name in curves:
                curves[name][i] = values[name]
            timings[i], ops[i] = seconds, details
            spectrum = None
            if self.spectra is not None:
                spectrum = np.asarray(op.eigenvalues)
                self.spectra[float(gammas[i])] = spectrum
            if keys is not None and memo is not None:
                memo.put(keys[i], values, seconds, details, spectrum)

        if todo:
            self._evaluate_fresh(approx, state, gammas[todo], alphas, cost, where, done)
        return curves, timings, ops

    def _keys(self, approx: Approximation, gammas: np.ndarray, alphas: np.ndarray,
              what: str = "criteria") -> list[str] | None:
        """The checkpoint's entries of these operators (``what`` they hold: every
        criterion, or the refinement's first), or None without a checkpoint."""
        if self.checkpoint is None:
            return None
        params = params_digest(approx.get_params())
        return [self.checkpoint.key(f"{what}:{approx.label}", self.subsample, params, g,
                                    alphas) for g in gammas]

    def _evaluate_fresh(self, approx: Approximation, state: Any, gammas: np.ndarray,
                        alphas: np.ndarray, cost: float, where: str,
                        done: Callable[..., None]) -> None:
        """Build and evaluate the operators at ``gammas``; ``done(j, values, seconds,
        details, operator)`` receives each (the checkpoint is written after each
        operator built alone, after the grid built from shared passes)."""
        if self.rows is not None or approx.capabilities.grid:
            # every γ from shared row passes
            built = self._build_all(approx, state, gammas)
            if built is not None:
                curves = {c.name: np.empty((gammas.size, len(alphas))) for c in self.crits}
                timings = np.empty(gammas.size)
                details: list[dict[str, Any]] = []
                self._run_streaming(built, alphas, curves, timings, details)
                for j, op in enumerate(built):
                    done(j, {k: v[j] for k, v in curves.items()}, timings[j], details[j], op)
                self._save_checkpoint()
                self.bar.update(gammas.size, cost, f"{where}: {gammas.size} γ" if where else "")
                return
        for j in range(gammas.size):
            t0 = time.perf_counter()
            op = approx.build(self.X, self.y_build, float(gammas[j]), kernel=self.kernel,
                              state=state, workers=self.workers)
            self.n_builds += 1
            values = {c.name: np.asarray(evaluate_criterion(
                c, op, self.targets_for[c.name], alphas, **self.params[c.name]),
                dtype=np.float64) for c in self.crits}
            done(j, values, time.perf_counter() - t0, dict(op.details, n_operator=op.n), op)
            self._save_checkpoint()
            self.bar.update(1, cost, f"{where}{': ' if where else ''}γ {j + 1} of {gammas.size}")

    def _save_checkpoint(self) -> None:
        if self.checkpoint is not None:
            self.checkpoint.save()

    def _plan_builds(self, approx: Approximation, builds: int) -> tuple[float, str]:
        """Add ``builds`` operator builds of ``approx`` to the progress bar, named with
        the time left as they start; returns (one build's cost, its stage's name)."""
        cost, where = self._build_cost(approx)
        self.bar.extend(builds, cost, f"{where}: {builds} γ planned" if where else "")
        return cost, where

    def _build_cost(self, approx: Approximation) -> tuple[float, str]:
        """One operator build's cost for the time left, n·m² with m the landmarks of a
        Nyström stand-in (n for the exact operator) on this search's n rows, and its
        name."""
        name = getattr(approx, "name", "level")
        landmarks = getattr(approx, "landmarks", None)
        if name == "exact":
            m: Any = self.X.shape[0]
        elif landmarks is not None:
            m = len(landmarks)
        else:
            m = getattr(approx, "n_landmarks", None)
        if not isinstance(m, (int, np.integer)) or m <= 0:
            return 1.0, ""
        return float(self.X.shape[0]) * float(m) ** 2, f"{name} m={int(m)}{self.rows_label}"

    def first_criterion_at(self, approx: Approximation, state: Any, gamma: float,
                           alphas: np.ndarray) -> np.ndarray:
        """The first criterion at one γ for every α: one operator built in memory, or
        on Dask input one streamed pass (X stays in its chunks)."""
        crit = self.crits[0]
        cost, where = self._plan_builds(approx, 1)
        keys = self._keys(approx, np.array([float(gamma)]), alphas, "refinement")
        memo = self.checkpoint
        saved = None if keys is None or memo is None else memo.get(keys[0])
        if saved is not None:
            self.bar.update(1, cost, f"{where}: read from the checkpoint",
                            seconds=float(saved["seconds"]))
            return saved["curves"][crit.name]
        clock = time.perf_counter()
        values = self._first_criterion_fresh(approx, state, gamma, alphas, cost, where)
        if keys is not None and memo is not None:
            memo.put(keys[0], {crit.name: values}, time.perf_counter() - clock, {}, None)
            memo.save()
        return values

    def _first_criterion_fresh(self, approx: Approximation, state: Any, gamma: float,
                               alphas: np.ndarray, cost: float, where: str) -> np.ndarray:
        crit = self.crits[0]
        if self.rows is not None:
            built = self._build_all(approx, state, np.array([float(gamma)]))
            if built is not None:
                values = np.empty(len(alphas))

                def evaluate(i: int, op: KernelOperator, name: str) -> None:
                    values[:] = evaluate_criterion(crit, op, self.targets_for[name], alphas,
                                                   **self.params[name])
                evaluate_grid(built, [crit.name], evaluate)
                self.bar.update(1, cost, where)
                return values
        op = approx.build(self.X, self.y_build, float(gamma), kernel=self.kernel, state=state,
                          workers=self.workers)
        self.n_builds += 1
        self.bar.update(1, cost, where)
        return np.asarray(evaluate_criterion(crit, op, self.targets_for[crit.name], alphas,
                                             **self.params[crit.name]), dtype=np.float64)

    def _build_all(self, approx: Approximation, state: Any, gammas: np.ndarray
                   ) -> Sequence[KernelOperator] | None:
        """Operators for the whole γ grid from shared passes over the rows, or None
        (in memory: the recipe builds one γ at a time)."""
        t0 = time.perf_counter()
        if self.rows is None and approx.prefers_per_gamma(*self.X.shape):
            return None
        rows = self.rows if self.rows is not None else ArrayRows(self.X, self.y_build,
                                                                 threads=self.workers)
        built = approx.build_all(rows, self.y_build, gammas, kernel=self.kernel, state=state)
        if built is None and self.rows is not None:
            raise ValueError(
                f"approximation={approx.label!r} does not run on Dask arrays; use 'nystrom' "
                "(uniform landmarks) or 'rff', or pass numpy arrays.")
        if built is not None:
            self.n_builds += len(built)
            for op in built:
                op.build_time = (time.perf_counter() - t0) / len(built)
        return built

    def _run_streaming(self, built: Sequence[Any], alphas: np.ndarray,
                       curves: dict[str, np.ndarray], timings: np.ndarray,
                       op_details: list[dict[str, Any]]) -> None:
        """Every criterion on every operator of a streamed grid; the row passes they
        need are shared (``evaluate_grid``) and their time is spread evenly over γ."""
        by_name = {c.name: c for c in self.crits}
        spent = np.zeros(len(built))

        def evaluate(i: int, op: KernelOperator, name: str) -> None:
            t0 = time.perf_counter()
            try:
                curves[name][i] = evaluate_criterion(by_name[name], op, self.targets_for[name],
                                                     alphas, **self.params[name])
            finally:
                spent[i] += time.perf_counter() - t0

        t0 = time.perf_counter()
        evaluate_grid(built, list(by_name), evaluate)
        shared = (time.perf_counter() - t0 - spent.sum()) / len(built)
        for i, op in enumerate(built):
            timings[i] = op.build_time + shared + spent[i]
            op_details.append(dict(op.details, n_operator=op.n))


def best_index(values: np.ndarray, direction: str) -> tuple[int, ...] | None:
    """(i, j) of the best finite value (first in row-major order on ties), or None."""
    finite = np.isfinite(values)
    if not finite.any():
        return None
    masked = np.where(finite, values, np.inf if direction == "min" else -np.inf)
    flat = np.argmin(masked) if direction == "min" else np.argmax(masked)
    return tuple(int(k) for k in np.unravel_index(flat, values.shape))


class Surface:
    """Criterion values on a (γ, α) grid that can grow at its edges (NaN = not
    evaluated)."""

    def __init__(self, gammas: Any, alphas: Any, curves: dict[str, np.ndarray], timings: Any,
                 ops: Sequence[dict[str, Any]]) -> None:
        self.gammas = np.asarray(gammas, dtype=np.float64)
        self.alphas = np.asarray(alphas, dtype=np.float64)
        self.curves = curves
        self.timings = np.asarray(timings, dtype=np.float64)
        self.ops = list(ops)

    def level(self, approximation: str, n_rows: int | None = None) -> SearchLevel:
        """This surface as a :class:`~kernelselect.SearchLevel` of the result (``n_rows``:
        the subsample it was scored on, None for all rows)."""
        return SearchLevel(approximation, n_landmarks_of(self.ops), self.gammas, self.alphas,
                           self.curves, self.timings, n_rows)

    def add_gammas(self, new: np.ndarray, curves: dict[str, np.ndarray], timings: np.ndarray,
                   ops: Sequence[dict[str, Any]], before: bool) -> None:
        for name in self.curves:
            parts = [curves[name], self.curves[name]] if before else [self.curves[name],
                                                                       curves[name]]
            self.curves[name] = np.concatenate(parts, axis=0)
        self.gammas = np.concatenate([new, self.gammas] if before else [self.gammas, new])
        self.timings = np.concatenate([timings, self.timings] if before
                                      else [self.timings, timings])
        self.ops = (list(ops) + self.ops) if before else (self.ops + list(ops))

    def add_alphas(self, new: np.ndarray, rows: Any, curves: dict[str, np.ndarray],
                   timings: np.ndarray, before: bool) -> None:
        for name in self.curves:
            block = np.full((self.gammas.size, new.size), np.nan)
            block[rows] = curves[name]
            parts = [block, self.curves[name]] if before else [self.curves[name], block]
            self.curves[name] = np.concatenate(parts, axis=1)
        self.alphas = np.concatenate([new, self.alphas] if before else [self.alphas, new])
        self.timings[rows] += timings
