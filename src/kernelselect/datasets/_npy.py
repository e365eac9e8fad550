"""The ``.npy`` format: one header reader for ``.npy`` files and the members of
``.npz`` archives (the sizes it declares are checked against the bytes that are there
and against the memory guard before anything is read), and the reader of a 2-D
``.npy`` array of features and a target column."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np

from ..utils._resources import check_allocation, max_bytes
from ._base import Dataset, _check_path, _check_target, _check_task, _finish_target, _finite_X

#: The largest .npy header numpy writes or reads by default.
_MAX_HEADER = 10_000


class NpyHeader(NamedTuple):
    """What a ``.npy`` header declares."""

    shape: tuple[int, ...]
    dtype: np.dtype
    fortran: bool
    offset: int            # bytes from the start of the .npy data to the array
    nbytes: int            # bytes the array occupies

    @property
    def n_values(self) -> int:
        return math.prod(self.shape)


def read_npy_header(fh: IO[bytes], source: str, name: str = "the array") -> NpyHeader:
    """The header of the ``.npy`` data ``fh`` is positioned at, validated: a numeric
    (bool, integer or real) dtype, no Python objects. ``source`` and ``name`` (the
    array's name in an archive) name it in errors."""
    fmt = np.lib.format
    start = fh.tell() if fh.seekable() else 0
    try:
        version = fmt.read_magic(fh)
    except ValueError:
        raise ValueError(f"{source}: {name} is not a .npy array (it does not start with "
                         "numpy's \\x93NUMPY mark); save it with numpy.save.") from None
    try:
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh, max_header_size=_MAX_HEADER)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh, max_header_size=_MAX_HEADER)
        else:
            raise ValueError(f"format version {version} is not read here")
    except (ValueError, SyntaxError, TypeError) as exc:
        raise ValueError(f"{source}: the .npy header of {name} cannot be read ({exc}); the "
                         "file is damaged or not written by numpy.save.") from None
    if dtype.hasobject:
        raise ValueError(f"{source}: {name} is an array of Python objects (dtype {dtype}), "
                         "which is not loaded (unpickling can run code); save numeric arrays.")
    if dtype.kind == "c":
        raise ValueError(f"{source}: {name} holds complex numbers; kernelselect needs real "
                         "data (save .real or abs() of it if that is what you mean).")
    if dtype.kind not in "biuf":
        words = _KIND_WORDS.get(dtype.kind, "not numbers")
        raise ValueError(f"{source}: {name} must hold numbers (bool, integer or float), got "
                         f"dtype {dtype} ({words}); convert it first, e.g. datetimes to "
                         "seconds with a.astype('datetime64[s]').astype(float).")
    offset = (fh.tell() if fh.seekable() else 0) - start
    nbytes = math.prod(shape) * dtype.itemsize
    return NpyHeader(tuple(int(s) for s in shape), dtype, bool(fortran), offset, nbytes)


_KIND_WORDS = {"M": "dates and times", "m": "time spans", "U": "text", "S": "bytes",
               "V": "raw or structured records", "O": "Python objects"}


def check_available(header: NpyHeader, available: int, source: str) -> None:
    """Refuse a header that declares more bytes than the file (or member) holds."""
    if available < header.nbytes:
        raise ValueError(
            f"{source}: the .npy header declares shape {header.shape} of {header.dtype} "
            f"({header.nbytes} bytes), but only {available} bytes follow it: the file is "
            "truncated or its header is wrong."
        )


def read_npy_data(fh: IO[bytes], header: NpyHeader, source: str) -> np.ndarray:
    """The array ``header`` declares, read from ``fh`` (positioned after the header)
    into one buffer of exactly the declared size: a short read is an error, and no
    more is ever read."""
    flat = np.empty(header.n_values, dtype=header.dtype)
    view = flat.data.cast("B")
    got = 0
    while got < header.nbytes:
        chunk = fh.readinto(view[got:got + (1 << 24)])  # type: ignore[attr-defined]
        if not chunk:
            raise ValueError(
                f"{source}: the .npy header declares shape {header.shape} of {header.dtype} "
                f"({header.nbytes} bytes), but the data ends after {got} bytes: the file is "
                "truncated or its header is wrong."
            )
        got += chunk
    if header.fortran:
        return flat.reshape(header.shape[::-1]).T
    return flat.reshape(header.shape)


def check_npy(path: str | os.PathLike[str]) -> NpyHeader:
    """The validated header of a ``.npy`` file holding a 2-D array (features and a
    target column), its declared size checked against the file's."""
    path = _check_path(path)
    with open(path, "rb") as fh:
        header = read_npy_header(fh, str(path))
    check_available(header, path.stat().st_size - header.offset, str(path))
    if len(header.shape) != 2 or header.shape[1] < 2:
        raise ValueError(f"{path}: expected a 2-D array with feature columns and a target "
                         f"column, got shape {header.shape}.")
    return header


def dense_bytes(header: NpyHeader) -> int:
    """Bytes :func:`load_npy` allocates: X and y as float64."""
    return header.n_values * 8


def fits_in_memory(header: NpyHeader) -> bool:
    """Whether :func:`load_npy` would pass the memory guard."""
    return dense_bytes(header) <= max_bytes()


def load_npy(path: str | os.PathLike[str], target: int = -1, *, task: str = "auto") -> Dataset:
    """Read a 2-D ``.npy`` array of feature columns and one target column into memory.

    Parameters
    ----------
    path : str or path-like
        A file written by ``numpy.save`` of an (n, d + 1) numeric array.
    target : int, default -1
        The target column (negative counts from the end); the other columns are X.
    task : {"auto", "binary", "regression", "multiclass"}, default "auto"
        As :func:`load_csv`.

    Returns
    -------
    Dataset
        ``X`` (n, d) float64, ``y``, ``task``, ``name`` (file stem) and ``meta``
        (``target_column``).

    Raises
    ------
    ValueError
        When the header is unreadable or declares more bytes than the file holds,
        the dtype is not numeric, the array is not 2-D, or X and y as float64
        would exceed the memory guard (read such a file with :func:`open_chunked`).

    Notes
    -----
    The file is memory-mapped and the columns copied out as float64, so the peak
    is X and y plus the pages of the file being read. The same data as ``X``/``y``
    in an ``.npz`` archive gives the same :class:`Dataset`.
    """
    header = check_npy(path)
    path = Path(os.fspath(path))
    column = _check_target(target)
    task = _check_task(task)
    if isinstance(column, str):
        raise TypeError(f"target must be a column index (int) for a .npy file, got {column!r}.")
    n, d = header.shape
    if not -d <= column < d:
        raise ValueError(f"target={column} is outside the {d} columns of {path} "
                         f"(indices {-d}…{d - 1}).")
    t = column % d
    check_allocation(dense_bytes(header), f"reading {path} ({n} × {d}) into memory as float64",
                     "read it chunk by chunk with datasets.open_chunked")
    A = np.load(path, mmap_mode="r", allow_pickle=False)
    try:
        return _from_matrix(A, t, task, path, fmt="npy")
    finally:
        del A


def _from_matrix(A: Any, t: int, task: str, source: Path, *, fmt: str) -> Dataset:
    """A Dataset from a 2-D array whose column ``t`` is the target."""
    d = A.shape[1]
    y = np.array(A[:, t])
    X = (np.array(A[:, : d - 1], dtype=np.float64) if t == d - 1
         else np.array(A[:, [j for j in range(d) if j != t]], dtype=np.float64))
    _finite_X(X, source)
    meta: dict[str, Any] = {"source": str(source), "format": fmt, "target_column": t}
    y, task, _ = _finish_target(y, task, meta, source=source)
    return Dataset(X=X, y=y, task=task, name=source.stem if fmt != "zarr" else
                   source.name.rstrip("/").rsplit(".", 1)[0], meta=meta)
