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

This script only runs: raw records go to ``<out>/selection_quality_raw.jsonl`` (one
line per dataset, split and method; a committed ``selection_quality_raw.jsonl.gz``
beside it is read as well; reruns skip what is there unless ``--fresh``).
``selection_quality_report.py`` builds the markdown report and the PNG from all records.

Usage
-----
    python studies/selection_quality.py --quick --out-dir DIR       # 2 splits, small caps
    python studies/selection_quality.py --datasets heart,wdbc        # full protocol
    python studies/selection_quality.py --mu 0.005 --criteria ree,eloo --out-dir DIR
    python studies/selection_quality_report.py --out-dir DIR
"""

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

import _common as C

MU = 1e-3


# --------------------------------------------------------------------------- models


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
        if crit.labels != "any" and task != "binary":   # class labels: binary sets only
            continue
        if only is not None and name not in only:
            continue
        if name.endswith("_error_rate"):   # the binary eloo and ekfold rows are these
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


def record_losses(criteria, y):
    """The losses of the records: the leave-one-out and k-fold errors were run with the
    0-1 loss on binary labels (what their names meant then; ``eloo_error_rate`` now)
    and with the squared loss on real targets (what they mean now)."""
    from kernelselect import get_criterion

    takes = any("loss" in get_criterion(c).params for c in criteria)
    return {"loss": "error_rate"} if takes and np.unique(y).size == 2 else {}


def run_select(X, y, gammas, alpha, criteria, approximation, seed, workers, memory=False):
    import kernelselect

    if memory:
        tracemalloc.start()
    t0 = time.perf_counter()
    res = kernelselect.select_kernel(X, y, gammas=gammas, alphas=(alpha,), criterion=criteria,
                                     approximation=approximation, random_state=seed,
                                     workers=workers, **record_losses(criteria, y))
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

    Xtr, ytr, Xte, yte, rng = C.half_split(data.X, data.y, task, name, split)
    n_train, d = Xtr.shape
    seed = 1000 + split
    gammas = default_gammas(Xtr, random_state=seed)
    base = dict(dataset=name, task=task, split=split, n_train=int(n_train), d=int(d),
                gammas=gammas.tolist(), mu=MU)
    records = []

    # Test score of KRR for every γ (the selections then only look it up).
    kidx = C.subsample(rng, n_train, args.krr_cap)
    tidx = C.subsample(rng, Xte.shape[0], args.test_cap)
    t0 = time.perf_counter()
    # exact KRR at α = μ·n on the rows it is fitted on
    scores = C.test_scores(Xtr[kidx], ytr[kidx], Xte[tidx], yte[tidx], task, gammas,
                           MU * kidx.size)
    t_krr = time.perf_counter() - t0
    k_oracle = int(np.argmax(scores) if task == "binary" else np.argmin(scores))
    records.append({**base, "method": "oracle", "k": k_oracle - 7,
                    "score": float(scores[k_oracle]), "scores": scores,
                    "n_krr": int(kidx.size), "n_test": int(tidx.size), "time": t_krr})
    records.append({**base, "method": "median", "k": 0, "score": float(scores[7]), "time": 0.0})

    # 5-fold CV on at most cv_cap rows.
    cidx = C.subsample(rng, n_train, args.cv_cap)
    k_cv, t_cv = grid_search_cv(Xtr[cidx], ytr[cidx], gammas, task, seed)
    C.log(f"  {name} split {split}: KRR scores {t_krr:.1f} s, 5-fold CV {t_cv:.1f} s")
    records.append({**base, "method": "cv", "k": k_cv - 7, "score": float(scores[k_cv]),
                    "time": t_cv, "n_used": int(cidx.size)})

    todo = plan(task, args.criteria)
    ridx = C.subsample(rng, n_train, args.exact_cap)
    Xr, yr = Xtr[ridx], ytr[ridx]
    alpha_r, alpha_full = MU * ridx.size, MU * n_train
    exact_curves, exact_k = {}, {}
    if "exact" in todo:
        curves, chosen, t, _ = run_select(Xr, yr, gammas, alpha_r, todo["exact"], "exact",
                                          seed, args.workers)
        exact_curves, exact_k = curves, chosen
        C.log(f"  {name} split {split}: exact criteria {t:.1f} s")
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
            C.log(f"  {name} split {split}: {approx} failed: {type(exc).__name__}: {exc}")
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


# --------------------------------------------------------------------------- main


def main(argv=None):
    global MU
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=str(C.DATA))
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
    parser.add_argument("--out-dir", default=str(C.RESULTS))
    parser.add_argument("--fresh", action="store_true", help="discard earlier raw records")
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
    raw = out_dir / "selection_quality_raw.jsonl"
    if args.fresh:
        for p in (raw, Path(str(raw) + ".gz")):
            p.unlink(missing_ok=True)
    records = C.read_jsonl(raw)
    other = sorted({r.get("mu", 1e-3) for r in records} - {MU})
    if other:
        parser.error(f"{raw} holds records for μ = {other}, not {MU:g}; use another --out-dir")
    available = C.list_data(args.data_dir)
    if args.datasets:
        wanted = [s.strip() for s in args.datasets.split(",") if s.strip()]
        by_name = {a[0]: a for a in available}
        unknown = sorted(set(wanted) - set(by_name))
        if unknown:
            parser.error(f"unknown datasets {unknown}; known: {sorted(by_name)}")
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
                data = C.load_data(name, args.data_dir)
            t0 = time.perf_counter()
            for r in run_split(name, task, data, split, args):
                C.append_record(raw, r)
            C.log(f"{name} (n={n}, d={d}) split {split}: {time.perf_counter() - t0:.1f} s")
    C.log(f"records in {raw}; the report: python studies/selection_quality_report.py "
          f"--out-dir {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
