"""The ``kernelselect`` command.

Sub-commands
------------
``kernelselect select [FILE] [options]``
    Evaluate selection criteria over a grid of kernel widths γ (and ridges α), print
    the table of candidates, mark the selected kernel and report the time taken.
    FILE is read according to its extension (``.npz``; ``.csv``/``.tsv``;
    ``.svm``/``.svmlight``/``.libsvm``/``.txt``/``.dat`` as svmlight; ``.npy`` and
    ``.zarr`` arrays into memory when they fit under the memory limit, else chunk by
    chunk with Dask). The report names the target column and where it came from,
    for a CSV whether a header row was read (and why) and its encoding, and for
    ``.npy``/``.zarr`` how the data were read. Without FILE the command runs on
    ``--dataset NAME`` or, when that is absent too, on the shipped ``breast_cancer``
    set (683 × 9, binary).
``kernelselect predict [FILE] (--proba | --interval COVERAGE) [options]``
    Select and fit on the training rows, then write calibrated class probabilities
    or prediction intervals for the held-out rows (see ``kernelselect predict -h``).
``kernelselect datasets``
    List the shipped datasets.
``kernelselect config``
    Print how the package was built (OpenMP, FFT backend, BLAS).

``kernelselect --version`` prints the version; ``kernelselect`` alone prints the help
and exits 0. ``python -m kernelselect`` is the same command. Errors print one line on
stderr and exit with status 2.

Outputs of ``select`` (``--json``, ``--plot``) are checked before anything is
computed: the folder must exist and be writable, the name must fit the file
system, the file must not be a folder or a device, must not be anything the run
reads (the data file, an .npz's sidecar, anything inside a .zarr store or the
shipped datasets' folder, by path or by inode), must not be given twice, the plot's
extension must be a format matplotlib writes, and an existing file is replaced only
with ``--force``. They are written only when the selection is finite, each atomically
(a temporary file in the same folder, then renamed), so a failure leaves nothing
half-written. ``--json -`` writes the JSON to standard output; the human-readable
report then goes to standard error. Every file name printed has its control
characters escaped.

Layout: :mod:`kernelselect.cli._parsing` (the argument parser, the grid syntax and
the user-error type), :mod:`kernelselect.cli._data` (reading FILE, a shipped dataset
or a chunked .npy/.zarr file), :mod:`kernelselect.cli._output` (the table, the JSON
record, the plot and the checked, atomic writing of outputs) and this module (the
sub-commands and :func:`main`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from types import ModuleType
from typing import Any, Sequence

import numpy as np

import kernelselect

from .. import datasets as _datasets
from ..utils._threads import check_workers, exit_if_abandoned
from ._data import Loaded, _check_options, _load_data, _scheduler
from ._output import (SafeText, _check_outputs, _data_name, _details_line, _direction_word,
                      _finite, _jsonable, _policy_lines, _render_plot, _render_relevances,
                      _safe, _write_atomic, format_table, relevance_path)
from ._predict import cmd_predict
from ._errors import CommandError
from ._parsing import (APPROXIMATIONS, KERNELS, PROGRESS_DELAY, QUIET_PROGRESS_DELAY,
                       _float_list, build_parser, parse_gamma_grid)

__all__ = ["main", "build_parser", "parse_gamma_grid", "format_table"]


def _select(kernelselect: ModuleType, data: Any, args: argparse.Namespace, gammas: Any,
            alphas: Any, criteria: list[str], approximation: Any, progress: bool | float) -> Any:
    return kernelselect.select_kernel(
        data.X, data.y,
        kernel=args.kernel,
        gammas=gammas,
        alphas=alphas,
        criterion=criteria if len(criteria) > 1 else criteria[0],
        approximation=approximation,
        random_state=args.random_state,
        workers=args.workers,
        progress=progress,
        standardize=args.standardize,
        task=data.task,
        refine=args.refine,
        checkpoint=args.checkpoint,
    )


def _protected(args: argparse.Namespace) -> list[tuple[str, str]]:
    """Every path the run reads (outputs may be none of them, nor under them): the data
    file, the sidecar of an .npz, a .zarr store, and the shipped datasets' folder."""
    out = []
    if args.file:
        for i, path in enumerate(_datasets._paths_read(args.file)):
            what = ("the input data file" if i == 0 and not os.path.isdir(args.file) else
                    f"inside the input store {args.file}" if i == 0 else
                    f"the JSON sidecar read with {os.path.basename(args.file)}")
            out.append((os.fspath(path), what))
    for path in _datasets._shipped_paths():
        out.append((os.fspath(path), "inside the folder of the shipped datasets"))
    return out


def _criteria(text: str) -> list[str]:
    """The names of --criterion, checked before any data is read."""
    criteria = [c.strip() for c in text.split(",") if c.strip()]
    if not criteria:
        raise CommandError("--criterion: give at least one criterion name.")
    if any(c.lower() == "auto" for c in criteria) and len(criteria) > 1:
        raise CommandError(
            f"--criterion: 'auto' (the default policy: its criterion, α path and "
            f"approximation levels) cannot be combined with other names in {text!r}; give "
            "auto alone, or name every criterion (e.g. eloo,kta)."
        )
    for name in criteria:
        if name.lower() != "auto":
            kernelselect.get_criterion(name)
    return criteria


def _cmd_select(args: argparse.Namespace, out: SafeText) -> int:
    criteria = _criteria(args.criterion)
    if args.gammas is not None:
        gammas = _float_list(args.gammas, "--gammas")
    elif args.gamma_grid is not None:
        gammas = parse_gamma_grid(args.gamma_grid)
    else:
        gammas = None
    alphas = tuple(_float_list(args.alphas, "--alphas")) if args.alphas is not None else None
    approximation = _approximation(args)
    if args.workers is not None:  # a bad thread count is reported before any data is read
        try:
            check_workers(args.workers)
        except (TypeError, ValueError) as exc:
            raise CommandError(f"--workers: {exc}") from None
    _check_options(args)
    plot_format = _check_outputs(args, _protected(args))
    if args.json == "-":  # standard output carries the JSON alone
        out = SafeText(sys.stderr)
    with _scheduler(args.scheduler):
        return _run_select(args, out, criteria, gammas, alphas, approximation, plot_format)


def _print_data(args: argparse.Namespace, out: SafeText, data: Any, criteria: list[str]
                ) -> None:
    """What was read and what will be selected, before the selection starts."""
    n, d = data.X.shape
    scaled = "standardised" if args.standardize else "raw features"
    print(f"data       {data.label}: n={n}, d={d}, {data.task}, {scaled}", file=out)
    print(f"target     {data.target}", file=out)
    if data.header is not None:
        print(f"header     {data.header}", file=out)
    if data.read is not None:
        print(f"read       {data.read}", file=out)
    if data.extra.get("features_words"):
        print(f"features   {data.extra['features_words']}", file=out)
    print(f"kernel     {args.kernel}; approximation {args.approximation}; "
          f"criteria {', '.join(criteria)}", file=out)
    out.flush()


def _print_report(out: SafeText, result: Any, first: str, summary: str, elapsed: float,
                  t_load: float) -> None:
    """The selection's details, its table, the choice of every criterion and the times."""
    details = _details_line(getattr(result, "details", None))
    if details:
        print(f"details    {details}", file=out)
    for line in _policy_lines(getattr(result, "details", None) or {}):
        print(f"policy     {line}", file=out)
    print("", file=out)
    print(format_table(result, selected_by=first), file=out)
    print("", file=out)
    print(f"selected   {summary}", file=out)
    for name in list(result.curves)[1:]:
        b = result.best[name]
        if not _finite(b.get("value")):
            print(f"           {name} is undefined (NaN at every grid point)", file=out)
            continue
        print(f"           {name} would pick gamma={b['gamma']:.6g}, alpha={b['alpha']:.6g} "
              f"({name}={b['value']:.6g})", file=out)
    recorded = getattr(result, "details", None) or {}
    builds, read = recorded.get("n_operator_builds"), recorded.get("operators_read")
    shown = (f"{len(result.gammas)} gammas x {len(result.alphas)} alphas"
             if builds in (None, len(result.gammas)) and not read else
             f"{builds} kernels built, {len(result.alphas)} alphas each")
    if read:
        shown += f"; {read} read from the checkpoint"
    print(f"time       {elapsed:.3f} s selection ({shown}), {t_load:.3f} s loading",
          file=out)


def _run_select(args: argparse.Namespace, out: SafeText, criteria: list[str], gammas: Any,
                alphas: Any, approximation: Any, plot_format: str | None) -> int:
    t0 = time.perf_counter()
    data = _load_data(args)
    t_load = time.perf_counter() - t0
    n, d = data.X.shape

    # Signs of life on stderr, never on short runs: see PROGRESS_DELAY.
    progress: bool | float
    if args.no_progress:
        progress = False
    else:
        progress = QUIET_PROGRESS_DELAY if args.quiet else PROGRESS_DELAY

    if not args.quiet:
        _print_data(args, out, data, criteria)

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", kernelselect.GridEdgeWarning)
        result = _select(kernelselect, data, args, gammas, alphas, criteria, approximation,
                         progress)
    elapsed = time.perf_counter() - t0
    for w in caught:               # one line each on stderr, not a source listing
        if issubclass(w.category, kernelselect.GridEdgeWarning):
            print(f"kernelselect: warning: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    first = list(result.curves)[0]
    best = result.best[first]
    if not all(_finite(v) for v in (result.best_gamma, result.best_alpha, best.get("value"))):
        raise CommandError(
            f"the selection is not finite ({first} is NaN or infinite at every grid point); "
            "nothing was written. Check the data's scale and --alphas, or choose another "
            "--criterion."
        )
    if hasattr(result, "relevances"):      # --kernel ard: one gamma per feature
        summary = (f"{result.summary(feature_names=data.feature_names)}; the isotropic "
                   f"start: {first}={best['value']:.6g}")
    else:
        summary = (f"gamma={result.best_gamma:.6g} (log2 {math.log2(result.best_gamma):.2f}), "
                   f"alpha={result.best_alpha:.6g}, {first}={best['value']:.6g} "
                   f"({_direction_word(result.directions.get(first))})")
    if args.quiet:
        print(f"selected {summary}; {elapsed:.3f} s", file=out)
    else:
        _print_report(out, result, first, summary, elapsed, t_load)

    # everything is rendered in memory first: a failure here writes nothing
    payload = None
    if args.json:
        payload = json.dumps({
            "data": _data_json(data, n, d, args.standardize),
            "settings": {"kernel": args.kernel, "approximation": args.approximation,
                         "criteria": criteria, "random_state": args.random_state,
                         "workers": args.workers},
            "elapsed_seconds": elapsed,
            "result": _jsonable(result.to_dict()),
            **_per_feature_json(result, data.feature_names, d),
        }, indent=2, allow_nan=False) + "\n"
    image = _render_plot(result, plot_format, _data_name(args, data)) if args.plot else None
    chart = (_render_relevances(result, plot_format, _data_name(args, data),
                                data.feature_names)
             if args.plot and hasattr(result, "relevances") else None)
    if payload is not None:
        if args.json == "-":
            if sys.stdout is None:
                raise CommandError("--json -: standard output is closed; nothing was written.")
            sys.stdout.write(payload)
            sys.stdout.flush()
        else:
            _write_atomic(args.json, payload.encode("utf-8"), args.force)
            if not args.quiet:
                print(f"wrote      {args.json}", file=out)
    if image is not None:
        _write_atomic(args.plot, image, args.force)
        if not args.quiet:
            print(f"wrote      {args.plot}", file=out)
    if chart is not None:
        path = relevance_path(args.plot)
        _write_atomic(path, chart, args.force)
        if not args.quiet:
            print(f"wrote      {path} (the relevance of each feature)", file=out)
    return 0


def _per_feature_json(result: Any, names: list[str] | None, d: int) -> dict[str, Any]:
    """--kernel ard: {"per_feature": [{"feature", "gamma", "relevance"}, …]}, the
    features by their header names (x0, x1, … without a header); {} otherwise."""
    if not hasattr(result, "relevances"):
        return {}
    names = list(names) if names is not None else [f"x{k}" for k in range(d)]
    gammas = np.broadcast_to(np.asarray(result.best_gamma, dtype=float), (d,))
    return {"per_feature": [{"feature": name, "gamma": float(g), "relevance": float(r)}
                            for name, g, r in zip(names, gammas, result.relevances())]}


def _data_json(data: Loaded, n: int, d: int, standardize: bool) -> dict[str, Any]:
    """The "data" record of --json: what was read, its target, header and door."""
    record: dict[str, Any] = {"source": data.label, "n": n, "d": d, "task": data.task,
                              "standardize": standardize, "target": data.target_json,
                              "read": data.read_json}
    if data.header_json is not None:
        record["header"] = data.header_json
    if data.feature_names is not None:
        record["feature_names"] = list(data.feature_names)
    if data.extra.get("feature_columns") is not None:
        record["feature_columns"] = data.extra["feature_columns"]
    return record


def _cmd_datasets(args: argparse.Namespace, out: SafeText) -> int:
    infos = _datasets.list_datasets()
    width = max(len(i.name) for i in infos)
    print(f"{'name'.ljust(width)}  {'task':<10} {'n':>6} {'d':>4}", file=out)
    for info in infos:
        mark = "  (default for `kernelselect select`)" if info.name == _datasets.DEFAULT_DATASET else ""
        print(f"{info.name.ljust(width)}  {info.task:<10} {info.n:>6} {info.d:>4}{mark}", file=out)
    return 0


def _cmd_config(args: argparse.Namespace, out: SafeText) -> int:
    print(kernelselect.show_config(mode="dicts"), file=out)
    return 0


_COMMANDS = {"select": _cmd_select, "datasets": _cmd_datasets, "config": _cmd_config,
             "predict": cmd_predict}


def _approximation(args: argparse.Namespace) -> Any:
    """The approximation name, or a configured object when sizes or a sampler are given."""
    name = args.approximation
    if args.sampler is not None or args.landmarks is not None:
        if name == "auto":                   # landmark options ask for Nyström
            name = "nystrom"
        if name != "nystrom":
            raise CommandError("--sampler and --landmarks apply to --approximation nystrom only.")
        return kernelselect.Nystroem(n_landmarks=args.landmarks, sampler=args.sampler or "uniform")
    if args.features is not None:
        if name == "rff":
            return kernelselect.RFF(n_features=args.features)
        if name == "random_mcm":
            return kernelselect.RandomMCM(n_features=args.features)
        raise CommandError("--features applies to --approximation rff or random_mcm only.")
    return name


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``kernelselect`` command; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        0 on success, 2 on a usage or data error (one line on stderr).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed by argparse
        return int(exc.code or 0)
    if args.command is None:
        # Bare `kernelselect` is a request for orientation, not a mistake: print the
        # help and succeed, as pip and python -m venv --help do. Usage errors (an
        # unknown command or option) still exit 2, argparse's convention.
        parser.print_help(sys.stdout)
        return 0
    try:
        return _COMMANDS[args.command](args, SafeText(sys.stdout))
    except KeyboardInterrupt:
        print("kernelselect: interrupted", file=sys.stderr)
        exit_if_abandoned(130)          # not after a factorisation left running
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except MemoryError:
        if args.debug:
            raise
        print("kernelselect: error: out of memory; lower the memory limit (KERNELSELECT_MAX_BYTES)"
              " so that large inputs are refused or streamed, or use a smaller input.",
              file=sys.stderr)
        return 2
    except Exception as exc:  # one line for the user, the traceback with --debug
        if args.debug:
            raise
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if not isinstance(exc, (CommandError, ValueError, TypeError, OSError)):
            message = f"{type(exc).__name__}: {message}"
        if sys.stderr is not None:
            print(f"kernelselect: error: {_safe(message)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
