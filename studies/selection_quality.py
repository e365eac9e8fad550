"""Selection-quality study: do the criteria pick good kernels, and are the
approximations faithful to their exact criteria?

Protocol (per dataset, per split)
---------------------------------
* 50/50 train/test split (seeded: ``default_rng([split, crc32(name)])``); features
  standardised with the training mean and standard deviation (constant columns left
  at 0); regression targets centred and scaled by the training mean / std.
* γ grid: 15 points γ₀·2^k, k = −7…7, around the median heuristic γ₀ of the training
  set (``kernelselect.selection.default_gammas``); Gaussian kernel.
* Ridge fixed at α = μ·n with μ = 1e-3 (n = the number of points the kernel matrix
  has in that fit). This is paper 002's per-sample ridge μ (α = μ·l) held constant, so
  the regularisation strength relative to the kernel spectrum (whose eigenvalues
  grow like n) is the same at every size; 1e-3 is a customary LSSVM/KRR value on
  standardised data and well inside the range where γ, not α, drives the error.
* For each approximation (exact, nystrom, rff, mcm, random_mcm — whatever this
  installation provides, with default parameters) every compatible criterion is
  evaluated by one ``select_kernel`` call (the criteria share the operator work).
  - **Fidelity**: Spearman correlation of the γ-curve with the exact criterion's
    curve (``random_X`` is compared with exact ``X``), and whether the chosen γ is
    within one grid step of the exact choice. Measured on the same rows: when
    n_train > ``--exact-cap`` both the exact and the approximate criterion run on
    one seeded subsample of that size.
  - **Selection**: test accuracy (binary; KRR on ±1 labels, no bias, sign of the
    prediction) or test NMSE (regression; MSE / training variance of y) of exact KRR
    trained with the chosen γ, on the training set (or a seeded subsample of
    ``--krr-cap`` rows). Approximate criteria select on the full training set.
  - **Time**: seconds of the ``select_kernel`` call (all criteria of one
    approximation together; a separate "ree only" call is timed as well — for the
    exact criteria on the first ``--exact-ree-splits`` splits only, since one
    eigendecomposition per γ dominates both calls).
* Beside them: scikit-learn 5-fold ``GridSearchCV(KernelRidge(kernel="rbf"))`` on the
  same grid (accuracy of the sign / negative MSE; α = μ·(4/5)n_cv) on at most
  ``--cv-cap`` training rows; the median heuristic (k = 0); and the oracle (best
  test score on the grid, for scale).
* Datasets with n_train above the caps are also run at full size with the
  approximate criteria, reporting time and peak memory (tracemalloc: memory
  allocated through Python/numpy; buffers malloc'd inside compiled loops are not
  counted).
* Multiclass sets (penbased, segment, vehicle) are left out.

Raw records go to ``<out>/selection_quality_raw.jsonl`` (one line per dataset,
split and method; a committed ``selection_quality_raw.jsonl.gz`` beside it is read
as well; reruns skip what is there unless ``--fresh``); the markdown
report and the PNG are rebuilt from all records at the end (``--report-only``
rebuilds them without running anything).

Usage
-----
    python benchmarks/selection_quality.py --quick                 # 2 splits, small caps
    python benchmarks/selection_quality.py --datasets heart,wdbc   # full protocol
    python benchmarks/selection_quality.py --report-only
    python benchmarks/selection_quality.py --mu 0.005 --criteria ree,eloo --out-dir DIR
"""

import argparse
import json
import os
import sys
import time
import tracemalloc
import zlib
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_OUT = REPO / "benchmarks" / "results"
MU = 1e-3
GRID_K = np.arange(-7, 8)


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- data


def list_data(data_dir):
    out = []
    for meta_path in sorted(Path(data_dir).glob("*.json")):
        meta = json.loads(meta_path.read_text())
        if (meta_path.with_suffix(".npz")).exists():
            out.append((meta["name"], meta["task"], int(meta["n"]), int(meta["d"])))
    return out


def load_data(data_dir, name):
    from kernelselect.datasets import load_npz

    return load_npz(Path(data_dir) / f"{name}.npz")


def split_data(X, y, task, name, split):
    rng = np.random.default_rng([split, zlib.crc32(name.encode())])
    perm = rng.permutation(X.shape[0])
    half = X.shape[0] // 2
    tr, te = perm[:half], perm[half:]
    mean, std = X[tr].mean(0), X[tr].std(0)
    std[std == 0] = 1.0
    Xtr, Xte = (X[tr] - mean) / std, (X[te] - mean) / std
    ytr, yte = y[tr].copy(), y[te].copy()
    if task == "regression":
        m, s = ytr.mean(), ytr.std() or 1.0
        ytr, yte = (ytr - m) / s, (yte - m) / s
    return Xtr, ytr, Xte, yte, rng


def subsample(rng, n, cap):
    if n <= cap:
        return np.arange(n)
    return np.sort(rng.choice(n, size=cap, replace=False))


# --------------------------------------------------------------------------- models


def sq_dists(A, B):
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    np.maximum(d, 0.0, out=d)
    return d


def krr_scores(Xtr, ytr, Xte, yte, gammas, task, block=4000):
    """Test score of exact KRR (α = μ·n) for every γ: accuracy or NMSE.

    All γ share one training distance matrix and, per test block, one cross
    distance matrix.
    """
    import scipy.linalg

    n = Xtr.shape[0]
    alpha = MU * n
    Dtr = sq_dists(Xtr, Xtr)
    coefs = []
    for g in gammas:
        K = np.exp(-g * Dtr)
        K.flat[:: n + 1] += alpha
        coefs.append(scipy.linalg.cho_solve(
            scipy.linalg.cho_factor(K, overwrite_a=True, check_finite=False), ytr))
    del Dtr
    preds = np.empty((len(gammas), Xte.shape[0]))
    for s in range(0, Xte.shape[0], block):
        D = sq_dists(Xte[s:s + block], Xtr)
        for j, g in enumerate(gammas):
            preds[j, s:s + block] = np.exp(-g * D) @ coefs[j]
    if task == "binary":
        return [float(np.mean(np.where(p >= 0, 1.0, -1.0) == yte)) for p in preds]
    return [float(np.mean((p - yte) ** 2)) for p in preds]


def grid_search_cv(X, y, gammas, task, seed):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

    n = X.shape[0]
    if task == "binary":
        cv = StratifiedKFold(5, shuffle=True, random_state=seed)
        scoring = make_scorer(lambda yt, yp: np.mean(np.where(yp >= 0, 1.0, -1.0) == yt))
    else:
        cv = KFold(5, shuffle=True, random_state=seed)
        scoring = "neg_mean_squared_error"
    search = GridSearchCV(KernelRidge(kernel="rbf", alpha=MU * 0.8 * n),
                          {"gamma": list(map(float, gammas))}, cv=cv, scoring=scoring,
                          n_jobs=1, refit=False)
    t0 = time.perf_counter()
    search.fit(X, y)
    elapsed = time.perf_counter() - t0
    return int(search.best_index_), elapsed


# --------------------------------------------------------------------------- criteria


def plan(task, only=None):
    """approximation → criteria it can compute for this task (those in ``only``, when
    given)."""
    from kernelselect.criteria import approximations_for, criterion_names, get_criterion
    from kernelselect.operators import approximation_names

    approx_names = [a for a in ("exact", "nystrom", "rff", "mcm", "random_mcm")
                    if a in approximation_names()]
    out = {a: [] for a in approx_names}
    for name in criterion_names():
        crit = get_criterion(name)
        if crit.labels == "binary" and task != "binary":
            continue
        if only is not None and name not in only:
            continue
        for a in approximations_for(name):
            if a in out:
                out[a].append(name)
    return {a: c for a, c in out.items() if c}


def exact_name(criterion, known=()):
    """The exact criterion a randomised one estimates: random_kta → kta,
    random_kta_row → kta, random_c1_rff → c1."""
    if not criterion.startswith("random_"):
        return criterion
    base = criterion[len("random_"):]
    return base if base in known else base.split("_")[0]


def run_select(X, y, gammas, alpha, criteria, approximation, seed, workers, memory=False):
    import kernelselect

    if memory:
        tracemalloc.start()
    t0 = time.perf_counter()
    res = kernelselect.select_kernel(X, y, gammas=gammas, alphas=(alpha,), criterion=criteria,
                                     approximation=approximation, random_state=seed,
                                     workers=workers)
    elapsed = time.perf_counter() - t0
    peak = None
    if memory:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    curves = {c: np.asarray(res.curves[c])[:, 0] for c in res.criteria}
    chosen = {c: (res.best[c]["index"][0] if res.best[c]["index"] is not None else None)
              for c in res.criteria}
    return curves, chosen, elapsed, peak


def spearman(a, b):
    from scipy.stats import spearmanr

    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return None
    return float(spearmanr(a[ok], b[ok]).statistic)


# --------------------------------------------------------------------------- one split


def run_split(name, task, data, split, args):
    from kernelselect.selection import default_gammas

    Xtr, ytr, Xte, yte, rng = split_data(data.X, data.y, task, name, split)
    n_train, d = Xtr.shape
    seed = 1000 + split
    gammas = default_gammas(Xtr, random_state=seed)
    base = dict(dataset=name, task=task, split=split, n_train=int(n_train), d=int(d),
                gammas=gammas.tolist(), mu=MU)
    records = []

    # Test score of KRR for every γ (the selections then only look it up).
    kidx = subsample(rng, n_train, args.krr_cap)
    tidx = subsample(rng, Xte.shape[0], args.test_cap)
    t0 = time.perf_counter()
    scores = krr_scores(Xtr[kidx], ytr[kidx], Xte[tidx], yte[tidx], gammas, task)
    t_krr = time.perf_counter() - t0
    k_oracle = int(np.argmax(scores) if task == "binary" else np.argmin(scores))
    records.append({**base, "method": "oracle", "k": k_oracle - 7,
                    "score": float(scores[k_oracle]), "scores": scores,
                    "n_krr": int(kidx.size), "n_test": int(tidx.size), "time": t_krr})
    records.append({**base, "method": "median", "k": 0, "score": float(scores[7]), "time": 0.0})

    # 5-fold CV on at most cv_cap rows.
    cidx = subsample(rng, n_train, args.cv_cap)
    k_cv, t_cv = grid_search_cv(Xtr[cidx], ytr[cidx], gammas, task, seed)
    log(f"  {name} split {split}: KRR scores {t_krr:.1f} s, 5-fold CV {t_cv:.1f} s")
    records.append({**base, "method": "cv", "k": k_cv - 7, "score": float(scores[k_cv]),
                    "time": t_cv, "n_used": int(cidx.size)})

    todo = plan(task, args.criteria)
    ridx = subsample(rng, n_train, args.exact_cap)
    Xr, yr = Xtr[ridx], ytr[ridx]
    alpha_r, alpha_full = MU * ridx.size, MU * n_train
    exact_curves, exact_k = {}, {}
    if "exact" in todo:
        curves, chosen, t, _ = run_select(Xr, yr, gammas, alpha_r, todo["exact"], "exact",
                                          seed, args.workers)
        exact_curves, exact_k = curves, chosen
        log(f"  {name} split {split}: exact criteria {t:.1f} s")
        t_ree = None
        if split < args.exact_ree_splits:  # the eigendecomposition dominates: time it once
            _, _, t_ree, _ = run_select(Xr, yr, gammas, alpha_r, ["ree"], "exact", seed,
                                        args.workers)
        for c in todo["exact"]:
            k = chosen[c]
            records.append({**base, "method": f"{c}/exact", "criterion": c,
                            "approximation": "exact", "k": None if k is None else k - 7,
                            "score": None if k is None else float(scores[k]),
                            "spearman": 1.0, "within_one": True, "time": t,
                            "time_ree": t_ree, "n_used": int(ridx.size)})
    full = ridx.size < n_train
    for approx, crits in todo.items():
        if approx == "exact":
            continue
        try:
            # fidelity on the exact criterion's rows
            try:
                curves_r, chosen_r, t_r, _ = run_select(Xr, yr, gammas, alpha_r, crits, approx,
                                                        seed, args.workers)
            except ValueError:
                # The joint call refused: keep the criteria this operator does compute.
                working = []
                for c in crits:
                    try:
                        run_select(Xr[:60], yr[:60], gammas[:1], MU * 60, [c], approx, seed,
                                   args.workers)
                        working.append(c)
                    except ValueError as exc:
                        records.append({**base, "method": f"error/{approx}",
                                        "approximation": approx,
                                        "error": f"{c}: {type(exc).__name__}: {exc}"})
                if not working:
                    continue
                crits = working
                curves_r, chosen_r, t_r, _ = run_select(Xr, yr, gammas, alpha_r, crits, approx,
                                                        seed, args.workers)
            if full:  # selection at full size, with time and memory
                curves_f, chosen_f, t_f, peak = run_select(Xtr, ytr, gammas, alpha_full, crits,
                                                           approx, seed, args.workers,
                                                           memory=True)
            else:
                chosen_f, t_f, peak = chosen_r, t_r, None
            t_ree = None
            if "ree" in crits:
                _, _, t_ree, _ = run_select(Xtr, ytr, gammas, alpha_full, ["ree"], approx,
                                            seed, args.workers)
        except Exception as exc:  # record and carry on: one failing operator is a result
            log(f"  {name} split {split}: {approx} failed: {type(exc).__name__}: {exc}")
            records.append({**base, "method": f"error/{approx}", "approximation": approx,
                            "error": f"{type(exc).__name__}: {exc}"})
            continue
        for c in crits:
            ref = exact_name(c, exact_curves)
            rho = spearman(curves_r[c], exact_curves[ref]) if ref in exact_curves else None
            kr, ke = chosen_r[c], exact_k.get(ref)
            within = None if (kr is None or ke is None) else bool(abs(kr - ke) <= 1)
            k = chosen_f[c]
            records.append({**base, "method": f"{c}/{approx}", "criterion": c,
                            "approximation": approx, "k": None if k is None else k - 7,
                            "score": None if k is None else float(scores[k]),
                            "spearman": rho, "within_one": within, "time": t_f,
                            "time_ree": t_ree, "peak_mb": peak, "n_used": int(n_train),
                            "n_fidelity": int(ridx.size)})
    return records


# --------------------------------------------------------------------------- report


def read_records(out_dir):
    """Every raw record in ``out_dir``: the gzipped archive, then the plain file."""
    import gzip

    out_dir = Path(out_dir)
    records = []
    packed = out_dir / "selection_quality_raw.jsonl.gz"
    if packed.exists():
        with gzip.open(packed, "rt") as fh:
            records += [json.loads(line) for line in fh if line.strip()]
    raw = out_dir / "selection_quality_raw.jsonl"
    if raw.exists():
        records += [json.loads(line) for line in raw.read_text().splitlines() if line.strip()]
    return records


def _mean(values):
    values = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.mean(values)) if values else None


def _median(values):
    values = [v for v in values if v is not None and np.isfinite(v)]
    return float(np.median(values)) if values else None


def _f(value, fmt="{:.3f}"):
    return "–" if value is None else fmt.format(value)


def summarise(records):
    """Per (dataset, method): means over splits; then per method over datasets."""
    by = {}
    for r in records:
        if r["method"].startswith("error/"):
            continue
        by.setdefault((r["dataset"], r["method"]), []).append(r)
    per = {}
    for (ds, method), rs in by.items():
        per[(ds, method)] = dict(
            task=rs[0]["task"], n_train=rs[0]["n_train"], splits=len(rs),
            score=_mean([r.get("score") for r in rs]),
            spearman=_mean([r.get("spearman") for r in rs]),
            within=_mean([None if r.get("within_one") is None else float(r["within_one"])
                          for r in rs]),
            time=_median([r.get("time") for r in rs]),
            time_ree=_median([r.get("time_ree") for r in rs]),
            peak=_mean([r.get("peak_mb") for r in rs]),
            n_used=rs[0].get("n_used"),
        )
    return per


def method_order(methods):
    def key(m):
        if "/" not in m:
            return (0, ["oracle", "cv", "median"].index(m) if m in ("oracle", "cv", "median") else 9, m)
        c, a = m.split("/")
        order = ["exact", "nystrom", "rff", "mcm", "random_mcm"]
        return (1, c, order.index(a) if a in order else 9)
    return sorted(methods, key=key)


def summary_sentences(per, datasets, methods):
    """Plain statements computed from the numbers (which criteria select well)."""
    out = ["## Summary (computed from the tables above)", ""]
    for task, scale, unit, tol_good, tol_bad in (("binary", 100.0, "pp", -1.0, -3.0),
                                                  ("regression", 1.0, "NMSE", 0.02, 0.1)):
        good, bad = [], []
        for m in methods:
            if "/" not in m:
                continue
            deltas = [per[(ds, m)]["score"] - per[(ds, "cv")]["score"] for ds in datasets
                      if (ds, m) in per and (ds, "cv") in per and per[(ds, m)]["task"] == task
                      and per[(ds, m)]["score"] is not None]
            if not deltas:
                continue
            dm = scale * float(np.mean(deltas))
            if task == "regression":
                dm = -dm  # positive = worse NMSE; flip so that "higher is better" below
            if dm >= (tol_good if task == "binary" else -tol_good):
                good.append(f"{m} ({dm:+.2f})" if task == "binary" else f"{m} ({-dm:+.3f})")
            elif dm <= (tol_bad if task == "binary" else -tol_bad):
                bad.append(f"{m} ({dm:+.2f})" if task == "binary" else f"{m} ({-dm:+.3f})")
        if task == "binary":
            out.append(f"- Binary, within 1 pp of 5-fold CV on average: {', '.join(good) or 'none'}.")
            out.append(f"- Binary, more than 3 pp worse than CV: {', '.join(bad) or 'none'}.")
        else:
            out.append(f"- Regression, NMSE at most 0.02 above CV's on average (NMSE − CV NMSE): "
                       f"{', '.join(good) or 'none'}.")
            out.append(f"- Regression, NMSE more than 0.1 above CV's: {', '.join(bad) or 'none'}.")
    faithful, unfaithful = [], []
    for m in methods:
        if "/" not in m or m.endswith("/exact"):
            continue
        sp = [per[(ds, m)]["spearman"] for ds in datasets
              if (ds, m) in per and per[(ds, m)]["spearman"] is not None]
        if not sp:
            continue
        med = float(np.median(sp))
        (faithful if med >= 0.9 else unfaithful if med < 0.5 else []).append(f"{m} ({med:.2f})")
    out.append(f"- Approximations with median Spearman ≥ 0.9 against their exact criterion: "
               f"{', '.join(faithful) or 'none'}.")
    out.append(f"- Median Spearman < 0.5 (the curve does not follow the exact one): "
               f"{', '.join(unfaithful) or 'none'}.")
    out.append("")
    return out


def write_report(records, out_dir, args_text, note=None):
    per = summarise(records)
    datasets = sorted({ds for ds, _ in per})
    methods = method_order({m for _, m in per})
    lines = ["# Selection quality of the kernel selection criteria", ""]
    n_splits = sorted({r["split"] for r in records})
    lines += [
        f"Generated by `benchmarks/selection_quality.py {args_text}` from the raw records"
        " of every run written to this folder.",
        f"Coverage: {len(datasets)} datasets ({', '.join(datasets)}), splits "
        f"{', '.join(map(str, n_splits))} (not every dataset need have every split; the"
        " per-dataset table gives the count).",
        "",
        *([note, ""] if note else []),
        "Protocol: 50/50 train/test splits, features standardised on the training half,"
        " Gaussian kernel, 15 γ = γ₀·2^k (k = −7…7, γ₀ the median heuristic), ridge"
        f" α = μ·n with μ = {MU:g}. Score = test accuracy of exact KRR on ±1 labels"
        " (binary, higher is better) or test MSE / training variance of y (regression,"
        " lower is better), KRR trained with the chosen γ. Spearman and 'within ±1' compare"
        " each criterion's γ-curve/choice with the exact criterion on the same rows"
        " (random_X, random_X_row… against exact X). CV = scikit-learn 5-fold GridSearchCV(KernelRidge)."
        " See the module docstring for caps and subsamples.",
        "",
        "Approximations run with their defaults: Nystroem(n_landmarks=min(n, 200)) — on"
        " training sets of at most 200 rows it *is* the exact matrix —, RFF(n_features=200),"
        " MCM() and RandomMCM(n_features=100). Times are wall-clock seconds with"
        f" OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')},"
        f" OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')} on a shared"
        " 2-core machine that was running other jobs: compare ratios within one run only.",
        "",
    ]
    for task, label, better in (("binary", "accuracy", "higher"), ("regression", "NMSE", "lower")):
        tds = [ds for ds in datasets if any(per.get((ds, m), {}).get("task") == task for m in methods)]
        if not tds:
            continue
        lines += [f"## {task.capitalize()} datasets ({len(tds)}): test {label}, {better} is better", ""]
        lines += ["| method | datasets | mean score | mean Δ vs CV | median Spearman | "
                  "datasets with Spearman ≥ 0.9 | within ±1 step | median time (s) | ree-only time (s) |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for m in methods:
            rows = [(ds, per[(ds, m)]) for ds in tds if (ds, m) in per]
            if not rows:
                continue
            deltas = []
            for ds, p in rows:
                cv = per.get((ds, "cv"))
                if cv and p["score"] is not None and cv["score"] is not None:
                    deltas.append(p["score"] - cv["score"])
            sp = [p["spearman"] for _, p in rows if p["spearman"] is not None]
            good = f"{sum(s >= 0.9 for s in sp)}/{len(sp)}" if sp else "–"
            scale = 100.0 if task == "binary" else 1.0
            fmt = "{:+.2f} pp" if task == "binary" else "{:+.3f}"
            lines.append(
                f"| {m} | {len(rows)} | {_f(_mean([p['score'] for _, p in rows]), '{:.4f}')} | "
                f"{_f(None if not deltas else scale * float(np.mean(deltas)), fmt)} | "
                f"{_f(_median(sp), '{:.2f}')} | {good} | "
                f"{_f(_mean([p['within'] for _, p in rows]), '{:.2f}')} | "
                f"{_f(_median([p['time'] for _, p in rows]), '{:.3g}')} | "
                f"{_f(_median([p['time_ree'] for _, p in rows]), '{:.3g}')} |")
        lines.append("")

    lines += summary_sentences(per, datasets, methods)

    # per-dataset view of the main contenders
    key_methods = [m for m in ("oracle", "cv", "median", "ree/exact", "ree/nystrom", "ree/mcm",
                               "kta/exact", "eloo/exact", "gcv/exact") if any((ds, m) in per for ds in datasets)]
    lines += ["## Per dataset (mean test score over splits; time in s)", "",
              "| dataset | task | n_train | splits | " + " | ".join(key_methods) +
              " | CV time (n_cv) | ree/nystrom time |",
              "|---|---|---:|---:|" + "---:|" * len(key_methods) + "---:|---:|"]
    for ds in datasets:
        anyp = next(p for (d_, _), p in per.items() if d_ == ds)
        cells = [_f(per[(ds, m)]["score"], "{:.4f}") if (ds, m) in per else "–" for m in key_methods]
        cv = per.get((ds, "cv"))
        ny = per.get((ds, "ree/nystrom"))
        lines.append(f"| {ds} | {anyp['task']} | {anyp['n_train']} | {anyp['splits']} | "
                     + " | ".join(cells)
                     + f" | {_f(cv and cv['time'], '{:.3g}')} ({cv and cv['n_used']}) | "
                     f"{_f(ny and ny['time_ree'], '{:.3g}')} |")
    lines.append("")

    big = [ds for ds in datasets
           if any(p.get("peak") is not None for (d_, _), p in per.items() if d_ == ds)]
    if big:
        lines += ["## Full-size runs of the approximate criteria", "",
                  "Datasets whose training half exceeds the exact cap: every approximate"
                  " criterion of an approximation evaluated together on all n_train rows"
                  " (15 γ); peak memory by tracemalloc.", "",
                  "| dataset | n_train | approximation | time all criteria (s) | ree only (s) | peak MB | CV time (s) on n_cv |",
                  "|---|---:|---|---:|---:|---:|---:|"]
        for ds in big:
            seen = set()
            for (d_, m), p in sorted(per.items()):
                if d_ != ds or p.get("peak") is None:
                    continue
                approx = m.split("/")[1]
                if approx in seen:
                    continue
                seen.add(approx)
                cv = per.get((ds, "cv"))
                lines.append(f"| {ds} | {p['n_train']} | {approx} | {_f(p['time'], '{:.3g}')} | "
                             f"{_f(p['time_ree'], '{:.3g}')} | {_f(p['peak'], '{:.0f}')} | "
                             f"{_f(cv and cv['time'], '{:.3g}')} on {cv and cv['n_used']} |")
        lines.append("")
    errors = [r for r in records if r["method"].startswith("error/")]
    if errors:
        lines += ["## Failures", ""]
        grouped = {}
        for r in errors:
            grouped.setdefault((r["approximation"], r["error"]), set()).add(r["dataset"])
        for (approx, error), names in sorted(grouped.items()):
            lines.append(f"- {approx} on {len(names)} datasets ({', '.join(sorted(names))}): {error}")
        lines.append("")
    (Path(out_dir) / "selection_quality.md").write_text("\n".join(lines))
    plot(per, datasets, methods, Path(out_dir) / "selection_quality.png")


def plot(per, datasets, methods, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    crit_methods = [m for m in methods if "/" in m]
    crits = sorted({m.split("/")[0] for m in crit_methods})
    approxes = [a for a in ("exact", "nystrom", "rff", "mcm", "random_mcm")
                if any(m.endswith("/" + a) for m in crit_methods)]
    heat_approxes = [a for a in approxes if a != "exact"]  # exact is 1 by definition
    heat_crits = [c for c in crits if any(f"{c}/{a}" in crit_methods for a in heat_approxes)]
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2))
    # (a) median Spearman vs exact
    grid = np.full((len(heat_crits), len(heat_approxes)), np.nan)
    for i, c in enumerate(heat_crits):
        for j, a in enumerate(heat_approxes):
            vals = [per[(ds, f"{c}/{a}")]["spearman"] for ds in datasets
                    if (ds, f"{c}/{a}") in per and per[(ds, f"{c}/{a}")]["spearman"] is not None]
            if vals:
                grid[i, j] = np.median(vals)
    ax = axes[0]
    im = ax.imshow(grid, vmin=-1, vmax=1, cmap="RdBu", aspect="auto")
    ax.set_xticks(range(len(heat_approxes)), heat_approxes, rotation=30)
    ax.set_yticks(range(len(heat_crits)), heat_crits)
    for i in range(len(heat_crits)):
        for j in range(len(heat_approxes)):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if abs(grid[i, j]) > 0.6 else "black")
    fig.colorbar(im, ax=ax, fraction=0.046)
    ax.set_title("median Spearman vs exact criterion")
    # (b) accuracy gap to CV on binary sets
    ax = axes[1]
    width = 0.8 / max(len(approxes), 1)
    for j, a in enumerate(approxes):
        gaps = []
        for c in crits:
            d = [100 * (per[(ds, f"{c}/{a}")]["score"] - per[(ds, "cv")]["score"])
                 for ds in datasets if (ds, f"{c}/{a}") in per and (ds, "cv") in per
                 and per[(ds, "cv")]["task"] == "binary"
                 and per[(ds, f"{c}/{a}")]["score"] is not None]
            gaps.append(np.mean(d) if d else np.nan)
        ax.bar(np.arange(len(crits)) + j * width, gaps, width, label=a)
    for ref, style in (("median", "--"), ("oracle", ":")):
        d = [100 * (per[(ds, ref)]["score"] - per[(ds, "cv")]["score"]) for ds in datasets
             if (ds, ref) in per and (ds, "cv") in per and per[(ds, "cv")]["task"] == "binary"]
        if d:
            ax.axhline(np.mean(d), color="k", ls=style, lw=1, label=f"{ref} heuristic" if ref == "median" else ref)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(np.arange(len(crits)) + 0.4 - width / 2, crits, rotation=45)
    ax.set_ylabel("test accuracy − CV accuracy (pp), mean over binary sets")
    ax.set_title("selection quality (binary)")
    ax.legend(fontsize=7)
    # (c) time vs n_train
    ax = axes[2]
    for m, marker in (("cv", "o"), ("ree/exact", "s"), ("ree/nystrom", "^"), ("ree/mcm", "v"),
                      ("ree/rff", "D")):
        pts = [(per[(ds, m)]["n_used"] or per[(ds, m)]["n_train"],
                per[(ds, m)]["time_ree"] if m != "cv" else per[(ds, m)]["time"])
               for ds in datasets if (ds, m) in per]
        pts = [(x, y) for x, y in pts if y is not None]
        if pts:
            x, y = zip(*pts)
            ax.scatter(x, y, marker=marker, label=m, s=18)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows used by the method")
    ax.set_ylabel("selection time over 15 γ (s)")
    ax.set_title("time (C_ree alone; CV: 5-fold grid search)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------- main


def main(argv=None):
    global MU
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=str(DEFAULT_DATA))
    parser.add_argument("--datasets", help="comma-separated names (default: every binary and "
                        "regression set in --data-dir)")
    parser.add_argument("--splits", type=int, default=None, help="default 5 (2 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help="2 splits, caps exact/CV 1000, KRR 2000, test 5000")
    parser.add_argument("--exact-cap", type=int, default=None, help="default 3000")
    parser.add_argument("--cv-cap", type=int, default=None, help="default 3000")
    parser.add_argument("--krr-cap", type=int, default=None, help="default 5000")
    parser.add_argument("--test-cap", type=int, default=None, help="default 20000")
    parser.add_argument("--criteria", help="comma-separated criteria to run (default: all)")
    parser.add_argument("--mu", type=float, default=MU,
                        help=f"per-sample ridge μ, α = μ·n (default {MU:g})")
    parser.add_argument("--exact-ree-splits", type=int, default=1,
                        help="time the exact ree-only call on this many splits (default 1)")
    parser.add_argument("--max-n", type=int, default=None, help="skip datasets with more rows")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--out-dir", default=str(DEFAULT_OUT))
    parser.add_argument("--fresh", action="store_true", help="discard earlier raw records")
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--note", help="a paragraph for the top of the report (coverage, mode)")
    args = parser.parse_args(argv)
    if not args.mu > 0:
        parser.error(f"--mu must be positive, got {args.mu}")
    MU = args.mu
    if args.criteria:
        from kernelselect.criteria import criterion_names

        args.criteria = {c.strip() for c in args.criteria.split(",") if c.strip()}
        unknown = sorted(args.criteria - set(criterion_names()))
        if unknown:
            parser.error(f"unknown criteria {unknown}; known: {criterion_names()}")
    q = args.quick
    args.splits = args.splits or (2 if q else 5)
    args.exact_cap = args.exact_cap or (1000 if q else 3000)
    args.cv_cap = args.cv_cap or (1000 if q else 3000)
    args.krr_cap = args.krr_cap or (2000 if q else 5000)
    args.test_cap = args.test_cap or (5000 if q else 20000)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = out_dir / "selection_quality_raw.jsonl"
    shown, skip = [], False
    for a in (argv if argv is not None else sys.argv[1:]):
        if skip or a.startswith("--note"):
            skip = a == "--note"
            continue
        shown.append(a)
    args_text = " ".join(shown)
    if args.fresh and raw.exists():
        raw.unlink()
    if args.fresh and raw.with_suffix(".jsonl.gz").exists():
        raw.with_suffix(".jsonl.gz").unlink()
    records = read_records(out_dir)
    other = sorted({r.get("mu", 1e-3) for r in records} - {MU})
    if other:
        parser.error(f"{raw} holds records for μ = {other}, not {MU:g}; use another --out-dir")
    if not args.report_only:
        available = list_data(args.data_dir)
        if args.datasets:
            wanted = [s.strip() for s in args.datasets.split(",") if s.strip()]
            known = {a[0] for a in available}
            unknown = sorted(set(wanted) - known)
            if unknown:
                parser.error(f"unknown datasets {unknown}; known: {sorted(known)}")
            by_name = {a[0]: a for a in available}
            available = [by_name[w] for w in dict.fromkeys(wanted)]  # in the order given
        available = [a for a in available if a[1] != "multiclass"]
        if args.max_n:
            available = [a for a in available if a[2] <= args.max_n]
        done = {(r["dataset"], r["split"]) for r in records}
        for name, task, n, d in available:
            data = None
            for split in range(args.splits):
                if (name, split) in done:
                    continue
                if data is None:
                    data = load_data(args.data_dir, name)
                t0 = time.perf_counter()
                new = run_split(name, task, data, split, args)
                with raw.open("a") as fh:
                    for r in new:
                        fh.write(json.dumps(r) + "\n")
                records += new
                log(f"{name} (n={n}, d={d}) split {split}: {time.perf_counter() - t0:.1f} s")
            write_report(records, out_dir, args_text, args.note)
    if records:
        write_report(records, out_dir, args_text, args.note)
        log(f"wrote {out_dir / 'selection_quality.md'} and .png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
