"""Shipped real datasets and readers for svmlight, CSV and npz files.

A few small benchmark sets (binary classification and regression) ship inside the
package, in ``kernelselect/data/`` (their provenance and licences are listed in the
README there). Everything loads into a :class:`Dataset`: a dict with attribute access
holding ``X`` (n, d) float64, ``y`` (n,) float64, ``task`` and ``meta``.

Conventions
-----------
* ``task`` is ``"binary"``, ``"regression"`` or ``"multiclass"``. Binary labels are
  always the floats −1/+1 (:func:`to_binary_labels` maps any two distinct values and
  reports the mapping in ``meta["label_map"]``).
* For files, ``task="auto"`` means: exactly two distinct target values → binary,
  anything else → regression. Pass ``task="multiclass"`` to keep integer class codes.
* Features are returned raw. Kernel selection wants them scaled: use
  ``select_kernel(..., standardize=True)`` or scale them yourself.

Only numpy is needed: the svmlight reader is written here, not borrowed.

Layout: :mod:`kernelselect.datasets._base` (the :class:`Dataset` record, label
encoding and the checks every reader shares), one module per file format
(:mod:`~kernelselect.datasets._svmlight`, :mod:`~kernelselect.datasets._csv`,
:mod:`~kernelselect.datasets._npz`) and this module (the shipped sets,
:func:`load_file` and :func:`open_chunked`).
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

if TYPE_CHECKING:
    from importlib.abc import Traversable

from .._dask import from_file
from ._base import (DEFAULT_DATASET, MAX_DENSE_BYTES, TASKS, Dataset, DatasetInfo, _from_arrays,
                    to_binary_labels)
from ._csv import load_csv
from ._npz import load_npz
from ._svmlight import load_svmlight

__all__ = [
    "Dataset",
    "DatasetInfo",
    "DEFAULT_DATASET",
    "list_datasets",
    "load",
    "load_file",
    "open_chunked",
    "load_svmlight",
    "load_csv",
    "load_npz",
    "to_binary_labels",
]


_SVMLIGHT_SUFFIXES = (".svm", ".svmlight", ".libsvm", ".txt", ".dat")


def open_chunked(path: str | os.PathLike[str], *, target: int = -1, chunk_rows: int | None = None
                 ) -> tuple[Any, Any]:
    """Open a ``.npy`` file or a ``.zarr`` array as row-chunked Dask arrays (X, y).

    The file holds the features and the target as one 2-D array; nothing is read yet.

    ``target`` is the column of y (default: the last); the other columns are X. A
    ``.npy`` file is read with plain file reads, ``chunk_rows`` rows at a time (default
    about 64 MB), so X may be larger than memory; a zarr array keeps its own row
    chunks. Pass the result to :func:`kernelselect.select_kernel` (docs/streaming.md).
    Needs dask (``pip install "kernelselect[dask]"``).
    """
    return from_file(path, target=target, chunk_rows=chunk_rows)


def load_file(path: str | os.PathLike[str], *, target: int | str = -1, task: str = "auto",
              **kwargs: Any) -> Dataset:
    """Read a data file, choosing the reader from its extension.

    ``.npz`` → :func:`load_npz`; ``.csv`` / ``.tsv`` → :func:`load_csv` (with
    ``target``); ``.svm``, ``.svmlight``, ``.libsvm``, ``.txt``, ``.dat`` →
    :func:`load_svmlight`. Extra keyword arguments go to the reader.
    """
    path = Path(os.fspath(path))
    suffix = path.suffix.lower()
    if suffix == ".npz":
        return load_npz(path, task=task, **kwargs)
    if suffix in (".csv", ".tsv"):
        return load_csv(path, target=target, task=task, **kwargs)
    if suffix in _SVMLIGHT_SUFFIXES:
        return load_svmlight(path, task=task, **kwargs)
    raise ValueError(
        f"cannot tell the format of {path} from its extension {suffix or '(none)'}; use"
        f" .npz, .csv/.tsv or one of {', '.join(_SVMLIGHT_SUFFIXES)} (svmlight)."
    )


# --------------------------------------------------------------------------- shipped


def _data_dir() -> Traversable:
    """The folder of shipped datasets, as a Traversable (works inside a wheel)."""
    root = resources.files("kernelselect").joinpath("data")
    if root.is_dir():
        return root
    # Editable installs may not expose package data through importlib.resources.
    return Path(__file__).resolve().parents[1] / "data"


def _shipped_names() -> list[str]:
    return sorted(p.name[:-4] for p in _data_dir().iterdir() if p.name.endswith(".npz"))


def list_datasets() -> "list[DatasetInfo]":
    """The shipped datasets.

    Returns
    -------
    list of DatasetInfo
        ``(name, task, n, d)`` named tuples, sorted by name.

    Examples
    --------
    >>> [info.name for info in list_datasets()][:2]
    ['abalone', 'australian']
    """
    root = _data_dir()
    out = []
    for name in _shipped_names():
        meta = json.loads(root.joinpath(f"{name}.json").read_text(encoding="utf-8"))
        out.append(DatasetInfo(name, meta["task"], int(meta["n"]), int(meta["d"])))
    return out


@overload
def load(name: str, *, return_X_y: Literal[False] = ...) -> "Dataset": ...
@overload
def load(name: str, *, return_X_y: Literal[True]) -> "tuple[np.ndarray, np.ndarray]": ...
def load(name: str, *, return_X_y: bool = False) -> "Dataset | tuple[np.ndarray, np.ndarray]":
    """Load a shipped dataset by name.

    Parameters
    ----------
    name : str
        One of the names :func:`list_datasets` returns (case-insensitive; ``-`` may
        stand for ``_``).
    return_X_y : bool, default False
        Return ``(X, y)`` instead of the :class:`Dataset`.

    Returns
    -------
    Dataset or (X, y)
        ``X`` (n, d) float64 raw features, ``y`` (n,) float64 (±1 for binary sets),
        ``task``, ``name``, ``meta`` (the JSON sidecar: source, licence, notes,
        label map) and the official split arrays when the source has them.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the shipped names.

    Examples
    --------
    >>> data = load("heart")
    >>> data.X.shape, data.task
    ((270, 13), 'binary')
    >>> sorted(set(data.y.tolist()))
    [-1.0, 1.0]
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a dataset name (str), got {type(name).__name__}.")
    key = name.strip().lower().replace("-", "_")
    names = _shipped_names()
    if key not in names:
        raise ValueError(
            f"unknown dataset {name!r}; shipped datasets: {', '.join(names)}"
            " (files are read with load_file / load_svmlight / load_csv / load_npz)."
        )
    root = _data_dir()
    meta = json.loads(root.joinpath(f"{key}.json").read_text(encoding="utf-8"))
    with root.joinpath(f"{key}.npz").open("rb") as fh:
        with np.load(fh, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    data = _from_arrays(arrays, meta, name=key, source=key, task=meta["task"])
    if return_X_y:
        return data.X, data.y
    return data
