"""Row-chunked Dask input of the estimators: checked once, kept lazy.

The machines fit on a Dask X with the Nyström machine by conjugate gradients (one task
per chunk per pass, X never gathered) and predict into a Dask array; these helpers
validate the arrays and build the targets chunk by chunk.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..utils._dask import (check_dask_data, check_dask_rows, check_known_chunks,
                           check_rows_finite, compute,
                           drop_empty_chunks, first_nonfinite_row, is_dask_array)
from ..utils._labels import codes_for

__all__ = ["is_dask_array", "dask_training_data", "label_columns", "check_dask_features",
           "dask_recipe_error"]


def dask_training_data(X: Any, y: Any) -> tuple[Any, np.ndarray | None, Any]:
    """(X as float64 in one chunk of columns, y gathered (n,) or None for a 2-D y, and
    y as a Dask array of shape (n,) or (n, t) chunked like X's rows).

    y may be a Dask array chunked like X's rows or an in-memory array of n values
    (or n rows); 2-D y (several targets) is checked for its rows and, by one chunk-wise
    reduction, for NaN and inf. Chunks of zero rows are dropped."""
    y_in = y
    if is_dask_array(y_in) and y_in.ndim == 2 and y_in.shape[1] > 1:
        y_in = drop_empty_chunks(y_in)
        X = check_dask_rows(X, row_chunks=y_in.chunks[0])
        if y_in.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y_in.shape[0]} rows but X has {X.shape[0]}; they "
                             "must match.")
        if y_in.dtype.kind in "fc":
            count, first = first_nonfinite_row(y_in)
            if count:
                raise ValueError(
                    f"y contains NaN or inf (first at row {first}; {count} row(s) in all); "
                    "drop those rows or impute their targets.")
        return X.astype(np.float64), None, y_in.astype(np.float64).rechunk(
            {0: X.chunks[0], 1: -1})
    X, y_local, y_dask = check_dask_data(X, y)
    return X.astype(np.float64), y_local, y_dask


def _columns_block(labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    codes = codes_for(labels, classes)
    if classes.size == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    out = np.full((codes.size, classes.size), -1.0)
    out[np.arange(codes.size), codes] = 1.0
    return out


def label_columns(y_dask: Any, classes: np.ndarray) -> Any:
    """The machine's ±1 targets of the labels y_dask (one column for two classes, the
    one-vs-rest columns for more), chunk by chunk, as ``LabelCodes.columns``."""
    t = 1 if classes.size == 2 else int(classes.size)
    return y_dask.map_blocks(_columns_block, classes, dtype=np.float64, new_axis=1,
                             chunks=(y_dask.chunks[0], (t,)))


def check_dask_features(estimator: Any, X: Any) -> Any:
    """A Dask X for ``predict``: 2-D, real, with chunks of known size and the fitted
    number of features, in one chunk of columns (float64), without chunks of zero rows;
    a chunk holding NaN or inf raises when it is computed."""
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array (n_samples, n_features), got "
                         f"{X.ndim}-D.")
    check_known_chunks(X.chunks[0], "X")
    if X.dtype.kind not in "fiub":
        raise TypeError(f"X must hold real numbers, got dtype {X.dtype}.")
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and X.shape[1] != expected:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} "
                         f"is expecting {expected} features as input.")
    X = drop_empty_chunks(X)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X.astype(np.float64).map_blocks(_finite_rows, dtype=np.float64)


def _finite_rows(block: np.ndarray, block_info: Any = None) -> np.ndarray:
    """A chunk of X to predict on, refused (ValueError naming the row) when a row
    holds NaN or inf: checked as each chunk is computed, X is never gathered."""
    start = block_info[0]["array-location"][0][0] if block_info else 0
    check_rows_finite(block, range(start, start + block.shape[0]),
                      f", in the chunk of rows {start}..{start + block.shape[0] - 1}")
    return block


def dask_recipe_error(approximation: Any) -> ValueError:
    """Why a recipe without a streamed solver cannot fit on Dask input."""
    return ValueError(
        f"approximation={approximation!r} needs X in memory; a row-chunked Dask X is "
        "fitted by the Nyström machine by conjugate gradients: use approximation='auto' "
        "(the default) or NystroemPCG(...), or pass X.compute().")


def mean_of(y_dask: Any) -> np.ndarray:
    """The column means of a Dask (n, t) array, computed (t,)."""
    return np.asarray(compute(y_dask.mean(axis=0)), dtype=np.float64).reshape(-1)
