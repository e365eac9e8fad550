"""``kernelselect predict``: select and refit on a training part, then predict the
held-out rows, with calibrated class probabilities (``--proba``) or prediction
intervals (``--interval COVERAGE``) from the refit machine's closed-form
leave-one-out (no refit).

The data options are those of ``select`` (FILE or ``--dataset``, ``--target``,
``--header``, ``--encoding``, ``--task``, ``--zero-based``); the data are read into
memory. The rows are split once at random (``--test-fraction``, ``--random-state``);
the report prints the first ``--rows`` held-out rows and a summary (accuracy and
log-loss, or R², empirical coverage and mean width); ``--output OUT.csv`` writes every
held-out row (replacing a file only with ``--force``). ``--checkpoint PATH``: the
selection saves its evaluations to ``PATH.selection.json`` and the refit's Nyström
conjugate-gradient solve its state to PATH, and the same command run again continues
from them (the selection estimators' ``checkpoint``).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import numpy as np

from ..solvers._checkpoint import check_checkpoint
from ._output import SafeText
from ._errors import CommandError

__all__ = ["add_predict_parser", "cmd_predict"]


def add_predict_parser(sub: Any) -> None:
    """The ``predict`` sub-command's parser, added to ``sub``."""
    p = sub.add_parser(
        "predict", help="select, refit and predict held-out rows, with probabilities or "
        "prediction intervals",
        description="Select (gamma, alpha) on a random training part, refit the machine "
        "and predict the held-out rows; --proba prints calibrated class probabilities, "
        "--interval COVERAGE prediction intervals (both from the refit machine's "
        "leave-one-out, no refit).")
    p.add_argument("file", nargs="?", metavar="FILE", help="data file, as for 'select'")
    p.add_argument("--dataset", metavar="NAME", help="a shipped dataset (see 'datasets')")
    for flag, kw in (("--target", {"metavar": "COL"}), ("--encoding", {"metavar": "NAME"})):
        p.add_argument(flag, default=None, help="as for 'select'", **kw)
    p.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                   help="as for 'select'")
    for flag in ("--feature-columns", "--drop"):
        p.add_argument(flag, default=None, metavar="COL[,COL...]", help="as for 'select'")
    p.add_argument("--task", default="auto",
                   choices=("auto", "binary", "multiclass", "regression"))
    p.add_argument("--zero-based", choices=("auto", "yes", "no"), default=None,
                   help="as for 'select'")
    p.add_argument("--test-fraction", type=float, default=0.25, metavar="F",
                   help="share of the rows held out (default 0.25)")
    p.add_argument("--random-state", type=int, default=0, metavar="N")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--proba", action="store_true",
                      help="print calibrated class probabilities (classification)")
    what.add_argument("--interval", type=float, default=None, metavar="COVERAGE",
                      help="print prediction intervals of this coverage, e.g. 0.9 "
                      "(regression)")
    p.add_argument("--rows", type=int, default=10, metavar="N",
                   help="held-out rows printed (default 10)")
    p.add_argument("--output", metavar="OUT.csv", help="write every held-out row as CSV")
    p.add_argument("--force", action="store_true", help="replace an existing --output")
    p.add_argument("--checkpoint", metavar="PATH", default=None,
                   help="the selection saves its evaluations to PATH.selection.json and "
                   "the refit's Nyström conjugate-gradient solve (beyond the exact limit) "
                   "its state to PATH as they go; run the same command again after an "
                   "interruption to continue from them")
    p.set_defaults(chunk_rows=None, scheduler=None)


def _check(args: argparse.Namespace) -> None:
    if not 0.0 < args.test_fraction < 1.0:
        raise CommandError(f"--test-fraction must lie strictly between 0 and 1, got "
                           f"{args.test_fraction}.")
    if args.interval is not None and not 0.0 < args.interval < 1.0:
        raise CommandError(f"--interval: the coverage must lie strictly between 0 and 1 "
                           f"(0.9 for 90%), got {args.interval}.")
    if args.rows < 0:
        raise CommandError(f"--rows must be 0 or more, got {args.rows}.")
    if args.checkpoint is not None:
        from ..models._selection_cv import selection_checkpoint
        try:
            path = check_checkpoint(args.checkpoint)
        except (TypeError, ValueError) as exc:
            raise CommandError(f"--checkpoint: {exc}") from None
        for other, what in ((args.file, "the input data file"), (args.output, "--output")):
            for saved in (str(path), selection_checkpoint(str(path))):
                if other and os.path.abspath(other) == os.path.abspath(saved):
                    raise CommandError(f"--checkpoint {args.checkpoint}: {saved} would be "
                                       f"{what}; give another path.")
    if args.output and os.path.exists(args.output) and not args.force:
        raise CommandError(f"{args.output} exists; pass --force to replace it.")


def _resumed(est: Any) -> str:
    """What a checkpointed fit read back and what it computed."""
    details = est.selection_.details
    if details["checkpoint"]["selection"] is None:
        said = "the selection was not saved (" + (
            "one γ per feature" if est.best_kernel_ == "ard" else "k-fold cross-validation") + ")"
    else:
        said = (f"the selection read {details.get('operators_read', 0)} evaluated operators "
                f"back and built {details.get('n_operator_builds', 0)}")
    fitted = est.best_estimator_
    machine = fitted[-1] if hasattr(fitted, "steps") else fitted     # after a scaler or not
    solve = machine.model_.details.get("resumed_from")
    if solve is None:
        return said + "; the refit has no iterations to save"
    start = max(solve)
    return said + (f"; the refit's solve continued from iteration {start}" if start
                   else "; the refit's solve ran from the start")


def cmd_predict(args: argparse.Namespace, out: SafeText) -> int:
    """Run ``kernelselect predict``; 0 on success."""
    from sklearn.model_selection import train_test_split

    from .. import KernelSelectionCV
    from ._data import _load_data

    _check(args)
    data = _load_data(args)
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y)
    classes = data.task != "regression"
    if args.proba and not classes:
        raise CommandError("--proba needs class labels; this target is a regression "
                           "target (use --interval COVERAGE).")
    if args.interval is not None and classes:
        raise CommandError("--interval needs a real target; these are class labels (use "
                           "--proba), or pass --task regression.")
    tr, te = train_test_split(np.arange(X.shape[0]), test_size=args.test_fraction,
                              random_state=args.random_state,
                              stratify=y if classes else None)
    est = KernelSelectionCV(random_state=args.random_state,
                            task="regression" if not classes else "auto",
                            checkpoint=args.checkpoint)
    est.fit(X[tr], y[tr])
    pred = est.predict(X[te])
    columns = ["row", "target", "prediction"]
    table: list[list[Any]] = [[int(i), y[i], p] for i, p in zip(te, pred)]
    summary = []
    if classes:
        summary.append(f"accuracy {np.mean(pred == y[te]):.4f}")
    else:
        resid = y[te] - pred
        summary.append(f"R^2 {1 - np.sum(resid ** 2) / np.sum((y[te] - y[te].mean()) ** 2):.4f}")
    if args.proba:
        P = est.predict_proba(X[te])
        labels = np.asarray(est.classes_)
        columns += [f"p({c})" for c in labels]
        for row, p in zip(table, P):
            row.extend(p.tolist())
        hit = P[np.arange(len(te)), np.searchsorted(labels, y[te])]
        summary.append(f"log-loss {-np.mean(np.log(np.clip(hit, 1e-300, None))):.4f}")
    if args.interval is not None:
        interval = est.predict_interval(X[te], coverage=args.interval)
        columns += ["lower", "upper"]
        for row, b in zip(table, interval):
            row.extend(b.tolist())
        inside = (interval[:, 0] <= y[te]) & (y[te] <= interval[:, 1])
        summary.append(f"{args.interval:g} intervals: coverage {inside.mean():.4f}, "
                       f"mean width {np.mean(interval[:, 1] - interval[:, 0]):.4g}")
    out.write(f"data: {data.label}, {X.shape[0]} rows, {len(tr)} to fit, {len(te)} held "
              f"out (--test-fraction {args.test_fraction:g}, --random-state "
              f"{args.random_state})\n")
    out.write(f"selected: gamma {np.ravel(est.best_params_['gamma'])[0]:.6g}, alpha "
              f"{est.best_params_['alpha']:.6g}\n")
    if args.checkpoint is not None:
        out.write(f"checkpoint: {_resumed(est)}\n")

    def cell(v: Any) -> str:
        return f"{v:.6g}" if isinstance(v, (float, np.floating)) else str(v)

    if args.rows:
        out.write("  ".join(f"{c:>12}" for c in columns) + "\n")
        for row in table[:args.rows]:
            out.write("  ".join(f"{cell(v):>12}" for v in row) + "\n")
    out.write("held out: " + "; ".join(summary) + "\n")
    if args.output:
        import csv

        with open(args.output, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(columns)
            w.writerows([[cell(v) for v in row] for row in table])
        out.write(f"wrote {args.output}\n")
    return 0
