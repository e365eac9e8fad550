"""The svmlight / libsvm reader (written here, numpy only)."""

from __future__ import annotations

import os

import numpy as np

from ._base import MAX_DENSE_BYTES, Dataset, _check_path, _dense_guard, _finish_target, _finite_X


# --------------------------------------------------------------------------- svmlight


def load_svmlight(path: str | os.PathLike[str], *, n_features: int | None = None,
                  zero_based: bool | str = "auto", task: str = "auto",
                  max_dense_bytes: float = MAX_DENSE_BYTES) -> Dataset:
    """Read a file in svmlight / LIBSVM format into a dense :class:`Dataset`.

    Each line is ``<target> [qid:<q>] <index>:<value> ... [# comment]``. Indices are
    1-based (the LIBSVM convention) unless an index 0 occurs, which marks a 0-based file
    such as scikit-learn's ``dump_svmlight_file`` writes by default; ``qid`` fields are
    ignored; empty lines and ``#`` comments are skipped; features not mentioned on a
    line are 0. Every field that is read is a number, so the file's encoding matters
    only in comments: bytes that are not UTF-8 are accepted there, and anywhere else
    they make the line's field unreadable (a ``ValueError`` naming the line).

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
    targets: list[float] = []
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
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
    col_index = np.asarray(cols, dtype=np.int64) - offset
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
    X[np.asarray(rows, dtype=np.int64), col_index] = np.asarray(vals, dtype=np.float64)
    _finite_X(X, path)
    meta = {"source": str(path), "format": "svmlight"}
    y, task, _ = _finish_target(np.asarray(targets), task, meta, source=path)
    return Dataset(X=X, y=y, task=task, name=path.stem, meta=meta)
