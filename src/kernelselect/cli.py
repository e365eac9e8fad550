"""The ``kernelselect`` command.

Sub-commands
------------
``kernelselect select [FILE] [options]``
    Evaluate selection criteria over a grid of kernel widths γ (and ridges α), print
    the table of candidates, mark the selected kernel and report the time taken.
    FILE is read according to its extension (``.npz``; ``.csv``/``.tsv``;
    ``.svm``/``.svmlight``/``.libsvm``/``.txt``/``.dat`` as svmlight). Without FILE
    the command runs on ``--dataset NAME`` or, when that is absent too, on the
    shipped ``breast_cancer`` set (683 × 9, binary).
``kernelselect datasets``
    List the shipped datasets.
``kernelselect config``
    Print how the package was built (OpenMP, FFT backend, BLAS).

``kernelselect --version`` prints the version; ``kernelselect`` alone prints the help
and exits 0. ``python -m kernelselect`` is the same command. Errors print one line on
stderr and exit with status 2.

Outputs of ``select`` (``--json``, ``--plot``) are checked before anything is
computed: the folder must exist and be writable, the file must not be a folder or a
device, must not be the input data, must not be given twice, the plot's extension
must be a format matplotlib writes, and an existing file is replaced only with
``--force``. They are written only when the selection is finite, each atomically
(a temporary file in the same folder, then renamed), so a failure leaves nothing
half-written. ``--json -`` writes the JSON to standard output; the human-readable
report then goes to standard error.
"""

import argparse
import contextlib
import io
import json
import math
import os
import sys
import tempfile
import time
import warnings

import numpy as np

from . import datasets as _datasets
from ._validation import check_workers
from ._version import __version__

__all__ = ["main", "build_parser", "parse_gamma_grid", "format_table"]

#: Progress (stderr) appears once a selection has run this many seconds: a tqdm bar on
#: a terminal when tqdm is installed, otherwise a line every 10 s.
PROGRESS_DELAY = 2.0
#: With --quiet only runs longer than this show progress (a line a minute), so that
#: a long run still shows signs of life while a short one prints one line.
QUIET_PROGRESS_DELAY = 60.0

APPROXIMATIONS = ("auto", "nystrom", "exact", "mcm", "random_mcm", "rff")
KERNELS = ("gaussian", "laplacian")


class CommandError(Exception):
    """A user error: reported as one line, exit status 2."""


# --------------------------------------------------------------------------- parsing


def _float_list(text, option):
    values = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = float(part)
        except ValueError:
            raise CommandError(
                f"{option}: {part!r} is not a number (give a comma-separated list, e.g. 0.1,1,10)."
            ) from None
        if not (math.isfinite(value) and value > 0):
            raise CommandError(f"{option}: every value must be a positive finite number, got {part}.")
        values.append(value)
    if not values:
        raise CommandError(f"{option}: the list is empty.")
    return values


def parse_gamma_grid(text):
    """Parse a grid specification into γ values.

    ``log2:A:B[:STEP]`` → 2^k for k = A, A+STEP, …, B (STEP defaults to 1);
    ``log10:A:B[:NUM]`` → NUM values (default B−A+1) evenly spaced in log₁₀ from
    10^A to 10^B.

    Examples
    --------
    >>> parse_gamma_grid("log2:-2:2")
    [0.25, 0.5, 1.0, 2.0, 4.0]
    >>> parse_gamma_grid("log10:-1:1:3")
    [0.1, 1.0, 10.0]
    """
    parts = text.strip().split(":")
    if len(parts) not in (3, 4) or parts[0].lower() not in ("log2", "log10"):
        raise CommandError(
            f"--gamma-grid: {text!r} is not a grid; write log2:START:STOP[:STEP] "
            "(e.g. log2:-7:7) or log10:START:STOP[:NUM]."
        )
    try:
        start, stop = float(parts[1]), float(parts[2])
        extra = float(parts[3]) if len(parts) == 4 else None
    except ValueError:
        raise CommandError(f"--gamma-grid: {text!r} holds a non-number.") from None
    if not all(math.isfinite(v) for v in (start, stop, 0.0 if extra is None else extra)):
        raise CommandError(f"--gamma-grid: every field of {text!r} must be a finite number.")
    if stop < start:
        raise CommandError(f"--gamma-grid: need START <= STOP, got {text!r}.")
    base = 2.0 if parts[0].lower() == "log2" else 10.0
    limit = math.floor(300 / math.log10(base))
    if max(abs(start), abs(stop)) > limit:
        raise CommandError(
            f"--gamma-grid: {text!r} reaches beyond the float range; keep START and STOP "
            f"within ±{limit} for {parts[0].lower()}."
        )
    if base == 2.0:
        step = 1.0 if extra is None else extra
        if not step > 0:
            raise CommandError(f"--gamma-grid: STEP must be positive, got {parts[3]}.")
        count = math.floor((stop - start) / step + 1e-9) + 1
        if count > 1000:
            raise CommandError(
                f"--gamma-grid: STEP={parts[3]} gives {count:.3g} values, more than 1000; "
                "use a larger STEP."
            )
        exponents = start + step * np.arange(count)
    else:
        count = int(stop - start) + 1 if extra is None else extra
        if count != int(count) or count < 1:
            raise CommandError(f"--gamma-grid: NUM must be a positive integer, got {parts[3]}.")
        if count > 1000:
            raise CommandError(f"--gamma-grid: NUM={count:.3g} values is too many (at most 1000).")
        count = int(count)
        exponents = np.linspace(start, stop, count)
    gammas = base**exponents
    return [float(g) for g in gammas]


def build_parser():
    """The argparse parser of the ``kernelselect`` command."""
    parser = argparse.ArgumentParser(
        prog="kernelselect",
        description="Select the kernel (Gaussian/Laplacian width gamma and ridge alpha) "
        "of a kernel machine with fast selection criteria.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    sel = sub.add_parser(
        "select",
        help="evaluate criteria over a grid of kernels and print the selected one",
        description="Evaluate kernel selection criteria over a grid of gamma (x alpha) "
        f"values. Without FILE or --dataset it runs on the shipped "
        f"'{_datasets.DEFAULT_DATASET}' dataset.",
    )
    sel.add_argument("file", nargs="?", metavar="FILE",
                     help="data file: .npz, .csv/.tsv, or svmlight (.svm .svmlight .libsvm .txt .dat); "
                     ".npy or .zarr (a 2-D array, target column --target) are read chunk by "
                     "chunk with Dask and may be larger than memory")
    sel.add_argument("--dataset", metavar="NAME",
                     help="a shipped dataset (see `kernelselect datasets`)")
    sel.add_argument("--target", default="-1", metavar="COL",
                     help="CSV target column: index (default -1, the last) or name")
    sel.add_argument("--task", default="auto",
                     choices=("auto", "binary", "multiclass", "regression"),
                     help="auto: two distinct targets or labels -> binary; whole-number codes "
                     "0..C-1 or 1..C (C <= 50) or text labels -> multiclass; other numbers -> "
                     "regression")
    sel.add_argument("--criterion", default="auto", metavar="NAMES",
                     help="comma-separated criteria, e.g. eloo,kta; the first one selects "
                     "(default auto: leave-one-out error, eloo or eloo_multiclass)")
    sel.add_argument("--approximation", default="auto", choices=APPROXIMATIONS,
                     help="stand-in for the kernel matrix (default auto: exact up to n=400, "
                     "then Nystrom with landmarks doubled until the choice is stable)")
    sel.add_argument("--refine", action="store_true",
                     help="refine (gamma, alpha) continuously around the best grid point")
    sel.add_argument("--sampler", metavar="NAME",
                     help="Nystroem landmark sampler: uniform (default), column_norm, "
                     "leverage, kmeans, modified, optimal")
    sel.add_argument("--landmarks", type=int, metavar="C",
                     help="Nystroem landmarks c (default min(n, 200))")
    sel.add_argument("--features", type=int, metavar="D",
                     help="random features D of rff / random_mcm (defaults 200 / 100)")
    sel.add_argument("--kernel", default="gaussian", choices=KERNELS)
    grid = sel.add_mutually_exclusive_group()
    grid.add_argument("--gammas", metavar="LIST", help="comma-separated gamma values")
    grid.add_argument("--gamma-grid", metavar="SPEC",
                      help="log2:START:STOP[:STEP] (gamma = 2^k) or log10:START:STOP[:NUM]; "
                      "default: a log2 grid around the median heuristic")
    sel.add_argument("--alphas", metavar="LIST",
                     help="comma-separated ridge values (default: n*10^k, k=-6..0 in half "
                     "decades, for criteria that estimate the test error; else 1)")
    sel.add_argument("--standardize", action=argparse.BooleanOptionalAction, default=True,
                     help="scale every feature to zero mean, unit variance first (default on)")
    sel.add_argument("--random-state", type=int, default=0, metavar="N",
                     help="seed of the randomised approximations (default 0)")
    sel.add_argument("--chunk-rows", type=int, default=None, metavar="R",
                     help=".npy/.zarr input: rows per Dask chunk (default about 64 MB)")
    sel.add_argument("--scheduler", metavar="ADDRESS",
                     help=".npy/.zarr input: run on the Dask scheduler at ADDRESS "
                     "(distributed; default: Dask's local threads)")
    sel.add_argument("--workers", type=int, default=None, metavar="N",
                     help="threads for the compiled kernels (-1: all cores)")
    sel.add_argument("--plot", metavar="OUT.png",
                     help="save the criteria against gamma (and, with several alphas, "
                     "their (gamma, alpha) heat maps) as an image; format from the "
                     "extension: .png, .pdf, .svg, ...")
    sel.add_argument("--json", metavar="OUT.json",
                     help="save the full result as JSON; '-' writes it to standard output "
                     "(the report then goes to standard error)")
    sel.add_argument("--force", action="store_true",
                     help="replace existing --json/--plot files (never the input data)")
    sel.add_argument("--zero-based", choices=("auto", "yes", "no"), default=None,
                     help="svmlight files: whether feature indices start at 0 (default auto: "
                     "yes when an index 0 occurs, as scikit-learn's load_svmlight_file)")
    sel.add_argument("--quiet", action="store_true",
                     help="print only the selected kernel; progress only on runs longer "
                     f"than {QUIET_PROGRESS_DELAY:g} s (a line a minute on stderr)")
    sel.add_argument("--no-progress", action="store_true",
                     help="never show progress (by default it appears on stderr once a "
                     f"run has lasted {PROGRESS_DELAY:g} s)")

    sub.add_parser("datasets", help="list the shipped datasets",
                   description="List the datasets shipped with kernelselect.")
    sub.add_parser("config", help="show build and runtime configuration",
                   description="Print kernelselect.show_config().")
    return parser


# --------------------------------------------------------------------------- output


def _fmt(value, width=12):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan".rjust(width)
    return f"{value:.6g}".rjust(width)


def format_table(result, selected_by=None, max_alphas=3):
    """The candidates of a selection result as an aligned text table.

    One row per (γ, α) when there are at most ``max_alphas`` α; with a longer α path,
    one row per γ at the α that is best there for ``selected_by`` (the profile over
    γ). One column per criterion. ``*`` follows the best value of each criterion;
    ``>`` starts the row of the selected kernel.
    """
    gammas = np.asarray(result.gammas, dtype=float)
    alphas = np.asarray(result.alphas, dtype=float)
    names = list(result.curves)
    selected_by = selected_by or names[0]
    best_index = {}
    for name in names:
        best = result.best[name]
        if best.get("index") is not None:
            best_index[name] = tuple(int(i) for i in best["index"])
        elif math.isfinite(best["gamma"]):
            g = int(np.argmin(np.abs(np.log(gammas) - math.log(best["gamma"]))))
            a = int(np.argmin(np.abs(np.log(alphas) - math.log(best["alpha"]))))
            best_index[name] = (g, a)
        else:  # every value NaN: nothing is marked
            best_index[name] = None
    profile = alphas.size > max_alphas
    if profile:
        sel = np.asarray(result.curves[selected_by], dtype=float)
        flip = -1.0 if result.directions.get(selected_by) == "max" else 1.0
        pairs = []
        for gi in range(gammas.size):
            row = np.where(np.isfinite(sel[gi]), flip * sel[gi], np.inf)
            pairs.append((gi, int(np.argmin(row))))
    else:
        pairs = [(gi, ai) for gi in range(gammas.size) for ai in range(alphas.size)]
    widths = [max(12, len(n) + 2) for n in names]
    header = "  " + "log2(gamma)".rjust(11) + "gamma".rjust(12) + "alpha".rjust(12)
    header += "".join(n.rjust(w + 1) for n, w in zip(names, widths))
    lines = [header]
    for gi, ai in pairs:
        gamma, alpha = gammas[gi], alphas[ai]
        mark = ">" if best_index[selected_by] == (gi, ai) else " "
        row = f"{mark} " + f"{math.log2(gamma):11.2f}" + _fmt(gamma) + _fmt(alpha)
        for name, w in zip(names, widths):
            value = float(np.asarray(result.curves[name])[gi, ai])
            star = "*" if best_index[name] == (gi, ai) else " "
            row += _fmt(value, w) + star
        lines.append(row.rstrip())
    directions = ", ".join(
        f"{n}: {_direction_word(result.directions.get(n))}" for n in names
    )
    lines.append(f"  * best of its criterion ({directions});  > selected by {selected_by}")
    if profile:
        lines.append(f"  one row per gamma at the alpha {selected_by} prefers there "
                     f"({alphas.size} alphas from {alphas.min():.3g} to {alphas.max():.3g}; "
                     "--json has every value)")
    return "\n".join(lines)


def _direction_word(direction):
    return {"min": "minimise", "max": "maximise"}.get(direction, str(direction))


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return _jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return repr(obj)


_DETAILS_SHOWN_ELSEWHERE = ("classes", "task_reason", "extensions", "edges", "standardize")


def _details_line(details):
    parts = []
    for key, value in (details or {}).items():
        if key in _DETAILS_SHOWN_ELSEWHERE:
            continue
        if isinstance(value, (bool, int, float, str, np.integer, np.floating)):
            shown = f"{value:.4g}" if isinstance(value, (float, np.floating)) else str(value)
            parts.append(f"{key}={shown}")
        elif isinstance(value, (list, tuple)) and len(value) <= 6 and all(
            isinstance(v, (int, float, np.integer, np.floating)) for v in value
        ):
            parts.append(f"{key}=" + "x".join(str(v) for v in value))
    return ", ".join(parts)


def _policy_lines(details):
    """What the automatic rules did: approximation levels, grid extensions, edges."""
    lines = []
    auto = details.get("auto")
    if isinstance(auto, dict):
        levels = [lv["approximation"] for lv in auto.get("levels", []) if "approximation" in lv]
        lines.append(f"approximation {' -> '.join(levels)} ({auto.get('reason', '')})")
    for ext in details.get("extensions") or []:
        lines.append(f"grid extended at {ext['edge']} by {len(ext['added'])} values")
    if details.get("edges"):
        lines.append(f"best point still on the grid edge: {', '.join(details['edges'])}")
    refine = details.get("refine")
    if isinstance(refine, dict):
        lines.append(f"refined to gamma={refine['gamma']:.6g}, alpha={refine['alpha']:.6g} "
                     f"({'improved' if refine.get('improved') else 'grid point kept'})")
    return lines


def _finite(value):
    try:
        return value is not None and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _plot_formats():
    """File formats matplotlib can write ({extension: description})."""
    try:
        import matplotlib
    except ImportError:
        raise CommandError(
            "--plot needs matplotlib, which is not installed: pip install matplotlib "
            "(or drop --plot)."
        ) from None
    matplotlib.use("Agg")
    from matplotlib.backend_bases import FigureCanvasBase

    return FigureCanvasBase.get_supported_filetypes()


def _check_output(path, option, force, data_file):
    """Refuse, before any work, an output path that cannot or must not be written."""
    if path == "":
        raise CommandError(f"{option}: the file name is empty.")
    if path == "-":
        if option != "--json":
            raise CommandError(f"{option}: a plot needs a file name ('-' is for --json).")
        return
    target = os.path.abspath(path)
    folder = os.path.dirname(target)
    if data_file is not None and os.path.exists(data_file) and (
            os.path.realpath(target) == os.path.realpath(data_file)
            or (os.path.exists(target) and os.path.samefile(target, data_file))):
        raise CommandError(f"{option}: {path} is the input data file; choose another name.")
    if os.path.isdir(target):
        raise CommandError(f"{option}: {path} is a folder; give a file name inside it.")
    if os.path.lexists(target):
        if not os.path.isfile(target):
            raise CommandError(
                f"{option}: {path} exists and is not a regular file; give a file name"
                + (" (or '-' for standard output)." if option == "--json" else ".")
            )
        if not force:
            raise CommandError(f"{option}: {path} exists; pass --force to replace it.")
    if not os.path.isdir(folder):
        raise CommandError(f"{option}: the folder {folder} does not exist.")
    try:  # the real test of writability (permissions, read-only file systems)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".kernelselect-", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise CommandError(
            f"{option}: cannot write in the folder {folder} ({exc.strerror or exc})."
        ) from None


def _check_outputs(args):
    """Check --json and --plot before anything runs; returns the plot format."""
    outputs = [(p, o) for p, o in ((args.json, "--json"), (args.plot, "--plot")) if p is not None]
    for path, option in outputs:
        _check_output(path, option, args.force, args.file)
    if args.json not in (None, "-") and args.plot is not None and (
            os.path.realpath(args.json) == os.path.realpath(args.plot)):
        raise CommandError(f"--json and --plot name the same file {args.plot}; give two names.")
    if args.plot is None:
        return None
    formats = _plot_formats()
    ext = os.path.splitext(args.plot)[1].lower().lstrip(".")
    if ext not in formats:
        shown = ", ".join(f".{e}" for e in sorted(formats))
        got = f"the extension .{ext}" if ext else "no extension"
        raise CommandError(
            f"--plot: {args.plot} has {got}; the format is taken from the extension, one of "
            f"{shown}."
        )
    return ext


def _data_name(args, data):
    """The data set's name for a figure title: the shipped name or the file's name."""
    return os.path.basename(args.file) if args.file else data.name


def _render_plot(result, fmt, data_name):
    """The plot as bytes in format ``fmt``, titled with ``data_name``."""
    _plot_formats()
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        # With an α path the curves are drawn above the (γ, α) heat maps.
        kind = "both" if np.asarray(result.alphas).size > 1 else "curves"
        fig = result.plot(kind=kind, data_name=data_name)
        fig.savefig(buffer, format=fmt, dpi=120, bbox_inches="tight")
    finally:
        plt.close("all")
    return buffer.getvalue()


def _write_atomic(path, data, force):
    """Write ``data`` (bytes) to ``path`` through a temporary file in the same folder,
    so that a failure (disk full, interruption) leaves no partial file; an existing
    file is replaced only when ``force``."""
    target = os.path.abspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target),
                               prefix=f".{os.path.basename(target)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if force:
            os.replace(tmp, target)
        else:
            try:  # link fails if the name appeared meanwhile: never clobber
                os.link(tmp, target)
            except FileExistsError:
                raise CommandError(f"{path} exists; pass --force to replace it.") from None
            except OSError:  # file systems without hard links
                if os.path.lexists(target):
                    raise CommandError(f"{path} exists; pass --force to replace it.") from None
                os.replace(tmp, target)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}; nothing was written.") \
            from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


# --------------------------------------------------------------------------- commands


def _load_data(args):
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


def _select(kernelselect, data, args, gammas, alphas, criteria, approximation, progress):
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
    )


OUT_OF_CORE = (".npy", ".zarr")


class _ChunkedData:
    """X and y as Dask arrays over a file, with the task inferred from y."""

    def __init__(self, X, y, task, name):
        self.X, self.y, self.task, self.name = X, y, task, name


def _load_out_of_core(args, target):
    """(X, y) over a .npy/.zarr file: nothing but y (one value per row) is read here."""
    if not isinstance(target, int):
        raise CommandError("--target: give a column index for .npy/.zarr input.")
    if args.chunk_rows is not None and args.chunk_rows < 1:
        raise CommandError(f"--chunk-rows must be a positive integer, got {args.chunk_rows}.")
    try:
        from . import _dask

        X, y = _dask.from_file(args.file, target=target, chunk_rows=args.chunk_rows)
    except ImportError:
        raise CommandError('.npy/.zarr input is read chunk by chunk with Dask: '
                           'pip install "kernelselect[dask]"') from None
    except (OSError, ValueError) as exc:
        raise CommandError(f"{args.file}: {exc}") from None
    values = np.unique(np.asarray(y.compute()))
    if args.task == "binary" and values.size != 2:
        raise CommandError(f"--task binary: the target column has {values.size} distinct values.")
    from ._targets import detect_task

    task = args.task if args.task != "auto" else detect_task(values, "the target column")[0]
    name = os.path.basename(args.file.rstrip("/"))
    return _ChunkedData(X, y, task, name)


@contextlib.contextmanager
def _scheduler(address):
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


def _cmd_select(args, out):
    criteria = [c.strip() for c in args.criterion.split(",") if c.strip()]
    if not criteria:
        raise CommandError("--criterion: give at least one criterion name.")
    import kernelselect

    for name in criteria:  # unknown names are reported before any data is read
        if name.lower() != "auto":
            kernelselect.get_criterion(name)
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
    plot_format = _check_outputs(args)
    if args.json == "-":  # standard output carries the JSON alone
        out = sys.stderr

    t0 = time.perf_counter()
    data, label = _load_data(args)
    t_load = time.perf_counter() - t0
    n, d = data.X.shape

    # Signs of life on stderr, never on short runs: see PROGRESS_DELAY.
    if args.no_progress:
        progress = False
    else:
        progress = QUIET_PROGRESS_DELAY if args.quiet else PROGRESS_DELAY

    if not args.quiet:
        scaled = "standardised" if args.standardize else "raw features"
        print(f"data       {label}: n={n}, d={d}, {data.task}, {scaled}", file=out)
        print(f"kernel     {args.kernel}; approximation {args.approximation}; "
              f"criteria {', '.join(criteria)}", file=out)
        out.flush()

    t0 = time.perf_counter()
    with _scheduler(args.scheduler), warnings.catch_warnings(record=True) as caught:
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
    summary = (f"gamma={result.best_gamma:.6g} (log2 {math.log2(result.best_gamma):.2f}), "
               f"alpha={result.best_alpha:.6g}, {first}={best['value']:.6g} "
               f"({_direction_word(result.directions.get(first))})")
    if args.quiet:
        print(f"selected {summary}; {elapsed:.3f} s", file=out)
    else:
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
        builds = (getattr(result, "details", None) or {}).get("n_operator_builds")
        shown = (f"{len(result.gammas)} gammas x {len(result.alphas)} alphas"
                 if builds in (None, len(result.gammas)) else
                 f"{builds} kernels built, {len(result.alphas)} alphas each; the table shows "
                 f"the last {len(result.gammas)}")
        print(f"time       {elapsed:.3f} s selection ({shown}), {t_load:.3f} s loading",
              file=out)

    # everything is rendered in memory first: a failure here writes nothing
    payload = None
    if args.json:
        payload = json.dumps({
            "data": {"source": label, "n": n, "d": d, "task": data.task,
                     "standardize": args.standardize},
            "settings": {"kernel": args.kernel, "approximation": args.approximation,
                         "criteria": criteria, "random_state": args.random_state,
                         "workers": args.workers},
            "elapsed_seconds": elapsed,
            "result": _jsonable(result.to_dict()),
        }, indent=2, allow_nan=False) + "\n"
    image = _render_plot(result, plot_format, _data_name(args, data)) if args.plot else None
    if payload is not None:
        if args.json == "-":
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
    return 0


def _cmd_datasets(args, out):
    infos = _datasets.list_datasets()
    width = max(len(i.name) for i in infos)
    print(f"{'name'.ljust(width)}  {'task':<10} {'n':>6} {'d':>4}", file=out)
    for info in infos:
        mark = "  (default for `kernelselect select`)" if info.name == _datasets.DEFAULT_DATASET else ""
        print(f"{info.name.ljust(width)}  {info.task:<10} {info.n:>6} {info.d:>4}{mark}", file=out)
    return 0


def _cmd_config(args, out):
    import kernelselect

    print(kernelselect.show_config(), file=out)
    return 0


_COMMANDS = {"select": _cmd_select, "datasets": _cmd_datasets, "config": _cmd_config}


def _approximation(args):
    """The approximation name, or a configured object when sizes or a sampler are given."""
    import kernelselect

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


def main(argv=None):
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
        return _COMMANDS[args.command](args, sys.stdout)
    except KeyboardInterrupt:
        print("kernelselect: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (e.g. `| head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # one line for the user, the traceback with --debug
        if args.debug:
            raise
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if not isinstance(exc, (CommandError, ValueError, TypeError, OSError)):
            message = f"{type(exc).__name__}: {message}"
        print(f"kernelselect: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
