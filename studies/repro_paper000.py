"""Paper 000 (Ding et al., AAAI 2018, randomised MCM kernel selection), Tables 1 and 2,
on the data sets of its tables that the shared data folder holds.

Protocol (as the paper states it, deviations marked)
----------------------------------------------------
* Random 50/50 train/test partitions (seed ``[repeat, crc32(name)]``); the paper uses
  30 repeats. Features scaled to [0, 1] on the training part (LIBSVM's scaling; the
  LIBSVM sets are 0/1 already).
* Gaussian kernels exp(−γ‖x − x′‖²), γ = 2^i, i = −8…6 (15 kernels); LSSVM with ridge
  α = 1 (the paper's "regularization parameter … fixed value 1").
* Criteria on the training half, each in its own timed ``select_kernel`` call:
  - paper forms on the randomised labelled MCM, D = 100: C1(v) = ``random_c1``,
    C2(v) = KTA(v) = ``random_kta``, C3(v̂) = ``random_eloo``, MMD(v̄) = ``random_mmd``;
  - the library's estimators from more of the spectrum: ``random_kta_row`` (= KTA(Z)),
    ``random_kta_row_2g``, ``random_mmd_row``, ``random_c1_rff``;
  - exact KTA and MMD-B (streaming, never holding K), exact C1(K) and ELOO (dense, one
    call, sharing the factorisations) where n_train ≤ ``--dense-cap``;
  - ``eloo`` and ``gcv`` on the default Nyström approximation;
  - part "defaults": ``select_kernel(X, y)`` with nothing else set (its criterion, γ
    grid, α path, approximation and standardisation), scored at the (γ, α) it selects
    (:func:`part_defaults`);
  - 5-fold CV of the LSSVM on at most ``--cv-cap`` training rows (a seeded subsample
    above it — labelled in the report).
* Table 2: KTA(v) (``random_kta``), KTA(Z) (``random_kta_row``) and 5-fold CV of ridge
  regression on the same kind of random Fourier features (``cross_validate_grid``,
  machine="krr", approximation=RFF(D)), for D = 100 and 500, on the full training half.
* Final model: exact LSSVM (with bias, α = 1) at the selected γ, trained on the training
  half or on a seeded subsample of ``--fit-cap`` rows when it is larger; accuracy on the
  whole test half.
* The expensive exact parts run on the first ``--exact-repeats`` repeats only
  (``--big-exact-repeats`` on a9a and w8a); the report states the count of every cell.

Raw records: ``studies/results/paper000_raw.jsonl`` (one line per data set, repeat and
part: "random", "table2", "cv", "exact"), archive ``paper000_raw.jsonl.gz``;
``python studies/report.py`` rebuilds the tables.

Usage
-----
    python studies/repro_paper000.py --quick
    python studies/repro_paper000.py --datasets mushrooms,coil2000,penbased --repeats 30
    python studies/repro_paper000.py --datasets a9a,w8a --repeats 5
"""

import argparse
import os
import time
import warnings

import numpy as np

import _common as C

#: paper name → shared data name
DATASETS = {"mushrooms": "mushrooms", "coil2000": "coil2000", "penbased": "penbased",
            "adult": "a9a", "w8a": "w8a"}
BIG = {"adult", "w8a"}
GAMMAS = 2.0 ** np.arange(-8, 7)
ALPHA = 1.0
D = 100
PAPER_FORMS = ["random_c1", "random_kta", "random_eloo", "random_mmd"]
ROW_FORMS = ["random_kta_row", "random_kta_row_2g", "random_mmd_row", "random_c1_rff"]
OUT = C.RESULTS / "paper000_raw.jsonl"
PARTS = ("random", "table2", "cv", "exact", "defaults")


def _method(chosen, curve, seconds, acc, note=None):
    out = {"index": chosen, "seconds": round(seconds, 4), "curve": curve,
           "accuracy": None if chosen is None else acc(GAMMAS[chosen])}
    if note:
        out["note"] = note
    return out


def part_random(Xtr, ytr, acc, seed):
    import kernelselect

    methods = {}
    for crit in PAPER_FORMS + ROW_FORMS:
        ch, cu, s = C.timed_select(Xtr, ytr, GAMMAS, ALPHA, crit,
                                   kernelselect.RandomMCM(n_features=D), seed)
        methods[crit] = _method(ch[crit], cu[crit], s, acc)
    for crit in ("eloo", "gcv"):
        # the paper's ELOO is the leave-one-out error rate: the 0-1 loss
        ch, cu, s = C.timed_select(Xtr, ytr, GAMMAS, ALPHA, crit, "nystrom", seed,
                                   **({"loss": "error_rate"} if crit == "eloo" else {}))
        methods[f"nystrom_{crit}"] = _method(ch[crit], cu[crit], s, acc)
    return methods


def part_defaults(Xtr, ytr, Xte, yte, fit_rows, seed):
    """``select_kernel(X, y)`` with nothing but the seed set: its own criterion, γ grid,
    α path, approximation and standardisation. Scored like the other rows (exact LSSVM
    on the same ``fit_rows``, accuracy on the test half) but at the (γ, α) it selected,
    on the features standardised as it standardised them; on a subsample of m of the n
    training rows α is scaled by m/n, which keeps α/n (the ridge per training point, the
    quantity the library's α path is laid out in) as selected."""
    import kernelselect

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", kernelselect.GridEdgeWarning)
        res = kernelselect.select_kernel(Xtr, ytr, random_state=seed)
    s = time.perf_counter() - t0
    gamma, alpha = float(res.best_gamma), float(res.best_alpha)
    alpha_fit = alpha * fit_rows.size / Xtr.shape[0]
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)      # select_kernel's standardize_columns
    sd = np.where(sd > 0, sd, 1.0)
    acc = C.TestAccuracy((Xtr - mu) / sd, ytr, (Xte - mu) / sd, yte, alpha_fit, fit_rows)(gamma)
    d = res.details
    auto = d.get("auto") if isinstance(d.get("auto"), dict) else {}
    note = (f"{res.criteria[0]} on {d.get('approximation')}; refit at its (γ, α) on "
            "standardised features")
    return {"defaults": {
        "index": None, "gamma": float(f"{gamma:.6g}"), "alpha": float(f"{alpha:.6g}"),
        "alpha_fit": float(f"{alpha_fit:.6g}"), "seconds": round(s, 4), "accuracy": acc,
        "note": note, "approximation": str(d.get("approximation")),
        "levels": len(auto.get("levels", [])), "extensions": len(d.get("extensions", [])),
        "edge_warnings": [str(w.message).split(";")[0] for w in caught
                          if issubclass(w.category, kernelselect.GridEdgeWarning)]}}


def part_table2(Xtr, ytr, acc, seed):
    import kernelselect

    methods = {}
    for dd in (100, 500):
        for crit, label in (("random_kta", "kta_v"), ("random_kta_row", "kta_z")):
            ch, cu, s = C.timed_select(Xtr, ytr, GAMMAS, ALPHA, crit,
                                       kernelselect.RandomMCM(n_features=dd), seed)
            methods[f"{label}_D{dd}"] = _method(ch[crit], cu[crit], s, acc)
        idx, curve, s = C.timed_cv(Xtr, ytr, GAMMAS, ALPHA, seed, machine="krr",
                                   approximation=kernelselect.RFF(n_features=dd))
        methods[f"cv_rff_D{dd}"] = _method(idx, curve, s, acc)
    return methods


def part_exact(Xtr, ytr, acc, seed, dense_cap):
    import kernelselect

    methods = {}
    for crit in ("kta", "mmd"):
        ch, cu, s = C.timed_select(Xtr, ytr, GAMMAS, ALPHA, crit,
                                   kernelselect.Exact(method="streaming"), seed)
        methods[crit] = _method(ch[crit], cu[crit], s, acc, note="streaming")
    if Xtr.shape[0] <= dense_cap:
        ch, cu, s = C.timed_select(Xtr, ytr, GAMMAS, ALPHA, ["c1", "eloo"],
                                   kernelselect.Exact(method="dense", max_dense=dense_cap), seed,
                                   loss="error_rate")      # ELOO: the error rate, as the paper
        for crit in ("c1", "eloo"):
            methods[crit] = _method(ch[crit], cu[crit], s, acc, note="dense; one call for c1+eloo")
    return methods


def part_cv(Xtr, ytr, acc, seed, cv_cap, rng):
    rows = C.subsample(rng, Xtr.shape[0], cv_cap)
    idx, curve, s = C.timed_cv(Xtr[rows], ytr[rows], GAMMAS, ALPHA, seed)
    note = None if rows.size == Xtr.shape[0] else f"5-fold CV on a {rows.size}-row subsample"
    return {"cv": _method(idx, curve, s, acc, note=note)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--first-repeat", type=int, default=0,
                    help="start at this repeat (another run is filling the earlier ones)")
    ap.add_argument("--parts", default=",".join(PARTS))
    ap.add_argument("--exact-repeats", type=int, default=1)
    ap.add_argument("--big-exact-repeats", type=int, default=1)
    ap.add_argument("--dense-cap", type=int, default=6000)
    ap.add_argument("--cv-cap", type=int, default=1500)
    ap.add_argument("--fit-cap", type=int, default=3000)
    ap.add_argument("--quick", action="store_true",
                    help="1 repeat of mushrooms on a 1500-row subsample, small caps")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    names = args.datasets.split(",")
    parts = args.parts.split(",")
    row_cap = None
    if args.quick:
        names, args.repeats, row_cap = ["mushrooms"], 1, 1500
        args.cv_cap, args.fit_cap = 600, 1000
    bad = [n for n in names if n not in DATASETS] + [p for p in parts if p not in PARTS]
    if bad:
        ap.error(f"unknown data set(s) or part(s) {bad}")
    done = C.done_keys(args.out)
    data = {}
    for repeat in range(args.first_repeat, args.repeats):
        for paper_name in names:
            todo = [p for p in parts if (paper_name, repeat, p) not in done]
            exact_reps = args.big_exact_repeats if paper_name in BIG else args.exact_repeats
            if repeat >= exact_reps and "exact" in todo:
                todo.remove("exact")
            if not todo:
                continue
            name = DATASETS[paper_name]
            if name not in data:
                data[name] = C.load(name)
            X, y = data[name]
            if row_cap:
                X, y = X[:row_cap], y[:row_cap]
            tr, te, rng = C.split(X.shape[0], 0.5, name, repeat)
            Xtr, Xte = C.minmax(X[tr], X[te])
            ytr, yte = y[tr], y[te]
            fit_rows = C.subsample(rng, tr.size, args.fit_cap)
            acc = C.TestAccuracy(Xtr, ytr, Xte, yte, ALPHA, fit_rows)
            for part in todo:
                t0 = time.perf_counter()
                if part == "random":
                    methods = part_random(Xtr, ytr, acc, repeat)
                elif part == "table2":
                    methods = part_table2(Xtr, ytr, acc, repeat)
                elif part == "defaults":
                    methods = part_defaults(Xtr, ytr, Xte, yte, fit_rows, repeat)
                elif part == "exact":
                    methods = part_exact(Xtr, ytr, acc, repeat, args.dense_cap)
                else:
                    methods = part_cv(Xtr, ytr, acc, repeat, args.cv_cap, rng)
                rec = {"dataset": paper_name, "data": name, "repeat": repeat, "part": part,
                       "n_train": int(tr.size), "n_test": int(te.size),
                       "n_fit": int(fit_rows.size), "methods": methods,
                       "load": os.getloadavg()[0], "quick": bool(args.quick)}
                C.append_record(args.out, rec)
                C.log(f"{paper_name} #{repeat} {part}: " + ", ".join(
                    f"{k} {100 * v['accuracy']:.2f}" for k, v in methods.items()
                    if v["accuracy"] is not None) + f" ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
