"""n = 10⁶, d = 10: the streamed Nyström level of 200 landmarks (α = 1, 15 γ, the
``eloo`` and ``gcv`` criteria) against its floor and against an earlier version of
the package, in the same run.

Each figure is one fresh interpreter (``streaming_scale.py``'s children): ``select``
on one thread (OMP/OPENBLAS_NUM_THREADS=1, workers=1) and on the default threads, for
this checkout's package and for the one ``--base-python`` imports, interleaved; and
``floor``, the kernel block K(X_b, Z) and the Gram product C_bᵀC_b of every row block
for the 15 γ on one thread (what the first pass cannot avoid; the leave-one-out error
needs a second pass over the rows for the hat-matrix diagonal).

Usage
-----
    python studies/speed_million.py --base-python OTHER_VENV/bin/python [--repeats 2] \
        [--label "idle"]
    python studies/speed_million.py --report

Records carry the ``--label`` of their run; the report has one table per run (its own
floor and load), so runs at different loads stand side by side instead of being pooled.
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

RAW = C.RESULTS / "speed_million_raw.jsonl"
REPORT = C.RESULTS / "speed_million.md"
N = 10 ** 6


def run(base_python, repeats, label):
    os.environ["STREAMING_SCALE_RESULTS"] = str(RAW)
    import streaming_scale as S

    fixed = {"kind": "select", "n": N, "approximation": "nystrom:200", "alphas": [1.0]}
    tag = {} if label is None else {"run": label}     # carried in the record's spec
    S.run_child({"kind": "floor", "n": N, **tag}, env=S.ONE)
    for _ in range(repeats):
        S.run_child(dict(fixed, workers=1, **tag), env=S.ONE)
        S.run_child(dict(fixed, workers=1, **tag), python=base_python, env=S.ONE)
        S.run_child(dict(fixed, **tag))
        S.run_child(dict(fixed, **tag), python=base_python)
    S.run_child({"kind": "floor", "n": N, **tag}, env=S.ONE)


def _table(recs):
    """The rows of one run's table and (its floor, its load range)."""
    floor = float(np.median([r["seconds"] for r in recs if r["spec"]["kind"] == "floor"]))
    # the floor runs in this checkout's interpreter; the other interpreter is the base
    here = {r["python"] for r in recs if r["spec"]["kind"] == "floor"}
    loads = [x for r in recs for x in (r["load_before"][0], r["load_after"][0])]
    rows = []
    for threads in ("one", "default"):
        sel = [r for r in recs if r["spec"]["kind"] == "select"
               and (r["spec"].get("workers") == 1) == (threads == "one")]
        this = [r for r in sel if r["python"] in here]
        base = [r for r in sel if r["python"] not in here]
        t_this = float(np.median([r["seconds"] for r in this]))
        t_base = float(np.median([r["seconds"] for r in base]))
        cpu = float(np.median([r["cpu_seconds"] / r["seconds"] for r in this]))
        same = all(r["best_gamma"] == this[0]["best_gamma"] for r in sel)
        rows.append(f"| {threads} | {len(this)} | {t_this:.1f} | {cpu:.2f} | {t_base:.1f} | "
                    f"{t_this / t_base:.2f} | {t_this / floor:.2f} | {'yes' if same else 'no'} |")
    return rows, floor, (min(loads), max(loads))


#: what the report says of runs recorded before records carried a label
FIRST_RUN = "this run's session had nice −10 beside other sessions' builds"


def report():
    recs = C.read_jsonl(RAW)
    runs: dict = {}
    for r in recs:
        runs.setdefault(r["spec"].get("run"), []).append(r)
    lines = [
        "# n = 10⁶: the streamed Nyström level against its floor and an earlier version",
        "",
        "`studies/speed_million.py` (raw records: `speed_million_raw.jsonl.gz`); synthetic "
        "data, d = 10, 200 landmarks, α = 1, the default 15 γ, criteria eloo and gcv. "
        "Floor: the kernel blocks and Gram products of the first pass, 15 γ, on one "
        "thread, timed in the same run (the work no streamed pass can avoid; the ratios "
        "of both thread settings are to this one-thread floor). *earlier*: the package "
        "at 0a9b296, same run. Load: the 1-minute average of the shared 2-core machine "
        "around the run's timings.",
    ]
    for label, group in runs.items():
        rows, floor, (lo, hi) = _table(group)
        lines += [
            "",
            f"## {label or 'first run'}: floor {floor:.1f} s, load {lo:.1f}–{hi:.1f}"
            + ("" if label else f" ({FIRST_RUN})"),
            "",
            "| threads | repeats | seconds (median) | CPU / wall | earlier (s) | "
            "ratio to earlier | ratio to floor | same γ |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
            *rows,
        ]
    REPORT.write_text("\n".join(lines) + "\n")
    C.write_archive(RAW, recs)
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base-python")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--label", default=None, help="names this run in the report")
    p.add_argument("--report", action="store_true")
    a = p.parse_args()
    if not a.report:
        run(a.base_python, a.repeats, a.label)
    report()


if __name__ == "__main__":
    main()
