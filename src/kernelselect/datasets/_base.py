"""The :class:`Dataset` record, the label encoding and the checks shared by the
readers of :mod:`kernelselect.datasets`."""

from __future__ import annotations

import os
import stat
from collections import namedtuple
from pathlib import Path
from typing import Any

import numpy as np

from ..utils._labels import encode_labels
from ..utils._targets import detect_task

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

    Attributes
    ----------
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

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value

    def __dir__(self) -> list[str]:
        return list(self.keys()) + list(super().__dir__())

    def __repr__(self) -> str:
        X = self.get("X")
        shape = "?" if X is None else f"{X.shape[0]}×{X.shape[1]}"
        extra = [k for k in _SPLIT_KEYS if k in self]
        split = f", split: {', '.join(extra)}" if extra else ""
        return f"Dataset({self.get('name', '?')!r}, {self.get('task', '?')}, {shape}{split})"


# --------------------------------------------------------------------------- labels


def _label_key(value: Any) -> str:
    """A JSON-friendly key for a label value (1.0 → "1", 2.5 → "2.5")."""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def to_binary_labels(y: Any, *, positive: Any = None) -> tuple[np.ndarray, dict[str, float]]:
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
    enc = encode_labels(y, "y", squeeze="none", exactly=2)
    neg, pos = enc.classes
    labels = enc.signed()
    if positive is not None:
        if positive == neg:
            neg, pos, labels = pos, neg, -labels
        elif positive != pos:
            raise ValueError(
                f"positive={positive!r} is not one of the two label values ({neg!r}, {pos!r})."
            )
    mapping = {neg.item(): -1.0, pos.item(): 1.0}
    return labels, mapping


def _finish_target(y: Any, task: str, meta: dict[str, Any], *, source: str | Path
                   ) -> tuple[np.ndarray, str, dict[str, float] | None]:
    """Validate ``task``, infer it when "auto" (the package's one rule,
    :func:`kernelselect.utils._targets.detect_task`), and encode the labels: ±1 for binary,
    class codes 0…C−1 for text multiclass labels (``meta["classes"]`` keeps the names).

    Returns ``(y, task, mapping)``; ``mapping`` (raw value → ±1) only for binary.
    """
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
        enc = encode_labels(y.astype(str), f"{source}: the target", squeeze="none")
        meta.setdefault("classes", enc.classes.tolist())
        y = enc.codes.astype(np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{source}: the target contains NaN or infinity.")
    if task == "multiclass" and not np.all(y == np.round(y)):
        raise ValueError(f"{source}: multiclass targets must be integer class codes.")
    return y, task, mapping


def _dense_guard(n: int, d: int, max_dense_bytes: float, source: str | Path) -> None:
    size = int(n) * int(d) * 8
    if size > max_dense_bytes:
        raise ValueError(
            f"{source}: a dense float64 array of {n}×{d} needs {size / 2**30:.2f} GiB, more"
            f" than max_dense_bytes={max_dense_bytes}; raise max_dense_bytes or select"
            " fewer rows/features."
        )


def _file_kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    for test, word in ((stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return word
    return None if stat.S_ISREG(mode) else "not a regular file"


def _check_path(path: str | os.PathLike[str], *, allow_dir: bool = False) -> Path:
    """The path of an existing regular file (or folder, with ``allow_dir``).

    FIFOs, devices and sockets are refused before they are opened: opening a FIFO
    without a writer blocks, and a device such as /dev/zero never ends, so neither
    can be sized against the memory guard first.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file name (str or path-like), got "
                        f"{type(path).__name__}.")
    path = Path(os.fspath(path))
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {path}") from None
    except OSError as exc:
        raise OSError(f"cannot read {path}: {exc.strerror or exc}.") from None
    kind = _file_kind(mode)
    if kind == "a folder" and not allow_dir:
        raise IsADirectoryError(f"{path} is a directory, expected a data file.")
    if kind is not None and kind != "a folder":
        raise ValueError(f"{path} is {kind}, not a regular file; kernelselect reads data from "
                         "files only (save the stream to a file first).")
    return path


def _check_task(task: Any) -> str:
    """``task`` as one of "auto" and :data:`TASKS`, or a TypeError/ValueError."""
    if not isinstance(task, str):
        raise TypeError(f"task must be 'auto' or one of {', '.join(TASKS)} (a str), got "
                        f"{type(task).__name__}.")
    if task not in ("auto",) + TASKS:
        raise ValueError(f"task={task!r} is not known; use 'auto' or one of {', '.join(TASKS)}.")
    return task


def _check_flag(value: Any, name: str) -> bool:
    """A True/False argument: Python or numpy bools only (no "no", no 0/1)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r}.")


def _check_target(target: Any) -> int | str:
    """A target column: an int index (negative from the end) or a column name."""
    if isinstance(target, str):
        return target
    if isinstance(target, (int, np.integer)) and not isinstance(target, (bool, np.bool_)):
        return int(target)
    raise TypeError(f"target must be a column index (int) or a column name (str), got "
                    f"{target!r} ({type(target).__name__}).")


def _finite_X(X: np.ndarray, source: str | Path) -> None:
    if not np.all(np.isfinite(X)):
        rows = np.flatnonzero(~np.all(np.isfinite(X), axis=1))
        raise ValueError(
            f"{source}: X contains NaN or infinity (first bad row index {rows[0]});"
            " clean or impute the data first."
        )


def _from_arrays(arrays: Any, meta: dict[str, Any], *, name: str, source: str | Path, task: str,
                 x_key: str = "X", y_key: str = "y") -> Dataset:
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
