"""The command line of ``kernelselect``: the argument parser and the γ-grid syntax
(a user mistake raises :class:`~kernelselect.cli._errors.CommandError`)."""

from __future__ import annotations

import argparse
import math

import numpy as np

from .. import _policy as _rules
from .. import datasets as _datasets
from .._version import __version__
from ..kernels import AUTO, Kernel
from ._errors import CommandError


#: Progress (stderr) appears once a selection has run this many seconds: a tqdm bar on
#: a terminal when tqdm is installed, otherwise a line every 10 s.
PROGRESS_DELAY = 2.0
#: With --quiet only runs longer than this show progress (a line a minute), so that
#: a long run still shows signs of life while a short one prints one line.
QUIET_PROGRESS_DELAY = 60.0

APPROXIMATIONS = ("auto", "nystrom", "exact", "mcm", "random_mcm", "rff")
KERNELS = (*(k.value for k in Kernel), AUTO)


# --------------------------------------------------------------------------- parsing


def _float_list(text: str, option: str) -> list[float]:
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


def parse_gamma_grid(text: str) -> list[float]:
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
        num = float(int(stop - start) + 1) if extra is None else extra
        if num != int(num) or num < 1:
            raise CommandError(f"--gamma-grid: NUM must be a positive integer, got {parts[3]}.")
        if num > 1000:
            raise CommandError(f"--gamma-grid: NUM={num:.3g} values is too many (at most 1000).")
        exponents = np.linspace(start, stop, int(num))
    gammas = base**exponents
    return [float(g) for g in gammas]


def _add_input_arguments(sel: argparse.ArgumentParser) -> None:
    """The options of ``kernelselect select`` that name the data and how to read them."""
    sel.add_argument("file", nargs="?", metavar="FILE",
                     help="data file: .npz, .csv/.tsv, or svmlight (.svm .svmlight .libsvm .txt .dat); "
                     ".npy or .zarr (a 2-D array, target column --target) are read into "
                     "memory when they fit under the memory limit, otherwise chunk by "
                     "chunk with Dask")
    sel.add_argument("--dataset", metavar="NAME",
                     help="a shipped dataset (see `kernelselect datasets`)")
    sel.add_argument("--target", default=None, metavar="COL",
                     help=".csv/.tsv, .npy, .zarr: the target column, an index (default -1, "
                     "the last) or, for a CSV with a header, a name (.npz archives hold "
                     "the array 'y'; svmlight lines start with the target)")
    sel.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                     help=".csv/.tsv: whether the first row names the columns (default: "
                     "told from the data: yes when it holds text above numbers, or "
                     "numbers the columns 0..w-1 / 1..w); the report says which")
    sel.add_argument("--feature-columns", default=None, metavar="COL[,COL...]",
                     help=".csv/.tsv: the feature columns, indices or header names "
                     "(default: every column but the target); e.g. to leave out a text "
                     "column")
    sel.add_argument("--drop", default=None, metavar="COL[,COL...]",
                     help=".csv/.tsv: columns left out of the features, indices or header "
                     "names (e.g. an identifier or a text column)")
    sel.add_argument("--encoding", default=None, metavar="NAME",
                     help=".csv/.tsv: the text encoding (default utf-8, a byte-order mark "
                     "is skipped); e.g. latin-1, cp1252, utf-16")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``kernelselect`` command."""
    # Long: one declaration per option, in the order --help lists them; only the
    # options that say where the data are and how to read them have their own function.
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
    _add_input_arguments(sel)
    sel.add_argument("--task", default="auto",
                     choices=("auto", "binary", "multiclass", "regression"),
                     help="auto: two distinct targets or labels -> binary; whole-number codes "
                     "0..C-1 or 1..C (C <= 50) or text labels -> multiclass; other numbers -> "
                     "regression")
    sel.add_argument("--criterion", default="auto", metavar="NAMES",
                     help="comma-separated criteria, e.g. eloo,kta; the first one selects; "
                     "auto stands alone "
                     f"(default auto: 5-fold CV error ekfold up to n={_rules.KFOLD_MAX_N} on the exact matrix, "
                     "leave-one-out error eloo beyond; their multiclass forms for 3+ classes)")
    sel.add_argument("--approximation", default="auto", choices=APPROXIMATIONS,
                     help=f"stand-in for the kernel matrix (default auto: exact up to n={_rules.EXACT_MAX_N}, "
                     "then Nystrom with landmarks doubled until the choice is settled)")
    sel.add_argument("--refine", action="store_true",
                     help="refine (gamma, alpha) continuously around the best grid point")
    sel.add_argument("--checkpoint", metavar="PATH", default=None,
                     help="save every operator the search evaluates to PATH as it goes; "
                     "run the same command again after an interruption to continue from "
                     "it (isotropic kernels; delete PATH to select afresh)")
    sel.add_argument("--sampler", metavar="NAME",
                     help="Nystroem landmark sampler: uniform (default), column_norm, "
                     "leverage, kmeans, modified, optimal")
    sel.add_argument("--landmarks", type=int, metavar="C",
                     help="Nystroem landmarks c (default min(n, 200))")
    sel.add_argument("--features", type=int, metavar="D",
                     help="random features D of rff / random_mcm (defaults 200 / 100)")
    sel.add_argument("--kernel", default=AUTO, choices=KERNELS,
                     help="gaussian exp(-gamma*|x-x'|^2); laplacian "
                     "exp(-gamma*|x-x'|_1); ard: a Gaussian with one gamma per feature, "
                     "searched from the selected isotropic one (reports each feature's "
                     "relevance; --plot adds a relevance chart); auto (default): ard for a real target "
                     f"of at most {_rules.ARD_AUTO_MAX_N} rows, else gaussian (class labels, "
                     "more rows, other approximations); the reason is printed with the result")

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
                     help=".npy/.zarr input: read it with Dask, R rows per chunk (default "
                     "about 64 MB)")
    sel.add_argument("--scheduler", metavar="ADDRESS",
                     help=".npy/.zarr input: read it with Dask and run on the scheduler at "
                     "ADDRESS (distributed; default: Dask's local threads)")
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

    from ._predict import add_predict_parser     # predict: probabilities and intervals
    add_predict_parser(sub)
    sub.add_parser("datasets", help="list the shipped datasets",
                   description="List the datasets shipped with kernelselect.")
    sub.add_parser("config", help="show build and runtime configuration",
                   description="Print kernelselect.show_config().")
    return parser
