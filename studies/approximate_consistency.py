"""Approximate consistency of C_ree and C_ipe under kernel matrix approximations.

Paper 002 (Ding, Liao et al., "Approximate kernel selection via matrix approximation",
TNNLS 2020), Sec. VII, Figs. 1–3: for every γ the criterion on the exact kernel matrix,
C(K), is compared with the criterion on a stand-in, C(K̃), for the Nyström samplers,
the modified Nyström approximation, the optimal rank-k approximation (OptApp) and the
multilevel circulant matrix (MCM).

Settings (paper 002): rank k = 20, c = 0.2n landmarks, ridge α = μn with μ = 0.005,
σ = 0.01·std(y) for C_ipe. Data: mpg (regression) and heart (classification),
standardised; and the paper's synthetic grid data, f(x) = e^{−8(3−‖x‖)²} −
e^{−8(1.5−‖x‖)²} − e^{−8(2−‖x‖)²} on a centred 2-D grid of spacing 0.1 with
m = (10,10) … (40,40) and noise sd 0.01.

Run:  python studies/approximate_consistency.py [--quick] [--out-dir DIR]
Writes the curves to studies/results/approximate_consistency_raw.json (or into DIR),
then the report approximate_consistency.{md,png} beside them;
      python studies/approximate_consistency.py --report-only [--out-dir DIR]
rebuilds the report from the raw curves without running anything.
      python studies/approximate_consistency.py --targets
prints the sampler cost targets (column-norm at n = 10⁵ against one kernel_matvec,
leverage against uniform at n = 10⁵, modified Nyström peak memory at n = 2·10⁴).
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np

import kernelselect

import _common as C

MU = 0.005
RANK = 20
CRITERIA = ("ree", "ipe")
#: one γ grid for every synthetic size, so the curves are comparable as n grows
GRID_GAMMAS = 2.0 ** np.arange(-5, 10)
SAMPLERS = ("uniform", "column_norm", "leverage", "kmeans", "modified", "optimal")


def grid_data(m, rng):
    axes = [(np.arange(mi) - (mi - 1) / 2.0) * 0.1 for mi in m]
    X = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(m))
    r = np.linalg.norm(X, axis=1)
    f = np.exp(-8 * (3 - r) ** 2) - np.exp(-8 * (1.5 - r) ** 2) - np.exp(-8 * (2 - r) ** 2)
    return X, f + 0.01 * rng.standard_normal(f.size)


def approximations(n, seed):
    c = max(RANK, int(round(0.2 * n)))
    out = {"exact": "exact"}
    for s in SAMPLERS:
        out[s] = kernelselect.Nystroem(n_landmarks=c, rank=RANK, sampler=s, random_state=seed)
    out["mcm"] = kernelselect.MCM()
    out["mcm_plain"] = kernelselect.MCM(periodic=False)
    return out


def curves(X, y, gammas, seed):
    n = X.shape[0]
    alpha = MU * n
    sigma = 0.01 * float(np.std(y))
    res = {}
    for name, approx in approximations(n, seed).items():
        t0 = time.perf_counter()
        r = kernelselect.select_kernel(X, y, gammas=gammas, alphas=[alpha], criterion=list(
            CRITERIA), approximation=approx, random_state=seed, sigma=sigma)
        res[name] = {c: r.curves[c][:, 0] for c in CRITERIA}
        res[name]["time"] = time.perf_counter() - t0
    return res


def discrepancy(res, name, crit):
    exact, approx = res["exact"][crit], res[name][crit]
    rel = np.abs(exact - approx) / np.maximum(np.abs(exact), 1e-300)
    return float(np.nanmean(rel)), float(np.nanmax(np.abs(exact - approx)))


RAW = "approximate_consistency_raw.json"


def save(runs, out_dir):
    """The raw curves: per data set the γ grid, n and every stand-in's curves and time."""
    out = {data: {"gammas": [float(g) for g in gammas], "n": int(n),
                  "curves": {a: {k: (float(v) if k == "time" else [float(x) for x in v])
                                 for k, v in r.items()} for a, r in res.items()}}
           for data, (gammas, res, n) in runs.items()}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / RAW).write_text(json.dumps(out, indent=0) + "\n")


def load_raw(out_dir):
    """:func:`save`'s records back as ``{data: (gammas, curves, n)}``."""
    raw = json.loads((out_dir / RAW).read_text())
    return {data: (np.asarray(r["gammas"]),
                   {a: {k: (v if k == "time" else np.asarray(v, dtype=float))
                        for k, v in c.items()} for a, c in r["curves"].items()},
                   r["n"])
            for data, r in raw.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller synthetic grids")
    ap.add_argument("--targets", action="store_true", help="measure the sampler cost targets")
    ap.add_argument("--report-only", action="store_true",
                    help=f"rebuild the report from {RAW} in --out-dir")
    ap.add_argument("--out-dir", type=Path, default=C.RESULTS)
    args = ap.parse_args()
    if args.targets:
        targets()
        return
    if args.report_only:
        write(load_raw(args.out_dir), args.out_dir)
        return
    rng = np.random.default_rng(0)
    runs = {}
    for name in ("mpg", "heart"):
        d = C.load_data(name)
        X, = C.standardise(np.asarray(d.X, dtype=np.float64))
        y = np.asarray(d.y, dtype=np.float64)
        gammas = kernelselect.selection.default_gammas(X, random_state=0)
        runs[name] = (gammas, curves(X, y, gammas, 0), X.shape[0])
        print(name, "done", flush=True)
    sides = (10, 20) if args.quick else (10, 20, 30, 40)
    for m in sides:
        X, y = grid_data((m, m), rng)
        gammas = GRID_GAMMAS
        runs[f"grid {m}x{m}"] = (gammas, curves(X, y, gammas, 0), X.shape[0])
        print(m, "done", flush=True)
    save(runs, args.out_dir)
    write(runs, args.out_dir)


def targets(workers=1):
    import tracemalloc

    from kernelselect import lowlevel
    from kernelselect.operators._samplers import column_norm_probabilities

    rng = np.random.default_rng(0)
    X = rng.standard_normal((100_000, 8))
    y = np.sign(X[:, 0])
    t = time.perf_counter()
    lowlevel.kernel_matvec(X, np.ones(X.shape[0]), 0.1, workers=workers)
    tm = time.perf_counter() - t
    t = time.perf_counter()
    column_norm_probabilities(X, 0.1, workers=workers)
    tc = time.perf_counter() - t
    print(f"n=1e5 d=8: kernel_matvec {tm:.1f} s, column-norm probabilities {tc:.1f} s "
          f"(ratio {tc / tm:.2f}; target ≤ 1.5)")
    out = {}
    for s in ("uniform", "leverage", "uniform", "leverage"):  # second pass is warm
        a = kernelselect.Nystroem(n_landmarks=200, sampler=s, random_state=0)
        t = time.perf_counter()
        kernelselect.select_kernel(X, y, gammas=[0.1], criterion="ree", approximation=a,
                                   random_state=0, workers=workers)
        out[s] = time.perf_counter() - t
    print(f"n=1e5 d=8 c=200, one γ, ree: uniform {out['uniform']:.2f} s, leverage "
          f"{out['leverage']:.2f} s (ratio {out['leverage'] / out['uniform']:.2f}; target < 5)")
    X = X[:20_000]
    a = kernelselect.Nystroem(n_landmarks=200, sampler="modified", random_state=0)
    state = a.prepare(X, y[:20_000], kernel="gaussian", random_state=None, workers=workers)
    tracemalloc.start()
    t = time.perf_counter()
    a.build(X, None, 0.1, kernel="gaussian", state=state, workers=workers)
    tt = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"n=2e4 d=8 c=200 modified build: {tt:.1f} s, traced peak {peak / 1e6:.0f} MB "
          f"beyond X (target < 100 MB)")


READING = """## Reading, against paper 002 (Figs. 1–3)

Observed in the committed run (seed 0; the PNG shows the curves):

- Paper, Figs. 1–2: the approximate curves stay close to the original one, and OptApp
  and Modified are closer than the sampled Nyström approximations. Here, on mpg, the
  optimal rank-20 approximation (0.17 mean relative C_ree discrepancy), k-means (0.18)
  and modified Nyström (0.23) are closer than uniform (0.32), column-norm (0.30) and
  leverage (0.27) sampling, and every Nyström variant picks the exact minimiser of
  C_ree. The curves agree closely for small γ and part at large γ, where K approaches
  the identity and no rank-20 matrix can represent it: that is the rank cap k = 20,
  not the sampler (optimal parts there too). On heart every rank-20 stand-in moves
  the C_ree minimiser (to about 0.04 from about 0.15) for the same reason.
- The sampler ranking is mostly as the theory orders it (optimal ≤ modified ≤ sampled
  Nyström; leverage ≤ column-norm ≤ uniform on mpg, heart and the 20×20 and 30×30
  grids, not on 40×40), but
  the gaps are small next to the rank-20 truncation error.
- Paper, Fig. 3: the MCM curve approaches the original as the grid grows from 100 to
  1600 points. The MCM discrepancy is below the sampled-Nyström ones on every grid
  (0.07–0.23 for C_ree, against 0.27–0.49; optimal reaches 0.13–0.14 at 900–1600
  points), but it does not shrink monotonically with
  n here: with the fitted spacing (``mcm``) it stays near 0.15–0.23; with the plain
  grid-difference fit (``mcm_plain``) it is 0.12, 0.22, 0.23, 0.07 for 100, 400, 900,
  1600 points, smallest at the largest grid as in the paper, with a bump at 400–900.
  A likely cause, not verified: at the small-γ end of the fixed γ grid the kernel is
  far wider than the small grids, where the circulant wrap-around errs most.
- Mean relative discrepancy over the grid weighs every γ equally; the table marks
  whether the minimiser is kept, which is what selection needs.
""".splitlines()


def write(runs, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [a for a in next(iter(runs.values()))[1] if a != "exact"]
    lines = ["# Approximate consistency (paper 002, Sec. VII, Figs. 1–3)", "",
             "Mean relative discrepancy |C(K) − C(K̃)| / |C(K)| over the γ grid (15 values "
             "γ₀·2^k, k = −7…7, γ₀ the median heuristic), k = 20, c = 0.2n, α = 0.005n, "
             "σ = 0.01·std(y); seed 0. A ✓ marks a stand-in whose minimiser γ equals the "
             "exact one. Synthetic grids use the fixed grid γ = 2^−5…2^9. mcm_plain is "
             "MCM(periodic=False), which fits the spacing against the plain grid difference "
             "(paper 002's relation H4, exact for grid points). Produced by "
             "studies/approximate_consistency.py.", ""]
    for crit in CRITERIA:
        lines += [f"## C_{crit}", "",
                  "| data | n | " + " | ".join(names) + " |",
                  "|---|---|" + "---|" * len(names)]
        for data, (gammas, res, n) in runs.items():
            best = int(np.nanargmin(res["exact"][crit]))
            cells = []
            for a in names:
                mean_rel, _ = discrepancy(res, a, crit)
                hit = "✓" if int(np.nanargmin(res[a][crit])) == best else ""
                cells.append(f"{mean_rel:.3g}{hit}")
            lines.append(f"| {data} | {n} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Time per curve (s, 15 γ, both criteria; one thread, shared 2-core machine)",
              "",
              "| data | exact | " + " | ".join(names) + " |", "|---|" + "---|" * (len(names) + 1)]
    for data, (_, res, _) in runs.items():
        lines.append(f"| {data} | {res['exact']['time']:.2f} | "
                     + " | ".join(f"{res[a]['time']:.2f}" for a in names) + " |")
    lines.append("")
    lines += READING
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "approximate_consistency.md").write_text("\n".join(lines) + "\n")

    real = [d for d in runs if not d.startswith("grid")]
    grids = [d for d in runs if d.startswith("grid")]
    fig, axes = plt.subplots(2, len(real) * 2 // 2 + 1, figsize=(15, 8.5))
    for col, data in enumerate(real):
        gammas, res, _ = runs[data]
        for row, crit in enumerate(CRITERIA):
            ax = axes[row, col]
            ax.plot(gammas, res["exact"][crit], "k-", lw=2.5, label="exact K")
            for a in names:
                ax.plot(gammas, res[a][crit], "-", lw=1, label=a)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{data}: C_{crit}")
            ax.set_xlabel("γ")
    for row, crit in enumerate(CRITERIA):
        ax = axes[row, len(real)]
        ns = [runs[d][2] for d in grids]
        for a in names:
            ax.plot(ns, [discrepancy(runs[d][1], a, crit)[0] for d in grids], "o-", label=a)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (grid points)")
        ax.set_title(f"synthetic grid: mean rel. |ΔC_{crit}|")
    axes[0, 0].legend(fontsize=7)
    axes[0, len(real)].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / "approximate_consistency.png", dpi=90)


if __name__ == "__main__":
    main()
