"""Paper 004 (Tian, Liu et al., "Nyström approximate model selection for LSSVM",
PAKDD 2012), Table 2: exact vs approximate 5-fold CV of the LSSVM over the 13×11
(γ, μ) grid, plus speed and memory measurements of kernelselect's solvers.

Sections (each writes studies/results/repro_nystrom_lssvm_<section>.json, or into
``--out-dir``; the ``report`` section assembles repro_nystrom_lssvm.md there):

table    per data set of paper 004's Table 1 that is available, per realisation:
         model selection on the training set by exact 5-fold CV and by approximate
         (Nyström, c = 0.1n, k = 0.5c) 5-fold CV, refit of the exact LSSVM on the
         whole training set with the chosen (γ, μ), test error rate; time of each
         selection.
speed    n = 2000: approximate vs exact 5-fold CV over the 13×11 grid (LSSVM), and
         exact KRR 5-fold CV with α-path reuse vs scikit-learn
         GridSearchCV(KernelRidge(kernel="rbf")) on the same grid and folds.
predict  peak memory and time of predicting 10⁵ test points against 10⁴ training
         points (blocked true-kernel products).

Run single-threaded for comparable timings on a shared machine:
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/repro_nystrom_lssvm.py table speed predict report
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import kernelselect
from kernelselect import ProportionalNystroem, cross_validate_grid, fit_lssvm

import _common as C

# Paper 004, Table 1 (features, training, test, replications) and Table 2
# (5-fold CV time s, TER %, ± ; approximate time s, TER %, ±).
PAPER = {
    "Thyroid": (5, 140, 75, 100, 1.043, 4.680, 2.246, 0.508, 4.800, 2.359),
    "Heart": (13, 170, 100, 100, 1.127, 16.750, 3.616, 0.623, 16.080, 3.678),
    "Breast": (9, 200, 77, 100, 1.671, 27.012, 4.636, 0.725, 26.454, 4.675),
    "Banana": (2, 400, 4900, 100, 7.105, 10.758, 0.590, 1.960, 10.941, 0.713),
    "Ringnorm": (20, 400, 7000, 100, 7.601, 2.044, 0.358, 2.058, 2.872, 3.895),
    "Twonorm": (20, 400, 7000, 100, 7.097, 2.528, 0.234, 2.213, 2.446, 0.163),
    "Waveform": (21, 400, 4600, 100, 7.423, 10.172, 0.783, 2.378, 10.352, 1.054),
    "Diabetes": (8, 468, 300, 100, 10.760, 23.583, 1.738, 2.727, 23.406, 1.700),
    "Flare solar": (9, 666, 400, 100, 19.477, 34.230, 1.965, 5.446, 34.230, 1.860),
    "German": (20, 700, 300, 100, 24.501, 23.890, 2.231, 6.740, 23.943, 2.304),
    "Splice": (60, 1000, 2175, 20, 42.210, 11.326, 0.547, 14.275, 13.862, 1.304),
    "Image": (18, 1300, 1010, 20, 141.792, 2.876, 0.725, 28.743, 4.628, 0.944),
}

# Paper name → (file, how the splits are made)
AVAILABLE = {
    "Heart": ("heart", "random"),             # LIBSVM Statlog heart, 270 points
    "Breast": ("ratsch_breast_cancer", "ratsch"),
    "Banana": ("ratsch_banana", "ratsch"),
    "Ringnorm": ("ringnorm", "random"),       # KEEL ring (Delve ringnorm ×1000), 7400 points
    "German": ("ratsch_german", "ratsch"),
    "Image": ("ratsch_image", "ratsch"),
}
MISSING = {
    "Thyroid": "no copy in shared/data",
    "Twonorm": "no copy in shared/data",
    "Waveform": "no copy in shared/data",
    "Diabetes": "only diabetes_reg (a regression set), not Pima diabetes",
    "Flare solar": "no copy in shared/data",
    "Splice": "no copy in shared/data",
}


def splits(paper_name, reps, seed=0):
    """(X_train, y_train, X_test, y_test) per realisation."""
    file, kind = AVAILABLE[paper_name]
    arr = C.load_data(file)
    if kind == "ratsch":
        R = min(reps, arr["X_train"].shape[0])
        for r in range(R):
            yield arr["X_train"][r], arr["y_train"][r], arr["X_test"][r], arr["y_test"][r]
        return
    _, n_tr, n_te, _ = PAPER[paper_name][:4]
    X, y = arr["X"], arr["y"]
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        perm = rng.permutation(X.shape[0])
        tr, te = perm[:n_tr], perm[n_tr:n_tr + n_te]
        Xtr, Xte = C.standardise(X[tr], X[te])   # with training statistics
        yield Xtr, y[tr], Xte, y[te]


def run_table(reps):
    rows = {}
    for name in AVAILABLE:
        res = {"exact_time": [], "exact_ter": [], "approx_time": [], "approx_ter": [],
               "exact_choice": [], "approx_choice": []}
        for r, (Xtr, ytr, Xte, yte) in enumerate(splits(name, reps)):
            for key, approx in (("exact", "exact"), ("approx", ProportionalNystroem(0.1, 0.5))):
                t0 = time.perf_counter()
                sel = cross_validate_grid(Xtr, ytr, approximation=approx, cv=5, random_state=r)
                dt = time.perf_counter() - t0
                g, a = sel.best_gamma, sel.best_alpha
                model = fit_lssvm(Xtr, ytr, g, a)
                pred = np.where(model.decision_function(Xte)[:, 0, 0] >= 0, 1.0, -1.0)
                res[f"{key}_time"].append(dt)
                res[f"{key}_ter"].append(100.0 * float(np.mean(pred != yte)))
                res[f"{key}_choice"].append((g, a))
            print(name, r, {k: v[-1] for k, v in res.items()}, flush=True)
        rows[name] = res
    return {"reps": reps, "rows": rows, "missing": MISSING,
            "sources": {k: v[0] for k, v in AVAILABLE.items()}}


def run_speed(n=2000, seed=0):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV

    from kernelselect.models._cv import CV_ALPHAS, CV_GAMMAS, make_folds

    out = {"n": n}
    # classification: ringnorm subset, LSSVM, exact vs approximate CV
    arr = C.load_data("ringnorm")
    rng = np.random.default_rng(seed)
    idx = rng.permutation(arr["X"].shape[0])[:n]
    X, = C.standardise(arr["X"][idx])
    y = arr["y"][idx]
    # warm-up: imports, BLAS and OpenMP thread pools, first-call costs
    cross_validate_grid(X[:200], y[:200], gammas=[1.0], alphas=[1.0], cv=5, random_state=seed)
    cross_validate_grid(X[:200], y[:200], gammas=[1.0], alphas=[1.0], cv=5, random_state=seed,
                        approximation=ProportionalNystroem(0.1, 0.5))
    for key, approx, repeats in (("approx", ProportionalNystroem(0.1, 0.5), 5),
                                 ("exact", "exact", 2)):
        walls, cpus = [], []
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            sel = cross_validate_grid(X, y, approximation=approx, cv=5, random_state=seed)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        out[f"lssvm_{key}_wall"] = min(walls)
        out[f"lssvm_{key}_cpu"] = min(cpus)
        out[f"lssvm_{key}_wall_all"] = walls
        out[f"lssvm_{key}_choice"] = (sel.best_gamma, sel.best_alpha, sel.best["cv"]["value"])
        print(key, out[f"lssvm_{key}_wall"], out[f"lssvm_{key}_choice"], flush=True)
    # regression: cpusmall subset, KRR (no bias), MSE; same folds for both
    arr = C.load_data("cpusmall")
    idx = rng.permutation(arr["X"].shape[0])[:n]
    X, = C.standardise(arr["X"][idx])
    y = arr["y"][idx]
    y = (y - y.mean()) / y.std()
    folds = make_folds(y, 5, stratify=False, random_state=seed)
    t0, c0 = time.perf_counter(), time.process_time()
    sel = cross_validate_grid(X, y, machine="krr", approximation="exact", cv=folds)
    out["krr_ours_wall"] = time.perf_counter() - t0
    out["krr_ours_cpu"] = time.process_time() - c0
    out["krr_ours_choice"] = (sel.best_gamma, sel.best_alpha, sel.best["cv"]["value"])
    print("krr ours", out["krr_ours_wall"], out["krr_ours_choice"], flush=True)
    import warnings

    gs = GridSearchCV(KernelRidge(kernel="rbf"),
                      {"gamma": list(CV_GAMMAS), "alpha": list(CV_ALPHAS)},
                      cv=folds, scoring="neg_mean_squared_error", n_jobs=1, refit=False)
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # ill-conditioned solves at tiny α
        gs.fit(X, y)
    out["krr_sklearn_wall"] = time.perf_counter() - t0
    out["krr_sklearn_cpu"] = time.process_time() - c0
    bp = gs.best_params_
    out["krr_sklearn_choice"] = (float(bp["gamma"]), float(bp["alpha"]), -float(gs.best_score_))
    # the two MSE surfaces, side by side
    sk = -gs.cv_results_["mean_test_score"]
    ours = np.array([sel.curves["cv"][list(sel.gammas).index(g), list(sel.alphas).index(a)]
                     for g, a in zip(gs.cv_results_["param_gamma"], gs.cv_results_["param_alpha"])])
    finite = np.isfinite(sk) & np.isfinite(ours)
    out["krr_max_rel_diff_mse"] = float(np.max(np.abs(sk[finite] - ours[finite]) /
                                               np.maximum(np.abs(sk[finite]), 1e-12)))
    print("krr sklearn", out["krr_sklearn_wall"], out["krr_sklearn_choice"], flush=True)
    return out


PREDICT_CHILD = r"""
import json, resource, sys, time, tracemalloc
import numpy as np
from kernelselect.solvers._exact import cross_kernel_matvec
rng = np.random.default_rng(0)
n_test, n_train, d = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
Xte = rng.standard_normal((n_test, d)); Xtr = rng.standard_normal((n_train, d))
a = rng.standard_normal(n_train)
cross_kernel_matvec(Xte[:10], Xtr, a, 0.1)          # warm-up (imports, thread pools)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
t0 = time.perf_counter()
f = cross_kernel_matvec(Xte, Xtr, a, 0.1)
dt = time.perf_counter() - t0
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
# the Python fallback: 32 MB blocks through lowlevel.kernel_block
tracemalloc.start()
t0 = time.perf_counter()
f2 = cross_kernel_matvec(Xte, Xtr, a, 0.1, block_bytes=32 * 2**20)
dt2 = time.perf_counter() - t0
_, peak2 = tracemalloc.get_traced_memory()
tracemalloc.stop()
# dense check on a slice
from kernelselect import lowlevel
ref = lowlevel.kernel_block(Xte[:500], Xtr, 0.1) @ a
err = float(np.max(np.abs(ref - f[:500])))
print(json.dumps({"seconds": dt, "tracemalloc_peak_mb": peak / 2**20,
                  "rss_growth_mb": (rss - base) / 1024, "max_abs_err_vs_dense": err,
                  "input_mb": (Xte.nbytes + Xtr.nbytes + a.nbytes) / 2**20,
                  "fallback_seconds": dt2, "fallback_tracemalloc_peak_mb": peak2 / 2**20,
                  "fallback_max_abs_diff": float(np.max(np.abs(f2 - f)))}))
"""


def run_predict(n_test=100_000, n_train=10_000, d=10):
    out = subprocess.run([sys.executable, "-c", PREDICT_CHILD, str(n_test), str(n_train), str(d)],
                         capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res.update({"n_test": n_test, "n_train": n_train, "d": d})
    print(res, flush=True)
    return res


def fmt(v):
    return f"{np.mean(v):.3f}"


def _load_note(section):
    """The machine's load during a section's run, when it was recorded."""
    if "load" not in section:
        return ""
    lo, hi = min(section["load"]), max(section["load"])
    return (f" Machine load (1-minute average) during the run: {lo:.1f}–{hi:.1f} on 2 cores, "
            "so wall times are inflated by other jobs (CPU times less so); the TERs are not affected.")


def report(out):
    lines = ["# Paper 004 reproduction: exact vs Nyström-approximate 5-fold CV for the LSSVM", ""]
    lines += ["Generated by `studies/repro_nystrom_lssvm.py` (kernelselect "
              f"{kernelselect.__version__}). Grid: γ ∈ 2^{{−15,−13,…,9}} × μ ∈ 2^{{−15,−13,…,5}} "
              "(13 × 11, α = μ), Gaussian kernel, LSSVM with bias; approximate CV = Nyström per "
              "training fold with c = 0.1n, k = 0.5c (uniform landmarks, drawn once per fold); "
              "the final model is the exact LSSVM refit on the whole training set with the "
              "chosen (γ, μ); error rate on the realisation's test set. Held-out folds and test "
              "points are predicted by the model that was fitted: held-out folds of the "
              "approximate CV by each fold's Nyström model (its landmarks and coefficients, "
              "the LSSVM on the fold's K̃ at its training points), the others with the true "
              "kernel.", ""]
    tab = out / "repro_nystrom_lssvm_table.json"
    if tab.exists():
        T = json.loads(tab.read_text())
        lines += [f"## Table 2 ({T['reps']} realisations per data set; the paper used 100, 20 "
                  "for Image/Splice)", "",
                  "Times are per model selection (13 × 11 grid × 5 folds), seconds, one thread "
                  "(OMP_NUM_THREADS=1, OpenBLAS 1 thread) on a shared 2-core machine; the paper's "
                  "were on a 2.33 GHz Core2 Quad. TER = test error rate, mean ± std (%)."
                  + _load_note(T), "",
                  "| data set | n_train / n_test | paper CV time | ours CV time | paper approx time "
                  "| ours approx time | speed-up ours (paper) | paper CV TER | ours CV TER | "
                  "paper approx TER | ours approx TER |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, r in T["rows"].items():
            p = PAPER[name]
            su = np.mean(r["exact_time"]) / np.mean(r["approx_time"])
            lines.append(
                f"| {name} ({T['sources'][name]}) | {p[1]} / {p[2]} | {p[4]:.3f} | {fmt(r['exact_time'])} | "
                f"{p[7]:.3f} | {fmt(r['approx_time'])} | {su:.1f}× ({p[4] / p[7]:.1f}×) | "
                f"{p[5]:.2f} ± {p[6]:.2f} | {np.mean(r['exact_ter']):.2f} ± {np.std(r['exact_ter']):.2f} | "
                f"{p[8]:.2f} ± {p[9]:.2f} | {np.mean(r['approx_ter']):.2f} ± {np.std(r['approx_ter']):.2f} |")
        lines += ["", "Missing data sets of paper 004's Table 1: " + "; ".join(
            f"{k} ({v})" for k, v in T["missing"].items()) + ".", "",
            "Splits: Breast, Banana, German, Image use Rätsch's predefined realisations "
            "(the first 10 that ship in shared/data; features standardised by Rätsch). "
            "Heart (LIBSVM Statlog heart, 270 points) and Ringnorm (KEEL ring, 7400 points) have "
            "no predefined realisations here: random splits of the paper's sizes (170/100 and "
            "400/7000), standardised with training-set statistics, seed 0.", ""]
    sp = out / "repro_nystrom_lssvm_speed.json"
    if sp.exists():
        S = json.loads(sp.read_text())
        lines += [f"## Speed at n = {S['n']} (13 × 11 grid, 5 folds, one thread)", "",
                  *([_load_note(S).strip(), ""] if "load" in S else []),
                  "| comparison | ours wall s (CPU s) | peer wall s (CPU s) | ratio | choices (γ, α, CV loss) |",
                  "|---|---:|---:|---:|---|",
                  f"| LSSVM: approximate CV (Nyström c = 0.1n, k = 0.5c) vs exact CV, ringnorm subset | "
                  f"{S['lssvm_approx_wall']:.2f} ({S['lssvm_approx_cpu']:.2f}) | "
                  f"{S['lssvm_exact_wall']:.2f} ({S['lssvm_exact_cpu']:.2f}) | "
                  f"{S['lssvm_exact_wall'] / S['lssvm_approx_wall']:.1f}× (target ≥ 20×; "
                  f"min of {len(S.get('lssvm_approx_wall_all', [0]))} and "
                  f"{len(S.get('lssvm_exact_wall_all', [0]))} runs) | "
                  f"approx {S['lssvm_approx_choice']}, exact {S['lssvm_exact_choice']} |",
                  f"| KRR: exact CV with α-path reuse vs sklearn GridSearchCV(KernelRidge), "
                  f"cpusmall subset, same folds | {S['krr_ours_wall']:.2f} ({S['krr_ours_cpu']:.2f}) | "
                  f"{S['krr_sklearn_wall']:.2f} ({S['krr_sklearn_cpu']:.2f}) | "
                  f"{S['krr_sklearn_wall'] / S['krr_ours_wall']:.1f}× (target ≥ 5×) | ours "
                  f"{S['krr_ours_choice']}, sklearn {S['krr_sklearn_choice']} |", "",
                  f"Largest relative difference between the two KRR MSE surfaces over the grid: "
                  f"{S['krr_max_rel_diff_mse']:.2e}.", "",
                  "Both ratios move with the load of the shared machine: earlier runs of this "
                  "section during the development of the solvers (other jobs running, partly "
                  "older code) gave 16.6–27× and 3.8–6.2×.", ""]
    pr = out / "repro_nystrom_lssvm_predict.json"
    if pr.exists():
        P = json.loads(pr.read_text())
        lines += [f"## Prediction memory ({P['n_test']} test × {P['n_train']} train, d = {P['d']})", "",
                  f"Streaming K(X_test, X_train) @ a (compiled), one thread: {P['seconds']:.2f} s; peak traced "
                  f"allocation during the call {P['tracemalloc_peak_mb']:.1f} MB, growth of the process's peak "
                  f"RSS {P['rss_growth_mb']:.1f} MB (0 means the peak reached while importing and "
                  f"warming up was not exceeded; inputs {P['input_mb']:.1f} MB; the full cross-kernel "
                  f"matrix would be {P['n_test'] * P['n_train'] * 8 / 2**20:.0f} MB; target < 200 MB "
                  f"beyond the inputs). Max |difference| from the dense product on 500 rows: "
                  f"{P['max_abs_err_vs_dense']:.1e}."]
        if "fallback_seconds" in P:
            lines += ["", f"Compiled streaming kernel (OpenMP over 64-row blocks) vs the Python "
                      f"fallback (32 MB blocks through lowlevel.kernel_block) in the same run: "
                      f"{P['seconds']:.2f} s / {P['tracemalloc_peak_mb']:.1f} MB vs "
                      f"{P['fallback_seconds']:.2f} s / {P['fallback_tracemalloc_peak_mb']:.1f} MB "
                      f"(max |difference| {P['fallback_max_abs_diff']:.1e})."]
        lines += [""]
    (out / "repro_nystrom_lssvm.md").write_text("\n".join(lines))
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sections", nargs="+", choices=["table", "speed", "predict", "report"])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--out-dir", type=Path, default=C.RESULTS)
    args = ap.parse_args()
    out = args.out_dir
    out.mkdir(parents=True, exist_ok=True)
    for s in args.sections:
        load = os.getloadavg()[0]
        if s == "table":
            res = run_table(args.reps)
        elif s == "speed":
            res = run_speed(args.n)
        elif s == "predict":
            res = run_predict()
        else:
            report(out)
            continue
        res["load"] = [load, os.getloadavg()[0]]          # 1-minute averages, start and end
        (out / f"repro_nystrom_lssvm_{s}.json").write_text(json.dumps(res, indent=1, default=float))


if __name__ == "__main__":
    main()
