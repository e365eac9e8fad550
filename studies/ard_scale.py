"""Per-feature bandwidths at scale: ``select_kernel(X, y, kernel="ard")`` on a Nyström
stand-in at n = 10⁵ against the isotropic defaults at the same n, in one process.

Data: synthetic, d = 10 standard normal features of which four carry the target,
y = sin(2x₀) + x₁x₂ + 0.5x₃ + 0.1ε (seeded), ``--n`` training rows and ``--n-test``
test rows; or a shared set (``--dataset protein``: its first half trains, the
second tests, as many rows as there are). Both selections run single-threaded
(OMP/OPENBLAS_NUM_THREADS=1, ``workers=1``), isotropic first, with the 1-minute load
average recorded before and after each. Test score of both choices: the Nyström LSSVM
on the landmarks the isotropic search ended on (the ARD search used at most 200 of
them), predicting with the Nyström kernel, test MSE / variance of y.

Usage
-----
    python studies/ard_scale.py --n 100000 --out studies/results/ard_scale.jsonl
    python studies/ard_scale.py --report      # ard_scale.md from ard_scale.jsonl(.gz)
"""

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

import _common as C


def synthetic(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 10))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] + 0.1 * rng.standard_normal(n)
    return X, y


def load_average():
    return [round(v, 2) for v in os.getloadavg()]


def nystrom_score(Xtr, ytr, Xte, yte, gamma, alpha, landmarks):
    """Test MSE / var(y) of the Nyström LSSVM on these landmarks at (γ, α), predicting
    with the Nyström kernel K(x, Z) W⁺ K(Z, X) — the model whose leave-one-out error
    the selection scored."""
    from kernelselect.ard import _search as _ard_search

    gamma = np.broadcast_to(np.asarray(gamma, dtype=float), (Xtr.shape[1],))
    problem = _ard_search.make_problem(Xtr, ytr[:, None], "loo", np.asarray(landmarks))
    f = _ard_search.fit_predict(problem, gamma, float(alpha), Xte - Xtr.mean(axis=0))[:, 0]
    return float(np.mean((f - yte) ** 2) / np.var(yte))


def run(args):
    import kernelselect
    from kernelselect.selection._ard_select import select_ard
    from kernelselect.selection import standardize_columns

    if args.dataset:
        d = C.load_data(args.dataset)
        X, y = np.asarray(d.X, float), np.asarray(d.y, float)
        perm = np.random.default_rng(args.seed).permutation(X.shape[0])
        half = X.shape[0] // 2
        tr, te = perm[:half], perm[half:half + args.n_test]
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
        name = args.dataset
    else:
        Xtr, ytr = synthetic(args.n, args.seed)
        Xte, yte = synthetic(args.n_test, args.seed + 1)
        name = "synthetic_d10"
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
    ym, ys = ytr.mean(), ytr.std()
    ytr, yte = (ytr - ym) / ys, (yte - ym) / ys
    rec = dict(dataset=name, n=int(Xtr.shape[0]), d=int(Xtr.shape[1]),
               n_test=int(Xte.shape[0]), threads=1)
    X_in = Xtr
    if args.dask:                     # chunks of rows, the local threaded scheduler
        import dask
        import dask.array as da

        dask.config.set(scheduler="threads", num_workers=1)
        X_in = da.from_array(Xtr, chunks=(max(1, Xtr.shape[0] // 8), Xtr.shape[1]))
        rec["dask_chunks"] = int(X_in.numblocks[0])
    load0 = load_average()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        iso = kernelselect.select_kernel(X_in, ytr, random_state=args.seed, workers=1)
    t_iso = time.perf_counter() - t0
    load1 = load_average()
    t0 = time.perf_counter()
    res = select_ard(X_in if args.dask else standardize_columns(Xtr), ytr, isotropic=iso,
                     random_state=args.seed, workers=1)
    t_ard = time.perf_counter() - t0
    load2 = load_average()
    info = res.details["ard"]
    marks = np.asarray(iso.details["approximation_params"]["landmarks"])
    rec.update(iso=dict(seconds=t_iso, gamma=iso.best_gamma, alpha=iso.best_alpha,
                        approximation=iso.details["approximation"],
                        builds=iso.details.get("n_operator_builds")),
               ard=dict(seconds=t_ard, total_seconds=t_iso + t_ard,
                        gamma=np.asarray(res.best_gamma).tolist(), alpha=res.best_alpha,
                        n_landmarks=info["n_landmarks"], optimum=info["optimum"],
                        guard=info["guard"].get("rule")),
               ratio=(t_iso + t_ard) / t_iso, load=[load0, load1, load2])
    if not args.no_score:
        rec["iso"]["test_nmse"] = nystrom_score(Xtr, ytr, Xte, yte, iso.best_gamma,
                                                iso.best_alpha, marks)
        rec["ard"]["test_nmse"] = nystrom_score(Xtr, ytr, Xte, yte, res.best_gamma,
                                                res.best_alpha, marks)
    return rec


def report(path):
    """ard_scale.md from every record of ``path`` (and its .gz archive)."""
    recs = C.read_jsonl(path)
    lines = ["# Per-feature bandwidths at scale", "",
             "Generated by `studies/ard_scale.py --report` from `ard_scale.jsonl.gz` "
             "(protocol in the script's docstring): the isotropic defaults, then the "
             "per-feature search from their choice on a Nyström stand-in with (at most 200 "
             "of) their landmarks, one process, one thread; test NMSE of the Nyström LSSVM "
             "refitted at each choice on the same landmarks.", "",
             "| data | n | d | isotropic s (approximation) | ARD search s (landmarks, "
             "evaluations) | total / isotropic | test NMSE isotropic → ARD | load (1 min) "
             "before / between / after |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in recs:
        i, a = r["iso"], r["ard"]
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['d']} | {i['seconds']:.0f} ({i['approximation']}) "
            f"| {a['seconds']:.0f} ({a['n_landmarks']}, {a['optimum']['evaluations']}) | "
            f"{r['ratio']:.2f} | {i.get('test_nmse', float('nan')):.4f} → "
            f"{a.get('test_nmse', float('nan')):.4f} | "
            + " / ".join(f"{lv[0]:.1f}" for lv in r["load"]) + " |")
    out = Path(path).with_name("ard_scale.md")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--n-test", type=int, default=20_000)
    p.add_argument("--dataset", default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-score", action="store_true")
    p.add_argument("--out", type=Path, default=C.RESULTS / "ard_scale.jsonl")
    p.add_argument("--report", action="store_true")
    p.add_argument("--dask", action="store_true",
                   help="pass X as a Dask array (8 chunks of rows, threaded scheduler)")
    args = p.parse_args(argv)
    if args.report:
        report(args.out)
        return
    rec = run(args)
    C.append_record(args.out, rec)
    print(json.dumps(rec, indent=1))


if __name__ == "__main__":
    main()
