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
"""

import csv
import io
import json
import os
import zipfile
from collections import namedtuple
from importlib import resources
from pathlib import Path
from typing import Literal, overload

import numpy as np

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

#: The shipped dataset the ``kernelselect select`` command uses when given no data.
DEFAULT_DATASET = "breast_cancer"

TASKS = ("binary", "regression", "multiclass")

#: Dense arrays larger than this are refused unless the caller raises the limit.
MAX_DENSE_BYTES = 2 * 1024**3

DatasetInfo = namedtuple("DatasetInfo", ["name", "task", "n", "d"])
DatasetInfo.__doc__ = "Name, task, number of samples and of features of a shipped dataset."

_SPLIT_KEYS = ("X_train", "y_train", "X_test", "y_test", "test_mask")
_MISSING_TOKENS = frozenset({"", "na", "nan", "?", "null", "none"})


class Dataset(dict):
    """A loaded dataset: a dict whose keys are also attributes.

    Keys
    ----
    X : ndarray of shape (n, d), float64
        Raw features.
    y : ndarray of shape (n,), float64
        Targets; −1/+1 for binary tasks.
    task : str
        ``"binary"``, ``"regression"`` or ``"multiclass"``.
    name : str
        Dataset name (shipped name or file stem).
    meta : dict
        Provenance and notes (for shipped sets, the JSON sidecar).
    X_train, y_train, X_test, y_test : ndarray, optional
        The source's official split, when it has one (for realisation-based
        benchmarks the leading axis indexes the realisation).
    test_mask : ndarray of shape (n, r) bool, optional
        Predefined train/test splits: column j marks the test rows of split j.
    feature_names : list of str, optional
        Column names (CSV files with a header).
    """

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key, value):
        self[key] = value

    def __dir__(self):
        return list(self.keys()) + list(super().__dir__())

    def __repr__(self):
        X = self.get("X")
        shape = "?" if X is None else f"{X.shape[0]}×{X.shape[1]}"
        extra = [k for k in _SPLIT_KEYS if k in self]
        split = f", split: {', '.join(extra)}" if extra else ""
        return f"Dataset({self.get('name', '?')!r}, {self.get('task', '?')}, {shape}{split})"


# --------------------------------------------------------------------------- labels


def _label_key(value):
    """A JSON-friendly key for a label value (1.0 → "1", 2.5 → "2.5")."""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def to_binary_labels(y, *, positive=None):
    """Map a target with exactly two distinct values to the floats −1/+1.

    Parameters
    ----------
    y : array_like of shape (n,)
        Numeric labels (or strings) taking exactly two distinct values.
    positive : scalar, optional
        The value that becomes +1. By default the larger of the two (so 0/1, 1/2 and
        −1/+1 keep their order; for strings the later one in sorted order).

    Returns
    -------
    labels : ndarray of shape (n,), float64
        −1.0 and +1.0.
    mapping : dict
        Original value → ±1 (keys as found in ``y``; numeric keys as Python numbers).

    Raises
    ------
    ValueError
        When ``y`` does not hold exactly two distinct values, or ``positive`` is not one
        of them.

    Examples
    --------
    >>> labels, mapping = to_binary_labels([0, 1, 1, 0])
    >>> labels
    array([-1.,  1.,  1., -1.])
    >>> mapping
    {0: -1.0, 1: 1.0}
    """
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"y must be one-dimensional, got shape {arr.shape}.")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError("y contains NaN or infinity; remove those rows first.")
    values = np.unique(arr)
    if values.size != 2:
        shown = ", ".join(map(str, values[:6])) + (", ..." if values.size > 6 else "")
        raise ValueError(
            f"binary labels need exactly two distinct values, y has {values.size}"
            f" ({shown}); use task='regression' or 'multiclass' instead."
        )
    neg, pos = values
    if positive is not None:
        if positive == neg:
            neg, pos = pos, neg
        elif positive != pos:
            raise ValueError(
                f"positive={positive!r} is not one of the two label values ({neg!r}, {pos!r})."
            )
    labels = np.where(arr == pos, 1.0, -1.0)
    mapping = {neg.item(): -1.0, pos.item(): 1.0}
    return labels, mapping


def _finish_target(y, task, meta, *, source):
    """Validate ``task``, infer it when "auto" (the package's one rule,
    :func:`kernelselect._targets.detect_task`), and encode the labels: ±1 for binary,
    class codes 0…C−1 for text multiclass labels (``meta["classes"]`` keeps the names).

    Returns ``(y, task, mapping)``; ``mapping`` (raw value → ±1) only for binary.
    """
    from ._targets import detect_task

    y = np.asarray(y)
    if task is None or task == "auto":
        task = detect_task(y, f"{source}: the target")[0]
    if task not in TASKS:
        raise ValueError(f"task={task!r} is not known; use 'auto' or one of {', '.join(TASKS)}.")
    mapping = None
    if task == "binary":
        y, mapping = to_binary_labels(y)
        meta.setdefault("label_map", {
            (k if isinstance(k, str) else _label_key(k)): int(v) for k, v in mapping.items()
        })
        return y, task, mapping
    try:
        y = y.astype(np.float64)
    except ValueError:
        if task != "multiclass":
            raise ValueError(
                f"{source}: the target is not numeric; for class names use task='binary' or "
                "'multiclass'."
            ) from None
        classes, codes = np.unique(y.astype(str), return_inverse=True)
        meta.setdefault("classes", classes.tolist())
        y = codes.astype(np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{source}: the target contains NaN or infinity.")
    if task == "multiclass" and not np.all(y == np.round(y)):
        raise ValueError(f"{source}: multiclass targets must be integer class codes.")
    return y, task, mapping


def _dense_guard(n, d, max_dense_bytes, source):
    size = int(n) * int(d) * 8
    if size > max_dense_bytes:
        raise ValueError(
            f"{source}: a dense float64 array of {n}×{d} needs {size / 2**30:.2f} GiB, more"
            f" than max_dense_bytes={max_dense_bytes}; raise max_dense_bytes or select"
            " fewer rows/features."
        )


def _check_path(path):
    path = Path(os.fspath(path))
    if not path.exists():
        raise FileNotFoundError(f"no such file: {path}")
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory, expected a data file.")
    return path


def _finite_X(X, source):
    if not np.all(np.isfinite(X)):
        rows = np.flatnonzero(~np.all(np.isfinite(X), axis=1))
        raise ValueError(
            f"{source}: X contains NaN or infinity (first bad row index {rows[0]});"
            " clean or impute the data first."
        )


# --------------------------------------------------------------------------- svmlight


def load_svmlight(path, *, n_features=None, zero_based="auto", task="auto",
                  max_dense_bytes=MAX_DENSE_BYTES):
    """Read a file in svmlight / LIBSVM format into a dense :class:`Dataset`.

    Each line is ``<target> [qid:<q>] <index>:<value> ... [# comment]``. Indices are
    1-based (the LIBSVM convention) unless an index 0 occurs, which marks a 0-based file
    such as scikit-learn's ``dump_svmlight_file`` writes by default; ``qid`` fields are
    ignored; empty lines and ``#`` comments are skipped; features not mentioned on a
    line are 0.

    Parameters
    ----------
    path : str or path-like
    n_features : int, optional
        Number of columns; by default the largest index found. Larger indices raise.
    zero_based : bool or "auto", default "auto"
        Whether indices start at 0. ``"auto"`` (as scikit-learn's
        ``load_svmlight_file``): zero-based when an index 0 occurs, else 1-based. A
        0-based file whose rows never use feature 0 cannot be told from a 1-based one:
        pass ``zero_based=True`` for it.
    task : {"auto", "binary", "regression", "multiclass"}, default "auto"
        "auto": two distinct targets → binary (mapped to ±1), else regression.
    max_dense_bytes : int, default 2 GiB
        Refuse to build a dense X larger than this.

    Returns
    -------
    Dataset
        ``X`` (n, d) float64, ``y`` (n,), ``task``, ``name`` (file stem) and ``meta``
        (``source``, ``format``, ``label_map`` for binary tasks).

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        On a malformed line (the message gives the line number), an index out of
        range, or a too-large dense array.
    """
    path = _check_path(path)
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based={zero_based!r}; use True, False or 'auto'.")
    targets, rows, cols, vals = [], [], [], []
    min_index, max_index = None, -1
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            tokens = line.split()
            try:
                target = float(tokens[0])
            except ValueError:
                raise ValueError(
                    f"{path}:{lineno}: the target {tokens[0]!r} is not a number."
                ) from None
            row = len(targets)
            targets.append(target)
            for tok in tokens[1:]:
                key, sep, value = tok.partition(":")
                if not sep:
                    raise ValueError(
                        f"{path}:{lineno}: expected <index>:<value>, found {tok!r}."
                    )
                if key == "qid":
                    continue
                try:
                    index = int(key)
                    val = float(value)
                except ValueError:
                    raise ValueError(
                        f"{path}:{lineno}: cannot read {tok!r} as <integer index>:<number>."
                    ) from None
                if index < 0:
                    raise ValueError(f"{path}:{lineno}: negative feature index in {tok!r}.")
                if index == 0 and zero_based is False:
                    raise ValueError(
                        f"{path}:{lineno}: feature index 0 in a 1-based file; pass"
                        " zero_based=True (or 'auto') if the file counts from 0."
                    )
                min_index = index if min_index is None else min(min_index, index)
                max_index = max(max_index, index)
                rows.append(row)
                cols.append(index)
                vals.append(val)
    if not targets:
        raise ValueError(f"{path}: no data lines found.")
    offset = 1
    if zero_based is True or (zero_based == "auto" and min_index == 0):
        offset = 0
    cols = np.asarray(cols, dtype=np.int64) - offset
    d_found = int(max_index - offset + 1) if len(vals) else 0
    if n_features is None:
        d = d_found
    else:
        d = int(n_features)
        if d < d_found:
            raise ValueError(
                f"{path}: the file uses feature index {max_index}, more than"
                f" n_features={n_features} allows."
            )
    n = len(targets)
    _dense_guard(n, d, max_dense_bytes, path)
    X = np.zeros((n, d), dtype=np.float64)
    # Later duplicates of an index on one line overwrite earlier ones.
    X[np.asarray(rows, dtype=np.int64), cols] = np.asarray(vals, dtype=np.float64)
    _finite_X(X, path)
    meta = {"source": str(path), "format": "svmlight"}
    y, task, _ = _finish_target(np.asarray(targets), task, meta, source=path)
    return Dataset(X=X, y=y, task=task, name=path.stem, meta=meta)


# --------------------------------------------------------------------------- CSV


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_csv(path, target=-1, *, delimiter=None, header="auto", task="auto",
             comment="#", max_dense_bytes=MAX_DENSE_BYTES):
    """Read a delimited text file of numbers into a :class:`Dataset`.

    Parameters
    ----------
    path : str or path-like
    target : int or str, default -1
        The target column: an index (negative counts from the end) or, when the file
        has a header, a column name. Every other column is a feature.
    delimiter : str, optional
        Field separator; by default sniffed from the first data line among ``,``
        ``;`` tab and whitespace.
    header : bool or "auto", default "auto"
        Whether the first non-comment line holds column names. "auto": yes when any
        of its fields is not a number.
    task : {"auto", "binary", "regression", "multiclass"}, default "auto"
        "auto": two distinct targets → binary (mapped to ±1), else regression. A
        binary target may be text (e.g. ``yes``/``no``); features must be numbers.
    comment : str, default "#"
        Lines starting with this are skipped.
    max_dense_bytes : int, default 2 GiB

    Returns
    -------
    Dataset
        ``X``, ``y``, ``task``, ``name`` (file stem), ``meta`` and, with a header,
        ``feature_names``.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        On a missing or non-numeric value or a wrong number of fields (the message
        gives the line number), or an unknown target column.
    """
    path = _check_path(path)
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
        raw = [(i, line) for i, line in enumerate(fh, start=1)
               if line.strip() and not (comment and line.lstrip().startswith(comment))]
    if not raw:
        raise ValueError(f"{path}: no data lines found.")
    if delimiter is None:
        first = raw[0][1]
        delimiter = next((c for c in (",", ";", "\t") if c in first), None)
    if delimiter is None:
        split_rows = [(i, line.split()) for i, line in raw]
    else:
        reader = csv.reader(io.StringIO("".join(line for _, line in raw)), delimiter=delimiter)
        split_rows = [(i, [f.strip() for f in fields]) for (i, _), fields in zip(raw, reader)]
    if header == "auto":
        header = not all(_is_number(f) for f in split_rows[0][1])
    names = None
    if header:
        names = split_rows[0][1]
        split_rows = split_rows[1:]
        if not split_rows:
            raise ValueError(f"{path}: only a header line, no data.")
    width = len(names) if names is not None else len(split_rows[0][1])
    if width < 2:
        raise ValueError(
            f"{path}: found one column per line; need features and a target"
            " (is the delimiter right? pass delimiter=...)."
        )
    if isinstance(target, str):
        if names is None:
            raise ValueError(
                f"target={target!r} names a column but {path} has no header; give an index."
            )
        if target not in names:
            raise ValueError(f"target={target!r} is not a column of {path}; columns: {', '.join(names)}.")
        t = names.index(target)
    else:
        t = int(target)
        if not -width <= t < width:
            raise ValueError(f"target={target} is out of range for {width} columns in {path}.")
        t %= width
    n = len(split_rows)
    _dense_guard(n, width - 1, max_dense_bytes, path)
    X = np.empty((n, width - 1), dtype=np.float64)
    y_raw = []
    feature_cols = [j for j in range(width) if j != t]
    for r, (lineno, fields) in enumerate(split_rows):
        if len(fields) != width:
            raise ValueError(
                f"{path}:{lineno}: expected {width} fields, found {len(fields)}."
            )
        for k, j in enumerate(feature_cols):
            text = fields[j]
            try:
                X[r, k] = float(text)
            except ValueError:
                what = "a missing value" if text.lower() in _MISSING_TOKENS else f"{text!r}"
                col = names[j] if names is not None else f"column {j}"
                raise ValueError(
                    f"{path}:{lineno}: {what} in {col}; features must be numbers"
                    " (impute or drop such rows first)."
                ) from None
        y_raw.append(fields[t])
    try:
        y_arr = np.asarray([float(v) for v in y_raw])
    except ValueError:
        y_arr = np.asarray(y_raw)
        if task not in ("auto", "binary"):
            bad = next(i for i, v in enumerate(y_raw) if not _is_number(v))
            raise ValueError(
                f"{path}:{split_rows[bad][0]}: target {y_raw[bad]!r} is not a number."
            ) from None
    _finite_X(X, path)
    meta = {"source": str(path), "format": "csv", "target_column": t}
    y, task, _ = _finish_target(y_arr, task, meta, source=path)
    data = Dataset(X=X, y=y, task=task, name=path.stem, meta=meta)
    if names is not None:
        data["feature_names"] = [names[j] for j in feature_cols]
        meta["target_name"] = names[t]
    return data


# --------------------------------------------------------------------------- npz


def _from_arrays(arrays, meta, *, name, source, task, x_key="X", y_key="y"):
    missing = [k for k in (x_key, y_key) if k not in arrays]
    if missing:
        raise ValueError(
            f"{source}: no array named {', '.join(map(repr, missing))}; the file holds"
            f" {', '.join(sorted(arrays)) or 'nothing'} (choose with X=... / y=...)."
        )
    for key in (x_key, y_key):
        kind = np.asarray(arrays[key]).dtype.kind
        if kind == "c":
            raise ValueError(f"{source}: {key} holds complex numbers; kernelselect needs real "
                             f"data (save {key}.real or abs({key}) if that is what you mean).")
        if key == x_key and kind not in "biuf":
            raise ValueError(f"{source}: {key} must hold numbers, got dtype "
                             f"{arrays[key].dtype}.")
    X = np.asarray(arrays[x_key], dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"{source}: {x_key} must be 2-D (n, d), got shape {X.shape}.")
    y = np.asarray(arrays[y_key])
    if y.ndim > 1 and sum(s != 1 for s in y.shape) > 1:
        raise ValueError(f"{source}: {y_key} must be 1-D of shape (n,) (one target per row), "
                         f"got shape {y.shape}.")
    y = y.ravel()
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"{source}: {x_key} has {X.shape[0]} rows but {y_key} has {y.shape[0]} entries."
        )
    _finite_X(X, source)
    if task == "auto" and meta.get("task") in TASKS:
        task = meta["task"]
    y, task, mapping = _finish_target(y, task, meta, source=source)
    data = Dataset(X=X, y=y, task=task, name=name, meta=meta)
    for key in _SPLIT_KEYS:
        if key not in arrays:
            continue
        value = np.asarray(arrays[key])
        if key.startswith("X_"):
            value = value.astype(np.float64)
        elif key.startswith("y_") and mapping is not None:
            # Map the split's labels with the same rule as y.
            pos = next(k for k, v in mapping.items() if v > 0)
            if not np.isin(value, list(mapping)).all():
                raise ValueError(f"{source}: {key} holds labels that y does not have.")
            value = np.where(value == pos, 1.0, -1.0)
        data[key] = value
    return data


def load_npz(path, *, X="X", y="y", task="auto"):
    """Read a numpy ``.npz`` archive into a :class:`Dataset`.

    Parameters
    ----------
    path : str or path-like
    X, y : str, default "X", "y"
        Names of the feature (n, d) and target (n,) arrays in the archive.
    task : {"auto", "binary", "regression", "multiclass"}, default "auto"
        "auto": the ``task`` of a JSON sidecar (``<stem>.json`` next to the file)
        when there is one, else inferred (two distinct targets → binary).

    Returns
    -------
    Dataset
        Also carries ``X_train``/``y_train``/``X_test``/``y_test`` and ``test_mask``
        when the archive has them, and the sidecar as ``meta``.
    """
    path = _check_path(path)
    with open(path, "rb") as fh:
        magic = fh.read(6)
    if not magic:
        raise ValueError(f"{path}: the file is empty (0 bytes), not an .npz archive.")
    if magic.startswith(b"\x93NUMPY"):
        raise ValueError(f"{path}: a single .npy array, not an .npz archive; save the data "
                         "with numpy.savez(path, X=X, y=y).")
    if not magic.startswith(b"PK"):
        raise ValueError(f"{path}: not an .npz archive (numpy.savez writes a zip file; this "
                         "one does not start like a zip file).")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise ValueError(f"{path}: holds an array of Python objects, which is not loaded "
                             "(unpickling can run code); save numeric arrays X and y.") from None
        raise ValueError(f"{path}: not a readable .npz archive ({exc}).") from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{path}: not a readable .npz archive ({exc}).") from None
    sidecar = path.with_suffix(".json")
    meta = {}
    if sidecar.exists():
        try:
            meta = json.loads(sidecar.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValueError(f"{sidecar}: invalid JSON sidecar ({exc}).") from None
    meta.setdefault("source", str(path))
    meta["format"] = "npz"
    return _from_arrays(arrays, meta, name=path.stem, source=path, task=task,
                        x_key=X, y_key=y)


_SVMLIGHT_SUFFIXES = (".svm", ".svmlight", ".libsvm", ".txt", ".dat")


def open_chunked(path, *, target=-1, chunk_rows=None):
    """(X, y) as row-chunked Dask arrays over a ``.npy`` file or a ``.zarr`` array that
    holds the features and the target as one 2-D array (nothing is read yet).

    ``target`` is the column of y (default: the last); the other columns are X. A
    ``.npy`` file is read with plain file reads, ``chunk_rows`` rows at a time (default
    about 64 MB), so X may be larger than memory; a zarr array keeps its own row
    chunks. Pass the result to :func:`kernelselect.select_kernel` (docs/streaming.md).
    Needs dask (``pip install "kernelselect[dask]"``).
    """
    from ._dask import from_file

    return from_file(path, target=target, chunk_rows=chunk_rows)


def load_file(path, *, target=-1, task="auto", **kwargs):
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


def _data_dir():
    """The folder of shipped datasets, as a Traversable (works inside a wheel)."""
    root = resources.files("kernelselect").joinpath("data")
    if root.is_dir():
        return root
    # Editable installs may not expose package data through importlib.resources.
    return Path(__file__).resolve().parent / "data"


def _shipped_names():
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
