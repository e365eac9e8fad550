"""DI-trained kernel features vs standard ones: test accuracy of a linear classifier.

For each dataset (features min-max scaled to [0, 1] on the training split, as in
Al et al. Sect. 5.1) and each J, four feature maps feed the same linear classifier
(RidgeClassifierCV, ridge chosen by efficient leave-one-out over a fixed grid):

- Std RFF : random Fourier features of exp(−γ‖x − x′‖²)   (sklearn-style RBFSampler)
- DI RFF  : the same initial draw, trained by RFDI  (kernelselect.DIRandomFourierFeatures)
- Std Nys : Nyström with uniformly sampled landmarks     (K(x, X_r) B^{-1/2})
- DI Nys  : the same initial landmarks, trained by NysDI (kernelselect.DINystroem)

γ is chosen once per dataset and split by 3-fold CV of the standard Nyström
pipeline (J = 300) over a grid, as the paper fixes γ with standard Nyström features.
Also times one RFDI gradient evaluation at N_b = 1000, J = 500 against the GEMMs it
contains (same run, min and median over repeats).

Run:  python studies/di_study.py [--quick] [--seeds 1] [--max-epochs 60] [--out-dir DIR]
Writes studies/results/di_study.md and di_study.png (or into DIR).
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

import kernelselect
from kernelselect import di

import _common as C

OUT = C.RESULTS
JS = (100, 500, 1000)
METHODS = ("Std RFF", "DI RFF", "Std Nys", "DI Nys")


def load_capped(name, max_n, rng):
    """(X, y, task label) of a shared set or scikit-learn's bundled digits, at most max_n
    rows (a seeded sample)."""
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        task = "multiclass (10)"
    else:
        d = C.load_data(name)
        X, y = d.X, d.y
        task = d.task + (f" ({len(np.unique(y))})" if d.task == "multiclass" else "")
    if X.shape[0] > max_n:
        keep = rng.choice(X.shape[0], max_n, replace=False)
        X, y = X[keep], y[keep]
    return X.astype(float), y, task


def split_scale(X, y, seed):
    from sklearn.model_selection import train_test_split

    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
    lo, hi = Xtr.min(axis=0), Xtr.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (Xtr - lo) / span, np.clip((Xte - lo) / span, -1, 2), ytr, yte


class StdNystroem:
    """Uniform landmarks, φ(x) = K(x, X_r) B^{-1/2} — the same map DINystroem applies."""

    def __init__(self, J, gamma, seed):
        self.J, self.gamma, self.seed = J, gamma, seed

    def fit(self, X):
        rng = np.random.default_rng(self.seed)
        J = min(self.J, X.shape[0])
        self.R = X[np.sort(rng.choice(X.shape[0], J, replace=False))]
        lam, U = np.linalg.eigh(di._gaussian_block(self.R, self.R, self.gamma))
        self.N = (U / np.sqrt(np.maximum(lam, 1e-12))) @ U.T
        return self

    def transform(self, X):
        return di._gaussian_block(X, self.R, self.gamma) @ self.N


def classifier():
    from sklearn.linear_model import RidgeClassifierCV

    return RidgeClassifierCV(alphas=np.logspace(-6, 2, 9))


def choose_gamma(Xtr, ytr, seed):
    from sklearn.model_selection import StratifiedKFold

    d = Xtr.shape[1]
    grid = np.array([0.1, 0.3, 1.0, 3.0, 10.0]) / (d * Xtr.var())
    scores = []
    for g in grid:
        acc = []
        for tr, va in StratifiedKFold(3, shuffle=True, random_state=seed).split(Xtr, ytr):
            m = StdNystroem(300, g, seed).fit(Xtr[tr])
            c = classifier().fit(m.transform(Xtr[tr]), ytr[tr])
            acc.append(c.score(m.transform(Xtr[va]), ytr[va]))
        scores.append(np.mean(acc))
    return float(grid[int(np.argmax(scores))])


def evaluate(Xtr, Xte, ytr, yte, J, gamma, seed, max_epochs):
    rows = {}
    rng = np.random.default_rng(seed)
    W = rng.normal(0.0, np.sqrt(2 * gamma), size=(Xtr.shape[1], J))
    b = rng.uniform(0, 2 * np.pi, size=J)

    def fit_score(Ftr, Fte):
        return classifier().fit(Ftr, ytr).score(Fte, yte)

    def di_row(transformer):
        """Train a DI transformer, then score the classifier on its features."""
        t = time.perf_counter()
        m = transformer(J, gamma=gamma, max_epochs=max_epochs, random_state=seed).fit(Xtr, ytr)
        fit_t = time.perf_counter() - t
        return dict(acc=fit_score(m.transform(Xtr), m.transform(Xte)), train=fit_t,
                    epochs=m.history_.n_epochs, stop=m.history_.stop_reason,
                    total=time.perf_counter() - t)

    t = time.perf_counter()
    acc = fit_score(di._rff_map(Xtr, W, b), di._rff_map(Xte, W, b))
    rows["Std RFF"] = dict(acc=acc, train=0.0, epochs=0, total=time.perf_counter() - t)

    rows["DI RFF"] = di_row(kernelselect.DIRandomFourierFeatures)

    t = time.perf_counter()
    s = StdNystroem(J, gamma, seed).fit(Xtr)
    rows["Std Nys"] = dict(acc=fit_score(s.transform(Xtr), s.transform(Xte)), train=0.0,
                           epochs=0, total=time.perf_counter() - t)

    rows["DI Nys"] = di_row(kernelselect.DINystroem)
    return rows


def time_gradient(repeats=60):
    """One rfdi call at N_b = 1000, J = 500 (d = 64, L = 10) vs the GEMMs inside it."""
    rng = np.random.default_rng(0)
    N, J, d, L = 1000, 500, 64, 10
    X = rng.random((N, d))
    Y = di.encode_targets(rng.integers(0, L, N))
    W = rng.normal(size=(d, J))
    b = rng.uniform(0, 2 * np.pi, J)
    Z = rng.normal(size=(N, J))
    A = rng.normal(size=(J, L))
    Ry = rng.normal(size=(N, L))

    def gemms():
        X @ W                   # U = XW (for cos) …
        X @ W                   # … and again for sin = cos(· − π/2) in the fused kernel
        Z.T @ Z                 # S = ZcᵀZc
        Z.T @ Y                 # M = ZcᵀYc
        Z @ A                   # Zc A
        Ry @ A.T                # residual · Aᵀ
        X.T @ Z                 # ∂/∂W = XᵀΓ

    def paired(f, g, pairs):
        """Alternate single calls of f and g: min times and the median per-pair ratio,
        so that both see the same (shared, fluctuating) machine load."""
        f(), g()
        tf, tg = [], []
        for _ in range(pairs):
            t = time.perf_counter()
            f()
            tf.append(time.perf_counter() - t)
            t = time.perf_counter()
            g()
            tg.append(time.perf_counter() - t)
        tf, tg = np.array(tf), np.array(tg)
        return dict(f_min=tf.min(), f_median=float(np.median(tf)), g_min=tg.min(),
                    g_median=float(np.median(tg)), ratio_median=float(np.median(tf / tg)))

    from threadpoolctl import threadpool_limits

    out = {}
    R = X[:J].copy()
    for threads in (1, None):           # one BLAS/OpenMP thread, then the default
        with threadpool_limits(threads):
            tag = "1 thread" if threads == 1 else f"{os.cpu_count()} threads"
            r = paired(lambda: di.rfdi(X, Y, W, b), gemms, repeats)
            out[tag] = dict(rfdi=(r["f_min"], r["f_median"]), gemms=(r["g_min"], r["g_median"]),
                            ratio_median=r["ratio_median"])
            r = paired(lambda: di.nysdi(X, Y, R, 1.0), gemms, max(5, repeats // 3))
            out[tag]["nysdi"] = (r["f_min"], r["f_median"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--max-epochs", type=int, default=60)
    ap.add_argument("--datasets", default="digits,segment,vehicle,ionosphere,penbased")
    ap.add_argument("--timing-only", action="store_true",
                    help="re-time the gradient and rewrite the report from di_study.json")
    ap.add_argument("--out-dir", type=Path, default=C.RESULTS)
    args = ap.parse_args()
    global OUT
    OUT = args.out_dir
    if args.timing_only:
        saved = json.loads((OUT / "di_study.json").read_text())
        timing = time_gradient()
        print("timing", timing)
        saved["timing"] = timing
        (OUT / "di_study.json").write_text(json.dumps(saved, indent=1))
        write_report(saved["results"], timing, argparse.Namespace(**saved["args"]))
        return
    names = args.datasets.split(",")
    Js = (100,) if args.quick else JS
    results = []
    for name in names:
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            X, y, task = load_capped(name, 4000, rng)
            Xtr, Xte, ytr, yte = split_scale(X, y, seed)
            gamma = choose_gamma(Xtr, ytr, seed)
            for J in Js:
                rows = evaluate(Xtr, Xte, ytr, yte, J, gamma, seed, args.max_epochs)
                for meth, r in rows.items():
                    results.append(dict(dataset=name, task=task, n_train=Xtr.shape[0],
                                        d=Xtr.shape[1], gamma=gamma, seed=seed, J=J,
                                        method=meth, **r))
                print(name, seed, J, {m: round(r["acc"], 4) for m, r in rows.items()},
                      {m: round(r["train"], 1) for m, r in rows.items()}, flush=True)
    args.blas_threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    args.omp_threads = os.environ.get("OMP_NUM_THREADS", "unset")
    timing = time_gradient()
    print("timing", timing)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "di_study.json").write_text(json.dumps(dict(results=results, timing=timing,
                                                       args=vars(args)), indent=1, default=str))
    write_report(results, timing, args)


def args_threads(args):
    return getattr(args, "blas_threads", None) or os.environ.get("OPENBLAS_NUM_THREADS", "unset")


def write_report(results, timing, args):
    import pandas as pd

    df = pd.DataFrame(results)
    agg = df.groupby(["dataset", "J", "method"], sort=False).agg(
        acc=("acc", "mean"), acc_sd=("acc", "std"), train=("train", "mean"),
        epochs=("epochs", "mean")).reset_index()
    lines = ["# DI-trained vs standard kernel features", "",
             f"Seeds per cell: {args.seeds}; max_epochs = {args.max_epochs}; "
             "classifier RidgeClassifierCV (alphas 1e-6..1e2); 70/30 stratified split, "
             "features min-max scaled on the training split; γ by 3-fold CV of standard "
             "Nyström (J = 300). Train time = fitting the DI map (s). "
             f"Training ran with OPENBLAS_NUM_THREADS={args_threads(args)}, "
             f"OMP_NUM_THREADS={getattr(args, 'omp_threads', None) or 'unset'} "
             f"on a shared {os.cpu_count()}-core machine.", ""]
    info = df.drop_duplicates("dataset")[["dataset", "task", "n_train", "d", "gamma"]]
    lines += ["| dataset | task | n_train | d | γ |", "|---|---|---|---|---|"]
    for _, r in info.iterrows():
        lines.append(f"| {r.dataset} | {r.task} | {r.n_train} | {r.d} | {r.gamma:.3g} |")
    lines += ["", "Test accuracy (train time of the DI map, epochs):", "",
              "| dataset | J | Std RFF | DI RFF | Std Nys | DI Nys |", "|---|---|---|---|---|---|"]
    for (ds, J), g in agg.groupby(["dataset", "J"], sort=False):
        cells = []
        for meth in METHODS:
            r = g[g.method == meth].iloc[0]
            cell = f"{r.acc:.4f}"
            if meth.startswith("DI"):
                cell += f" ({r.train:.1f} s, {r.epochs:.0f} ep)"
            cells.append(cell)
        lines.append(f"| {ds} | {J} | " + " | ".join(cells) + " |")
    lines += ["", "## One gradient evaluation (N_b = 1000, J = 500, d = 64, L = 10)", "",
              "rfdi and the GEMMs it contains (XW twice — for cos and for sin = cos(· − π/2) "
              "in the fused feature kernel —, ZᵀZ, ZᵀY, ZA, RAᵀ, XᵀΓ) timed alternately, "
              "one call each, in the same run; nysdi for reference.", "",
              "| threads | rfdi min / median (ms) | GEMMs min / median (ms) | "
              "median ratio rfdi/GEMMs | nysdi min / median (ms) |",
              "|---|---|---|---|---|"]
    for tag, t in timing.items():
        lines.append(f"| {tag} | {1e3 * t['rfdi'][0]:.1f} / {1e3 * t['rfdi'][1]:.1f} | "
                     f"{1e3 * t['gemms'][0]:.1f} / {1e3 * t['gemms'][1]:.1f} | "
                     f"{t['ratio_median']:.2f} | "
                     f"{1e3 * t['nysdi'][0]:.1f} / {1e3 * t['nysdi'][1]:.1f} |")
    path = OUT / "di_study.md"
    keep = ""                      # a hand-written discussion survives regeneration
    if path.exists() and "\n## Discussion" in path.read_text():
        keep = "\n## Discussion" + path.read_text().split("\n## Discussion", 1)[1]
    path.write_text("\n".join(lines) + "\n" + keep)
    plot(agg)


def plot(agg):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(agg.dataset))
    fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names), 3.4), squeeze=False)
    styles = {"Std RFF": ("C0", "--"), "DI RFF": ("C0", "-"),
              "Std Nys": ("C3", "--"), "DI Nys": ("C3", "-")}
    for ax, name in zip(axes[0], names):
        g = agg[agg.dataset == name]
        for meth in METHODS:
            h = g[g.method == meth]
            c, ls = styles[meth]
            ax.plot(h.J, h.acc, ls, color=c, marker="o", label=meth)
        ax.set_xscale("log")
        ax.set_title(name)
        ax.set_xlabel("J (features / landmarks)")
    axes[0][0].set_ylabel("test accuracy")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "di_study.png", dpi=110)


if __name__ == "__main__":
    main()
