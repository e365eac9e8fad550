"""Which rule turns the leave-one-out surface into a choice of (γ, α)?

On the rows, splits and γ grid of ``defaults_quality.py`` (its ``cv`` records give the
γ grid and the 5-fold CV score), the exact kernel matrix is diagonalised once per γ
and the PRESS surface P(γ, α) = (1/n) Σ e_i², e_i = [K_α⁻¹y]_i / [K_α⁻¹]_ii, is
evaluated on the default α path (α = n·10^k, k = −6, −5.5, …, 0). Rules compared:

* ``min``: the minimiser of P (what the defaults do today);
* ``one_se``: the one-standard-error rule (Breiman et al. 1984; Hastie, Tibshirani &
  Friedman, *Elements of Statistical Learning*, 2nd ed., §7.10): among the (γ, α)
  with P ≤ P_min + SE, where SE = sd(e_i²)/√n at the minimiser, the one with the
  fewest effective degrees of freedom d_eff = tr H = Σ λ_j/(λ_j + α) — the simplest
  model the data cannot tell apart from the best;
* ``half_se``: the same with SE/2.

Each choice is scored as in ``defaults_quality.py`` (KRR refitted on the training rows,
test accuracy or test MSE / training variance); the report gives mean Δ against
5-fold CV per task. Multi-class sets use PRESS summed over one-vs-rest ±1 columns.

Usage::

    python studies/defaults_rules.py [--tasks regression,binary] [--datasets servo] [--out FILE]
    python studies/defaults_rules.py --report-only \
        --out studies/results/defaults_rules_raw.jsonl.gz --md studies/results/defaults_rules.md
"""

import argparse
import collections
import time
from pathlib import Path

import numpy as np

import _common as C
from _common import sq_dists, targets, test_score

ALPHA_K = np.arange(-6.0, 0.25, 0.5)
RULES = ("min", "one_se", "half_se", "kfold5", "kfold10")


def spectra(X, gammas):
    """(λ clipped at 0, Q) of the exact kernel matrix for every γ, computed once and
    shared by every rule."""
    D = sq_dists(X, X)
    out = []
    for g in gammas:
        lam, Q = np.linalg.eigh(np.exp(-g * D))
        out.append((np.maximum(lam, 0.0), Q))
    return out


def press_surface(eig, T, alphas):
    """PRESS, d_eff and per-sample squared LOO residuals (at every grid point)."""
    n = T.shape[0]
    P = np.empty((len(eig), alphas.size))
    dof = np.empty_like(P)
    sq = np.empty(P.shape + (n,))
    for i, (lam, Q) in enumerate(eig):
        Qt = Q.T @ T
        Q2 = Q * Q
        for j, a in enumerate(alphas):
            w = 1.0 / (lam + a)
            coef = Q @ (Qt * w[:, None])
            e = coef / (Q2 @ w)[:, None]
            sq[i, j] = (e * e).sum(1)
            P[i, j] = sq[i, j].mean()
            dof[i, j] = np.sum(lam * w)
    return P, dof, sq


def kfold_surface(eig, T, alphas, k, seed):
    """Exact k-fold CV squared error of KRR from one eigendecomposition per γ: the
    held-out residuals of fold B are [(K_α⁻¹)_BB]⁻¹ (K_α⁻¹ y)_B (An, Liu & Venkatesh,
    Pattern Recognition 40, 2007)."""
    n = T.shape[0]
    fold_of = np.random.default_rng(seed).permutation(n) % k
    blocks = [np.flatnonzero(fold_of == b) for b in range(k)]
    out = np.empty((len(eig), alphas.size))
    for i, (lam, Q) in enumerate(eig):
        Qt = Q.T @ T
        for j, a in enumerate(alphas):
            w = 1.0 / (lam + a)
            coef = Q @ (Qt * w[:, None])
            tot = 0.0
            for B in blocks:
                QB = Q[B]
                M = (QB * w) @ QB.T
                e = np.linalg.solve(M, coef[B])
                tot += float((e * e).sum())
            out[i, j] = tot / n
    return out


def choose(P, dof, sq, rule):
    i, j = np.unravel_index(np.argmin(P), P.shape)
    if rule == "min":
        return i, j
    n = sq.shape[-1]
    se = sq[i, j].std(ddof=1) / np.sqrt(n)
    tol = se if rule == "one_se" else se / 2
    ok = P <= P[i, j] + tol
    cand = np.where(ok, dof, np.inf)
    return np.unravel_index(np.argmin(cand), P.shape)


def run(args):
    raw = C.read_jsonl(C.RESULTS / "defaults_quality_raw.jsonl")
    cvs = [r for r in raw if r["method"] == "cv" and r["task"] in args.tasks.split(",")
           and (not args.datasets or r["dataset"] in args.datasets.split(","))]
    out = Path(args.out)
    done = {(r["dataset"], r["split"]) for r in C.read_jsonl(out)}
    cvs.sort(key=lambda r: r["n_train"])
    cache = {}
    for cv in cvs:
        key = (cv["dataset"], cv["split"])
        if key in done:
            continue
        if cv["dataset"] not in cache:
            cache = {cv["dataset"]: C.load_data(cv["dataset"], args.data_dir)}
        data = cache[cv["dataset"]]
        task = cv["task"]
        t0 = time.perf_counter()
        Xtr, ytr, Xte, yte, _, _ = C.capped_half_split(cv["dataset"], task, data, cv["split"],
                                                       args.cap, args.test_cap)
        T, _ = targets(ytr, task)
        gammas = np.asarray(cv["gammas"])
        alphas = Xtr.shape[0] * 10.0 ** ALPHA_K
        eig = spectra(Xtr, gammas)
        P, dof, sq = press_surface(eig, T, alphas)
        rec = dict(dataset=cv["dataset"], task=task, split=cv["split"], n_train=Xtr.shape[0],
                   cv_score=cv["score"])
        folds = {r: kfold_surface(eig, T, alphas, int(r[5:]), 7 + cv["split"])
                 for r in RULES if r.startswith("kfold")}
        for rule in RULES:
            if rule in folds:
                i, j = np.unravel_index(np.argmin(folds[rule]), P.shape)
            else:
                i, j = choose(P, dof, sq, rule)
            rec[rule] = dict(gamma=float(gammas[i]), alpha=float(alphas[j]),
                             dof=float(dof[i, j]),
                             score=test_score(Xtr, ytr, Xte, yte, task, gammas[i], alphas[j]))
        C.append_record(out, rec)
        C.log(f"{key} {time.perf_counter() - t0:.1f} s " + " ".join(
            f"{r}={rec[r]['score'] - rec['cv_score']:+.4f}" for r in RULES))


def report(path, md=None):
    recs = C.read_jsonl(path)
    lines = ["| task | rule | sets | mean Δ vs CV | worst set |", "|---|---|---:|---:|---|"]
    for task in ("binary", "multiclass", "regression"):
        sign = 100.0 if task != "regression" else -1.0   # higher is better, pp / −NMSE
        for rule in RULES:
            per = collections.defaultdict(list)
            for r in recs:
                if r["task"] == task:
                    per[r["dataset"]].append(r[rule]["score"] - r["cv_score"])
            if not per:
                continue
            means = {k: np.mean(v) for k, v in per.items()}
            worst = min(means, key=lambda k: sign * means[k])
            shown = 100.0 if task != "regression" else 1.0
            lines.append(f"| {task} | {rule} | {len(means)} | "
                         f"{shown * np.mean(list(means.values())):+.4f} | "
                         f"{worst} {shown * means[worst]:+.4f} |")
    print("\n".join(lines))
    if md is not None:
        head = ["# Turning the cross-validation surface into a choice", "",
                "Generated by `studies/defaults_rules.py --report-only` from "
                "`defaults_rules_raw.jsonl.gz` (rules and protocol in the script's docstring: "
                "exact kernel matrix, KRR without bias, the γ grid and rows of "
                "`defaults_quality.py`, the default α path without extension). Δ against the "
                "5-fold CV of `defaults_quality_raw.jsonl.gz`: accuracy in percentage points "
                "(higher is better) or NMSE (lower is better). The binary and multi-class run "
                "stopped at its time limit: the 16 smallest binary sets and vehicle.", "",
                "Command: `KERNELSELECT_DATA=../shared/data OMP_NUM_THREADS=1 python "
                "studies/defaults_rules.py --out DIR/defaults_rules_raw.jsonl` (one thread, "
                "shared 2-core machine, load 6–13).", ""]
        Path(md).write_text("\n".join(head + lines) + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=C.DATA)
    p.add_argument("--datasets", default=None, help="comma-separated names (default: all)")
    p.add_argument("--tasks", default="regression,binary,multiclass")
    p.add_argument("--cap", type=int, default=1000)
    p.add_argument("--test-cap", type=int, default=10000)
    p.add_argument("--out", default=str(C.RESULTS / "defaults_rules_raw.jsonl"))
    p.add_argument("--md", default=None, help="also write the report to this file")
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args(argv)
    if not args.report_only:
        run(args)
    report(args.out, args.md)


if __name__ == "__main__":
    main()
