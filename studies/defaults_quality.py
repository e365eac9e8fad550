"""Do the defaults select as well as 5-fold cross-validation?

Protocol (per dataset, per split)
---------------------------------
* The split of ``selection_quality.py`` (50/50, seeded by split and dataset name,
  features standardised on the training half, regression targets standardised on
  the training half). Training halves above ``--cap`` rows (default 2000) are
  replaced by one seeded subsample of that size, used by every method below; at
  most ``--test-cap`` test rows are scored.
* **cv**: 5-fold cross-validation of kernel ridge regression (no intercept, the model
  of scikit-learn's ``KernelRidge(kernel="rbf")``) over a joint grid of the 15 γ of
  ``default_gammas`` (γ₀·2^k, k = −7…7, median heuristic γ₀) × 7 α = n_fit·10^k,
  k = −6…0 (n_fit = the rows of the training fold). Folds: ``StratifiedKFold`` for
  classification, ``KFold`` for regression, shuffled with the split's seed — the
  folds of ``GridSearchCV(KernelRidge(...), cv=...)``; the score per fold is
  accuracy of sign(f) (binary), of argmax over one-vs-rest ±1 targets (multiclass),
  or the mean squared error (regression). The search is written out here so that each
  fold's squared distances are computed once for all γ; it selects exactly what
  ``GridSearchCV`` selects (checked by ``--check-gridsearch``).
* **defaults**: ``kernelselect.select_kernel(X, y, random_state=seed)`` with nothing
  else set, and ``KernelSelectionCV(random_state=seed)`` (the seed only makes the
  study repeatable; it draws the median-heuristic pairs and the landmarks).
* **variants** (``v_*``): one setting changed from the defaults on the same rows —
  the evidence for the defaults' rules (ELOO losses, gcv, refinement, the exact
  matrix instead of the automatic approximation on training sets up to
  ``--exact-variant-max`` rows).
* Score of every selection: test accuracy (binary, multiclass) or test MSE / training
  variance of y (regression) of kernel ridge regression (no intercept; one-vs-rest
  ±1 targets for multiclass) refitted on the training rows at the chosen (γ, α).
  ``KernelSelectionCV`` is also scored with its own ``predict``.

Records (one JSON line per dataset, split and method) go to
``<out>/defaults_quality_raw.jsonl``; reruns skip what is there; the report is
rebuilt from all records with ``--report-only``.

Usage
-----
    python studies/defaults_quality.py --methods cv --splits 0,1
    python studies/defaults_quality.py --methods defaults --splits 0,1
    python studies/defaults_quality.py --report-only
"""

import json
import time

import numpy as np

import _common as C
from _common import score, sq_dists, targets, test_score

CV_ALPHA_K = np.arange(-6, 1)


# --------------------------------------------------------------------------- CV


def folds(y, task, seed):
    from sklearn.model_selection import KFold, StratifiedKFold

    if task == "regression":
        return list(KFold(5, shuffle=True, random_state=seed).split(y))
    return list(StratifiedKFold(5, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def cv_grid(X, y, task, gammas, seed):
    """Mean 5-fold score over γ × α (α = n_fit·10^k, k in CV_ALPHA_K; n_fit is the
    fold's training size) — higher is better (negative MSE for regression)."""
    import scipy.linalg

    T, classes = targets(y, task)
    out = np.zeros((gammas.size, CV_ALPHA_K.size))
    for tr, va in folds(y, task, seed):
        Dtr = sq_dists(X[tr], X[tr])
        Dva = sq_dists(X[va], X[tr])
        n = tr.size
        for i, g in enumerate(gammas):
            K = np.exp(-g * Dtr)
            Kva = np.exp(-g * Dva)
            for j, k in enumerate(CV_ALPHA_K):
                A = K.copy()
                A.flat[:: n + 1] += n * 10.0 ** k
                try:
                    coef = scipy.linalg.cho_solve(
                        scipy.linalg.cho_factor(A, overwrite_a=True, check_finite=False), T[tr])
                    s = score(Kva @ coef, y[va], task, classes)
                except np.linalg.LinAlgError:
                    s = np.nan
                out[i, j] += (-s if task == "regression" else s) / 5.0
    return out


def run_cv(name, task, data, split, args):
    from kernelselect.selection import default_gammas

    Xtr, ytr, Xte, yte, n_full, seed = C.capped_half_split(name, task, data, split, args.cap, args.test_cap)
    gammas = default_gammas(Xtr, random_state=seed)
    t0 = time.perf_counter()
    grid = cv_grid(Xtr, ytr, task, gammas, seed)
    t_cv = time.perf_counter() - t0
    masked = np.where(np.isfinite(grid), np.round(grid, 10), -np.inf)  # fold sums tie exactly
    # ties go to the first candidate in GridSearchCV's order (α outer, γ inner)
    j, i = np.unravel_index(np.argmax(masked.T), masked.T.shape)
    n_fit = Xtr.shape[0] - Xtr.shape[0] // 5
    # the grid's α are absolute values (n_fit·10^k), refitted as they are, as GridSearchCV does
    gamma, alpha = float(gammas[i]), float(n_fit * 10.0 ** CV_ALPHA_K[j])
    s = test_score(Xtr, ytr, Xte, yte, task, gamma, alpha)
    return [dict(dataset=name, task=task, split=split, method="cv", n_train=int(Xtr.shape[0]),
                 n_full=int(n_full), n_test=int(Xte.shape[0]), gamma=gamma, alpha=alpha,
                 gamma_index=int(i), alpha_index=int(j), n_fit=int(n_fit),
                 gammas=gammas.tolist(), alpha_k=CV_ALPHA_K.tolist(),
                 cv_grid=np.round(grid, 6).tolist(), score=s, time=t_cv)]


def check_gridsearch(name, task, data, args):
    """The written-out search selects what GridSearchCV(KernelRidge) selects."""
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GridSearchCV

    from kernelselect.selection import default_gammas

    Xtr, ytr, _, _, _, seed = C.capped_half_split(name, task, data, 0, args.cap, args.test_cap)
    gammas = default_gammas(Xtr, random_state=seed)
    T, classes = targets(ytr, task)
    n_fit = Xtr.shape[0] - Xtr.shape[0] // 5
    alphas = n_fit * 10.0 ** CV_ALPHA_K
    if task == "binary":   # fit on ±1, score the sign (binary and regression only)
        yfit = T[:, 0]
        scorer = make_scorer(lambda yt, yp: np.mean(np.where(yp >= 0, 1.0, -1.0) == yt))
    else:
        yfit, scorer = ytr, "neg_mean_squared_error"
    search = GridSearchCV(KernelRidge(kernel="rbf"), {"gamma": list(map(float, gammas)),
                                                      "alpha": list(map(float, alphas))},
                          cv=folds(ytr, task, seed), scoring=scorer, refit=False)
    search.fit(Xtr, yfit)
    mine = cv_grid(Xtr, ytr, task, gammas, seed)
    # GridSearchCV orders its candidates by sorted parameter name: alpha outer, gamma inner
    theirs = search.cv_results_["mean_test_score"].reshape(alphas.size, gammas.size).T
    print(name, "max |difference| of the mean CV scores:", np.nanmax(np.abs(mine - theirs)),
          "same choice:", np.argmax(np.round(mine, 10).T) == np.argmax(np.round(theirs, 10).T))


# --------------------------------------------------------------------------- defaults


def run_defaults(name, task, data, split, args):
    import warnings

    import kernelselect
    from kernelselect.models import KernelSelectionCV

    Xtr, ytr, Xte, yte, n_full, seed = C.capped_half_split(name, task, data, split, args.cap, args.test_cap)
    base = dict(dataset=name, task=task, split=split, n_train=int(Xtr.shape[0]),
                n_full=int(n_full), n_test=int(Xte.shape[0]))
    recs = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        res = kernelselect.select_kernel(Xtr, ytr, random_state=seed)
        t_sel = time.perf_counter() - t0
    s = test_score(Xtr, ytr, Xte, yte, task, res.best_gamma, res.best_alpha)
    d = res.details
    recs.append(dict(base, method="defaults", gamma=res.best_gamma, alpha=res.best_alpha,
                     score=s, time=t_sel, criterion=res.criteria[0],
                     approximation=d.get("approximation"), task_detected=d.get("task"),
                     warnings=[str(w.message)[:200] for w in caught],
                     policy={k: d[k] for k in ("auto", "edges", "refine") if k in d}))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = KernelSelectionCV(random_state=seed).fit(Xtr, ytr)
    t_est = time.perf_counter() - t0
    pred = est.predict(Xte)
    own = (float(np.mean(pred == yte)) if task != "regression"
           else float(np.mean((np.asarray(pred, float) - yte) ** 2)))
    g, a = est.best_params_["gamma"], est.best_params_["alpha"]
    model = est.best_estimator_
    model = model[-1] if hasattr(model, "steps") else model
    recs.append(dict(base, method="estimator", gamma=float(g), alpha=float(a),
                     score=test_score(Xtr, ytr, Xte, yte, task, g, a), own_score=own,
                     model=type(model).__name__, time=t_est))
    for label, kwargs in variants(task, Xtr.shape[0], args):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = kernelselect.select_kernel(Xtr, ytr, random_state=seed, **kwargs)
        t_v = time.perf_counter() - t0
        recs.append(dict(base, method=label, gamma=res.best_gamma, alpha=res.best_alpha,
                         score=test_score(Xtr, ytr, Xte, yte, task, res.best_gamma,
                                          res.best_alpha),
                         time=t_v, approximation=res.details.get("approximation")))
    return recs


def variants(task, n, args):
    """Other settings scored on the same rows: the evidence for the defaults' rules."""
    multi = task == "multiclass"
    loo = dict(criterion="eloo_multiclass" if multi else "eloo",
               loss="hybrid" if multi else "squared")
    out = []
    if n <= 400:
        # the defaults use k-fold CV here; the same call with leave-one-out instead
        out.append(("v_loo", loo))
    if task == "binary":
        out += [("v_error_rate", dict(criterion="eloo_error_rate")),
                ("v_gcv", dict(criterion="gcv"))]
    elif multi:
        out += [("v_error_rate", dict(criterion="eloo_multiclass", loss="error_rate"))]
    else:
        out += [("v_gcv", dict(criterion="gcv"))]
    out.append(("v_refine", dict(refine=True)))
    if 400 < n <= args.exact_variant_max:
        out.append(("v_exact", dict(approximation="exact")))
        out.append(("v_exact_kfold", dict(loo, criterion="ekfold_multiclass" if multi
                                          else "ekfold", approximation="exact")))
    return out


# --------------------------------------------------------------------------- report


ORDER = ["defaults", "estimator", "v_loo", "v_exact", "v_exact_kfold", "v_refine",
         "v_error_rate", "v_gcv"]
DESCRIBE = {
    "defaults": "`select_kernel(X, y)`: the defaults",
    "estimator": "`KernelSelectionCV()` (its choice, refitted as KRR)",
    "v_loo": "leave-one-out (eloo) instead of k-fold where the defaults use k-fold (n ≤ 400)",
    "v_exact": "`approximation=\"exact\"` with the default criterion (n > 400: eloo)",
    "v_exact_kfold": "`approximation=\"exact\"` with ekfold (n > 400)",
    "v_refine": "defaults with `refine=True`",
    "v_error_rate": "`eloo_error_rate` (the 0-1 LOO error; multi-class: the plain error rate)",
    "v_gcv": "gcv",
}


def report(out_dir, speed=None):
    recs = C.read_jsonl(out_dir / "defaults_quality_raw.jsonl")
    by = {(r["dataset"], r["split"], r["method"]): r for r in recs}
    present = {r["method"] for r in recs} - {"cv"}
    methods = [m for m in ORDER if m in present] + sorted(present - set(ORDER) - {"cv"})
    lines = ["# Do the defaults select as well as 5-fold CV?", "",
             "Generated by `studies/defaults_quality.py --report-only` from "
             "`defaults_quality_raw.jsonl.gz` (protocol in the script's docstring).", "",
             "Every binary, multi-class and regression set of the shared data; 50/50 splits "
             "(5 on sets whose training half has at most 1000 rows, 2 on the others), "
             "features standardised on the training half; training halves above 1000 rows "
             "replaced by one seeded subsample of 1000 rows, used by CV and by every "
             "selector alike (at most 10 000 test rows scored). CV = 5-fold cross-"
             "validation of kernel ridge regression over 15 γ (median-heuristic grid) × 7 α "
             "(n_fit·10^k, k = −6…0) — what `GridSearchCV(KernelRidge(kernel=\"rbf\"))` "
             "selects (checked with `--check-gridsearch`); multi-class: one-vs-rest KRR on ±1 "
             "targets, argmax. Score of every choice: test accuracy (binary, multi-class; "
             "Δ in percentage points, higher is better) or test MSE / training variance "
             "(regression; Δ NMSE, lower is better) of KRR refitted at the chosen (γ, α). "
             "Single-threaded processes on a shared 2-core machine (load 8–24 when the CV "
             "records were made, 10–15 for the defaults on n ≤ 400 and 5–6 on n > 400).", "",
             "Commands (KERNELSELECT_DATA=../shared/data, OMP_NUM_THREADS=1, "
             "OPENBLAS_NUM_THREADS=1):", "",
             "    python studies/defaults_quality.py --cap 1000 --methods cv --splits 0 "
             "--small-splits 2,3,4 --out-dir DIR",
             "    python studies/defaults_quality.py --cap 1000 --methods cv --splits 1 "
             "--out-dir DIR",
             "    python studies/defaults_quality.py --cap 1000 --methods defaults --splits 0,1 "
             "--small-splits 2,3,4 --out-dir DIR",
             "    python studies/defaults_speed.py --sizes 1000,10000 --cv-candidates 0,3 "
             "--out DIR/defaults_speed.json",
             "    python studies/defaults_quality.py --report-only --out-dir DIR", "",
             "Defaults: `ekfold` (5-fold CV of the LSSVM in closed form, PRESS loss; "
             "one-vs-rest with the hybrid loss for C ≥ 3 classes) on the exact matrix up to "
             "n = 400; beyond, `eloo` (PRESS; `eloo_multiclass`, hybrid) on nested Nyström "
             "levels (100 landmarks on the whole grid, doubled until two levels agree within "
             "one grid step and the landmarks are at least twice the chosen model's "
             "effective dimension; the exact window once a level would exceed n/2 "
             "landmarks; `studies/results/auto_levels.md`). Earlier records of this study "
             "(git history) hold the previous defaults: the levels from 200 landmarks until "
             "two agreed exactly, leave-one-out at every n before that, and the binary 0-1 "
             "LOO error with a PRESS tie-break before that. The estimator's `own_score` "
             "(its own predict) predates the centred refit of `KernelSelectionCV` for real "
             "targets; its score column is the KRR refit at its choice, like every row.", ""]
    targets = {"binary": "mean ≥ −0.2 pp, no set below −3 pp",
               "regression": "mean ≤ +0.005, no set above +0.03",
               "multiclass": "mean ≥ −0.5 pp"}
    for task in ("binary", "multiclass", "regression"):
        sets = sorted({r["dataset"] for r in recs if r["task"] == task and r["method"] == "cv"})
        if not sets:
            continue
        reg = task == "regression"
        fmt = "{:+.4f}" if reg else "{:+.2f}"
        summary, rows = {m: [] for m in methods}, []
        for name in sets:
            splits = sorted({s for (d, s, m) in by if d == name and m == "cv"})
            row = []
            for m in methods:
                deltas = [(by[(name, s, m)]["score"] - by[(name, s, "cv")]["score"])
                          * (1 if reg else 100) for s in splits if (name, s, m) in by]
                if deltas:
                    summary[m].append((float(np.mean(deltas)), name))
                    row.append(fmt.format(np.mean(deltas)))
                else:
                    row.append("–")
            cvs = [by[(name, s, "cv")]["score"] for s in splits]
            d = by.get((name, splits[0], "defaults"), {})
            rows.append(f"| {name} | {len(splits)} | {by[(name, splits[0], 'cv')]['n_train']} | "
                        f"{np.mean(cvs):.4f} | {d.get('approximation', '–')} | "
                        + " | ".join(row) + " |")
        lines += [f"## {task} ({len(sets)} sets; target {targets[task]})", "",
                  "| method | sets | mean Δ vs CV | worst set | median seconds |",
                  "|---|---:|---:|---|---:|"]
        for m in methods:
            vals = summary[m]
            if not vals:
                continue
            worst = max(vals) if reg else min(vals)
            times = [r["time"] for r in recs if r["task"] == task and r["method"] == m
                     and "time" in r]
            lines.append(f"| {DESCRIBE.get(m, m)} | {len(vals)} | "
                         f"{fmt.format(np.mean([v for v, _ in vals]))} | {worst[1]} "
                         f"{fmt.format(worst[0])} | {np.median(times):.3g} |")
        cv_times = [r["time"] for r in recs if r["task"] == task and r["method"] == "cv"]
        lines += [f"| 5-fold CV (15 γ × 7 α, written out) | {len(sets)} | 0 | – | "
                  f"{np.median(cv_times):.3g} |", "",
                  "| dataset | splits | n_train | CV score | defaults' last approximation | "
                  + " | ".join(m for m in methods) + " |",
                  "|---|---:|---:|---:|---|" + "---:|" * len(methods), *rows, ""]
    if speed:
        lines += ["## Speed against GridSearchCV(KernelRidge) (superseded)", "",
                  "Superseded by `studies/results/defaults_speed.md` (every study set at "
                  "n_train = 1000,", "3600 and 10⁴, idle and loaded runs, the current "
                  "defaults); kept as the record of an", "earlier run of the defaults of its "
                  "time. `studies/defaults_speed.py`: cadata subsample, standardised; "
                  "`select_kernel(X, y)` with its defaults against 5-fold "
                  "`GridSearchCV(KernelRidge(kernel=\"rbf\"))` over 15 γ × 5 α, one thread "
                  "each (OMP/OPENBLAS_NUM_THREADS=1), same process, one after the other.", "",
                  "| n_train | defaults (s) | approximation | GridSearchCV (s) | ratio | "
                  "GridSearchCV measured | load (1-min avg) before/after |",
                  "|---:|---:|---|---:|---:|---|---|"]
        for r in speed:
            meas = ("all 75 candidates" if r["gridsearch_measured_candidates"]
                    == r["gridsearch_candidates"] else
                    f"{r['gridsearch_measured_candidates']} of 75 candidates "
                    f"({r['gridsearch_measured_seconds']:.0f} s), scaled to 75")
            lines.append(f"| {r['n']} | {r['defaults_seconds']:.2f} | {r['approximation']} | "
                         f"{r['gridsearch_seconds']:.0f} | {r['ratio']:.0f}× | {meas} | "
                         f"{r['load_before'][0]:.1f} / {r['load_after'][0]:.1f} |")
        lines.append("")
    C.write_report(out_dir / "defaults_quality.md", lines)


# --------------------------------------------------------------------------- main


def main(argv=None):
    p = C.held_out_parser(__doc__, tasks="binary,regression,multiclass", small_splits=None,
                          cap=2000)
    p.add_argument("--methods", default="cv,defaults")
    p.add_argument("--exact-variant-max", type=int, default=1000,
                   help="run the exact-matrix variant on training sets up to this size")
    p.add_argument("--check-gridsearch", action="store_true",
                   help="compare the written-out CV with GridSearchCV on --datasets (split 0)")
    args = C.parse_held_out(p, argv)
    if args.report_only:
        speed = args.out_dir / "defaults_speed.json"
        report(args.out_dir, json.loads(speed.read_text()) if speed.exists() else None)
        return
    if args.check_gridsearch:
        for name, task, _, _ in C.list_data(args.data_dir):
            if name in args.datasets.split(","):
                check_gridsearch(name, task, C.load_data(name, args.data_dir), args)
        return
    raw = args.out_dir / "defaults_quality_raw.jsonl"
    done = {(r["dataset"], r["split"], r["method"]) for r in C.read_jsonl(raw)}
    tasks = args.tasks.split(",")
    sets = [s for s in C.list_data(args.data_dir) if s[1] in tasks]
    if args.datasets:
        keep = args.datasets.split(",")
        sets = [s for s in sets if s[0] in keep]
    sets.sort(key=lambda s: min(s[2] // 2, args.cap) * s[3] ** 0.25)   # cheap sets first
    methods = args.methods.split(",")
    splits = [int(s) for s in args.splits.split(",")]
    extra = [int(s) for s in args.small_splits.split(",")] if args.small_splits else []
    runners = {"cv": run_cv, "defaults": run_defaults}
    for name, task, n, d in sets:
        data = None
        todo = splits + (extra if n // 2 <= args.small else [])
        for split in todo:
            for m in methods:
                key_m = "defaults" if m == "defaults" else m
                if (name, split, key_m) in done:
                    continue
                if data is None:
                    data = C.load_data(name, args.data_dir)
                C.run_and_record(raw, name, task, split, m,
                                 lambda: runners[m](name, task, data, split, args))


if __name__ == "__main__":
    main()
