"""Shipped real datasets and readers for svmlight, CSV, npy and npz files.

A few small benchmark sets (binary classification and regression) ship inside the
package, in ``kernelselect/data/`` (their provenance and licences are listed in the
README there). Everything loads into a :class:`Dataset`: a dict with attribute access
holding ``X`` (n, d) float64, ``y`` (n,) float64, ``task`` and ``meta``.

Conventions
-----------
* ``task`` is ``"binary"``, ``"regression"`` or ``"multiclass"``. Binary labels are
  always the floats −1/+1 (:func:`to_binary_labels` maps any two distinct values and
  reports the mapping in ``meta["label_map"]``).
* For files, ``task="auto"`` follows the package's one rule
  (:func:`kernelselect.utils._targets.detect_task`): two distinct values → binary; text
  labels, or whole-number codes 0…C−1 / 1…C → multiclass; other numbers →
  regression. ``task=`` overrides it.
* Readers never guess silently: text is decoded strictly in a stated encoding, the
  target column and whether a header row was read are recorded in ``meta``, and
  FIFOs, devices and sockets are refused before they are opened.
* Features are returned raw. Kernel selection wants them scaled: use
  ``select_kernel(..., standardize=True)`` or scale them yourself.

Only numpy is needed: the svmlight reader is written here, not borrowed.

Layout: :mod:`kernelselect.datasets._base` (the :class:`Dataset` record, label
encoding and the checks every reader shares), one module per file format
(:mod:`~kernelselect.datasets._svmlight`, :mod:`~kernelselect.datasets._csv`,
:mod:`~kernelselect.datasets._npy`, :mod:`~kernelselect.datasets._npz`) and this module
(the shipped sets, :func:`load_file` and :func:`open_chunked`).
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

from ..utils._dask import from_file
from ._base import (_SPLIT_KEYS, DEFAULT_DATASET, MAX_DENSE_BYTES, TASKS, Dataset, DatasetInfo,
                    _check_flag, _check_path, _check_target, _from_arrays, to_binary_labels)
from ._csv import load_csv
from ._npy import check_npy, load_npy
from ._npz import load_npz, read_npz, sidecar_path
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
    "load_npy",
    "to_binary_labels",
]


_SVMLIGHT_SUFFIXES = (".svm", ".svmlight", ".libsvm", ".txt", ".dat")


_CHUNKED_SUFFIXES = (".npy", ".zarr")


def open_chunked(path: str | os.PathLike[str], *, target: int = -1, chunk_rows: int | None = None
                 ) -> tuple[Any, Any]:
    """Open a ``.npy`` file or a ``.zarr`` array as row-chunked Dask arrays (X, y).

    The file holds the features and the target as one 2-D array; nothing is read yet.

    ``target`` is the column of y (default: the last); the other columns are X. A
    ``.npy`` file is read with plain file reads, ``chunk_rows`` rows at a time (default
    about 64 MB), so X may be larger than memory; a zarr array keeps its own row
    chunks. Pass the result to :func:`kernelselect.select_kernel` (docs/streaming.md).
    Needs dask (``pip install "kernelselect[dask]"``). A ``.npy`` file that fits in
    memory can also be read whole with :func:`load_npy`.
    """
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    if name is None:
        raise TypeError(f"path must be a file name (str or path-like), got {type(path).__name__}.")
    column = _check_target(target)
    if isinstance(column, str):
        raise TypeError(f"target must be a column index (int), got {column!r}.")
    if chunk_rows is not None and (isinstance(chunk_rows, bool) or
                                   not isinstance(chunk_rows, (int, np.integer))
                                   or chunk_rows < 1):
        raise ValueError(f"chunk_rows must be a positive int or None, got {chunk_rows!r}.")
    suffix = Path(str(name).rstrip("/")).suffix.lower()
    if suffix not in _CHUNKED_SUFFIXES:
        raise ValueError(
            f"{name}: open_chunked reads .npy files and .zarr arrays, not "
            f"{suffix or 'a file without an extension'}; read it with load_file, or convert "
            "it with numpy.save."
        )
    if suffix == ".npy":
        check_npy(name)      # the header and the file's size, before any reading
    else:
        _check_path(name, allow_dir=True)
    return from_file(name, target=column, chunk_rows=chunk_rows)


def _paths_read(path: str | os.PathLike[str]) -> list[Path]:
    """Every file or folder that reading ``path`` with :func:`load_file` or
    :func:`open_chunked` may open: the file itself, the JSON sidecar of an ``.npz``,
    the whole of a ``.zarr`` store (a folder). A writer that must never clobber its
    input refuses these and everything under them."""
    path = Path(os.fspath(path))
    out = [path]
    if path.suffix.lower() == ".npz":
        out.append(sidecar_path(path))
    return out


def _shipped_paths() -> list[Path]:
    """The folder of shipped datasets (every file in it is read-only data)."""
    out: list[Path] = []
    for candidate in (str(_data_dir()), str(Path(__file__).resolve().parents[1] / "data")):
        if os.path.isdir(candidate) and Path(candidate) not in out:
            out.append(Path(candidate))
    return out


def load_file(path: str | os.PathLike[str], *, target: int | str = -1, task: str = "auto",
              **kwargs: Any) -> Dataset:
    """Read a data file, choosing the reader from its extension.

    ``.npz`` → :func:`load_npz`; ``.csv`` / ``.tsv`` → :func:`load_csv` (with
    ``target``); ``.npy`` → :func:`load_npy` (with ``target``); ``.svm``,
    ``.svmlight``, ``.libsvm``, ``.txt``, ``.dat`` → :func:`load_svmlight`. Extra
    keyword arguments go to the reader. ``target`` applies to the column formats
    (CSV, .npy) only: an ``.npz`` names its target array (``y=``), an svmlight line
    starts with its target.
    """
    path = Path(os.fspath(path))
    suffix = path.suffix.lower()
    target = _check_target(target)
    if suffix in (".csv", ".tsv"):
        return load_csv(path, target=target, task=task, **kwargs)
    if suffix == ".npy":
        return load_npy(path, target=target, task=task, **kwargs)  # type: ignore[arg-type]
    if target != -1:
        raise ValueError(
            f"target={target!r} applies to .csv/.tsv and .npy columns; {path.name} is "
            + ("an .npz archive whose target is the array named by y=... (default 'y')."
               if suffix == ".npz" else "an svmlight file, whose lines start with the target.")
        )
    if suffix == ".npz":
        return load_npz(path, task=task, **kwargs)
    if suffix in _SVMLIGHT_SUFFIXES:
        return load_svmlight(path, task=task, **kwargs)
    raise ValueError(
        f"cannot tell the format of {path} from its extension {suffix or '(none)'}; use"
        f" .npz, .npy, .csv/.tsv or one of {', '.join(_SVMLIGHT_SUFFIXES)} (svmlight); a"
        " .zarr array (or an .npy larger than memory) is read chunk by chunk with"
        " open_chunked."
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
    return_X_y = _check_flag(return_X_y, "return_X_y")
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
        arrays = read_npz(fh, ["X", "y", *_SPLIT_KEYS], f"shipped dataset {key}",
                          required=("X", "y"))
    data = _from_arrays(arrays, meta, name=key, source=key, task=meta["task"])
    if return_X_y:
        return data.X, data.y
    return data
