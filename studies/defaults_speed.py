"""Speed of the defaults against 5-fold GridSearchCV(KernelRidge) in the same run.

``kernelselect.select_kernel(X, y)`` with its defaults against scikit-learn's
``GridSearchCV(KernelRidge(kernel="rbf"), {"gamma": 15 values (the median-heuristic
grid), "alpha": 5 values n_fit·10^k, k = −4…0}, cv=KFold(5))`` on a seeded subsample
of cadata (standardised features and target), one thread on each side
(OMP/OPENBLAS_NUM_THREADS=1 is set before numpy loads).

At n_train = 10⁴ each of the 375 fits factorises an 8000×8000 matrix; the full search
would take hours on a shared machine, so it is timed on ``--cv-candidates`` of its 75
(γ, α) candidates (5 fits each, the same code path) and scaled to 75 — the search's
cost is the sum of identical, independent candidate costs. The report says which
figures are measured and which are scaled.

Usage
-----
    python studies/defaults_speed.py --sizes 1000,10000 --out studies/results/defaults_speed.json
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import _common as C  # noqa: E402


def load(n, seed=0):
    """A seeded subsample of n cadata rows, features and target standardised on it."""
    d = C.load_data("cadata")
    idx = np.random.default_rng(seed).choice(d.X.shape[0], size=n, replace=False)
    X, = C.standardise(d.X[idx])
    y = d.y[idx]
    return np.ascontiguousarray(X), (y - y.mean()) / y.std()


def run(n, cv_candidates):
    import kernelselect
    from kernelselect.selection import default_gammas
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, KFold

    X, y = load(n)
    load_before = os.getloadavg()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        res = kernelselect.select_kernel(X, y, random_state=0)
        t_def = time.perf_counter() - t0
    gammas = default_gammas(X, random_state=0)
    n_fit = n - n // 5
    alphas = n_fit * 10.0 ** np.arange(-4, 1)
    cands = [(g, a) for g in gammas for a in alphas]
    take = len(cands) if cv_candidates <= 0 else min(cv_candidates, len(cands))
    pick = np.linspace(0, len(cands) - 1, take).round().astype(int)
    t0 = time.perf_counter()
    if take == len(cands):
        GridSearchCV(KernelRidge(kernel="rbf"), {"gamma": list(map(float, gammas)),
                                                 "alpha": list(map(float, alphas))},
                     cv=KFold(5, shuffle=True, random_state=0),
                     scoring="neg_mean_squared_error", n_jobs=1, refit=False).fit(X, y)
    else:
        for i in pick:
            g, a = cands[i]
            GridSearchCV(KernelRidge(kernel="rbf"), {"gamma": [float(g)], "alpha": [float(a)]},
                         cv=KFold(5, shuffle=True, random_state=0),
                         scoring="neg_mean_squared_error", n_jobs=1, refit=False).fit(X, y)
    t_cv_part = time.perf_counter() - t0
    t_cv = t_cv_part * len(cands) / take
    return dict(n=n, defaults_seconds=t_def, gridsearch_seconds=t_cv,
                gridsearch_measured_candidates=int(take), gridsearch_candidates=len(cands),
                gridsearch_measured_seconds=t_cv_part, ratio=t_cv / t_def,
                approximation=res.details.get("approximation"),
                levels=[{k: v for k, v in lv.items() if k != "gammas"}
                        for lv in res.details.get("auto", {}).get("levels", [])],
                operator_builds=res.details.get("n_operator_builds"),
                load_before=load_before, load_after=os.getloadavg(),
                threads=os.environ.get("OMP_NUM_THREADS"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="1000,10000")
    p.add_argument("--cv-candidates", default="0,3",
                   help="GridSearchCV candidates timed per size (0 = all 75), comma-separated")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args()
    out = []
    for n, c in zip(map(int, args.sizes.split(",")), map(int, args.cv_candidates.split(","))):
        rec = run(n, c)
        print(json.dumps(rec), flush=True)
        out.append(rec)
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
