"""Multi-fidelity selection: the coarse Nyström levels on a row subsample, the last
level on every row, against every level on every row.

``select_kernel(X, y, random_state=0)`` twice in one process on the same data: with
the library's rule (:data:`kernelselect._policy.SUBSAMPLE_ROWS` rows for the first grid
and the coarse levels when n exceeds twice it; the subsample's choice carried to all
rows by γ and the exponent of α/n) and with every level on all rows (the rule switched
off for the study). Recorded per run: the chosen (γ, α/n), the seconds, the levels
(landmarks, rows, γ evaluated), and the 1-minute load before and after.

When the two choices differ, both are refitted by the same machine and scored on
held-out rows, so that a different choice is judged by its test error:
``KernelRidgeRegressor(fit_intercept="mean")`` (``LSSVMClassifier`` for labels) with
``approximation="auto"``, ``random_state=0``.

``--rule-only`` runs the rule's selection alone, compared in the report with the
all-rows record of the same case made earlier (the 10⁶-row all-rows selection takes
20 minutes on two cores).

Cases:

* ``synthetic --n N``: ``fit_scale.py``'s data (d = 10, y = sin(2·Xw) + 0.1ε), N
  training rows in memory, 10⁴ test rows; ``--dask`` reads the same rows from a
  ``.npy`` file as row-chunked Dask arrays (``open_chunked``) on a ``LocalCluster`` of
  two single-threaded workers;
* ``real --rows R``: the largest shared sets (cadata, protein, a9a, w8a, htru2), a
  random 80 % trains and 20 % tests (seed 0), with the subsample size set to R for
  the study (the shared sets have at most 5·10⁴ rows, so at the default 2·10⁴ only
  the largest reach the rule): how the rule behaves at n/R from 3 to 8.

One thread (OMP_NUM_THREADS=1, ``workers=1``) in memory. Records made since the last
all-rows level grows past a grid edge (``extended``), and those since the all-rows
levels score the α path widened by the extensions' reach and a streamed operator takes
a whole α path in one pass over the rows (``widened``; the all-rows selections beyond
4·10⁴ rows gained from the second as well), are marked in the report; the earlier
ones are kept beside them. A ``--rule-only`` record is set beside the all-rows record
made before it. One JSON line per run in
``results/multi_fidelity_raw.jsonl``; ``report`` writes ``results/multi_fidelity.md``.

    python studies/multi_fidelity.py synthetic --n 200000
    python studies/multi_fidelity.py synthetic --n 1000000 --dask
    python studies/multi_fidelity.py real --rows 5000
    python studies/multi_fidelity.py report
"""

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

import _common as C

RAW = C.RESULTS / "multi_fidelity_raw.jsonl"
REPORT = C.RESULTS / "multi_fidelity.md"
REAL = ("cadata", "protein", "a9a", "w8a", "htru2")


def load():
    return [round(v, 2) for v in os.getloadavg()]


def select(X, y, rows, workers=1):
    """select_kernel with the coarse levels on ``rows`` rows (None: every level on all
    rows): (record, result)."""
    import kernelselect
    from kernelselect import _policy

    keep = _policy.coarse_rows
    if rows is None:
        _policy.coarse_rows = lambda n: None
    elif rows != _policy.SUBSAMPLE_ROWS:
        _policy.coarse_rows = lambda n: rows if n > 2 * rows else None
    try:
        before = load()
        t0 = time.perf_counter()
        res = kernelselect.select_kernel(X, y, random_state=0, workers=workers)
        seconds = time.perf_counter() - t0
    finally:
        _policy.coarse_rows = keep
    n = X.shape[0]
    auto = res.details.get("auto", {})
    levels = [{k: lv[k] for k in ("approximation", "gammas", "best_gamma", "best_alpha",
                                  "effective_dimension", "stable", "seconds") if k in lv}
              for lv in auto.get("levels", [])]
    rec = {"rows": rows, "seconds": seconds, "gamma": float(res.best_gamma),
           "alpha": float(res.best_alpha), "mu": float(res.best_alpha) / n,
           "levels": levels, "subsample": auto.get("subsample"),
           "builds": res.details.get("n_operator_builds"), "load": [before, load()]}
    return rec, res


def test_error(Xtr, ytr, Xte, yte, task, gamma, alpha):
    """Test NMSE (regression) or error rate of the refitted machine at (γ, α)."""
    from kernelselect import KernelRidgeRegressor, LSSVMClassifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if task == "regression":
            model = KernelRidgeRegressor(kernel="gaussian", gamma=gamma, alpha=alpha,
                                         fit_intercept="mean", random_state=0).fit(Xtr, ytr)
            pred = np.asarray(model.predict(Xte))
            return float(np.mean((pred - yte) ** 2) / np.var(yte))
        model = LSSVMClassifier(kernel="gaussian", gamma=gamma, alpha=alpha,
                                random_state=0).fit(Xtr, ytr)
        return float(np.mean(np.asarray(model.predict(Xte)) != yte))


def compare(case, Xtr, ytr, Xte, yte, task, rows, select_X=None, rule_only=False):
    """Both selections on the same data, and the test errors where they differ
    (``rule_only``: the rule's selection alone, against an earlier all-rows record)."""
    sx = Xtr if select_X is None else select_X
    sy = ytr if select_X is None else select_X[1]
    if select_X is not None:
        sx = select_X[0]
    multi, _ = select(sx, sy, rows)
    if rule_only:
        rec = dict(case, task=task, n=int(Xtr.shape[0]), multi=multi, every=None,
                   extended=True, widened=True)
        C.append_record(RAW, rec)
        C.log({k: v for k, v in rec.items() if k != "multi"}, multi["gamma"], multi["mu"],
              "seconds", round(multi["seconds"], 1))
        return rec
    every, _ = select(sx, sy, None)
    rec = dict(case, task=task, n=int(Xtr.shape[0]), multi=multi, every=every, extended=True,
               widened=True)
    rec["same_choice"] = bool(np.isclose(multi["gamma"], every["gamma"])
                              and np.isclose(multi["alpha"], every["alpha"]))
    if not rec["same_choice"]:
        rec["test_multi"] = test_error(Xtr, ytr, Xte, yte, task, multi["gamma"], multi["alpha"])
        rec["test_every"] = test_error(Xtr, ytr, Xte, yte, task, every["gamma"], every["alpha"])
    C.append_record(RAW, rec)
    C.log({k: v for k, v in rec.items() if k not in ("multi", "every")},
          "seconds", round(multi["seconds"], 1), round(every["seconds"], 1))
    return rec


def synthetic_case(args):
    sys.path.insert(0, str(C.REPO / "studies"))
    from fit_scale import synthetic

    from kernelselect import _policy

    rows = args.rows or _policy.SUBSAMPLE_ROWS
    Xtr, ytr = synthetic(args.n)
    Xte, yte = synthetic(10_000, seed=1)
    case = {"case": "synthetic", "dask": bool(args.dask), "subsample_rows": rows}
    if not args.dask:
        compare(case, Xtr, ytr, Xte, yte, "regression", rows)
        return
    from dask.distributed import Client, LocalCluster

    from kernelselect.datasets import open_chunked

    path = Path(tempfile.gettempdir()) / f"kernelselect_multi_fidelity_{args.n}.npy"
    if not path.exists():
        np.save(path, np.column_stack([Xtr, ytr]))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        Xd, yd = open_chunked(str(path), chunk_rows=args.chunk_rows)
        compare(case, Xtr, ytr, Xte, yte, "regression", rows, select_X=(Xd, yd),
                rule_only=args.rule_only)


def real_case(args):
    for name in args.datasets.split(","):
        d = C.load_data(name)
        task = d.task if d.task in ("regression", "binary") else "multiclass"
        X, y = C.load(name) if task == "binary" else (np.asarray(d.X, float),
                                                       np.asarray(d.y, float))
        rng = np.random.default_rng(0)
        order = rng.permutation(X.shape[0])
        cut = int(0.8 * X.shape[0])
        tr, te = np.sort(order[:cut]), np.sort(order[cut:])
        Xtr, Xte = C.standardise(X[tr], X[te])
        ytr, yte = y[tr], y[te]
        if task == "regression":
            mu, sd = ytr.mean(), ytr.std()
            ytr, yte = (ytr - mu) / sd, (yte - mu) / sd
        compare({"case": name, "dask": False, "subsample_rows": args.rows}, Xtr, ytr, Xte,
                yte, task, args.rows)


def report(args):
    recs = C.read_jsonl(RAW)
    lines = C.report_head(
        "Multi-fidelity selection",
        "Generated by `studies/multi_fidelity.py report`. Each row: `select_kernel(X, y, "
        "random_state=0)` with the coarse levels on a row subsample (the rule) and with "
        "every level on all rows, same data, same process, one thread in memory (Dask: "
        "two single-threaded workers). α/n is the per-sample ridge; the test error "
        "(NMSE, or the error rate of labels) is given where the two choices differ, "
        "both refitted by the same machine.",
        [("case", "l"), ("n", "r"), ("subsample rows", "r"), ("levels on all rows", "l"),
         ("(γ, α/n) subsample rule", "l"), ("(γ, α/n) all rows", "l"),
         ("seconds rule / all rows", "r"), ("ratio", "r"), ("last level s (rule)", "r"),
         ("test error rule / all rows", "r"), ("load", "l")])
    for i, r in enumerate(recs):
        mu, ev = r["multi"], r["every"]
        if ev is None:                  # the all-rows record made before this one
            earlier = [e["every"] for e in recs[:i] if e["case"] == r["case"]
                       and e["n"] == r["n"] and e["dask"] == r["dask"]
                       and e["every"] is not None]
            ev = earlier[-1] if earlier else None
        if ev is None:
            continue
        r = dict(r, same_choice=bool(np.isclose(mu["gamma"], ev["gamma"])
                                     and np.isclose(mu["alpha"], ev["alpha"])))
        full = [lv["approximation"] for lv in mu["levels"]
                if "approximation" in lv and " on " not in lv["approximation"]]
        last_levels = [lv["seconds"] for lv in mu["levels"] if "approximation" in lv]
        last = last_levels[-1] if last_levels else float("nan")
        test = ("same choice" if r["same_choice"]
                else "not measured (see the notes)" if r.get("test_multi") is None
                else f"{r['test_multi']:.4f} / {r['test_every']:.4f}")
        version = (" (all-rows α path widened, one pass per α path)" if r.get("widened")
                   else " (last level extended at an edge)" if r.get("extended") else "")
        lines.append(
            f"| {r['case']}{' (Dask)' if r['dask'] else ''}{version} | {r['n']} | "
            f"{r['subsample_rows']} | {', '.join(full) or '—'} | "
            f"({mu['gamma']:.4g}, {mu['mu']:.3g}) | ({ev['gamma']:.4g}, {ev['mu']:.3g}) | "
            f"{mu['seconds']:.1f} / {ev['seconds']:.1f} | {mu['seconds'] / ev['seconds']:.2f} | "
            f"{last:.1f} | "
            f"{test} | {mu['load'][0][0]} → {ev['load'][1][0]} |")
    lines += C.note_lines(recs, lambda r: f"{r['case']} n = {r['n']}"
                                          f"{' (Dask)' if r['dask'] else ''}", end=".")
    C.write_report(REPORT, lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("synthetic")
    s.add_argument("--n", type=int, required=True)
    s.add_argument("--rows", type=int, default=None)
    s.add_argument("--dask", action="store_true")
    s.add_argument("--chunk-rows", type=int, default=100_000)
    s.add_argument("--rule-only", action="store_true",
                   help="the rule's selection alone (the all-rows one is recorded already)")
    r = sub.add_parser("real")
    r.add_argument("--rows", type=int, default=5000)
    r.add_argument("--datasets", default=",".join(REAL))
    sub.add_parser("report")
    args = parser.parse_args(argv)
    {"synthetic": synthetic_case, "real": real_case, "report": report}[args.command](args)


if __name__ == "__main__":
    main()
