"""Row-chunked Dask input of the estimators: checked once, kept lazy.

The machines fit on a Dask X with the Nyström machine by conjugate gradients (one task
per chunk per pass, X never gathered) and predict into a Dask array; these helpers
validate the arrays and build the targets chunk by chunk.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..utils._dask import check_dask_data, check_dask_rows, compute, is_dask_array
from ..utils._labels import codes_for

__all__ = ["is_dask_array", "dask_training_data", "label_columns", "check_dask_features",
           "dask_recipe_error"]


def dask_training_data(X: Any, y: Any) -> tuple[Any, np.ndarray | None, Any]:
    """(X as float64 in one chunk of columns, y gathered (n,) or None for a 2-D y, and
    y as a Dask array of shape (n,) or (n, t) chunked like X's rows).

    y may be a Dask array chunked like X's rows or an in-memory array of n values
    (or n rows); 2-D y (several targets) is only checked for its rows."""
    y_in = y
    if is_dask_array(y_in) and y_in.ndim == 2 and y_in.shape[1] > 1:
        X = check_dask_rows(X)
        if y_in.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y_in.shape[0]} rows but X has {X.shape[0]}; they "
                             "must match.")
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
    """A Dask X for ``predict``: 2-D, real, with the fitted number of features, in one
    chunk of columns (float64)."""
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array (n_samples, n_features), got "
                         f"{X.ndim}-D.")
    if X.dtype.kind not in "fiub":
        raise TypeError(f"X must hold real numbers, got dtype {X.dtype}.")
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and X.shape[1] != expected:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} "
                         f"is expecting {expected} features as input.")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X.astype(np.float64)


def dask_recipe_error(approximation: Any) -> ValueError:
    """Why a recipe without a streamed solver cannot fit on Dask input."""
    return ValueError(
        f"approximation={approximation!r} needs X in memory; a row-chunked Dask X is "
        "fitted by the Nyström machine by conjugate gradients: use approximation='auto' "
        "(the default) or NystroemPCG(...), or pass X.compute().")


def mean_of(y_dask: Any) -> np.ndarray:
    """The column means of a Dask (n, t) array, computed (t,)."""
    return np.asarray(compute(y_dask.mean(axis=0)), dtype=np.float64).reshape(-1)
