"""Data for ``kernelselect select``: FILE by its extension, a shipped dataset, or a
.npy/.zarr array, read into memory when it fits under the memory guard and chunk by
chunk as Dask arrays when it does not (or when --chunk-rows / --scheduler ask for
Dask). Every load says where its target came from and how the file was read."""

from __future__ import annotations

import argparse
import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..utils import _dask
from .. import datasets as _datasets
from ..utils._resources import format_bytes, max_bytes
from ..utils._targets import detect_task
from ..datasets._base import _check_path
from ..datasets._npy import _from_matrix
from ._errors import CommandError

OUT_OF_CORE = (".npy", ".zarr")
CSV = (".csv", ".tsv")


@dataclass
class Loaded:
    """What ``select`` runs on, and the facts the report states about it."""

    X: Any
    y: Any
    task: str
    name: str
    label: str                       # the data line: file name or "<name> (shipped)"
    target: str                      # where the target came from, in words
    target_json: dict[str, Any]
    header: str | None = None        # CSV: whether a header row was read, and why
    header_json: dict[str, Any] | None = None
    read: str | None = None          # .npy/.zarr: read in memory or chunk by chunk with Dask
    read_json: str = "memory"
    feature_names: list[str] | None = None   # CSV with a header: the feature columns' names
    extra: dict[str, Any] = field(default_factory=dict)


def _target_arg(args: argparse.Namespace) -> int | str | None:
    """--target as given: None when absent, an int when it reads as one, else a name."""
    if args.target is None:
        return None
    try:
        return int(args.target)
    except ValueError:
        return args.target


def _refuse_options(args: argparse.Namespace, where: str, *options: str) -> None:
    given = {"--target": args.target is not None, "--header": args.header is not None,
             "--encoding": args.encoding is not None,
             "--chunk-rows": args.chunk_rows is not None,
             "--scheduler": args.scheduler is not None,
             "--zero-based": args.zero_based is not None,
             "--feature-columns": args.feature_columns is not None,
             "--drop": args.drop is not None}
    for option in options:
        if given[option]:
            applies = {"--target": ".csv/.tsv, .npy and .zarr input (a column)",
                       "--header": ".csv/.tsv input only",
                       "--encoding": ".csv/.tsv input only",
                       "--chunk-rows": ".npy/.zarr input only",
                       "--scheduler": ".npy/.zarr input only",
                       "--zero-based": "svmlight files only",
                       "--feature-columns": ".csv/.tsv input only",
                       "--drop": ".csv/.tsv input only"}[option]
            raise CommandError(f"{option} applies to {applies}, not to {where}.")


def _check_options(args: argparse.Namespace) -> None:
    """Refuse, before anything is read or connected to, the data options that do not
    apply to the input's format."""
    if args.file and args.dataset:
        raise CommandError("give either FILE or --dataset, not both.")
    if not args.file:
        name = args.dataset or _datasets.DEFAULT_DATASET
        _refuse_options(args, f"the shipped dataset {name} (its target is the array 'y')",
                        "--target", "--header", "--encoding", "--chunk-rows", "--scheduler",
                        "--zero-based", "--feature-columns", "--drop")
        return
    suffix = Path(args.file.rstrip("/")).suffix.lower()
    if suffix in OUT_OF_CORE:
        _refuse_options(args, f"{suffix} input", "--header", "--encoding", "--zero-based",
                        "--feature-columns", "--drop")
        return
    _refuse_options(args, f"{suffix or 'this'} files", "--chunk-rows", "--scheduler")
    if suffix in CSV:
        _refuse_options(args, "CSV files", "--zero-based")
    elif suffix == ".npz":
        _refuse_options(args, "an .npz archive (its target is the array 'y')", "--target",
                        "--header", "--encoding", "--zero-based", "--feature-columns", "--drop")
    elif suffix in _datasets._SVMLIGHT_SUFFIXES:
        _refuse_options(args, "svmlight files (each line starts with its target)", "--target",
                        "--header", "--encoding", "--feature-columns", "--drop")


def _load_data(args: argparse.Namespace) -> Loaded:
    _check_options(args)
    if not args.file:
        data = _datasets.load(args.dataset or _datasets.DEFAULT_DATASET)
        return Loaded(data.X, data.y, data.task, data.name, f"{data.name} (shipped)",
                      "the array 'y' of the shipped set",
                      {"array": "y", "from": "the shipped set"})
    path = args.file
    if not os.path.lexists(path):
        hint = ""
        if path.lower() in {i.name for i in _datasets.list_datasets()}:
            hint = f" (to use the shipped dataset, write --dataset {path})"
        raise CommandError(f"no such file: {path}{hint}")
    suffix = Path(path.rstrip("/")).suffix.lower()
    _check_path(path, allow_dir=suffix == ".zarr")
    if suffix in OUT_OF_CORE:
        return _load_array_file(args, suffix)
    if suffix in CSV:
        return _load_csv(args)
    if suffix == ".npz":
        data = _datasets.load_npz(path, task=args.task)
        return Loaded(data.X, data.y, data.task, data.name, path,
                      "the archive's array 'y'", {"array": "y", "from": "the archive"})
    if suffix in _datasets._SVMLIGHT_SUFFIXES:
        kwargs: dict[str, Any] = {}
        if args.zero_based is not None:
            kwargs["zero_based"] = {"auto": "auto", "yes": True, "no": False}[args.zero_based]
        data = _datasets.load_svmlight(path, task=args.task, **kwargs)
        return Loaded(data.X, data.y, data.task, data.name, path,
                      "the first field of each line (svmlight)",
                      {"field": 0, "from": "svmlight: the first field of each line"})
    raise CommandError(
        f"cannot tell the format of {path} from its extension {suffix or '(none)'}; use .csv/"
        f".tsv, .npz, .npy, .zarr or one of {', '.join(_datasets._SVMLIGHT_SUFFIXES)} "
        "(svmlight)."
    )


def _column_words(t: int, width: int, name: str | None, given: bool, option: Any) -> str:
    label = f"column {t}" + (f" {name!r}" if name is not None else "")
    if given:
        return f"{label} of {width} (--target {option})"
    return f"{label} of {width} (the last: the default, --target -1)"


def _column_list(text: str | None, option: str) -> list[int | str] | None:
    """COL[,COL...] of --feature-columns / --drop: an index where an item reads as an
    integer, else a header name."""
    if text is None:
        return None
    items: list[int | str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            items.append(int(part))
        except ValueError:
            items.append(part)
    if not items:
        raise CommandError(f"{option}: give at least one column (an index or a header name).")
    return items


def _load_csv(args: argparse.Namespace) -> Loaded:
    target = _target_arg(args)
    header = "auto" if args.header is None else args.header
    features = _column_list(args.feature_columns, "--feature-columns")
    drop = _column_list(args.drop, "--drop")
    if features is not None and drop is not None:
        raise CommandError("give either --feature-columns or --drop, not both.")
    try:
        data = _datasets.load_csv(args.file, target=-1 if target is None else target,
                                  header=header, task=args.task,
                                  encoding=args.encoding or "utf-8", features=features,
                                  drop=drop)
    except ValueError as exc:            # the library's argument names, as options
        message = str(exc)
        for word, option in (("features: ", "--feature-columns: "), ("drop: ", "--drop: ")):
            if message.startswith(word):
                message = option + message[len(word):]
        raise CommandError(message) from None
    meta = data.meta
    t, name = meta["target_column"], meta.get("target_name")
    width = meta["n_columns"]
    words = _column_words(t, width, name, target is not None, args.target)
    used = bool(meta["header"])
    header_words = (("the first row, read as column names" if used else "none")
                    + f" ({meta['header_rule']}); {meta['encoding']}, delimiter "
                    + ("whitespace" if meta["delimiter"] == "whitespace"
                       else repr(meta["delimiter"])))
    extra: dict[str, Any] = {}
    if features is not None or drop is not None:
        cols = meta["feature_columns"]
        shown = ", ".join(data.feature_names) if data.get("feature_names") else \
            ", ".join(f"column {j}" for j in cols)
        how = (f"--feature-columns {args.feature_columns}" if features is not None
               else f"--drop {args.drop}")
        extra = {"feature_columns": cols,
                 "features_words": f"{len(cols)} of {width - 1} columns: {shown} ({how})"}
    return Loaded(
        data.X, data.y, data.task, data.name, args.file, words,
        {"column": t, "name": name, "from": "--target" if target is not None else "default (the last column)"},
        header=header_words, feature_names=data.get("feature_names"), extra=extra,
        header_json={"used": used, "rule": meta["header_rule"], "encoding": meta["encoding"],
                     "delimiter": meta["delimiter"]},
    )


def _load_array_file(args: argparse.Namespace, suffix: str) -> Loaded:
    """A .npy/.zarr array: in memory when X and y fit under the memory guard and no
    Dask option is given; else chunk by chunk with Dask."""
    target = _target_arg(args)
    if isinstance(target, str):
        raise CommandError(f"--target: give a column index for {suffix} input "
                           f"(the array has no column names), got {target!r}.")
    t = -1 if target is None else target
    if args.chunk_rows is not None and args.chunk_rows < 1:
        raise CommandError(f"--chunk-rows must be a positive integer, got {args.chunk_rows}.")
    path = args.file
    if suffix == ".npy":
        header = _datasets.check_npy(path)
        shape, itemsize = header.shape, header.dtype.itemsize
        A = None
    else:
        A = _zarr_array(path)
        shape, itemsize = A.shape, A.dtype.itemsize
    n, width = shape
    if not -width <= t < width:
        raise CommandError(f"--target {t} is outside the {width} columns of {path} "
                           f"(indices {-width}…{width - 1}).")
    t %= width
    need = n * width * 8 + (n * width * itemsize if suffix == ".zarr" else 0)
    limit = max_bytes()
    asked = args.chunk_rows is not None or args.scheduler is not None
    words = _column_words(t, width, None, target is not None, args.target)
    target_json = {"column": t, "name": None,
                   "from": "--target" if target is not None else "default (the last column)"}
    if need <= limit and not asked:
        if A is None:
            data = _datasets.load_npy(path, target=t, task=args.task)
        else:
            data = _from_matrix(np.asarray(A.compute()), t, args.task, Path(path.rstrip("/")),
                                fmt="zarr")
        return Loaded(data.X, data.y, data.task, data.name, path, words, target_json,
                      read=f"in memory ({format_bytes(need)}, within the memory limit of "
                           f"{format_bytes(limit)})", read_json="memory")
    why = ("--chunk-rows/--scheduler given" if asked else
           f"{format_bytes(need)} in memory would exceed the limit of {format_bytes(limit)}")
    X, y = _open_chunked(path, t, args.chunk_rows)
    values = np.unique(np.asarray(y.compute()))
    if args.task == "binary" and values.size != 2:
        raise CommandError(f"--task binary: the target column has {values.size} distinct values.")
    task = args.task if args.task != "auto" else detect_task(values, "the target column")[0]
    name = os.path.basename(path.rstrip("/"))
    return Loaded(X, y, task, name, f"{path} (chunked, Dask)", words, target_json,
                  read=f"chunk by chunk with Dask ({why})", read_json="dask")


def _zarr_array(path: str) -> Any:
    """The 2-D numeric array of a .zarr store, as a lazy Dask array."""
    try:
        _, da = _dask._dask()
        A = da.from_zarr(path)
    except ImportError:
        raise CommandError('.zarr input needs dask and zarr: pip install "kernelselect[dask]" '
                           "zarr") from None
    except Exception as exc:  # zarr's errors vary with its version
        raise CommandError(f"{path}: not a readable zarr array ({type(exc).__name__}: "
                           f"{exc}).") from None
    if A.ndim != 2 or A.shape[1] < 2:
        raise CommandError(f"{path}: expected a 2-D array with feature columns and a target "
                           f"column, got shape {A.shape}.")
    if A.dtype.kind not in "biuf":
        raise CommandError(f"{path}: holds dtype {A.dtype}; features and targets must be "
                           "numbers (bool, integer or float).")
    return A


def _open_chunked(path: str, target: int, chunk_rows: int | None) -> tuple[Any, Any]:
    try:
        return _datasets.open_chunked(path, target=target, chunk_rows=chunk_rows)
    except ImportError:
        raise CommandError('.npy/.zarr input larger than memory is read chunk by chunk with '
                           'Dask: pip install "kernelselect[dask]"') from None


@contextlib.contextmanager
def _scheduler(address: str | None) -> Iterator[None]:
    """A distributed Client for the duration of the call when --scheduler is given."""
    if address is None:
        yield
        return
    try:
        import distributed
    except ImportError:
        raise CommandError('--scheduler needs distributed: pip install "kernelselect[dask]"') \
            from None
    try:
        client = distributed.Client(address, timeout="20s")
    except Exception as exc:  # a bad address is a ValueError, an unreachable one OSError
        raise CommandError(
            f"--scheduler: cannot connect to {address!r} ({type(exc).__name__}: {exc}); give "
            "the address of a running Dask scheduler, e.g. tcp://127.0.0.1:8786."
        ) from None
    try:
        yield
    finally:
        client.close()
