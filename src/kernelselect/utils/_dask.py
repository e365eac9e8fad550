"""Kernel selection on Dask arrays: the streaming passes as a Dask graph.

``select_kernel`` hands row-chunked ``dask.array`` input here. The passes of
:mod:`kernelselect.operators.streaming_lowrank` run once per chunk of rows (each
chunk cut into row blocks as in memory) and their statistics are summed by a tree
of ``dask.delayed`` additions, on whatever scheduler is active (a
``distributed.Client`` when the user made one). A task holds its chunk of X and y
and the k×k statistics; X is not gathered: the landmarks and the pairs of the
median heuristic are gathered by index, and y (one float per row) is gathered to
the caller for the probe coefficients of the criteria. The one exception is small
input under ``approximation="auto"`` (:data:`kernelselect._policy.GATHER_BELOW` rows),
which :func:`gather` brings into memory so that it follows the in-memory policy
exactly, exact kernel matrix included.

This module imports dask only when it is used (``_dask()``); ``import kernelselect``
does not, and dask stays an optional dependency (the ``dask`` extra). It imports nothing
from the package but the thread limits, the memory guard and the label encoder, so the
operators' Dask paths use it from below.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
import os
import uuid
import warnings
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ._labels import encode_as
from ._resources import check_allocation
from ._threads import cancel_passes, one_blas_thread, resume_passes

__all__ = ["is_dask_array", "RowSource", "IN_MEMORY", "DaskRows", "check_dask_rows",
           "check_dask_data", "gather", "compute", "compute_pass", "LostSharedValues",
           "lasting", "from_file"]

#: row chunks of about this many bytes when a file is opened (``from_file``)
CHUNK_BYTES = 64 * 2 ** 20
#: statistics added per tree node
SPLIT_EVERY = 8
#: share of distributed's large-graph warning threshold (10 MB unless configured) up to
#: which a lazy graph's constant travels inside the graph (:func:`lasting`): two such
#: constants and the graph's own tasks stay below the warning
EMBED_SHARE = 0.25
#: times a pass is built and computed again after a worker was lost with its shared
#: values (:func:`compute_pass`)
LOST_VALUES_RETRIES = 2
_CLUSTER_FAILURES = {"CommClosedError", "CancelledError", "FutureCancelledError",
                     "StreamClosedError", "TimeoutError"}   # KilledWorker: its own message


def is_dask_array(obj: Any) -> bool:
    """Whether ``obj`` is a ``dask.array.Array`` (without importing dask)."""
    cls = type(obj)
    return cls.__name__ == "Array" and cls.__module__.split(".")[0] == "dask"


@dataclass(frozen=True)
class RowSource:
    """Where checked training rows live, decided once at an entry point's door (the
    one place that asks :func:`is_dask_array`) and carried with the rows from there:
    in memory (``chunks`` None) or a row-chunked Dask array with these row chunks,
    already checked (2-D, real, known chunk sizes, no chunk of zero rows)."""

    chunks: tuple[int, ...] | None = None

    @property
    def lazy(self) -> bool:
        """Whether the rows stay in their Dask chunks (nothing gathered)."""
        return self.chunks is not None

    @classmethod
    def of_dask(cls, X: Any) -> RowSource:
        """The source of a checked row-chunked Dask X."""
        return cls(tuple(int(c) for c in X.chunks[0]))


#: rows held in memory
IN_MEMORY = RowSource()


def _dask() -> tuple[Any, Any]:
    try:
        import dask
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - only without the extra
        raise ImportError('Dask input needs dask: pip install "dask[array]" distributed '
                          '(the [dask] extra of kernelselect)') from exc
    return dask, da


def check_known_chunks(chunks: Sequence[float], name: str) -> None:
    """Refuse chunks of unknown size (NaN), naming ``name`` and the fix."""
    if any(isinstance(c, float) and math.isnan(c) for c in chunks):
        raise ValueError(
            f"{name} has unknown chunk sizes (NaN in {name}.chunks, e.g. after boolean "
            f"indexing); call {name}.compute_chunk_sizes() first.")


def drop_empty_chunks(A: Any) -> Any:
    """``A`` without its chunks of zero rows (the same values; Dask arrays built by
    concatenation or filtering may hold such chunks). Nothing is computed."""
    keep = [i for i, c in enumerate(A.chunks[0]) if c]
    return A if len(keep) == len(A.chunks[0]) else A.blocks[keep]


def check_dask_rows(X: Any, row_chunks: Sequence[int] | None = None) -> Any:
    """Validate a row-chunked Dask X (an in-memory X is wrapped in row chunks:
    ``row_chunks``, or about :data:`CHUNK_BYTES` each): 2-D, real, known chunk sizes,
    at least 3 rows; returned without chunks of zero rows, rechunked to one chunk of
    columns. Nothing is computed."""
    dask, da = _dask()
    if not is_dask_array(X):
        X = np.asarray(X)
        rows = (tuple(row_chunks) if row_chunks is not None and X.ndim == 2
                and sum(row_chunks) == X.shape[0]
                else max(1, CHUNK_BYTES // (8 * max(X.shape[-1] if X.ndim else 1, 1))))
        X = da.from_array(X, chunks=(rows, -1) if X.ndim == 2 else -1)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array (n_samples, n_features), got {X.ndim}-D.")
    check_known_chunks(X.chunks[0], "X")
    check_known_chunks(X.chunks[1], "X")
    if X.dtype.kind not in "fiub":
        raise TypeError(f"X must hold real numbers, got dtype {X.dtype}.")
    if X.shape[0] < 3 or X.shape[1] < 1:
        raise ValueError(f"X must have at least 3 rows and 1 column, got shape {X.shape}.")
    X = drop_empty_chunks(X)
    return X.rechunk({1: -1}) if len(X.chunks[1]) > 1 else X


def check_dask_data(X: Any, y: Any) -> tuple[Any, np.ndarray, Any]:
    """Validate row-chunked Dask input; returns (X, y gathered as numpy, y as Dask).

    X is checked by :func:`check_dask_rows`; y must be a Dask array chunked like
    the rows of X or an in-memory vector of n values (chunks of zero rows aside). An
    in-memory X beside a Dask y is cut into y's chunks. y must be finite.
    """
    _, da = _dask()
    if is_dask_array(y):
        y = y.ravel() if y.ndim == 2 and 1 in y.shape else y
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D of shape (n,), got shape {y.shape}.")
        check_known_chunks(y.chunks[0], "y")
        y = drop_empty_chunks(y)
        X = check_dask_rows(X, row_chunks=y.chunks[0])
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows; "
                             "they must match.")
        if tuple(y.chunks[0]) != tuple(X.chunks[0]):
            raise ValueError(
                f"y's chunks {_brief(y.chunks[0])} do not match the row chunks of X "
                f"{_brief(X.chunks[0])}; chunk them alike, e.g. y = y.rechunk(X.chunks[0]).")
        y_dask = y
    else:
        X = check_dask_rows(X)
        y_local = np.asarray(y)
        if y_local.ndim != 1 or y_local.shape[0] != X.shape[0]:
            raise ValueError(f"y must have shape ({X.shape[0]},) to match X, got "
                             f"{y_local.shape}.")
        y_dask = da.from_array(y_local, chunks=(X.chunks[0],))
    y_local = np.asarray(compute(y_dask))
    check_target_finite(y_local)
    return X, y_local, y_dask


def check_target_finite(y: np.ndarray) -> None:
    """ValueError naming the first row of a gathered target y (n,) or (n, t) holding
    NaN or inf (the in-memory estimators refuse such targets too)."""
    if y.dtype.kind not in "fc":
        return
    bad = ~np.isfinite(y)
    if bad.ndim == 2:
        bad = bad.any(axis=1)
    if bad.any():
        raise ValueError(
            f"y contains NaN or inf (first at row {int(np.argmax(bad))}; {_rows(int(bad.sum()))} "
            "in all); drop those rows or impute their targets.")


def _rows(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


def first_nonfinite_row(A: Any) -> tuple[int, int]:
    """(number of rows of the Dask array ``A`` holding NaN or inf, the first of them or
    -1), by one chunk-wise reduction; nothing is gathered but two integers."""
    _, da = _dask()
    bad = ~da.isfinite(A)
    if A.ndim == 2:
        bad = bad.any(axis=1)
    count, first = compute(bad.sum(), da.argmax(bad))
    return int(count), int(first) if count else -1


def gather(X: Any, why: str) -> np.ndarray:
    """X computed into one numpy array (float64, or float32 as given), after the memory
    guard has accepted its size (``why`` says in its message why X is gathered); a
    ValueError names the first row holding NaN or inf."""
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    check_allocation(float(X.shape[0]) * X.shape[1] * np.dtype(dtype).itemsize,
                     f"X ({X.shape[0]} × {X.shape[1]}) gathered into memory ({why})",
                     "pass approximation='nystrom' to keep X in its chunks")
    out = np.asarray(compute(X.astype(dtype)))
    check_rows_finite(out, range(out.shape[0]))
    return out


def _brief(chunks: Sequence[Any]) -> str:
    chunks = tuple(chunks)
    return str(chunks) if len(chunks) <= 4 else f"({chunks[0]}, {chunks[1]}, …, {chunks[-1]})"


def encoded_target(y_dask: Any, classes: Any, task: str, scale: float = 1.0) -> Any:
    """y as the criteria see it (:func:`kernelselect.utils._labels.encode_as`: ±1 for binary,
    class codes for multiclass, the values divided by the power of two ``scale`` for
    regression, as :func:`kernelselect.utils._targets.rescale_target` does in memory), still a
    Dask array, chunk by chunk with the classes of the whole target."""
    if task == "regression" or classes is None:
        y = y_dask.astype(np.float64)
        return y / scale if scale != 1.0 else y
    return y_dask.map_blocks(encode_as, classes, task, dtype=np.float64)


class LostSharedValues(RuntimeError):
    """A pass failed because a worker was lost while it held the only copy of a value
    the pass shares (:func:`shared`): scattered data has no task the scheduler could
    run again, so the pass's tasks are cancelled ("lost dependencies")."""


#: the reasons distributed gives for cancelling a task whose scattered input was lost:
#: before the graph reached the scheduler, and after (the task was then forgotten with it)
_LOST_INPUT_REASONS = ("lost dependencies", "already forgotten")


def _lost_dependencies(exc: BaseException) -> bool:
    """Whether ``exc`` is distributed's cancellation of tasks whose scattered input was
    lost (one future's ``reason``, or the reasons of a group of them)."""
    reasons = [getattr(exc, "reason", None)]
    reasons += [getattr(g, "reason", None) for g in getattr(exc, "error_groups", ())]
    return any(r in _LOST_INPUT_REASONS for r in reasons)


@contextlib.contextmanager
def cluster_guard() -> Iterator[None]:
    """Turn the errors of a lost cluster or Client into one RuntimeError naming it
    (:class:`LostSharedValues` where a lost worker took a pass's shared values)."""
    resume_passes()
    try:
        yield
    except (KeyboardInterrupt, SystemExit):
        cancel_passes()                     # queued chunk tasks end at their next block
        raise
    except BaseException as exc:
        if _lost_dependencies(exc):
            raise LostSharedValues(
                f"a Dask worker was lost while it held values a pass over X shares "
                f"({type(exc).__name__}: {exc}); no result was produced. Where it "
                "repeats, a worker restarted over its memory limit is the usual cause "
                "(the workers' logs say so): give X smaller row chunks (X.rechunk, or "
                "--chunk-rows) or the workers more memory. Call again: a checkpoint "
                "(checkpoint=PATH) keeps what was finished.") from exc
        if type(exc).__name__ == "KilledWorker":
            raise RuntimeError(
                f"a task of a pass over X ended every worker that ran it ({exc}); no "
                "result was produced. A worker restarted over its memory limit is the "
                "usual cause (the workers' logs say so): give X smaller row chunks "
                "(X.rechunk, or --chunk-rows) or the workers more memory, and call "
                "again.") from exc
        if type(exc).__name__ in _CLUSTER_FAILURES or isinstance(exc, (OSError, EOFError)):
            raise RuntimeError(
                f"the Dask cluster failed during a pass over X ({type(exc).__name__}: "
                f"{exc}); no result was produced. Restart the cluster or Client and call "
                "again.") from exc
        raise


def compute(*things: Any) -> Any:
    """dask.compute on the active scheduler (a lost cluster becomes a RuntimeError)."""
    dask, _ = _dask()
    with cluster_guard():
        out = dask.compute(*things)
    return out[0] if len(things) == 1 else out


_compute = compute          # the name the streamed exact operator uses


def compute_pass(build: Callable[[], Sequence[Any]]) -> Any:
    """``compute(*build())``, where ``build`` makes a pass's graph with its shared values
    (:func:`shared`) afresh each call.

    A worker that is lost (killed, restarted by its nanny) while it holds the only copy
    of a shared value takes that value with it: the scheduler recomputes lost task
    results, but scattered data has no task, so the pass's tasks are cancelled. The
    pass is then built, its values sent again, and computed again, at most
    :data:`LOST_VALUES_RETRIES` more times. A pass is a function of the rows and the
    values alone (tasks in a fixed tree), so the result carries the same bits as an
    undisturbed pass's; a RuntimeWarning says so, beside the scheduler's log of the
    lost data. Any other failure is :func:`cluster_guard`'s."""
    for attempt in range(1, LOST_VALUES_RETRIES + 1):
        try:
            return compute(*build())
        except LostSharedValues:
            warnings.warn(
                "a Dask worker was lost while it held the only copy of values a pass over X "
                f"shares; the pass is sent and computed again ({attempt} of "
                f"{LOST_VALUES_RETRIES}), to the same result", RuntimeWarning, stacklevel=3)
    return compute(*build())          # the last try: a loss again is the caller's error


def _client() -> Any:
    """The ``distributed.Client`` the active scheduler belongs to, or None (the local
    schedulers, or a ``dask.config`` scheduler chosen over a Client)."""
    dask, _ = _dask()
    try:
        scheduler = dask.base.get_scheduler()
    except Exception:  # pragma: no cover - an unusable scheduler setting fails later
        return None
    client = getattr(scheduler, "__self__", None)
    return client if type(client).__name__ == "Client" else None


def shared(value: Any) -> Any:
    """A node of a pass's graph for ``value``, a constant its chunk tasks share (the
    feature map, the landmark factors, the probe basis).

    On a ``distributed`` Client the value is sent to the cluster once, apart from the
    graph (``Client.scatter``), and the graph holds only its key: a graph that
    embedded it would be sent whole each pass (the scheduler warns of "large graph"
    from about 10 MB). The key is new for each value (no ``hash``), so two calls never
    submit one key for different values. On the local schedulers it is a
    ``dask.delayed`` literal under a new name.
    """
    dask, _ = _dask()
    client = _client()
    if client is not None:
        with cluster_guard():
            return client.scatter([value], hash=False)[0]
    return _literal(value)


def _literal(value: Any) -> Any:
    dask, _ = _dask()
    return dask.delayed(value, name=f"kernelselect-shared-{uuid.uuid4().hex}",
                        traverse=False)


def lasting(value: Any, nbytes: float) -> Any:
    """A node for ``value``, a constant of a graph the caller computes later (a lazy
    prediction), ``nbytes`` its size: embedded in the graph up to :data:`EMBED_SHARE`
    of distributed's large-graph warning threshold (2.5 MB of the default 10 MB), so
    that a worker lost before or during that computation costs only a task the
    scheduler runs again; larger values are :func:`shared` (sent once, apart from the
    graph), where a worker lost while it holds the only copy leaves the graph unable
    to finish."""
    dask, _ = _dask()
    try:
        threshold = dask.utils.parse_bytes(
            dask.config.get("distributed.admin.large-graph-warning-threshold"))
    except (KeyError, TypeError, ValueError):    # distributed not installed or no setting
        threshold = 10 * 10**6
    return _literal(value) if nbytes <= EMBED_SHARE * threshold else shared(value)



def check_rows_finite(x: np.ndarray, rows: Sequence[int], where: str = "") -> None:
    """ValueError naming the first row of ``x`` (original index ``rows[i]``) with NaN/inf."""
    bad = ~np.isfinite(x).all(axis=1)
    if bad.any():
        row = int(rows[int(np.flatnonzero(bad)[0])])
        raise ValueError(f"X contains NaN or inf (first at row {row}{where}); drop or "
                         "impute those rows.")


def _chunk_task(payload: tuple[Any, tuple[Any, ...]], fn: Callable[..., Any], x: Any, y: Any,
                start: int) -> Any:
    fmap, args = payload
    x = np.asarray(x, dtype=np.float64)
    check_rows_finite(x, range(start, start + x.shape[0]),
                      f", in the chunk of rows {start}..{start + x.shape[0] - 1}")
    return fn(fmap, x, np.asarray(y, dtype=np.float64), *args)


def _add(*parts: Any) -> Any:
    total = parts[0]
    for p in parts[1:]:
        total = [a + b for a, b in zip(total, p)]
    return total


class DaskRows:
    """Row source over Dask arrays: a pass is one graph (a task per chunk of rows,
    then a tree of additions), computed on the active scheduler."""

    threads = None

    def __init__(self, X: Any, y_dask: Any) -> None:
        self.X = X
        self.y = y_dask
        self.n = X.shape[0]
        self.passes = 0
        self.starts = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int)

    def reduce(self, fn: Callable[..., Any], fmap: Any, *args: Any) -> Any:
        dask, _ = _dask()
        self.passes += 1
        xs = self.X.to_delayed().ravel()
        ys = self.y.to_delayed().ravel()
        task = dask.delayed(_chunk_task, pure=True)
        add = dask.delayed(_add, pure=True)

        def build() -> tuple[Any]:
            payload = shared((fmap, args))
            parts = [task(payload, fn, x, y, int(s)) for x, y, s in zip(xs, ys, self.starts)]
            while len(parts) > 1:
                parts = [add(*parts[i:i + SPLIT_EVERY]) if len(parts[i:i + SPLIT_EVERY]) > 1
                         else parts[i] for i in range(0, len(parts), SPLIT_EVERY)]
            return (parts[0],)

        with one_blas_thread():          # tasks in this process (local schedulers)
            return compute_pass(build)

    def gather(self, idx: Any) -> np.ndarray:
        """Rows ``idx`` of X (a few, e.g. landmarks) as a numpy array."""
        idx = np.asarray(idx)
        order = np.argsort(idx)
        rows = np.asarray(compute(self.X[idx[order]]), dtype=np.float64)
        check_rows_finite(rows, idx[order])
        out = np.empty_like(rows)
        out[order] = rows
        return out


class NpyRows:
    """Rows of a C-ordered ``.npy`` file read by plain file reads (no memory map, so a
    worker's memory holds only the chunks it reads); small to pickle."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        with open(self.path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read(fh)
            self.offset = fh.tell()
        if fortran or len(shape) != 2 or dtype.hasobject:
            raise ValueError(f"{self.path}: expected a 2-D C-ordered numeric array "
                             f"(np.save of a C-contiguous array), got shape {shape}, "
                             f"{'Fortran' if fortran else 'C'} order, dtype {dtype}.")
        self.shape, self.dtype, self.ndim = tuple(shape), dtype, 2

    def __getitem__(self, key: Any) -> np.ndarray:
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        start, stop, step = rows.indices(self.shape[0])
        width = self.shape[1] * self.dtype.itemsize
        with open(self.path, "rb") as fh:
            fh.seek(self.offset + start * width)
            block = np.fromfile(fh, dtype=self.dtype, count=(stop - start) * self.shape[1])
        return block.reshape(stop - start, self.shape[1])[::step, cols]


def from_file(path: str | os.PathLike[str], target: int = -1, chunk_rows: int | None = None
              ) -> tuple[Any, Any]:
    """(X, y) as row-chunked Dask arrays over a ``.npy`` file or a ``.zarr`` array
    holding the features and the target as one 2-D array.

    ``target`` is the column of y (default: the last one); the other columns are X.
    Chunks hold ``chunk_rows`` rows (default: about 64 MB per chunk; a zarr array
    keeps its own row chunks). Nothing is read until a pass runs.
    """
    _, da = _dask()
    path = str(path)
    if path.rstrip("/").lower().endswith(".zarr"):
        A = da.from_zarr(path)
        if chunk_rows is None and A.ndim == 2:
            chunk_rows = A.chunks[0][0]
    else:
        A = NpyRows(path)
    if A.ndim != 2 or A.shape[1] < 2:
        raise ValueError(f"{path}: expected a 2-D array with feature columns and a target "
                         f"column, got shape {A.shape}.")
    d = A.shape[1]
    t = int(target)
    if not -d <= t < d:
        raise ValueError(f"target column {target} is outside the {d} columns of {path}.")
    t %= d
    rows = int(chunk_rows or max(1, CHUNK_BYTES // (8 * d)))
    if not is_dask_array(A):
        A = da.from_array(A, chunks=(rows, -1), asarray=True, fancy=False)
    elif A.chunks[0][0] != rows or len(A.chunks[1]) > 1:
        A = A.rechunk((rows, -1))
    X = A[:, [j for j in range(d) if j != t]] if t != d - 1 else A[:, : d - 1]
    return X, A[:, t]
