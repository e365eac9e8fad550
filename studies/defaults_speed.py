"""Speed of the defaults against 5-fold GridSearchCV(KernelRidge) in the same run.

``kernelselect.select_kernel(X, y, random_state=0)`` with its defaults against
scikit-learn's ``GridSearchCV(KernelRidge(kernel="rbf"), {"gamma": 15 values (the
median-heuristic grid), "alpha": 5 values n_fit·10^k, k = −4…0}, cv=KFold(5))``, one
thread on each side (OMP/OPENBLAS_NUM_THREADS=1 is set before numpy loads).

Data: the training half of split 0 of a shared set (``_common.capped_half_split``, as
the defaults study draws it: features standardised on the half, regression targets
standardised, binary labels as ±1), capped at ``--n-train`` rows by one seeded
subsample. ``--n-train 1000 --min-rows 2000`` runs every binary and regression set with
at least 2000 rows, so every training set has exactly 1000 rows.

For each set, in this order and in the same run: the defaults of an older checkout
(``--before DIR``: a directory holding its ``kernelselect`` package with the compiled
modules, run in a fresh interpreter that times only the call), the defaults of the
installed package, and GridSearchCV. The machine's 1-minute load is recorded around
each timing.

At large n each of the 375 fits of GridSearchCV factorises an n_fit × n_fit matrix; the
full search would take hours on a shared machine, so it is timed on
``--cv-candidates`` of its 75 (γ, α) candidates (5 fits each, evenly spread over the
candidate list, the same code path) and scaled to 75 — the search's cost is the sum of
independent candidate costs of the same size. The report says which figures are
measured and which are scaled.

Raw records are appended to ``results/defaults_speed_raw.jsonl``; ``--report`` writes
``results/defaults_speed.md`` from them (and the archive ``.jsonl.gz``).

Usage
-----
    python studies/defaults_speed.py --n-train 1000 --min-rows 2000 --before DIR
    python studies/defaults_speed.py --n-train 3600 --datasets cadata,protein,pol,htru2 \\
        --cv-candidates 5 --before DIR
    python studies/defaults_speed.py --n-train 10000 --datasets cadata,protein \\
        --cv-candidates 3 --before DIR
    python studies/defaults_speed.py --report
    python studies/defaults_speed.py --sizes 1000,10000 --cv-candidates 0,3 --out FILE.json
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import _common as C  # noqa: E402

RAW = C.RESULTS / "defaults_speed_raw.jsonl"
REPORT = C.RESULTS / "defaults_speed.md"


def load(name, task, n_train):
    """Training half of split 0 of ``name``, capped at ``n_train`` rows; binary labels ±1."""
    data = C.load_data(name)
    Xtr, ytr, _, _, _, _ = C.capped_half_split(name, task, data, 0, n_train, 1)
    if task == "binary":
        ytr = C.targets(ytr, task)[0][:, 0]
    return Xtr, np.asarray(ytr, dtype=np.float64)


def time_defaults(X, y):
    """(seconds, result) of ``select_kernel(X, y, random_state=0)``, after a warm-up call."""
    import kernelselect

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(0)                     # first-call costs, off the clock
        kernelselect.select_kernel(rng.standard_normal((60, 3)), rng.standard_normal(60),
                                   random_state=0)
        t0 = time.perf_counter()
        res = kernelselect.select_kernel(X, y, random_state=0)
        return time.perf_counter() - t0, res


def child(name, task, n_train, code):
    """The defaults of the checkout in ``code``, timed in this (fresh) interpreter."""
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "MesonpyMetaFinder"]
    sys.path.insert(0, str(code))
    X, y = load(name, task, n_train)
    seconds, res = time_defaults(X, y)
    print(json.dumps(dict(seconds=seconds, approximation=res.details.get("approximation"),
                          gamma=res.best_gamma, alpha=res.best_alpha)))


def before(name, task, n_train, code):
    out = subprocess.run([sys.executable, __file__, "--child", name, task, str(n_train),
                          str(code)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def gridsearch(X, y, cv_candidates):
    """(seconds scaled to the 75 candidates, seconds measured, candidates measured)."""
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, KFold

    from kernelselect.selection import default_gammas

    gammas = default_gammas(X, random_state=0)
    n = X.shape[0]
    alphas = (n - n // 5) * 10.0 ** np.arange(-4, 1)
    cands = [(g, a) for g in gammas for a in alphas]
    take = len(cands) if cv_candidates <= 0 else min(cv_candidates, len(cands))
    pick = np.linspace(0, len(cands) - 1, take).round().astype(int)
    grids = ([{"gamma": list(map(float, gammas)), "alpha": list(map(float, alphas))}]
             if take == len(cands) else
             [{"gamma": [float(cands[i][0])], "alpha": [float(cands[i][1])]} for i in pick])
    t0 = time.perf_counter()
    for grid in grids:
        GridSearchCV(KernelRidge(kernel="rbf"), grid, cv=KFold(5, shuffle=True, random_state=0),
                     scoring="neg_mean_squared_error", n_jobs=1, refit=False).fit(X, y)
    measured = time.perf_counter() - t0
    return measured * len(cands) / take, measured, take, len(cands)


def run(name, task, n_train, cv_candidates, code):
    X, y = load(name, task, n_train)
    rec = dict(dataset=name, task=task, n=int(X.shape[0]), d=int(X.shape[1]),
               threads=os.environ.get("OMP_NUM_THREADS"))
    if code:
        rec["load_before_old"] = os.getloadavg()[0]
        old = before(name, task, n_train, code)
        rec.update(before_seconds=old["seconds"], before_approximation=old["approximation"],
                   before_gamma=old["gamma"], before_alpha=old["alpha"])
    rec["load_before"] = os.getloadavg()
    t_def, res = time_defaults(X, y)
    rec["load_after_defaults"] = os.getloadavg()[0]
    t_cv, t_part, take, total = gridsearch(X, y, cv_candidates)
    rec.update(defaults_seconds=t_def, gridsearch_seconds=t_cv,
               gridsearch_measured_candidates=int(take), gridsearch_candidates=total,
               gridsearch_measured_seconds=t_part, ratio=t_cv / t_def,
               gamma=res.best_gamma, alpha=res.best_alpha,
               approximation=res.details.get("approximation"),
               levels=[{k: v for k, v in lv.items() if k != "gammas"}
                       for lv in res.details.get("auto", {}).get("levels", [])],
               load_after=os.getloadavg())
    if code:
        rec["ratio_before"] = t_cv / rec["before_seconds"]
    return rec


def _median_row(label, recs):
    r = np.array([x["ratio"] for x in recs])
    t = np.array([x["defaults_seconds"] for x in recs])
    b = [x["before_seconds"] for x in recs if "before_seconds" in x]
    rb = [x["ratio_before"] for x in recs if "ratio_before" in x]
    loads = [v for x in recs for v in (x["load_before"][0], x["load_after"][0])]
    return (f"| {label} | {len(recs)} | {np.median(b):.2f} | {np.median(t):.2f} | "
            f"{np.median(rb):.0f}× | {np.median(r):.0f}× (min {r.min():.0f}×, max {r.max():.0f}×)"
            f" | {min(loads):.1f}–{max(loads):.1f} |" if b else
            f"| {label} | {len(recs)} | – | {np.median(t):.2f} | – | {np.median(r):.0f}× | "
            f"{min(loads):.1f}–{max(loads):.1f} |")


def report():
    recs = C.read_jsonl(RAW)
    latest = {}
    for r in recs:
        latest[(r.get("run", ""), r["dataset"], r["n"])] = r
    recs = sorted(latest.values(), key=lambda r: (r.get("run", ""), r["n"], r["dataset"]))
    C.write_archive(RAW, recs, separators=(",", ":"))
    runs = sorted({(r.get("run", ""), r["n"]) for r in recs})
    lines = ["# Speed of the defaults against GridSearchCV(KernelRidge)", "",
             "`studies/defaults_speed.py` (raw records: `defaults_speed_raw.jsonl.gz`). "
             "Training half of split 0 of each shared set, capped at n_train rows; "
             "`select_kernel(X, y, random_state=0)` against 5-fold "
             "`GridSearchCV(KernelRidge(kernel=\"rbf\"))` over 15 γ × 5 α, one thread each "
             "(OMP/OPENBLAS_NUM_THREADS=1), one after the other in the same run. *before*: "
             "the defaults of the package before the streamed-pass change, same run, fresh "
             "interpreter. Ratio = GridSearchCV seconds / defaults seconds; the load is the "
             "1-minute load average of the shared 2-core machine around the timings.", "",
             "| run | n_train | sets | before (s, median) | defaults (s, median) | "
             "median ratio before | median ratio | load |",
             "|---|---:|---:|---:|---:|---:|---|---|"]
    for run_label, n in runs:
        lines.append(_median_row(f"{run_label or '–'} | {n}", [
            r for r in recs if r["n"] == n and r.get("run", "") == run_label]))
    lines += ["", "| run | dataset | n_train | d | before (s) | defaults (s) | approximation | "
              "GridSearchCV (s) | measured | ratio | load |",
              "|---|---|---:|---:|---:|---:|---|---:|---|---:|---|"]
    for r in recs:
        meas = ("75 of 75" if r["gridsearch_measured_candidates"] == r["gridsearch_candidates"]
                else f"{r['gridsearch_measured_candidates']} of 75 "
                     f"({r['gridsearch_measured_seconds']:.0f} s), scaled")
        b = f"{r['before_seconds']:.2f}" if "before_seconds" in r else "–"
        lines.append(f"| {r.get('run', '') or '–'} | {r['dataset']} | {r['n']} | {r['d']} | {b} | "
                     f"{r['defaults_seconds']:.2f} | {r['approximation']} | "
                     f"{r['gridsearch_seconds']:.1f} | {meas} | {r['ratio']:.0f}× | "
                     f"{r['load_before'][0]:.1f}–{r['load_after'][0]:.1f} |")
    C.write_report(REPORT, lines + [""])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n-train", type=int, default=1000)
    p.add_argument("--datasets", default=None, help="comma-separated (default: every "
                   "binary and regression set with at least --min-rows rows)")
    p.add_argument("--min-rows", type=int, default=2000)
    p.add_argument("--cv-candidates", default="0",
                   help="GridSearchCV candidates timed (0 = all 75); with --sizes, one per size")
    p.add_argument("--sizes", default=None,
                   help="comma-separated n_train values on cadata (or --datasets), the "
                        "earlier form of this study; with --out, the records as one JSON list")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--label", default=None,
                   help="name of this run in the report (runs at different loads side by side)")
    p.add_argument("--before", default=None, help="directory holding an older kernelselect")
    p.add_argument("--report", action="store_true")
    p.add_argument("--child", nargs=4, default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        name, task, n_train, code = a.child
        child(name, task, int(n_train), code)
        return
    if a.report:
        report()
        return
    if a.sizes:     # the earlier form: cadata at several sizes, one candidate count each
        runs = list(zip(map(int, a.sizes.split(",")), map(int, a.cv_candidates.split(","))))
        datasets = a.datasets or "cadata"
    else:
        runs, datasets = [(a.n_train, int(a.cv_candidates))], a.datasets
    sets = [(name, task) for name, task, n, _ in C.list_data()
            if task in ("binary", "regression") and n >= a.min_rows
            and (datasets is None or name in datasets.split(","))]
    out = []
    for n_train, candidates in runs:
        for name, task in sets:
            rec = run(name, task, n_train, candidates, a.before)
            if a.label:
                rec["run"] = a.label
            C.log(name, rec["n"], f"defaults {rec['defaults_seconds']:.2f} s",
                  f"before {rec.get('before_seconds', float('nan')):.2f} s",
                  f"cv {rec['gridsearch_seconds']:.1f} s", f"ratio {rec['ratio']:.0f}")
            with open(RAW, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            out.append(rec)
    if a.out:
        a.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
