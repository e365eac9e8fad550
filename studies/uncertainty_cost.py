"""What ``predict_proba`` costs on a bare machine, against its arithmetic floor and
against ``SVC(probability=True)``, as the training set grows.

Data: htru2 (binary, d = 8, 17 898 rows), one seeded split (``_common.seeded_split``)
with n training rows for each n of ``--n`` and up to 2000 of the others as test rows,
features standardised on the training rows. (γ, α) as the large-n records of
``uncertainty_quality.py``: ``KernelSelectionClassifier`` on 2000 training rows, α scaled
by n/2000 (the LSSVM's α grows with n at a fixed per-row ridge).

For each n, in one process, at the machine's default threads (``--threads 1`` for one),
the best of ``--repeats`` fresh fits:

- ``LSSVMClassifier(gamma, alpha)``: seconds of ``fit``, of ``predict`` and of
  ``predict_proba`` (leave-one-out values and calibration included) on a fresh fit, and
  which machine ``approximation="auto"`` fitted (exact up to 10⁴ rows here, the Nyström
  conjugate-gradient machine beyond); and fit + ``predict_proba`` of
  ``LSSVMClassifier(gamma, alpha, uncertainty=True)`` (records that have it), whose fit
  takes the leave-one-out from its own factor;
- the floor of the exact machine's leave-one-out: the kernel matrix, its Cholesky
  factorisation (what the fit pays) and the triangular inverse (``dtrtri``, n³/3 flops
  more: diag(K_α⁻¹) needs the column norms of L⁻¹, and no O(n²) route to the diagonal
  of a dense inverse exists);
- scikit-learn's ``SVC(probability=True)`` at the (C, γ) of a 3-fold ``GridSearchCV`` on
  2000 training rows (the grid of ``uncertainty_quality.py``), fitted once on the n rows,
  and ``SVC()`` at the same (C, γ) (its internal 5-fold Platt calibration is the
  difference).

    python studies/uncertainty_cost.py run --n 1000 2000 4000 8000 16000
    python studies/uncertainty_cost.py report
"""

import argparse
import gzip
import json
import os
import time
import warnings

import numpy as np

import _common as C
from uncertainty_quality import SVC_C, SVC_GAMMA

RAW = C.RESULTS / "uncertainty_cost_raw.jsonl.gz"
OUT = C.RESULTS / "uncertainty_cost.md"
SET = "htru2"


def best_of(repeats, f):
    """(the last result, the fewest seconds of ``repeats`` calls of f())."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return out, best


def floor_seconds(X, gamma, alpha, repeats):
    """Seconds of K(X, X) + αI, its Cholesky factor and the factor's inverse."""
    from scipy.linalg import lapack

    from kernelselect import lowlevel

    K, t_kernel = best_of(repeats, lambda: lowlevel.kernel_block(X, X, gamma))
    K[np.diag_indices_from(K)] += alpha

    def factor():
        return lapack.dpotrf(K, lower=1, clean=1, overwrite_a=0)[0]

    L, t_potrf = best_of(repeats, factor)
    _, t_trtri = best_of(repeats, lambda: lapack.dtrtri(L, lower=1, overwrite_c=0)[0])
    return {"t_kernel": t_kernel, "t_potrf": t_potrf, "t_trtri": t_trtri}


def one(n, repeats, test=2000):
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    from kernelselect import KernelSelectionClassifier, LSSVMClassifier

    X, y = C.load(SET)
    tr, te, rng = C.seeded_split(X.shape[0], SET, 0, n)
    te = te[:test]
    Xtr, Xte = C.standardise(X[tr], X[te])
    ytr = y[tr]
    sub = rng.choice(n, min(n, 2000), replace=False)
    sel = KernelSelectionClassifier(random_state=0, standardize=False).fit(Xtr[sub], ytr[sub])
    g = sel.best_params_["gamma"]
    a = sel.best_params_["alpha"] * n / sub.size
    make = LSSVMClassifier(gamma=g, alpha=a, random_state=0).fit
    model, t_fit = best_of(repeats, lambda: make(Xtr, ytr))
    _, t_fit_pred = best_of(repeats, lambda: make(Xtr, ytr).predict(Xte))
    _, t_fit_proba = best_of(repeats, lambda: make(Xtr, ytr).predict_proba(Xte))
    eager = LSSVMClassifier(gamma=g, alpha=a, random_state=0, uncertainty=True).fit
    _, t_eager = best_of(repeats, lambda: eager(Xtr, ytr).predict_proba(Xte))
    fitted = make(Xtr, ytr)
    _, t_pred = best_of(repeats, lambda: fitted.predict(Xte))
    rec = {"set": SET, "n": n, "d": X.shape[1], "gamma": np.asarray(g).tolist(), "alpha": a,
           "machine": model.approximation_, "threads": os.environ.get("OMP_NUM_THREADS"),
           "t_fit": t_fit, "t_predict": t_pred, "t_fit_predict": t_fit_pred,
           "t_fit_proba": t_fit_proba, "t_fit_proba_uncertainty": t_eager,
           "load_before": list(os.getloadavg())}
    if model.approximation_ == "exact":
        rec.update(floor_seconds(np.ascontiguousarray(Xtr), g, a, repeats)
                   if np.ndim(g) == 0 else {})
    grid = GridSearchCV(SVC(), {"C": SVC_C, "gamma": SVC_GAMMA}, cv=3).fit(Xtr[sub], ytr[sub])
    _, t_svc = best_of(1, lambda: SVC(**grid.best_params_).fit(Xtr, ytr))
    _, t_svc_proba = best_of(1, lambda: SVC(probability=True, random_state=0,
                                            **grid.best_params_).fit(Xtr, ytr))
    rec.update(svc_params=grid.best_params_, t_svc_fit=t_svc, t_svc_proba_fit=t_svc_proba,
               load_after=list(os.getloadavg()))
    return rec


def run(args):
    for n in args.n:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rec = one(n, args.repeats)
        rec["run"] = args.label
        with gzip.open(RAW, "at") as fh:
            fh.write(json.dumps(rec) + "\n")
        C.log(json.dumps({k: (round(v, 4) if isinstance(v, float) else v)
                          for k, v in rec.items()}))


def report(_args):
    recs = [json.loads(line) for line in gzip.open(RAW, "rt")]
    out = ["# What predict_proba costs on a bare machine", "",
           "Written by `studies/uncertainty_cost.py report` from "
           "`results/uncertainty_cost_raw.jsonl.gz` (protocol in the script's docstring): "
           "htru2, the bare `LSSVMClassifier` at a fixed (γ, α), best of the repeats, "
           "seconds on this 2-core machine at the load given.", "",
           "| n | machine | fit | fit + predict | fit + predict_proba | ratio | "
           "uncertainty=True: fit + predict_proba | its ratio | "
           "floor: K / Cholesky / L⁻¹ | floor ratio | SVC fit | SVC(probability=True) fit | "
           "predict_proba's extra / SVC(probability=True) | fit + predict_proba / "
           "SVC(probability=True) | load |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|"]
    for r in sorted(recs, key=lambda r: r["n"]):
        ratio = r["t_fit_proba"] / r["t_fit_predict"]
        extra = (r["t_fit_proba"] - r["t_fit_predict"]) / r["t_svc_proba_fit"]
        whole = r["t_fit_proba"] / r["t_svc_proba_fit"]
        if "t_trtri" in r:
            floor = f"{r['t_kernel']:.3f} / {r['t_potrf']:.3f} / {r['t_trtri']:.3f}"
            fr = f"{(r['t_fit_predict'] + r['t_trtri']) / r['t_fit_predict']:.2f}"
        else:
            floor, fr = "—", "—"
        eager = r.get("t_fit_proba_uncertainty")
        eager_cells = ("— | —" if eager is None
                       else f"{eager:.3f} | {eager / r['t_fit_predict']:.2f}")
        out.append(f"| {r['n']} | {r['machine']} | {r['t_fit']:.3f} | {r['t_fit_predict']:.3f} | "
                   f"{r['t_fit_proba']:.3f} | {ratio:.2f} | {eager_cells} | {floor} | {fr} | "
                   f"{r['t_svc_fit']:.2f} | {r['t_svc_proba_fit']:.2f} | {extra:.2f} | "
                   f"{whole:.2f} | {r['load_before'][0]:.1f}–{r['load_after'][0]:.1f} |")
    eager = [r["t_fit_proba_uncertainty"] / r["t_fit_predict"] for r in recs
             if "t_fit_proba_uncertainty" in r]
    if eager:
        out += ["", f"- with `uncertainty=True`, (fit + predict_proba) / (fit + predict): "
                f"median {np.median(eager):.2f}, range {min(eager):.2f}–{max(eager):.2f} "
                f"over {len(eager)} sizes"]
    out += ["", "`ratio` = (fit + predict_proba) / (fit + predict); `floor ratio` = (fit + "
            "predict + the triangular inverse alone) / (fit + predict): what the exact "
            "leave-one-out costs at least if the fit's factor were kept, since diag(K_α⁻¹) "
            "needs L⁻¹ after the fit's L.", ""]
    C.write_report(OUT, out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 4000, 8000, 16000])
    r.add_argument("--repeats", type=int, default=3)
    r.add_argument("--label", default=None)
    sub.add_parser("report")
    args = p.parse_args()
    run(args) if args.cmd == "run" else report(args)


if __name__ == "__main__":
    main()
