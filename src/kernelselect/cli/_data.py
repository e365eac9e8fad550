"""Data for ``kernelselect select``: FILE by its extension, a shipped dataset, or a
.npy/.zarr file read chunk by chunk as Dask arrays (with an optional scheduler)."""

from __future__ import annotations

import argparse
import contextlib
import os
from typing import Any, Iterator

import numpy as np

from .. import _dask
from .. import datasets as _datasets
from .._targets import detect_task
from ._parsing import CommandError


def _load_data(args: argparse.Namespace) -> tuple[Any, str]:
    if args.file and args.dataset:
        raise CommandError("give either FILE or --dataset, not both.")
    if args.file:
        target = args.target
        try:
            target = int(target)
        except ValueError:
            pass
        if not os.path.exists(args.file):
            hint = ""
            if args.file.lower() in {i.name for i in _datasets.list_datasets()}:
                hint = f" (to use the shipped dataset, write --dataset {args.file})"
            raise CommandError(f"no such file: {args.file}{hint}")
        if args.file.lower().rstrip("/").endswith(OUT_OF_CORE):
            return _load_out_of_core(args, target), f"{args.file} (chunked, Dask)"
        if args.chunk_rows is not None or args.scheduler is not None:
            raise CommandError("--chunk-rows and --scheduler apply to .npy/.zarr input only.")
        kwargs = {"target": target} if args.file.lower().endswith((".csv", ".tsv")) else {}
        if args.zero_based is not None:
            if not args.file.lower().endswith(_datasets._SVMLIGHT_SUFFIXES):
                raise CommandError("--zero-based applies to svmlight files only.")
            kwargs["zero_based"] = {"auto": "auto", "yes": True, "no": False}[args.zero_based]
        data = _datasets.load_file(args.file, task=args.task, **kwargs)
        label = f"{args.file}"
    else:
        if args.zero_based is not None:
            raise CommandError("--zero-based applies to svmlight files only, not to --dataset.")
        name = args.dataset or _datasets.DEFAULT_DATASET
        data = _datasets.load(name)
        label = f"{data.name} (shipped)"
    return data, label


OUT_OF_CORE = (".npy", ".zarr")


class _ChunkedData:
    """X and y as Dask arrays over a file, with the task inferred from y."""

    def __init__(self, X: Any, y: Any, task: str, name: str) -> None:
        self.X, self.y, self.task, self.name = X, y, task, name


def _load_out_of_core(args: argparse.Namespace, target: int) -> _ChunkedData:
    """(X, y) over a .npy/.zarr file: nothing but y (one value per row) is read here."""
    if not isinstance(target, int):
        raise CommandError("--target: give a column index for .npy/.zarr input.")
    if args.chunk_rows is not None and args.chunk_rows < 1:
        raise CommandError(f"--chunk-rows must be a positive integer, got {args.chunk_rows}.")
    try:
        X, y = _dask.from_file(args.file, target=target, chunk_rows=args.chunk_rows)
    except ImportError:
        raise CommandError('.npy/.zarr input is read chunk by chunk with Dask: '
                           'pip install "kernelselect[dask]"') from None
    except (OSError, ValueError) as exc:
        raise CommandError(f"{args.file}: {exc}") from None
    values = np.unique(np.asarray(y.compute()))
    if args.task == "binary" and values.size != 2:
        raise CommandError(f"--task binary: the target column has {values.size} distinct values.")
    task = args.task if args.task != "auto" else detect_task(values, "the target column")[0]
    name = os.path.basename(args.file.rstrip("/"))
    return _ChunkedData(X, y, task, name)


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
    except (OSError, TimeoutError) as exc:
        raise CommandError(f"--scheduler: cannot reach {address}: {exc}") from None
    try:
        yield
    finally:
        client.close()
