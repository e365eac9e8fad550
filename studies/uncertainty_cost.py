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

``sets`` times the same ratios on the issue's own sets: every shared binary and
regression set, training halves capped at 1000 rows and test halves at 2000 (the
splits of ``uncertainty_quality.py``), the refit machine of the selection estimator at
its chosen (γ, α), bare: fit + ``predict`` against fit + ``predict_proba`` (classifiers)
or fit + ``predict_interval`` (regressors, jackknife+ on exact machines), on first use
and with ``uncertainty=True``; best of ``--repeats``. Its floor adds to fit + predict
what the exact leave-one-out must compute after the fit's factor: the triangular
inverse (both), and for jackknife+ the weights K_α⁻¹k(x) of every test row (two
triangular products with n_test columns, 2n²·n_test flops), each timed on the BLAS
threads the library gives that many flops (one thread for these small problems).

    python studies/uncertainty_cost.py sets --splits 0 1
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


def one_set(name, kind, split, repeats):
    """The bare refit machine's times on one shared set and split (module notes)."""
    from scipy.linalg import blas, lapack

    from kernelselect import KernelSelectionClassifier, KernelSelectionRegressor, datasets
    from kernelselect import lowlevel
    from kernelselect.utils._threads import blas_for_flops
    from uncertainty_quality import CAP, TEST_CAP

    data = datasets.load(name)
    Xtr, ytr, Xte, _, _, seed = C.capped_half_split(name, kind, data, split, CAP, TEST_CAP)
    est = (KernelSelectionClassifier if kind == "binary" else KernelSelectionRegressor)(
        random_state=seed).fit(Xtr, ytr)
    scaler, machine = est.best_estimator_[0], est.best_estimator_[-1]
    Ztr = np.ascontiguousarray(scaler.transform(Xtr))
    Zte = np.ascontiguousarray(scaler.transform(Xte))
    params = machine.get_params()
    cls = type(machine)
    method = "predict_proba" if kind == "binary" else "predict_interval"
    _, t_fit_predict = best_of(repeats, lambda: cls(**params).fit(Ztr, ytr).predict(Zte))
    _, t_lazy = best_of(repeats, lambda: getattr(cls(**params).fit(Ztr, ytr), method)(Zte))
    eager = dict(params, uncertainty=True)
    _, t_eager = best_of(repeats, lambda: getattr(cls(**eager).fit(Ztr, ytr), method)(Zte))
    fitted = cls(**params).fit(Ztr, ytr)
    rec = {"kind": "set", "task": kind, "set": name, "split": split, "n": len(ytr),
           "n_test": len(Zte), "machine": fitted.approximation_,
           "kernel": str(params.get("kernel")), "t_fit_predict": t_fit_predict,
           "t_fit_method": t_lazy, "t_fit_method_uncertainty": t_eager,
           "load_before": list(os.getloadavg())}
    if fitted.approximation_ == "exact":
        g, a = fitted.model_.gamma, fitted.alpha_
        K = lowlevel.kernel_block(Ztr, Ztr, g, kernel=fitted.model_.kernel)
        K[np.diag_indices_from(K)] += a
        L = lapack.dpotrf(K, lower=1, clean=1)[0]
        n = len(ytr)
        with blas_for_flops(float(n) ** 3 / 3):     # the threads the fit gives its inverse
            _, rec["t_trtri"] = best_of(repeats, lambda: lapack.dtrtri(L, lower=1)[0])
        if kind == "regression":
            B = np.asfortranarray(lowlevel.kernel_block(Zte, Ztr, g,
                                                        kernel=fitted.model_.kernel).T)

            def weights():
                return blas.dtrmm(1.0, L, blas.dtrmm(1.0, L, B, lower=1), lower=1, trans_a=1)
            with blas_for_flops(2.0 * n * n * B.shape[1]):   # as ExactSmoother.solve
                _, rec["t_weights"] = best_of(repeats, weights)
    rec["load_after"] = list(os.getloadavg())
    return rec


def sets(args):
    from kernelselect import datasets

    for info in datasets.list_datasets():
        kind = {"binary": "binary", "regression": "regression"}.get(info.task)
        if kind is None or (args.sets and info.name not in args.sets):
            continue
        for split in args.splits:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rec = one_set(info.name, kind, split, args.repeats)
            with gzip.open(RAW, "at") as fh:
                fh.write(json.dumps(rec) + "\n")
            C.log(json.dumps({k: (round(v, 4) if isinstance(v, float) else v)
                              for k, v in rec.items()}))


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
    every = [json.loads(line) for line in gzip.open(RAW, "rt")]
    recs = [r for r in every if r.get("kind") != "set"]
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
    out += set_lines([r for r in every if r.get("kind") == "set"])
    C.write_report(OUT, out)


def set_lines(recs):
    """The per-set section of the report (``sets``)."""
    if not recs:
        return []
    out = ["## On the shared sets", "",
           "`studies/uncertainty_cost.py sets`: the selection estimator's refit machine, "
           "bare, at its (γ, α); training halves capped at 1000 rows, test halves at 2000; "
           "best of the repeats. Ratios to fit + predict; the floor adds the triangular "
           "inverse and, for jackknife+, the weights of the test rows (exact machines).", "",
           "| set | task | split | n | n test | machine | fit + predict s | ratio on first use "
           "| ratio with uncertainty=True | floor ratio | load |",
           "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|"]
    floors = {}
    for r in sorted(recs, key=lambda r: (r["task"], r["set"], r["split"])):
        base = r["t_fit_predict"]
        floor = None
        if "t_trtri" in r:
            floor = (base + r["t_trtri"] + r.get("t_weights", 0.0)) / base
            floors.setdefault(r["task"], []).append(floor)
        out.append(f"| {r['set']} | {r['task']} | {r['split']} | {r['n']} | {r['n_test']} | "
                   f"{r['machine']} | {base:.4f} | {r['t_fit_method'] / base:.2f} | "
                   f"{r['t_fit_method_uncertainty'] / base:.2f} | "
                   f"{'—' if floor is None else f'{floor:.2f}'} | "
                   f"{r['load_before'][0]:.1f}–{r['load_after'][0]:.1f} |")
    out.append("")
    for task in ("binary", "regression"):
        rs = [r for r in recs if r["task"] == task]
        if not rs:
            continue
        eager = [r["t_fit_method_uncertainty"] / r["t_fit_predict"] for r in rs]
        lazy = [r["t_fit_method"] / r["t_fit_predict"] for r in rs]
        line = (f"- {task}: median ratio with `uncertainty=True` {np.median(eager):.2f} "
                f"(range {min(eager):.2f}–{max(eager):.2f}), on first use "
                f"{np.median(lazy):.2f}, over {len(rs)} set-splits")
        if task in floors:
            line += (f"; the floor's median {np.median(floors[task]):.2f} "
                     f"(range {min(floors[task]):.2f}–{max(floors[task]):.2f})")
        out.append(line + " (target ≤ 1.5)")
    out.append("")
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 4000, 8000, 16000])
    r.add_argument("--repeats", type=int, default=3)
    r.add_argument("--label", default=None)
    st = sub.add_parser("sets")
    st.add_argument("--splits", type=int, nargs="+", default=[0, 1])
    st.add_argument("--sets", nargs="*", default=None)
    st.add_argument("--repeats", type=int, default=9)
    sub.add_parser("report")
    args = p.parse_args()
    {"run": run, "sets": sets, "report": report}[args.cmd](args)


if __name__ == "__main__":
    main()
