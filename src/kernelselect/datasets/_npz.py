"""The npz reader: X and y (or the names given) and the official split arrays, each
member sized from the zip directory and its .npy header and checked against the
memory guard before it is decompressed; members it does not use are never read; and
the JSON sidecar, checked to be a small file holding a JSON object."""

from __future__ import annotations

import json
import os
import stat
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..utils._resources import check_allocation
from ._base import (_SPLIT_KEYS, TASKS, Dataset, _check_path, _check_task, _file_kind,
                    _from_arrays)
from ._npy import check_available, read_npy_data, read_npy_header

#: A sidecar holds a few fields of provenance; larger files are refused unread.
SIDECAR_MAX_BYTES = 1 << 24
#: Deepest nesting of objects and lists accepted in a sidecar.
SIDECAR_MAX_DEPTH = 32


# --------------------------------------------------------------------------- members


def read_npz(file: str | Path | IO[bytes], keys: list[str], source: str,
             required: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """The members ``keys`` of an ``.npz`` archive that it holds (``required`` ones
    must be there), read one at a time.

    Before a member is decompressed, the bytes its .npy header declares are compared
    with the uncompressed size the zip directory records, and the array (and its
    float64 copy) is checked against the memory guard; then exactly the declared
    bytes are read. Other members are not touched.
    """
    try:
        with zipfile.ZipFile(file) as zf:
            members = {info.filename[:-4]: info for info in zf.infolist()
                       if info.filename.endswith(".npy")}
            missing = [k for k in required if k not in members]
            if missing:
                raise ValueError(
                    f"{source}: no array named {', '.join(map(repr, missing))}; the file "
                    f"holds {', '.join(sorted(members)) or 'nothing'} (choose with X=... / "
                    "y=...)."
                )
            arrays = {}
            for key in keys:
                if key in members:
                    arrays[key] = _read_member(zf, members[key], source, key)
            return arrays
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{source}: not a readable .npz archive ({exc}).") from None
    except (NotImplementedError, RuntimeError) as exc:  # unknown compression, encryption
        raise ValueError(f"{source}: cannot read the archive ({exc}); write it with "
                         "numpy.savez or numpy.savez_compressed.") from None
    except EOFError as exc:
        raise ValueError(f"{source}: the archive is truncated ({exc}).") from None


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: str, key: str
                 ) -> np.ndarray:
    with zf.open(info) as fh:
        header = read_npy_header(fh, source, key)
        where = f"{source}, array {key!r}"
        check_available(header, info.file_size - header.offset, where)
        copy = header.n_values * 8 if header.dtype != np.float64 else 0
        check_allocation(header.nbytes + copy, f"reading {where} (shape {header.shape}, "
                         f"{header.dtype})")
        return read_npy_data(fh, header, where)


# --------------------------------------------------------------------------- sidecar


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """The JSON sidecar an ``.npz`` file's reader consults: ``<stem>.json`` beside it."""
    return Path(os.fspath(path)).with_suffix(".json")


def _depth(obj: Any) -> int:
    """Nesting depth of JSON values, iteratively (no recursion limit to hit)."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, level)
            if level > SIDECAR_MAX_DEPTH:
                break
            items = value.values() if isinstance(value, dict) else value
            stack.extend((v, level + 1) for v in items)
    return deepest


def read_sidecar(path: Path) -> dict[str, Any]:
    """The sidecar of ``path`` as a dict ({} when there is none), or a ValueError
    naming the sidecar when it is not a small regular file holding a JSON object
    (with a known ``task``, when it has one)."""
    sidecar = sidecar_path(path)
    if not os.path.lexists(sidecar):
        return {}
    fix = f"fix it, or move it away from {path.name}"
    try:
        info = sidecar.stat()
    except OSError as exc:
        raise ValueError(f"{sidecar}: the JSON sidecar of {path.name} cannot be read "
                         f"({exc.strerror or exc}); {fix}.") from None
    kind = _file_kind(info.st_mode)
    if kind is not None:
        raise ValueError(f"{sidecar}: the JSON sidecar of {path.name} is {kind}, not a "
                         f"file; {fix}.")
    if info.st_size > SIDECAR_MAX_BYTES:
        raise ValueError(f"{sidecar}: the JSON sidecar of {path.name} has {info.st_size} "
                         f"bytes, more than the {SIDECAR_MAX_BYTES} a sidecar of metadata may; "
                         f"{fix}.")
    try:
        with open(sidecar, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped since stat
                raise ValueError("not a regular file")
            meta = json.loads(fh.read(SIDECAR_MAX_BYTES + 1).decode("utf-8"))
    except RecursionError:
        raise ValueError(f"{sidecar}: the JSON sidecar of {path.name} is nested too deeply; "
                         f"{fix}.") from None
    except (ValueError, OSError) as exc:
        raise ValueError(f"{sidecar}: invalid JSON sidecar ({exc}); {fix}.") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{sidecar}: a JSON sidecar must hold an object such as "
                         f'{{"task": "binary"}}, found {type(meta).__name__}; {fix}.')
    if _depth(meta) > SIDECAR_MAX_DEPTH:
        raise ValueError(f"{sidecar}: the JSON sidecar of {path.name} nests more than "
                         f"{SIDECAR_MAX_DEPTH} levels; {fix}.")
    task = meta.get("task")
    if task is not None and task not in ("auto",) + TASKS:
        raise ValueError(f"{sidecar}: \"task\": {task!r} is not one of auto, "
                         f"{', '.join(TASKS)}; {fix}.")
    return meta


# --------------------------------------------------------------------------- reader


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

    Raises
    ------
    ValueError
        When the file is not an ``.npz`` archive, lacks ``X`` or ``y``, holds
        non-numeric arrays, a member's header declares more than it holds, a
        member (with its float64 copy) exceeds the memory guard, or the sidecar is
        not a JSON object.

    Notes
    -----
    Only the members named above are read (a large member the reader does not use
    costs nothing), each bounded by the memory guard before it is decompressed.
    """
    path = _check_path(path)
    for name, value in (("X", X), ("y", y)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be the name of an array in the archive (str), "
                            f"got {value!r}.")
    task = _check_task(task)
    with open(path, "rb") as fh:
        magic = fh.read(6)
    if not magic:
        raise ValueError(f"{path}: the file is empty (0 bytes), not an .npz archive.")
    if magic.startswith(b"\x93NUMPY"):
        raise ValueError(f"{path}: a single .npy array, not an .npz archive; save the data "
                         "with numpy.savez(path, X=X, y=y), or name it .npy.")
    if not magic.startswith(b"PK"):
        raise ValueError(f"{path}: not an .npz archive (numpy.savez writes a zip file; this "
                         "one does not start like a zip file).")
    meta = read_sidecar(path)
    arrays = read_npz(path, [X, y, *(k for k in _SPLIT_KEYS if k not in (X, y))], str(path),
                      required=(X, y))
    meta.setdefault("source", str(path))
    meta["format"] = "npz"
    meta["target_array"] = y
    return _from_arrays(arrays, meta, name=path.stem, source=path, task=task,
                        x_key=X, y_key=y)
