"""Time one kernel selection at n training points, against the peers a user would run.

Compares, in one run and on the same γ grid (15 candidates around the median
heuristic) and training rows:

* ``select_kernel(criterion="ree", approximation=...)`` for Nyström and MCM,
* the exact dense C_ree (``approximation=Exact(method="dense")``),
* scikit-learn ``GridSearchCV(KernelRidge(kernel="rbf"), cv=5)``,

and reports wall time, the ratio to each peer, the chosen γ and the test score of
kernel ridge regression refitted with that γ (accuracy for ±1 labels, MSE / var(y)
for regression). Writes a markdown table (``--out``).

Usage::

    python studies/selection_speed.py --dataset cadata --n 10000
"""

import argparse
import time
from pathlib import Path

import numpy as np

import kernelselect
from kernelselect.selection import default_gammas

import _common as C


def krr_score(X_tr, y_tr, X_te, y_te, gamma, alpha, task):
    """Test accuracy (binary) or MSE / var(y_test) of KRR refitted at (γ, α)."""
    s = C.test_score(X_tr, y_tr, X_te, y_te, task, gamma, alpha)
    return s if task == "binary" else s / float(np.var(y_te))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cadata")
    parser.add_argument("--data-dir", default=str(C.DATA))
    parser.add_argument("--n", type=int, default=10000, help="training rows")
    parser.add_argument("--n-test", type=int, default=5000)
    parser.add_argument("--mu", type=float, default=1e-3, help="alpha = mu * n")
    parser.add_argument("--skip-cv", action="store_true")
    parser.add_argument("--skip-dense", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(C.RESULTS / "selection_speed.md"))
    args = parser.parse_args(argv)

    data = C.load_data(args.dataset, args.data_dir)
    X, y, task = data.X, data.y, data.task
    rng = np.random.default_rng(args.seed)
    idx = rng.permutation(X.shape[0])
    tr, te = idx[: args.n], idx[args.n: args.n + args.n_test]
    X_tr, X_te = C.standardise(X[tr], X[te])
    y_tr, y_te = y[tr], y[te]
    n = X_tr.shape[0]
    alpha = args.mu * n
    gammas = default_gammas(X_tr, random_state=args.seed)

    rows = []

    def run(name, fn):
        t = time.perf_counter()
        gamma = fn()
        elapsed = time.perf_counter() - t
        score = krr_score(X_tr, y_tr, X_te, y_te, gamma, alpha, task)
        rows.append((name, elapsed, gamma, score))
        print(f"{name:40s} {elapsed:10.2f} s  gamma={gamma:.4g}  score={score:.4f}", flush=True)

    for label, approx in [("nystrom C_ree (c=200)", kernelselect.Nystroem(n_landmarks=200)),
                          ("nystrom C_ree (c=500)", kernelselect.Nystroem(n_landmarks=500)),
                          ("mcm C_ree", kernelselect.MCM())]:
        run(label, lambda a=approx: kernelselect.select_kernel(
            X_tr, y_tr, gammas=gammas, alphas=[alpha], criterion="ree", approximation=a,
            random_state=args.seed).best_gamma)
    if not args.skip_dense:
        run("exact dense C_ree", lambda: kernelselect.select_kernel(
            X_tr, y_tr, gammas=gammas, alphas=[alpha], criterion="ree",
            approximation=kernelselect.Exact(method="dense", max_dense=max(8000, n))).best_gamma)
    if not args.skip_cv:
        from sklearn.kernel_ridge import KernelRidge
        from sklearn.model_selection import GridSearchCV, KFold

        def cv():
            search = GridSearchCV(KernelRidge(kernel="rbf", alpha=alpha), {"gamma": list(gammas)},
                                  cv=KFold(5, shuffle=True, random_state=args.seed),
                                  scoring="neg_mean_squared_error", n_jobs=1)
            search.fit(X_tr, y_tr)
            return float(search.best_params_["gamma"])

        run("scikit-learn GridSearchCV(KernelRidge), 5-fold", cv)

    peers = {name: t for name, t, _, _ in rows if not name.startswith(("nystrom", "mcm"))}
    lines = [
        f"# Selection time at n = {n} ({args.dataset}, {task}, d = {X.shape[1]})",
        "",
        f"15 γ = γ₀·2^k (k = −7…7, median heuristic), α = {args.mu}·n = {alpha:g}, features "
        f"standardised on the training rows; score = KRR refitted with the chosen γ on "
        f"{len(te)} held-out rows ({'accuracy' if task == 'binary' else 'MSE / var(y)'}). "
        f"Wall-clock seconds on this 2-core machine, one run each.",
        "",
        "| method | time (s) | chosen γ | score | " + " | ".join(f"speed-up vs {p}" for p in peers) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(peers),
    ]
    for name, t, g, s in rows:
        ratios = " | ".join(f"{pt / t:.1f}×" for pt in peers.values())
        lines.append(f"| {name} | {t:.2f} | {g:.4g} | {s:.4f} | {ratios} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
