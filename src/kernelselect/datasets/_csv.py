"""The CSV / TSV reader: numeric columns, a header detected or given, a target
column by index or name, missing values refused with the row they are on."""

from __future__ import annotations

import csv
import io
import os

import numpy as np

from ._base import (MAX_DENSE_BYTES, _MISSING_TOKENS, Dataset, _check_path, _dense_guard,
                    _finish_target, _finite_X)


# --------------------------------------------------------------------------- CSV


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_csv(path: str | os.PathLike[str], target: int | str = -1, *, delimiter: str | None = None,
             header: bool | str = "auto", task: str = "auto", comment: str | None = "#",
             max_dense_bytes: float = MAX_DENSE_BYTES) -> Dataset:
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
