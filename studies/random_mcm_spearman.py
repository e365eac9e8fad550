"""How well the randomised-MCM criteria (paper 000) and the Song–Xu MCM C_ree
follow their exact criteria over a γ grid.

For each dataset (X standardised, binary ±1 labels, n ≤ 1000) and a 15-point
grid γ = γ₀·2^k, k = −7..7, γ₀ = 1/median‖x_i − x_j‖², the exact criteria are
computed on the dense kernel matrix and each approximate criterion on its
operator; the score is Spearman's ρ between the two γ-curves, averaged over
seeds (mean ± std). Run:  python studies/random_mcm_spearman.py [--seeds 5]
"""

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from kernelselect.criteria import random_mcm as RC
from kernelselect.operators.mcm import MCM
from kernelselect.operators.random_mcm import RandomMCM

import _common as C

DATASETS = ["breast_cancer", "heart", "ionosphere", "wdbc", "australian", "liver_disorders",
            "haberman", "german_numer", "fourclass", "ratsch_breast_cancer"]
ALPHA = 1.0


def standardised(name):
    """(X standardised on all rows, y) of a data set."""
    d = C.load_data(name)
    return C.standardise(d.X)[0], d.y


def gamma_grid(X):
    d2 = C.sq_dists(X, X)
    g0 = 1.0 / np.median(d2[np.triu_indices(len(X), 1)])
    return g0 * 2.0 ** np.arange(-7, 8), d2


def exact_curves(y, d2, gammas, alpha):
    n = len(y)
    sigma = 0.01 * np.std(y)
    ybar = RC.class_weighted_labels(y)
    out = {k: [] for k in ("kta", "mmd", "c1", "eloo", "ree")}
    for g in gammas:
        K = np.exp(-g * d2)
        out["kta"].append(y @ K @ y / (n * np.linalg.norm(K)))
        out["mmd"].append(ybar @ K @ ybar)
        w, V = np.linalg.eigh(K)
        c = V.T @ y
        out["c1"].append(alpha ** 2 / n * np.sum(c ** 2 / (w + alpha) ** 2)
                         + sigma ** 2 / n * np.sum(w / (w + alpha)))
        out["ree"].append(alpha / n * np.sum(c ** 2 / (w + alpha)))
        Ki = (V / (w + alpha)) @ V.T
        k1 = Ki.sum(1)
        s = k1.sum()
        b = (k1 @ y) / s
        a = Ki @ (y - b)
        dg = np.diag(Ki) - k1 ** 2 / s
        e = a / dg
        out["eloo"].append(np.mean(y * (y - e) <= 0))
    return {k: np.array(v) for k, v in out.items()}


PAIRS = {  # approximate → exact
    "random_kta": "kta", "random_kta_row": "kta", "random_kta_row_2g": "kta",
    "random_mmd": "mmd", "random_mmd_row": "mmd",
    "random_c1": "c1", "random_c1_rff": "c1",
    "random_eloo": "eloo",
}


def rho(a, b):
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return np.nan
    return spearmanr(a, b).statistic


def mcm_variants(names=("heart", "ionosphere", "breast_cancer", "wdbc", "liver_disorders", "haberman"),
                 seeds=3):
    """C_ree Spearman for the fit of h (G: grid difference, P: torus distance) and
    raw (r) vs clipped (c) U, p = 1, 2, 3."""
    for name in names:
        X, y = standardised(name)
        gammas, d2 = gamma_grid(X)
        ex = exact_curves(y, d2, gammas, ALPHA)
        cells = []
        for p in (1, 2, 3):
            for periodic, clip in [(False, False), (False, True), (True, True)]:
                r = []
                for seed in range(seeds):
                    M = MCM(levels=p, periodic=periodic, clip_negative=clip)
                    st = M.prepare(X, y, random_state=seed)
                    ree = []
                    for g in gammas:
                        op = M.build(X, y, g, state=st)
                        yr = op.restrict(y)
                        ree.append(op.quadratic(lambda lam: 1.0 / (lam + ALPHA), yr)[0, 0] / op.n)
                    r.append(rho(np.array(ree), ex["ree"]))
                cells.append(f"{np.nanmean(r):+.2f}")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcm-variants", action="store_true",
                    help="only the MCM h-fit / clipping comparison")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--D", type=int, default=100)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.mcm_variants:
        mcm_variants()
        return
    results = {}
    for name in DATASETS:
        X, y = standardised(name)
        gammas, d2 = gamma_grid(X)
        ex = exact_curves(y, d2, gammas, ALPHA)
        res = {k: [] for k in PAIRS}
        for k in ("mcm_p1", "mcm_p2", "mcm_p3", "mcm_p1_clip", "mcm_p2_clip", "mcm_p3_clip"):
            res[k] = []
        for seed in range(args.seeds):
            A = RandomMCM(n_features=args.D)
            st = A.prepare(X, y, kernel="gaussian", random_state=seed)
            curves = {k: [] for k in PAIRS}
            for g in gammas:
                op = A.build(X, y, g, kernel="gaussian", state=st)
                for k in PAIRS:
                    curves[k].append(RC.RANDOM_CRITERIA[k](op, y, [ALPHA])[0])
            for k in PAIRS:
                res[k].append(rho(np.array(curves[k]), ex[PAIRS[k]]))
            for p, clip in [(1, False), (2, False), (3, False), (1, True), (2, True), (3, True)]:
                if p > X.shape[1]:
                    continue
                M = MCM(levels=p, clip_negative=clip)
                stm = M.prepare(X, y, random_state=seed)
                ree = []
                for g in gammas:
                    op = M.build(X, y, g, state=stm)
                    yr = op.restrict(y)
                    ree.append(ALPHA / op.n * op.quadratic(lambda lam: 1.0 / (lam + ALPHA), yr)[0, 0])
                res[f"mcm_p{p}" + ("_clip" if clip else "")].append(rho(np.array(ree), ex["ree"]))
        results[name] = {k: (float(np.nanmean(v)), float(np.nanstd(v))) if v else (np.nan, np.nan)
                         for k, v in res.items()}
        print(name, len(y), {k: f"{m:+.2f}" for k, (m, s) in results[name].items()}, flush=True)
    cols = list(PAIRS) + ["mcm_p1", "mcm_p2", "mcm_p3", "mcm_p1_clip", "mcm_p2_clip", "mcm_p3_clip"]
    print("\n| dataset | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for name, r in results.items():
        print(f"| {name} | " + " | ".join(f"{r[c][0]:+.2f}±{r[c][1]:.2f}" for c in cols) + " |")
    med = {c: np.nanmedian([r[c][0] for r in results.values()]) for c in cols}
    print("| median | " + " | ".join(f"{med[c]:+.2f}" for c in cols) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
