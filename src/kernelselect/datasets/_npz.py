"""The npz reader: X and y (or the names given) and the official split arrays."""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np

from ._base import Dataset, _check_path, _from_arrays


# --------------------------------------------------------------------------- npz


def load_npz(path: str | os.PathLike[str], *, X: str = "X", y: str = "y", task: str = "auto") -> Dataset:
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
