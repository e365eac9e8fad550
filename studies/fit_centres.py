"""How many Nyström centres the fitted machine needs: test error against m at the
(γ, α) the defaults select, against exact kernel ridge regression and against
scikit-learn's Nystroem + RidgeCV at the same m.

For every set and training size n: a 50/50 split (``_common.half_split``: features
standardised, a real target centred and scaled on the training half; the training half
subsampled to n rows, the test half capped at 2·10⁴ rows), then

- ``select_kernel(X, y)`` with its defaults → (γ, α) and the effective dimension
  d = Σ λᵢ/(λᵢ + α) its last Nyström level measured (when it did);
- a pilot effective dimension at (γ, α) from m₀ = min(n, 2000) uniform centres: the
  eigenvalues μᵢ of K_m₀m₀, scaled by n/m₀ to the kernel matrix's, d₀ = Σ (n/m₀)μᵢ /
  ((n/m₀)μᵢ + α);
- exact KRR at (γ, α) (n ≤ 2·10⁴; regression: the centred target, no bias; binary: the
  LSSVM with bias, sign of f);
- for m = 125, 250, …, ≤ n/2 (and ≤ ``--max-m``): the Nyström machine by conjugate
  gradients (uniform centres, m more rows for the preconditioner, tol 1e-6) and ``Nystroem(n_components=m, gamma=γ)`` +
  ``RidgeCV(alphas=logspace(−10, 2, 25))`` on the same features' span;

each test error (NMSE = MSE / variance of the test target, or the error rate) and the
seconds. One JSON line per (set, n, split) in ``results/fit_centres_raw.jsonl``;
``report`` rebuilds ``results/fit_centres.md`` and the error-against-m figure from them.

    python studies/fit_centres.py run --sets protein cadata --n 2500 5000 10000 20000
    python studies/fit_centres.py report
"""

import time

import numpy as np

import _common as C

RAW = C.RESULTS / "fit_centres_raw.jsonl"
REPORT = C.RESULTS / "fit_centres.md"
FIGURE = C.RESULTS / "fit_centres.png"
TEST_CAP = 20_000
EXACT_MAX = 20_000
PILOT = 2000


def error(pred, y, task):
    if task == "regression":
        return float(np.mean((pred - y) ** 2) / np.var(y))
    return float(np.mean(np.where(pred >= 0, 1.0, -1.0) != y))


def pilot_deff(X, gamma, alpha, rng):
    from kernelselect import lowlevel

    n = X.shape[0]
    m0 = min(n, PILOT)
    idx = np.sort(rng.choice(n, m0, replace=False))
    mu = np.linalg.eigvalsh(lowlevel.kernel_block(X[idx], X[idx], gamma))
    lam = np.clip(mu, 0, None) * (n / m0)
    return float(np.sum(lam / (lam + alpha))), m0


def exact_fit(X, y, gamma, alpha, bias):
    """Exact KRR (or the LSSVM with bias) by one in-place Cholesky of K + αI (one n × n
    array, so n = 2·10⁴ fits in 3.2 GB); returns the predictor."""
    import scipy.linalg as sl

    from kernelselect import lowlevel
    from kernelselect.solvers._exact import cross_kernel_matvec

    K = lowlevel.kernel_block(X, X, gamma)
    K[np.diag_indices_from(K)] += alpha
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):   # the threaded n = 2·10⁴ dpotrf segfaulted
        c = sl.cho_factor(K.T, lower=False, overwrite_a=True, check_finite=False)
    rhs = np.column_stack([np.ones(len(y)), y]) if bias else y[:, None]
    with threadpool_limits(1, user_api="blas"):
        sol = sl.cho_solve(c, rhs, check_finite=False)
    del K, c
    if bias:
        b = sol[:, 1].sum() / sol[:, 0].sum()
        coef = sol[:, 1] - b * sol[:, 0]
    else:
        b, coef = 0.0, sol[:, 0]
    return lambda Z: cross_kernel_matvec(Z, X, coef, gamma) + b


def last_deff(res):
    levels = (res.details.get("auto") or {}).get("levels") or []
    for level in reversed(levels):
        if "effective_dimension" in level:
            return float(level["effective_dimension"]), level["approximation"]
    return None, None


def run_one(name, task, n_cap, split, max_m):
    import kernelselect
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import RidgeCV

    from kernelselect.solvers._pcg import (SAMPLE_PER_CENTRE, choose_centres, choose_sample,
                                           fit_nystrom_pcg)

    data = C.load_data(name)
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=np.float64)
    Xtr, ytr, Xte, yte, rng = C.half_split(X, y, task, name, split)
    n_full = Xtr.shape[0]
    tr = C.subsample(rng, n_full, n_cap)
    te = C.subsample(rng, Xte.shape[0], TEST_CAP)
    Xtr, ytr = np.ascontiguousarray(Xtr[tr]), ytr[tr]
    Xte, yte = np.ascontiguousarray(Xte[te]), yte[te]
    n = Xtr.shape[0]
    rec = {"dataset": name, "task": task, "n": n, "n_full": n_full, "split": split,
           "repeat": split, "part": f"n={n_cap}", "d": X.shape[1], "load_before": C_load()}
    t0 = time.perf_counter()
    res = kernelselect.select_kernel(Xtr, ytr, random_state=split)
    rec["select_seconds"] = time.perf_counter() - t0
    gamma, alpha = float(res.best_gamma), float(res.best_alpha)
    rec.update(gamma=gamma, alpha=alpha, lam=alpha / n)
    rec["deff_selection"], rec["deff_level"] = last_deff(res)
    rec["deff_pilot"], rec["pilot_m"] = pilot_deff(Xtr, gamma, alpha, np.random.default_rng(split))
    bias = task != "regression"
    Y = ytr[:, None]
    if n <= EXACT_MAX:
        t0 = time.perf_counter()
        f = exact_fit(Xtr, ytr, gamma, alpha, bias)
        rec["exact_seconds"] = time.perf_counter() - t0
        rec["exact_error"] = error(f(Xte), yte, task)
    rec["m"] = {}
    m = 125
    while m <= min(n // 2, max_m):
        row = {}
        draw = np.random.default_rng([split, m])
        centres = choose_centres(n, m, draw)
        sample = choose_sample(n, centres, SAMPLE_PER_CENTRE * m, draw)
        t0 = time.perf_counter()
        model = fit_nystrom_pcg(Xtr, Y, gamma, alpha, centres=centres, sample=sample,
                                bias=bias, tol=1e-6, max_iter=500)
        row["seconds"] = time.perf_counter() - t0
        row["error"] = error(model.decision_function(Xte)[:, 0, 0], yte, task)
        row["iterations"] = model.details["iterations"]
        row["residual"] = float(model.details["residual"].max())
        t0 = time.perf_counter()
        feats = Nystroem(gamma=gamma, n_components=m, random_state=split).fit(Xtr)
        ridge = RidgeCV(alphas=np.logspace(-10, 2, 25)).fit(feats.transform(Xtr), ytr)
        row["peer_seconds"] = time.perf_counter() - t0
        row["peer_error"] = error(ridge.predict(feats.transform(Xte)), yte, task)
        row["peer_alpha"] = float(ridge.alpha_)
        rec["m"][str(m)] = row
        C.log(name, n, m, row)
        m *= 2
    rec["load_after"] = C_load()
    C.append_record(RAW, rec)


def C_load():
    import os

    return [round(x, 2) for x in os.getloadavg()]


def run(args):
    tasks = {name: task for name, task, _, _ in C.list_data()}
    done = C.done_keys(RAW)
    for name in args.sets:
        for n in args.n:
            for split in range(args.splits):
                if (name, split, f"n={n}") in done:
                    continue
                C.log("run", name, n, split)
                run_one(name, tasks[name], n, split, args.max_m)


def report(args):
    recs = C.read_records(RAW)
    lines = ["# Nyström centres for the fitted machine: test error against m", "",
             "Generated by `studies/fit_centres.py report` from `fit_centres_raw.jsonl.gz`. "
             "(γ, α) from `select_kernel`'s defaults on the training rows; error = test NMSE "
             "(regression) or error rate (binary); *peer* = scikit-learn "
             "`Nystroem(n_components=m) + RidgeCV`.", ""]
    for r in sorted(recs, key=lambda r: (r["dataset"], r["n"], r["split"])):
        ex = r.get("exact_error")
        head = (f"## {r['dataset']} (n = {r['n']}, d = {r['d']}, split {r['split']}): γ = "
                f"{r['gamma']:.3g}, α/n = {r['lam']:.2g}, d_eff: selection "
                f"{_fmt(r['deff_selection'])} ({r['deff_level']}), pilot {r['deff_pilot']:.0f} "
                f"(m₀ = {r['pilot_m']}); exact {_fmt(ex, 4)}")
        lines += [head, "", "| m | error | / exact | iterations | seconds | peer error | peer s |",
                  "|---:|---:|---:|---:|---:|---:|---:|"]
        for m, row in sorted(r["m"].items(), key=lambda kv: int(kv[0])):
            ratio = f"{row['error'] / ex:.3f}" if ex else "—"
            lines.append(f"| {m} | {row['error']:.4f} | {ratio} | {row['iterations']} | "
                         f"{row['seconds']:.1f} | {row['peer_error']:.4f} | "
                         f"{row['peer_seconds']:.1f} |")
        lines.append("")
    C.write_report(REPORT, lines)
    plot(recs)


def plot(recs):
    """Test error against m, one panel per set: the Nyström machine (solid), scikit-learn's
    Nystroem + RidgeCV (dotted) and exact KRR (dashed), a colour per n."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = sorted({r["dataset"] for r in recs})
    fig, axes = plt.subplots(1, len(sets), figsize=(5.2 * len(sets), 3.8), squeeze=False)
    for ax, name in zip(axes[0], sets):
        rows = sorted((r for r in recs if r["dataset"] == name and r["split"] == 0),
                      key=lambda r: r["n"])
        for k, r in enumerate(rows):
            colour = f"C{k}"
            ms = sorted(int(m) for m in r["m"])
            ax.plot(ms, [r["m"][str(m)]["error"] for m in ms], "o-", color=colour,
                    label=f"n = {r['n']}: conjugate gradients")
            ax.plot(ms, [r["m"][str(m)]["peer_error"] for m in ms], "s:", color=colour,
                    alpha=0.7, label=f"n = {r['n']}: Nystroem + RidgeCV")
            if r.get("exact_error") is not None:
                ax.axhline(r["exact_error"], color=colour, ls="--", lw=1,
                           label=f"n = {r['n']}: exact KRR")
            rule = np.sqrt(r["n"]) * np.log(r["n"])
            ax.axvline(rule, color=colour, ls="-.", lw=0.8, alpha=0.6)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("centres m (dash-dot: √n·ln n)")
        ax.set_ylabel("test NMSE" if rows and rows[0]["task"] == "regression" else "test error")
        ax.set_title(f"{name}, 50/50 split, (γ, α) of the defaults")
        ax.legend(fontsize=6.5)
    fig.tight_layout()
    fig.savefig(FIGURE, dpi=120)
    plt.close(fig)


def _fmt(v, digits=0):
    return "—" if v is None else f"{v:.{digits}f}"


def main(argv=None):
    p, sub = C.command_parser(__doc__)
    r = sub.add_parser("run")
    r.add_argument("--sets", nargs="+", default=["protein", "cadata"])
    r.add_argument("--n", type=int, nargs="+", default=[20_000])
    r.add_argument("--splits", type=int, default=1)
    r.add_argument("--max-m", type=int, default=8000)
    C.run_command(p, sub, argv, report, run=run)


if __name__ == "__main__":
    main()
